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
 * launch gets the next grid-size run of slots through
 * sanitizerSetLaunchCallbackData (no per-launch copies, no device-side slot
 * allocation); a launch that does not fit is not recorded and its blocks
 * are counted as overflow. At exit (or when the context is destroyed) the
 * used slots are read back and written with the launches as a `.source`
 * file (MPROF_BLOCKS_OUTPUT; %p pid, %h host), plus `FILE.meta`, key and
 * value per line, with what the producer counted.
 *
 * Environment: MPROF_BLOCKS_OUTPUT (required), MPROF_BLOCKS_CAPACITY
 * (slots per context, K/M/G suffixes, default 16M), MPROF_KERNEL_REGEX
 * (record only launches whose kernel name matches), MPROF_BLOCKS_PATCH,
 * MPROF_VERBOSE=1.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <errno.h>
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

#define EXPORT __attribute__((visibility("default")))

typedef struct context_state {
  CUcontext context;
  CUdevice device;
  int ready;               /* patches loaded and buffer allocated */
  int failed;              /* setup failed: launches here are not recorded */
  void *slots;             /* device buffer */
  uint64_t used;           /* slots handed out */
  mprof_blocks_slot *host; /* read back at drain */
  int drained;
} context_state;

typedef struct launch_entry {
  mprof_blocks_launch launch;
  size_t context; /* index into contexts */
  uint64_t first; /* first slot, or UINT64_MAX when not recorded */
} launch_entry;

static struct {
  pthread_mutex_t lock;
  int started;
  int finished;
  Sanitizer_SubscriberHandle subscriber;
  char output[PATH_MAX];
  char patch[PATH_MAX];
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

/* %p → pid, %h → host name, %% → %. */
static void expand_output(const char *pattern) {
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  size_t n = 0;
  for (const char *p = pattern; *p && n + 1 < sizeof g.output; p++) {
    char piece[300];
    if (p[0] == '%' && p[1] == 'p') {
      snprintf(piece, sizeof piece, "%ld", (long)getpid());
      p++;
    } else if (p[0] == '%' && p[1] == 'h') {
      snprintf(piece, sizeof piece, "%s", host);
      p++;
    } else if (p[0] == '%' && p[1] == '%') {
      snprintf(piece, sizeof piece, "%%");
      p++;
    } else {
      piece[0] = *p;
      piece[1] = '\0';
    }
    size_t len = strlen(piece);
    if (n + len + 1 > sizeof g.output)
      break;
    memcpy(g.output + n, piece, len);
    n += len;
  }
  g.output[n] = '\0';
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
  if (r == SANITIZER_SUCCESS)
    r = sanitizerPatchModule(module);
  if (r != SANITIZER_SUCCESS) {
    note_error("patching a module", r);
    g.modules_failed++;
    return;
  }
  g.modules_patched++;
}

static uint32_t kernel_id(const char *name, CUfunction function) {
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
    if (!grown || !fns)
      return UINT32_MAX;
    g.kernel_cap = cap;
  }
  char *copy = strdup(name);
  if (!copy)
    return UINT32_MAX;
  g.kernels[g.kernel_count] = copy;
  g.functions[g.kernel_count] = function;
  return (uint32_t)(g.last_kernel = g.kernel_count++);
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
    uint32_t kernel = kernel_id(d->functionName, d->function);
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
      e->launch.host_ns = host_ns;
      e->context = (size_t)(c - g.contexts);
      e->first = UINT64_MAX;
      uint64_t n = mprof_blocks_grid_size(e->launch.grid);
      if (c->ready && !c->drained && n <= g.capacity - c->used) {
        e->first = c->used;
        c->used += n;
        userdata =
            (const char *)c->slots + e->first * sizeof(mprof_blocks_slot);
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
     * say) must not replace the file of the one that did. */
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
    if (c->host)
      e->launch.slots = c->host + e->first;
    else
      unread += mprof_blocks_grid_size(e->launch.grid);
  }
  mprof_blocks_launch *list =
      (mprof_blocks_launch *)malloc((g.launch_count + 1) * sizeof *list);
  mprof_blocks_counts counts;
  memset(&counts, 0, sizeof counts);
  if (list) {
    for (size_t i = 0; i < g.launch_count; i++)
      list[i] = g.launches[i].launch;
    if (mprof_blocks_write_source(
            g.output, (const char *const *)g.kernels, g.kernel_count, list,
            g.launch_count, g.overflow + unread, g.capacity, &counts) != 0)
      fprintf(stderr, "mprof-blocks: cannot write %s: %s\n", g.output,
              strerror(errno));
    free(list);
  }
  write_meta(&counts, unread);
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
  expand_output(output);
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
  say("subscribed (%s), writing %s", how, g.output);
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
