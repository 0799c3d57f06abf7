/*
 * The host side of mprof_source.cuh end to end without a GPU: run against
 * fake_cudart.c (check_host_writer.sh), it replays what the device code
 * does to the span buffer — reserve 1, 2, 4... slots per atomicAdd, store,
 * count what does not fit — then lets mprof_source_finish() write the file that
 * libmprof reads back.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>

#include "mprof_source.cuh"

/* A kernel, so the header's launch path compiles as in a real program. */
__global__ void tile_kernel(int *x MPROF_SOURCE_PARAM(prof)) {
  MPROF_SOURCE_BLOCK_RECORDER(prof, rec);
  MPROF_SOURCE_BEGIN(prof, rec, t);
  x[threadIdx.x] = 1;
  MPROF_SOURCE_END(prof, rec, t, 0, 0);
}

/* The device's part for one block writer, on the host. */
static void play_block(mprof_source_launch l, unsigned block, int spans,
                       unsigned long long t0) {
  unsigned long long next = 0;
  unsigned left = 0, chunk = 1;
  for (int s = 0; s < spans; s++) {
    if (left == 0) { /* mprof__source_reserve */
      next = l.counters[0];
      l.counters[0] += chunk;
      left = chunk;
      if (chunk < MPROF_SOURCE_CHUNK)
        chunk <<= 1;
    }
    unsigned long long slot = next++;
    left--;
    if (slot >= l.capacity) {
      l.counters[1]++;
      continue;
    }
    mprof_source_record r;
    r.start = t0 + 1000ull * (unsigned long long)s;
    r.end = r.start + 600;
    r.launch = l.launch;
    r.kernel = l.kernel;
    r.sm = block % 4;
    r.block = block;
    r.warp = s == 2 ? 1u : MPROF_SOURCE_NO_WARP;
    r.region = (unsigned)s;
    r.payload = 100u + (unsigned)s;
    l.records[slot] = r;
  }
}

int main(void) {
  int on = mprof_source_init();
  printf("recording %d\n", on);
  unsigned load = mprof_source_region("load", MPROF_SOURCE_ROLE_LOADER);
  unsigned fma = mprof_source_region("fma", MPROF_SOURCE_ROLE_CONSUMER);
  unsigned store =
      mprof_source_region_color("store", MPROF_SOURCE_ROLE_STORER, 0xff00ff00u);
  if (mprof_source_region("fma", MPROF_SOURCE_ROLE_CONSUMER) != fma ||
      load != 0 || fma != 1 || store != 2) {
    printf("FAIL: region ids %u %u %u\n", load, fma, store);
    return 1;
  }
  for (int launch = 0; launch < 3; launch++) {
    dim3 grid(2), block(64);
    mprof_source_launch l = MPROF_SOURCE_NEXT(tile_kernel, grid, block);
    if (!on) {
      if (l.records) {
        printf("FAIL: recording while MPROF_SOURCE_OUTPUT is unset\n");
        return 1;
      }
      continue;
    }
    if (!l.records || l.launch != (unsigned)launch || l.kernel != 0) {
      printf("FAIL: launch %d not set up\n", launch);
      return 1;
    }
    tile_kernel<<<grid, block>>>(NULL, l); /* registered, never run */
    for (unsigned b = 0; b < 2; b++)
      play_block(l, b, 3, 1764000000000000000ull + 100000ull * launch);
  }
  return mprof_source_finish() == 0 ? 0 : 1;
}
