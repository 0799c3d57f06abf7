/*
 * mprof CUPTI producer — PC sampling data and stall-reason tables, and PM
 * sampling counters, into PC_SAMPLES, STALL_REASONS and the PM sections.
 *
 * SPDX-License-Identifier: MIT
 */
#include "translate_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mprof/status.h"

/* ---- PC sampling -------------------------------------------------------- */

int mprof_cupti_translate_stall_reasons(mprof_cupti_translate *t,
                                        uint32_t ordinal, size_t count,
                                        const uint32_t *indices,
                                        char *const *names) {
  int rc = 0;
  pthread_mutex_lock(&t->lock);
  if (t->finished)
    goto out;
  uint32_t device = tr_device_locked(t, ordinal);
  if (device == MPROF_INDEX_NONE) {
    rc = MPROF_ENOMEM;
    goto out;
  }
  if (t->devices[device].stall_reasons_written)
    goto out;
  t->devices[device].stall_reasons_written = 1;
  for (size_t i = 0; i < count && rc == 0; i++) {
    mprof_stall_reason_record rec;
    memset(&rec, 0, sizeof rec);
    rec.device = device;
    rec.index = indices[i];
    rec.name = mprof_writer_string(t->w, names[i]);
    rc = mprof_writer_append(t->w, NULL, MPROF_SECTION_STALL_REASONS, &rec);
  }
out:
  pthread_mutex_unlock(&t->lock);
  return rc;
}

void mprof_cupti_translate_pc_error(mprof_cupti_translate *t, uint32_t ordinal,
                                    const char *reason) {
  char key[64];
  snprintf(key, sizeof key, "pc.device.%u.error", ordinal);
  pthread_mutex_lock(&t->lock);
  if (!t->finished) {
    tr_device_locked(t, ordinal);
    mprof_writer_meta(t->w, key, reason);
    mprof_writer_meta(t->w, "pc.error", reason);
  }
  pthread_mutex_unlock(&t->lock);
}

uint32_t mprof_cupti_translate_next_drain(mprof_cupti_translate *t) {
  pthread_mutex_lock(&t->lock);
  uint32_t drain = ++t->drain_seq;
  pthread_mutex_unlock(&t->lock);
  return drain;
}

/* Remember that @p m's symbol @p symbol was sampled. A drain repeats the same
 * few functions thousands of times: the last one is checked first. */
static void note_sampled(module *m, uint32_t symbol) {
  if (m->sampled_count && m->sampled[m->sampled_count - 1] == symbol)
    return;
  for (size_t i = 0; i < m->sampled_count; i++) {
    if (m->sampled[i] == symbol) {
      m->sampled[i] = m->sampled[m->sampled_count - 1];
      m->sampled[m->sampled_count - 1] = symbol;
      return;
    }
  }
  if (m->sampled_count == m->sampled_capacity) {
    size_t capacity = m->sampled_capacity ? m->sampled_capacity * 2 : 8;
    uint32_t *grown =
        (uint32_t *)realloc(m->sampled, capacity * sizeof *m->sampled);
    if (!grown)
      return; /* the module is then kept whole, see keep_list() */
    m->sampled = grown;
    m->sampled_capacity = capacity;
  }
  m->sampled[m->sampled_count++] = symbol;
}

static uint64_t pc_key_hash(const mprof_pc_sample_record *r) {
  uint64_t h = tr_mix64(r->cubin_crc);
  h = tr_mix64(h ^ ((uint64_t)r->function_name << 32 | r->pc_offset));
  h = tr_mix64(h ^ ((uint64_t)r->stall_reason << 32 | r->device));
  return tr_mix64(h ^ ((uint64_t)r->function_index << 32 | r->correlation_id));
}

static int pc_same_key(const mprof_pc_sample_record *a,
                       const mprof_pc_sample_record *b) {
  return a->cubin_crc == b->cubin_crc && a->function_name == b->function_name &&
         a->function_index == b->function_index &&
         a->pc_offset == b->pc_offset && a->stall_reason == b->stall_reason &&
         a->correlation_id == b->correlation_id && a->device == b->device;
}

