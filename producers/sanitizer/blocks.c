/*
 * blocks.c — libmprof-blocks.so: a Compute Sanitizer API tool that records
 * when every thread block of every kernel ran, and on which SM, without
 * source changes.
 *
 * Loading: LD_PRELOAD (the tool subscribes from its constructor; what
 * `mprof record blocks` does), or CUDA_INJECTION64_PATH
 * (InitializeInjection). Not beside the CUPTI producer: on the H200
 * (driver 580) a CUPTI subscriber after it fails and the program crashes,
 * and with CUPTI subscribed first the tool gets no callbacks
 * (producers/sanitizer/README.md).
 *
 * Per context: the patch functions (blocks_patch.cu, a tools-patch fatbin
 * beside this library or at MPROF_BLOCKS_PATCH) are loaded, every module is
 * patched at BLOCK_ENTER / BLOCK_EXIT as it loads, and one device buffer of
 * MPROF_BLOCKS_CAPACITY slots (24 bytes each) is allocated and zeroed. Each
 * launch gets the next run of slots (a two-slot launch header, then one per
 * block) through sanitizerSetLaunchCallbackData (no per-launch copies, no
 * device-side slot allocation); a launch that does not fit is not recorded
 * and its blocks are counted as overflow. At exit (or when the context is
 * destroyed) the used slots are read back and written with the launches
 * (stream, dynamic shared memory, cluster) as a `.source` file, plus
 * `FILE.meta`, key and value per line, with what the producer counted.
 *
 * One process, one file, as the CUPTI producer does: MPROF_BLOCKS_OUTPUT is
 * a pattern (%p pid, %h host, %q{VAR} a variable, %% a percent sign); the
 * first process to launch a kernel claims the name (an exclusive create of
 * NAME.partial), a later one writes NAME with its pid before the extension,
 * and each reports "start" and "end" lines to MPROF_MANIFEST.
 *
 * With MPROF_BLOCKS_MEMORY=1 (`record blocks --memory`) every global-memory
 * access of the recorded launches is counted per instruction on the device
 * (blocks_patch.cu); the host hands each recorded launch its header (the
 * context's table, the kernel's first PC) with one small copy on the
 * launch's stream, and writes the table as "blocks.memory" lines.
 *
 * Environment: MPROF_BLOCKS_OUTPUT (required), MPROF_BLOCKS_CAPACITY
 * (slots per context, K/M/G suffixes, default 16M), MPROF_KERNEL_REGEX
 * (record only launches whose kernel name matches), MPROF_BLOCKS_MEMORY,
 * MPROF_BLOCKS_MEMORY_ENTRIES (instructions per context, default 16K),
 * MPROF_MANIFEST, MPROF_BLOCKS_PATCH, MPROF_VERBOSE=1.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <cuda.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sanitizer.h>

#include "blocks_file.h"
#include "config.h"

#define EXPORT __attribute__((visibility("default")))

typedef struct context_state {
  CUcontext context;
  CUdevice device;
  int ready;               /* patches loaded and buffer allocated */
  int failed;              /* setup failed: launches here are not recorded */
  void *slots;             /* device buffer */
  uint64_t used;           /* slots handed out */
  mprof_blocks_slot *host; /* read back at drain */
  void *memory;            /* --memory: the device table, or NULL */
  mprof_blocks_memory_entry *memory_host; /* read back at drain */
  int drained;
} context_state;

typedef struct launch_entry {
  mprof_blocks_launch launch;
  size_t context; /* index into contexts */
  uint64_t first; /* the launch header's slot, or UINT64_MAX: not recorded */
} launch_entry;

/* A stream a launch used: per device, numbered in order of first use, the
 * NULL (legacy default) stream 0. */
typedef struct stream_entry {
  CUdevice device;
  CUstream stream;
  uint32_t number;
} stream_entry;

static struct {
  pthread_mutex_t lock;
  int started;
  int finished;
  Sanitizer_SubscriberHandle subscriber;
  char output[PATH_MAX]; /* after the claim: this process's file */
  int output_has_pid;    /* the pattern holds %p */
  int claimed;           /* 1 claimed, -1 could not: nothing is written */
  char manifest[PATH_MAX];
  char patch[PATH_MAX];
  int memory;              /* MPROF_BLOCKS_MEMORY: count memory accesses */
  uint32_t memory_entries; /* per context, a power of two */
  uint64_t *function_pc;   /* per kernel: first instruction, 0 unknown */
  uint64_t *function_size; /* per kernel: bytes, 0 unknown */
  stream_entry *streams;
  size_t stream_count, stream_cap;
  uint64_t capacity;
  int verbose;
  int have_regex;
  regex_t regex;
  context_state *contexts;
  size_t context_count, context_cap;
  launch_entry *launches;
  size_t launch_count, launch_cap;
  char **kernels;
  CUfunction *functions; /* one per kernel name, for its attributes */
  CUmodule *modules;     /* ... and its module, for its first PC */
  size_t kernel_count, kernel_cap;
  size_t last_kernel;
  uint64_t overflow;
  uint64_t launches_filtered;
  uint64_t modules_patched, modules_failed;
  uint64_t callback_ns; /* host time in launch callbacks */
  uint64_t callback_launches;
  char first_error[256];
  uint64_t errors;
  int atexit_registered;
} g = {.lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP};

