/*
 * mprof — replay a fuzz corpus through the fuzz target without libFuzzer,
 * so the ordinary test build checks every corpus file.
 *
 * SPDX-License-Identifier: MIT
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return -1;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *data = (uint8_t *)malloc(len > 0 ? (size_t)len : 1);
  size_t got = data && len > 0 ? fread(data, 1, (size_t)len, f) : 0;
  fclose(f);
  LLVMFuzzerTestOneInput(data, got);
  free(data);
  return 0;
}

int main(int argc, char **argv) {
  int files = 0;
  for (int i = 1; i < argc; i++) {
    DIR *dir = opendir(argv[i]);
    if (!dir) {
      if (replay_file(argv[i]) == 0)
        files++;
      continue;
    }
    struct dirent *e;
    while ((e = readdir(dir))) {
      if (e->d_name[0] == '.')
        continue;
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
      if (replay_file(path) == 0)
        files++;
    }
    closedir(dir);
  }
  printf("replayed %d corpus files\n", files);
  return files > 0 ? 0 : 1;
}
