/*
 * runtime/copy_kernel.h — the vector copy loop behind rt_memcpy's temporal kernels
 * (runtime/memcopy.c) and the collectives' non-temporal ones (collectives/copy.c): one loop, the
 * store instruction a parameter. Only for those two files (it pulls in immintrin.h).
 */
#ifndef HINT_RT_COPY_KERNEL_H
#define HINT_RT_COPY_KERNEL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define COPY_X86 1

/* Copy plainly up to the first `align`-aligned destination byte; returns bytes done. */
static inline size_t copy_head(void *dst, const void *src, size_t n, size_t align)
{
    size_t mis = (uintptr_t)dst & (align - 1), h = mis ? align - mis : 0;
    if (h > n)
        h = n;
    memcpy(dst, src, h);
    return h;
}

/* One copy kernel: the destination aligned with plain stores (copy_head), then four vectors of W
   bytes a step with unaligned loads (the source may have any alignment) and STORE, the tail
   plainly. The non-temporal kernels (collectives/copy.c) stream (STORE a streaming store);
   rt_memcpy's temporal ones store aligned, which glibc's rep movsb does at a seventeenth of the
   speed when the destination is 1-15 bytes off the source modulo 64. */
#define COPY_KERNEL(NAME, ATTR, VT, W, LOAD, STORE)                                                        \
    ATTR static void NAME(void *dst, const void *src, size_t n)                                            \
    {                                                                                                      \
        size_t i = copy_head(dst, src, n, W);                                                              \
        char *d = dst;                                                                                     \
        const char *s = src;                                                                               \
        for (; i + 4 * (W) <= n; i += 4 * (W)) {                                                           \
            VT a = LOAD((const void *)(s + i)), b = LOAD((const void *)(s + i + (W)));                     \
            VT c = LOAD((const void *)(s + i + 2 * (W))), e = LOAD((const void *)(s + i + 3 * (W)));       \
            STORE((void *)(d + i), a);                                                                     \
            STORE((void *)(d + i + (W)), b);                                                               \
            STORE((void *)(d + i + 2 * (W)), c);                                                           \
            STORE((void *)(d + i + 3 * (W)), e);                                                           \
        }                                                                                                  \
        memcpy(d + i, s + i, n - i);                                                                       \
    }
#endif

#endif
