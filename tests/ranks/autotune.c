/*
 * tests/ranks/autotune.c — HINT_AUTOTUNE=1: for alltoall, alltoallv, allgather and allgatherv the
 * candidates are each tried once plus three times, then one is kept, the same on every rank, and
 * every result along the way is right. The ranks' buffers differ (each rank allocates a
 * different amount first, so addresses differ between ranks) and move between calls (three
 * buffer pairs taken in turn, in a different phase on each rank): the trials are keyed on what
 * every rank computes alike (operation, group, counts), so they still run in step, and a second
 * block size gets its own trial.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hint.h"
#include "tests/common/malloc_heap.h"
#include "tests/common/rankcheck.h"

int rc_rank;
/* The world spans virtual nodes (hintrun --nodes K, K > 1): autotuning must never try the
   shared-heap orders, which need one node; it tries the hierarchical algorithms against the
   message-based ones instead (issue 16), and keeps one of those. */
static bool spans;

#define PAIRS 3
#define ITERS 32
#define SETTLED 24 /* the longest trial is 6 candidates x 4 calls: calls 0-23, then the choice */

static int index_of(const char *name, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(name, names[i]))
            return i;
    return -1;
}

static const char *const a2a_names[] = {"row", "column", "hilbert", "morton"};
/* across nodes (collectives/tune.c, candidates_across_nodes) */
static const char *const a2a_span[] = {"hier_hint", "hier_hint_overlap", "hier_morton", "linear", "pairwise", "bruck"};
static const char *const a2av_span[] = {"hier_hint", "hier_hint_overlap", "hier_morton", "linear", "pairwise"};
static const char *const ag_span[] = {"hier", "recursive_doubling", "bruck", "ring"};
static const char *const agv_span[] = {"hier", "ring", "linear"};
#define NAMES(on_node, across) (spans ? (across) : (on_node)), \
    (spans ? (int)(sizeof(across) / sizeof(across)[0]) : (int)(sizeof(on_node) / sizeof(on_node)[0]))

/* PAIRS send/receive buffer pairs of n bytes each, at addresses that differ between ranks. */
struct pairs {
    unsigned char *s[PAIRS], *r[PAIRS];
    void *pad;
};

static void pairs_alloc(struct pairs *b, size_t sn, size_t rn)
{
    b->pad = heap_buffer(64 + 4096 * (size_t)rc_rank); /* shifts this rank's later buffers */
    for (int i = 0; i < PAIRS; i++) {
        b->s[i] = heap_buffer(sn + 64 * (size_t)(rc_rank + i));
        b->r[i] = heap_buffer(rn + 32 * (size_t)(rc_rank + i));
    }
}

static void pairs_free(struct pairs *b)
{
    for (int i = 0; i < PAIRS; i++) {
        heap_buffer_free(b->s[i]);
        heap_buffer_free(b->r[i]);
    }
    heap_buffer_free(b->pad);
}

/* The candidates seen running during the trials (bits of their index in names): a run whose
   trials never left one algorithm did not tune anything. */
static unsigned tried;

/* After the trials: the same algorithm every call; returns its index in names (-1: none). */
static int settle(const char *op, int it, const char **prev, int *changes, const char *const *names, int n)
{
    const char *ran;
    RC_OK(hint_coll_last(op, &ran));
    if (spans)
        RC_CHECK(strncmp(ran, "morton", 6) != 0 && index_of(ran, a2a_names, 4) < 0);
    if (it == 0)
        tried = 0;
    int k = index_of(ran, names, n);
    if (it < SETTLED && k >= 0)
        tried |= 1u << k;
    if (it > SETTLED && *prev && strcmp(*prev, ran) != 0)
        (*changes)++;
    *prev = ran;
    return k;
}

static int run_alltoall(size_t block, int P)
{
    struct pairs b;
    pairs_alloc(&b, block * (size_t)P, block * (size_t)P);
    const char *prev = NULL;
    int changes = 0, kept = -1;
    for (int it = 0; it < ITERS; it++) {
        int k = (it + rc_rank) % PAIRS;
        unsigned char *s = b.s[k], *r = b.r[k];
        for (int p = 0; p < P; p++)
            memset(s + (size_t)p * block, (rc_rank * 16 + p + it) & 0xff, block);
        RC_OK(hint_alltoall(s, block, HINT_BYTE, r, block, HINT_BYTE, HINT_WORLD));
        for (int p = 0; p < P; p++)
            RC_CHECK(r[(size_t)p * block] == ((p * 16 + rc_rank + it) & 0xff) &&
                     r[(size_t)p * block + block - 1] == ((p * 16 + rc_rank + it) & 0xff));
        kept = settle("alltoall", it, &prev, &changes, NAMES(a2a_names, a2a_span));
        RC_CHECK(kept >= 0);
    }
    RC_CHECK(changes == 0);
    RC_CHECK(__builtin_popcount(tried) >= 2);
    pairs_free(&b);
    return kept;
}