/* Add @p rec to the sum of its key since the last checkpoint; the record
 * keeps the first drain that saw it. */
static int pc_add_locked(mprof_cupti_translate *t,
                         const mprof_pc_sample_record *rec) {
  uint64_t hash = pc_key_hash(rec);
  size_t cursor = 0;
  uint32_t i;
  while ((i = mprof__map_next(&t->pc_keys, hash, &cursor)) != MPROF__MAP_NONE) {
    mprof_pc_sample_record *p = &t->pc_pending[i];
    if (!pc_same_key(p, rec))
      continue;
    if (p->samples <= UINT32_MAX - rec->samples) {
      p->samples += rec->samples;
      return 0;
    }
    /* A sum past 32 bits: the full record goes out now. */
    int rc = mprof_writer_append(t->w, NULL, MPROF_SECTION_PC_SAMPLES, p);
    if (rc == 0)
      t->stats.pc_records++;
    p->samples = rec->samples;
    return rc;
  }
  if (t->pc_pending_count == t->pc_pending_capacity) {
    size_t capacity =
        t->pc_pending_capacity ? t->pc_pending_capacity * 2 : 4096;
    mprof_pc_sample_record *grown = (mprof_pc_sample_record *)realloc(
        t->pc_pending, capacity * sizeof *grown);
    if (!grown)
      return MPROF_ENOMEM;
    t->pc_pending = grown;
    t->pc_pending_capacity = capacity;
  }
  if (mprof__map_add(&t->pc_keys, hash, (uint32_t)t->pc_pending_count) != 0)
    return MPROF_ENOMEM;
  t->pc_pending[t->pc_pending_count++] = *rec;
  return 0;
}

void tr_pc_flush_locked(mprof_cupti_translate *t) {
  for (size_t i = 0; i < t->pc_pending_count; i++)
    if (mprof_writer_append(t->w, NULL, MPROF_SECTION_PC_SAMPLES,
                            &t->pc_pending[i]) == 0)
      t->stats.pc_records++;
  t->pc_pending_count = 0;
  mprof__map_free(&t->pc_keys);
}

int mprof_cupti_translate_pc_data(mprof_cupti_translate *t, uint32_t ordinal,
                                  const CUpti_PCSamplingData *data,
                                  uint32_t drain) {
  int rc = 0;
  pthread_mutex_lock(&t->lock);
  if (t->finished)
    goto out;
  uint32_t device = tr_device_locked(t, ordinal);
  t->stats.pc_drains++;
  /* Zero counts are written too: "sampled and lost nothing" is news. */
  mprof_writer_drop(t->w, MPROF_DROP_PC_HW_BUFFER_FULL, device,
                    data->hardwareBufferFull ? 1 : 0);
  mprof_writer_drop(t->w, MPROF_DROP_PC_DROPPED_SAMPLES, device,
                    data->droppedSamples);
  mprof_writer_drop(t->w, MPROF_DROP_PC_NON_USER_SAMPLES, device,
                    data->nonUsrKernelsTotalSamples);
  mprof_writer_drop(t->w, MPROF_DROP_PC_TOTAL_SAMPLES, device,
                    data->totalSamples);
  size_t pcs = data->totalNumPcs < data->collectNumPcs ? data->totalNumPcs
                                                       : data->collectNumPcs;
  if (!data->pPcData)
    pcs = 0;
  for (size_t i = 0; i < pcs && rc == 0; i++) {
    const CUpti_PCSamplingPCData *pc = &data->pPcData[i];
    name_entry *e = tr_name_get(t, pc->functionName ? pc->functionName : "");
    if (!e) {
      rc = MPROF_ENOMEM;
      break;
    }
    if (!tr_name_matches(t, e)) {
      t->stats.filtered_pc_records++;
      continue;
    }
    uint32_t module_index = 0;
    if (tr_crc_find(t, pc->cubinCrc, &module_index)) {
      t->modules[module_index].used = 1;
      note_sampled(&t->modules[module_index], pc->functionIndex);
    }
    size_t reasons = pc->stallReasonCount;
    if (reasons > MAX_STALL_REASONS_PER_PC)
      reasons = MAX_STALL_REASONS_PER_PC;
    if (!pc->stallReason)
      reasons = 0;
    for (size_t r = 0; r < reasons && rc == 0; r++) {
      const CUpti_PCSamplingStallReason *reason = &pc->stallReason[r];
      if (reason->samples == 0)
        continue;
      mprof_pc_sample_record rec;
      memset(&rec, 0, sizeof rec);
      rec.cubin_crc = pc->cubinCrc;
      rec.function_name = tr_name_string(t, e);
      rec.function_index = pc->functionIndex;
      rec.pc_offset =
          pc->pcOffset > UINT32_MAX ? UINT32_MAX : (uint32_t)pc->pcOffset;
      rec.stall_reason = reason->pcSamplingStallReasonIndex;
      rec.samples = reason->samples;
      rec.correlation_id = pc->correlationId;
      rec.device = device;
      rec.drain = drain;
      rc = pc_add_locked(t, &rec);
    }
  }
out:
  pthread_mutex_unlock(&t->lock);
  return rc;
}
/* ---- PM sampling -------------------------------------------------------- */

