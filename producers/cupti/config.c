/*
 * mprof CUPTI producer — settings read from the environment.
 *
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L /* O_CLOEXEC */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static void problem(mprof_cupti_config *cfg, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void problem(mprof_cupti_config *cfg, const char *fmt, ...) {
  if (cfg->problem_count >= MPROF_CUPTI_MAX_PROBLEMS)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cfg->problems[cfg->problem_count], MPROF_CUPTI_PROBLEM_SIZE, fmt,
            ap);
  va_end(ap);
  cfg->problem_count++;
}

/* "1", "yes", "true", "on" turn a flag on; anything else leaves it off. */
static int flag_value(const char *text) {
  if (!text || !*text)
    return 0;
  return strcmp(text, "1") == 0 || strcasecmp(text, "yes") == 0 ||
         strcasecmp(text, "true") == 0 || strcasecmp(text, "on") == 0;
}

/* Text from variable @p name into @p out (@p size bytes) when set and
 * non-empty; text that does not fit is a problem, and *out stays as it was
 * (@p otherwise says what that means). */
static void string_value(mprof_cupti_config *cfg, const char *name,
                         const char *value, char *out, size_t size,
                         const char *otherwise) {
  if (!value || !*value)
    return;
  if (strlen(value) >= size)
    problem(cfg, "%s: longer than %zu bytes; %s", name, size - 1, otherwise);
  else
    snprintf(out, size, "%s", value);
}

/* A hardware buffer size from variable @p name (set, non-empty @p value):
 * at least 1M, else a problem is reported and *out keeps its default. */
static void buffer_value(mprof_cupti_config *cfg, const char *name,
                         const char *value, uint64_t *out) {
  uint64_t bytes = 0;
  if (mprof_cupti_parse_bytes(value, &bytes) != 0 ||
      bytes < MPROF_CUPTI_MIN_PC_HW_BUFFER)
    problem(cfg, "%s: '%.64s' is not a size of at least 1M; using %llu", name,
            value, (unsigned long long)*out);
  else
    *out = bytes;
}

/* A duration setting from @p min to @p max ns (@p range says it in words);
 * anything else keeps *@p out and is a problem. */
static void duration_value(mprof_cupti_config *cfg, const char *name,
                           const char *value, uint64_t min, uint64_t max,
                           const char *range, uint64_t *out) {
  if (!value || !*value)
    return;
  uint64_t ns = 0;
  if (mprof_cupti_parse_duration(value, &ns) != 0 || ns < min || ns > max)
    problem(cfg, "%s: '%.64s' is not a duration from %s; using %lluns", name,
            value, range, (unsigned long long)*out);
  else
    *out = ns;
}

/* A whole-number setting from @p min to @p max (@p what names it, e.g. "a
 * number"); anything else keeps *@p out and is a problem. */
static void integer_value(mprof_cupti_config *cfg, const char *name,
                          const char *value, long long min, long long max,
                          const char *what, uint64_t *out) {
  if (!value || !*value)
    return;
  char *end = NULL;
  errno = 0;
  long long n = strtoll(value, &end, 10);
  if (errno || end == value || *end || n < min || n > max)
    problem(cfg, "%s: '%.64s' is not %s in %lld..%lld; using %llu", name, value,
            what, min, max, (unsigned long long)*out);
  else
    *out = (uint64_t)n;
}

const char *mprof_cupti_pc_mode_name(mprof_cupti_pc_mode mode) {
  switch (mode) {
  case MPROF_CUPTI_PC_CONTINUOUS: return "continuous";
  case MPROF_CUPTI_PC_SERIALIZED: return "serialized";
  case MPROF_CUPTI_PC_OFF: return "off";
  }
  return "off";
}

int mprof_cupti_parse_bytes(const char *text, uint64_t *out) {
  if (!text)
    return -1;
  while (isspace((unsigned char)*text))
    text++;
  if (!isdigit((unsigned char)*text))
    return -1;
  errno = 0;
  char *end = NULL;
  unsigned long long value = strtoull(text, &end, 10);
  if (errno || end == text)
    return -1;
  unsigned shift = 0;
  switch (toupper((unsigned char)*end)) {
  case 'K':
    shift = 10;
    end++;
    break;
  case 'M':
    shift = 20;
    end++;
    break;
  case 'G':
    shift = 30;
    end++;
    break;
  case 'T':
    shift = 40;
    end++;
    break;
  default: break;
  }
  if (shift && (*end == 'i' || *end == 'I'))
    end++;
  if (*end == 'B' || *end == 'b')
    end++;
  while (isspace((unsigned char)*end))
    end++;
  if (*end)
    return -1;
  if (shift && value > (UINT64_MAX >> shift))
    return -1;
  *out = (uint64_t)value << shift;
  return 0;
}

