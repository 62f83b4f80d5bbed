/* hint-copy-offsets: what a copy costs when its destination lies off its source modulo 64, for
 * memcpy, the vector loop (runtime/copy_kernel.h) and rt_memcpy (what the collectives' block copies
 * and the point-to-point packs and unpacks call), beside memcpy's aligned time. glibc 2.36's memcpy
 * copies 2113 B to 1 MiB with `rep movsb`, which on AMD EPYC ran 17x slower at 1-15 bytes off;
 * rt_memcpy measures once per process whether the loop beats memcpy by 2x and takes it only then
 * (runtime/memcopy.c). This is the measurement the unit tests leave to a benchmark: a timed test
 * would pass or fail with the machine's load. Each time is the fastest of --rounds runs of 20 copies
 * (in cache), so a busy machine only lengthens some runs.
 *
 * usage: hint-copy-offsets [--bytes N] [--rounds R] [--help]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/memcopy.h"

typedef void (*copy_fn)(void *dst, const void *src, size_t n);

static void with_memcpy(void *d, const void *s, size_t n) { memcpy(d, s, n); }
static void with_rt_memcpy(void *d, const void *s, size_t n) { rt_memcpy(d, s, n); }

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Fastest of `rounds` runs of 20 copies of n bytes to dst + off, in microseconds per copy. */
static double fastest_us(copy_fn copy, unsigned char *dst, const unsigned char *src, size_t n, int off, int rounds)
{
    double best = 1e9;
    for (int r = 0; r < rounds; r++) {
        double t = now_s();
        for (int i = 0; i < 20; i++) {
            copy(dst + off, src, n);
            __asm__ volatile("" ::"r"(dst) : "memory");
        }
        t = now_s() - t;
        if (t < best)
            best = t;
    }
    return best / 20 * 1e6;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: hint-copy-offsets [--bytes N] [--rounds R] [--help]\n"
               "  Times memcpy, the vector loop and rt_memcpy copying N bytes (default 24577, an odd\n"
               "  collective block) to a destination 0-63 bytes off its source modulo 64; prints one\n"
               "  line per offset (us per copy, fastest of R runs of 20, default 200) and the kernel\n"
               "  rt_memcpy chose on this machine.\n");
}

int main(int argc, char **argv)
{
    size_t n = 24577;
    int rounds = 200;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--bytes") && i + 1 < argc) {
            n = strtoull(argv[++i], NULL, 0);
        } else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
            rounds = atoi(argv[++i]);
        } else {
            fprintf(stderr, "hint-copy-offsets: unknown or incomplete argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (n == 0 || n > (1u << 30) || rounds < 1) {
        fprintf(stderr, "hint-copy-offsets: --bytes must be 1 B to 1 GiB and --rounds at least 1\n");
        return 2;
    }
    size_t bytes = (n + 64 + 4095) / 4096 * 4096; /* aligned_alloc: a multiple of the alignment */
    unsigned char *src = aligned_alloc(4096, bytes), *dst = aligned_alloc(4096, bytes);
    if (!src || !dst) {
        fprintf(stderr, "hint-copy-offsets: cannot allocate 2 x %zu bytes\n", bytes);
        return 1;
    }
    memset(src, 1, bytes);
    memset(dst, 2, bytes);
    printf("%zu bytes; rt_memcpy chose: %s\n", n, rt_memcpy_kernel());
    printf("%6s %12s %12s %12s\n", "offset", "memcpy_us", "loop_us", "rt_memcpy_us");
    for (int off = 0; off < 64; off += off < 16 ? 1 : 8) {
        double m = fastest_us(with_memcpy, dst, src, n, off, rounds);
        double l = fastest_us(rt_memcpy_loop, dst, src, n, off, rounds);
        double r = fastest_us(with_rt_memcpy, dst, src, n, off, rounds);
        printf("%6d %12.3f %12.3f %12.3f\n", off, m, l, r);
    }
    free(src);
    free(dst);
    return 0;
}
