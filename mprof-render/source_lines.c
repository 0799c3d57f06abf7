/*
 * mprof-render — what the Source tab draws from: the per-line analysis of
 * the kernel on screen (libmprof's lines.h) and the text of its files
 * (sources.h: the trace's embedded copies, else the disk). The lines are
 * built for one kernel at a time, when the tab first draws it, and kept
 * until another kernel is drawn.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>

#include "render_internal.h"

typedef struct rs_source_cache {
  int kernel; /* whose lines `lines` are; -1 none */
  int failed; /* building them failed for `kernel` */
  mprof_lines *lines;
  mprof_sources *sources;
} rs_source_cache;

int mprof_render__init_source(mprof_render_model *m) {
  m->source_cache = (rs_source_cache *)calloc(1, sizeof *m->source_cache);
  if (!m->source_cache)
    return mprof_render__oom();
  m->source_cache->kernel = -1;
  if (mprof_sources_open(&m->source_cache->sources, m->trace, NULL) != 0)
    return mprof_render__fail("%s", mprof_error_last());
  return 0;
}

void mprof_render__free_source(mprof_render_model *m) {
  if (!m->source_cache)
    return;
  mprof_lines_free(m->source_cache->lines);
  mprof_sources_free(m->source_cache->sources);
  free(m->source_cache);
  m->source_cache = NULL;
}

const mprof_lines *mprof_render__lines(const mprof_render_model *m,
                                       int kernel) {
  rs_source_cache *c = m ? m->source_cache : NULL;
  if (!c || kernel < 0 || (size_t)kernel >= m->kernel_count)
    return NULL;
  if (c->kernel != kernel) {
    mprof_lines_free(c->lines);
    c->lines = NULL;
    c->kernel = kernel;
    c->failed = mprof_lines_build(&c->lines, m->join, (size_t)kernel, NULL);
  }
  return c->failed ? NULL : c->lines;
}

mprof_sources *mprof_render__sources(const mprof_render_model *m) {
  return m && m->source_cache ? m->source_cache->sources : NULL;
}
