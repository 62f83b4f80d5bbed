/*
 * bench/nbc_overlap.c — how much of a nonblocking collective hides behind computation, measured
 * as the OSU benchmarks do (osu_ialltoall, osu_iallreduce), from one source built against hint
 * (hint-nbc-overlap) and against Open MPI (hint-nbc-overlap-openmpi, -DBENCH_MPI):
 *
 *   pure    start + wait with nothing between (per call, averaged over the iterations);
 *   cpu     the computation alone, sized to last `pure`;
 *   total   start, the computation (with a test of the request between each of --tests equal
 *           slices of it), wait;
 *   overlap 100 * max(0, 1 - (total - cpu) / pure): 100 % when the collective costs nothing on
 *           top of the computation, 0 % when total = cpu + pure.
 *
 * Neither library has a progress thread here: a collective moves on only inside its library's
 * calls, so the tests between slices are where the overlap comes from (--tests 0: none at all).
 * Times are per-rank medians over --iters calls (this machine is shared: means follow its
 * outliers), then averaged over ranks; the computation is re-sized to each size's `pure`.
 *
 *   hintrun -n P hint-nbc-overlap OP [--sizes 8,1K,64K] [--iters N] [--tests K]
 *   mpirun -n P hint-nbc-overlap-openmpi OP ...          OP: ialltoall | iallreduce
 * Sizes: bytes per block (ialltoall) or of the whole vector of doubles (iallreduce).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef BENCH_MPI
#include <mpi.h>
typedef MPI_Request req_t;
static int rank_of(void) { int r; MPI_Comm_rank(MPI_COMM_WORLD, &r); return r; }
static int size_of(void) { int p; MPI_Comm_size(MPI_COMM_WORLD, &p); return p; }
static double now(void) { return MPI_Wtime(); }
static void barrier(void) { MPI_Barrier(MPI_COMM_WORLD); }
static const char *library(void)
{
    static char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int n;
    MPI_Get_library_version(v, &n);
    v[strcspn(v, ",\n")] = '\0';
    return v;
}
static int start_alltoall(const void *s, void *r, size_t n, req_t *q)
{
    return MPI_Ialltoall(s, (int)n, MPI_BYTE, r, (int)n, MPI_BYTE, MPI_COMM_WORLD, q);
}
static int start_allreduce(const double *s, double *r, size_t n, req_t *q)
{
    return MPI_Iallreduce(s, r, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, q);
}
static int wait_req(req_t *q) { return MPI_Wait(q, MPI_STATUS_IGNORE); }
static int test_req(req_t *q) { int done; MPI_Test(q, &done, MPI_STATUS_IGNORE); return done; }
static double sum_all(double x) { double y; MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); return y; }
static void lib_init(int *argc, char ***argv) { MPI_Init(argc, argv); }
static void lib_fini(void) { MPI_Finalize(); }
#else
#include "hint.h"
typedef hint_request req_t;
static int rank_of(void) { int r; hint_group_rank(HINT_WORLD, &r); return r; }
static int size_of(void) { int p; hint_group_size(HINT_WORLD, &p); return p; }
static double now(void) { return hint_wtime(); }
static void barrier(void) { hint_barrier(HINT_WORLD); }
static const char *library(void) { return "hint " HINT_VERSION_STRING; }
static int start_alltoall(const void *s, void *r, size_t n, req_t *q)
{
    return hint_ialltoall(s, n, HINT_BYTE, r, n, HINT_BYTE, HINT_WORLD, q);
}
static int start_allreduce(const double *s, double *r, size_t n, req_t *q)
{
    return hint_iallreduce(s, r, n, HINT_DOUBLE, HINT_SUM, HINT_WORLD, q);
}
static int wait_req(req_t *q) { return hint_wait(q, HINT_STATUS_IGNORE); }
static int test_req(req_t *q) { int done = 0; hint_test(q, &done, HINT_STATUS_IGNORE); return done; }
static double sum_all(double x) { double y; hint_allreduce(&x, &y, 1, HINT_DOUBLE, HINT_SUM, HINT_WORLD); return y; }
static void lib_init(int *argc, char ***argv) { hint_init(argc, argv); }
static void lib_fini(void) { hint_finalize(); }
#endif

static int P, R;
static volatile double sink;

/* Computation that the compiler cannot drop: `units` steps of a dependent chain. */
static void compute(long units)
{
    double x = sink;
    for (long i = 0; i < units; i++)
        x = x * 0.999999 + 1e-9;
    sink = x;
}

