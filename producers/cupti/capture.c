/*
 * mprof CUPTI producer — the capture window's state machine (capture.h).
 *
 * The rules, which the tests pin:
 *  - Nothing counts before the delay: ranges begun and launches made
 *    earlier are neither recorded nor counted as skipped.
 *  - A range (a cudaProfilerStart/Stop pair, or an NVTX range whose name
 *    and domain match) counts when it begins. Only the outermost matching
 *    range counts: one that begins while another is open, on any thread,
 *    neither counts nor ends anything. A push range ends at the pop of its
 *    own thread at its own depth; a start/end range at the end of its id.
 *  - The first range_skip ranges are skipped; the next range_count (every
 *    one when 0) are recorded, recording on inside each and off between
 *    them; after the last the window is over for good.
 *  - Kernel windows (ncu's --launch-skip/--launch-count): only launches of
 *    kernels the regex matches count. Recording turns on just before the
 *    (kernel_skip+1)th and off just before the (kernel_skip+kernel_count+1)th,
 *    so the window holds exactly kernel_count matching launches (and any
 *    other kernels launched among them).
 *  - duration runs from the moment recording first turned on; max_bytes
 *    caps the whole file (code and metadata written before the window
 *    count too). Either ends the window for good.
 *
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include "capture.h"

#include <stdio.h>
#include <string.h>

int mprof_cupti_capture_parse_range(mprof_cupti_capture_settings *s,
                                    const char *text, char *why,
                                    size_t why_size) {
  s->trigger = MPROF_CAPTURE_WHOLE;
  s->nvtx_name[0] = s->nvtx_domain[0] = s->spec[0] = '\0';
  s->nvtx_regex = 0;
  if (!text || !*text || strcmp(text, "none") == 0)
    return 0;
  if (strlen(text) >= sizeof s->spec) {
    snprintf(why, why_size, "is longer than %zu bytes", sizeof s->spec - 1);
    return -1;
  }
  if (strcmp(text, "cudaProfilerApi") == 0) {
    s->trigger = MPROF_CAPTURE_PROFILER_API;
    snprintf(s->spec, sizeof s->spec, "%s", text);
    return 0;
  }
  if (strncmp(text, "nvtx:", 5) != 0) {
    snprintf(why, why_size,
             "is not none, cudaProfilerApi, nvtx:NAME[@DOMAIN] or "
             "nvtx:/REGEX/[@DOMAIN]");
    return -1;
  }
  const char *name = text + 5;
  const char *at = NULL;
  size_t name_len = 0;
  int regex = 0;
  if (name[0] == '/') {
    /* /REGEX/ then an optional @DOMAIN: the regex may hold '@' and '/'. */
    const char *close = strrchr(name + 1, '/');
    if (!close) {
      snprintf(why, why_size, "opens a /REGEX/ it does not close");
      return -1;
    }
    if (close[1] != '\0' && close[1] != '@') {
      snprintf(why, why_size,
               "has '%s' after its /REGEX/ (only @DOMAIN may "
               "follow)",
               close + 1);
      return -1;
    }
    at = close[1] == '@' ? close + 1 : NULL;
    name++;
    name_len = (size_t)(close - name);
    regex = 1;
  } else {
    at = strrchr(name, '@');
    name_len = at ? (size_t)(at - name) : strlen(name);
  }
  if (name_len == 0) {
    snprintf(why, why_size, "names no range (nvtx:NAME, e.g. nvtx:step)");
    return -1;
  }
  if (at && at[1] == '\0') {
    snprintf(why, why_size,
             "names no domain after '@' (use @* for any "
             "domain)");
    return -1;
  }
  if (name_len >= sizeof s->nvtx_name ||
      (at && strlen(at + 1) >= sizeof s->nvtx_domain)) {
    snprintf(why, why_size, "names a range or domain that is too long");
    return -1;
  }
  memcpy(s->nvtx_name, name, name_len);
  s->nvtx_name[name_len] = '\0';
  if (at)
    snprintf(s->nvtx_domain, sizeof s->nvtx_domain, "%s", at + 1);
  if (regex) {
    regex_t re;
    int rc = regcomp(&re, s->nvtx_name, REG_EXTENDED | REG_NOSUB);
    if (rc != 0) {
      char error[128];
      regerror(rc, &re, error, sizeof error);
      snprintf(why, why_size, "has a regex that does not compile: %s", error);
      s->nvtx_name[0] = '\0';
      return -1;
    }
    regfree(&re);
  }
  s->nvtx_regex = regex;
  s->trigger = MPROF_CAPTURE_NVTX;
  snprintf(s->spec, sizeof s->spec, "%s", text);
  return 0;
}

