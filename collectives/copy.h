/*
 * collectives/copy.h — copy kernels for the shared-heap collectives: plain memcpy, a
 * non-temporal copy (streaming stores bypass the caches: no read-for-ownership of the
 * destination, nothing evicted), and the HINT paper's hybrid (Alg. 4): temporal up to a
 * threshold, non-temporal for the rest.
 */
#ifndef HINT_COLL_COPY_H
#define HINT_COLL_COPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "runtime/memcopy.h" /* rt_memcpy, for the block copies */

enum copy_mode { COPY_HYBRID = 0, COPY_TEMPORAL = 1, COPY_NT = 2 };

/* Non-temporal copy with the widest streaming stores this CPU has (AVX-512, AVX2, SSE2; plain
   memcpy elsewhere), chosen once at run time. Call copy_fence() before other ranks may read. */
void copy_nt(void *dst, const void *src, size_t n);
/* Alg. 4 as the HINT paper writes it: n < T: memcpy; else memcpy of the first R bytes (R from
   the run-time adjustment below, at most n) and non-temporal for the rest. T is fixed (L2 / P);
   R moves. Returns true when a non-temporal part ran (n >= T and n > R: the copy's time depends
   on R); a block of exactly T while R is still T is all temporal and returns false. */
bool copy_hybrid(void *dst, const void *src, size_t n, size_t T, size_t R);

/* get_runtime_threshold (Alg. 4) for one block size: R starts at T; on each call where a
   non-temporal part ran (copy_hybrid returned true) the copy time is compared with the best so far.
   The first such call is ignored (cold caches, first-touch faults); the second sets the
   baseline and halves R; each later one that is faster keeps halving, and the first that is not
   faster steps back to the R it was measured against and freezes there. Calls where every block
   was under T (or all within R) change nothing: their time says nothing about R. */
struct copy_thresh {
    size_t T;        /* fixed: L2 / P */
    size_t R;        /* temporal bytes of a copy of n >= T bytes */
    size_t last;     /* the R the best time was measured with */
    double best;     /* fastest timed call so far (seconds), 0: none yet */
    int warm;        /* the first call (ignored) has run */
    int frozen;      /* R is final */
};
void copy_thresh_init(struct copy_thresh *t, size_t T);
/* After a call: hybrid_ran = some block of it had a non-temporal part; seconds = its copy time. */
void copy_thresh_record(struct copy_thresh *t, bool hybrid_ran, double seconds);
/* Orders the non-temporal stores before what follows (sfence). */
void copy_fence(void);
/* The kernel copy_nt uses: "avx512", "avx2", "sse2" or "memcpy". */
const char *copy_nt_kernel(void);
/* HINT_COPY=temporal|nt|hybrid (default hybrid). */
int copy_mode_from_env(void);
/* Bytes of L2 per core from hwloc (or sysconf), for the initial threshold L2 / ranks. */
size_t copy_l2_bytes(void);
/* Alg. 4's fixed threshold for P ranks: L2 / P (the paper's initial T). */
size_t copy_threshold_T(int P);

#endif