/* Steps of compute() per second, measured on this rank. */
static double units_per_second(void)
{
    long units = 1 << 16;
    for (;;) {
        double t0 = now();
        compute(units);
        double t = now() - t0;
        if (t > 0.02)
            return (double)units / t;
        units *= 2;
    }
}

struct bufs {
    char *s, *r;
    size_t n; /* the count the start call is given */
};

static int op_is_alltoall;

static void start(struct bufs *b, req_t *q)
{
    int st = op_is_alltoall ? start_alltoall(b->s, b->r, b->n, q)
                            : start_allreduce((const double *)b->s, (double *)b->r, b->n, q);
    if (st != 0) {
        fprintf(stderr, "rank %d: start failed (%d)\n", R, st);
        exit(1);
    }
}

/* start; units of computation in `tests` + 1 slices with a test between them; wait. */
static double one_call(struct bufs *b, long units, int tests)
{
    req_t q;
    barrier();
    double t0 = now();
    start(b, &q);
    long slice = units / (tests + 1);
    for (int k = 0; k < tests; k++) {
        compute(slice);
        test_req(&q);
    }
    compute(units - slice * tests);
    wait_req(&q);
    return now() - t0;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, by_value);
    return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

static size_t parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (*end == 'K' || *end == 'k')
        v *= 1024;
    else if (*end == 'M' || *end == 'm')
        v *= 1024 * 1024;
    return (size_t)v;
}

int main(int argc, char **argv)
{
    lib_init(&argc, &argv);
    R = rank_of();
    P = size_of();
    if (argc < 2 || (strcmp(argv[1], "ialltoall") && strcmp(argv[1], "iallreduce"))) {
        if (R == 0)
            fprintf(stderr, "usage: %s ialltoall|iallreduce [--sizes 8,1K,64K] [--iters N] [--tests K]\n", argv[0]);
        lib_fini();
        return 2;
    }
    op_is_alltoall = strcmp(argv[1], "ialltoall") == 0;
    size_t sizes[32] = {8, 1024, 65536};
    int nsizes = 3, iters = 50, tests = 16;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--iters") == 0) {
            iters = atoi(argv[i + 1]);
        } else if (strcmp(argv[i], "--tests") == 0) {
            tests = atoi(argv[i + 1]);
        } else if (strcmp(argv[i], "--sizes") == 0) {
            nsizes = 0;
            for (char *t = strtok(argv[i + 1], ","); t && nsizes < 32; t = strtok(NULL, ","))
                sizes[nsizes++] = parse_size(t);
        }
    }
    double ups = units_per_second();
    if (R == 0) {
        printf("# %s %s, %d ranks, %d iterations, %d tests during the computation\n", library(), argv[1], P,
               iters, tests);
        printf("# %10s %12s %12s %12s %10s\n", "bytes", "pure(us)", "cpu(us)", "total(us)", "overlap(%)");
    }
    for (int k = 0; k < nsizes; k++) {
        size_t bytes = sizes[k], span = op_is_alltoall ? bytes * (size_t)P : bytes;
        struct bufs b = {malloc(span ? span : 8), malloc(span ? span : 8), op_is_alltoall ? bytes : bytes / 8};
        memset(b.s, 1, span ? span : 8);
        memset(b.r, 0, span ? span : 8);
        for (int i = 0; i < 3; i++)
            one_call(&b, 0, 0);
        double *t = malloc((size_t)iters * sizeof *t);
        for (int i = 0; i < iters; i++)
            t[i] = one_call(&b, 0, 0);
        double pure = median(t, iters);
        /* sized to last `pure`: scaled by what it measured until within 10 % (a loaded machine
           makes the first estimate short) */
        long units = (long)(pure * ups) + 1;
        double cpu = 0;
        for (int round = 0; round < 5; round++) {
            for (int i = 0; i < iters; i++) {
                double t0 = now();
                compute(units);
                t[i] = now() - t0;
            }
            cpu = median(t, iters);
            if (cpu > 0.9 * pure && cpu < 1.1 * pure)
                break;
            units = (long)((double)units * pure / (cpu > 0 ? cpu : pure / 2)) + 1;
        }
        for (int i = 0; i < iters; i++)
            t[i] = one_call(&b, units, tests);
        double total = median(t, iters);
        free(t);
        pure = sum_all(pure) / P;
        cpu = sum_all(cpu) / P;
        total = sum_all(total) / P;
        double ov = 100.0 * (1.0 - (total - cpu) / pure);
        if (R == 0)
            printf("  %10zu %12.2f %12.2f %12.2f %10.1f\n", bytes, pure * 1e6, cpu * 1e6, total * 1e6,
                   ov < 0 ? 0.0 : ov);
        free(b.s);
        free(b.r);
    }
    lib_fini();
    return 0;
}
