// Compiled as C++11 with -pedantic -Werror: the public API links from C++.
#include <mprof/mprof.h>
#include <mprof/synth.h> /* in the source tree only: not installed */

int main() {
  mprof_trace *trace = nullptr;
  mprof_trace_free(trace);
  return sizeof(mprof_launch_record) == 40 ? 0 : 1;
}
