/*
 * neighbor_allgather and neighbor_alltoall morton — paper 004 §3 (../shared/papers/004_*.txt):
 * the neighbourhood's blocks copied over the shared heap along the compact Morton curve.
 *
 * Plan (built on the first call on a group, kept with it: the topology never changes). Every
 * edge of the topology is a 4-tuple (Rs, Rr, Bs, Br): sender, receiver, the sender's send
 * block, the receiver's receive block, matched as the naive algorithm's messages match (per
 * pair in posting order: a graph's k-th edge X->Y is Y's k-th slot from X; a cart's sends go +1
 * before -1 per dimension). The tuples are sorted by the Morton Z-value of (Rs, Rr) on the
 * P x P grid (collectives/order's balanced curve, which stays compact for P not a power of two;
 * repeated edges keep their order), which is §3.1's compact curve: the curve through the grid's
 * marked cells only. The array is cut into P equal segments; rank i copies segment i. §3.2's
 * ordered buffers are what the tuples give for free: the blocks are found through (Bs, Br), so
 * the user's buffers keep MPI's order.
 *
 * Per call: every rank publishes its send and receive buffers' heap offsets in the group's
 * slot, a barrier, each rank copies its segment (alltoall: block Bs of Rs's send buffer to block
 * Br of Rr's receive buffer; allgather: Rs's one block), a fence, a barrier. A buffer off the
 * heap, or a side that is not contiguous (a derived datatype), on any rank: every rank sees it
 * and all run naive instead (after a barrier; hint_coll_last says naive).
 *
 * The v variants: the plan is the same; block sizes now differ per edge and per call, so every
 * rank also writes, in a span table of its own on the shared heap (made with the plan, its
 * offset published in its member area's v[0]: the member area's 4 * nlocal words are too few
 * for a graph whose repeated neighbours outnumber the node's ranks), (byte offset, bytes) of
 * each of its in-slots (words 0 .. 2m) and of each of its out-slots (words 2m .. 4m;
 * allgatherv: one, its whole send buffer), m the largest degree of the group; a copier takes
 * the sender's pair and the receiver's pair of its edge. Bytes that differ on the two ends of an
 * edge: HINT_ERR_MISMATCH (as alltoallv's orders). No room on the heap for a table: that rank
 * publishes its buffers as off the heap, and all run naive.
 * Node-only (the table marks it).
 * Cost: 2 barriers + about E/P block copies per rank (E edges), no message.
 */
#include <stdlib.h>
#include <string.h>

#include "collectives/algs.h"
#include "collectives/coll_shm.h"
#include "collectives/neighbor.h"
#include "collectives/order/order.h"
#include "datatype/datatype.h"
#include "runtime/group.h"
#include "runtime/heap.h"
#include "topology/vtopo.h"

struct edge {
    uint32_t rs, rr, bs, br;
    uint64_t key; /* Z-value << 32 | position in the global list (repeats keep their order) */
};

struct morton_plan {
    int n;              /* this rank's segment */
    int maxd;           /* the largest in- or out-degree in the group (v variants' word layout) */
    struct edge *seg;
    uint64_t *spans;    /* v variants: this rank's span table on the shared heap (4 maxd words),
                           made on their first call; NULL until then or when the heap had no room */
    bool spans_tried;
};

void neighbor_morton_plan_free(struct morton_plan *m)
{
    if (m != NULL) {
        free(m->seg);
        if (m->spans != NULL)
            heap_release(m->spans);
    }
    free(m);
}

static int by_key(const void *x, const void *y)
{
    uint64_t a = ((const struct edge *)x)->key, b = ((const struct edge *)y)->key;
    return a < b ? -1 : a > b;
}

bool neighbor_lists_refused(const struct coll_args *a, struct neighbor_cache *c)
{
    static struct coll_test_hook hook = {"HINT_TEST_NEIGHBOR_LISTS_NOMEM", -2, 0};
    return coll_test_hook_fires(&hook, a, &c->lists_tries);
}

int neighbor_all_have(hint_group g, bool have)
{
    bool all = false;
    int st = grp_all_ok(g, have, &all, GRP_TAG_TOPO);
    return st != HINT_SUCCESS ? st : all ? HINT_SUCCESS : HINT_ERR_NOMEM;
}

/* What a caller of all_lists allocates once the group's largest degree m is known, before the
   lists are exchanged, so that its failure fails the exchange on every rank too; false: no
   memory. */
