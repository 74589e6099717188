/* The wire: framed records from the firmware to the host (and inputs back).
 * Frame = COBS([type u8][seq u16][payload][crc32 of type..payload]) + 0x00. The host drops frames
 * whose CRC fails and counts gaps in seq; see tools/etdeploy/link.py for the decoder. */
#ifndef ET_LINK_H
#define ET_LINK_H
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#define ET_LINK_VERSION 1

enum {
  ET_REC_HELLO = 1,   /* u8 version, u8 n_programs, u16 flags, u32 cycles_hz */
  ET_REC_LOG = 2,     /* text */
  ET_REC_OUTPUT = 3,  /* u8 prog, u8 method, u16 case, u16 index, u8 tag, u8 dtype, u8 ndim, u8 pad,
                         i32 sizes[ndim], u8 dim_order[ndim], data (tensor bytes in that
                         dim order, or an 8-byte scalar) */
  ET_REC_CASE = 4,    /* u8 prog, u8 method, u16 case, u8 pass, u8 pad, u16 n_outputs,
                         u32 max_abs_err (float bits), u32 first_bad_output */
  ET_REC_ERROR = 5,   /* u16 code, u8 prog, u8 method, u32 instr, u32 op, u32 value, u32 detail, u32 detail2 */
  ET_REC_RESULT = 6,  /* u16 status, u16 pad, u32 methods_run, u32 cases, u32 cases_failed, u32 frames_before */
  ET_REC_METHOD = 7,  /* u8 prog, u8 method, u16 pad, u32 pool_used, u32 pool_size, u64 load_cycles,
                         u64 exec_cycles, name */
  ET_REC_EVENT = 8,   /* profiling events (et_profile.c) */
  ET_REC_FAULT = 9,   /* u32 pc, u32 lr, u32 addr, u32 status */
  ET_REC_INPUT = 16,  /* host -> firmware: u8 prog, u8 method, u16 index, u8 dtype, u8 ndim, u16 pad, i32 sizes[ndim], data */
  ET_REC_RUN = 17,    /* host -> firmware: u8 prog, u8 method */
  ET_REC_END = 18,    /* host -> firmware: finish */
};

void et_link_begin(uint8_t type);
void et_link_put(const void *data, size_t n);
void et_link_u8(uint8_t v);
void et_link_u16(uint16_t v);
void et_link_u32(uint32_t v);
void et_link_u64(uint64_t v);
void et_link_end(void);
uint32_t et_link_frames(void);
void et_link_log(const char *text);

#endif

/* ---- host -> firmware ---- */
/* Where the payload of an incoming INPUT frame goes, decided from its header. */
typedef struct et_link_input {
  uint8_t program, method;
  uint16_t index;
  uint8_t dtype, ndim;
  int32_t sizes[16];
} et_link_input;
/* Returns the destination for an INPUT frame's data (or NULL to discard it: the frame is then
 * reported as bad input); capacity is the room there. */
typedef uint8_t *(*et_link_input_sink)(const et_link_input *in, uint32_t *capacity, void *user);

typedef struct et_link_frame {
  uint8_t type;
  uint8_t program, method;     /* RUN */
  et_link_input input;         /* INPUT */
  uint32_t data_bytes;         /* INPUT payload bytes received */
  bool crc_ok;
  bool overflow;               /* more data than the sink had room for */
} et_link_frame;

/* Blocks for the next frame from the host (timeout_ms: longest silence, 0 = no limit). Returns
 * false when the link has no RX, closed, or stayed silent that long. */
bool et_link_recv(et_link_frame *f, et_link_input_sink sink, void *user, uint32_t timeout_ms);
