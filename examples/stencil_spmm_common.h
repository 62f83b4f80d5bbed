/*
 * examples/stencil_spmm_common.h — what examples/stencil.c and examples/spmm.c share: the option
 * parsing helpers, the deterministic generator both use for their inputs (so every rank can
 * recompute any value for the serial check without communication), forcing the neighbourhood
 * algorithm, and the timing report (per iteration the slowest rank, then the median).
 *
 * Exit statuses, the same in both programs: 0 done and checked, 1 the check failed or a call
 * failed, 2 bad arguments, 3 the forced algorithm cannot run this exchange (HINT_ERR_UNSUPPORTED).
 */
#ifndef STENCIL_SPMM_COMMON_H
#define STENCIL_SPMM_COMMON_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hint.h"

enum { EXIT_CHECK_FAILED = 1, EXIT_USAGE = 2, EXIT_UNSUPPORTED = 3 };

/* A decimal in [min, max] making up all of s; 0 on success. */
static inline int parse_count(const char *s, long min, long max, long *out)
{
    char *end;
    errno = 0;
    if (*s < '0' || *s > '9')
        return -1;
    long v = strtol(s, &end, 10);
    if (errno || *end != '\0' || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

/* splitmix64: a stateless mix, so value (a, b) is the same on every rank and in the serial check */
static inline uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static inline uint64_t hash2(uint64_t seed, uint64_t a, uint64_t b)
{
    return mix64(mix64(seed ^ mix64(a)) ^ b);
}

/* uniform in [0, 1) from 53 bits of h */
static inline double unit_of(uint64_t h)
{
    return (double)(h >> 11) * 0x1.0p-53;
}

/* Forces op's algorithm ("auto" restores the defaults); prints why on rank 0 when the name is
   refused. Returns 0 or EXIT_USAGE. */
static inline int force_algorithm(const char *prog, const char *op, const char *name, int rank)
{
    int st = hint_coll_set(op, name);
    if (st == HINT_SUCCESS)
        return 0;
    if (rank == 0)
        fprintf(stderr, "%s: --algorithm '%s': %s has no such algorithm (%s); see hint_info\n", prog, name, op,
                hint_strerror(st));
    return EXIT_USAGE;
}

/* The message the tests look for when a forced algorithm cannot run the exchange. */
static inline void say_unsupported(const char *prog, const char *op, const char *name, int rank, int P)
{
    if (rank == 0)
        printf("%s: UNSUPPORTED: --algorithm %s cannot run %s on this group (%d ranks, HINT_NNODES=%s): "
               "HINT_ERR_UNSUPPORTED; nothing was computed\n",
               prog, name, op, P, getenv("HINT_NNODES") ? getenv("HINT_NNODES") : "1");
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* times[i]: this rank's time of iteration i. Per iteration the slowest rank's (one allreduce),
   then the median over iterations; 0 for none. Collective over g. */
static inline double median_of_slowest(double *times, long n, hint_group g)
{
    if (n <= 0)
        return 0;
    double *slowest = malloc((size_t)n * sizeof *slowest);
    if (slowest == NULL)
        return -1;
    hint_allreduce(times, slowest, (size_t)n, HINT_DOUBLE, HINT_MAX, g);
    qsort(slowest, (size_t)n, sizeof *slowest, cmp_double);
    double m = n % 2 ? slowest[n / 2] : (slowest[n / 2 - 1] + slowest[n / 2]) / 2;
    free(slowest);
    return m;
}

/* The buffers a neighbourhood collective reads or writes: on the shared heap when it can be, so
   the shared-heap algorithms (morton) can run even where plain malloc is not served from the heap
   (HINT_HEAP=private falls back to malloc). */
static inline void *comm_alloc(size_t bytes)
{
    void *p = hint_malloc(bytes);
    return p != NULL ? p : malloc(bytes);
}

static inline void comm_free(void *p)
{
    if (p != NULL && hint_mem_shared(p))
        hint_free(p);
    else
        free(p);
}

/* --corrupt: the highest rank that receives a halo value corrupts one (collective over the world);
   with none (one rank with no self exchange, or a graph without edges) rank 0 says so, since the
   check then passes. */
static inline int corrupting_rank(const char *prog, int receives, int rank)
{
    int mine = receives ? rank : -1, chosen = -1;
    hint_allreduce(&mine, &chosen, 1, HINT_INT, HINT_MAX, HINT_WORLD);
    if (chosen < 0 && rank == 0)
        printf("%s: --corrupt: no rank receives a halo value, nothing to corrupt\n", prog);
    return chosen;
}

/* hintrun ends the job when a rank exits non-zero: every rank flushes what it printed and waits
   for the others first, so rank 0's verdict is never cut off by another rank's exit status. */
static inline void finish_together(void)
{
    fflush(stdout);
    fflush(stderr);
    hint_barrier(HINT_WORLD);
    hint_finalize();
}

#endif
