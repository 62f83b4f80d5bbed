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
   shared-heap orders, which need one node; the defaults' message-based choice runs. */
static bool spans;

#define PAIRS 3
#define ITERS 30
#define SETTLED 20 /* the longest trial is 5 candidates x 4 calls: calls 0-19, then the choice */

static int index_of(const char *name, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(name, names[i]))
            return i;
    return -1;
}

static const char *const a2a_names[] = {"row", "column", "hilbert", "morton"};

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

/* After the trials: the same algorithm every call; returns its index in names (-1: none). */
static int settle(const char *op, int it, const char **prev, int *changes, const char *const *names, int n)
{
    const char *ran;
    RC_OK(hint_coll_last(op, &ran));
    if (spans)
        RC_CHECK(strncmp(ran, "morton", 6) != 0 && index_of(ran, a2a_names, 4) < 0);
    if (it > SETTLED && *prev && strcmp(*prev, ran) != 0)
        (*changes)++;
    *prev = ran;
    return index_of(ran, names, n);
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
        kept = settle("alltoall", it, &prev, &changes, a2a_names, 4);
        if (!spans)
            RC_CHECK(kept >= 0);
    }
    RC_CHECK(changes == 0);
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
        kept = settle("alltoallv", it, &prev, &changes, a2a_names, 4);
        if (!spans)
            RC_CHECK(kept >= 0);
    }
    RC_CHECK(changes == 0);
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
        kept = settle("allgather", it, &prev, &changes, names, 5);
        RC_CHECK(kept >= 0 || spans);
    }
    RC_CHECK(changes == 0);
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
        kept = settle("allgatherv", it, &prev, &changes, names, 4);
        RC_CHECK(kept >= 0 || spans);
    }
    RC_CHECK(changes == 0);
    pairs_free(&b);
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
    enum { K = 5 };
    int kept[K], all[K * 64];
    kept[0] = run_alltoall(4096, P);
    kept[1] = run_alltoall(300, P);
    kept[2] = run_allgather(4096, P);
    kept[3] = run_alltoallv(P);
    kept[4] = run_allgatherv(P);
    RC_OK(hint_coll_set("allgather", "ring")); /* forced: the agreement check itself is not tuned */
    RC_OK(hint_allgather(kept, K, HINT_INT, all, K, HINT_INT, HINT_WORLD));
    for (int p = 0; p < P; p++) /* every rank kept the same */
        for (int i = 0; i < K; i++)
            RC_CHECK(all[K * p + i] == kept[i]);
    RC_OK(hint_finalize());
    if (rc_rank == 0)
        printf("ok autotune: kept alltoall %d %d, allgather %d, alltoallv %d, allgatherv %d\n", kept[0], kept[1],
               kept[2], kept[3], kept[4]);
    return 0;
}
