/* A program outside the project that writes and reads a trace through the
 * installed headers and libraries. */
#include <mprof/mprof.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  mprof_writer *w;
  if (mprof_writer_open(&w, argv[1], NULL) != 0 ||
      mprof_writer_meta(w, "tool", "install consumer") != 0 ||
      mprof_writer_finish(w) != 0) {
    fprintf(stderr, "%s\n", mprof_error_last());
    return 1;
  }
  mprof_trace *t;
  if (mprof_trace_open(&t, argv[1], NULL) != 0) {
    fprintf(stderr, "%s\n", mprof_error_last());
    return 1;
  }
  const char *tool = mprof_trace_meta(t, "tool");
  char span[32];
  mprof_format_duration(span, sizeof span, 15597049);
  printf("mprof %s: tool = %s, %zu stall reasons, %s\n", mprof_version(),
         tool ? tool : "(none)", mprof_stall_reason_info_count(), span);
  int ok = tool && strcmp(tool, "install consumer") == 0 &&
           strcmp(span, "15.6 ms") == 0;
  mprof_trace_free(t);
  return ok ? 0 : 1;
}
