/*
 * collectives/copy.h — copy kernels for the shared-heap collectives: plain memcpy, a
 * non-temporal copy (streaming stores bypass the caches: no read-for-ownership of the
 * destination, nothing evicted), and the HINT paper's hybrid (Alg. 4): temporal up to a
 * threshold, non-temporal for the rest.
 */
#ifndef HINT_COLL_COPY_H
#define HINT_COLL_COPY_H

#include <stddef.h>

enum copy_mode { COPY_HYBRID = 0, COPY_TEMPORAL = 1, COPY_NT = 2 };

/* Non-temporal copy with the widest streaming stores this CPU has (AVX-512, AVX2, SSE2; plain
   memcpy elsewhere), chosen once at run time. Call copy_fence() before other ranks may read. */
void copy_nt(void *dst, const void *src, size_t n);
/* Alg. 4: n < T: memcpy; else memcpy of the first T bytes, non-temporal for the rest. */
void copy_hybrid(void *dst, const void *src, size_t n, size_t T);
/* Orders the non-temporal stores before what follows (sfence). */
void copy_fence(void);
/* The kernel copy_nt uses: "avx512", "avx2", "sse2" or "memcpy". */
const char *copy_nt_kernel(void);
/* HINT_COPY=temporal|nt|hybrid (default hybrid). */
int copy_mode_from_env(void);
/* Bytes of L2 per core from hwloc (or sysconf), for the initial threshold L2 / ranks. */
size_t copy_l2_bytes(void);

#endif
