/*
 * alltoall(v) and allgather(v) over the copy orders (row / column / hilbert / morton /
 * morton_numa) — the HINT paper's single-copy alltoall (Alg. 3) over the
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
#include "collectives/coll_shm.h"
#include "collectives/copy.h"
#include "collectives/order/order.h"
#include "datatype/datatype.h"
#include "runtime/heap.h"
#include "runtime/runtime.h"
#include "topology/topology.h"

/* What the order algorithms keep on a group: tuples per order, thresholds per block size. */
#define THRESH_SLOTS 16

struct thresh {
    size_t block;     /* 0: unused */
    struct copy_thresh th; /* Alg. 4's T (fixed) and R (adjusted per call), copy.h */
};

struct order_cache {
    struct order_tuple *tuples[ORDER_NKINDS];
    struct order_tuple *numa;   /* NUMA-aware Morton list (numa_s sockets), built on first use */
    struct thresh th[THRESH_SLOTS];
    int mode;         /* enum copy_mode from HINT_COPY */
};

int coll_copy_override = -1;

static void cache_free(void *p)
{
    struct order_cache *c = p;
    for (int k = 0; k < ORDER_NKINDS; k++)
        free(c->tuples[k]);
    free(c->numa);
    free(c);
}

static struct order_cache *cache_of(hint_group g)
{
    struct coll_owned *o = &coll_group_of(g)->order;
    if (o->p == NULL) {
        struct order_cache *c = calloc(1, sizeof *c);
        if (c == NULL)
            return NULL;
        c->mode = copy_mode_from_env();
        *o = (struct coll_owned){c, cache_free};
    }
    return o->p;
}

/* This rank's tuples for the order, computed on first use and kept on the group. */
static const struct order_tuple *coll_order_tuples(hint_group g, int kind)
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

/* The socket this rank counts as on: with HINT_VIRTUAL_SOCKETS=s the group's ranks are cut into
   s equal runs of consecutive ranks (so the code runs on a one-socket machine too; 1 when s does
   not divide P); otherwise the package it runs on, from hwloc (or HINT_TOPO_FILE). */
static int my_socket(const struct coll_args *a)
{
    long s = rt_cfg_long("HINT_VIRTUAL_SOCKETS");
    if (s > 0)
        return s > 1 && a->size % s == 0 ? a->rank / (a->size / (int)s) : 0;
    int sock = 0;
    return topo_socket_of_self(&sock) == HINT_SUCCESS && sock >= 0 ? sock : 0;
}

/* The NUMA-aware schedule from every member's published socket (order_numa_tuples), once. */
static const struct order_tuple *numa_tuples(hint_group g, int slot)
{
    struct order_cache *c = cache_of(g);
    int P = g->size;
    if (c == NULL)
        return NULL;
    if (c->numa)
        return c->numa;
    int *sock = malloc((size_t)P * sizeof *sock);
    struct order_tuple *list = malloc((size_t)P * sizeof *list);
    if (sock && list) {
        for (int p = 0; p < P; p++)
            sock[p] = coll_shm_member(slot, p)->socket;
        if (order_numa_tuples(P, sock, g->rank, list) == HINT_SUCCESS) {
            free(sock);
            c->numa = list;
            return list;
        }
    }
    free(sock);
    free(list);
    return NULL;
}

/* The Alg. 4 threshold kept for this block size: T = L2 / ranks, R adjusted per call (copy.h). */
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
    t->block = block;
    copy_thresh_init(&t->th, copy_threshold_T(P));
    return t;
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

/* Publish one side of an alltoall or allgather: its layout, and the heap offset of its first
   touched byte; UINT64_MAX when any of it, or its type's piece list, is off the heap (or the
   type has too many pieces to list), which sends every rank to the fallback. */
