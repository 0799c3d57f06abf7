/* A producer that links only mprof-writer (static, libc only). */
#include <mprof/writer.h>
#include <stdio.h>

int main(int argc, char **argv) {
  mprof_writer *w;
  if (argc != 2 || mprof_writer_open(&w, argv[1], NULL) != 0)
    return 1;
  mprof_writer_meta(w, "tool", "writer-only consumer");
  if (mprof_writer_finish(w) != 0)
    return 1;
  puts("writer-only ok");
  return 0;
}