struct lists_keep {
    bool (*alloc)(struct lists_keep *k, int m);
};

/* Every rank's in- and out-list (padded to the longest), from one allgather each. l NULL: this
   rank has no memory for the exchange (its cache, or what the caller keeps of it) and takes
   part only to fail it. Every allocation comes before an agreement (neighbor_all_have) that
   fails the exchange on every rank alike, so no rank returns alone while the others wait for it
   in grp_allgather_ints, and no rank keeps a result the others did not: all try again together. */
static int all_lists(hint_group g, const struct vtopo_lists *l, struct lists_keep *keep, int **in, int **out,
                     int *maxd)
{
    int P = g->size, m = 0, *degs = l != NULL ? malloc((size_t)P * 2 * sizeof(int)) : NULL, *mine = NULL;
    int st = neighbor_all_have(g, degs != NULL);
    *in = *out = NULL;
    if (st == HINT_SUCCESS)
        st = grp_allgather_ints(g, (int[2]){l->indegree, l->outdegree}, 2, degs, GRP_TAG_TOPO);
    for (int r = 0; st == HINT_SUCCESS && r < 2 * P; r++)
        m = degs[r] > m ? degs[r] : m;
    free(degs);
    *maxd = m;
    if (st != HINT_SUCCESS)
        return st;
    mine = malloc(((size_t)m * 2 + 1) * sizeof(int));
    *in = malloc(((size_t)P * (size_t)m + 1) * sizeof(int));
    *out = malloc(((size_t)P * (size_t)m + 1) * sizeof(int));
    bool have = mine != NULL && *in != NULL && *out != NULL;
    st = neighbor_all_have(g, have && (keep == NULL || keep->alloc(keep, m)));
    for (int side = 0; st == HINT_SUCCESS && side < 2; side++) {
        const int *list = side ? l->dests : l->sources;
        int n = side ? l->outdegree : l->indegree;
        for (int i = 0; i < m; i++)
            mine[i] = i < n ? list[i] : HINT_PROC_NULL - 1; /* padding */
        st = grp_allgather_ints(g, mine, m, side ? *out : *in, GRP_TAG_TOPO);
    }
    free(mine);
    return st;
}

/* The sender's out-slot that receiver r's in-slot i meets (the n-th slot from s at r takes s's
   n-th send to r, a cart's sends going +1 before -1), -1 when s does not list r that often;
   in, out: every rank's lists, m wide. */
static int match_slot(const int *in, const int *out, int m, bool cart, int r, int i)
{
    int s = in[(size_t)r * (size_t)m + (size_t)i], nth = 0;
    const int *sd = &out[(size_t)s * (size_t)m];
    for (int k = 0; k < i; k++)
        nth += in[(size_t)r * (size_t)m + (size_t)k] == s;
    for (int k = 0, seen = 0; k < m; k++) {
        int jj = cart ? k ^ 1 : k;
        if (jj < m && sd[jj] == r && seen++ == nth)
            return jj;
    }
    return -1;
}

void neighbor_staged_matches_free(struct staged_matches *m)
{
    if (m != NULL)
        free(m->from_slot);
    free(m);
}

/* Every rank checks every rank's slots (the lists are the same on all after the exchange), so an
   invalid graph fails on all ranks alike instead of leaving the others waiting for one that
   returned. The matches are allocated before the lists are exchanged, so that a rank without
   them fails the exchange on every rank (all_lists); l NULL: this rank has no cache to keep them
   in, the same. */
int neighbor_staged_matches(hint_group g, const struct vtopo_lists *l, struct staged_matches **out, int *maxd)
{
    int m = 0, *in = NULL, *outl = NULL;
    struct staged_matches *sm = l != NULL ? calloc(1, sizeof *sm) : NULL;
    if (sm != NULL)
        sm->from_slot = malloc(((size_t)l->indegree + 1) * sizeof(int));
    int st = all_lists(g, sm != NULL && sm->from_slot != NULL ? l : NULL, NULL, &in, &outl, &m);
    for (int r = 0; st == HINT_SUCCESS && r < g->size; r++)
        for (int i = 0; st == HINT_SUCCESS && i < m; i++) {
            if (in[(size_t)r * (size_t)m + (size_t)i] < 0)
                continue;
            int j = match_slot(in, outl, m, l->cart, r, i);
            if (j < 0)
                st = HINT_ERR_TOPOLOGY; /* r lists s more often than s lists r: not a valid graph */
            else if (r == g->rank)
                sm->from_slot[i] = j;
        }
    for (int i = 0; st == HINT_SUCCESS && i < l->indegree; i++)
        if (l->sources[i] < 0)
            sm->from_slot[i] = -1;
    free(in);
    free(outl);
    *maxd = m;
    if (st != HINT_SUCCESS) {
        neighbor_staged_matches_free(sm);
        return st;
    }
    sm->maxd = m;
    *out = sm;
    return HINT_SUCCESS;
}

