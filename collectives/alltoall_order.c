/*
 * alltoall row / column / hilbert — the HINT paper's single-copy alltoall (Alg. 3) over the
 * shared heap: every rank publishes the heap offsets of its send and receive buffers in the
 * group's collective slot, a barrier, then each rank copies its own list of P blocks (the
 * order's tuples, Alg. 1-2, built once per group) straight from the sender's buffer into the
 * receiver's, with the hybrid temporal/non-temporal copy (Alg. 4), a store fence, a barrier.
 * Needs the group on one node with a collective slot; when any rank's buffer is off the heap,
 * every rank sees it in the published offsets and the call runs pairwise exchange instead
 * (single copy through CMA for large blocks). Any P.
 * Cost: 2 barriers + P block copies per rank, no message at all; each block is copied once.
 */
#include <stdint.h>
#include <stdlib.h>

#include "collectives/algs.h"
#include "collectives/copy.h"
#include "collectives/order/order.h"
#include "runtime/heap.h"
#include "runtime/runtime.h"
#include "transport/shm/shm.h"

/* What the order algorithms keep on a group: tuples per order, thresholds per block size. */
#define THRESH_SLOTS 16

struct thresh {
    size_t block;     /* 0: unused */
    size_t T;         /* current temporal bytes */
    double best;      /* best local copy time seen, seconds */
    int frozen;       /* halving stopped */
};

struct order_cache {
    struct order_tuple *tuples[ORDER_NKINDS];
    struct thresh th[THRESH_SLOTS];
    int mode;         /* enum copy_mode from HINT_COPY */
};

int coll_copy_override = -1;

static void cache_free(void *p)
{
    struct order_cache *c = p;
    for (int k = 0; k < ORDER_NKINDS; k++)
        free(c->tuples[k]);
    free(c);
}

static struct order_cache *cache_of(hint_group g)
{
    if (g->cache[GRP_CACHE_COLL] == NULL) {
        struct order_cache *c = calloc(1, sizeof *c);
        if (c == NULL)
            return NULL;
        c->mode = copy_mode_from_env();
        g->cache[GRP_CACHE_COLL] = c;
        g->cache_free[GRP_CACHE_COLL] = cache_free;
    }
    return g->cache[GRP_CACHE_COLL];
}

/* This rank's tuples for the order, computed on first use and kept on the group. */
const struct order_tuple *coll_order_tuples(hint_group g, int kind)
{
    struct order_cache *c = cache_of(g);
    if (c == NULL)
        return NULL;
    if (c->tuples[kind] == NULL) {
        struct order_tuple *t = malloc((size_t)g->size * sizeof *t);
        if (t == NULL || order_tuples(kind, g->size, g->rank, t) != HINT_SUCCESS) {
            free(t);
            return NULL;
        }
        c->tuples[kind] = t;
    }
    return c->tuples[kind];
}

/* get_runtime_threshold: start at L2 / ranks, halve while the local copy time improves. */
static struct thresh *threshold_for(struct order_cache *c, size_t block, int P)
{
    struct thresh *free_slot = NULL;
    for (int i = 0; i < THRESH_SLOTS; i++) {
        if (c->th[i].block == block)
            return &c->th[i];
        if (!free_slot && c->th[i].block == 0)
            free_slot = &c->th[i];
    }
    struct thresh *t = free_slot ? free_slot : &c->th[block % THRESH_SLOTS];
    *t = (struct thresh){.block = block, .T = copy_l2_bytes() / (size_t)P, .best = 0, .frozen = 0};
    return t;
}

static void adapt(struct thresh *t, double took)
{
    if (t->frozen)
        return;
    if (t->best == 0 || took < t->best) {
        t->best = took;
        if (t->T == 0)
            t->frozen = 1;
        else
            t->T /= 2; /* try more non-temporal */
    } else {
        t->T = t->T ? t->T * 2 : 64; /* the last halving did not pay: go back and stay */
        t->frozen = 1;
    }
}

static uint64_t offset_of(const void *p, size_t bytes)
{
    if (bytes == 0)
        return 0;
    uint64_t a = heap_offset(p), b = heap_offset((const char *)p + bytes - 1);
    return a == UINT64_MAX || b == UINT64_MAX ? UINT64_MAX : a;
}

static int alltoall_order(struct coll_args *a, int kind)
{
    const struct order_tuple *tl = coll_order_tuples(a->g, kind);
    struct order_cache *c = cache_of(a->g);
    if (tl == NULL || c == NULL)
        return HINT_ERR_NOMEM;
    int P = a->size, slot = a->g->shm_slot;
    size_t b = a->block, all = b * (size_t)P;
    struct shm_coll_member *me = shm_coll_member(rt.shm, slot, a->rank);
    me->soff = offset_of(a->sbuf, all);
    me->roff = offset_of(a->rbuf, all);
    int st = barrier_shm(a); /* publishes the offsets (release/acquire through the barrier) */
    if (st != HINT_SUCCESS)
        return st;
    for (int p = 0; p < P; p++) {
        struct shm_coll_member *m = shm_coll_member(rt.shm, slot, p);
        if (m->soff == UINT64_MAX || m->roff == UINT64_MAX) {
            /* every rank sees the same offsets: all fall back, and say so */
            coll_record(COLL_ALLTOALL, "pairwise");
            return alltoall_pairwise(a);
        }
    }
    int mode = a->copy >= 0 ? a->copy : coll_copy_override >= 0 ? coll_copy_override : c->mode;
    struct thresh *th = mode == COPY_HYBRID ? threshold_for(c, b, P) : NULL;
    size_t T = mode == COPY_TEMPORAL ? SIZE_MAX : mode == COPY_NT ? 0 : th->T;
    double t0 = th ? hint_wtime() : 0;
    for (int i = 0; i < P; i++) {
        uint32_t s = tl[i].src, d = tl[i].dst;
        const char *from = heap_at(shm_coll_member(rt.shm, slot, (int)s)->soff) + (size_t)d * b;
        char *to = heap_at(shm_coll_member(rt.shm, slot, (int)d)->roff) + (size_t)s * b;
        copy_hybrid(to, from, b, T);
    }
    copy_fence();
    if (th)
        adapt(th, hint_wtime() - t0);
    return barrier_shm(a);
}

int alltoall_row(struct coll_args *a) { return alltoall_order(a, ORDER_ROW); }
int alltoall_column(struct coll_args *a) { return alltoall_order(a, ORDER_COLUMN); }
int alltoall_hilbert(struct coll_args *a) { return alltoall_order(a, ORDER_HILBERT); }
