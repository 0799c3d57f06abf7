/*
 * mprof doctor — can this machine capture? One line per check, with the fix.
 * mprof setup — build the CUPTI producer when this install lacks it.
 *
 * SPDX-License-Identifier: MIT
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

typedef enum check_state { CHECK_OK, CHECK_WARN, CHECK_FAIL } check_state;

static int use_colour(void) {
  return isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
}

static void report(check_state state, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void report(check_state state, const char *what, const char *fmt, ...) {
  static const char *const words[] = {"ok", "warn", "fail"};
  static const char *const colours[] = {"\033[32m", "\033[33m", "\033[31m"};
  int colour = use_colour();
  printf("%s%-4s%s  %-10s  ", colour ? colours[state] : "", words[state],
         colour ? "\033[0m" : "", what);
  va_list ap;
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  putchar('\n');
}

/* First line of a small text file, without its newline. */
static int read_first_line(const char *path, char *out, size_t size) {
  FILE *f = fopen(path, "r");
  if (!f)
    return -1;
  if (!fgets(out, (int)size, f)) {
    fclose(f);
    return -1;
  }
  fclose(f);
  out[strcspn(out, "\n")] = '\0';
  return 0;
}

/* The value of "Key: value" in /proc/driver/nvidia/params, or -1. */
static long nvidia_param(const char *params, const char *key) {
  FILE *f = fopen(params, "r");
  if (!f)
    return -1;
  char line[256];
  long value = -1;
  size_t len = strlen(key);
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, key, len) == 0 && line[len] == ':') {
      value = strtol(line + len + 1, NULL, 10);
      break;
    }
  }
  fclose(f);
  return value;
}

static int count_gpus(const char *proc_root) {
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/driver/nvidia/gpus", proc_root);
  DIR *d = opendir(path);
  if (!d)
    return 0;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)))
    if (e->d_name[0] != '.')
      n++;
  closedir(d);
  return n;
}

int cmd_doctor(int argc, char **argv) {
  (void)argv;
  if (argc > 1)
    return cli_usage_error("doctor", "takes no arguments");
  /* MPROF_PROC_ROOT lets the tests point the checks at a fake /proc. */
  const char *proc = getenv("MPROF_PROC_ROOT");
  if (!proc || !*proc)
    proc = "/proc";
  int can_capture = 1;
  char path[PATH_MAX], text[512];

  snprintf(path, sizeof path, "%s/driver/nvidia/version", proc);
  if (read_first_line(path, text, sizeof text) == 0) {
    const char *v = strstr(text, "Kernel Module");
    report(CHECK_OK, "driver", "%s", v ? v : text);
  } else {
    report(CHECK_FAIL, "driver",
           "no NVIDIA kernel driver (%s missing): install the NVIDIA driver "
           "or run on a GPU machine",
           path);
    can_capture = 0;
  }
  int gpus = count_gpus(proc);
  if (gpus > 0)
    report(CHECK_OK, "gpu", "%d GPU%s visible to the driver", gpus,
           gpus == 1 ? "" : "s");
  else {
    report(CHECK_FAIL, "gpu",
           "no GPU listed under %s/driver/nvidia/gpus: check nvidia-smi and "
           "that the container has the GPU devices",
           proc);
    can_capture = 0;
  }

  const char *cuda = cli_cuda_home();
  if (cuda)
    report(CHECK_OK, "cuda", "CUDA toolkit at %s", cuda);
  else
    report(CHECK_WARN, "cuda",
           "no CUDA toolkit found (set CUDA_HOME or install it under "
           "/usr/local/cuda); needed for libcupti and nvdisasm");

  if (cli_find_cupti(path, sizeof path) == 0)
    report(CHECK_OK, "cupti", "%s", path);
  else {
    report(CHECK_FAIL, "cupti",
           "libcupti.so.13 not found under CUDA_HOME or /usr/local/cuda: "
           "install the CUDA 13 toolkit (it ships CUPTI) or set CUDA_HOME");
    can_capture = 0;
  }

  if (cli_find_producer(path, sizeof path) == 0)
    report(CHECK_OK, "producer", "%s", path);
  else {
    report(CHECK_FAIL, "producer",
           "libmprof-cupti.so not found: run 'mprof setup' to build it");
    can_capture = 0;
  }

  if (cli_find_tool("nvdisasm", "MPROF_NVDISASM", path, sizeof path) == 0)
    report(CHECK_OK, "nvdisasm", "%s", path);
  else
    report(CHECK_WARN, "nvdisasm",
           "not found on PATH, in CUDA_HOME/bin or /usr/local/cuda/bin: "
           "traces get no SASS until 'mprof sass' runs where it exists");

  snprintf(path, sizeof path, "%s/driver/nvidia/params", proc);
  long admin_only = nvidia_param(path, "RmProfilingAdminOnly");
  if (admin_only == 0)
    report(CHECK_OK, "permission",
           "PC sampling allowed for all users (RmProfilingAdminOnly: 0)");
  else if (admin_only == 1 && geteuid() == 0)
    report(CHECK_OK, "permission",
           "PC sampling restricted to admins, and you are root");
  else if (admin_only == 1)
    report(CHECK_WARN, "permission",
           "PC sampling is restricted to admins "
           "(NVreg_RestrictProfilingToAdminUsers=1): run as root, or add "
           "'options nvidia NVreg_RestrictProfilingToAdminUsers=0' to "
           "/etc/modprobe.d/nvidia-profiling.conf and reload the driver");
  else
    report(CHECK_WARN, "permission",
           "cannot read %s; PC sampling may be refused", path);

  if (can_capture)
    printf("capture can work: mprof record -- ./app\n");
  else
    printf("capture cannot work yet: fix the lines marked fail\n");
  return can_capture ? CLI_EXIT_OK : CLI_EXIT_FAILED;
}