int mprof_cupti_expand_output(char *dst, size_t size, const char *pattern,
                              long pid, const char *host,
                              mprof_cupti_env_fn env, void *userdata) {
  if (!dst || size == 0 || !pattern)
    return -1;
  size_t used = 0;
  for (const char *p = pattern; *p; p++) {
    char piece[128];
    const char *add = piece;
    if (p[0] == '%' && p[1] == 'p') {
      snprintf(piece, sizeof piece, "%ld", pid);
      p++;
    } else if (p[0] == '%' && p[1] == 'h') {
      add = host && *host ? host : "localhost";
      p++;
    } else if (p[0] == '%' && p[1] == 'q' && p[2] == '{' &&
               strchr(p + 3, '}')) {
      /* %q{VAR}: the variable's value; unset gives "" (the claim in
       * process.c still keeps two processes apart). */
      const char *close = strchr(p + 3, '}');
      size_t len = (size_t)(close - (p + 3));
      char name[128];
      if (len == 0 || len >= sizeof name)
        return -1;
      memcpy(name, p + 3, len);
      name[len] = '\0';
      const char *value = env ? env(userdata, name) : NULL;
      add = value ? value : "";
      /* A value never leaves the directory it was meant for. */
      if (strchr(add, '/'))
        return -1;
      p = close;
    } else if (p[0] == '%' && p[1] == '%') {
      piece[0] = '%';
      piece[1] = '\0';
      p++;
    } else {
      piece[0] = *p;
      piece[1] = '\0';
    }
    size_t len = strlen(add);
    if (used + len + 1 > size)
      return -1;
    memcpy(dst + used, add, len);
    used += len;
  }
  dst[used] = '\0';
  return 0;
}

int mprof_cupti_parse_duration(const char *text, uint64_t *out_ns) {
  if (!text || !*text)
    return -1;
  char *end = NULL;
  errno = 0;
  double value = strtod(text, &end);
  if (errno || end == text || !(value >= 0) || value > 1e12)
    return -1;
  if (strcmp(end, "s") == 0 && value > 1e9) /* 31 years: not a window */
    return -1;
  double scale = 1;
  if (*end == '\0' || strcmp(end, "ns") == 0)
    scale = 1;
  else if (strcmp(end, "us") == 0)
    scale = 1e3;
  else if (strcmp(end, "ms") == 0)
    scale = 1e6;
  else if (strcmp(end, "s") == 0)
    scale = 1e9;
  else
    return -1;
  *out_ns = (uint64_t)(value * scale + 0.5);
  return 0;
}

