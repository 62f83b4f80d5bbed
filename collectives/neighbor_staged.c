/*
 * neighbor_allgather and neighbor_alltoall staged — small blocks through the staging areas
 * (collectives/staging.c), no barrier: every rank stages its block (alltoall: its blocks, one
 * per out-slot, a->block apart; in its call's head up to 2 KiB, an area beyond) and posts the
 * call's number, waking only its out-neighbours (the ranks that wait for it; every member while
 * one waits in coll_stage_begin, see coll_stage_post_to); then it waits for its distinct
 * in-neighbours' posts only, one by one, and copies each one's block into its slot. The lists
 * (the topology's, and the distinct neighbours but this rank) are made on the first call and
 * kept with the group, so a call reads no topology. A rank never waits for its out-neighbours (they read
 * its head whenever they come: the ring of heads keeps it until every member has started a
 * later call), and a rank with no in-neighbour never waits at all, where morton's two barriers
 * make every rank wait for the slowest member twice per call (1.5 sched_yields per call and
 * rank at P=4, 8-512 B oversubscribed, docs/BENCHMARKS.md) and naive posts indegree +
 * outdegree requests. This is Open MPI's eager send without the messages: the block is copied
 * once into the sender's head, once out by each reader, one line written per call and read per
 * in-neighbour.
 *
 * alltoall: in-slot i reads the block of the sender's out-slot it meets as neighbor_naive's
 * messages match (neighbor_staged_matches, in neighbor_morton.c: one exchange of the lists on the
 * first call, kept with the group); every rank stages room for the group's largest degree, so
 * head or area is the same choice everywhere, and beyond an area every rank runs naive.
 * Every rank passes the same block size (the operations' one count), so every rank takes
 * the same choice by size and stages the call (a rank without neighbours too: the call numbers
 * of the group's staged operations stay in step). A derived side is packed into the head and
 * unpacked out of it per block (dt_copy_typed). Self loops read the rank's own head; repeated
 * in-neighbours are read once per slot; HINT_PROC_NULL slots are left alone.
 * Needs the shared heap and a collective slot (one rank alone: its blocks copied directly).
 * Cost: 1 copy in, indegree copies out, 1 line store, one line load per in-neighbour, one
 * sleeper check per out-neighbour (every member's before: 1370 -> 1200 instructions per call at
 * P=8 and 1615 -> 1250 at P=16 on a 2-D cart, 8 B, bench/call-instructions.py).
 */
#include <stdio.h>
#include <string.h>

#include "collectives/algs.h"
#include "collectives/neighbor.h"
#include "datatype/datatype.h"
#include "runtime/runtime.h"
#include "topology/vtopo.h"

bool neighbor_staged_ok(const struct coll_args *a)
{
    if (a->op_id != COLL_NEIGHBOR_ALLGATHER && a->op_id != COLL_NEIGHBOR_ALLTOALL)
        return false;
    return (a->g != NULL && a->size == 1) || allreduce_staged_ok(a);
}

/* bytes of one side's block, to or from contiguous bytes at `bytes` */
static void pack_side(const char *buf, const struct coll_layout *l, char *bytes, size_t n)
{
    size_t done;
    if (n == 0)
        return;
    if (dt_is_contig(l->type))
        memcpy(bytes, buf, n);
    else
        dt_copy_typed(buf, l->count, l->type, bytes, n, HINT_BYTE, &done); /* sizes checked by api.c */
}

static void unpack_side(const char *bytes, size_t n, char *buf, const struct coll_layout *l)
{
    size_t done;
    if (n == 0)
        return;
    if (dt_is_contig(l->type))
        memcpy(buf, bytes, n);
    else
        dt_copy_typed(bytes, n, HINT_BYTE, buf, l->count, l->type, &done);
}

static char *recv_slot(const struct coll_args *a, int i)
{
    return a->rbuf + (ptrdiff_t)i * (ptrdiff_t)a->rl.count * a->rl.extent;
}

/* The send side's first nblocks blocks of sbytes each, packed at dst, stride bytes apart. */
static void pack_blocks(const struct coll_args *a, int nblocks, size_t sbytes, char *dst, size_t stride)
{
    for (int k = 0; k < nblocks && sbytes > 0; k++)
        pack_side(a->sbuf + (ptrdiff_t)k * (ptrdiff_t)a->sl.count * a->sl.extent, &a->sl, dst + (size_t)k * stride,
                  sbytes);
}

