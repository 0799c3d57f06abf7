/* A program outside the project that writes and reads a trace through the
 * installed headers and libraries. */
#include <mprof/mprof.h>
#include <stdio.h>

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  if (mprof_synth_write(argv[1], NULL) != 0) {
    fprintf(stderr, "%s\n", mprof_error_last());
    return 1;
  }
  mprof_trace *t;
  if (mprof_trace_open(&t, argv[1], NULL) != 0) {
    fprintf(stderr, "%s\n", mprof_error_last());
    return 1;
  }
  size_t n;
  mprof_trace_launches(t, &n);
  printf("mprof %s: %zu launches\n", mprof_version(), n);
  mprof_trace_free(t);
  return n == 10000 ? 0 : 1;
}