static uint64_t publish_side(const char *buf, const struct coll_layout *l, size_t nblocks, size_t block,
                             struct coll_shm_layout *out)
{
    *out = (struct coll_shm_layout){0};
    if (l->type == NULL)
        return heap_span(buf, block * nblocks);
    size_t n;
    ptrdiff_t lo, hi;
    const struct dt_iov *iov = dt_iov(l->type, &n);
    if (iov == NULL || dt_span(l->type, l->count * nblocks, &lo, &hi) != HINT_SUCCESS)
        return UINT64_MAX;
    uint64_t at = heap_span(iov, n * sizeof *iov);
    if (at == UINT64_MAX)
        return UINT64_MAX;
    *out = (struct coll_shm_layout){.iov_off = at, .niov = n, .count = l->count, .extent = l->extent, .lo = lo};
    return heap_span(buf + lo, (size_t)(hi - lo));
}

/* The same for a v side: nb blocks of counts[p] data bytes at byte offsets displs[p]. */
static uint64_t publish_vside(const char *buf, const struct coll_layout *l, int nb, const size_t *counts,
                              const size_t *displs, struct coll_shm_layout *out)
{
    *out = (struct coll_shm_layout){0};
    if (l->type == NULL)
        return heap_span(buf, v_extent(counts, displs, nb));
    size_t n, es = dt_size(l->type);
    const struct dt_iov *iov = dt_iov(l->type, &n);
    uint64_t at = iov ? heap_span(iov, n * sizeof *iov) : UINT64_MAX;
    ptrdiff_t lo = PTRDIFF_MAX, hi = PTRDIFF_MIN, a, b;
    if (at == UINT64_MAX)
        return UINT64_MAX;
    for (int p = 0; p < nb; p++) {
        if (counts[p] == 0)
            continue;
        if (dt_span(l->type, counts[p] / es, &a, &b) != HINT_SUCCESS)
            return UINT64_MAX;
        lo = (ptrdiff_t)displs[p] + a < lo ? (ptrdiff_t)displs[p] + a : lo;
        hi = (ptrdiff_t)displs[p] + b > hi ? (ptrdiff_t)displs[p] + b : hi;
    }
    if (lo == PTRDIFF_MAX)
        return 0; /* nothing of this side is touched */
    *out = (struct coll_shm_layout){.iov_off = at, .niov = n, .extent = l->extent, .lo = lo};
    return heap_span(buf + lo, (size_t)(hi - lo));
}

/* Bytes from a published side's buffer address to its block i (not for the v variants). */
static ptrdiff_t block_at(const struct coll_shm_layout *l, size_t block, int i)
{
    return i * (l->niov ? (ptrdiff_t)l->count * l->extent : (ptrdiff_t)block);
}

static struct dt_flat side_flat(const struct coll_shm_layout *l)
{
    return (struct dt_flat){.iov = l->niov ? heap_at(l->iov_off) : NULL, .niov = l->niov, .extent = l->extent};
}

/* What is copied: the matrix's block (s, d) for each operation. */
enum shape { ALLTOALL, ALLTOALLV, ALLGATHER, ALLGATHERV };

/* Publish this rank's buffers (and for the v variants its counts and displacements). */
static void publish(struct coll_args *a, enum shape sh, struct coll_shm_member *me)
{
    int P = a->size;
    size_t b = a->block;
    me->sl = me->rl = (struct coll_shm_layout){0};
    switch (sh) {
    case ALLTOALL:
        me->soff = publish_side(a->sbuf, &a->sl, (size_t)P, b, &me->sl);
        me->roff = publish_side(a->rbuf, &a->rl, (size_t)P, b, &me->rl);
        break;
    case ALLTOALLV:
        for (int p = 0; p < P; p++) {
            me->v[p] = a->scounts[p];
            me->v[P + p] = a->sdispls[p];
            me->v[2 * P + p] = a->rdispls[p];
            me->v[3 * P + p] = a->rcounts[p];
        }
        me->soff = publish_vside(a->sbuf, &a->sl, P, a->scounts, a->sdispls, &me->sl);
        me->roff = publish_vside(a->rbuf, &a->rl, P, a->rcounts, a->rdispls, &me->rl);
        break;
    case ALLGATHER:
        me->soff = publish_side(a->sbuf, &a->sl, 1, b, &me->sl);
        me->roff = publish_side(a->rbuf, &a->rl, (size_t)P, b, &me->rl);
        break;
    case ALLGATHERV:
        for (int p = 0; p < P; p++) {
            me->v[p] = a->rdispls[p];
            me->v[3 * P + p] = a->rcounts[p];
        }
        me->v[P] = b; /* this rank's block */
        me->soff = publish_vside(a->sbuf, &a->sl, 1, &b, &(size_t){0}, &me->sl);
        me->roff = publish_vside(a->rbuf, &a->rl, P, a->rcounts, a->rdispls, &me->rl);
        break;
    }
}

