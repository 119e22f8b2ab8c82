/*
 * persist_floor: what one persist costs on this machine without Java in the way, so that a
 * scheme's insert throughput can be compared with the floor its persist count sets.
 *
 * Maps a file (give one on tmpfs or DAX), then for N random 64-byte lines of it:
 * store 8 bytes, clwb (clflushopt/clflush if clwb is missing), sfence. Reports ns per
 * store+persist, ns per plain store (the same loop without flush and fence), and the upper
 * bound (the ceiling the persist cost alone sets) on inserts per second of a scheme that issues
 * 1 or 2 such persists per insert.
 *
 * Then Dash-EH's insert as C code with nothing else in the loop, over the same file cut into
 * 18,432-byte segments (64 buckets of 256 bytes after a 64-byte header): per insert a directory
 * entry (an array in DRAM), the segment header's line, the four lines of the target and probing
 * buckets loaded before the two bucket locks are taken with CAS, the 16-byte pair stored and
 * persisted, the metadata word stored and persisted, the locks released. Reported with and
 * without the two persists: the floor the memory and the persist order set for a Dash insert
 * on this machine, to compare with the workload's insert phase and with the issues' C++ figures.
 * Then the same pattern with its commit word in a line of a separate area (one line per segment
 * after the segments, loaded before the locks as the bucket lines are), where CCEH's and group
 * hashing's bitmaps keep theirs, against the word in the bucket's own first line, three rounds.
 *
 * Build and run (x86-64 Linux):
 *   gcc -O2 -o /tmp/persist_floor native/bench/persist_floor.c
 *   /tmp/persist_floor /dev/shm/floor.bin 1024 2000000
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static int has_clwb, has_clflushopt;

static inline void flush(volatile char *p) {
  if (has_clwb) {
    __asm__ volatile(".byte 0x66; xsaveopt %0" : "+m"(*p));
  } else if (has_clflushopt) {
    __asm__ volatile(".byte 0x66; clflush %0" : "+m"(*p));
  } else {
    __asm__ volatile("clflush %0" : "+m"(*p));
  }
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

/*
 * Dash's insert pattern (above) over the file; persist != 0 adds the two persists. persist == 2
 * also releases each lock by reading its word again after the persists (load, then store of word
 * + 1), as pmhash's VersionLock.unlock did before 2026-11-27; 1 stores the word it locked, as the
 * holder knows it. The lock word shares the bucket's first line with the metadata just flushed.
 * persist == 3 is 1 with the commit word in the segment's line of the area after the segments.
 */
