/*
 * mprof CLI — `mprof record blocks`: run the program with the block
 * producer (producers/sanitizer, a Compute Sanitizer API tool), then turn
 * its .source file into a trace whose launches are measured by their own
 * blocks. The CUPTI producer cannot run in the same process (on the H200,
 * a CUPTI subscriber after the sanitizer fails and the program crashes), so
 * the trace has no memcpy, NVTX, PC samples or SASS: `mprof record` of the
 * same command gives those.
 *
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <stddef.h>
#include <glob.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "mprof/mprof.h"
#include "mprof/source.h"

int cli_find_blocks(char *out, size_t size) {
  return cli_find_library(out, size, "libmprof-blocks.so", "MPROF_BLOCKS_LIB");
}

/* In the child, before exec: the block producer, preloaded (it subscribes
 * from its constructor), writes PATTERN.source (expanded per process) and
 * tells MANIFEST which name it took. */
void cli_blocks_env(const char *pattern, const char *blocks_lib,
                    const char *manifest, int memory) {
  char path[PATH_MAX];
  if (snprintf(path, sizeof path, "%s.source", pattern) < (int)sizeof path)
    setenv("MPROF_BLOCKS_OUTPUT", path, 1);
  setenv("MPROF_MANIFEST", manifest, 1);
  if (memory)
    setenv("MPROF_BLOCKS_MEMORY", "1", 1);
  const char *old = getenv("LD_PRELOAD");
  size_t len = strlen(blocks_lib) + (old ? strlen(old) : 0) + 2;
  char *value = (char *)malloc(len);
  if (!value)
    return;
  snprintf(value, len, "%s%s%s", blocks_lib, old && *old ? ":" : "",
           old && *old ? old : "");
  setenv("LD_PRELOAD", value, 1);
  free(value);
}

/* FILE.meta: "key value" lines the producer wrote beside the .source. */
typedef struct meta_list {
  char **pairs;
  size_t count; /* pairs */
} meta_list;

static void meta_free(meta_list *m) {
  for (size_t i = 0; i < 2 * m->count; i++)
    free(m->pairs[i]);
  free(m->pairs);
  m->pairs = NULL;
  m->count = 0;
}

static int meta_read(meta_list *m, const char *path) {
  memset(m, 0, sizeof *m);
  FILE *f = fopen(path, "r");
  if (!f)
    return -1;
  char line[1024];
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    char *space = strchr(line, ' ');
    if (!space)
      continue;
    *space = '\0';
    /* The producer's own keys, and who wrote the file (pid, ppid, host:
     * the process of a run, as a `record` trace names it). */
    int keep = strncmp(line, "blocks.", 7) == 0 || strcmp(line, "pid") == 0 ||
               strcmp(line, "ppid") == 0 || strcmp(line, "host") == 0;
    if (!keep)
      continue;
    char **grown =
        (char **)realloc(m->pairs, 2 * (m->count + 1) * sizeof *grown);
    if (!grown)
      break;
    m->pairs = grown;
    m->pairs[2 * m->count] = strdup(line);
    m->pairs[2 * m->count + 1] = strdup(space + 1);
    if (!m->pairs[2 * m->count] || !m->pairs[2 * m->count + 1]) {
      free(m->pairs[2 * m->count]);
      free(m->pairs[2 * m->count + 1]);
      break;
    }
    m->count++;
  }
  fclose(f);
  return 0;
}

static const char *meta_get(const meta_list *m, const char *key) {
  for (size_t i = 0; i < m->count; i++)
    if (strcmp(m->pairs[2 * i], key) == 0)
      return m->pairs[2 * i + 1];
  return NULL;
}

static unsigned long long meta_u64(const meta_list *m, const char *key) {
  const char *v = meta_get(m, key);
  return v ? strtoull(v, NULL, 10) : 0;
}

/* DEVICES and KERNELS facts from "blocks.device.N.FIELD" and
 * "blocks.kernel.N.FIELD" lines. */
typedef struct facts {
  mprof_device_record devices[16];
  const char *device_names[16];
  size_t device_count;
  mprof_kernel_record *kernels;
  size_t kernel_count;
} facts;

