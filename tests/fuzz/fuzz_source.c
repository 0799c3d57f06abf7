/*
 * mprof — libFuzzer target for the .source reader (producers/source).
 *
 * Any byte string handed to mprof_source_file_open() must give either a
 * file whose tables are safe to walk, or a clean error; never a crash.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_file.h"
#include "mprof/source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char path[64];
  int fd = fuzz_file("mprof-fuzz-source", data, size, path);
  if (fd < 0)
    return 0;
  mprof_source_file *f = NULL;
  if (mprof_source_file_open(&f, path) == 0) {
    size_t n;
    uint64_t sum = 0;
    const mprof_source_file_region *r = mprof_source_file_regions(f, &n);
    for (size_t i = 0; i < n; i++)
      sum += (uint64_t)mprof_source_file_string(f, r[i].name)[0];
    const mprof_source_file_kernel *k = mprof_source_file_kernels(f, &n);
    for (size_t i = 0; i < n; i++)
      sum += (uint64_t)mprof_source_file_string(f, k[i].name)[0];
    const mprof_source_file_launch *l = mprof_source_file_launches(f, &n);
    for (size_t i = 0; i < n; i++)
      sum += l[i].grid[0];
    const mprof_source_file_record *rec = mprof_source_file_records(f, &n);
    for (size_t i = 0; i < n; i++)
      sum += rec[i].end - rec[i].start;
    (void)sum;
    mprof_source_file_free(f);
  }
  close(fd);
  return 0;
}
