/* Integer helpers the lx106 libgcc lacks (GCC emits calls to them for / % and widening
 * multiplies; the core has no divider). Shift-and-subtract, written without the operators they
 * implement. */
#include <stdint.h>

static uint32_t udivmod32(uint32_t n, uint32_t d, uint32_t *rem) {
  uint32_t q = 0, r = 0;
  if (d == 0) {            /* undefined in C: answer like most hardware dividers do */
    *rem = n;
    return 0xFFFFFFFFu;
  }
  for (int i = 31; i >= 0; i--) {
    uint32_t top = r >> 31;
    r = (r << 1) | ((n >> i) & 1u);
    if (top || r >= d) {
      r -= d;
      q |= 1u << i;
    }
  }
  *rem = r;
  return q;
}

static uint64_t udivmod64(uint64_t n, uint64_t d, uint64_t *rem) {
  uint64_t q = 0, r = 0;
  if (d == 0) {
    *rem = n;
    return ~(uint64_t)0;
  }
  if ((n >> 32) == 0 && (d >> 32) == 0) {
    uint32_t r32;
    q = udivmod32((uint32_t)n, (uint32_t)d, &r32);
    *rem = r32;
    return q;
  }
  for (int i = 63; i >= 0; i--) {
    uint64_t top = r >> 63;
    r = (r << 1) | ((n >> i) & 1u);
    if (top || r >= d) {
      r -= d;
      q |= (uint64_t)1 << i;
    }
  }
  *rem = r;
  return q;
}

uint32_t __udivsi3(uint32_t n, uint32_t d) {
  uint32_t r;
  return udivmod32(n, d, &r);
}

uint32_t __umodsi3(uint32_t n, uint32_t d) {
  uint32_t r;
  udivmod32(n, d, &r);
  return r;
}

int32_t __divsi3(int32_t n, int32_t d) {
  uint32_t r, un = n < 0 ? 0u - (uint32_t)n : (uint32_t)n, ud = d < 0 ? 0u - (uint32_t)d : (uint32_t)d;
  uint32_t q = udivmod32(un, ud, &r);
  return (int32_t)(((n < 0) != (d < 0)) ? 0u - q : q);
}

int32_t __modsi3(int32_t n, int32_t d) {
  uint32_t r, un = n < 0 ? 0u - (uint32_t)n : (uint32_t)n, ud = d < 0 ? 0u - (uint32_t)d : (uint32_t)d;
  udivmod32(un, ud, &r);
  return (int32_t)(n < 0 ? 0u - r : r);
}

uint64_t __umulsidi3(uint32_t a, uint32_t b) {
  uint32_t al = a & 0xFFFFu, ah = a >> 16, bl = b & 0xFFFFu, bh = b >> 16;
  uint32_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
  uint32_t mid = (ll >> 16) + (lh & 0xFFFFu) + (hl & 0xFFFFu);
  uint32_t lo = (ll & 0xFFFFu) | (mid << 16);
  uint32_t hi = hh + (lh >> 16) + (hl >> 16) + (mid >> 16);
  return ((uint64_t)hi << 32) | lo;
}

uint64_t __muldi3(uint64_t a, uint64_t b) {
  uint32_t al = (uint32_t)a, ah = (uint32_t)(a >> 32), bl = (uint32_t)b, bh = (uint32_t)(b >> 32);
  uint64_t p = __umulsidi3(al, bl);
  return p + ((uint64_t)(al * bh + ah * bl) << 32);
}

uint64_t __udivdi3(uint64_t n, uint64_t d) {
  uint64_t r;
  return udivmod64(n, d, &r);
}

uint64_t __umoddi3(uint64_t n, uint64_t d) {
  uint64_t r;
  udivmod64(n, d, &r);
  return r;
}

int64_t __divdi3(int64_t n, int64_t d) {
  uint64_t r, un = n < 0 ? 0u - (uint64_t)n : (uint64_t)n, ud = d < 0 ? 0u - (uint64_t)d : (uint64_t)d;
  uint64_t q = udivmod64(un, ud, &r);
  return (int64_t)(((n < 0) != (d < 0)) ? 0u - q : q);
}

int64_t __moddi3(int64_t n, int64_t d) {
  uint64_t r, un = n < 0 ? 0u - (uint64_t)n : (uint64_t)n, ud = d < 0 ? 0u - (uint64_t)d : (uint64_t)d;
  udivmod64(un, ud, &r);
  return (int64_t)(n < 0 ? 0u - r : r);
}
