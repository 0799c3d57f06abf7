/*
 * check_blocks — what tests/gpu/blocks.sh asserts about a trace recorded
 * with `mprof record blocks`: the trace has launches; for every launch, the
 * number of block spans equals the grid size, each block appears once, and
 * every span lies inside its launch's interval within TOLERANCE ns (default
 * 1000: the largest alignment error measured onto CUPTI launches was
 * 507 ns, plus the 32 ns %globaltimer step). The tolerance is the
 * checker's, not the trace's: a trace cannot widen it by storing a large
 * alignment error, and one that says its alignment is worse fails. Prints
 * one line per kernel and a total; with --tail NAME also the shape of that
 * kernel's last wave (a kernel named NAME must be there).
 *
 * With --launches N the trace must hold N launches (what the program says
 * it launched). With --shared NAME BYTES every launch of a kernel whose
 * name holds NAME must have BYTES of dynamic shared memory (what the blocks
 * saw), and there must be such a kernel.
 *
 * With --memory NAME (a trace of `record blocks --memory`, the kernel of
 * tests/gpu/blocks_memory.cu): its counted instructions are printed, and it
 * must have two loads, one using 100% of its sectors and one 12.5%, and a
 * store using 100%, each executed once per warp of every launch; no other
 * kernel may have counts.
 *
 * Usage: check_blocks TRACE [--tail KERNEL_SUBSTRING] [--tolerance NS]
 *                     [--launches N] [--shared KERNEL_SUBSTRING BYTES]
 *                     [--memory NAME]
 * Exit status: 0 all launches complete and inside, 1 otherwise, 2 bad input
 * (an unknown option included).
 *
 * SPDX-License-Identifier: MIT
 */
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mprof/mprof.h"

typedef struct kernel_sum {
  uint64_t launches, complete, short_, extra, duplicate, outside, spans;
  double busy_ns;
  uint32_t first_stream; /* the stream of its first launch */
  uint32_t dynamic_shared_min, dynamic_shared_max;
} kernel_sum;