/* alltoallv: rank s sends (s + d) % 3 + 1 units of 100 bytes to d. */
static size_t vbytes(int s, int d) { return (size_t)((s + d) % 3 + 1) * 100; }

static int run_alltoallv(int P)
{
    size_t sc[64], sd[64], rc[64], rd[64], stot = 0, rtot = 0;
    for (int p = 0; p < P; p++) {
        sc[p] = vbytes(rc_rank, p);
        rc[p] = vbytes(p, rc_rank);
        sd[p] = stot + 8; /* a gap before each block */
        rd[p] = rtot + 16;
        stot += sc[p] + 8;
        rtot += rc[p] + 16;
    }
    struct pairs b;
    pairs_alloc(&b, stot, rtot);
    const char *prev = NULL;
    int changes = 0, kept = -1;
    for (int it = 0; it < ITERS; it++) {
        int k = (it + 2 * rc_rank) % PAIRS;
        unsigned char *s = b.s[k], *r = b.r[k];
        for (int p = 0; p < P; p++)
            memset(s + sd[p], (rc_rank * 16 + p + it) & 0xff, sc[p]);
        RC_OK(hint_alltoallv(s, sc, sd, HINT_BYTE, r, rc, rd, HINT_BYTE, HINT_WORLD));
        for (int p = 0; p < P; p++)
            RC_CHECK(r[rd[p]] == ((p * 16 + rc_rank + it) & 0xff) &&
                     r[rd[p] + rc[p] - 1] == ((p * 16 + rc_rank + it) & 0xff));
        kept = settle("alltoallv", it, &prev, &changes, NAMES(a2a_names, a2av_span));
        RC_CHECK(kept >= 0);
    }
    RC_CHECK(changes == 0);
    RC_CHECK(__builtin_popcount(tried) >= 2);
    pairs_free(&b);
    return kept;
}

/* allgather: the Morton algorithms against the message-based ones, one kept everywhere */
static int run_allgather(size_t bl, int P)
{
    static const char *const names[] = {"ring", "recursive_doubling", "bruck", "morton", "morton_numa"};
    struct pairs b;
    pairs_alloc(&b, bl, bl * (size_t)P);
    const char *prev = NULL;
    int changes = 0, kept = -1;
    for (int it = 0; it < ITERS; it++) {
        int k = (it + rc_rank) % PAIRS;
        unsigned char *s = b.s[k], *r = b.r[k];
        memset(s, (rc_rank + it) & 0xff, bl);
        RC_OK(hint_allgather(s, bl, HINT_BYTE, r, bl, HINT_BYTE, HINT_WORLD));
        for (int p = 0; p < P; p++)
            RC_CHECK(r[(size_t)p * bl] == ((p + it) & 0xff) && r[(size_t)p * bl + bl - 1] == ((p + it) & 0xff));
        kept = settle("allgather", it, &prev, &changes, NAMES(names, ag_span));
        RC_CHECK(kept >= 0);
    }
    RC_CHECK(changes == 0);
    RC_CHECK(__builtin_popcount(tried) >= 2);
    pairs_free(&b);
    return kept;
}

/* allgatherv: rank p contributes (p % 3 + 1) * 200 bytes, placed with gaps */
static int run_allgatherv(int P)
{
    static const char *const names[] = {"ring", "linear", "morton", "morton_numa"};
    size_t rc[64], rd[64], tot = 0;
    for (int p = 0; p < P; p++) {
        rc[p] = (size_t)(p % 3 + 1) * 200;
        rd[p] = tot + 24;
        tot += rc[p] + 24;
    }
    struct pairs b;
    pairs_alloc(&b, rc[rc_rank], tot);
    const char *prev = NULL;
    int changes = 0, kept = -1;
    for (int it = 0; it < ITERS; it++) {
        int k = (it + rc_rank) % PAIRS;
        unsigned char *s = b.s[k], *r = b.r[k];
        memset(s, (rc_rank * 3 + it) & 0xff, rc[rc_rank]);
        RC_OK(hint_allgatherv(s, rc[rc_rank], HINT_BYTE, r, rc, rd, HINT_BYTE, HINT_WORLD));
        for (int p = 0; p < P; p++)
            RC_CHECK(r[rd[p]] == ((p * 3 + it) & 0xff) && r[rd[p] + rc[p] - 1] == ((p * 3 + it) & 0xff));
        kept = settle("allgatherv", it, &prev, &changes, NAMES(names, agv_span));
        RC_CHECK(kept >= 0);
    }
    RC_CHECK(changes == 0);
    RC_CHECK(__builtin_popcount(tried) >= 2);
    pairs_free(&b);
    return kept;
}