/* PATH = the first of "SELF/../RELATIVE" (an install moved to another
 * prefix) and FALLBACK (where this build was configured to go) that has
 * PROBE in it. */
static int find_installed(char *out, size_t size, const char *relative,
                          const char *fallback, const char *probe) {
  char self[PATH_MAX / 2], candidate[2 * PATH_MAX + 64];
  if (cli_self_dir(self, sizeof self) == 0) {
    snprintf(candidate, sizeof candidate, "%s/../%s/%s", self, relative, probe);
    if (access(candidate, R_OK) == 0) {
      snprintf(out, size, "%s/../%s", self, relative);
      return 0;
    }
  }
  snprintf(candidate, sizeof candidate, "%s/%s", fallback, probe);
  if (access(candidate, R_OK) == 0) {
    snprintf(out, size, "%s", fallback);
    return 0;
  }
  return -1;
}

int cmd_setup(int argc, char **argv) {
  (void)argv;
  if (argc > 1)
    return cli_usage_error("setup", "takes no arguments");
  char path[PATH_MAX];
  if (cli_find_producer(path, sizeof path) == 0) {
    printf("the CUPTI producer is present: %s\n", path);
    return CLI_EXIT_OK;
  }
  char src[PATH_MAX], cupti[PATH_MAX], dest[PATH_MAX];
  char libdir[PATH_MAX], includedir[PATH_MAX], writer[PATH_MAX + 32];
  if (find_installed(src, sizeof src, "share/mprof/producer-src",
                     MPROF_DATADIR "/producer-src", "injection.c") != 0 &&
      find_installed(src, sizeof src, "producers/cupti",
                     MPROF_SOURCE_DIR "/producers/cupti", "injection.c") != 0) {
    fprintf(stderr, "mprof setup: the producer's sources are not installed "
                    "(expected " MPROF_DATADIR "/producer-src); reinstall "
                    "mprof from source with the CUDA toolkit present\n");
    return CLI_EXIT_FAILED;
  }
  const char *cuda = cli_cuda_home();
  if (!cuda || cli_find_cupti(cupti, sizeof cupti) != 0) {
    fprintf(stderr, "mprof setup: the CUDA toolkit with CUPTI was not found; "
                    "install CUDA 13 or set CUDA_HOME\n");
    return CLI_EXIT_USAGE;
  }
  *strrchr(cupti, '/') = '\0';
  if ((find_installed(libdir, sizeof libdir, "lib", MPROF_LIBDIR,
                      "libmprof-writer.a") != 0 &&
       find_installed(libdir, sizeof libdir, "lib64", MPROF_LIBDIR,
                      "libmprof-writer.a") != 0) ||
      find_installed(includedir, sizeof includedir, "include", MPROF_INCLUDEDIR,
                     "mprof/writer.h") != 0) {
    fprintf(stderr, "mprof setup: libmprof-writer.a or the mprof headers are "
                    "missing; reinstall mprof\n");
    return CLI_EXIT_FAILED;
  }
  snprintf(writer, sizeof writer, "%s/libmprof-writer.a", libdir);
  if (cli_setup_path(dest, sizeof dest) != 0) {
    fprintf(stderr, "mprof setup: neither XDG_DATA_HOME nor HOME is set\n");
    return CLI_EXIT_USAGE;
  }
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%s", dest);
  *strrchr(dir, '/') = '\0';
  char *command = NULL;
  /* C sources with cc, the PM-sampling module with c++ (CUPTI's profiler
   * host header is C++), linked by c++ with its runtime built in. */
  if (asprintf(&command,
               "mkdir -p '%s/producer-obj' && cd '%s/producer-obj' && "
               "cc -O2 -std=c11 -D_GNU_SOURCE -fPIC -fvisibility=hidden "
               "-I'%s/include' -I'%s/targets/x86_64-linux/include' -I'%s' "
               "-c '%s'/*.c && "
               "c++ -O2 -std=c++17 -fPIC -fvisibility=hidden "
               "-I'%s/include' -I'%s/targets/x86_64-linux/include' -I'%s' "
               "-c '%s'/*.cpp && "
               "c++ -shared -Wl,--version-script='%s/exports.map' *.o '%s' "
               "-L'%s' -lcupti -lpthread -ldl -static-libstdc++ "
               "-static-libgcc -Wl,-rpath,'%s' -o '%s'",
               dir, dir, cuda, cuda, includedir, src, cuda, cuda, includedir,
               src, src, writer, cupti, cupti, dest) < 0) {
    fprintf(stderr, "mprof setup: out of memory\n");
    return CLI_EXIT_FAILED;
  }
  printf("building the CUPTI producer:\n  %s\n", command);
  fflush(stdout);
  int status = system(command);
  free(command);
  if (status != 0 || access(dest, R_OK) != 0) {
    fprintf(stderr, "mprof setup: the build failed (see the compiler output "
                    "above)\n");
    return CLI_EXIT_FAILED;
  }
  printf("built %s\n", dest);
  return CLI_EXIT_OK;
}
