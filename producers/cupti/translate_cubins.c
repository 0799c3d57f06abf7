/*
 * mprof CUPTI producer — modules: each load hashed, its symbols walked and
 * its image spilled; at finish, CUBINS with only the code the trace uses.
 *
 * SPDX-License-Identifier: MIT
 */
#include "translate_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mprof/status.h"

/* ---- modules ------------------------------------------------------------ */

int tr_crc_find(const mprof_cupti_translate *t, uint64_t crc, uint32_t *index) {
  size_t cursor = 0;
  uint32_t found;
  while ((found = mprof__map_next(&t->crcs, tr_mix64(crc), &cursor)) !=
         MPROF__MAP_NONE)
    if (t->modules[found].crc == crc) {
      *index = found;
      return 1;
    }
  return 0;
}

typedef struct function_walk {
  mprof_cupti_translate *t;
  uint32_t module;
} function_walk;

static void add_function(void *userdata, const char *name,
                         uint32_t symbol_index) {
  function_walk *walk = (function_walk *)userdata;
  name_entry *e = tr_name_get(walk->t, name);
  if (!e)
    return;
  for (uint32_t i = 0; i < e->module_count; i++)
    if (e->modules[i] == walk->module)
      return;
  if (e->module_count == e->module_capacity) {
    uint32_t capacity = e->module_capacity ? e->module_capacity * 2 : 1;
    uint32_t *grown =
        (uint32_t *)realloc(e->modules, capacity * sizeof *e->modules);
    if (!grown)
      return;
    e->modules = grown;
    e->module_capacity = capacity;
  }
  if (e->module_count == 0)
    e->function_index = symbol_index;
  e->modules[e->module_count++] = walk->module;
}
/* ---- modules ------------------------------------------------------------ */

int mprof_cupti_translate_module(mprof_cupti_translate *t, uint64_t crc,
                                 uint32_t ordinal, const void *image,
                                 size_t size) {
  int rc = 0;
  pthread_mutex_lock(&t->lock);
  if (t->finished)
    goto out;
  uint32_t device = tr_device_locked(t, ordinal);
  uint32_t index = 0;
  if (tr_crc_find(t, crc, &index)) {
    if (t->modules[index].device != device)
      t->modules[index].multi_device = 1;
    goto out;
  }
  if (t->module_count == t->module_capacity) {
    size_t capacity = t->module_capacity ? t->module_capacity * 2 : 16;
    module *grown =
        (module *)realloc(t->modules, capacity * sizeof *t->modules);
    if (!grown) {
      rc = MPROF_ENOMEM;
      goto out;
    }
    t->modules = grown;
    t->module_capacity = capacity;
  }
  if (mprof__map_add(&t->crcs, tr_mix64(crc), (uint32_t)t->module_count) != 0) {
    rc = MPROF_ENOMEM;
    goto out;
  }
  module *m = &t->modules[t->module_count];
  memset(m, 0, sizeof *m);
  m->crc = crc;
  m->size = size;
  m->device = device;
  index = (uint32_t)t->module_count++;
  t->stats.modules++;
  t->stats.loaded_bytes += size;

  if (t->keep_sass && image && size && !t->spill_failed) {
    if (mprof_cupti_spill_store(&t->spill, image, size, &m->spill_offset) ==
        0) {
      m->spilled = 1;
    } else {
      char message[512];
      snprintf(message, sizeof message,
               "cubin spill file in %.300s: %s; later cubins are omitted",
               t->spill.dir, strerror(errno));
      tr_error_locked(t, message);
      t->spill_failed = 1;
    }
  }
  if (image && size) {
    function_walk walk = {t, index};
    if (mprof__cubin_functions(image, size, add_function, &walk) < 0) {
      char message[128];
      snprintf(message, sizeof message,
               "cubin %016llx: not an ELF64 image; kept only if sampled",
               (unsigned long long)crc);
      tr_error_locked(t, message);
    }
  }
out:
  pthread_mutex_unlock(&t->lock);
  return rc;
}

/* ---- streamed as soon as used ---------------------------------------------
 */

/* The image of @p m from the spill file (malloc'ed), or NULL, with the
 * failure in META. */
static void *spilled_image(mprof_cupti_translate *t, const module *m) {
  void *blob = m->size <= SIZE_MAX ? malloc((size_t)m->size) : NULL;
  if (blob && mprof_cupti_spill_load(&t->spill, m->spill_offset, blob,
                                     (size_t)m->size) == 0)
    return blob;
  free(blob);
  char message[256];
  snprintf(message, sizeof message,
           "cubin %016llx: cannot read it back from the spill file",
           (unsigned long long)m->crc);
  tr_error_locked(t, message);
  return NULL;
}