/* build_plan's edge array and plan, allocated inside the exchange (all_lists): a segment of the
   edges becomes the plan's, so nothing is allocated after it. */
struct plan_keep {
    struct lists_keep k; /* first: all_lists hands back &k */
    int P;
    struct edge *e;
    struct morton_plan *p;
};

static bool plan_alloc(struct lists_keep *k, int m)
{
    struct plan_keep *pk = (struct plan_keep *)k;
    pk->e = malloc(((size_t)pk->P * (size_t)m + 1) * sizeof *pk->e);
    pk->p = calloc(1, sizeof *pk->p);
    return pk->e != NULL && pk->p != NULL;
}

/* l NULL: this rank has no cache to keep the plan in; it takes part in the exchange to fail it. */
static int build_plan(hint_group g, const struct vtopo_lists *l, struct morton_plan **out)
{
    int P = g->size, m, *in = NULL, *outl = NULL;
    struct plan_keep pk = {{plan_alloc}, P, NULL, NULL};
    int st = all_lists(g, l, &pk.k, &in, &outl, &m);
    struct edge *e = pk.e;
    struct morton_plan *p = pk.p;
    size_t ne = 0;
    /* receiver r's slot i from s meets s's next send (in posting order) to r */
    for (int r = 0; st == HINT_SUCCESS && r < P; r++)
        for (int i = 0; i < m; i++) {
            int s = in[(size_t)r * (size_t)m + (size_t)i];
            if (s < 0)
                continue;
            int j = match_slot(in, outl, m, l->cart, r, i);
            if (j < 0) {
                st = HINT_ERR_TOPOLOGY; /* r lists s more often than s lists r: not a valid graph */
                break;
            }
            uint32_t z = morton_zvalue((uint32_t)P, (uint32_t)P, (uint32_t)s, (uint32_t)r);
            e[ne] = (struct edge){(uint32_t)s, (uint32_t)r, (uint32_t)j, (uint32_t)i, (uint64_t)z << 32 | ne};
            ne++;
        }
    free(in);
    free(outl);
    if (st != HINT_SUCCESS) {
        free(e);
        neighbor_morton_plan_free(p);
        return st;
    }
    qsort(e, ne, sizeof *e, by_key);
    size_t lo = ne * (size_t)g->rank / (size_t)P, hi = ne * (size_t)(g->rank + 1) / (size_t)P;
    p->n = (int)(hi - lo);
    p->maxd = m;
    memmove(e, e + lo, (size_t)p->n * sizeof *e);
    struct edge *seg = realloc(e, ((size_t)p->n + 1) * sizeof *e); /* shrinks: a failure keeps e */
    p->seg = seg != NULL ? seg : e;
    *out = p;
    return HINT_SUCCESS;
}

bool neighbor_morton_ok(const struct coll_args *a)
{
    if (a->op_id != COLL_NEIGHBOR_ALLGATHER && a->op_id != COLL_NEIGHBOR_ALLTOALL &&
        a->op_id != COLL_NEIGHBOR_ALLGATHERV && a->op_id != COLL_NEIGHBOR_ALLTOALLV)
        return false;
    /* one rank: its own buffers, no slot. Nothing here looks at this rank's datatypes: ranks
       may differ in layout, and a refusal on some ranks only would leave the others waiting in
       the barrier; a side that is not contiguous is published as off the heap instead, so
       every rank sees it and all run naive. */
    return coll_heap_ok(a) || (a->g != NULL && a->size == 1);
}

/* Whether this rank's sides can be copied as bytes: contiguous, and as many bytes each way. */
static bool plain_sides(const struct coll_args *a)
{
    return dt_is_contig(a->sl.type) && dt_is_contig(a->rl.type) &&
           a->sl.count * dt_size(a->sl.type) == a->rl.count * dt_size(a->rl.type);
}

