/* Kernels D called directly with bad arguments (tests/test_kernels_d.py::test_bad_arguments): each
 * line prints a case name and the status the kernel returned, then the err_detail it set. One good
 * call per kernel first shows the harness itself works. */
#include <stdio.h>
#include <string.h>
#include "et_kernel.h"

#define K(fn) et_status fn(et_kctx *ctx, et_value *const *args, uint32_t nargs);
K(k_aten_upsample_nearest2d_vec_out) K(k_aten_upsample_bilinear2d_vec_out) K(k_aten_pixel_shuffle_out)
K(k_aten_pixel_unshuffle_out) K(k_aten_var_correction_out) K(k_aten_native_group_norm_out) K(k_aten_glu_out)
K(k_aten_bitwise_and_tensor_out) K(k_aten_bitwise_or_scalar_out) K(k_aten_masked_fill_scalar_out)
K(k_aten_baddbmm_out) K(k_aten_scalar_tensor_out) K(k_aten_elu_out)

static et_value T(et_tensor *t) { et_value v; memset(&v, 0, sizeof v); v.tag = ET_TAG_TENSOR; v.u.t = t; return v; }
static et_value D(float f) { et_value v; memset(&v, 0, sizeof v); v.tag = ET_TAG_DOUBLE; v.u.dbits = et_float_to_double_bits(f); return v; }
static et_value I(int64_t i) { et_value v; memset(&v, 0, sizeof v); v.tag = ET_TAG_INT; v.u.i = i; return v; }
static et_value Bo(bool b) { et_value v; memset(&v, 0, sizeof v); v.tag = ET_TAG_BOOL; v.u.b = b; return v; }
static et_value L(const et_list *l, uint32_t tag) { et_value v; memset(&v, 0, sizeof v); v.tag = tag; v.u.list = l; return v; }
static et_value S(const et_string *s) { et_value v; memset(&v, 0, sizeof v); v.tag = ET_TAG_STRING; v.u.str = s; return v; }
static et_value N(void) { et_value v; memset(&v, 0, sizeof v); return v; }

#define CALL(name, fn, ...) do { et_value a_[] = {__VA_ARGS__}; et_value *p_[16]; uint32_t n_ = sizeof a_ / sizeof a_[0]; \
  for (uint32_t k = 0; k < n_; k++) { p_[k] = &a_[k]; } \
  et_kctx c_; memset(&c_, 0, sizeof c_); \
  et_status s_ = fn(&c_, p_, n_); printf("%s %d %u\n", name, (int)s_, (unsigned)c_.err_detail); } while (0)

static float buf_in[256], buf_out[1024], buf_m[64], buf_r[64];
static uint8_t buf_b[64];

