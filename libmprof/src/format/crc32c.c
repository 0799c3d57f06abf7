/*
 * mprof — CRC-32C (Castagnoli), the checksum of every .mprof section.
 *
 * Uses the SSE4.2 crc32 instruction when the CPU has it (several GB/s, so
 * verifying a trace costs little next to reading it) and a slice-by-8 table
 * otherwise. Both give identical results.
 *
 * SPDX-License-Identifier: MIT
 */
#include <pthread.h>
#include <string.h>

#include "mprof/writer.h"

static uint32_t crc_table[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;
static int crc_have_hw;

static void crc_init(void) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++)
      c = (c & 1) ? (c >> 1) ^ 0x82f63b78u : c >> 1;
    crc_table[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; i++)
    for (int t = 1; t < 8; t++)
      crc_table[t][i] =
          (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xff];
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  crc_have_hw = __builtin_cpu_supports("sse4.2");
#endif
}

static uint32_t crc_soft(uint32_t crc, const unsigned char *p, size_t n) {
  while (n && ((uintptr_t)p & 7)) {
    crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    n--;
  }
  while (n >= 8) {
    uint64_t v;
    memcpy(&v, p, 8);
    v ^= crc;
    crc = crc_table[7][v & 0xff] ^ crc_table[6][(v >> 8) & 0xff] ^
          crc_table[5][(v >> 16) & 0xff] ^ crc_table[4][(v >> 24) & 0xff] ^
          crc_table[3][(v >> 32) & 0xff] ^ crc_table[2][(v >> 40) & 0xff] ^
          crc_table[1][(v >> 48) & 0xff] ^ crc_table[0][v >> 56];
    p += 8;
    n -= 8;
  }
  while (n--)
    crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return crc;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("sse4.2"))) static uint32_t
crc_hw(uint32_t crc, const unsigned char *p, size_t n) {
  uint64_t c = crc;
  while (n && ((uintptr_t)p & 7)) {
    c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
    n--;
  }
  while (n >= 8) {
    uint64_t a;
    memcpy(&a, p, 8);
    c = __builtin_ia32_crc32di(c, a);
    p += 8;
    n -= 8;
  }
  while (n--)
    c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
  return (uint32_t)c;
}
#endif

uint32_t mprof_crc32c(uint32_t crc, const void *data, size_t size) {
  pthread_once(&crc_once, crc_init);
  crc = ~crc;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (crc_have_hw)
    return ~crc_hw(crc, (const unsigned char *)data, size);
#endif
  return ~crc_soft(crc, (const unsigned char *)data, size);
}