/* One rank alone: every in-slot is a self loop (or HINT_PROC_NULL), read from a packed copy of
   the send side (the buffers may overlap). */
static int staged_self(struct coll_args *a, const struct vtopo_lists *l, const struct staged_matches *m,
                       size_t sbytes, size_t rbytes)
{
    int nblocks = m ? l->outdegree : 1;
    char *tmp = NULL;
    int st;
    CHECK_GOTO(coll_scratch((size_t)nblocks * sbytes, (void **)&tmp), out);
    pack_blocks(a, nblocks, sbytes, tmp, sbytes);
    for (int i = 0; i < l->indegree; i++)
        if (l->sources[i] != HINT_PROC_NULL)
            unpack_side(tmp + (m ? (size_t)m->from_slot[i] * sbytes : 0), rbytes < sbytes ? rbytes : sbytes,
                        recv_slot(a, i), &a->rl);
out:
    free(tmp);
    return st;
}

/* Where in-slot i's block comes from in its sender's staged bytes: allgather, the one block;
   alltoall, the sender's out-slot the slot meets, blocks a->block apart. */
static size_t from_offset(const struct coll_args *a, const struct staged_matches *m, int i)
{
    return m ? (size_t)m->from_slot[i] * a->block : 0;
}

void neighbor_staged_plan_free(struct staged_plan *p)
{
    if (p != NULL)
        free(p->ring);
    free(p);
}

/* The members of list[0 .. n-1] but HINT_PROC_NULL, `me` and repeats, into out; their count. */
static int distinct(const int *list, int n, int me, int *out)
{
    int k = 0;
    for (int i = 0; i < n; i++) {
        bool seen = list[i] < 0 || list[i] == me;
        for (int j = 0; j < k && !seen; j++)
            seen = out[j] == list[i];
        if (!seen)
            out[k++] = list[i];
    }
    return k;
}

/* HINT_TEST_NEIGHBOR_NOMEM=RANK[:N]: world rank RANK cannot make the plan at its first N tries
   (1 if N is not given) on each group, as when malloc fails. */
static bool test_refuses(const struct coll_args *a, struct neighbor_cache *c)
{
    static struct coll_test_hook hook = {"HINT_TEST_NEIGHBOR_NOMEM", -2, 0};
    return coll_test_hook_fires(&hook, a, &c->plan_tries);
}

static int make_plan(struct coll_args *a, struct neighbor_cache *c)
{
    struct staged_plan *p = test_refuses(a, c) ? NULL : calloc(1, sizeof *p);
    int st = p == NULL ? HINT_ERR_NOMEM : vtopo_lists(a->g, &p->l);
    if (st == HINT_SUCCESS &&
        (p->ring = malloc(((size_t)p->l.outdegree + (size_t)p->l.indegree + 1) * sizeof *p->ring)) == NULL)
        st = HINT_ERR_NOMEM;
    if (st != HINT_SUCCESS) {
        neighbor_staged_plan_free(p);
        return st;
    }
    p->nring = distinct(p->l.dests, p->l.outdegree, a->rank, p->ring);
    for (int k = 0; k < p->nring; k++)
        p->ring[k] = a->g->world[p->ring[k]]; /* coll_stage_post_to wakes world ranks */
    p->wait = p->ring + p->nring;
    p->nwait = distinct(p->l.sources, p->l.indegree, a->rank, p->wait);
    c->plan = p;
    return HINT_SUCCESS;
}

/* The group's plan and, for alltoall, its matches, made on the first call. The matches come from
   an exchange of every rank's lists, collective, which fails on every rank alike when one has no
   memory for it (this rank: c NULL, or the test hook), so all try again at their next call. The
   plan is this rank's alone: made again at the next call after a failure. */
