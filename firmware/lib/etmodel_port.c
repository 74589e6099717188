/* Weak defaults of the hooks etmodel.h asks the host firmware for. Define any of them in your own
 * code and yours is linked instead: a cycle counter for etmodel_last_cycles, a log write (UART,
 * RTT, printk) for the library's one-line error reports. */
#include "etmodel.h"

__attribute__((weak)) uint64_t etmodel_port_cycles(void) { return 0; }

__attribute__((weak)) void etmodel_port_write(const char *text, size_t len) { (void)text; (void)len; }

static size_t put(char *b, size_t at, size_t cap, const char *s) {
  while (*s && at < cap) b[at++] = *s++;
  return at;
}

/* "etmodel: <what>: <status> (method <m>)\n" through etmodel_port_write: no stdio, no heap. */
__attribute__((weak)) void etmodel_port_fault(int status, uint32_t method, const char *what) {
  char b[120];
  size_t n = put(b, 0, sizeof b - 4, "etmodel: ");
  n = put(b, n, sizeof b - 4, what);
  n = put(b, n, sizeof b - 4, ": ");
  n = put(b, n, sizeof b - 4, etmodel_status_name(status));
  if (method != ETMODEL_NO_METHOD) {
    n = put(b, n, sizeof b - 4, " (method ");
    if (n < sizeof b - 4) b[n++] = (char)('0' + method % 10u);
    n = put(b, n, sizeof b - 4, ")");
  }
  b[n++] = '\n';
  etmodel_port_write(b, n);
}
