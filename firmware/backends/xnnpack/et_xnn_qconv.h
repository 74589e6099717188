/* XnnpackBackend's own int8 convolution / fully connected (qs8 input and output, per-channel qc8 or
 * per-tensor qs8 weights, int32 bias) for CPUs with AVX512-VNNI, where Debian's 2022 XNNPACK has only
 * its vpmaddwd (AVX512-SKX) kernels. Results equal XNNPACK's fp32 requantisation bit for bit:
 *   scale[c] = input_scale * kernel_scale[c] / output_scale            (float32, in that order)
 *   y = clamp(rint((float)acc * scale[c]) + out_zp, qmin, qmax),  acc = bias[c] + sum (x - in_zp) * w
 * with rint to nearest-even, qmin/qmax as XNNPACK quantises the node's output_min/max. */
#ifndef ET_XNN_QCONV_H
#define ET_XNN_QCONV_H
#include <stddef.h>
#include <stdint.h>

#include <pthreadpool.h>

typedef struct et_xq {
  uint32_t n, ih, iw, cin, oh, ow, cout;   /* a fully connected layer: ih = rows, iw = kh = kw = 1 */
  uint32_t kh, kw, sh, sw, pt, pl, pb, pr;
  uint32_t cin4, ph, pw, nblk, ksteps;     /* cin rounded up to 4; padded image; 16-channel blocks; K/4 */
  int32_t in_zp, out_zp, qmin, qmax;
  int32_t *bias;                           /* nblk*16: bias - (128 + in_zp) * sum(w) */
  float *scale;                            /* nblk*16 */
  int8_t *w;                               /* [ksteps][nblk][16 channels][4 k] */
} et_xq;

/* 1 when this CPU runs the kernel (x86-64 with AVX512F/BW/VL and AVX512-VNNI). */
int et_xq_available(void);
/* Bytes of packed weights, bias and scales for q's geometry (q->nblk, q->ksteps set by et_xq_shape). */
void et_xq_shape(et_xq *q);
size_t et_xq_weight_bytes(const et_xq *q);
size_t et_xq_image_bytes(const et_xq *q);
/* Packs w (cout x kh x kw x cin int8; taps_major: kh x kw x cout, a depthwise filter on one input
 * channel), bias (cout int32 or NULL) and the scales into mem (et_xq_weight_bytes, 64-byte aligned). */
void et_xq_pack(et_xq *q, void *mem, const int8_t *w, int taps_major, const int32_t *bias, float in_scale,
                const float *w_scale, uint32_t n_wscale, float out_scale);
/* in: n x ih x iw x cin int8 (NHWC), out: n x oh x ow x cout; img: et_xq_image_bytes of scratch. */
void et_xq_run(const et_xq *q, const int8_t *in, int8_t *out, uint8_t *img, pthreadpool_t pool);
#endif
