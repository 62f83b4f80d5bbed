/*
 * alltoall and alltoallv row / column / hilbert / morton — the HINT paper's single-copy alltoall (Alg. 3) over the
 * shared heap: every rank publishes the heap offsets of its send and receive buffers in the
 * group's collective slot, a barrier, then each rank copies its own list of P blocks (the
 * order's tuples, Alg. 1-2, built once per group; morton: the Morton paper's Z curve cut into
 * P equal segments) straight from the sender's buffer into the
 * receiver's, with the hybrid temporal/non-temporal copy (Alg. 4), a store fence, a barrier.
 * Needs the group on one node with a collective slot; when any rank's buffer is off the heap,
 * every rank sees it in the published offsets and the call runs pairwise exchange instead
 * (single copy through CMA for large blocks). Any P.
 * Cost: 2 barriers + P block copies per rank, no message at all; each block is copied once.
 */
#include <stdbool.h>
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

/* Extent of a v buffer: the end of its furthest block. */
static size_t v_extent(const size_t *counts, const size_t *displs, int P)
{
    size_t end = 0;
    for (int p = 0; p < P; p++)
        if (counts[p] && displs[p] + counts[p] > end)
            end = displs[p] + counts[p];
    return end;
}

/* Alg. 3 for alltoall (v = false) and alltoallv (v = true): publish, barrier, copy my tuples,
   fence, barrier. For the v variant each rank also publishes its send counts and displacements
   and its receive displacements, so any rank can locate any block. */
static int order_copy(struct coll_args *a, int kind, bool v)
{
    const struct order_tuple *tl = coll_order_tuples(a->g, kind);
    struct order_cache *c = cache_of(a->g);
    if (tl == NULL || c == NULL)
        return HINT_ERR_NOMEM;
    int P = a->size, slot = a->g->shm_slot;
    size_t b = a->block;
    struct shm_coll_member *me = shm_coll_member(rt.shm, slot, a->rank);
    if (v) {
        for (int p = 0; p < P; p++) {
            me->v[p] = a->scounts[p];
            me->v[P + p] = a->sdispls[p];
            me->v[2 * P + p] = a->rdispls[p];
        }
        me->soff = offset_of(a->sbuf, v_extent(a->scounts, a->sdispls, P));
        me->roff = offset_of(a->rbuf, v_extent(a->rcounts, a->rdispls, P));
    } else {
        me->soff = offset_of(a->sbuf, b * (size_t)P);
        me->roff = offset_of(a->rbuf, b * (size_t)P);
    }
    int st = barrier_shm(a); /* publishes (release/acquire through the barrier) */
    if (st != HINT_SUCCESS)
        return st;
    for (int p = 0; p < P; p++) {
        struct shm_coll_member *m = shm_coll_member(rt.shm, slot, p);
        if (m->soff == UINT64_MAX || m->roff == UINT64_MAX) {
            /* every rank sees the same offsets: all fall back, and say so */
            coll_record(a->op_id, "pairwise");
            return v ? alltoallv_pairwise(a) : alltoall_pairwise(a);
        }
    }
    int mode = a->copy >= 0 ? a->copy : coll_copy_override >= 0 ? coll_copy_override : c->mode;
    struct thresh *th = mode == COPY_HYBRID ? threshold_for(c, b, P) : NULL;
    size_t T = mode == COPY_TEMPORAL ? SIZE_MAX : mode == COPY_NT ? 0 : th->T;
    double t0 = th ? hint_wtime() : 0;
    for (int i = 0; i < P; i++) {
        int s = (int)tl[i].src, d = (int)tl[i].dst;
        struct shm_coll_member *ms = shm_coll_member(rt.shm, slot, s), *md = shm_coll_member(rt.shm, slot, d);
        size_t n = v ? ms->v[d] : b;
        const char *from = heap_at(ms->soff) + (v ? ms->v[P + d] : (size_t)d * b);
        char *to = heap_at(md->roff) + (v ? md->v[2 * P + s] : (size_t)s * b);
        if (n)
            copy_hybrid(to, from, n, T);
    }
    copy_fence();
    if (th)
        adapt(th, hint_wtime() - t0);
    return barrier_shm(a);
}

int alltoall_row(struct coll_args *a) { return order_copy(a, ORDER_ROW, false); }
int alltoall_column(struct coll_args *a) { return order_copy(a, ORDER_COLUMN, false); }
int alltoall_hilbert(struct coll_args *a) { return order_copy(a, ORDER_HILBERT, false); }
int alltoall_morton(struct coll_args *a) { return order_copy(a, ORDER_MORTON, false); }
int alltoallv_row(struct coll_args *a) { return order_copy(a, ORDER_ROW, true); }
int alltoallv_column(struct coll_args *a) { return order_copy(a, ORDER_COLUMN, true); }
int alltoallv_hilbert(struct coll_args *a) { return order_copy(a, ORDER_HILBERT, true); }
int alltoallv_morton(struct coll_args *a) { return order_copy(a, ORDER_MORTON, true); }