/* ---- the v variants ---- */

/* One block as bytes: where it starts in its buffer and how long it is. */
struct span {
    uint64_t off, n;
};

/* This rank's out-slot j (allgatherv: its one send block, whatever j). */
static struct span send_span(const struct coll_args *a, int j)
{
    uint64_t size = dt_size(a->sl.type);
    if (a->op_id == COLL_NEIGHBOR_ALLGATHERV)
        return (struct span){0, a->sl.count * size};
    return (struct span){a->sdispls[j] * size, a->scounts[j] * size};
}

static struct span recv_span(const struct coll_args *a, int i)
{
    uint64_t size = dt_size(a->rl.type);
    return (struct span){a->rdispls[i] * size, a->rcounts[i] * size};
}

/* Bytes from a buffer's address to the end of its last non-empty block. */
static size_t extent_of(const struct coll_args *a, int n, struct span (*of)(const struct coll_args *, int))
{
    uint64_t end = 0;
    for (int k = 0; k < n; k++) {
        struct span b = of(a, k);
        if (b.n > 0 && b.off + b.n > end)
            end = b.off + b.n;
    }
    return (size_t)end;
}

/* This rank's span table, made once (heap_alloc, not malloc: malloc may not serve from the heap). */
static uint64_t *span_table(struct morton_plan *mp)
{
    if (!mp->spans_tried && heap.active)
        mp->spans = heap_alloc(4 * (size_t)mp->maxd * sizeof(uint64_t) + 1, 64, false);
    mp->spans_tried = true;
    return mp->spans;
}

/* In-slot i's pair at v[2i], out-slot j's at v[2 maxd + 2j]. */
static void publish_spans(const struct coll_args *a, const struct vtopo_lists *l, int maxd, uint64_t *v)
{
    for (int i = 0; i < l->indegree; i++) {
        struct span b = recv_span(a, i);
        v[2 * i] = b.off;
        v[2 * i + 1] = b.n;
    }
    int nout = a->op_id == COLL_NEIGHBOR_ALLGATHERV ? (l->outdegree > 0) : l->outdegree;
    for (int j = 0; j < nout; j++) {
        struct span b = send_span(a, j);
        v[2 * maxd + 2 * j] = b.off;
        v[2 * maxd + 2 * j + 1] = b.n;
    }
}

/* One rank: every edge is a self loop between its own buffers. */
static int morton_v_self(struct coll_args *a, const struct morton_plan *mp)
{
    bool ag = a->op_id == COLL_NEIGHBOR_ALLGATHERV;
    for (int k = 0; k < mp->n; k++) {
        struct span s = send_span(a, ag ? 0 : (int)mp->seg[k].bs), r = recv_span(a, (int)mp->seg[k].br);
        if (s.n != r.n)
            return coll_mismatch(a, "a block's send count differs from its receiver's count");
        if (s.n > 0)
            memcpy(a->rbuf + r.off, a->sbuf + s.off, s.n);
    }
    return HINT_SUCCESS;
}

