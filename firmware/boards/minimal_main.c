/* The image built without pte=: shows that a board's start-up, link and exit work. */
#include "bsp.h"
#include "bsp_config.h"

static unsigned long len_of(const char *s) {
  unsigned long n = 0;
  while (s[n]) n++;
  return n;
}

int main(void) {
  static const char head[] = "etdeploy: ", tail[] = " ok\n";
  bsp_init();
  uint64_t t0 = bsp_cycles();
  bsp_write((const uint8_t *)head, sizeof head - 1);
  bsp_write((const uint8_t *)BSP_BOARD_NAME, len_of(BSP_BOARD_NAME));
  bsp_write((const uint8_t *)tail, sizeof tail - 1);
  (void)t0;
  bsp_exit(0);
}