static double dash_insert(char *m, size_t bytes, long ops, int persist) {
  enum { SEGMENT = 18432, BUCKET = 256, BUCKETS = 64 };
  size_t segments = bytes / (SEGMENT + 64), entries = 1; /* + 64: the commit area's line */
  char *commits = m + segments * SEGMENT;
  int shift = 64;
  while (entries < segments) {
    entries <<= 1;
    shift--;
  }
  uint64_t *directory = malloc(entries * sizeof *directory);
  if (directory == NULL) {
    perror("malloc");
    exit(1);
  }
  for (size_t i = 0; i < entries; i++) {
    directory[i] = (i % segments) * SEGMENT;
  }
  uint64_t x = 0x2545F4914F6CDD1Dull, sum = 0;
  double t0 = now();
  for (long i = 0; i < ops; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    uint64_t entry = directory[shift == 64 ? 0 : x >> shift];
    char *seg = m + entry;
    char *commit_line = persist == 3 ? commits + 64 * (entry / SEGMENT) : NULL;
    sum += *(volatile uint64_t *)(seg + 16); /* the header's recovery version */
    unsigned y = (unsigned)(x >> 8) & (BUCKETS - 1);
    char *b1 = seg + 64 + y * BUCKET, *b2 = seg + 64 + ((y + 1) & (BUCKETS - 1)) * BUCKET;
    for (int line = 0; line < 4; line++) {
      sum += *(volatile uint64_t *)(b1 + 64 * line) + *(volatile uint64_t *)(b2 + 64 * line);
    }
    if (commit_line != NULL) {
      sum += *(volatile uint64_t *)commit_line;
    } else {
      commit_line = b1;
    }
    uint32_t *lock1 = (uint32_t *)b1, *lock2 = (uint32_t *)b2;
    uint32_t v1 = *lock1 & 0x7FFFFFFF, v2 = *lock2 & 0x7FFFFFFF;
    while (!__sync_bool_compare_and_swap(lock1, v1, v1 | 0x80000000u)) {
      v1 = *lock1 & 0x7FFFFFFF;
    }
    while (!__sync_bool_compare_and_swap(lock2, v2, v2 | 0x80000000u)) {
      v2 = *lock2 & 0x7FFFFFFF;
    }
    char *pair = b1 + 32 + 16 * (int)((x >> 20) % 14);
    *(volatile uint64_t *)pair = x;
    *(volatile uint64_t *)(pair + 8) = (uint64_t)i;
    if (persist) {
      flush(pair);
      __asm__ volatile("sfence" ::: "memory");
    }
    *(volatile uint32_t *)(commit_line + 4) += 1; /* the bitmap */
    if (persist) {
      flush(commit_line);
      __asm__ volatile("sfence" ::: "memory");
    }
    if (persist == 2) {
      v2 = *(volatile uint32_t *)lock2 & 0x7FFFFFFF;
      v1 = *(volatile uint32_t *)lock1 & 0x7FFFFFFF;
    }
    __atomic_store_n(lock2, (v2 + 1) & 0x7FFFFFFF, __ATOMIC_RELEASE);
    __atomic_store_n(lock1, (v1 + 1) & 0x7FFFFFFF, __ATOMIC_RELEASE);
  }
  double ns = (now() - t0) / ops;
  free(directory);
  if (sum == 1) {
    puts(""); /* keeps sum live */
  }
  return ns;
}


int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s FILE MIB OPS\n", argv[0]);
    return 2;
  }
  size_t bytes = (size_t)atol(argv[2]) << 20;
  long ops = atol(argv[3]);
  unsigned a, b, c, d;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
    has_clwb = (b >> 24) & 1;
    has_clflushopt = (b >> 23) & 1;
  }
  int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0) {
    perror(argv[1]);
    return 1;
  }
  char *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) {
    perror("mmap");
    return 1;
  }
  for (size_t i = 0; i < bytes; i += 4096) {
    m[i] = 1; /* fault every page in first */
  }
  size_t lines = bytes / 64;
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (int round = 0; round < 2; round++) {
    double t0 = now();
    for (long i = 0; i < ops; i++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      volatile char *p = m + (x % lines) * 64;
      *(volatile uint64_t *)p = (uint64_t)i;
      if (round == 0) {
        flush(p);
        __asm__ volatile("sfence" ::: "memory");
      }
    }
    double ns = (now() - t0) / ops;
    if (round == 0) {
      printf("store + %s + sfence, random line of %zu MiB: %.1f ns\n",
             has_clwb ? "clwb" : has_clflushopt ? "clflushopt" : "clflush", bytes >> 20, ns);
      printf("  ceiling for a scheme with 1 persist per insert: %.2f Mops/s; with 2: %.2f Mops/s (nothing else counted)\n", 1e3 / ns, 1e3 / (2 * ns));
    } else {
      printf("plain store, random line: %.1f ns\n", ns);
    }
  }
  double plain = dash_insert(m, bytes, ops, 0), persisted = dash_insert(m, bytes, ops, 1);
  printf("Dash insert pattern (directory, header, 2 buckets, 2 locks): %.1f ns without persists, %.1f ns with its 2 (%.2f Mops/s)\n",
         plain, persisted, 1e3 / persisted);
  for (int round = 0; round < 3; round++) {
    double own = dash_insert(m, bytes, ops, 1), apart = dash_insert(m, bytes, ops, 3);
    printf("  commit word in the bucket's first line: %.1f ns; in a line of an area of its own: %.1f ns\n", own, apart);
  }
  double reread = dash_insert(m, bytes, ops, 2);
  printf("  the same, each lock released by reading its flushed line again: %.1f ns (%.2f Mops/s)\n", reread, 1e3 / reread);
  munmap(m, bytes);
  close(fd);
  unlink(argv[1]);
  return 0;
}
