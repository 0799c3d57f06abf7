/*
 * mprof CUPTI producer — CUPTI callbacks: contexts created and destroyed,
 * modules loaded and unloaded, launches (serialized PC mode).
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <string.h>

#include "pmsampling.h"
#include "producer.h"

/* ---- callbacks ---------------------------------------------------------- */

static int context_device(CUcontext ctx, uint32_t *ordinal) {
  return ok(cuptiGetDeviceId(ctx, ordinal), "cuptiGetDeviceId");
}

static void on_module_loaded(const CUpti_ResourceData *rd) {
  const CUpti_ModuleResourceData *mod =
      (const CUpti_ModuleResourceData *)rd->resourceDescriptor;
  if (mod && mod->pCubin && mod->cubinSize) {
    uint64_t started = cost_now();
    CUpti_GetCubinCrcParams crc;
    memset(&crc, 0, sizeof crc);
    crc.size = CUpti_GetCubinCrcParamsSize;
    crc.cubinSize = mod->cubinSize;
    crc.cubin = mod->pCubin;
    uint32_t ordinal = 0;
    if (ok(cuptiGetCubinCrc(&crc), "cuptiGetCubinCrc") &&
        context_device(rd->context, &ordinal)) {
      mprof_cupti_translate_module(g.tr, crc.cubinCrc, ordinal, mod->pCubin,
                                   mod->cubinSize);
      note("module %u loaded on device %u: %zu bytes, crc %016llx",
           mod->moduleId, ordinal, mod->cubinSize,
           (unsigned long long)crc.cubinCrc);
    }
    cost_add(COST_MODULES, started, mod->cubinSize);
  }
  /* A module load ends a PC-sampling range: CUPTI parked its records in
   * the configured buffer on this thread, before this callback. */
  pc_drain_context(rd->context, PC_AFTER_RANGE_END);
}

/* Keep the list of live contexts the exit handler waits for. */
static void context_seen(CUcontext ctx, int alive) {
  pthread_mutex_lock(&g.context_lock);
  int at = -1;
  for (int i = 0; i < g.context_count; i++)
    if (g.contexts[i] == ctx)
      at = i;
  if (alive && at < 0 && g.context_count < MAX_CONTEXTS)
    g.contexts[g.context_count++] = ctx;
  else if (!alive && at >= 0)
    g.contexts[at] = g.contexts[--g.context_count];
  pthread_mutex_unlock(&g.context_lock);
}

int contexts_synchronize(void) {
  if (!g.cu.push || !g.cu.pop || !g.cu.synchronize)
    return 0;
  CUcontext contexts[MAX_CONTEXTS];
  pthread_mutex_lock(&g.context_lock);
  int count = g.context_count;
  memcpy(contexts, g.contexts, sizeof contexts);
  pthread_mutex_unlock(&g.context_lock);
  int synchronized = 0;
  for (int i = 0; i < count; i++) {
    CUcontext popped = NULL;
    if (g.cu.push(contexts[i]) != CUDA_SUCCESS)
      continue;
    if (g.cu.synchronize() == CUDA_SUCCESS)
      synchronized++;
    g.cu.pop(&popped);
  }
  return synchronized;
}

void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain,
                          CUpti_CallbackId cbid, const void *cbdata) {
  (void)userdata;
  if (!running() || !cbdata)
    return;
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    const CUpti_ResourceData *rd = (const CUpti_ResourceData *)cbdata;
    uint32_t ordinal = 0;
    switch (cbid) {
    case CUPTI_CBID_RESOURCE_CONTEXT_CREATED:
      context_seen(rd->context, 1);
      if (!context_device(rd->context, &ordinal))
        return;
      driver_load();
      describe_device(ordinal);
      /* PM before PC: counter availability is read before any session. */
      mprof_cupti_pm_device(ordinal);
      if (g.cfg.pc_mode != MPROF_CUPTI_PC_OFF)
        pc_setup(rd->context, ordinal);
      return;
    case CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING:
      context_seen(rd->context, 0);
      pc_teardown(rd->context);
      return;
    case CUPTI_CBID_RESOURCE_MODULE_LOADED: on_module_loaded(rd); return;
    case CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING:
      /* The range ends at the next load, not here. */
      pc_drain_context(rd->context, PC_PERIODIC);
      return;
    default: return;
    }
  }
  /* NVTX ranges, cudaProfilerStart/Stop and launches a capture window
   * listens to (window.c). */
  window_callback(domain, cbid, cbdata);
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API &&
      g.cfg.pc_mode == MPROF_CUPTI_PC_SERIALIZED) {
    /* Serialized mode: each launch is its own range; collect it now, before
     * the configured buffer has to hold more than one kernel's records. */
    const CUpti_CallbackData *cd = (const CUpti_CallbackData *)cbdata;
    if (cd->callbackSite == CUPTI_API_EXIT)
      pc_drain_context(cd->context, PC_AFTER_RANGE_END);
  }
}

const CUpti_CallbackId launch_cbids[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernelMultiDevice,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
};
const size_t launch_cbid_count = sizeof launch_cbids / sizeof launch_cbids[0];

static void enable_resource(CUpti_CallbackId cbid, const char *name) {
  char what[96];
  snprintf(what, sizeof what, "cuptiEnableCallback(%s)", name);
  ok(cuptiEnableCallback(1, g.subscriber, CUPTI_CB_DOMAIN_RESOURCE, cbid),
     what);
}
void setup_callbacks(void) {
  enable_resource(CUPTI_CBID_RESOURCE_CONTEXT_CREATED, "CONTEXT_CREATED");
  enable_resource(CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING,
                  "CONTEXT_DESTROY_STARTING");
  enable_resource(CUPTI_CBID_RESOURCE_MODULE_LOADED, "MODULE_LOADED");
  enable_resource(CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING,
                  "MODULE_UNLOAD_STARTING");
  if (g.cfg.pc_mode != MPROF_CUPTI_PC_SERIALIZED || !g.pc_allowed)
    return;
  for (size_t i = 0; i < launch_cbid_count; i++)
    ok(cuptiEnableCallback(1, g.subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                           launch_cbids[i]),
       "cuptiEnableCallback(launch)");
}