static uint32_t *device_field(mprof_device_record *d, const char *field) {
  static const struct {
    const char *name;
    size_t offset;
  } map[] = {
      {"cc_major", offsetof(mprof_device_record, cc_major)},
      {"cc_minor", offsetof(mprof_device_record, cc_minor)},
      {"sm_count", offsetof(mprof_device_record, sm_count)},
      {"warp_size", offsetof(mprof_device_record, warp_size)},
      {"max_threads_per_block",
       offsetof(mprof_device_record, max_threads_per_block)},
      {"max_threads_per_sm", offsetof(mprof_device_record, max_threads_per_sm)},
      {"max_blocks_per_sm", offsetof(mprof_device_record, max_blocks_per_sm)},
      {"max_regs_per_block", offsetof(mprof_device_record, max_regs_per_block)},
      {"max_regs_per_sm", offsetof(mprof_device_record, max_regs_per_sm)},
      {"max_shared_per_block",
       offsetof(mprof_device_record, max_shared_per_block)},
      {"max_shared_per_sm", offsetof(mprof_device_record, max_shared_per_sm)},
      {"core_clock_khz", offsetof(mprof_device_record, core_clock_khz)},
      {"memory_clock_khz", offsetof(mprof_device_record, memory_clock_khz)},
      {"memory_bus_width", offsetof(mprof_device_record, memory_bus_width)},
      {"l2_size", offsetof(mprof_device_record, l2_size)},
  };
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (strcmp(map[i].name, field) == 0)
      return (uint32_t *)((char *)d + map[i].offset);
  return NULL;
}

static void facts_read(facts *f, const meta_list *m) {
  memset(f, 0, sizeof *f);
  for (size_t i = 0; i < m->count; i++) {
    const char *key = m->pairs[2 * i], *value = m->pairs[2 * i + 1];
    unsigned id;
    char field[64];
    if (sscanf(key, "blocks.device.%u.%63s", &id, field) == 2) {
      size_t d = 0;
      while (d < f->device_count && f->devices[d].id != id)
        d++;
      if (d == f->device_count) {
        if (d == sizeof f->devices / sizeof f->devices[0])
          continue;
        memset(&f->devices[d], 0, sizeof f->devices[d]);
        f->devices[d].id = id;
        f->device_count++;
      }
      mprof_device_record *dev = &f->devices[d];
      uint32_t *slot = device_field(dev, field);
      if (slot)
        *slot = (uint32_t)strtoul(value, NULL, 10);
      else if (strcmp(field, "name") == 0)
        f->device_names[d] = value;
      else if (strcmp(field, "global_memory") == 0)
        dev->global_memory = strtoull(value, NULL, 10);
      if (dev->warp_size)
        dev->max_warps_per_sm = dev->max_threads_per_sm / dev->warp_size;
    } else if (sscanf(key, "blocks.kernel.%u.%63s", &id, field) == 2) {
      if (id >= f->kernel_count) {
        mprof_kernel_record *grown = (mprof_kernel_record *)realloc(
            f->kernels, (id + 1) * sizeof *grown);
        if (!grown)
          continue;
        memset(grown + f->kernel_count, 0,
               (id + 1 - f->kernel_count) * sizeof *grown);
        f->kernels = grown;
        f->kernel_count = id + 1;
      }
      uint32_t v = (uint32_t)strtoul(value, NULL, 10);
      if (strcmp(field, "registers") == 0)
        f->kernels[id].registers = v;
      else if (strcmp(field, "static_shared") == 0)
        f->kernels[id].static_shared = v;
      else if (strcmp(field, "local_per_thread") == 0)
        f->kernels[id].local_per_thread = v;
    }
  }
}

/* --memory: "blocks.memory DEVICE KERNEL OFFSET FLAGS SIZE WARPS THREADS
 * BYTES SECTORS" lines as MEMORY_ACCESSES records (kernel: the .source
 * kernel index) and the device each was counted on. Malformed lines are
 * counted and skipped. */
typedef struct memory_list {
  mprof_memory_access_record *records;
  uint32_t *devices;
  size_t count;
  size_t malformed;
} memory_list;

