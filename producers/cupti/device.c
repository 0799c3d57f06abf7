/*
 * mprof CUPTI producer — driver queries (dlsym: the producer must not link
 * libcuda) that describe each device from its attributes.
 *
 * SPDX-License-Identifier: MIT
 */
#include <dlfcn.h>
#include <string.h>

#include "producer.h"

/* ---- driver queries (dlsym: the producer must not link libcuda) --------- */

/* Called at start-up and again at each new context: when NVTX started the
 * producer before the program's first CUDA call, libcuda is not loaded yet
 * at start-up, but it is by the time a context exists. */
void driver_load(void) {
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  static int loaded;
  pthread_mutex_lock(&lock);
  if (loaded) {
    pthread_mutex_unlock(&lock);
    return;
  }
  /* Inside cuInit libcuda is already loaded; NOLOAD never loads a second. */
  void *cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!cuda)
    cuda = dlopen("libcuda.so", RTLD_LAZY | RTLD_NOLOAD);
  if (!cuda) {
    pthread_mutex_unlock(&lock);
    note("libcuda is not loaded yet; the driver describes devices once it "
         "is");
    return;
  }
  loaded = 1;
  g.cu.device_get = (cu_device_get_fn)dlsym(cuda, "cuDeviceGet");
  g.cu.attribute =
      (cu_device_get_attribute_fn)dlsym(cuda, "cuDeviceGetAttribute");
  g.cu.name = (cu_device_get_name_fn)dlsym(cuda, "cuDeviceGetName");
  g.cu.total_mem = (cu_device_total_mem_fn)dlsym(cuda, "cuDeviceTotalMem_v2");
  g.cu.uuid = (cu_device_get_uuid_fn)dlsym(cuda, "cuDeviceGetUuid_v2");
  g.cu.driver_version =
      (cu_driver_get_version_fn)dlsym(cuda, "cuDriverGetVersion");
  g.cu.push = (cu_ctx_push_fn)dlsym(cuda, "cuCtxPushCurrent_v2");
  g.cu.pop = (cu_ctx_pop_fn)dlsym(cuda, "cuCtxPopCurrent_v2");
  g.cu.synchronize = (cu_ctx_synchronize_fn)dlsym(cuda, "cuCtxSynchronize");
  pthread_mutex_unlock(&lock);
  int driver_version = 0;
  if (g.cu.driver_version &&
      g.cu.driver_version(&driver_version) == CUDA_SUCCESS)
    meta_u64("cuda.driver_version", (uint64_t)driver_version);
}

static uint32_t attribute(CUdevice dev, CUdevice_attribute which) {
  int value = 0;
  if (!g.cu.attribute || g.cu.attribute(&value, which, dev) != CUDA_SUCCESS ||
      value < 0)
    return 0;
  return (uint32_t)value;
}

/* Describe device @p ordinal once, from the driver's attributes. */
void describe_device(uint32_t ordinal) {
  pthread_mutex_lock(&g.pc_lock);
  for (int i = 0; i < g.described_count; i++) {
    if (g.devices_described[i] == ordinal) {
      pthread_mutex_unlock(&g.pc_lock);
      return;
    }
  }
  if (g.described_count <
      (int)(sizeof g.devices_described / sizeof g.devices_described[0]))
    g.devices_described[g.described_count++] = ordinal;
  pthread_mutex_unlock(&g.pc_lock);

  mprof_cupti_translate_device(g.tr, ordinal);
  CUdevice dev = 0;
  if (!g.cu.device_get || g.cu.device_get(&dev, (int)ordinal) != CUDA_SUCCESS)
    return;
  mprof_device_record rec;
  memset(&rec, 0, sizeof rec);
  rec.cc_major = attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  rec.cc_minor = attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  rec.sm_count = attribute(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  rec.warp_size = attribute(dev, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  rec.max_threads_per_block =
      attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  rec.max_threads_per_sm =
      attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  rec.max_blocks_per_sm =
      attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
  if (rec.warp_size)
    rec.max_warps_per_sm = rec.max_threads_per_sm / rec.warp_size;
  rec.max_regs_per_block =
      attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
  rec.max_regs_per_sm =
      attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
  rec.max_shared_per_block =
      attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  rec.max_shared_per_sm =
      attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  rec.core_clock_khz = attribute(dev, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  rec.memory_clock_khz = attribute(dev, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
  rec.memory_bus_width =
      attribute(dev, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  rec.l2_size = attribute(dev, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  size_t bytes = 0;
  if (g.cu.total_mem && g.cu.total_mem(&bytes, dev) == CUDA_SUCCESS)
    rec.global_memory = bytes;
  CUuuid uuid;
  if (g.cu.uuid && g.cu.uuid(&uuid, dev) == CUDA_SUCCESS)
    memcpy(&rec.uuid_lo, uuid.bytes, sizeof rec.uuid_lo);
  char name[256] = "";
  if (g.cu.name && g.cu.name(name, (int)sizeof name, dev) != CUDA_SUCCESS)
    name[0] = '\0';
  name[sizeof name - 1] = '\0';
  mprof_cupti_translate_device_info(g.tr, ordinal, &rec, name);
}
