/*
 * mprof CUPTI producer — settings read from the environment.
 *
 * `mprof record` passes its options to the injected library through MPROF_*
 * environment variables (see README.md). Parsing is a pure function of a
 * lookup callback so the tests can feed it without touching the real
 * environment.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef MPROF_CUPTI_CONFIG_H
#define MPROF_CUPTI_CONFIG_H

#include <stddef.h>
#include <stdint.h>

/* Defaults; README.md explains the arithmetic behind them. */
#define MPROF_CUPTI_DEFAULT_OUTPUT "trace.mprof"
#define MPROF_CUPTI_DEFAULT_PC_PERIOD 14u
#define MPROF_CUPTI_MIN_PC_PERIOD 5u
#define MPROF_CUPTI_MAX_PC_PERIOD 31u
#define MPROF_CUPTI_DEFAULT_PC_HW_BUFFER (512ull << 20)
/* CUPTI's own minimum is unknown; below 1 MiB nothing useful fits. */
#define MPROF_CUPTI_MIN_PC_HW_BUFFER (1ull << 20)
/* How long the exit handler waits for work still running on the GPU. */
#define MPROF_CUPTI_DEFAULT_EXIT_WAIT_MS 5000u

/* PM sampling: every sample costs the decode thread about 100 us of host
 * time to evaluate (measured on the H200 with the default counters), so
 * 100 us is about what one thread sustains; a run of one kernel needs two
 * intervals to hold a whole sample. 1 us is the shortest interval Hopper
 * accepts. */
#define MPROF_CUPTI_DEFAULT_PM_INTERVAL_NS 100000ull
/* Repeats a turn of an alternating run without --range-count. */
#define MPROF_CUPTI_DEFAULT_ALTERNATE_EVERY 10u
#define MPROF_CUPTI_MIN_PM_INTERVAL_NS 1000ull
#define MPROF_CUPTI_MAX_PM_INTERVAL_NS 1000000000ull
#define MPROF_CUPTI_DEFAULT_PM_HW_BUFFER (256ull << 20)
/* How often the decode thread empties the hardware buffer, and how many
 * samples the host's counter-data image holds (about 29 KB a sample with
 * the five default counters on GH100). */
#define MPROF_CUPTI_DEFAULT_PM_DECODE_PERIOD_NS 10000000ull
#define MPROF_CUPTI_MIN_PM_DECODE_PERIOD_NS 1000000ull
#define MPROF_CUPTI_MAX_PM_DECODE_PERIOD_NS 1000000000ull
#define MPROF_CUPTI_DEFAULT_PM_COUNTER_SAMPLES 512u
#define MPROF_CUPTI_MIN_PM_COUNTER_SAMPLES 16u
#define MPROF_CUPTI_MAX_PM_COUNTER_SAMPLES 65536u

typedef enum mprof_cupti_pc_mode {
  MPROF_CUPTI_PC_OFF = 0,
  MPROF_CUPTI_PC_CONTINUOUS = 1,
  MPROF_CUPTI_PC_SERIALIZED = 2
} mprof_cupti_pc_mode;

#define MPROF_CUPTI_MAX_PROBLEMS 8
#define MPROF_CUPTI_PROBLEM_SIZE 256