static int plan_of(struct coll_args *a, struct neighbor_cache *c, struct staged_plan **pp, struct staged_matches **mp)
{
    int st = HINT_SUCCESS;
    *mp = NULL;
    if (a->op_id == COLL_NEIGHBOR_ALLTOALL && (c == NULL || c->staged == NULL)) {
        struct vtopo_lists l;
        int maxd = 0;
        bool keep = c != NULL && !neighbor_lists_refused(a, c);
        if ((st = vtopo_lists(a->g, &l)) == HINT_SUCCESS)
            st = neighbor_staged_matches(a->g, keep ? &l : NULL, keep ? &c->staged : NULL, &maxd);
        if (c != NULL)
            c->staged_maxd = maxd;
        if (st != HINT_SUCCESS)
            return st;
    }
    if (c == NULL)
        return HINT_ERR_NOMEM;
    *mp = a->op_id == COLL_NEIGHBOR_ALLTOALL ? c->staged : NULL;
    if (c->plan == NULL && (st = make_plan(a, c)) != HINT_SUCCESS)
        return st;
    *pp = c->plan;
    return HINT_SUCCESS;
}

/* Bytes every rank stages: one block, or (alltoall) as many as the group's largest out-degree, the
   same on every rank, so is the choice of head, area or naive. */
static size_t staged_bytes(const struct coll_args *a, int maxd)
{
    return a->op_id == COLL_NEIGHBOR_ALLTOALL ? (size_t)maxd * a->block : a->block;
}

static bool beyond_area(const struct coll_args *a, size_t staged)
{
    return a->size > 1 && staged > (size_t)a->size * coll_stage_block(a->size);
}

/* This rank has no plan (out of memory). Its out-neighbours wait for its post of the call, and
   its call number must stay in step with theirs, so it stages the call as failed (the staging
   areas' failure path: coll_stage_fail) and they return HINT_ERR_NOMEM with it instead of
   waiting forever, or reading its next call's blocks as this one's. Where the others run naive
   (blocks beyond an area), so does this rank: naive needs no plan. */
static int plan_missing(struct coll_args *a, const struct neighbor_cache *c)
{
    int maxd = c != NULL ? c->staged_maxd : 0;
    if ((a->op_id != COLL_NEIGHBOR_ALLTOALL || maxd > 0) && beyond_area(a, staged_bytes(a, maxd))) {
        coll_record(a->op_id, "naive");
        return neighbor_naive(a);
    }
    if (a->size > 1)
        coll_stage_fail(a);
    return HINT_ERR_NOMEM;
}

int neighbor_staged(struct coll_args *a)
{
    struct neighbor_cache *c = neighbor_cache_of(a->g);
    struct staged_plan *p;
    struct staged_matches *m;
    int st = plan_of(a, c, &p, &m);
    if (st != HINT_SUCCESS)
        return st == HINT_ERR_NOMEM ? plan_missing(a, c) : st; /* other errors: the same on every rank */
    const struct vtopo_lists *l = &p->l;
    size_t sbytes = l->outdegree > 0 ? a->sl.count * dt_size(a->sl.type) : 0;
    size_t rbytes = a->rl.count * dt_size(a->rl.type);
    int nblocks = m ? l->outdegree : 1;
    size_t staged = staged_bytes(a, m ? m->maxd : 0);
    if (beyond_area(a, staged)) {
        coll_record(a->op_id, "naive"); /* every rank finds the same */
        return neighbor_naive(a);
    }
    if (a->size == 1)
        return staged_self(a, l, m, sbytes, rbytes);
    char *mine = coll_stage_begin(a, staged);
    if (mine == NULL)
        return HINT_ERR_NOMEM;
    pack_blocks(a, nblocks, sbytes, mine, a->block);
    coll_stage_post_to(a, p->ring, p->nring); /* only the out-neighbours wait for this post */
    if ((st = coll_stage_wait_list(a, p->wait, p->nwait)) != HINT_SUCCESS)
        return st;
    size_t off;
    char *const *peer = coll_stage_peers(a, &off);
    bool contig = dt_is_contig(a->rl.type);
    for (int i = 0; i < l->indegree && rbytes > 0; i++) {
        if (l->sources[i] == HINT_PROC_NULL)
            continue;
        const char *from = peer[l->sources[i]] + off + from_offset(a, m, i);
        if (contig)
            memcpy(recv_slot(a, i), from, rbytes);
        else
            unpack_side(from, rbytes, recv_slot(a, i), &a->rl);
    }
    return HINT_SUCCESS;
}