static int morton_v(struct coll_args *a, const struct vtopo_lists *l, struct morton_plan *mp)
{
    bool plain = dt_is_contig(a->sl.type) && dt_is_contig(a->rl.type);
    if (a->size == 1 && !plain) {
        coll_record(a->op_id, "naive");
        return neighbor_naive(a);
    }
    if (a->size == 1)
        return morton_v_self(a, mp);
    bool ag = a->op_id == COLL_NEIGHBOR_ALLGATHERV;
    int slot = coll_group_of(a->g)->slot, m = mp->maxd, st;
    struct coll_shm_member *me = coll_shm_member(slot, a->rank);
    size_t sbytes = ag ? (size_t)send_span(a, 0).n * (l->outdegree > 0) : extent_of(a, l->outdegree, send_span);
    uint64_t *table = plain ? span_table(mp) : NULL;
    me->soff = table ? heap_span(a->sbuf, sbytes) : UINT64_MAX;
    me->roff = table ? heap_span(a->rbuf, extent_of(a, l->indegree, recv_span)) : UINT64_MAX;
    if (table) {
        publish_spans(a, l, m, table);
        me->v[0] = heap_offset(table);
    }
    if ((st = barrier_shm(a)) != HINT_SUCCESS)
        return st;
    for (int p = 0; p < a->size; p++) /* every rank reads the same words: all choose alike */
        if (coll_shm_member(slot, p)->soff == UINT64_MAX || coll_shm_member(slot, p)->roff == UINT64_MAX)
            return coll_heap_fallback(a, "naive", neighbor_naive);
    bool mismatch = false;
    for (int k = 0; k < mp->n; k++) {
        const struct edge *e = &mp->seg[k];
        const struct coll_shm_member *s = coll_shm_member(slot, (int)e->rs), *r = coll_shm_member(slot, (int)e->rr);
        const uint64_t *sv = (const uint64_t *)heap_at(s->v[0]) + 2 * m + 2 * (ag ? 0 : e->bs);
        const uint64_t *rv = (const uint64_t *)heap_at(r->v[0]) + 2 * e->br;
        if (sv[1] != rv[1]) {
            mismatch = true; /* the sender has more or fewer bytes than the receiver's slot */
            continue;
        }
        if (sv[1] > 0)
            memcpy((char *)heap_at(r->roff) + rv[0], (const char *)heap_at(s->soff) + sv[0], sv[1]);
    }
    if (mismatch)
        atomic_store(&coll_shm_slot(slot)->mismatch, (uint64_t)a->tag);
    atomic_thread_fence(memory_order_release);
    if ((st = barrier_shm(a)) != HINT_SUCCESS)
        return st;
    if (atomic_load(&coll_shm_slot(slot)->mismatch) != (uint64_t)a->tag)
        return HINT_SUCCESS;
    return mismatch ? coll_mismatch(a, "a block's send count differs from its receiver's count") : HINT_ERR_MISMATCH;
}

int neighbor_morton(struct coll_args *a)
{
    struct vtopo_lists l;
    int st = vtopo_lists(a->g, &l);
    if (st != HINT_SUCCESS)
        return st;
    struct neighbor_cache *c = neighbor_cache_of(a->g);
    if (c == NULL || c->morton == NULL) { /* without a cache, this rank fails the exchange on every rank */
        bool keep = c != NULL && !neighbor_lists_refused(a, c);
        if ((st = build_plan(a->g, keep ? &l : NULL, keep ? &c->morton : NULL)) != HINT_SUCCESS)
            return st;
    }
    if (a->op_id == COLL_NEIGHBOR_ALLGATHERV || a->op_id == COLL_NEIGHBOR_ALLTOALLV)
        return morton_v(a, &l, c->morton);
    size_t block = a->sl.count * dt_size(a->sl.type);
    bool a2a = a->op_id == COLL_NEIGHBOR_ALLTOALL;
    const struct morton_plan *mp = c->morton;
    if (a->size == 1 && !plain_sides(a)) {
        coll_record(a->op_id, "naive");
        return neighbor_naive(a);
    }
    if (a->size == 1) { /* every edge is a self loop */
        for (int k = 0; k < mp->n && block > 0; k++)
            memcpy(a->rbuf + mp->seg[k].br * block, a->sbuf + (a2a ? mp->seg[k].bs * block : 0), block);
        return HINT_SUCCESS;
    }
    int slot = coll_group_of(a->g)->slot;
    struct coll_shm_member *me = coll_shm_member(slot, a->rank);
    bool plain = plain_sides(a);
    me->soff = plain ? heap_span(a->sbuf, block * (a2a ? (size_t)l.outdegree : 1)) : UINT64_MAX;
    me->roff = plain ? heap_span(a->rbuf, block * (size_t)l.indegree) : UINT64_MAX;
    if ((st = barrier_shm(a)) != HINT_SUCCESS)
        return st;
    for (int p = 0; p < a->size; p++) /* every rank reads the same words: all choose alike */
        if (coll_shm_member(slot, p)->soff == UINT64_MAX || coll_shm_member(slot, p)->roff == UINT64_MAX)
            return coll_heap_fallback(a, "naive", neighbor_naive);
    for (int k = 0; k < mp->n && block > 0; k++) {
        const struct edge *e = &mp->seg[k];
        const char *src = (const char *)heap_at(coll_shm_member(slot, (int)e->rs)->soff) + (a2a ? e->bs * block : 0);
        char *dst = (char *)heap_at(coll_shm_member(slot, (int)e->rr)->roff) + e->br * block;
        memcpy(dst, src, block);
    }
    atomic_thread_fence(memory_order_release);
    return barrier_shm(a);
}