int mprof_cupti_capture_wanted(const mprof_cupti_capture_settings *s) {
  return s->trigger != MPROF_CAPTURE_WHOLE || s->range_skip || s->range_count ||
         s->kernel_skip || s->kernel_count || s->delay_ns || s->duration_ns ||
         s->max_bytes;
}

int mprof_cupti_capture_init(mprof_cupti_capture *c,
                             const mprof_cupti_capture_settings *s,
                             const char *kernel_regex, char *why,
                             size_t why_size) {
  memset(c, 0, sizeof *c);
  c->s = *s;
  if (c->s.trigger == MPROF_CAPTURE_WHOLE &&
      (c->s.kernel_skip || c->s.kernel_count))
    c->s.trigger = MPROF_CAPTURE_KERNELS;
  if (c->s.trigger == MPROF_CAPTURE_NVTX && c->s.nvtx_regex) {
    int rc = regcomp(&c->nvtx_re, c->s.nvtx_name, REG_EXTENDED | REG_NOSUB);
    if (rc != 0) {
      snprintf(why, why_size, "the NVTX range regex '%.200s' does not compile",
               c->s.nvtx_name);
      return -1;
    }
    c->have_nvtx_re = 1;
  }
  if (c->s.trigger == MPROF_CAPTURE_KERNELS && kernel_regex && *kernel_regex) {
    if (regcomp(&c->kernel_re, kernel_regex, REG_EXTENDED | REG_NOSUB) != 0) {
      snprintf(why, why_size, "the kernel regex '%.200s' does not compile",
               kernel_regex);
      mprof_cupti_capture_free(c);
      return -1;
    }
    c->have_kernel_re = 1;
    if (!c->s.spec[0])
      snprintf(c->s.spec, sizeof c->s.spec, "%s", kernel_regex);
  }
  return 0;
}

void mprof_cupti_capture_free(mprof_cupti_capture *c) {
  if (c->have_nvtx_re)
    regfree(&c->nvtx_re);
  if (c->have_kernel_re)
    regfree(&c->kernel_re);
  c->have_nvtx_re = c->have_kernel_re = 0;
}

/* ---- transitions --------------------------------------------------------- */

static int armed(const mprof_cupti_capture *c, uint64_t now) {
  return c->begun && !c->done && now >= c->begin_ns &&
         now - c->begin_ns >= c->s.delay_ns;
}

static mprof_cupti_capture_change turn_on(mprof_cupti_capture *c,
                                          uint64_t now) {
  if (c->done || c->recording)
    return MPROF_CUPTI_CAPTURE_SAME;
  c->recording = 1;
  if (!c->pieces)
    c->first_on = now;
  c->pieces++;
  return MPROF_CUPTI_CAPTURE_ON;
}

static mprof_cupti_capture_change turn_off(mprof_cupti_capture *c,
                                           uint64_t now) {
  if (!c->recording)
    return MPROF_CUPTI_CAPTURE_SAME;
  c->recording = 0;
  c->last_off = now;
  return MPROF_CUPTI_CAPTURE_OFF;
}

/* The window is over for good. */
static mprof_cupti_capture_change finish(mprof_cupti_capture *c, uint64_t now,
                                         mprof_capture_end why) {
  if (c->done)
    return MPROF_CUPTI_CAPTURE_SAME;
  mprof_cupti_capture_change change = turn_off(c, now);
  c->done = 1;
  c->end = why;
  c->range_open = 0;
  return change;
}

/* The duration, checked before every event. */
static mprof_cupti_capture_change check_time(mprof_cupti_capture *c,
                                             uint64_t now) {
  if (!c->done && c->pieces && c->s.duration_ns && now >= c->first_on &&
      now - c->first_on >= c->s.duration_ns)
    return finish(c, now, MPROF_CAPTURE_END_DURATION);
  return MPROF_CUPTI_CAPTURE_SAME;
}

