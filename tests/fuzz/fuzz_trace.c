/*
 * mprof — libFuzzer target for the .mprof reader.
 *
 * Any byte string handed to mprof_trace_open() must give either a valid
 * trace whose accessors are safe, or a clean error; never a crash or leak.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_file.h"
#include "mprof/mprof.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char path[64];
  int fd = fuzz_file("mprof-fuzz", data, size, path);
  if (fd < 0)
    return 0;
  mprof_trace *t = NULL;
  if (mprof_trace_open(&t, path, NULL) == 0) {
    /* Touch everything the accessors hand out. */
    size_t n, streams;
    const mprof_launch_record *l = mprof_trace_launches(t, &n);
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++)
      sum += l[i].end - l[i].start;
    mprof_trace_streams(t, &streams);
    for (uint32_t s = 0; s < streams; s++) {
      size_t first, last;
      mprof_trace_stream_find(t, &first, &last, s, 0, UINT64_MAX);
      for (size_t p = first; p < last; p++)
        sum += mprof_trace_stream_launch(t, s, p)->start;
    }
    const mprof_kernel_record *k = mprof_trace_kernels(t, &n);
    for (size_t i = 0; i < n; i++)
      sum += mprof_trace_string(t, k[i].mangled_name)[0];
    const mprof_cubin_record *c = mprof_trace_cubins(t, &n);
    for (size_t i = 0; i < n; i++) {
      size_t blob_size;
      const unsigned char *b =
          (const unsigned char *)mprof_trace_cubin_blob(t, &c[i], &blob_size);
      if (b && blob_size)
        sum += b[blob_size - 1];
    }
    /* The embedded sources: every listed file's first line. */
    mprof_sources_options so = MPROF_SOURCES_OPTIONS_INIT;
    so.flags = MPROF_SOURCES_NO_DISK;
    mprof_sources *src = NULL;
    if (mprof_sources_open(&src, t, &so) == 0)
      for (size_t i = 0; i < mprof_sources_listed(src); i++) {
        size_t len;
        const char *line = mprof_sources_line(
            src, mprof_sources_listed_at(src, i)->path, 1, &len);
        if (line && len)
          sum += (unsigned char)line[len - 1];
      }
    mprof_sources_free(src);
    (void)mprof_trace_meta(t, "tool");
    if (sum == 42)
      fputc('\0', stderr); /* keep the loops from being optimised away */
    mprof_trace_free(t);
  }
  close(fd);
  return 0;
}