typedef struct mprof_cupti_config {
  char output[4096]; /**< expanded MPROF_OUTPUT */
  mprof_cupti_pc_mode pc_mode;
  uint32_t pc_period;    /**< exponent N: one sample per SM every 2^N cycles */
  uint64_t pc_hw_buffer; /**< bytes of device memory for the sampler */
  char kernel_regex[1024]; /**< POSIX ERE; "" keeps every kernel */
  int keep_sass;           /**< 0 when MPROF_NO_SASS=1 */
  int whole_modules;       /**< MPROF_WHOLE_MODULES=1: no trimming */
  int api_calls;           /**< 0 when MPROF_NO_API_CALLS=1 */
  int pm_enabled;          /**< 1 when MPROF_PM=on or alternate */
  /** MPROF_PM=alternate: PC and PM sampling take turns between the repeats
   *  of the capture window, MPROF_ALTERNATE_EVERY repeats a turn (0: the
   *  producer's default) */
  int pm_alternate;
  uint64_t alternate_every;
  uint64_t pm_interval_ns;      /**< MPROF_PM_INTERVAL */
  uint64_t pm_hw_buffer;        /**< MPROF_PM_HW_BUFFER: device memory, bytes */
  uint64_t pm_decode_period_ns; /**< MPROF_PM_DECODE_PERIOD */
  uint32_t pm_counter_samples;  /**< MPROF_PM_COUNTER_SAMPLES */
  char pm_metrics[2048]; /**< MPROF_PM_METRICS: comma list; "" = default */
  int verbose;           /**< MPROF_VERBOSE=1 */
  char manifest[4096];   /**< MPROF_MANIFEST: where `mprof record` hears from
                            each process; "" when run without it */
  int output_has_pid;    /**< MPROF_OUTPUT holds %p: names never collide */
  unsigned exit_wait_ms; /**< MPROF_EXIT_WAIT_MS */
  /* The capture window (capture.h; all zero and "": the whole run). */
  char capture_range[800]; /**< MPROF_CAPTURE_RANGE, as given */
  uint64_t range_skip;     /**< MPROF_RANGE_SKIP */
  uint64_t range_count;    /**< MPROF_RANGE_COUNT; 0 every range */
  uint64_t kernel_skip;    /**< MPROF_KERNEL_SKIP */
  uint64_t kernel_count;   /**< MPROF_KERNEL_COUNT; 0 every launch */
  uint64_t delay_ns;       /**< MPROF_DELAY */
  uint64_t duration_ns;    /**< MPROF_DURATION; 0 no limit */
  uint64_t max_bytes;      /**< MPROF_MAX_SIZE; 0 no limit */
  /** Values that could not be used; each falls back to its default. */
  unsigned problem_count;
  char problems[MPROF_CUPTI_MAX_PROBLEMS][MPROF_CUPTI_PROBLEM_SIZE];
} mprof_cupti_config;

/** Returns the value of environment variable @p name, or NULL. */
typedef const char *(*mprof_cupti_env_fn)(void *userdata, const char *name);

/**
 * Fill @p cfg from the variables @p env returns. Bad values never fail: they
 * fall back to the default and are described in cfg->problems so the
 * producer can warn and record them in META. MPROF_OUTPUT is expanded with
 * mprof_cupti_expand_output().
 */
void mprof_cupti_config_load(mprof_cupti_config *cfg, mprof_cupti_env_fn env,
                             void *userdata, long pid, const char *host);

/** "continuous", "serialized" or "off". */
const char *mprof_cupti_pc_mode_name(mprof_cupti_pc_mode mode);

/**
 * Parse a byte count with an optional binary suffix (K, M, G, T; an optional
 * trailing "B" or "iB"). Returns 0 and sets *out, or -1 for anything else.
 */
int mprof_cupti_parse_bytes(const char *text, uint64_t *out);

/**
 * Parse a duration: a number with an optional unit ns, us, ms or s (bare
 * numbers are ns). Returns 0 and sets *out_ns, or -1 for anything else.
 */
int mprof_cupti_parse_duration(const char *text, uint64_t *out_ns);

/**
 * Expand %p (pid), %h (host), %q{VAR} (environment variable VAR through
 * @p env; unset is "") and %% in @p pattern into @p dst. Returns 0, or -1
 * when the result does not fit in @p size bytes or a variable's value holds
 * a '/'.
 */
int mprof_cupti_expand_output(char *dst, size_t size, const char *pattern,
                              long pid, const char *host,
                              mprof_cupti_env_fn env, void *userdata);

/* Naming and the manifest (also used by the block producer,
 * producers/sanitizer). */

/**
 * @p path with ".PID" before its extension ("run/trace.mprof" →
 * "run/trace.1234.mprof"; a name without an extension gets ".PID" at the
 * end). Returns 0, or -1 when it does not fit.
 */
int mprof_cupti_pid_path(char *dst, size_t size, const char *path, long pid);

/**
 * Append one line to the manifest (no-op when @p manifest is ""): a single
 * write(2) with O_APPEND, so lines of several processes never interleave.
 * Safe in a signal handler (no allocation, no stdio).
 */
void mprof_cupti_manifest_line(const char *manifest, const char *line);

/**
 * Format "WORD PID VALUE PATH\n" into @p dst without stdio (for signal
 * handlers). Returns the length, or 0 when it does not fit.
 */
size_t mprof_cupti_manifest_format(char *dst, size_t size, const char *word,
                                   long pid, long value, const char *path);

/**
 * Whether an earlier process of this run already wrote @p path: a "start"
 * line of @p manifest names it. The exclusive create of "NAME.partial"
 * only keeps processes that run at the same time apart; a process started
 * after another one finished (a launcher's workers, run one after the
 * other) finds NAME.partial gone and would replace NAME. Returns 0 when
 * @p manifest is "" or cannot be read.
 */
int mprof_cupti_manifest_names(const char *manifest, const char *path);

#endif /* MPROF_CUPTI_CONFIG_H */