static uint64_t meta_u64(const mprof_trace *t, const char *key) {
  const char *v = mprof_trace_meta(t, key);
  return v ? strtoull(v, NULL, 10) : 0;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* The tail of one launch: blocks that started after the first block ended
 * (the first wave's slots were all taken), the SMs they ran on, and how
 * long the launch ran with fewer SMs busy than at its peak. */
static void print_tail(const mprof_trace *t, size_t launch,
                       const mprof_span_record *sp, size_t n) {
  const mprof_launch_record *l = &mprof_trace_launches(t, &(size_t){0})[launch];
  uint64_t first_end = UINT64_MAX, last_end = 0, first_start = UINT64_MAX;
  size_t blocks = 0;
  for (size_t i = 0; i < n; i++)
    if (sp[i].launch == launch) {
      blocks++;
      if (sp[i].end < first_end)
        first_end = sp[i].end;
      if (sp[i].end > last_end)
        last_end = sp[i].end;
      if (sp[i].start < first_start)
        first_start = sp[i].start;
    }
  size_t late = 0;
  uint32_t late_sm = 0;
  uint64_t late_start = 0, late_end = 0;
  for (size_t i = 0; i < n; i++)
    if (sp[i].launch == launch && sp[i].start >= first_end) {
      late++;
      late_sm = sp[i].sm;
      late_start = sp[i].start;
      late_end = sp[i].end;
    }
  printf("TAIL launch %zu: %zu blocks, %zu started after the first block "
         "ended",
         launch, blocks, late);
  if (late == 1)
    printf(" (block on SM %u, %.1f us to %.1f us after the launch start; "
           "launch %.1f us, first wave ended at %.1f us)",
           late_sm, (late_start - l->start) / 1e3, (late_end - l->start) / 1e3,
           (l->end - l->start) / 1e3, (first_end - l->start) / 1e3);
  printf("\n");
}

/* --memory: the known pattern of blocks_memory.cu. Returns failures. */
static uint64_t check_memory(const mprof_trace *t, const char *name) {
  mprof_join *j;
  if (mprof_join_build(&j, t, NULL) != 0) {
    printf("MEMORY: %s\n", mprof_error_last());
    return 1;
  }
  uint64_t bad = 0;
  int found = 0;
  for (size_t k = 0; k < mprof_join_kernel_count(j); k++) {
    const mprof_kernel_stats *ks = mprof_join_kernel(j, k);
    size_t count;
    const mprof_memory_stats *m = mprof_join_memory(j, k, &count);
    if (!strstr(ks->name, name)) {
      if (count) {
        printf("MEMORY %.60s: %zu instructions counted, expected none\n",
               ks->name, count);
        bad++;
      }
      continue;
    }
    found = 1;
    /* Warps per launch summed over the kernel's launches. */
    uint64_t warps = 0;
    size_t shape_count;
    const mprof_shape_stats *sh = mprof_join_shapes(j, k, &shape_count);
    for (size_t i = 0; i < shape_count; i++) {
      uint64_t threads =
          (uint64_t)sh[i].block[0] * sh[i].block[1] * sh[i].block[2];
      uint64_t blocks = (uint64_t)sh[i].grid[0] * sh[i].grid[1] * sh[i].grid[2];
      warps += sh[i].launches * blocks * ((threads + 31) / 32);
    }
    int full_loads = 0, strided_loads = 0, full_stores = 0;
    for (size_t i = 0; i < count; i++) {
      const mprof_memory_stats *x = &m[i];
      printf("MEMORY %.40s +0x%04x flags 0x%x size %u: %" PRIu64
             " warp accesses (expected %" PRIu64 "), %" PRIu64
             " threads, %" PRIu64 " bytes, %" PRIu64
             " sectors, efficiency %.4f\n",
             ks->name, x->offset, x->flags, x->access_size, x->warp_accesses,
             warps, x->thread_accesses, x->bytes, x->sectors, x->efficiency);
      int exact = x->warp_accesses == warps;
      if ((x->flags & MPROF_MEMORY_READ) && exact &&
          fabs(x->efficiency - 1.0) < 1e-3)
        full_loads++;
      else if ((x->flags & MPROF_MEMORY_READ) && exact &&
               fabs(x->efficiency - 0.125) < 1e-3)
        strided_loads++;
      else if ((x->flags & MPROF_MEMORY_WRITE) && exact &&
               fabs(x->efficiency - 1.0) < 1e-3)
        full_stores++;
    }
    printf("MEMORY %.40s: %zu instructions; loads at 100%%: %d, at 12.5%%: "
           "%d; stores at 100%%: %d\n",
           ks->name, count, full_loads, strided_loads, full_stores);
    if (count != 3 || full_loads != 1 || strided_loads != 1 || full_stores != 1)
      bad++;
  }
  if (!found) {
    printf("MEMORY: no kernel named %s\n", name);
    bad++;
  }
  mprof_join_free(j);
  return bad;
}

static int usage(void) {
  fprintf(stderr, "usage: check_blocks TRACE [--tail NAME] [--tolerance NS] "
                  "[--launches N] [--shared NAME BYTES] [--memory NAME]\n");
  return 2;
}

/* A whole decimal number, or -1. */
static long long number(const char *text) {
  char *end;
  if (!*text || *text == '-')
    return -1;
  unsigned long long v = strtoull(text, &end, 10);
  return *end || v > (unsigned long long)LLONG_MAX ? -1 : (long long)v;
}

int main(int argc, char **argv) {
  if (argc < 2 || argv[1][0] == '-')
    return usage();
  const char *tail = NULL, *shared_name = NULL, *memory_name = NULL;
  long long tolerance = 1000, want_launches = -1, shared_bytes = 0;
  for (int i = 2; i < argc; i += 2) {
    if (i + 1 >= argc)
      return usage();
    if (strcmp(argv[i], "--tail") == 0)
      tail = argv[i + 1];
    else if (strcmp(argv[i], "--tolerance") == 0)
      tolerance = number(argv[i + 1]);
    else if (strcmp(argv[i], "--launches") == 0)
      want_launches = number(argv[i + 1]);
    else if (strcmp(argv[i], "--memory") == 0)
      memory_name = argv[i + 1];
    else if (strcmp(argv[i], "--shared") == 0 && i + 2 < argc) {
      shared_name = argv[i + 1];
      shared_bytes = number(argv[i + 2]);
      i++;
    } else
      return usage();
  }
  if (tolerance < 0 || shared_bytes < 0 ||
      (want_launches < 0 && want_launches != -1))
    return usage();
  mprof_trace *t;
  if (mprof_trace_open(&t, argv[1], NULL) != 0) {
    fprintf(stderr, "check_blocks: %s\n", mprof_error_last());
    return 2;
  }
  size_t nl, ns, nk, nsh;
  const mprof_launch_record *launches = mprof_trace_launches(t, &nl);
  const mprof_span_record *spans = mprof_trace_spans(t, &ns);
  const mprof_kernel_record *kernels = mprof_trace_kernels(t, &nk);
  const mprof_shape_record *shapes = mprof_trace_shapes(t, &nsh);
  uint64_t err = (uint64_t)tolerance;
  uint64_t stored_err = meta_u64(t, "source.alignment_error_ns");
  printf("TRACE %s: %zu launches, %zu spans, alignment %s, error max %s ns "
         "(median %s), blocks.producer %s, overflow %s, missing %s, "
         "sm_changed %s, modules patched %s failed %s, capture.disabled %s\n",
         argv[1], nl, ns, mprof_trace_meta(t, "source.alignment_method"),
         mprof_trace_meta(t, "source.alignment_error_ns"),
         mprof_trace_meta(t, "source.alignment_error_median_ns"),
         mprof_trace_meta(t, "blocks.producer"),
         mprof_trace_meta(t, "blocks.overflow"),
         mprof_trace_meta(t, "blocks.missing"),
         mprof_trace_meta(t, "blocks.sm_changed"),
         mprof_trace_meta(t, "blocks.modules_patched"),
         mprof_trace_meta(t, "blocks.modules_failed"),
         mprof_trace_meta(t, "capture.disabled"));
  /* Spans per launch, and each block seen once. */
  uint64_t *count = (uint64_t *)calloc(nl + 1, sizeof *count);
  uint64_t *outside = (uint64_t *)calloc(nl + 1, sizeof *outside);
  size_t *first = (size_t *)calloc(nl + 1, sizeof *first);
  uint64_t *blocks = (uint64_t *)malloc((ns + 1) * sizeof *blocks);
  kernel_sum *ks = (kernel_sum *)calloc(nk + 1, sizeof *ks);
  if (!count || !outside || !first || !blocks || !ks)
    return 2;
  uint64_t no_launch = 0;
  for (size_t i = 0; i < ns; i++) {
    uint32_t l = spans[i].launch;
    if (l == MPROF_INDEX_NONE || l >= nl) {
      no_launch++;
      continue;
    }
    count[l]++;
    if (spans[i].start + err < launches[l].start ||
        spans[i].end > launches[l].end + err)
      outside[l]++;
  }
  uint64_t bad = 0, checked = 0;
  if (!nl) {
    printf("LAUNCHES: the trace holds no launch\n");
    bad++;
  }
  if (want_launches >= 0 && nl != (size_t)want_launches) {
    printf("LAUNCHES: %zu in the trace, %lld launched\n", nl, want_launches);
    bad++;
  }
  if (stored_err > err) {
    printf("ALIGNMENT: the trace's alignment error is %" PRIu64
           " ns, more than the %" PRIu64 " ns allowed\n",
           stored_err, err);
    bad++;
  }
  int shared_found = 0, tail_found = 0;
  for (size_t l = 0; l < nl; l++) {
    const mprof_shape_record *s = &shapes[launches[l].shape];
    kernel_sum *k = &ks[s->kernel];
    uint64_t grid = (uint64_t)s->grid[0] * s->grid[1] * s->grid[2];
    if (!k->launches) {
      k->first_stream = launches[l].stream;
      k->dynamic_shared_min = k->dynamic_shared_max = s->dynamic_shared;
    }
    if (s->dynamic_shared < k->dynamic_shared_min)
      k->dynamic_shared_min = s->dynamic_shared;
    if (s->dynamic_shared > k->dynamic_shared_max)
      k->dynamic_shared_max = s->dynamic_shared;
    k->launches++;
    k->spans += count[l];
    k->outside += outside[l];
    /* Duplicate block indices. */
    size_t m = 0;
    for (size_t i = 0; i < ns; i++)
      if (spans[i].launch == l) {
        blocks[m++] = spans[i].block;
        k->busy_ns += (double)(spans[i].end - spans[i].start);
      }
    qsort(blocks, m, sizeof *blocks, cmp_u64);
    uint64_t dup = 0;
    for (size_t i = 1; i < m; i++)
      dup += blocks[i] == blocks[i - 1];
    k->duplicate += dup;
    if (count[l] == grid && !dup)
      k->complete++;
    else if (count[l] < grid)
      k->short_++;
    else
      k->extra++;
    checked++;
    if (count[l] != grid || dup || outside[l])
      bad++;
  }
  for (size_t k = 0; k < nk; k++) {
    if (!ks[k].launches)
      continue;
    const char *name = mprof_trace_string(t, kernels[k].demangled_name);
    if (!*name)
      name = mprof_trace_string(t, kernels[k].mangled_name);
    printf("KERNEL %.60s: launches %" PRIu64 ", complete %" PRIu64
           ", short %" PRIu64 ", extra %" PRIu64 ", duplicate blocks %" PRIu64
           ", spans %" PRIu64 ", outside %" PRIu64 ", mean block %.2f us\n",
           name, ks[k].launches, ks[k].complete, ks[k].short_, ks[k].extra,
           ks[k].duplicate, ks[k].spans, ks[k].outside,
           ks[k].spans ? ks[k].busy_ns / (double)ks[k].spans / 1e3 : 0.0);
    size_t stream_count;
    const mprof_stream_record *streams = mprof_trace_streams(t, &stream_count);
    const mprof_stream_record *st = &streams[ks[k].first_stream];
    const char *stream_name = mprof_trace_string(t, st->name);
    printf("LAUNCHES %.60s: stream %u%s%s%s, dynamic shared %u..%u bytes\n",
           name, st->stream_id, *stream_name ? " (" : "", stream_name,
           *stream_name ? ")" : "", ks[k].dynamic_shared_min,
           ks[k].dynamic_shared_max);
    if (shared_name && strstr(name, shared_name)) {
      shared_found = 1;
      if (ks[k].dynamic_shared_min != (uint64_t)shared_bytes ||
          ks[k].dynamic_shared_max != (uint64_t)shared_bytes) {
        printf("SHARED %.60s: dynamic shared %u..%u bytes, expected %lld\n",
               name, ks[k].dynamic_shared_min, ks[k].dynamic_shared_max,
               shared_bytes);
        bad++;
      }
    }
    if (tail && strstr(name, tail)) {
      tail_found = 1;
      for (size_t l = 0; l < nl; l++)
        if (shapes[launches[l].shape].kernel == k)
          print_tail(t, l, spans, ns);
    }
  }
  if (shared_name && !shared_found) {
    printf("SHARED: no kernel named %s\n", shared_name);
    bad++;
  }
  if (tail && !tail_found) {
    printf("TAIL: no kernel named %s\n", tail);
    bad++;
  }
  if (memory_name)
    bad += check_memory(t, memory_name);
  printf("TOTAL launches %" PRIu64 ", failing %" PRIu64 ", spans %zu, "
         "spans without launch %" PRIu64 "\n",
         checked, bad, ns, no_launch);
  free(count);
  free(outside);
  free(first);
  free(blocks);
  free(ks);
  mprof_trace_free(t);
  return bad || no_launch ? 1 : 0;
}