mprof_cupti_capture_change mprof_cupti_capture_begin(mprof_cupti_capture *c,
                                                     uint64_t now) {
  if (c->begun)
    return MPROF_CUPTI_CAPTURE_SAME;
  c->begun = 1;
  c->begin_ns = now;
  return mprof_cupti_capture_tick(c, now);
}

mprof_cupti_capture_change mprof_cupti_capture_tick(mprof_cupti_capture *c,
                                                    uint64_t now) {
  mprof_cupti_capture_change change = check_time(c, now);
  if (change != MPROF_CUPTI_CAPTURE_SAME)
    return change;
  if (c->s.trigger == MPROF_CAPTURE_WHOLE && !c->recording && armed(c, now))
    return turn_on(c, now);
  return MPROF_CUPTI_CAPTURE_SAME;
}

mprof_cupti_capture_change mprof_cupti_capture_bytes(mprof_cupti_capture *c,
                                                     uint64_t bytes,
                                                     uint64_t now) {
  if (!c->done && c->s.max_bytes && bytes >= c->s.max_bytes)
    return finish(c, now, MPROF_CAPTURE_END_MAX_SIZE);
  return mprof_cupti_capture_tick(c, now);
}

/* A matching range begins: count it, and record it unless skipped. */
static mprof_cupti_capture_change range_begins(mprof_cupti_capture *c,
                                               uint64_t now) {
  c->range_open = 1;
  c->range_counted = c->ranges_seen >= c->s.range_skip;
  c->ranges_seen++;
  if (!c->range_counted)
    return MPROF_CUPTI_CAPTURE_SAME;
  c->ranges_recorded++;
  return turn_on(c, now);
}

static mprof_cupti_capture_change range_ends(mprof_cupti_capture *c,
                                             uint64_t now) {
  int counted = c->range_counted;
  c->range_open = 0;
  c->range_counted = 0;
  if (!counted)
    return MPROF_CUPTI_CAPTURE_SAME;
  mprof_cupti_capture_change change = turn_off(c, now);
  if (c->s.range_count && c->ranges_recorded >= c->s.range_count)
    finish(c, now, MPROF_CAPTURE_END_RANGE_COUNT);
  return change;
}

mprof_cupti_capture_change
mprof_cupti_capture_profiler_start(mprof_cupti_capture *c, uint64_t now) {
  mprof_cupti_capture_change change = check_time(c, now);
  if (c->s.trigger != MPROF_CAPTURE_PROFILER_API || c->range_open ||
      !armed(c, now))
    return change;
  return range_begins(c, now);
}

mprof_cupti_capture_change
mprof_cupti_capture_profiler_stop(mprof_cupti_capture *c, uint64_t now) {
  mprof_cupti_capture_change change = check_time(c, now);
  if (c->s.trigger != MPROF_CAPTURE_PROFILER_API || !c->range_open)
    return change;
  return range_ends(c, now);
}

static int nvtx_matches(const mprof_cupti_capture *c, const char *name,
                        const char *domain) {
  if (!name)
    return 0;
  const char *want = c->s.nvtx_domain;
  if (strcmp(want, "*") != 0) {
    const char *have = domain ? domain : "";
    if (strcmp(want, have) != 0)
      return 0;
  }
  if (c->have_nvtx_re)
    return regexec(&c->nvtx_re, name, 0, NULL, 0) == 0;
  return strcmp(c->s.nvtx_name, name) == 0;
}

static capture_thread *thread_slot(mprof_cupti_capture *c, uint64_t thread,
                                   int add) {
  for (size_t i = 0; i < c->thread_count; i++)
    if (c->threads[i].thread == thread)
      return &c->threads[i];
  if (!add || c->thread_count >= MPROF_CUPTI_CAPTURE_MAX_THREADS)
    return NULL;
  capture_thread *t = &c->threads[c->thread_count++];
  t->thread = thread;
  t->depth = 0;
  return t;
}

mprof_cupti_capture_change
mprof_cupti_capture_push(mprof_cupti_capture *c, uint64_t thread,
                         const char *name, const char *domain, uint64_t now) {
  mprof_cupti_capture_change change = check_time(c, now);
  if (c->s.trigger != MPROF_CAPTURE_NVTX || c->done)
    return change;
  capture_thread *t = thread_slot(c, thread, 1);
  if (!t)
    return change;
  t->depth++;
  if (c->range_open || !armed(c, now) || !nvtx_matches(c, name, domain))
    return change;
  c->range_by_id = 0;
  c->open_thread = thread;
  c->open_depth = t->depth;
  return range_begins(c, now);
}