int main(void) {
  /* [1, 4, 2, 3] float input; outputs sized for each good call, dynamic where a shape must change */
  int32_t s4[4] = {1, 4, 2, 3}, s3[3] = {4, 2, 3}, so[4] = {1, 4, 4, 6}, su[4] = {1, 1, 4, 6};
  et_tensor X = {buf_in, s4, 0, sizeof buf_in, ET_FLOAT, 4, 0, 0};
  et_tensor X3 = {buf_in, s3, 0, sizeof buf_in, ET_FLOAT, 3, 0, 0};
  et_tensor XI = {buf_in, s4, 0, sizeof buf_in, ET_INT, 4, 0, 0};
  et_tensor O = {buf_out, so, 0, sizeof buf_out, ET_FLOAT, 4, 1, 0};
  et_tensor OU = {buf_out, su, 0, sizeof buf_out, ET_FLOAT, 4, 1, 0};
  int64_t sz44[2] = {4, 6}, sz_neg[2] = {-1, 6};
  uint64_t sc2[2] = {et_float_to_double_bits(2.0f), et_float_to_double_bits(2.0f)};
  uint64_t sc_huge[2] = {et_float_to_double_bits(1e30f), et_float_to_double_bits(1.0f)};
  uint64_t sc_neg[2] = {et_float_to_double_bits(-2.0f), et_float_to_double_bits(1.0f)};
  et_list l44 = {sz44, 2}, lneg = {sz_neg, 2}, lsc2 = {sc2, 2}, lhuge = {sc_huge, 2}, lscneg = {sc_neg, 2};
  CALL("nearest_ok", k_aten_upsample_nearest2d_vec_out, T(&X), L(&l44, ET_TAG_INT_LIST), N(), T(&O));
  CALL("nearest_scale_ok", k_aten_upsample_nearest2d_vec_out, T(&X), N(), L(&lsc2, ET_TAG_DOUBLE_LIST), T(&O));
  CALL("nearest_neither", k_aten_upsample_nearest2d_vec_out, T(&X), N(), N(), T(&O));
  CALL("nearest_both", k_aten_upsample_nearest2d_vec_out, T(&X), L(&l44, ET_TAG_INT_LIST), L(&lsc2, ET_TAG_DOUBLE_LIST), T(&O));
  CALL("nearest_rank3", k_aten_upsample_nearest2d_vec_out, T(&X3), L(&l44, ET_TAG_INT_LIST), N(), T(&O));
  CALL("nearest_neg_size", k_aten_upsample_nearest2d_vec_out, T(&X), L(&lneg, ET_TAG_INT_LIST), N(), T(&O));
  CALL("nearest_huge_scale", k_aten_upsample_nearest2d_vec_out, T(&X), N(), L(&lhuge, ET_TAG_DOUBLE_LIST), T(&O));
  CALL("nearest_neg_scale", k_aten_upsample_nearest2d_vec_out, T(&X), N(), L(&lscneg, ET_TAG_DOUBLE_LIST), T(&O));
  CALL("nearest_dtype", k_aten_upsample_nearest2d_vec_out, T(&XI), L(&l44, ET_TAG_INT_LIST), N(), T(&O));
  CALL("bilinear_ok", k_aten_upsample_bilinear2d_vec_out, T(&X), L(&l44, ET_TAG_INT_LIST), Bo(true), N(), T(&O));
  CALL("bilinear_align_int", k_aten_upsample_bilinear2d_vec_out, T(&X), L(&l44, ET_TAG_INT_LIST), I(1), N(), T(&O));
  et_tensor OI = {buf_out, so, 0, sizeof buf_out, ET_INT, 4, 1, 0};
  CALL("bilinear_int", k_aten_upsample_bilinear2d_vec_out, T(&XI), L(&l44, ET_TAG_INT_LIST), Bo(false), N(), T(&OI));
  int32_t sbig[4] = {1, 4, 4, 6};
  et_tensor OS = {buf_out, sbig, 0, sizeof buf_out, ET_FLOAT, 4, 1, 0};
  CALL("nearest_over_capacity", k_aten_upsample_nearest2d_vec_out, T(&X), L(&(et_list){(int64_t[]){100, 100}, 2}, ET_TAG_INT_LIST), N(), T(&OS));
  et_tensor OST = {buf_out, so, 0, sizeof buf_out, ET_FLOAT, 4, 0, 0};
  so[2] = 9;
  CALL("nearest_static_shape", k_aten_upsample_nearest2d_vec_out, T(&X), L(&l44, ET_TAG_INT_LIST), N(), T(&OST));
  so[2] = 4;

  CALL("shuffle_ok", k_aten_pixel_shuffle_out, T(&X), I(2), T(&OU));
  CALL("shuffle_indivisible", k_aten_pixel_shuffle_out, T(&X), I(3), T(&OU));
  CALL("shuffle_zero", k_aten_pixel_shuffle_out, T(&X), I(0), T(&OU));
  CALL("shuffle_rank2", k_aten_pixel_shuffle_out, T(&(et_tensor){buf_in, (int32_t[]){4, 6}, 0, 96, ET_FLOAT, 2, 0, 0}), I(1), T(&OU));
  CALL("unshuffle_indivisible", k_aten_pixel_unshuffle_out, T(&X), I(2), T(&OU));

  et_tensor OV = {buf_out, (int32_t[]){1, 4, 2, 3}, 0, sizeof buf_out, ET_FLOAT, 2, 1, 0};
  int64_t d_ok[1] = {-1}, d_dup[2] = {0, -4}, d_bad[1] = {4};
  et_list ldok = {d_ok, 1}, lddup = {d_dup, 2}, ldbad = {d_bad, 1};
  OV.ndim = 3;
  CALL("var_ok", k_aten_var_correction_out, T(&X), L(&ldok, ET_TAG_INT_LIST), I(1), Bo(false), T(&OV));
  CALL("var_dup_dims", k_aten_var_correction_out, T(&X), L(&lddup, ET_TAG_INT_LIST), I(1), Bo(false), T(&OV));
  CALL("var_bad_dim", k_aten_var_correction_out, T(&X), L(&ldbad, ET_TAG_INT_LIST), I(1), Bo(false), T(&OV));
  CALL("var_int_input", k_aten_var_correction_out, T(&XI), L(&ldok, ET_TAG_INT_LIST), I(1), Bo(false), T(&OV));
  static const et_string str = {"x", 1};
  CALL("var_string_correction", k_aten_var_correction_out, T(&X), L(&ldok, ET_TAG_INT_LIST), S(&str), Bo(false), T(&OV));

  et_tensor OG = {buf_out, (int32_t[]){1, 4, 2, 3}, 0, sizeof buf_out, ET_FLOAT, 4, 0, 0};
  et_tensor M = {buf_m, (int32_t[]){1, 2}, 0, sizeof buf_m, ET_FLOAT, 2, 1, 0};
  et_tensor R = {buf_r, (int32_t[]){1, 2}, 0, sizeof buf_r, ET_FLOAT, 2, 1, 0};
  CALL("group_norm_ok", k_aten_native_group_norm_out, T(&X), N(), N(), I(1), I(4), I(6), I(2), D(1e-5f), T(&OG), T(&M), T(&R));
  CALL("group_norm_groups", k_aten_native_group_norm_out, T(&X), N(), N(), I(1), I(4), I(6), I(3), D(1e-5f), T(&OG), T(&M), T(&R));
  CALL("group_norm_hw", k_aten_native_group_norm_out, T(&X), N(), N(), I(1), I(4), I(5), I(2), D(1e-5f), T(&OG), T(&M), T(&R));
  CALL("group_norm_channels", k_aten_native_group_norm_out, T(&X), N(), N(), I(1), I(2), I(12), I(2), D(1e-5f), T(&OG), T(&M), T(&R));
  CALL("group_norm_weight", k_aten_native_group_norm_out, T(&X), T(&M), N(), I(1), I(4), I(6), I(2), D(1e-5f), T(&OG), T(&M), T(&R));

  et_tensor OGL = {buf_out, (int32_t[]){1, 2, 2, 3}, 0, sizeof buf_out, ET_FLOAT, 4, 1, 0};
  CALL("glu_ok", k_aten_glu_out, T(&X), I(1), T(&OGL));
  CALL("glu_odd", k_aten_glu_out, T(&X), I(-1), T(&OGL));
  CALL("glu_bad_dim", k_aten_glu_out, T(&X), I(4), T(&OGL));
  CALL("elu_string_alpha", k_aten_elu_out, T(&X), S(&str), I(1), I(1), T(&OG));

  int32_t sb[1] = {6};
  et_tensor BB = {buf_b, sb, 0, sizeof buf_b, ET_BOOL, 1, 0, 0};
  et_tensor BO = {buf_b + 16, sb, 0, 16, ET_BOOL, 1, 0, 0};
  et_tensor F6 = {buf_in, sb, 0, 24, ET_FLOAT, 1, 0, 0};
  CALL("bitwise_ok", k_aten_bitwise_and_tensor_out, T(&BB), T(&BB), T(&BO));
  CALL("bitwise_float", k_aten_bitwise_and_tensor_out, T(&F6), T(&BB), T(&BO));
  CALL("bitwise_scalar_double", k_aten_bitwise_or_scalar_out, T(&BB), D(1.0f), T(&BO));
  CALL("bitwise_float_out", k_aten_bitwise_or_scalar_out, T(&BB), I(1), T(&F6));

  et_tensor OF6 = {buf_out, sb, 0, 24, ET_FLOAT, 1, 0, 0};
  int32_t s12[2] = {2, 6};
  et_tensor B12 = {buf_b, s12, 0, sizeof buf_b, ET_BOOL, 2, 0, 0};
  CALL("masked_fill_ok", k_aten_masked_fill_scalar_out, T(&F6), T(&BB), D(-1.0f), T(&OF6));
  CALL("masked_fill_float_mask", k_aten_masked_fill_scalar_out, T(&F6), T(&F6), D(-1.0f), T(&OF6));
  CALL("masked_fill_mask_grows", k_aten_masked_fill_scalar_out, T(&F6), T(&B12), D(-1.0f), T(&OF6));
  CALL("masked_fill_tensor_value", k_aten_masked_fill_scalar_out, T(&F6), T(&BB), T(&F6), T(&OF6));

  et_tensor A = {buf_in, (int32_t[]){2, 3, 4}, 0, 96, ET_FLOAT, 3, 0, 0};
  et_tensor Bm = {buf_in, (int32_t[]){2, 4, 5}, 0, 160, ET_FLOAT, 3, 0, 0};
  et_tensor Bbad = {buf_in, (int32_t[]){2, 3, 5}, 0, 120, ET_FLOAT, 3, 0, 0};
  et_tensor C = {buf_m, (int32_t[]){5}, 0, 20, ET_FLOAT, 1, 0, 0};
  et_tensor Cbad = {buf_m, (int32_t[]){4}, 0, 16, ET_FLOAT, 1, 0, 0};
  et_tensor OB3 = {buf_out, (int32_t[]){2, 3, 5}, 0, sizeof buf_out, ET_FLOAT, 3, 0, 0};
  CALL("baddbmm_ok", k_aten_baddbmm_out, T(&C), T(&A), T(&Bm), I(1), I(1), T(&OB3));
  CALL("baddbmm_inner", k_aten_baddbmm_out, T(&C), T(&A), T(&Bbad), I(1), I(1), T(&OB3));
  CALL("baddbmm_self", k_aten_baddbmm_out, T(&Cbad), T(&A), T(&Bm), I(1), I(1), T(&OB3));
  CALL("baddbmm_rank", k_aten_baddbmm_out, T(&C), T(&C), T(&Bm), I(1), I(1), T(&OB3));

  et_tensor Z = {buf_out, NULL, 0, 8, ET_LONG, 0, 0, 0};
  CALL("scalar_tensor_ok", k_aten_scalar_tensor_out, I(7), T(&Z));
  CALL("scalar_tensor_string", k_aten_scalar_tensor_out, S(&str), T(&Z));
  CALL("scalar_tensor_double_to_long", k_aten_scalar_tensor_out, D(1.5f), T(&Z));
  CALL("few_args", k_aten_glu_out, T(&X), I(1));
  return 0;
}