static int fallback(struct coll_args *a, enum shape sh)
{
    static const char *const names[] = {"pairwise", "pairwise", "ring", "ring"};
    static int (*const algs[])(struct coll_args *) = {alltoall_pairwise, alltoallv_pairwise, allgather_ring,
                                                      allgatherv_ring};
    coll_record(a->op_id, names[sh]);
    return coll_has_layout(a) ? coll_run_packed(a, algs[sh]) : algs[sh](a);
}

/* n bytes from member s's send side, soff bytes from its buffer address, to member d's receive
   side at roff: the hybrid copy between contiguous sides, else piece against piece of the two
   published layouts. */
static bool copy_block(const struct coll_shm_member *ms, const struct coll_shm_member *md, ptrdiff_t soff,
                       ptrdiff_t roff, size_t n, size_t T, size_t R)
{
    char *src = (char *)heap_at(ms->soff) - ms->sl.lo + soff, *dst = (char *)heap_at(md->roff) - md->rl.lo + roff;
    if (ms->sl.niov == 0 && md->rl.niov == 0)
        return copy_hybrid(dst, src, n, T, R);
    struct dt_flat fs = side_flat(&ms->sl), fd = side_flat(&md->rl);
    dt_copy_flat(src, &fs, dst, &fd, n);
    return false;
}

/* The block size the copy threshold is kept for: the v variants have no one block (their
   a->block is 0, which would make every size share one threshold), so their largest here. */
static size_t threshold_block(const struct coll_args *a, enum shape sh)
{
    if (sh == ALLTOALL || sh == ALLGATHER)
        return a->block;
    size_t most = 1;
    for (int p = 0; p < a->size; p++)
        if (a->rcounts[p] > most)
            most = a->rcounts[p];
    return most;
}

/* Alg. 3 for any of the four shapes: publish, barrier, copy this rank's tuples, fence, barrier.
   kind < 0: the NUMA-aware Morton schedule. */
