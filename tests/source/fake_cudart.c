/*
 * A stand-in for libcudart.so.13 with just what mprof_source.cuh's host
 * side calls, "device" memory being host memory: lets check_host_writer.sh
 * run the header's writer on a machine without a GPU. Not a CUDA runtime.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef int cudaError_t;

cudaError_t cudaMalloc(void **ptr, size_t size) {
  *ptr = calloc(1, size ? size : 1);
  return *ptr ? 0 : 2; /* cudaErrorMemoryAllocation */
}
cudaError_t cudaFree(void *ptr) {
  free(ptr);
  return 0;
}
cudaError_t cudaMemset(void *ptr, int value, size_t size) {
  memset(ptr, value, size);
  return 0;
}
cudaError_t cudaMemcpy(void *dst, const void *src, size_t size, int kind) {
  (void)kind;
  memmove(dst, src, size);
  return 0;
}
static int current_device;
cudaError_t cudaGetDevice(int *device) {
  *device = current_device;
  return 0;
}
cudaError_t cudaSetDevice(int device) {
  current_device = device;
  return 0;
}
cudaError_t cudaDeviceSynchronize(void) { return 0; }
cudaError_t cudaGetLastError(void) { return 0; }
const char *cudaGetErrorString(cudaError_t err) {
  return err ? "fake error" : "no error";
}
/* Registration and launch hooks nvcc's generated code calls: accept all;
 * kernels never run. */
static void *fake_handle[4];
void **__cudaRegisterFatBinary(void *fatbin) {
  (void)fatbin;
  return fake_handle;
}
void __cudaRegisterFatBinaryEnd(void **handle) { (void)handle; }
void __cudaUnregisterFatBinary(void **handle) { (void)handle; }
void __cudaRegisterFunction(void) {}
void __cudaRegisterVar(void) {}
char __cudaInitModule(void **handle) {
  (void)handle;
  return 1;
}
cudaError_t __cudaGetKernel(void **kernel, const void *func) {
  *kernel = (void *)func;
  return 0;
}
unsigned __cudaPushCallConfiguration(void) { return 0; }
cudaError_t __cudaPopCallConfiguration(void) { return 0; }
cudaError_t __cudaLaunchKernel(void) { return 0; }
cudaError_t cudaLaunchKernel(void) { return 0; }