static void say(const char *fmt, ...) {
  if (!g.verbose)
    return;
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "mprof-blocks: ");
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

static void note_error(const char *what, SanitizerResult r) {
  const char *text = NULL;
  if (sanitizerGetResultString(r, &text) != SANITIZER_SUCCESS || !text)
    text = "unknown";
  if (!g.errors++)
    snprintf(g.first_error, sizeof g.first_error, "%s: %s (%d)", what, text,
             (int)r);
  say("%s failed: %s (%d)", what, text, (int)r);
}

static uint64_t now_ns(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int parse_size(const char *s, uint64_t *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s)
    return -1;
  unsigned long long mul = 1;
  if (*end == 'K' || *end == 'k')
    mul = 1ull << 10, end++;
  else if (*end == 'M' || *end == 'm')
    mul = 1ull << 20, end++;
  else if (*end == 'G' || *end == 'g')
    mul = 1ull << 30, end++;
  if (*end || v == 0 || v > UINT64_MAX / mul)
    return -1;
  *out = v * mul;
  return 0;
}

static const char *process_env(void *userdata, const char *name) {
  (void)userdata;
  return getenv(name);
}

/* MPROF_BLOCKS_OUTPUT expanded: %p, %h, %q{VAR}, %% (config.c). */
static int expand_output(const char *pattern) {
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  host[sizeof host - 1] = '\0';
  g.output_has_pid = strstr(pattern, "%p") != NULL;
  return mprof_cupti_expand_output(g.output, sizeof g.output, pattern,
                                   (long)getpid(), host, process_env, NULL);
}

/* "NAME.source" with the pid before NAME's extension:
 * run/trace.mprof.source → run/trace.4242.mprof.source. */
static int pid_output(char *dst, size_t size, const char *path) {
  static const char suffix[] = ".source";
  size_t len = strlen(path), n = sizeof suffix - 1;
  char stem[PATH_MAX];
  int has_suffix = len > n && strcmp(path + len - n, suffix) == 0;
  if (len >= sizeof stem)
    return -1;
  memcpy(stem, path, len + 1);
  if (has_suffix)
    stem[len - n] = '\0';
  char with_pid[PATH_MAX];
  if (mprof_cupti_pid_path(with_pid, sizeof with_pid, stem, (long)getpid()))
    return -1;
  int w = snprintf(dst, size, "%s%s", with_pid, has_suffix ? suffix : "");
  return w > 0 && (size_t)w < size ? 0 : -1;
}

