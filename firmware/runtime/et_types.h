/* Core value types shared by the runtime and the kernels. C11, no heap, no FP math. */
#ifndef ET_TYPES_H
#define ET_TYPES_H
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

/* Status codes: every failure has a name (see et_status_name). Stable: they travel over the link. */
typedef enum {
  ET_OK = 0,
  ET_ERR_BAD_PROGRAM = 1,      /* malformed flatbuffer, offset out of bounds, bad magic */
  ET_ERR_UNSUPPORTED = 2,      /* valid program using a feature we do not implement */
  ET_ERR_OUT_OF_MEMORY = 3,    /* a pool or arena is too small */
  ET_ERR_MISSING_OPERATOR = 4, /* op table has no kernel for an operator */
  ET_ERR_UNKNOWN_BACKEND = 5,  /* delegate id not in the backend registry */
  ET_ERR_INVALID_ARGUMENT = 6, /* kernel got args of the wrong kind, dtype or shape */
  ET_ERR_BAD_INPUT = 7,        /* host-supplied input does not match the method */
  ET_ERR_DELEGATE = 8,         /* backend failed */
  ET_ERR_INTERNAL = 9,
  ET_ERR_MISMATCH = 10,        /* bundled test case output differs from expected */
  ET_ERR_SCRATCH = 11,         /* a kernel's scratch need differs from what bake planned (ET_SCRATCH) */
} et_status;

/* Scalar types: numbering of executorch's ScalarType enum (scalar_type.fbs). */
typedef enum {
  ET_BYTE = 0,   /* uint8 */
  ET_CHAR = 1,   /* int8 */
  ET_SHORT = 2,  /* int16 */
  ET_INT = 3,    /* int32 */
  ET_LONG = 4,   /* int64 */
  ET_HALF = 5,   /* float16 */
  ET_FLOAT = 6,  /* float32 */
  ET_DOUBLE = 7, /* float64 */
  ET_BOOL = 11,
  ET_QINT8 = 12, ET_QUINT8 = 13, ET_QINT32 = 14,
  ET_BFLOAT16 = 15,
  ET_UINT16 = 27, ET_UINT32 = 28, ET_UINT64 = 29,
} et_dtype;

#define ET_MAX_DIMS 16

typedef struct et_tensor {
  void *data;              /* NULL until bound (unplanned input) */
  int32_t *sizes;          /* ndim entries, mutable (resize within capacity) */
  const uint8_t *dim_order;/* ndim entries, may point into the program; NULL = contiguous */
  uint32_t capacity;       /* bytes available at data (planned size) */
  uint8_t dtype;           /* et_dtype */
  uint8_t ndim;
  uint8_t dynamic;         /* 0 static, 1 dynamic bound, 2 dynamic unbound */
  uint8_t constant;        /* 1: data is the program's constant storage (never written by a valid program) */
} et_tensor;

typedef enum {
  ET_TAG_NONE = 0, ET_TAG_INT, ET_TAG_DOUBLE, ET_TAG_BOOL, ET_TAG_STRING, ET_TAG_TENSOR,
  ET_TAG_INT_LIST, ET_TAG_DOUBLE_LIST, ET_TAG_BOOL_LIST, ET_TAG_TENSOR_LIST,
  ET_TAG_OPT_TENSOR_LIST,
} et_tag;

/* A list value: items are int64_t (INT_LIST), uint64_t double bits (DOUBLE_LIST),
 * uint8_t (BOOL_LIST), et_tensor* (TENSOR_LIST, OPT_TENSOR_LIST: NULL = None). */
typedef struct et_list {
  const void *items;
  uint32_t len;
} et_list;

typedef struct et_string {
  const char *ptr;         /* not NUL-terminated */
  uint32_t len;
} et_string;

/* 16 bytes on 32- and 64-bit targets. Doubles are kept as their IEEE bits: the core does no FP. */
typedef struct et_value {
  uint32_t tag;            /* et_tag */
  uint32_t _pad;
  union {
    int64_t i;
    uint64_t dbits;
    bool b;
    et_tensor *t;
    const et_list *list;
    const et_string *str;
  } u;
} et_value;

#endif
