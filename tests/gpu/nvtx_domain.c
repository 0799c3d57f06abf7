/*
 * A start/end NVTX range in a named domain with a colour, for
 * tests/gpu/nvtx_step.py (PyTorch's torch.cuda.nvtx has neither domains nor
 * colours). NVTX v3 is header-only: built against the CUDA toolkit's
 * nvtx3 headers, it reaches the injection library through
 * NVTX_INJECTION64_PATH like every other NVTX user in the process.
 *
 * build: cc -shared -fPIC -I$CUDA/include nvtx_domain.c -o libnvtx_domain.so
 *        -ldl
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdint.h>
#include <string.h>

#include <nvtx3/nvToolsExt.h>

static nvtxDomainHandle_t domain_of(const char *name) {
  static nvtxDomainHandle_t handle;
  static char handle_name[64];
  if (!handle || strncmp(handle_name, name, sizeof handle_name) != 0) {
    handle = nvtxDomainCreateA(name);
    strncpy(handle_name, name, sizeof handle_name - 1);
  }
  return handle;
}

/* Start range @p message in domain @p domain with colour @p argb
 * (0xAARRGGBB); the id ends it. */
uint64_t nvtx_domain_range_start(const char *domain, const char *message,
                                 uint32_t argb) {
  nvtxEventAttributes_t attr;
  memset(&attr, 0, sizeof attr);
  attr.version = NVTX_VERSION;
  attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attr.colorType = NVTX_COLOR_ARGB;
  attr.color = argb;
  attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attr.message.ascii = message;
  return nvtxDomainRangeStartEx(domain_of(domain), &attr);
}

void nvtx_domain_range_end(const char *domain, uint64_t id) {
  nvtxDomainRangeEnd(domain_of(domain), id);
}