static int claim_name(const char *path) {
  char partial[PATH_MAX + 16];
  snprintf(partial, sizeof partial, "%s.partial", path);
  int fd = open(partial, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    return -1;
  close(fd);
  return 0;
}

static void manifest(const char *word, long value) {
  char line[PATH_MAX + 64];
  if (mprof_cupti_manifest_format(line, sizeof line, word, (long)getpid(),
                                  value, g.output))
    mprof_cupti_manifest_line(g.manifest, line);
}

/* Claim this process's file at its first launch, so that a process that
 * launches nothing (a compiler a framework spawned) takes no name: the
 * name itself, else NAME.PID; a name with the pid already in it that is
 * taken is a leftover of an earlier process of the same pid. */
static void claim_output(void) {
  if (g.claimed)
    return;
  /* Taken now (NAME.partial), or written by an earlier process of the run
   * (the manifest names it). */
  int taken = mprof_cupti_manifest_names(g.manifest, g.output) ||
              (claim_name(g.output) != 0 && errno == EEXIST);
  if (taken) {
    char other[PATH_MAX];
    if (!g.output_has_pid && pid_output(other, sizeof other, g.output) == 0) {
      snprintf(g.output, sizeof g.output, "%s", other);
      if (claim_name(g.output) != 0 && errno != EEXIST) {
        fprintf(stderr, "mprof-blocks: cannot create %s.partial: %s\n",
                g.output, strerror(errno));
        g.claimed = -1;
        return;
      }
    }
  }
  g.claimed = 1;
  manifest("start", (long)getppid());
  say("writing %s", g.output);
}

/* The patch fatbin: MPROF_BLOCKS_PATCH, else beside this library. */
static void find_patch(void) {
  const char *env = getenv("MPROF_BLOCKS_PATCH");
  if (env && *env) {
    snprintf(g.patch, sizeof g.patch, "%s", env);
    return;
  }
  Dl_info info;
  if (dladdr((void *)find_patch, &info) && info.dli_fname) {
    snprintf(g.patch, sizeof g.patch, "%s", info.dli_fname);
    char *slash = strrchr(g.patch, '/');
    if (slash) {
      slash[1] = '\0';
      size_t len = strlen(g.patch);
      snprintf(g.patch + len, sizeof g.patch - len,
               "mprof-blocks-patch.fatbin");
      return;
    }
  }
  snprintf(g.patch, sizeof g.patch, "mprof-blocks-patch.fatbin");
}

static context_state *find_context(CUcontext context) {
  for (size_t i = 0; i < g.context_count; i++)
    if (g.contexts[i].context == context)
      return &g.contexts[i];
  return NULL;
}

static context_state *add_context(CUcontext context, CUdevice device) {
  context_state *c = find_context(context);
  if (c)
    return c;
  if (g.context_count == g.context_cap) {
    size_t cap = g.context_cap ? 2 * g.context_cap : 4;
    context_state *grown =
        (context_state *)realloc(g.contexts, cap * sizeof *grown);
    if (!grown)
      return NULL;
    g.contexts = grown;
    g.context_cap = cap;
  }
  c = &g.contexts[g.context_count++];
  memset(c, 0, sizeof *c);
  c->context = context;
  c->device = device;
  return c;
}

/* Load the patches and allocate the buffer, once per context. */
static void setup_context(context_state *c) {
  if (c->ready || c->failed)
    return;
  SanitizerResult r = sanitizerAddPatchesFromFile(g.patch, c->context);
  if (r != SANITIZER_SUCCESS) {
    note_error("sanitizerAddPatchesFromFile", r);
    fprintf(stderr,
            "mprof-blocks: cannot load the patch functions from %s; set "
            "MPROF_BLOCKS_PATCH or rebuild with 'mprof setup'\n",
            g.patch);
    c->failed = 1;
    return;
  }
  size_t bytes = (size_t)g.capacity * sizeof(mprof_blocks_slot);
  r = sanitizerAlloc(c->context, &c->slots, bytes);
  if (r != SANITIZER_SUCCESS) {
    note_error("sanitizerAlloc", r);
    fprintf(stderr,
            "mprof-blocks: cannot allocate %zu MiB for %llu block slots; "
            "set MPROF_BLOCKS_CAPACITY lower\n",
            bytes >> 20, (unsigned long long)g.capacity);
    c->failed = 1;
    return;
  }
  r = sanitizerMemset(c->slots, 0, bytes, NULL);
  if (r != SANITIZER_SUCCESS) {
    note_error("sanitizerMemset", r);
    c->failed = 1;
    return;
  }
  if (g.memory) {
    /* The entries and one spare that counts what did not fit. */
    size_t table =
        ((size_t)g.memory_entries + 1) * sizeof(mprof_blocks_memory_entry);
    r = sanitizerAlloc(c->context, &c->memory, table);
    if (r == SANITIZER_SUCCESS)
      r = sanitizerMemset(c->memory, 0, table, NULL);
    if (r != SANITIZER_SUCCESS) {
      note_error("allocating the memory-access table", r);
      c->memory = NULL; /* blocks are still recorded */
    }
  }
#ifdef MPROF_BLOCKS_DIAGNOSE
  if (g.verbose) {
    uint64_t pc = 0, size = 0;
    r = sanitizerGetCallbackPcAndSize(c->context, "mprof_block_enter", &pc,
                                      &size);
    say("patch mprof_block_enter: result %d, pc 0x%llx, %llu bytes", (int)r,
        (unsigned long long)pc, (unsigned long long)size);
  }
#endif
  c->ready = 1;
  say("context %p: %llu slots (%zu MiB), patches from %s", (void *)c->context,
      (unsigned long long)g.capacity, bytes >> 20, g.patch);
}

/* Mark the module's block entries and exits and patch it, once. With lazy
 * loading (CUDA 12.2+'s default) the module arrives without its functions;
 * the sanitizer patches them as they load. Seen on the H200 (driver 580):
 * running this sequence again at FUNCTIONS_LAZY_LOADED leaves the loaded
 * functions unpatched, so it must not be repeated. */
static void patch_module(CUcontext context, CUmodule module) {
  context_state *c = add_context(context, 0);
  if (!c)
    return;
  setup_context(c);
  if (!c->ready) {
    g.modules_failed++;
    return;
  }
  SanitizerResult r = sanitizerPatchInstructions(
      SANITIZER_INSTRUCTION_BLOCK_ENTER, module, "mprof_block_enter");
  if (r == SANITIZER_SUCCESS)
    r = sanitizerPatchInstructions(SANITIZER_INSTRUCTION_BLOCK_EXIT, module,
                                   "mprof_block_exit");
  if (r == SANITIZER_SUCCESS && g.memory)
    r = sanitizerPatchInstructions(SANITIZER_INSTRUCTION_GLOBAL_MEMORY_ACCESS,
                                   module, "mprof_memory_access");
  if (r == SANITIZER_SUCCESS)
    r = sanitizerPatchModule(module);
  if (r != SANITIZER_SUCCESS) {
    note_error("patching a module", r);
    g.modules_failed++;
    return;
  }
  g.modules_patched++;
}

static uint32_t kernel_id(const char *name, CUfunction function,
                          CUmodule module) {
  if (!name)
    name = "";
  if (g.last_kernel < g.kernel_count &&
      strcmp(g.kernels[g.last_kernel], name) == 0)
    return (uint32_t)g.last_kernel;
  for (size_t i = 0; i < g.kernel_count; i++)
    if (strcmp(g.kernels[i], name) == 0)
      return (uint32_t)(g.last_kernel = i);
  if (g.kernel_count == g.kernel_cap) {
    size_t cap = g.kernel_cap ? 2 * g.kernel_cap : 64;
    char **grown = (char **)realloc(g.kernels, cap * sizeof *grown);
    if (grown)
      g.kernels = grown;
    CUfunction *fns =
        (CUfunction *)realloc(g.functions, cap * sizeof *g.functions);
    if (fns)
      g.functions = fns;
    CUmodule *mods = (CUmodule *)realloc(g.modules, cap * sizeof *g.modules);
    if (mods)
      g.modules = mods;
    uint64_t *pcs =
        (uint64_t *)realloc(g.function_pc, cap * sizeof *g.function_pc);
    if (pcs)
      g.function_pc = pcs;
    uint64_t *sizes =
        (uint64_t *)realloc(g.function_size, cap * sizeof *g.function_size);
    if (sizes)
      g.function_size = sizes;
    if (!grown || !fns || !mods || !pcs || !sizes)
      return UINT32_MAX;
    g.kernel_cap = cap;
  }
  char *copy = strdup(name);
  if (!copy)
    return UINT32_MAX;
  g.kernels[g.kernel_count] = copy;
  g.functions[g.kernel_count] = function;
  g.modules[g.kernel_count] = module;
  g.function_pc[g.kernel_count] = 0;
  g.function_size[g.kernel_count] = 0;
  return (uint32_t)(g.last_kernel = g.kernel_count++);
}

/* The launch's stream number on its device (stream_entry). */
static uint32_t stream_number(CUdevice device, CUstream stream) {
  if (stream == NULL || stream == CU_STREAM_LEGACY)
    return 0;
  uint32_t used = 0;
  for (size_t i = 0; i < g.stream_count; i++)
    if (g.streams[i].device == device) {
      if (g.streams[i].stream == stream)
        return g.streams[i].number;
      used++;
    }
  if (g.stream_count == g.stream_cap) {
    size_t cap = g.stream_cap ? 2 * g.stream_cap : 16;
    stream_entry *grown =
        (stream_entry *)realloc(g.streams, cap * sizeof *grown);
    if (!grown)
      return UINT32_MAX;
    g.streams = grown;
    g.stream_cap = cap;
  }
  stream_entry *e = &g.streams[g.stream_count++];
  e->device = device;
  e->stream = stream;
  e->number = used + 1;
  return e->number;
}

/* --memory: hand the launch its header (the table, the kernel and its
 * first PC) with one copy on its stream, ahead of the kernel. */
static void send_memory_header(const Sanitizer_LaunchData *d,
                               const context_state *c, uint32_t kernel,
                               void *header) {
  if (!g.function_pc[kernel]) {
    uint64_t pc = 0, size = 0;
    SanitizerResult r =
        sanitizerGetFunctionPcAndSize(d->module, d->functionName, &pc, &size);
    if (r == SANITIZER_SUCCESS) {
      g.function_pc[kernel] = pc;
      g.function_size[kernel] = size;
    } else {
      note_error("sanitizerGetFunctionPcAndSize", r);
    }
  }
  mprof_blocks_header h;
  memset(&h, 0, sizeof h);
  h.memory = (uint64_t)(uintptr_t)c->memory;
  h.function_pc = g.function_pc[kernel];
  h.kernel = kernel;
  h.memory_entries = g.memory_entries;
  SanitizerResult r =
      sanitizerMemcpyHostToDeviceAsync(header, &h, sizeof h, d->hStream);
  if (r != SANITIZER_SUCCESS)
    note_error("sanitizerMemcpyHostToDeviceAsync (memory header)", r);
}

static void drain_all(void);

static void at_exit(void) { drain_all(); }

static void launch_begin(const Sanitizer_LaunchData *d) {
  uint64_t t0 = now_ns(CLOCK_MONOTONIC);
  uint64_t host_ns = now_ns(CLOCK_REALTIME);
  if (!g.atexit_registered) {
    /* After the CUDA runtime registered its own handler, so ours runs
     * first, while the context still exists. */
    g.atexit_registered = 1;
    atexit(at_exit);
  }
  const void *userdata = NULL;
  if (g.have_regex && regexec(&g.regex, d->functionName ? d->functionName : "",
                              0, NULL, 0) != 0) {
    g.launches_filtered++;
  } else if (!g.finished) {
    claim_output();
    uint32_t kernel = kernel_id(d->functionName, d->function, d->module);
    context_state *c = add_context(d->context, d->device);
    if (c)
      setup_context(c);
    if (g.launch_count == g.launch_cap) {
      size_t cap = g.launch_cap ? 2 * g.launch_cap : 1024;
      launch_entry *grown =
          (launch_entry *)realloc(g.launches, cap * sizeof *grown);
      if (grown) {
        g.launches = grown;
        g.launch_cap = cap;
      }
    }
    if (kernel != UINT32_MAX && c && g.launch_count < g.launch_cap) {
      launch_entry *e = &g.launches[g.launch_count++];
      memset(e, 0, sizeof *e);
      e->launch.kernel = kernel;
      e->launch.device = (uint32_t)d->device;
      e->launch.grid[0] = d->gridDim_x;
      e->launch.grid[1] = d->gridDim_y;
      e->launch.grid[2] = d->gridDim_z;
      e->launch.block[0] = d->blockDim_x;
      e->launch.block[1] = d->blockDim_y;
      e->launch.block[2] = d->blockDim_z;
      /* 1x1x1 is no cluster: zeros, as CUPTI records a launch without. */
      if (d->clusterDim_x * d->clusterDim_y * d->clusterDim_z > 1) {
        e->launch.cluster[0] = d->clusterDim_x;
        e->launch.cluster[1] = d->clusterDim_y;
        e->launch.cluster[2] = d->clusterDim_z;
      }
      e->launch.stream = stream_number(d->device, d->stream);
      e->launch.host_ns = host_ns;
      e->context = (size_t)(c - g.contexts);
      e->first = UINT64_MAX;
      uint64_t n = mprof_blocks_grid_size(e->launch.grid);
      uint64_t need = n + MPROF_BLOCKS_HEADER_SLOTS;
      if (c->ready && !c->drained && need <= g.capacity - c->used) {
        e->first = c->used;
        c->used += need;
        void *header = (char *)c->slots + e->first * sizeof(mprof_blocks_slot);
        userdata = header;
        if (c->memory)
          send_memory_header(d, c, kernel, header);
      } else {
        g.overflow += n;
      }
    }
  }
  SanitizerResult r = sanitizerSetLaunchCallbackData(d->hLaunch, d->function,
                                                     d->hStream, userdata);
  if (r != SANITIZER_SUCCESS)
    note_error("sanitizerSetLaunchCallbackData", r);
#ifdef MPROF_BLOCKS_DIAGNOSE
  if (g.verbose && g.callback_launches < 4) {
    Sanitizer_FunctionLoadedStatus status = SANITIZER_FUNCTION_NOT_LOADED;
    SanitizerResult sr = sanitizerGetFunctionLoadedStatus(d->function, &status);
    say("launch %s: grid %ux%ux%u, userdata %p, function loaded %d (%d)",
        d->functionName ? d->functionName : "?", d->gridDim_x, d->gridDim_y,
        d->gridDim_z, userdata, (int)status, (int)sr);
  }
#endif
  g.callback_ns += now_ns(CLOCK_MONOTONIC) - t0;
  g.callback_launches++;
}

/* Read back one context's used slots (all its work finished first). */
static void drain_context(context_state *c, int synchronize) {
  if (!c->ready || c->drained)
    return;
  c->drained = 1;
  if (!c->used)
    return;
  if (synchronize) {
    /* Outside any callback: wait for every stream of the context. */
    if (cuCtxPushCurrent(c->context) == CUDA_SUCCESS) {
      CUresult cr = cuCtxSynchronize();
      if (cr != CUDA_SUCCESS)
        say("cuCtxSynchronize failed (%d)", (int)cr);
      CUcontext popped;
      cuCtxPopCurrent(&popped);
    }
  }
  size_t bytes = (size_t)c->used * sizeof(mprof_blocks_slot);
  c->host = (mprof_blocks_slot *)malloc(bytes);
  if (!c->host) {
    fprintf(stderr, "mprof-blocks: out of memory reading %zu MiB of slots\n",
            bytes >> 20);
    return;
  }
  SanitizerResult r =
      sanitizerMemcpyDeviceToHost(c->host, c->slots, bytes, NULL);
  if (r != SANITIZER_SUCCESS) {
    note_error("sanitizerMemcpyDeviceToHost", r);
    free(c->host);
    c->host = NULL;
  }
  if (c->memory) {
    size_t table =
        ((size_t)g.memory_entries + 1) * sizeof(mprof_blocks_memory_entry);
    c->memory_host = (mprof_blocks_memory_entry *)malloc(table);
    r = c->memory_host ? sanitizerMemcpyDeviceToHost(c->memory_host, c->memory,
                                                     table, NULL)
                       : SANITIZER_ERROR_OUT_OF_MEMORY;
    if (r != SANITIZER_SUCCESS) {
      note_error("reading the memory-access table", r);
      free(c->memory_host);
      c->memory_host = NULL;
    }
  }
}

/* What the trace needs to judge occupancy, which a run without CUPTI can
 * only ask the driver: at exit, outside any callback, where driver calls
 * are allowed. "blocks.device.ORDINAL.FIELD" and "blocks.kernel.ID.FIELD"
 * lines; the CLI turns them into DEVICES and KERNELS fields. */
static void write_facts(FILE *f) {
  static const struct {
    const char *name;
    CUdevice_attribute attribute;
  } fields[] = {
      {"cc_major", CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR},
      {"cc_minor", CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR},
      {"sm_count", CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT},
      {"warp_size", CU_DEVICE_ATTRIBUTE_WARP_SIZE},
      {"max_threads_per_block", CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK},
      {"max_threads_per_sm",
       CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR},
      {"max_blocks_per_sm", CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR},
      {"max_regs_per_block", CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK},
      {"max_regs_per_sm", CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR},
      {"max_shared_per_block",
       CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN},
      {"max_shared_per_sm",
       CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR},
      {"core_clock_khz", CU_DEVICE_ATTRIBUTE_CLOCK_RATE},
      {"memory_clock_khz", CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE},
      {"memory_bus_width", CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH},
      {"l2_size", CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE},
  };
  for (size_t c = 0; c < g.context_count; c++) {
    CUdevice dev = g.contexts[c].device;
    int seen = 0;
    for (size_t e = 0; e < c; e++)
      seen |= g.contexts[e].device == dev;
    if (seen)
      continue;
    char name[256];
    if (cuDeviceGetName(name, sizeof name, dev) == CUDA_SUCCESS)
      fprintf(f, "blocks.device.%d.name %s\n", (int)dev, name);
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
      int value = 0;
      if (cuDeviceGetAttribute(&value, fields[i].attribute, dev) ==
          CUDA_SUCCESS)
        fprintf(f, "blocks.device.%d.%s %d\n", (int)dev, fields[i].name, value);
    }
    size_t bytes = 0;
    if (cuDeviceTotalMem(&bytes, dev) == CUDA_SUCCESS)
      fprintf(f, "blocks.device.%d.global_memory %zu\n", (int)dev, bytes);
  }
  for (size_t k = 0; k < g.kernel_count; k++) {
    int regs = 0, shared = 0, local = 0;
    if (!g.functions[k] || cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS,
                                              g.functions[k]) != CUDA_SUCCESS)
      continue;
    cuFuncGetAttribute(&shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                       g.functions[k]);
    cuFuncGetAttribute(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES,
                       g.functions[k]);
    fprintf(f, "blocks.kernel.%zu.registers %d\n", k, regs);
    fprintf(f, "blocks.kernel.%zu.static_shared %d\n", k, shared);
    fprintf(f, "blocks.kernel.%zu.local_per_thread %d\n", k, local);
  }
}