int mprof_cupti_translate_pm_metrics(mprof_cupti_translate *t, uint32_t ordinal,
                                     uint64_t interval_ns, size_t count,
                                     const char *const *names,
                                     const char *const *units) {
  int rc = 0;
  if (count > MPROF_PM_MAX_METRICS)
    count = MPROF_PM_MAX_METRICS;
  pthread_mutex_lock(&t->lock);
  if (!t->finished) {
    uint32_t device = tr_device_locked(t, ordinal);
    for (size_t i = 0; i < count && !rc && device != MPROF_INDEX_NONE; i++) {
      mprof_pm_metric_record rec;
      memset(&rec, 0, sizeof rec);
      rec.device = device;
      rec.column = (uint32_t)i;
      rec.name = mprof_writer_string(t->w, names[i]);
      rec.unit = mprof_writer_string(t->w, units[i]);
      rec.interval_ns = interval_ns;
      rc = mprof_writer_append(t->w, NULL, MPROF_SECTION_PM_METRICS, &rec);
    }
  }
  pthread_mutex_unlock(&t->lock);
  return rc;
}

int mprof_cupti_translate_pm_sample(mprof_cupti_translate *t, uint32_t ordinal,
                                    uint64_t start, uint64_t end, size_t count,
                                    const double *values) {
  int rc = 0;
  mprof_pm_sample_record rec;
  memset(&rec, 0, sizeof rec);
  rec.start = start;
  rec.end = end < start ? start : end;
  for (size_t i = 0; i < MPROF_PM_MAX_METRICS; i++)
    rec.value[i] = i < count ? (float)values[i] : NAN;
  pthread_mutex_lock(&t->lock);
  if (!t->finished) {
    rec.device = tr_device_locked(t, ordinal);
    if (rec.device != MPROF_INDEX_NONE)
      rc = mprof_writer_append(t->w, NULL, MPROF_SECTION_PM_SAMPLES, &rec);
  }
  pthread_mutex_unlock(&t->lock);
  return rc;
}

void mprof_cupti_translate_pm_drop(mprof_cupti_translate *t, uint32_t ordinal,
                                   mprof_drop_kind kind, uint64_t count) {
  pthread_mutex_lock(&t->lock);
  if (!t->finished && count)
    mprof_writer_drop(t->w, kind, tr_device_locked(t, ordinal), count);
  pthread_mutex_unlock(&t->lock);
}
