/*
 * tests/common/malloc_heap.h — whether malloc serves from the shared heap in this build. It does
 * not under AddressSanitizer or -Dmalloc_override=disabled (runtime/malloc.c); tests that need a
 * buffer on the heap then take it from hint_malloc, and say so.
 */
#ifndef HINT_TEST_MALLOC_HEAP_H
#define HINT_TEST_MALLOC_HEAP_H

#include <stdlib.h>

#include "hint.h"
#include "hint_config.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define TEST_UNDER_ASAN 1
#endif
#if HINT_MALLOC_OVERRIDE && !defined(TEST_UNDER_ASAN)
#define MALLOC_ON_HEAP 1
#else
#define MALLOC_ON_HEAP 0
#endif

/* A buffer on the shared heap the way a program gets one in this build (malloc, or
   hint_malloc without the override), and its release. */
static inline void *heap_buffer(size_t n) { return MALLOC_ON_HEAP ? malloc(n) : hint_malloc(n); }
static inline void heap_buffer_free(void *p)
{
    if (MALLOC_ON_HEAP)
        free(p);
    else
        hint_free(p);
}

#endif