static void write_meta(const mprof_blocks_counts *counts, uint64_t lost) {
  char path[PATH_MAX + 8];
  snprintf(path, sizeof path, "%s.meta", g.output);
  FILE *f = fopen(path, "w");
  if (!f)
    return;
  fprintf(f, "blocks.producer compute-sanitizer\n");
  /* Who wrote it, as the CUPTI producer says it: a block trace and a
   * `record` trace of the same command open together as one run. */
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  host[sizeof host - 1] = '\0';
  fprintf(f, "pid %ld\nppid %ld\nhost %s\n", (long)getpid(), (long)getppid(),
          host);
  fprintf(f, "blocks.patch %s\n", g.patch);
  fprintf(f, "blocks.launches %zu\n", g.launch_count);
  fprintf(f, "blocks.launches_recorded %llu\n",
          (unsigned long long)counts->launches_recorded);
  fprintf(f, "blocks.launches_filtered %llu\n",
          (unsigned long long)g.launches_filtered);
  fprintf(f, "blocks.blocks %llu\n", (unsigned long long)counts->blocks);
  fprintf(f, "blocks.missing %llu\n", (unsigned long long)counts->missing);
  fprintf(f, "blocks.sm_changed %llu\n",
          (unsigned long long)counts->sm_changed);
  fprintf(f, "blocks.overflow %llu\n", (unsigned long long)g.overflow);
  fprintf(f, "blocks.unread %llu\n", (unsigned long long)lost);
  fprintf(f, "blocks.capacity %llu\n", (unsigned long long)g.capacity);
  fprintf(f, "blocks.modules_patched %llu\n",
          (unsigned long long)g.modules_patched);
  fprintf(f, "blocks.modules_failed %llu\n",
          (unsigned long long)g.modules_failed);
  if (g.callback_launches)
    fprintf(f, "blocks.launch_callback_ns %llu\n",
            (unsigned long long)(g.callback_ns / g.callback_launches));
  write_facts(f);
  if (g.memory) {
    uint64_t outside = 0, unkept = 0;
    size_t lines = 0;
    for (size_t i = 0; i < g.context_count; i++)
      if (g.contexts[i].memory_host)
        lines += mprof_blocks_write_memory(f, (uint32_t)g.contexts[i].device,
                                           g.contexts[i].memory_host,
                                           g.memory_entries, g.function_size,
                                           g.kernel_count, &outside, &unkept);
    fprintf(f, "blocks.memory_entries %u\n", g.memory_entries);
    fprintf(f, "blocks.memory_instructions %zu\n", lines);
    fprintf(f, "blocks.memory_outside %llu\n", (unsigned long long)outside);
    fprintf(f, "blocks.memory_unkept %llu\n", (unsigned long long)unkept);
  }
  fprintf(f, "blocks.errors %llu\n", (unsigned long long)g.errors);
  if (g.errors)
    fprintf(f, "blocks.error %s\n", g.first_error);
  fclose(f);
}