static void memory_read(memory_list *out, const meta_list *m) {
  memset(out, 0, sizeof *out);
  size_t n = 0;
  for (size_t i = 0; i < m->count; i++)
    n += strcmp(m->pairs[2 * i], "blocks.memory") == 0;
  if (!n)
    return;
  out->records = (mprof_memory_access_record *)calloc(n, sizeof *out->records);
  out->devices = (uint32_t *)calloc(n, sizeof *out->devices);
  if (!out->records || !out->devices) {
    free(out->records);
    free(out->devices);
    memset(out, 0, sizeof *out);
    return;
  }
  for (size_t i = 0; i < m->count; i++) {
    if (strcmp(m->pairs[2 * i], "blocks.memory") != 0)
      continue;
    unsigned device, kernel, offset, flags, size;
    unsigned long long warps, threads, bytes, sectors;
    char extra;
    if (sscanf(m->pairs[2 * i + 1], "%u %u %u %u %u %llu %llu %llu %llu %c",
               &device, &kernel, &offset, &flags, &size, &warps, &threads,
               &bytes, &sectors, &extra) != 9 ||
        flags & ~MPROF_MEMORY_FLAGS_KNOWN || threads < warps ||
        sectors < warps || (sectors > threads && sectors - threads > threads)) {
      out->malformed++;
      continue;
    }
    mprof_memory_access_record *r = &out->records[out->count];
    r->kernel = kernel;
    r->pc_offset = offset;
    r->flags = flags;
    r->access_size = size;
    r->warp_accesses = warps;
    r->thread_accesses = threads;
    r->bytes = bytes;
    r->sectors = sectors;
    out->devices[out->count++] = device;
  }
}

/* The producer's counters for META: everything but the device and kernel
 * facts and the memory counts, which become records. */
static size_t counters_only(meta_list *m) {
  size_t kept = 0;
  for (size_t i = 0; i < m->count; i++) {
    if (strncmp(m->pairs[2 * i], "blocks.device.", 14) == 0 ||
        strncmp(m->pairs[2 * i], "blocks.kernel.", 14) == 0 ||
        strcmp(m->pairs[2 * i], "blocks.memory") == 0)
      continue;
    char *k = m->pairs[2 * i], *v = m->pairs[2 * i + 1];
    m->pairs[2 * i] = m->pairs[2 * kept];
    m->pairs[2 * i + 1] = m->pairs[2 * kept + 1];
    m->pairs[2 * kept] = k;
    m->pairs[2 * kept + 1] = v;
    kept++;
  }
  return kept;
}

