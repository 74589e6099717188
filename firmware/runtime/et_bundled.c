#include "et_bundled.h"
#include "et_bundled_schema.gen.h"

bool et_is_bundle(const uint8_t *d, uint32_t size) {
  return size >= 8 && d[4] == 'B' && d[5] == 'P' && d[6] == '0' && d[7] == '8';
}

et_status et_bundle_load(et_bundle *b, const uint8_t *data, uint32_t size) {
  b->fb.base = data; b->fb.size = size; b->fb.err = 0;
  if (!et_is_bundle(data, size) || !et_fb_root(&b->fb, &b->root)) return ET_ERR_BAD_PROGRAM;
  b->suites = et_fb_vector(&b->root, ETBP_BundledProgram_method_test_suites, 4);
  et_fb_vec prog = et_fb_vector(&b->root, ETBP_BundledProgram_program, 1);
  if (b->fb.err || !prog.len) return ET_ERR_BAD_PROGRAM;
  b->program = data + prog.pos; b->program_size = prog.len;
  /* Constants are read in place: the embedded program must keep its 16-byte alignment. */
  if (((uintptr_t)b->program & 15u) != 0) return ET_ERR_BAD_PROGRAM;
  return ET_OK;
}

int32_t et_bundle_find_suite(et_bundle *b, const char *name, uint32_t len) {
  for (uint32_t i = 0; i < b->suites.len; i++) {
    et_fb_table s;
    if (!et_fb_vec_table(&b->suites, i, &s)) return -1;
    uint32_t n;
    const char *sn = et_fb_string(&s, ETBP_BundledMethodTestSuite_method_name, &n);
    if (!sn || n != len) continue;
    uint32_t k = 0;
    while (k < n && sn[k] == name[k]) k++;
    if (k == n) return (int32_t)i;
  }
  return -1;
}

static bool get_case(et_bundle *b, int32_t suite, uint32_t c, et_fb_table *tc) {
  et_fb_table s;
  if (suite < 0 || !et_fb_vec_table(&b->suites, (uint32_t)suite, &s)) return false;
  et_fb_vec cases = et_fb_vector(&s, ETBP_BundledMethodTestSuite_test_cases, 4);
  return et_fb_vec_table(&cases, c, tc);
}

uint32_t et_bundle_num_cases(et_bundle *b, int32_t suite) {
  et_fb_table s;
  if (suite < 0 || !et_fb_vec_table(&b->suites, (uint32_t)suite, &s)) return 0;
  return et_fb_vector(&s, ETBP_BundledMethodTestSuite_test_cases, 4).len;
}

/* A tensor Value of the bundle as a read-only et_tensor view over flash. */
static bool view(et_bundle *b, et_fb_table *val, et_tensor *t, int32_t *sizes) {
  et_fb_table body;
  if (et_fb_u8(val, ETBP_Value_val_type, 0) != ETBP_ValueUnion_Tensor) return false;
  if (!et_fb_sub(val, ETBP_Value_val, &body)) return false;
  et_fb_vec sz = et_fb_vector(&body, ETBP_Tensor_sizes, 4);
  et_fb_vec data = et_fb_vector(&body, ETBP_Tensor_data, 1);
  if (b->fb.err || sz.len > ET_MAX_DIMS) return false;
  for (uint32_t i = 0; i < sz.len; i++) sizes[i] = et_fb_vec_i32(&sz, i);
  t->data = (void *)(b->fb.base + data.pos);
  t->sizes = sizes; t->ndim = (uint8_t)sz.len; t->dim_order = 0;
  t->dtype = et_fb_u8(&body, ETBP_Tensor_scalar_type, 0);
  t->capacity = data.len; t->dynamic = 0;
  return et_nbytes(t) == data.len;
}

/* Element k (in logical, contiguous order) of t, whose memory may follow another dim order. */
static int64_t physical(const et_tensor *t, int64_t k) {
  if (!t->dim_order || et_is_contiguous(t)) return k;
  /* 32-bit index math: tensors here are bounded by the file (or arena) size, and 64-bit division
   * would pull ~1 KB of libgcc into Cortex-M images. */
  uint32_t stride[ET_MAX_DIMS], s = 1, kk = (uint32_t)k, off = 0;
  for (int32_t j = (int32_t)t->ndim - 1; j >= 0; j--) { stride[t->dim_order[j]] = s; s *= (uint32_t)t->sizes[t->dim_order[j]]; }
  for (int32_t d = (int32_t)t->ndim - 1; d >= 0; d--) {
    uint32_t n = (uint32_t)t->sizes[d];
    if (!n) return 0;
    off += (kk % n) * stride[d]; kk /= n;
  }
  return off;
}