static void drain_all(void) {
  pthread_mutex_lock(&g.lock);
  if (!g.started || g.finished) {
    pthread_mutex_unlock(&g.lock);
    return;
  }
  g.finished = 1;
  if (!g.launch_count && !g.launches_filtered) {
    /* A process that launched nothing (a compiler a framework spawned,
     * say) claimed no name and writes nothing. */
    pthread_mutex_unlock(&g.lock);
    return;
  }
  claim_output(); /* a process whose launches were all filtered out */
  if (g.claimed < 0) {
    pthread_mutex_unlock(&g.lock);
    return;
  }
  for (size_t i = 0; i < g.context_count; i++)
    drain_context(&g.contexts[i], 1);
  /* Launches whose slots could not be read are counted, not dropped
   * silently: "unread" blocks. */
  uint64_t unread = 0;
  for (size_t i = 0; i < g.launch_count; i++) {
    launch_entry *e = &g.launches[i];
    context_state *c = &g.contexts[e->context];
    if (e->first == UINT64_MAX)
      continue;
    if (c->host) {
      const mprof_blocks_header *h =
          (const mprof_blocks_header *)(c->host + e->first);
      e->launch.slots = c->host + e->first + MPROF_BLOCKS_HEADER_SLOTS;
      if (h->dynamic_shared & MPROF_BLOCKS_WRITTEN) {
        e->launch.dynamic_shared = (uint32_t)h->dynamic_shared;
        e->launch.has_dynamic_shared = 1;
      }
    } else {
      unread += mprof_blocks_grid_size(e->launch.grid);
    }
  }
  mprof_blocks_launch *list =
      (mprof_blocks_launch *)malloc((g.launch_count + 1) * sizeof *list);
  mprof_blocks_counts counts;
  memset(&counts, 0, sizeof counts);
  int failed = 0;
  if (list) {
    for (size_t i = 0; i < g.launch_count; i++)
      list[i] = g.launches[i].launch;
    if (mprof_blocks_write_source(
            g.output, (const char *const *)g.kernels, g.kernel_count, list,
            g.launch_count, g.overflow + unread, g.capacity, &counts) != 0) {
      fprintf(stderr, "mprof-blocks: cannot write %s: %s\n", g.output,
              strerror(errno));
      failed = 1;
    }
    free(list);
  } else {
    failed = 1;
  }
  write_meta(&counts, unread);
  manifest("end", failed);
  say("%s: %zu launches, %llu blocks, %llu overflowed, %llu missing", g.output,
      g.launch_count, (unsigned long long)counts.blocks,
      (unsigned long long)g.overflow, (unsigned long long)counts.missing);
  pthread_mutex_unlock(&g.lock);
}

