/* Bundled programs (.bpte, BP08): the program plus per-method test cases. */
#ifndef ET_BUNDLED_H
#define ET_BUNDLED_H
#include "et_runtime.h"

typedef struct et_bundle {
  et_fb_buf fb;
  et_fb_table root;
  et_fb_vec suites;
  const uint8_t *program;
  uint32_t program_size;
} et_bundle;

bool et_is_bundle(const uint8_t *data, uint32_t size);
et_status et_bundle_load(et_bundle *b, const uint8_t *data, uint32_t size);
/* Suite for the method with this name, or -1. */
int32_t et_bundle_find_suite(et_bundle *b, const char *name, uint32_t len);
uint32_t et_bundle_num_cases(et_bundle *b, int32_t suite);
et_status et_bundle_set_inputs(et_bundle *b, int32_t suite, uint32_t test_case, et_method *m);
/* Compares outputs with expected (|a-e| <= atol + rtol*|e| for floats, exact for ints).
 * Reports the largest absolute error and the first output index that failed (or UINT32_MAX). */
et_status et_bundle_check_outputs(et_bundle *b, int32_t suite, uint32_t test_case, et_method *m,
                                  float atol, float rtol, float *max_err, uint32_t *bad);

#endif