void mprof_cupti_config_load(mprof_cupti_config *cfg, mprof_cupti_env_fn env,
                             void *userdata, long pid, const char *host) {
  memset(cfg, 0, sizeof *cfg);
  cfg->pc_mode = MPROF_CUPTI_PC_CONTINUOUS;
  cfg->pc_period = MPROF_CUPTI_DEFAULT_PC_PERIOD;
  cfg->pc_hw_buffer = MPROF_CUPTI_DEFAULT_PC_HW_BUFFER;
  cfg->keep_sass = 1;
  cfg->api_calls = 1;
  cfg->pm_enabled = 0;
  cfg->pm_interval_ns = MPROF_CUPTI_DEFAULT_PM_INTERVAL_NS;
  cfg->pm_hw_buffer = MPROF_CUPTI_DEFAULT_PM_HW_BUFFER;
  cfg->pm_decode_period_ns = MPROF_CUPTI_DEFAULT_PM_DECODE_PERIOD_NS;
  cfg->pm_counter_samples = MPROF_CUPTI_DEFAULT_PM_COUNTER_SAMPLES;

  const char *value = env(userdata, "MPROF_OUTPUT");
  if (!value || !*value)
    value = MPROF_CUPTI_DEFAULT_OUTPUT;
  if (mprof_cupti_expand_output(cfg->output, sizeof cfg->output, value, pid,
                                host, env, userdata) != 0) {
    problem(cfg,
            "MPROF_OUTPUT: '%.64s' is too long or names a variable that is "
            "too long or holds a '/'; using %s",
            value, MPROF_CUPTI_DEFAULT_OUTPUT);
    snprintf(cfg->output, sizeof cfg->output, "%s", MPROF_CUPTI_DEFAULT_OUTPUT);
  }

  value = env(userdata, "MPROF_PC_MODE");
  if (value && *value) {
    if (strcasecmp(value, "continuous") == 0)
      cfg->pc_mode = MPROF_CUPTI_PC_CONTINUOUS;
    else if (strcasecmp(value, "serialized") == 0 ||
             strcasecmp(value, "serialised") == 0)
      cfg->pc_mode = MPROF_CUPTI_PC_SERIALIZED;
    else if (strcasecmp(value, "off") == 0 || strcmp(value, "0") == 0)
      cfg->pc_mode = MPROF_CUPTI_PC_OFF;
    else
      problem(cfg, "MPROF_PC_MODE: unknown mode '%.64s'; using continuous",
              value);
  }

  uint64_t n = cfg->pc_period;
  integer_value(cfg, "MPROF_PC_PERIOD", env(userdata, "MPROF_PC_PERIOD"),
                MPROF_CUPTI_MIN_PC_PERIOD, MPROF_CUPTI_MAX_PC_PERIOD,
                "an exponent", &n);
  cfg->pc_period = (uint32_t)n;

  value = env(userdata, "MPROF_PC_HW_BUFFER");
  if (value && *value)
    buffer_value(cfg, "MPROF_PC_HW_BUFFER", value, &cfg->pc_hw_buffer);

  string_value(cfg, "MPROF_KERNEL_REGEX", env(userdata, "MPROF_KERNEL_REGEX"),
               cfg->kernel_regex, sizeof cfg->kernel_regex,
               "keeping every kernel");

  value = env(userdata, "MPROF_PM");
  if (value && *value) {
    if (strcasecmp(value, "on") == 0 || strcmp(value, "1") == 0)
      cfg->pm_enabled = 1;
    else if (strcasecmp(value, "alternate") == 0)
      cfg->pm_enabled = cfg->pm_alternate = 1;
    else if (strcasecmp(value, "off") != 0 && strcmp(value, "0") != 0)
      problem(cfg,
              "MPROF_PM: '%.64s' is neither on, off nor alternate; using off",
              value);
  }
  n = 0;
  integer_value(cfg, "MPROF_ALTERNATE_EVERY",
                env(userdata, "MPROF_ALTERNATE_EVERY"), 1, 1000000,
                "a number of repeats", &n);
  cfg->alternate_every = n;

  duration_value(cfg, "MPROF_PM_INTERVAL", env(userdata, "MPROF_PM_INTERVAL"),
                 MPROF_CUPTI_MIN_PM_INTERVAL_NS, MPROF_CUPTI_MAX_PM_INTERVAL_NS,
                 "1us to 1s", &cfg->pm_interval_ns);

  value = env(userdata, "MPROF_PM_HW_BUFFER");
  if (value && *value)
    buffer_value(cfg, "MPROF_PM_HW_BUFFER", value, &cfg->pm_hw_buffer);

  duration_value(
      cfg, "MPROF_PM_DECODE_PERIOD", env(userdata, "MPROF_PM_DECODE_PERIOD"),
      MPROF_CUPTI_MIN_PM_DECODE_PERIOD_NS, MPROF_CUPTI_MAX_PM_DECODE_PERIOD_NS,
      "1ms to 1s", &cfg->pm_decode_period_ns);

  n = cfg->pm_counter_samples;
  integer_value(cfg, "MPROF_PM_COUNTER_SAMPLES",
                env(userdata, "MPROF_PM_COUNTER_SAMPLES"),
                MPROF_CUPTI_MIN_PM_COUNTER_SAMPLES,
                MPROF_CUPTI_MAX_PM_COUNTER_SAMPLES, "a number", &n);
  cfg->pm_counter_samples = (uint32_t)n;

  string_value(cfg, "MPROF_PM_METRICS", env(userdata, "MPROF_PM_METRICS"),
               cfg->pm_metrics, sizeof cfg->pm_metrics,
               "using the default counters");

  cfg->keep_sass = !flag_value(env(userdata, "MPROF_NO_SASS"));
  cfg->whole_modules = flag_value(env(userdata, "MPROF_WHOLE_MODULES"));
  cfg->api_calls = !flag_value(env(userdata, "MPROF_NO_API_CALLS"));
  cfg->verbose = flag_value(env(userdata, "MPROF_VERBOSE"));
  value = env(userdata, "MPROF_MANIFEST");
  if (value && *value && strlen(value) < sizeof cfg->manifest)
    snprintf(cfg->manifest, sizeof cfg->manifest, "%s", value);
  value = env(userdata, "MPROF_OUTPUT");
  cfg->output_has_pid = value && strstr(value, "%p") != NULL;
  string_value(cfg, "MPROF_CAPTURE_RANGE", env(userdata, "MPROF_CAPTURE_RANGE"),
               cfg->capture_range, sizeof cfg->capture_range,
               "no range opens the window");
  static const struct {
    const char *name;
    size_t offset;
  } counts[] = {
      {"MPROF_RANGE_SKIP", offsetof(mprof_cupti_config, range_skip)},
      {"MPROF_RANGE_COUNT", offsetof(mprof_cupti_config, range_count)},
      {"MPROF_KERNEL_SKIP", offsetof(mprof_cupti_config, kernel_skip)},
      {"MPROF_KERNEL_COUNT", offsetof(mprof_cupti_config, kernel_count)},
  };
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
    integer_value(cfg, counts[i].name, env(userdata, counts[i].name), 0,
                  INT64_MAX, "a count",
                  (uint64_t *)((char *)cfg + counts[i].offset));
  duration_value(cfg, "MPROF_DELAY", env(userdata, "MPROF_DELAY"), 0,
                 UINT64_MAX, "0s on", &cfg->delay_ns);
  duration_value(cfg, "MPROF_DURATION", env(userdata, "MPROF_DURATION"), 1,
                 UINT64_MAX, "1ns on", &cfg->duration_ns);
  value = env(userdata, "MPROF_MAX_SIZE");
  if (value && *value) {
    uint64_t bytes = 0;
    if (mprof_cupti_parse_bytes(value, &bytes) != 0 || bytes == 0)
      problem(cfg,
              "MPROF_MAX_SIZE: '%.64s' is not a size (e.g. 500M); "
              "recording without a size limit",
              value);
    else
      cfg->max_bytes = bytes;
  }
  n = MPROF_CUPTI_DEFAULT_EXIT_WAIT_MS;
  integer_value(cfg, "MPROF_EXIT_WAIT_MS", env(userdata, "MPROF_EXIT_WAIT_MS"),
                0, 600000, "a number of milliseconds", &n);
  cfg->exit_wait_ms = (unsigned)n;
}