static bool same_order(const et_tensor *a, const et_tensor *b) {
  for (uint32_t d = 0; d < a->ndim; d++)
    if ((a->dim_order ? a->dim_order[d] : d) != (b->dim_order ? b->dim_order[d] : d)) return false;
  return true;
}

et_status et_bundle_set_inputs(et_bundle *b, int32_t suite, uint32_t c, et_method *m) {
  et_fb_table tc;
  if (!get_case(b, suite, c, &tc)) return ET_ERR_BAD_PROGRAM;
  et_fb_vec ins = et_fb_vector(&tc, ETBP_BundledMethodTestCase_inputs, 4);
  if (ins.len != et_method_num_inputs(m)) return ET_ERR_BAD_INPUT;
  for (uint32_t i = 0; i < ins.len; i++) {
    et_fb_table val;
    et_tensor t; int32_t sizes[ET_MAX_DIMS];
    if (!et_fb_vec_table(&ins, i, &val)) return ET_ERR_BAD_PROGRAM;
    if (!view(b, &val, &t, sizes)) continue;  /* scalar inputs are part of the program */
    et_value *iv = et_method_input(m, i);
    if (iv && iv->tag == ET_TAG_TENSOR && iv->u.t->ndim == t.ndim && !same_order(iv->u.t, &t)) {
      /* The program wants another memory order (e.g. NHWC): copy element by element. */
      et_tensor *d = iv->u.t;
      if (d->dtype != t.dtype || !d->data || et_resize(d, t.ndim, sizes) != ET_OK) return ET_ERR_BAD_INPUT;
      size_t es = et_dtype_size(d->dtype);
      int64_t n = et_numel(d);
      for (int64_t k = 0; k < n; k++) {
        const uint8_t *src = (const uint8_t *)t.data + (size_t)physical(&t, k) * es;
        uint8_t *dst = (uint8_t *)d->data + (size_t)physical(d, k) * es;
        for (size_t c = 0; c < es; c++) dst[c] = src[c];
      }
      continue;
    }
    et_status st = et_method_set_input(m, i, t.dtype, t.ndim, sizes, t.data, t.capacity);
    if (st != ET_OK) return st;
  }
  return ET_OK;
}

static float fabs_f(float x) { return x < 0 ? -x : x; }



et_status et_bundle_check_outputs(et_bundle *b, int32_t suite, uint32_t c, et_method *m,
                                  float atol, float rtol, float *max_err, uint32_t *bad) {
  et_fb_table tc;
  *max_err = 0; *bad = 0xFFFFFFFFu;
  if (!get_case(b, suite, c, &tc)) return ET_ERR_BAD_PROGRAM;
  et_fb_vec outs = et_fb_vector(&tc, ETBP_BundledMethodTestCase_expected_outputs, 4);
  if (outs.len != et_method_num_outputs(m)) { *bad = 0; return ET_ERR_MISMATCH; }
  for (uint32_t i = 0; i < outs.len; i++) {
    et_fb_table val;
    et_tensor e; int32_t sizes[ET_MAX_DIMS];
    if (!et_fb_vec_table(&outs, i, &val)) return ET_ERR_BAD_PROGRAM;
    if (!view(b, &val, &e, sizes)) continue;
    et_value *ov = et_method_output(m, i);
    if (!ov || ov->tag != ET_TAG_TENSOR) { if (*bad == 0xFFFFFFFFu) *bad = i; continue; }
    et_tensor *o = ov->u.t;
    int64_t n = et_numel(o);
    bool same_shape = o->ndim == e.ndim && n == et_numel(&e);
    for (uint32_t d = 0; same_shape && d < o->ndim; d++) same_shape = o->sizes[d] == e.sizes[d];
    if (!same_shape) { if (*bad == 0xFFFFFFFFu) *bad = i; continue; }
    bool fl = et_dtype_is_float(o->dtype) || et_dtype_is_float(e.dtype);
    for (int64_t k = 0; k < n; k++) {
      float err, tol;
      if (fl) {
        float ev = et_load_f(&e, k), gv = et_load_f(o, physical(o, k));
        if (ev != ev || gv != gv) { err = (ev != ev && gv != gv) ? 0.0f : 1e30f; }
        else err = fabs_f(gv - ev);
        tol = atol + rtol * fabs_f(ev);
      } else {
        int64_t gv = et_load_i(o, physical(o, k)), ev = et_load_i(&e, k);   /* |gv - ev| without overflow */
        err = (float)(gv >= ev ? (uint64_t)gv - (uint64_t)ev : (uint64_t)ev - (uint64_t)gv);
        tol = atol;
      }
      if (err > *max_err) *max_err = err;
      if (err > tol && *bad == 0xFFFFFFFFu) *bad = i;
    }
  }
  return *bad == 0xFFFFFFFFu ? ET_OK : ET_ERR_MISMATCH;
}
