/* Backend registry. Backends register by appearing in this table at build time (the bake step
 * defines ET_WITH_<BACKEND> for the ones the image carries). */
#include "et_runtime.h"

#ifdef ET_WITH_ETHOSU
extern const et_backend et_backend_ethosu;
#endif
#ifdef ET_WITH_XNNPACK
extern const et_backend et_backend_xnnpack;
#endif

static const et_backend *const registry[] = {
#ifdef ET_WITH_ETHOSU
  &et_backend_ethosu,
#endif
#ifdef ET_WITH_XNNPACK
  &et_backend_xnnpack,
#endif
  0,
};

const et_backend *et_backend_find(const char *id, uint32_t len) {
  for (uint32_t i = 0; registry[i]; i++)
    if (et_fb_str_eq(id, len, registry[i]->id)) return registry[i];
  return 0;
}