/* Across nodes the operations with a hierarchical algorithm are tuned too: allreduce, bcast,
   reduce (8 ints) and barrier, each with its results checked on every call. */
static int run_small(const char *op, int P)
{
    static const char *const ar[] = {"hier", "recursive_doubling", "ring", "reduce_bcast"};
    static const char *const bc[] = {"hier", "binomial"};
    static const char *const ba[] = {"hier", "dissemination"};
    const char *const *names = !strcmp(op, "allreduce") ? ar : !strcmp(op, "barrier") ? ba : bc;
    int n = names == ar ? 4 : 2;
    const char *prev = NULL;
    int changes = 0, kept = -1;
    for (int it = 0; it < ITERS; it++) {
        int in[8], out[8], root = it % P;
        for (int i = 0; i < 8; i++)
            in[i] = out[i] = rc_rank * 100 + i + it;
        if (!strcmp(op, "allreduce")) {
            RC_OK(hint_allreduce(in, out, 8, HINT_INT, HINT_SUM, HINT_WORLD));
            for (int i = 0; i < 8; i++)
                RC_CHECK(out[i] == 100 * P * (P - 1) / 2 + P * (i + it));
        } else if (!strcmp(op, "reduce")) {
            RC_OK(hint_reduce(in, out, 8, HINT_INT, HINT_SUM, root, HINT_WORLD));
            for (int i = 0; i < 8 && rc_rank == root; i++)
                RC_CHECK(out[i] == 100 * P * (P - 1) / 2 + P * (i + it));
        } else if (!strcmp(op, "bcast")) {
            RC_OK(hint_bcast(out, 8, HINT_INT, root, HINT_WORLD));
            for (int i = 0; i < 8; i++)
                RC_CHECK(out[i] == root * 100 + i + it);
        } else {
            RC_OK(hint_barrier(HINT_WORLD));
        }
        kept = settle(op, it, &prev, &changes, names, n);
        RC_CHECK(kept >= 0);
    }
    RC_CHECK(changes == 0);
    RC_CHECK(__builtin_popcount(tried) >= 2);
    return kept;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--help")) {
        printf("usage: hintrun -n P autotune   (with HINT_AUTOTUNE=1; P <= 64)\n");
        return 0;
    }
    RC_OK(hint_init(&argc, &argv));
    int P;
    RC_OK(hint_group_rank(HINT_WORLD, &rc_rank));
    RC_OK(hint_group_size(HINT_WORLD, &P));
    RC_CHECK(P <= 64);
    spans = getenv("HINT_NNODES") && atoi(getenv("HINT_NNODES")) > 1;
    enum { K = 9 };
    int kept[K] = {0}, all[K * 64];
    kept[0] = run_alltoall(4096, P);
    kept[1] = run_alltoall(300, P);
    kept[2] = run_allgather(4096, P);
    kept[3] = run_alltoallv(P);
    kept[4] = run_allgatherv(P);
    if (spans) {
        kept[5] = run_small("allreduce", P);
        kept[6] = run_small("bcast", P);
        kept[7] = run_small("reduce", P);
        kept[8] = run_small("barrier", P);
    }
    RC_OK(hint_coll_set("allgather", "ring")); /* forced: the agreement check itself is not tuned */
    RC_OK(hint_allgather(kept, K, HINT_INT, all, K, HINT_INT, HINT_WORLD));
    for (int p = 0; p < P; p++) /* every rank kept the same */
        for (int i = 0; i < K; i++)
            RC_CHECK(all[K * p + i] == kept[i]);
    RC_OK(hint_finalize());
    if (rc_rank == 0)
        printf("ok autotune: kept alltoall %d %d, allgather %d, alltoallv %d, allgatherv %d; across nodes "
               "allreduce %d, bcast %d, reduce %d, barrier %d\n", kept[0], kept[1], kept[2], kept[3], kept[4],
               kept[5], kept[6], kept[7], kept[8]);
    return 0;
}
