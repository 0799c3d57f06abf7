/*
 * A stand-in for a CUDA program, for testing `mprof record` with several
 * processes, crashes and signals on a machine without a GPU: it loads the
 * injection library (MPROF_CUPTI_LIB) and calls InitializeInjection() as
 * cuInit would, then does what its arguments say, in order:
 *
 *   init          load the producer (what a process's first cuInit does)
 *   fork          fork; the child runs the rest of the arguments too
 *   spawn         run this program again with the rest of the arguments
 *                 and wait for it (a launcher starting a worker)
 *   wait          wait for every child
 *   sleep MS      sleep
 *   abort | segv | term | kill   die by SIGABRT, a host segfault, SIGTERM
 *                 or SIGKILL
 *   exit N        exit(N), running the exit handlers
 *   fsize-of PATH no file of this process may grow past PATH's size now
 *                 (RLIMIT_FSIZE, SIGXFSZ ignored: writes past it fail with
 *                 EFBIG, as on a full disk)
 *
 * SPDX-License-Identifier: MIT
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void load_producer(void) {
  const char *path = getenv("MPROF_CUPTI_LIB");
  void *lib = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
  int (*init)(void) =
      lib ? (int (*)(void))dlsym(lib, "InitializeInjection") : NULL;
  if (!init) {
    fprintf(stderr, "process_app: cannot load %s\n", path ? path : "(unset)");
    exit(3);
  }
  init();
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "init") == 0) {
      load_producer();
    } else if (strcmp(a, "fork") == 0) {
      if (fork() < 0)
        return 4;
    } else if (strcmp(a, "spawn") == 0) {
      pid_t pid = fork();
      if (pid == 0) {
        argv[i] = argv[0];
        execv("/proc/self/exe", argv + i);
        _exit(5);
      }
      int status = 0;
      waitpid(pid, &status, 0);
      return 0;
    } else if (strcmp(a, "wait") == 0) {
      while (wait(NULL) > 0)
        ;
    } else if (strcmp(a, "sleep") == 0 && i + 1 < argc) {
      long ms = atol(argv[++i]);
      struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
      nanosleep(&ts, NULL);
    } else if (strcmp(a, "abort") == 0) {
      abort();
    } else if (strcmp(a, "segv") == 0) {
      volatile int *nowhere = NULL;
      *nowhere = 1;
    } else if (strcmp(a, "term") == 0) {
      raise(SIGTERM);
    } else if (strcmp(a, "kill") == 0) {
      raise(SIGKILL);
    } else if (strcmp(a, "fsize-of") == 0 && i + 1 < argc) {
      struct stat st;
      if (stat(argv[++i], &st) != 0)
        return 6;
      struct rlimit limit;
      getrlimit(RLIMIT_FSIZE, &limit);
      limit.rlim_cur = (rlim_t)st.st_size;
      signal(SIGXFSZ, SIG_IGN);
      if (setrlimit(RLIMIT_FSIZE, &limit) != 0)
        return 6;
    } else if (strcmp(a, "exit") == 0 && i + 1 < argc) {
      exit(atoi(argv[++i]));
    } else {
      fprintf(stderr, "process_app: unknown step '%s'\n", a);
      return 2;
    }
  }
  return 0;
}
