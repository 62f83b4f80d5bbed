/*
 * bench/order_buffers.c — hint-order-buffers: alltoall through a copy order with the buffers on
 * the shared heap, on the stack or in a private mmap (the last two reach the peers through CMA,
 * issue 23), beside pairwise exchange on the same buffers. Per size, kind and algorithm: each
 * rank times every call (after a barrier); the median over the calls, the slowest rank's.
 * A layout argument sends derived types instead of bytes on both sides (off the heap the orders
 * then pass each block's pieces to the kernel as iovecs): d8, one double in every 16 bytes;
 * d64, 64 bytes in every 128. Sizes are data bytes per block; a side spans twice that.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "hint.h"

#define MAXSIDE (2u << 20) /* bytes of one side: P * block (two on the stack: 4 MiB of its 8) */

static int cmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The layout of both sides: bytes, or a derived type with data bytes `unit` an element. */
static hint_type layout = HINT_BYTE;
static size_t unit = 1, stretch = 1; /* data bytes an element; span / data */

static double median_call(const char *alg, unsigned char *s, unsigned char *r, size_t block, int iters)
{
    double *t = malloc((size_t)iters * sizeof *t), med, worst;
    hint_coll_set("alltoall", alg);
    hint_coll_set("barrier", "auto");
    for (int i = -iters / 10 - 2; i < iters; i++) {
        hint_barrier(HINT_WORLD);
        double t0 = hint_wtime();
        if (hint_alltoall(s, block / unit, layout, r, block / unit, layout, HINT_WORLD) != HINT_SUCCESS) {
            fprintf(stderr, "hint-order-buffers: alltoall %s failed\n", alg);
            hint_abort(1);
        }
        if (i >= 0)
            t[i] = hint_wtime() - t0;
    }
    qsort(t, (size_t)iters, sizeof *t, cmp);
    med = t[iters / 2] * 1e6;
    free(t);
    hint_allreduce(&med, &worst, 1, HINT_DOUBLE, HINT_MAX, HINT_WORLD);
    return worst;
}

static void run(const char *kind, unsigned char *s, unsigned char *r, int P, int rank, int iters)
{
    static const char *const algs[] = {"morton", "hilbert", "pairwise"};
    static const size_t blocks[] = {4096, 65536, 262144, 1048576};
    for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++) {
        if (blocks[b] * (size_t)P * stretch > MAXSIDE)
            continue;
        memset(s, rank, blocks[b] * (size_t)P * stretch);
        for (int a = 0; a < 3; a++) {
            double us = median_call(algs[a], s, r, blocks[b], iters);
            const char *ran = "?";
            hint_coll_last("alltoall", &ran);
            if (rank == 0)
                printf("%-6s %8zu  %-9s %10.2f us  (ran %s)\n", kind, blocks[b], algs[a], us, ran);
        }
    }
}

/* The layout named on the command line (d8, d64, their early forms, bytes); -1 when unknown. */
static int make_layout(const char *lay)
{
    if (strcmp(lay, "bytes") == 0)
        return 0;
    if (strcmp(lay, "d8") && strcmp(lay, "d64") && strcmp(lay, "d8early") && strcmp(lay, "d64early")) {
        fprintf(stderr, "hint-order-buffers: layout %s is not bytes, d8, d64, d8early or d64early\n", lay);
        return -1;
    }
    unit = lay[1] == '8' ? 8 : 64;
    stretch = 2;
    hint_type c;
    hint_type_contiguous(unit, HINT_BYTE, &c);
    hint_type_resized(c, 0, (ptrdiff_t)(2 * unit), &layout);
    hint_type_free(&c);
    hint_type_commit(&layout);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--help")) {
        printf("usage: hintrun -n P hint-order-buffers [ITERS [bytes|d8|d64]]\n"
               "alltoall at 4K..1M per block (up to %u bytes per side), buffers on the heap, the stack and\n"
               "in an mmap, through morton and hilbert (CMA off the heap) and pairwise; the median call\n"
               "time of the slowest rank, in us. d8: both sides a derived type, one double every 16 bytes;\n"
               "d64: 64 bytes every 128 (sizes count data bytes; off the heap the pieces go as iovecs);\n"
               "d8early, d64early: the same committed before hint_init (piece list copied to the heap).\n"
               "Under HINT_HEAP=private (no heap buffers) the heap rows are skipped.\n",
               MAXSIDE);
        return 0;
    }
    /* d8early, d64early: the type committed before hint_init, so its piece list is not on the
       heap and the orders copy it there for the peers on the first call (issue 23) */
    const char *lay = argc > 2 ? argv[2] : "bytes";
    bool early = strstr(lay, "early") != NULL;
    if (early && make_layout(lay) != 0)
        return 1;
    if (hint_init(&argc, &argv) != HINT_SUCCESS)
        return 1;
    if (!early && make_layout(lay) != 0)
        hint_abort(1);
    int P, rank, iters = argc > 1 ? atoi(argv[1]) : 50;
    hint_group_size(HINT_WORLD, &P);
    hint_group_rank(HINT_WORLD, &rank);
    unsigned char *hs = hint_malloc(MAXSIDE), *hr = hint_malloc(MAXSIDE);
    if (rank == 0)
        printf("# P=%d, %d calls per point, layout %s; kind, bytes per block, algorithm, median us\n", P, iters, lay);
    if (hs && hr)
        run("heap", hs, hr, P, rank, iters); /* HINT_HEAP=private: no heap buffers */
    unsigned char *ms = mmap(NULL, MAXSIDE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    unsigned char *mr = mmap(NULL, MAXSIDE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (ms == MAP_FAILED || mr == MAP_FAILED)
        hint_abort(1);
    run("mmap", ms, mr, P, rank, iters);
    {
        unsigned char ss[MAXSIDE], sr[MAXSIDE]; /* on the main thread's stack */
        run("stack", ss, sr, P, rank, iters);
    }
    if (layout != HINT_BYTE)
        hint_type_free(&layout);
    hint_free(hs);
    hint_free(hr);
    munmap(ms, MAXSIDE);
    munmap(mr, MAXSIDE);
    hint_finalize();
    return 0;
}