mprof_cupti_capture_change
mprof_cupti_capture_pop(mprof_cupti_capture *c, uint64_t thread, uint64_t now) {
  mprof_cupti_capture_change change = check_time(c, now);
  if (c->s.trigger != MPROF_CAPTURE_NVTX || c->done)
    return change;
  capture_thread *t = thread_slot(c, thread, 0);
  if (!t || t->depth == 0)
    return change; /* a pop without its push: nothing to end */
  uint32_t depth = t->depth--;
  if (c->range_open && !c->range_by_id && c->open_thread == thread &&
      c->open_depth == depth)
    return range_ends(c, now);
  return change;
}

mprof_cupti_capture_change
mprof_cupti_capture_start_range(mprof_cupti_capture *c, uint64_t id,
                                const char *name, const char *domain,
                                uint64_t now) {
  mprof_cupti_capture_change change = check_time(c, now);
  if (c->s.trigger != MPROF_CAPTURE_NVTX || c->range_open || !armed(c, now) ||
      !nvtx_matches(c, name, domain))
    return change;
  c->range_by_id = 1;
  c->open_id = id;
  return range_begins(c, now);
}

mprof_cupti_capture_change mprof_cupti_capture_end_range(mprof_cupti_capture *c,
                                                         uint64_t id,
                                                         uint64_t now) {
  mprof_cupti_capture_change change = check_time(c, now);
  if (c->s.trigger != MPROF_CAPTURE_NVTX || !c->range_open || !c->range_by_id ||
      c->open_id != id)
    return change;
  return range_ends(c, now);
}

mprof_cupti_capture_change mprof_cupti_capture_kernel(mprof_cupti_capture *c,
                                                      const char *name,
                                                      uint64_t now) {
  mprof_cupti_capture_change change = check_time(c, now);
  if (change != MPROF_CUPTI_CAPTURE_SAME ||
      c->s.trigger != MPROF_CAPTURE_KERNELS || !armed(c, now))
    return change;
  if (c->have_kernel_re &&
      (!name || regexec(&c->kernel_re, name, 0, NULL, 0) != 0))
    return MPROF_CUPTI_CAPTURE_SAME;
  uint64_t n = c->kernels_seen++;
  if (c->s.kernel_count && n >= c->s.kernel_skip + c->s.kernel_count)
    return finish(c, now, MPROF_CAPTURE_END_KERNEL_COUNT);
  if (n >= c->s.kernel_skip) {
    c->kernels_recorded++;
    return turn_on(c, now);
  }
  return MPROF_CUPTI_CAPTURE_SAME;
}

mprof_cupti_capture_change mprof_cupti_capture_finish(mprof_cupti_capture *c,
                                                      uint64_t now) {
  mprof_cupti_capture_change change = check_time(c, now);
  if (c->done)
    return change;
  return finish(c, now,
                c->pieces ? MPROF_CAPTURE_END_EXIT
                          : MPROF_CAPTURE_END_NEVER_OPENED);
}

int mprof_cupti_capture_settled(const mprof_cupti_capture *c) {
  return c->done;
}

void mprof_cupti_capture_record(const mprof_cupti_capture *c,
                                mprof_capture_record *out) {
  memset(out, 0, sizeof *out);
  out->start = c->pieces ? c->first_on : 0;
  out->end = c->pieces && !c->recording ? c->last_off : 0;
  out->delay = c->s.delay_ns;
  out->duration = c->s.duration_ns;
  out->max_bytes = c->s.max_bytes;
  int kernels = c->s.trigger == MPROF_CAPTURE_KERNELS;
  out->skip = kernels ? c->s.kernel_skip : c->s.range_skip;
  out->count = kernels ? c->s.kernel_count : c->s.range_count;
  out->recorded = kernels ? c->kernels_recorded : c->ranges_recorded;
  out->seen = kernels ? c->kernels_seen : c->ranges_seen;
  out->trigger = (uint32_t)c->s.trigger;
  out->end_reason = (uint32_t)c->end;
  out->pieces = c->pieces > UINT32_MAX ? UINT32_MAX : (uint32_t)c->pieces;
}
