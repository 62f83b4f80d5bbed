/*
 * runtime/memcopy.c — what rt_memcpy does with a copy of more than 2 KiB whose destination and
 * source differ modulo 64 (see memcopy.h): the vector loop (AVX2 where the CPU has it, else SSE2)
 * where glibc's memcpy is slow at such offsets, memcpy itself where it is not. Which one is
 * measured once, on the first such copy: on the AMD EPYC the slow case was measured on, memcpy of
 * 4 KiB to 8 bytes past its source took 27x the loop's time (rep movsb); on an Intel Xeon the loop
 * took 1.2-1.5x memcpy's (24577 B at +8: 0.26 us against 0.17), so the loop everywhere would have
 * slowed every misaligned copy there. ~20 us on the EPYC, ~2 us on the Xeon, once per process.
 */
#include <time.h>

#include "runtime/copy_kernel.h"
#include "runtime/memcopy.h"

typedef void (*copy_fn)(void *dst, const void *src, size_t n);

#ifdef COPY_X86
COPY_KERNEL(vec_sse2, , __m128i, 16, _mm_loadu_si128, _mm_store_si128)
COPY_KERNEL(vec_avx2, __attribute__((target("avx2"))), __m256i, 32, _mm256_loadu_si256, _mm256_store_si256)
#endif

static void plain(void *dst, const void *src, size_t n) { memcpy(dst, src, n); }

#ifdef COPY_X86
enum { CAL_BYTES = 4096, CAL_OFF = 8, CAL_ROUNDS = 8 };

static long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

/* Fastest of CAL_ROUNDS timings of two copies, in cache: a busy machine only lengthens some. */
static long fastest(copy_fn f, unsigned char *dst, const unsigned char *src)
{
    long best = -1;
    for (int r = 0; r < CAL_ROUNDS; r++) {
        long t = now_ns();
        f(dst, src, CAL_BYTES);
        f(dst, src, CAL_BYTES);
        __asm__ volatile("" ::"r"(dst) : "memory");
        t = now_ns() - t;
        if (best < 0 || t < best)
            best = t;
    }
    return best;
}
#endif

/* The widest loop this CPU runs. */
static copy_fn loop_kernel(void)
{
#ifdef COPY_X86
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") ? vec_avx2 : vec_sse2;
#else
    return plain;
#endif
}

void rt_memcpy_loop(void *dst, const void *src, size_t n) { loop_kernel()(dst, src, n); }

int rt_memcpy_loop_wins(long memcpy_ns, long loop_ns) { return memcpy_ns > 2 * loop_ns; }

/* The loop only where memcpy takes more than twice its time at a misaligned offset. */
static copy_fn choose(void)
{
#ifdef COPY_X86
    _Alignas(64) unsigned char src[CAL_BYTES], dst[CAL_BYTES + 64]; /* on the stack: two threads may calibrate at once */
    copy_fn vec = loop_kernel();
    memset(src, 1, sizeof src);
    memset(dst, 0, sizeof dst);
    long with_memcpy = fastest(plain, dst + CAL_OFF, src), with_vec = fastest(vec, dst + CAL_OFF, src);
    return rt_memcpy_loop_wins(with_memcpy, with_vec) ? vec : plain;
#else
    return plain;
#endif
}

static copy_fn chosen;

void rt_memcpy_vec(void *dst, const void *src, size_t n)
{
    copy_fn f = __atomic_load_n(&chosen, __ATOMIC_RELAXED);
    if (f == NULL) {
        f = choose();
        __atomic_store_n(&chosen, f, __ATOMIC_RELAXED);
    }
    f(dst, src, n);
}

const char *rt_memcpy_kernel(void)
{
    copy_fn f = __atomic_load_n(&chosen, __ATOMIC_RELAXED);
    if (f == NULL)
        __atomic_store_n(&chosen, f = choose(), __ATOMIC_RELAXED);
#ifdef COPY_X86
    if (f == vec_avx2)
        return "avx2";
    if (f == vec_sse2)
        return "sse2";
#endif
    return "memcpy";
}
