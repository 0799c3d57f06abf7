/* Compiled with -std=c99 -pedantic -Werror: the public API is plain C99. */
#include <mprof/mprof.h>
#include <mprof/synth.h> /* in the source tree only: not installed */

int main(void) {
  mprof_open_options opts = MPROF_OPEN_OPTIONS_INIT;
  return (int)opts.version - MPROF_OPEN_OPTIONS_VERSION;
}
