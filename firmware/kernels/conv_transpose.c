#include "conv_transpose.h"

/* Transposed convolution (ConvTranspose1d/2d, float): each input pixel scatters its weighted taps
 * into the output, which starts at the bias. Weight is [C, O/G, KH, KW]; any dim order (strides). */
et_status conv_f32_transposed(et_kctx *ctx, et_value *const *args, et_tensor *in, et_tensor *wt,
                              et_tensor *bias, et_tensor *out) {
  uint32_t nd = in->ndim, nsp = nd - 2;
  int32_t s[2], p[2], d[2], op[2];
  if (!get_pair(args[3], nsp, s, 1)) { ctx->err_detail = 3; return ET_ERR_INVALID_ARGUMENT; }
  if (!get_pair(args[4], nsp, p, 0)) { ctx->err_detail = 4; return ET_ERR_INVALID_ARGUMENT; }
  if (!get_pair(args[5], nsp, d, 1)) { ctx->err_detail = 5; return ET_ERR_INVALID_ARGUMENT; }
  if (!get_pair(args[7], nsp, op, 0)) { ctx->err_detail = 7; return ET_ERR_INVALID_ARGUMENT; }
  const int64_t G = et_value_as_int(args[8]);
  const int32_t N = in->sizes[0], C = in->sizes[1], H = nd == 4 ? in->sizes[2] : 1, W = in->sizes[nd - 1];
  const int32_t KH = nd == 4 ? wt->sizes[2] : 1, KW = wt->sizes[nd - 1];
  if (G <= 0 || G > C || C % G || wt->sizes[0] != C || s[0] <= 0 || s[1] <= 0 || d[0] <= 0 || d[1] <= 0 ||
      p[0] < 0 || p[1] < 0 || op[0] < 0 || op[1] < 0 || s[0] > 65536 || s[1] > 65536 || d[0] > 65536 ||
      d[1] > 65536 || p[0] > 65536 || p[1] > 65536 || (op[0] >= s[0] && op[0] >= d[0]) ||
      (op[1] >= s[1] && op[1] >= d[1])) { ctx->err_detail = 8; return ET_ERR_INVALID_ARGUMENT; }
  const int32_t opg = wt->sizes[1], O = opg * (int32_t)G, cpg = C / (int32_t)G;
  if (bias && et_numel(bias) != O) { ctx->err_detail = 2; return ET_ERR_INVALID_ARGUMENT; }
  const int64_t oh = (int64_t)(H - 1) * s[0] - 2 * (int64_t)p[0] + (int64_t)d[0] * (KH - 1) + op[0] + 1;
  const int64_t ow = (int64_t)(W - 1) * s[1] - 2 * (int64_t)p[1] + (int64_t)d[1] * (KW - 1) + op[1] + 1;
  if (oh <= 0 || ow <= 0 || oh > INT32_MAX / 4 || ow > INT32_MAX / 4) { ctx->err_detail = 0; return ET_ERR_INVALID_ARGUMENT; }
  int32_t os[4] = {N, O, (int32_t)oh, (int32_t)ow};
  if (nd == 3) os[2] = (int32_t)ow;
  et_status st;
  if ((st = et_resize(out, nd, os)) != ET_OK) { ctx->err_detail = 9; return st; }
  if (bias && !et_is_contiguous(bias)) { ctx->err_detail = 2; return ET_ERR_UNSUPPORTED; }
  ptrdiff_t is[4], ws[4], ys[4];
  nchw_strides(in, is); nchw_strides(wt, ws); nchw_strides(out, ys);
  const float *x = (const float *)in->data, *w = (const float *)wt->data;
  const float *b = bias ? (const float *)bias->data : NULL;
  float *y = (float *)out->data;
  const int32_t OH = (int32_t)oh, OW = (int32_t)ow;
  for (int32_t n = 0; n < N; n++)
    for (int32_t o = 0; o < O; o++)
      for (int32_t r = 0; r < OH; r++)
        for (int32_t c = 0; c < OW; c++) y[n * ys[0] + o * ys[1] + r * ys[2] + c * ys[3]] = b ? b[o] : 0.0f;
  for (int32_t n = 0; n < N; n++)
    for (int32_t ci = 0; ci < C; ci++) {
      const int32_t grp = ci / cpg;
      for (int32_t ih = 0; ih < H; ih++)
        for (int32_t iw = 0; iw < W; iw++) {
          const float v = x[n * is[0] + ci * is[1] + ih * is[2] + iw * is[3]];
          for (int32_t kh = 0; kh < KH; kh++) {
            const int32_t r = ih * s[0] - p[0] + kh * d[0];
            if (r < 0 || r >= OH) continue;
            for (int32_t kw = 0; kw < KW; kw++) {
              const int32_t c = iw * s[1] - p[1] + kw * d[1];
              if (c < 0 || c >= OW) continue;
              for (int32_t oo = 0; oo < opg; oo++)
                y[n * ys[0] + (grp * opg + oo) * ys[1] + r * ys[2] + c * ys[3]] +=
                    v * w[ci * ws[0] + oo * ws[1] + kh * ws[2] + kw * ws[3]];
            }
          }
        }
    }
  return ET_OK;
}