static void callback(void *userdata, Sanitizer_CallbackDomain domain,
                     Sanitizer_CallbackId cbid, const void *cbdata) {
  (void)userdata;
  pthread_mutex_lock(&g.lock);
  if (domain == SANITIZER_CB_DOMAIN_RESOURCE) {
    switch (cbid) {
    case SANITIZER_CBID_RESOURCE_CONTEXT_CREATION_FINISHED: {
      const Sanitizer_ResourceContextData *d =
          (const Sanitizer_ResourceContextData *)cbdata;
      add_context(d->context, d->device);
      break;
    }
    case SANITIZER_CBID_RESOURCE_MODULE_LOADED: {
      const Sanitizer_ResourceModuleData *d =
          (const Sanitizer_ResourceModuleData *)cbdata;
      if (!g.finished)
        patch_module(d->context, d->module);
      break;
    }
    case SANITIZER_CBID_RESOURCE_CONTEXT_DESTROY_STARTING: {
      const Sanitizer_ResourceContextData *d =
          (const Sanitizer_ResourceContextData *)cbdata;
      context_state *c = find_context(d->context);
      if (c && !g.finished)
        drain_context(c, 0); /* the driver synchronises before destroying */
      break;
    }
    default: break;
    }
  } else if (domain == SANITIZER_CB_DOMAIN_LAUNCH &&
             cbid == SANITIZER_CBID_LAUNCH_BEGIN) {
    launch_begin((const Sanitizer_LaunchData *)cbdata);
  }
  pthread_mutex_unlock(&g.lock);
}

