/*
 * runtime/memcopy.h — memcpy for payload copies whose two addresses may differ modulo 64: the
 * collectives' block copies and the point-to-point packs and unpacks (runtime/request.h, the shm
 * transport's cells).
 */
#ifndef HINT_RT_MEMCOPY_H
#define HINT_RT_MEMCOPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* glibc 2.36 moves 2113 B to 1 MiB with `rep movsb` (its x86_rep_movsb_threshold 0x840 and
   rep_movsb_stop_threshold), which on this machine's AMD EPYC runs at 3.5 GB/s instead of 57 when
   the destination lies 1-15 bytes past the source modulo 64 (1.4-1.9x slower at most other
   nonzero offsets): a 24577-byte allgather block copied to rbuf + p * 24577 took 7.0 us instead
   of 0.42 (issue 18 item 4: most of the "cliffs" measured at an odd first size of the upper
   algorithm), and a message received into a buffer at such an offset pays the same. Copies of
   more than 2 KiB whose destination and source differ modulo 64 go to rt_memcpy_vec, the rest to
   memcpy. rt_memcpy_vec: a vector loop (unaligned loads, aligned stores: 55-58 GB/s at every
   offset in cache) where memcpy is that slow, memcpy where it is not (measured once, memcopy.c). */
void rt_memcpy_vec(void *dst, const void *src, size_t n);
/* The rule rt_memcpy_vec chooses by, from the fastest timings of the same misaligned copy: the
   loop only where memcpy took more than twice its time (nonzero: take the loop). */
int rt_memcpy_loop_wins(long memcpy_ns, long loop_ns);
/* What rt_memcpy_vec chose here: "avx2", "sse2" (the loop) or "memcpy". */
const char *rt_memcpy_kernel(void);
/* The loop itself, whatever rt_memcpy_vec chose (for the tests: where memcpy is chosen, rt_memcpy
   never runs it). */
void rt_memcpy_loop(void *dst, const void *src, size_t n);
static inline void rt_memcpy(void *dst, const void *src, size_t n)
{
    if (n > 2048 && (((uintptr_t)dst - (uintptr_t)src) & 63) != 0)
        rt_memcpy_vec(dst, src, n);
    else
        memcpy(dst, src, n);
}

#endif