/* ---- naming and the manifest, shared with the block producer ---- */

int mprof_cupti_pid_path(char *dst, size_t size, const char *path, long pid) {
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  const char *dot = strrchr(base, '.');
  if (!dot || dot == base)
    dot = base + strlen(base);
  int n = snprintf(dst, size, "%.*s.%ld%s", (int)(dot - path), path, pid, dot);
  return n > 0 && (size_t)n < size ? 0 : -1;
}

void mprof_cupti_manifest_line(const char *manifest, const char *line) {
  if (!manifest || !*manifest)
    return;
  int saved = errno;
  int fd = open(manifest, O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd >= 0) {
    size_t len = strlen(line);
    if (write(fd, line, len) != (ssize_t)len) {
      /* nothing to do: record then reports the process as unheard */
    }
    close(fd);
  }
  errno = saved;
}

int mprof_cupti_manifest_names(const char *manifest, const char *path) {
  if (!manifest || !*manifest || !path || !*path)
    return 0;
  FILE *f = fopen(manifest, "re");
  if (!f)
    return 0;
  char line[4096 + 64];
  size_t len = strlen(path);
  int named = 0;
  while (!named && fgets(line, sizeof line, f)) {
    /* "start PID PPID PATH\n" */
    if (strncmp(line, "start ", 6) != 0)
      continue;
    const char *at = line + 6;
    for (int field = 0; field < 2 && at; field++) {
      at = strchr(at, ' ');
      at = at ? at + 1 : NULL;
    }
    named = at && strncmp(at, path, len) == 0 &&
            (at[len] == '\n' || at[len] == '\0');
  }
  fclose(f);
  return named;
}

static size_t put_text(char *dst, size_t size, size_t at, const char *text) {
  size_t len = strlen(text);
  if (at + len >= size)
    return size;
  memcpy(dst + at, text, len);
  return at + len;
}

static size_t put_long(char *dst, size_t size, size_t at, long value) {
  char digits[24];
  size_t n = 0;
  unsigned long v =
      value < 0 ? 0ul - (unsigned long)value : (unsigned long)value;
  do {
    digits[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v && n < sizeof digits);
  if (value < 0)
    at = put_text(dst, size, at, "-");
  while (n && at < size - 1)
    dst[at++] = digits[--n];
  return n ? size : at;
}

size_t mprof_cupti_manifest_format(char *dst, size_t size, const char *word,
                                   long pid, long value, const char *path) {
  if (!dst || size < 2)
    return 0;
  size_t at = put_text(dst, size, 0, word);
  at = at < size ? put_text(dst, size, at, " ") : size;
  at = at < size ? put_long(dst, size, at, pid) : size;
  at = at < size ? put_text(dst, size, at, " ") : size;
  at = at < size ? put_long(dst, size, at, value) : size;
  at = at < size ? put_text(dst, size, at, " ") : size;
  at = at < size ? put_text(dst, size, at, path) : size;
  at = at < size ? put_text(dst, size, at, "\n") : size;
  if (at >= size)
    return 0;
  dst[at] = '\0';
  return at;
}