/* Subscribe once; 0 on success. */
static int start(const char *how) {
  pthread_mutex_lock(&g.lock);
  if (g.started) {
    pthread_mutex_unlock(&g.lock);
    return 0;
  }
  const char *output = getenv("MPROF_BLOCKS_OUTPUT");
  if (!output || !*output) {
    pthread_mutex_unlock(&g.lock);
    return -1;
  }
  const char *verbose = getenv("MPROF_VERBOSE");
  g.verbose = verbose && *verbose && strcmp(verbose, "0") != 0;
  if (expand_output(output) != 0) {
    fprintf(stderr,
            "mprof-blocks: MPROF_BLOCKS_OUTPUT='%s' is too long or names a "
            "variable that holds a '/'; no block timeline is recorded\n",
            output);
    pthread_mutex_unlock(&g.lock);
    return -1;
  }
  const char *list = getenv("MPROF_MANIFEST");
  if (list && *list)
    snprintf(g.manifest, sizeof g.manifest, "%s", list);
  const char *memory = getenv("MPROF_BLOCKS_MEMORY");
  g.memory = memory && *memory && strcmp(memory, "0") != 0;
  g.memory_entries = 16384;
  const char *entries = getenv("MPROF_BLOCKS_MEMORY_ENTRIES");
  uint64_t want = 0;
  if (entries && *entries) {
    if (parse_size(entries, &want) == 0 && want <= (1u << 24)) {
      g.memory_entries = 1;
      while (g.memory_entries < want)
        g.memory_entries <<= 1;
    } else {
      fprintf(stderr,
              "mprof-blocks: MPROF_BLOCKS_MEMORY_ENTRIES='%s' is not a count "
              "up to 16M; using 16K\n",
              entries);
    }
  }
  find_patch();
  g.capacity = 16ull << 20;
  const char *cap = getenv("MPROF_BLOCKS_CAPACITY");
  if (cap && *cap && parse_size(cap, &g.capacity) != 0) {
    fprintf(stderr,
            "mprof-blocks: MPROF_BLOCKS_CAPACITY='%s' is not a count of "
            "block slots (e.g. 4M); using 16M\n",
            cap);
    g.capacity = 16ull << 20;
  }
  const char *re = getenv("MPROF_KERNEL_REGEX");
  if (re && *re) {
    if (regcomp(&g.regex, re, REG_EXTENDED | REG_NOSUB) == 0)
      g.have_regex = 1;
    else
      fprintf(stderr,
              "mprof-blocks: MPROF_KERNEL_REGEX='%s' is not an extended "
              "regular expression; recording every kernel\n",
              re);
  }
  SanitizerResult r = sanitizerSubscribe(&g.subscriber, callback, NULL);
  if (r != SANITIZER_SUCCESS) {
    note_error("sanitizerSubscribe", r);
    fprintf(stderr,
            "mprof-blocks: sanitizerSubscribe failed (%s); no block "
            "timeline is recorded\n",
            g.first_error);
    g.finished = 1;
    g.started = 1;
    pthread_mutex_unlock(&g.lock);
    return -1;
  }
  sanitizerEnableDomain(1, g.subscriber, SANITIZER_CB_DOMAIN_RESOURCE);
  sanitizerEnableDomain(1, g.subscriber, SANITIZER_CB_DOMAIN_LAUNCH);
  g.started = 1;
  say("subscribed (%s), output %s%s", how, g.output,
      g.memory ? ", counting memory accesses" : "");
  pthread_mutex_unlock(&g.lock);
  return 0;
}

__attribute__((constructor)) static void on_load(void) {
  /* Under CUDA_INJECTION64_PATH the driver calls InitializeInjection;
   * under LD_PRELOAD nothing does, so subscribe now. */
  const char *inject = getenv("CUDA_INJECTION64_PATH");
  Dl_info info;
  if (inject && dladdr((void *)on_load, &info) && info.dli_fname &&
      strcmp(inject, info.dli_fname) == 0)
    return;
  start("constructor");
}

EXPORT int InitializeInjection(void) {
  start("injection");
  return 1;
}
