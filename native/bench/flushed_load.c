/*
 * flushed_load: what a load of a line costs right after the line was persisted, against a load of
 * a line only stored to. On some CPUs (the AMD EPYC of the issues' measurements) clwb takes the
 * line out of the core's caches, so that a writer that reads a line it has just persisted (a lock
 * word beside the metadata it flushed) waits for memory (docs/persistence.md, "A flushed line,
 * read again").
 *
 * For random 64-byte lines of a 64 MiB buffer: store 8 bytes; then nothing, clwb + sfence, or
 * clflushopt + sfence (in turn); then one load of the line, timed with rdtscp between lfences.
 * Reports the mean cycles of the timed load for each (the timer's own cost is in all three).
 *
 * Build and run (x86-64 with clwb and clflushopt):
 *   gcc -O2 -mclwb -mclflushopt -o /tmp/flushed_load native/bench/flushed_load.c
 *   /tmp/flushed_load
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <x86intrin.h>

static inline uint64_t cycles(void) {
  unsigned aux;
  return __rdtscp(&aux);
}

int main(void) {
  size_t bytes = (size_t)64 << 20;
  char *buf = aligned_alloc(64, bytes);
  if (buf == NULL) {
    perror("aligned_alloc");
    return 1;
  }
  for (size_t i = 0; i < bytes; i += 64) {
    buf[i] = 1;
  }
  volatile uint64_t sink = 0;
  uint64_t total[3] = {0, 0, 0};
  long count[3] = {0, 0, 0};
  uint64_t x = 88172645463325252ull;
  for (int i = 0; i < 300000; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    char *p = buf + (x % (bytes / 64)) * 64;
    *(volatile uint64_t *)p = (uint64_t)i;
    int mode = i % 3;
    if (mode == 1) {
      _mm_clwb(p);
      _mm_sfence();
    } else if (mode == 2) {
      _mm_clflushopt(p);
      _mm_sfence();
    }
    _mm_lfence();
    uint64_t t0 = cycles();
    sink += *(volatile uint64_t *)p;
    _mm_lfence();
    total[mode] += cycles() - t0;
    count[mode]++;
  }
  printf("load of a line just stored to: %.0f cycles; after clwb + sfence: %.0f; after clflushopt + sfence: %.0f\n",
         (double)total[0] / count[0], (double)total[1] / count[1], (double)total[2] / count[2]);
  free(buf);
  return 0;
}
