/*
 * mem_latency: what one cache miss costs on this machine without Java in the way, so that a
 * scheme's search throughput can be compared with the floor the memory sets.
 *
 * Three loops over a region of SIZE MiB (make it larger than the last-level cache):
 *   1. dependent loads through a random cycle of 64-byte lines of a MAP_SHARED file mapping
 *      (give a file on tmpfs or DAX: the mapping a pool uses), so each load waits for the one
 *      before: the latency of a miss, page walk included;
 *   2. the same cycle in anonymous memory with madvise(MADV_HUGEPAGE), when the kernel grants
 *      transparent huge pages (AnonHugePages in /proc/meminfo grows): the miss without most of
 *      the page walk;
 *   3. Dash's search pattern on the file mapping, as C code with nothing else in the loop:
 *      per operation a random 18,432-byte "segment", its header line and two adjacent 256-byte
 *      "buckets" read independently, then one "pair" line chosen by what the bucket held (a
 *      dependent load). Operations are independent, so the CPU overlaps the misses of
 *      consecutive operations as far as its out-of-order window allows;
 *   4. (x86-64) the same pattern with N more instructions per operation, register additions
 *      that touch no memory and depend on nothing loaded (N = 25, 50, 100, 200): how much of
 *      that overlap an operation's length in instructions leaves, i.e. what each instruction a
 *      search executes besides its loads costs once the table is larger than the cache.
 *
 * Build and run (x86-64 or arm64 Linux):
 *   gcc -O2 -o /tmp/mem_latency native/bench/mem_latency.c
 *   /tmp/mem_latency /dev/shm/latency.bin 1024 5000000
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define LINE 64
#define SEGMENT 18432
#define BUCKET 256
#define BUCKETS 64

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/* Links the lines of r into one random cycle (Sattolo's shuffle); returns the start. */
static uint64_t link_cycle(char *r, uint64_t lines) {
  uint64_t *order = malloc(lines * sizeof *order);
  if (order == NULL) {
    perror("malloc");
    exit(1);
  }
  for (uint64_t i = 0; i < lines; i++) {
    order[i] = i;
  }
  uint64_t seed = 42;
  for (uint64_t i = lines - 1; i > 0; i--) {
    uint64_t j = mix(seed++) % i;
    uint64_t t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  for (uint64_t i = 0; i < lines; i++) {
    *(uint64_t *)(r + order[i] * LINE) = order[(i + 1) % lines] * LINE;
  }
  uint64_t start = order[0] * LINE;
  free(order);
  return start;
}

static double chase(char *r, uint64_t lines, long steps) {
  uint64_t p = link_cycle(r, lines);
  for (long i = 0; i < steps / 10; i++) { /* warm the page tables a little */
    p = *(volatile uint64_t *)(r + p);
  }
  double t0 = now();
  for (long i = 0; i < steps; i++) {
    p = *(volatile uint64_t *)(r + p);
  }
  double ns = (now() - t0) / steps;
  if (p == 1) {
    puts(""); /* keeps p live */
  }
  return ns;
}

/* One operation of Dash's search pattern; PAD is extra instructions placed after its loads. */
#define DASH_PATTERN(NAME, PAD)                                                   \
  static double NAME(char *r, uint64_t bytes, long ops) {                         \
    uint64_t segments = bytes / SEGMENT, sum = 0;                                 \
    double t0 = now();                                                            \
    for (long i = 0; i < ops; i++) {                                              \
      uint64_t h = mix((uint64_t)i * 0x9E3779B97F4A7C15ULL);                      \
      char *seg = r + (h % segments) * SEGMENT;                                   \
      uint64_t y = (h >> 8) & (BUCKETS - 1);                                      \
      char *b1 = seg + LINE + y * BUCKET;                                         \
      char *b2 = seg + LINE + ((y + 1) & (BUCKETS - 1)) * BUCKET;                 \
      uint64_t header = *(volatile uint64_t *)seg;                                \
      uint32_t v1 = *(volatile uint32_t *)b1, v2 = *(volatile uint32_t *)b2;      \
      uint64_t fingerprints = *(volatile uint64_t *)(b1 + 8);                     \
      int slot = (int)((fingerprints ^ header ^ v1 ^ v2) % 14);                   \
      sum += *(volatile uint64_t *)(b1 + 32 + 16 * slot);                         \
      PAD;                                                                        \
    }                                                                             \
    double ns = (now() - t0) / ops;                                               \
    if (sum == 1) {                                                               \
      puts("");                                                                   \
    }                                                                             \
    return ns;                                                                    \
  }

DASH_PATTERN(dash_pattern, (void)0)

#if defined(__x86_64__)
/* 5 additions over 5 registers, none of them a load or a store: ALU work only. */
#define ADD5 "add $1,%%rcx\n\tadd $1,%%rdx\n\tadd $1,%%rsi\n\tadd $1,%%rdi\n\tadd $1,%%r8\n\t"
#define ADD25 ADD5 ADD5 ADD5 ADD5 ADD5
#define PAD(TEXT) __asm__ volatile(TEXT ::: "rcx", "rdx", "rsi", "rdi", "r8", "cc")
DASH_PATTERN(dash_pattern_25, PAD(ADD25))
DASH_PATTERN(dash_pattern_50, PAD(ADD25 ADD25))
DASH_PATTERN(dash_pattern_100, PAD(ADD25 ADD25 ADD25 ADD25))
DASH_PATTERN(dash_pattern_200, PAD(ADD25 ADD25 ADD25 ADD25 ADD25 ADD25 ADD25 ADD25))
#endif

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s FILE SIZE_MIB STEPS\n", argv[0]);
    return 2;
  }
  uint64_t bytes = strtoull(argv[2], NULL, 10) << 20;
  long steps = atol(argv[3]);
  int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0) {
    perror(argv[1]);
    return 1;
  }
  char *file = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (file == MAP_FAILED) {
    perror("mmap");
    return 1;
  }
  for (uint64_t i = 0; i < bytes; i += 8) {
    *(uint64_t *)(file + i) = mix(i);
  }
  printf("region %lu MiB, %ld steps\n", (unsigned long)(bytes >> 20), steps);
  printf("dependent load, file mapping (4 KiB pages):  %6.1f ns\n", chase(file, bytes / LINE, steps));
  printf("Dash search pattern, file mapping:           %6.1f ns per operation\n",
         dash_pattern(file, bytes, steps));
#if defined(__x86_64__)
  printf("  + 25 register additions per operation:      %6.1f ns\n", dash_pattern_25(file, bytes, steps));
  printf("  + 50:                                       %6.1f ns\n", dash_pattern_50(file, bytes, steps));
  printf("  + 100:                                      %6.1f ns\n", dash_pattern_100(file, bytes, steps));
  printf("  + 200:                                      %6.1f ns\n", dash_pattern_200(file, bytes, steps));
#endif
  munmap(file, bytes);
  close(fd);
  unlink(argv[1]);

  char *anon = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (anon == MAP_FAILED) {
    perror("mmap");
    return 1;
  }
  int advised = madvise(anon, bytes, MADV_HUGEPAGE) == 0;
  printf("dependent load, anonymous, MADV_HUGEPAGE %s: %6.1f ns\n", advised ? "granted" : "refused",
         chase(anon, bytes / LINE, steps));
  munmap(anon, bytes);
  return 0;
}