/* One CUBINS record per CRC: a module loaded on several devices is the same
 * code, so it is stored once and tied to no device. */
static uint32_t cubin_device(const module *m) {
  return m->multi_device ? MPROF_INDEX_NONE : m->device;
}

/* A module whose kernel ran is in the trace from the next checkpoint on,
 * whole: what else it will need is known only at the end, when finish
 * replaces it with the trimmed form. Modules nothing used are never
 * streamed (a framework loads hundreds of MB of them). */
void tr_stream_cubins_locked(mprof_cupti_translate *t) {
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  uint64_t before = t->stats.streamed_modules;
  for (size_t i = 0; i < t->module_count; i++) {
    module *m = &t->modules[i];
    if (!m->used || !m->spilled || m->streamed)
      continue;
    void *blob = spilled_image(t, m);
    if (!blob)
      continue;
    mprof_cubin_record rec;
    memset(&rec, 0, sizeof rec);
    rec.crc = m->crc;
    rec.module_size = m->size;
    rec.device = cubin_device(m);
    rec.flags = MPROF_CUBIN_KEPT_WHOLE;
    if (mprof_writer_cubin(t->w, &rec, blob, (size_t)m->size) == 0) {
      m->streamed = 1;
      m->streamed_device = rec.device;
      t->stats.streamed_modules++;
      t->stats.streamed_bytes += m->size;
    }
    free(blob);
  }
  if (t->stats.streamed_modules == before)
    return;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  t->stats.streamed_ns += (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000ll +
                                     (t1.tv_nsec - t0.tv_nsec));
}

/* ---- finish ------------------------------------------------------------- */

/* Whether kernel @p name was launched (and passed MPROF_KERNEL_REGEX). */
static int launched(void *userdata, const char *name) {
  mprof_cupti_translate *t = (mprof_cupti_translate *)userdata;
  name_entry *e = tr_name_get(t, name);
  return e && e->launched && tr_name_matches(t, e);
}

/* @p image cut down to the code of its launched and sampled functions, or
 * NULL when it cannot be cut (then it is kept whole). */
static void *trimmed(mprof_cupti_translate *t, const module *m,
                     const void *image, size_t size, size_t *trimmed_size) {
  void *out = NULL;
  if (mprof__cubin_trim_to_used(image, size, m->sampled, m->sampled_count,
                                launched, t, &out, trimmed_size) != 0)
    out = NULL;
  return out;
}

void tr_write_cubins_locked(mprof_cupti_translate *t) {
  for (size_t i = 0; i < t->module_count; i++) {
    const module *m = &t->modules[i];
    mprof_cubin_record rec;
    memset(&rec, 0, sizeof rec);
    rec.crc = m->crc;
    rec.module_size = m->size;
    rec.device = cubin_device(m);
    void *blob = NULL;
    size_t blob_size = 0;
    if (m->used && m->spilled && (blob = spilled_image(t, m)) != NULL)
      blob_size = (size_t)m->size;
    rec.flags = blob_size ? MPROF_CUBIN_KEPT_WHOLE : MPROF_CUBIN_OMITTED;
    if (blob_size && !t->whole_modules) {
      size_t cut_size = 0;
      void *cut = trimmed(t, m, blob, blob_size, &cut_size);
      if (cut && cut_size < blob_size) {
        free(blob);
        blob = cut;
        blob_size = cut_size;
        rec.flags = MPROF_CUBIN_TRIMMED;
      } else {
        free(cut);
      }
    }
    int rc = 0;
    if (m->streamed && (!blob_size || (rec.flags == MPROF_CUBIN_KEPT_WHOLE &&
                                       rec.device == m->streamed_device))) {
      blob_size = (size_t)m->size; /* the streamed whole image stands */
    } else if (m->streamed) {
      rc = mprof_writer_cubin_replace(t->w, m->streamed_device, &rec, blob,
                                      blob_size);
    } else {
      rc = mprof_writer_cubin(t->w, &rec, blob_size ? blob : NULL, blob_size);
    }
    if (rc == 0 && blob_size) {
      t->stats.modules_kept++;
      t->stats.kept_bytes += blob_size;
      t->stats.used_bytes += m->size;
    } else {
      t->stats.modules_omitted++;
    }
    free(blob);
  }
}
