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
#include <math.h>
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

/* The timed loop of both examples: iters calls of step(ctx, corrupt, t), corrupt on the first only,
   t[0] the iteration's time and t[1] its exchange's; then the median over iterations of the
   slowest rank of each. 0, or the exit status after saying why (a forced algorithm refuses on
   every rank alike, so all stop here together). */
static inline int timed_steps(const char *prog, const char *op, const char *algorithm, long iters, int corrupt,
                              int rank, int P, int (*step)(void *, int, double[2]), void *ctx, double *total,
                              double *exchange)
{
    double *times = calloc(2 * (size_t)iters, sizeof *times), t[2] = {0, 0};
    int st = times ? HINT_SUCCESS : HINT_ERR_NOMEM;
    for (long i = 0; i < iters && st == HINT_SUCCESS; i++) {
        st = step(ctx, corrupt, t);
        corrupt = 0;
        times[i] = t[0];
        times[iters + i] = t[1];
    }
    if (st == HINT_ERR_UNSUPPORTED) {
        say_unsupported(prog, op, algorithm, rank, P);
        free(times);
        return EXIT_UNSUPPORTED;
    }
    if (st != HINT_SUCCESS) {
        fprintf(stderr, "%s: rank %d: %s failed: %s\n", prog, rank, op, hint_strerror(st));
        free(times);
        return EXIT_CHECK_FAILED;
    }
    *total = median_of_slowest(times, iters, HINT_WORLD);
    *exchange = median_of_slowest(times + iters, iters, HINT_WORLD);
    free(times);
    return 0;
}

/* Every rank's check, agreed and said: worst is the rank's largest relative error (< 0: no memory
   for its serial run), wrong its values beyond the tolerance; rank 0 prints the verdict of all.
   0 or EXIT_CHECK_FAILED. `what` names the values ("values", "cells"), `serial` the reference. */
static inline int agree_on_check(const char *prog, int rank, double worst, long wrong, double tolerance,
                                 const char *what, const char *serial)
{
    if (worst < 0)
        fprintf(stderr, "%s: rank %d: not enough memory for the serial check\n", prog, rank);
    double w = worst < 0 ? INFINITY : worst, all_worst = 0;
    long all_wrong = 0;
    hint_allreduce(&w, &all_worst, 1, HINT_DOUBLE, HINT_MAX, HINT_WORLD);
    hint_allreduce(&wrong, &all_wrong, 1, HINT_LONG, HINT_SUM, HINT_WORLD);
    int ok = all_worst <= tolerance && all_wrong == 0;
    if (wrong > 0)
        fprintf(stderr, "%s: rank %d: %ld of its %s differ from the serial %s\n", prog, rank, wrong, what, serial);
    if (rank == 0)
        printf("%s: check against the serial %s: max relative error %.3e, %ld wrong %s (tolerance %.0e): %s\n", prog,
               serial, all_worst, all_wrong, what, tolerance, ok ? "OK" : "FAILED");
    return ok ? 0 : EXIT_CHECK_FAILED;
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

/* What both mains do once the options are read: force the algorithm, set up on every rank (all
   go on only if all succeeded), run, tear down, and leave together. The exit status. */
struct example_parts {
    int (*setup)(void *);
    int (*run)(void *);
    void (*teardown)(void *);
};
static inline int run_example(const char *prog, const char *op, const char *algorithm, int rank,
                              const struct example_parts *parts, void *ctx)
{
    int code = force_algorithm(prog, op, algorithm, rank);
    if (code == 0) {
        code = EXIT_CHECK_FAILED;
        int st = parts->setup(ctx), all = 0;
        hint_allreduce(&st, &all, 1, HINT_INT, HINT_MAX, HINT_WORLD);
        if (all != HINT_SUCCESS) {
            if (st != HINT_SUCCESS)
                fprintf(stderr, "%s: rank %d: set-up failed: %s\n", prog, rank, hint_strerror(st));
        } else {
            code = parts->run(ctx);
        }
        parts->teardown(ctx);
    }
    finish_together();
    return code;
}

#endif