/* One .source file into its trace, then the usual post-processing. */
int cli_blocks_finish_file(const char *source, unsigned flags) {
  char trace[PATH_MAX], meta_path[PATH_MAX + 8];
  size_t len = strlen(source);
  if (len <= 7 || len >= sizeof trace)
    return CLI_EXIT_USAGE;
  memcpy(trace, source, len - 7);
  trace[len - 7] = '\0';
  memcpy(meta_path, source, len);
  memcpy(meta_path + len, ".meta", sizeof ".meta");
  meta_list meta;
  meta_read(&meta, meta_path);
  facts fx;
  facts_read(&fx, &meta);
  mprof_source_build_options opts = MPROF_SOURCE_BUILD_OPTIONS_INIT;
  opts.devices = fx.devices;
  opts.device_names = fx.device_names;
  opts.device_count = fx.device_count;
  opts.kernels = fx.kernels;
  opts.kernel_count = fx.kernel_count;
  memory_list memory;
  memory_read(&memory, &meta);
  opts.memory = memory.records;
  opts.memory_devices = memory.devices;
  opts.memory_count = memory.count;
  opts.meta = (const char *const *)meta.pairs;
  opts.meta_count = counters_only(&meta);
  int rc = mprof_source_build_trace(source, trace, &opts);
  int status = rc ? cli_fail(rc) : cli_postprocess(trace, flags);
  if (!status) {
    mprof_trace *t;
    if (mprof_trace_open(&t, trace, NULL) == 0) {
      size_t kernels, launches, spans;
      mprof_trace_kernels(t, &kernels);
      mprof_trace_launches(t, &launches);
      mprof_trace_spans(t, &spans);
      if (!(flags & CLI_POST_QUIET))
        fprintf(stderr,
                "mprof: %s: %zu kernel%s, %zu launch%s, %zu block span%s, "
                "%.1f MB; launch times are the blocks' own (first entry to "
                "last exit), each block slowed by the instrumentation (about "
                "5 ns of GPU time per block on an H200, so kernels of many "
                "short blocks run longer than without it); no CUPTI "
                "timeline, memcpy, NVTX, PC samples or SASS: the CUPTI "
                "producer cannot share a process with the Compute Sanitizer, "
                "record the same command with `mprof record` for those\n",
                trace, kernels, kernels == 1 ? "" : "s", launches,
                launches == 1 ? "" : "es", spans, spans == 1 ? "" : "s",
                (double)mprof_trace_file_size(t) / 1e6);
      mprof_trace_free(t);
    }
  }
  unsigned long long overflow =
      meta_u64(&meta, "blocks.overflow") + meta_u64(&meta, "blocks.unread");
  if (overflow)
    fprintf(stderr,
            "mprof: warning: %llu blocks were not recorded because the "
            "device buffer of %s slots was full (DROPS span overflow): set "
            "MPROF_BLOCKS_CAPACITY higher or use --kernel\n",
            overflow,
            meta_get(&meta, "blocks.capacity")
                ? meta_get(&meta, "blocks.capacity")
                : "?");
  unsigned long long missing = meta_u64(&meta, "blocks.missing");
  if (missing)
    fprintf(stderr,
            "mprof: warning: %llu blocks of recorded launches have no entry "
            "or exit (their module was not patched, or the kernel "
            "trapped)\n",
            missing);
  unsigned long long failed = meta_u64(&meta, "blocks.modules_failed");
  if (failed)
    fprintf(stderr,
            "mprof: warning: %llu modules could not be patched (%s); their "
            "kernels have no block spans\n",
            failed,
            meta_get(&meta, "blocks.error") ? meta_get(&meta, "blocks.error")
                                            : "see MPROF_VERBOSE=1");
  if (memory.malformed)
    fprintf(stderr,
            "mprof: warning: %zu memory-access lines of %s could not be read "
            "and were left out\n",
            memory.malformed, meta_path);
  unsigned long long memory_outside = meta_u64(&meta, "blocks.memory_outside");
  unsigned long long memory_unkept = meta_u64(&meta, "blocks.memory_unkept");
  if (memory.count && !(flags & CLI_POST_QUIET))
    fprintf(stderr,
            "mprof: %zu instructions with global-memory accesses counted "
            "(--memory): 'mprof summary --kernel' and the Hotspots tab show "
            "them\n",
            memory.count);
  if (memory_unkept)
    fprintf(stderr,
            "mprof: warning: %llu warp accesses of instructions that found "
            "the memory table full were not kept: set "
            "MPROF_BLOCKS_MEMORY_ENTRIES higher (now %s)\n",
            memory_unkept,
            meta_get(&meta, "blocks.memory_entries")
                ? meta_get(&meta, "blocks.memory_entries")
                : "?");
  if (memory_outside && !(flags & CLI_POST_QUIET))
    fprintf(stderr,
            "mprof: %llu warp accesses were in functions the kernel called, "
            "not in the kernel itself, and are not shown per instruction\n",
            memory_outside);
  free(memory.records);
  free(memory.devices);
  free(fx.kernels);
  meta_free(&meta);
  return status;
}

int cli_blocks_finish(const char *pattern, time_t started, unsigned flags) {
  char globbed[PATH_MAX];
  cli_output_glob(globbed, sizeof globbed, pattern, ".source");
  glob_t g;
  memset(&g, 0, sizeof g);
  int found = 0, status = 0;
  if (glob(globbed, 0, NULL, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; i++) {
      struct stat st;
      if (stat(g.gl_pathv[i], &st) != 0 || !S_ISREG(st.st_mode) ||
          st.st_mtime < started)
        continue;
      found++;
      int rc = cli_blocks_finish_file(g.gl_pathv[i], flags);
      if (rc && !status)
        status = rc;
    }
  }
  globfree(&g);
  if (!found) {
    fprintf(stderr,
            "mprof record blocks: no block file was written to %s.source: the "
            "program launched no kernels, or the block producer could not "
            "start (MPROF_VERBOSE=1 shows its messages)\n",
            pattern);
    return CLI_EXIT_FAILED;
  }
  return status;
}