static int order_copy(struct coll_args *a, int kind, enum shape sh)
{
    const struct order_tuple *tl = kind >= 0 ? coll_order_tuples(a->g, kind) : NULL;
    struct order_cache *c = cache_of(a->g);
    if ((kind >= 0 && tl == NULL) || c == NULL)
        return HINT_ERR_NOMEM;
    int P = a->size, slot = coll_group_of(a->g)->slot;
    size_t b = a->block;
    struct coll_shm_member *me = coll_shm_member(slot, a->rank);
    publish(a, sh, me);
    if (kind < 0 && c->numa == NULL)
        me->socket = my_socket(a);
    int st = coll_heap_meet(a); /* publishes (release/acquire through the barrier) */
    if (st != HINT_SUCCESS)
        return st;
    if (kind < 0 && (tl = numa_tuples(a->g, slot)) == NULL)
        return HINT_ERR_NOMEM; /* every rank has the same inputs: all fail alike */
    for (int p = 0; p < P; p++) {
        struct coll_shm_member *m = coll_shm_member(slot, p);
        if (m->soff == UINT64_MAX || m->roff == UINT64_MAX)
            return fallback(a, sh); /* every rank sees the same offsets: all fall back */
    }
    int mode = a->copy >= 0 ? a->copy : coll_copy_override >= 0 ? coll_copy_override : c->mode;
    struct thresh *th = mode == COPY_HYBRID ? threshold_for(c, threshold_block(a, sh), P) : NULL;
    size_t T = mode == COPY_TEMPORAL ? SIZE_MAX : mode == COPY_NT ? 0 : th->th.T;
    size_t R = th ? th->th.R : 0;
    double t0 = th ? hint_wtime() : 0;
    bool mismatch = false, hybrid_ran = false;
    for (int i = 0; i < P; i++) {
        int s = (int)tl[i].src, d = (int)tl[i].dst;
        struct coll_shm_member *ms = coll_shm_member(slot, s), *md = coll_shm_member(slot, d);
        size_t n = b;
        ptrdiff_t soff = 0, roff = block_at(&md->rl, b, s);
        switch (sh) {
        case ALLTOALL: soff = block_at(&ms->sl, b, d); break;
        case ALLTOALLV: n = ms->v[d]; soff = (ptrdiff_t)ms->v[P + d]; roff = (ptrdiff_t)md->v[2 * P + s]; break;
        case ALLGATHER: break;
        case ALLGATHERV: n = ms->v[P]; roff = (ptrdiff_t)md->v[s]; break;
        }
        if ((sh == ALLTOALLV || sh == ALLGATHERV) && n != md->v[3 * P + s]) {
            mismatch = true; /* s sends n bytes that d has not room, or no use, for */
            continue;
        }
        if (n)
            hybrid_ran |= copy_block(ms, md, soff, roff, n, T, R);
    }
    if (mismatch)
        atomic_store(&coll_shm_slot(slot)->mismatch, (uint64_t)a->tag);
    copy_fence();
    if (coll_has_layout(a))
        coll_count_direct();
    if (th)
        copy_thresh_record(&th->th, hybrid_ran, hint_wtime() - t0);
    if ((st = barrier_shm(a)) != HINT_SUCCESS)
        return st;
    /* no rank publishes again before every rank has passed this barrier: the word is this call's */
    if (atomic_load(&coll_shm_slot(slot)->mismatch) != (uint64_t)a->tag)
        return HINT_SUCCESS;
    return mismatch ? coll_mismatch(a, "a block's send count differs from its receiver's count") : HINT_ERR_MISMATCH;
}

int alltoall_row(struct coll_args *a) { return order_copy(a, ORDER_ROW, ALLTOALL); }
int alltoall_column(struct coll_args *a) { return order_copy(a, ORDER_COLUMN, ALLTOALL); }
int alltoall_hilbert(struct coll_args *a) { return order_copy(a, ORDER_HILBERT, ALLTOALL); }
int alltoall_morton(struct coll_args *a) { return order_copy(a, ORDER_MORTON, ALLTOALL); }
int alltoall_morton_numa(struct coll_args *a) { return order_copy(a, -1, ALLTOALL); }
int alltoallv_row(struct coll_args *a) { return order_copy(a, ORDER_ROW, ALLTOALLV); }
int alltoallv_column(struct coll_args *a) { return order_copy(a, ORDER_COLUMN, ALLTOALLV); }
int alltoallv_hilbert(struct coll_args *a) { return order_copy(a, ORDER_HILBERT, ALLTOALLV); }
int alltoallv_morton(struct coll_args *a) { return order_copy(a, ORDER_MORTON, ALLTOALLV); }
int alltoallv_morton_numa(struct coll_args *a) { return order_copy(a, -1, ALLTOALLV); }
int allgather_morton(struct coll_args *a) { return order_copy(a, ORDER_MORTON, ALLGATHER); }
int allgather_morton_numa(struct coll_args *a) { return order_copy(a, -1, ALLGATHER); }
int allgatherv_morton(struct coll_args *a) { return order_copy(a, ORDER_MORTON, ALLGATHERV); }
int allgatherv_morton_numa(struct coll_args *a) { return order_copy(a, -1, ALLGATHERV); }
