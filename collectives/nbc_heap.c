/*
 * collectives/nbc_heap.c — the nonblocking collectives' single-copy schedules over the shared
 * heap, for a group on one node with a collective slot: alltoall(v), allgather(v), bcast,
 * gather(v), scatter(v), reduce, allreduce, reduce_scatter_block. No message at all: each call
 * publishes the heap offsets of what its peers read in a descriptor of its own, and every copy
 * goes straight from the owner's buffer into the reader's, inside one poll step (sched.h) that
 * each progress pass advances as far as the peers allow, never waiting.
 *
 * Descriptors: a node area of their own, per collective slot and member a ring of NBC_RING
 * lines; call number c of a group uses line c % NBC_RING and marks it with its key, the slot's
 * generation and c (the same on every member: collective calls start in the same order). A
 * reader copies from member p once p's line carries the call's key, then adds one to p's
 * `readers`; p's request completes once its own reads are done and every reader has counted, so
 * its buffers may be reused as soon as the wait returns. A line is published again only after
 * the call that used it completed here (more than NBC_RING calls in flight on a group: the
 * newer ones publish from a later progress pass).
 *
 *   alltoall(v), allgather(v)  every rank publishes its send side; each pulls its blocks from
 *                              every peer into its own receive buffer. P - 1 copies per rank.
 *   bcast                      the root publishes; every other rank copies the message out.
 *   gather(v)                  every non-root publishes; the root copies each block in.
 *   scatter(v)                 the root publishes; each rank copies its own block out.
 *   reduce_scatter_block       all publish their inputs; rank i reduces block i from all of
 *                              them into its output, in rank order.
 *   allreduce                  all publish input and output; rank i reduces segment i of all
 *                              inputs into its output (rank order), flags it (`reduced`), then
 *                              copies every other segment from its owner's output (`readers2`).
 *   reduce                     as allreduce's first half, rank i writing segment i straight
 *                              into the root's output (`readers2` at the root counts them).
 * What peers read must lie on the heap and be dense: a send side off the heap (a static or
 * stack buffer) or of a derived type is packed into heap scratch at the call (one more copy,
 * still no message); a receive side is written in this rank's own layout. Each rank decides
 * this alone, so the members need not agree on anything but the call.
 */
#include <stdint.h>
#include <stdlib.h>

#include "collectives/coll_shm.h"
#include "collectives/nbc_heap.h"
#include "datatype/datatype.h"
#include "runtime/heap.h"
#include "runtime/runtime.h"
#include "runtime/transport.h"

#define NBC_RING 16

struct nbc_desc {
    _Atomic uint64_t key;       /* the call whose offsets these are (0: none yet) */
    uint64_t soff;              /* what peers read: the dense send side (heap offset) */
    uint64_t roff;              /* allreduce, reduce at the root: the dense result */
    uint64_t voff;              /* v variants: P displacements then P byte counts (heap offset) */
    _Atomic uint64_t readers;   /* peers done reading soff */
    _Atomic uint64_t reduced;   /* allreduce: key once this rank's segment of roff is final */
    _Atomic uint64_t readers2;  /* allreduce: peers done reading roff; reduce: segments written */
    uint64_t bytes;             /* this rank's block bytes (a reader checks its own against it) */
};
_Static_assert(sizeof(struct nbc_desc) == COLL_CACHE_LINE, "a descriptor is one line");

static int area_id = -1;
static char *area;

static size_t area_bytes(int nlocal) { return (size_t)COLL_SHM_SLOTS * (size_t)nlocal * NBC_RING * sizeof(struct nbc_desc); }

int nbc_heap_setup(void)
{
    area_id = rt_node_area_add("nbc", area_bytes);
    return area_id < 0 ? HINT_ERR_INTERNAL : HINT_SUCCESS;
}

static struct nbc_desc *desc(int slot, int member, int line)
{
    return (struct nbc_desc *)area + ((size_t)slot * (size_t)rt.boot.local_size + (size_t)member) * NBC_RING + line;
}

static bool has_heap_alg(int op)
{
    switch (op) {
    case COLL_BCAST: case COLL_REDUCE: case COLL_ALLREDUCE: case COLL_REDUCE_SCATTER_BLOCK:
    case COLL_GATHER: case COLL_GATHERV: case COLL_SCATTER: case COLL_SCATTERV:
    case COLL_ALLGATHER: case COLL_ALLGATHERV: case COLL_ALLTOALL: case COLL_ALLTOALLV: return true;
    default: return false;
    }
}

bool nbc_heap_usable(const struct coll_args *a)
{
    if (!has_heap_alg(a->op_id) || a->g == NULL || a->size < 2 || !heap.active || area_id < 0)
        return false;
    if (area == NULL)
        area = rt_node_area(area_id);
    struct coll_group *cg = coll_group_of(a->g);
    return area != NULL && cg != NULL && cg->slot >= 0 && cg->nodes <= 1;
}

/* ---- one call ---- */

enum role { R_ALL, R_ROOT, R_LEAF }; /* who publishes: everyone, the root only, all but the root */

struct hcall {
    struct coll_args a;
    uint64_t key;
    int slot, line;
    bool publish, published, done_own;
    const char *data;       /* dense send side on the heap (this rank's copy or the caller's) */
    uint64_t *v;            /* v variants: displacements, counts (heap) */
    char *res;              /* allreduce, reduce's root: the dense result on the heap */
    unsigned char *got;     /* per peer: its part is copied (or reduced) */
    int ngot, need;         /* parts done, parts to do */
    int want_readers, want_readers2;
    int phase;              /* allreduce: 0 reduce own segment, 1 gather the others */
    bool failed;            /* a reduction whose members disagree: only counting reads */
    struct hcall *next, *prev; /* calls of this rank that publish and have not completed, in call order */
#define NBC_HEAP_BUFS 3
    void *heap_bufs[NBC_HEAP_BUFS]; /* heap scratch (heap_scratch), released with the call */
    int nheap;
    bool queued;
    int ndrained;           /* peers whose reads were counted after a disagreement */
};

static bool is_v(int op) { return op == COLL_GATHERV || op == COLL_SCATTERV || op == COLL_ALLGATHERV || op == COLL_ALLTOALLV; }
static bool is_reduction(int op) { return op == COLL_REDUCE || op == COLL_ALLREDUCE || op == COLL_REDUCE_SCATTER_BLOCK; }

/* Heap scratch of the call, released with it (hcall_free); NULL (and the schedule failed) when
   the heap has no room. From heap_alloc, not malloc: malloc may not serve from the heap (a
   sanitizer's, or a full partition's fallback). */
static void *heap_scratch(struct sched *s, struct hcall *h, size_t n)
{
    void *p = h->nheap < NBC_HEAP_BUFS ? heap_alloc(n ? n : 1, 64, false) : NULL;
    if (p)
        h->heap_bufs[h->nheap++] = p;
    if (p == NULL) {
        RT_ERR("coll", "the shared heap has no room for %zu bytes of a nonblocking collective's "
               "scratch (its send side is off the heap or of a derived type); the call fails with "
               "HINT_ERR_NOMEM: enlarge the heap (HINT_HEAP_SIZE) or use heap buffers", n);
        sched_fail(s, HINT_ERR_NOMEM);
        return NULL;
    }
    return p;
}

/* The pieces of this rank's send side: P blocks (alltoall, scatter at the root), else one. */
static int send_pieces(const struct hcall *h) { return h->a.op_id == COLL_ALLTOALL || h->a.op_id == COLL_ALLTOALLV || h->a.op_id == COLL_SCATTER || h->a.op_id == COLL_SCATTERV ? h->a.size : 1; }

/* Piece p of the send side in the caller's buffer: where, bytes, and its layout. */
static const char *piece(const struct hcall *h, int p, size_t *bytes, const struct coll_layout **l)
{
    const struct coll_args *a = &h->a;
    *l = &a->sl;
    switch (a->op_id) {
    case COLL_BCAST: *bytes = a->block; *l = &a->rl; return a->rbuf;
    case COLL_REDUCE: case COLL_ALLREDUCE: *bytes = a->block; return a->sbuf;
    case COLL_REDUCE_SCATTER_BLOCK: *bytes = a->block * (size_t)a->size; return a->sbuf;
    case COLL_ALLTOALLV: case COLL_SCATTERV: *bytes = a->scounts[p]; return a->sbuf + a->sdispls[p];
    case COLL_ALLTOALL: case COLL_SCATTER: *bytes = a->block; return coll_send_block(a, p);
    default: *bytes = a->block; return a->sbuf; /* gather(v), allgather(v) */
    }
}

/* Makes h->data: the caller's send side when it is dense and on the heap, else a packed copy in
   heap scratch; and for the v variants the displacements and counts peers read. */
static void dense_send(struct sched *s, struct hcall *h)
{
    int n = send_pieces(h);
    bool v = is_v(h->a.op_id) && n > 1, in_place = true;
    size_t total = 0, bytes;
    const struct coll_layout *l;
    const char *base = piece(h, 0, &bytes, &l);
    for (int p = 0; p < n; p++) {
        const char *at = piece(h, p, &bytes, &l);
        total += bytes;
        in_place = in_place && !l->type && heap_span(at, bytes) != UINT64_MAX && heap_offset(base) != UINT64_MAX &&
                   at >= base;
    }
    /* a reduction in place reads its input from the buffer its result is written to */
    if (is_reduction(h->a.op_id) && h->a.rbuf && base < h->a.rbuf + h->a.block && h->a.rbuf < base + total)
        in_place = false;
    if (v && (h->v = heap_scratch(s, h, 2 * (size_t)n * sizeof *h->v)) == NULL)
        return;
    if (in_place) {
        h->data = base;
        for (int p = 0; v && p < n; p++) {
            const char *at = piece(h, p, &bytes, &l);
            h->v[p] = (uint64_t)(at - base);
            h->v[n + p] = bytes;
        }
        return;
    }
    char *d = heap_scratch(s, h, total);
    if (d == NULL)
        return;
    size_t off = 0;
    for (int p = 0; p < n; p++) {
        const char *at = piece(h, p, &bytes, &l);
        size_t done;
        if (l->type && bytes)
            dt_copy_typed(at, nbc_elems(bytes, l), l->type, d + off, bytes, HINT_BYTE, &done);
        else
            copy_bytes(d + off, at, bytes);
        if (v) {
            h->v[p] = off;
            h->v[n + p] = bytes;
        }
        off += bytes;
    }
    h->data = d;
}

static void wake(const struct hcall *h, int p) { rt_wake(h->a.g->world[p]); }
static void wake_all(const struct hcall *h)
{
    for (int p = 0; p < h->a.size; p++)
        if (p != h->a.rank)
            wake(h, p);
}

/* The calls of this rank that publish and have not completed, oldest first: a line is published
   by its calls in call order (a newer call taking a line before an older one has would leave
   the peers waiting for the older one, which waits for the line). */
static struct hcall *queue_head, *queue_tail;

static void enqueue(struct hcall *h)
{
    h->prev = queue_tail;
    h->next = NULL;
    if (queue_tail)
        queue_tail->next = h;
    else
        queue_head = h;
    queue_tail = h;
    h->queued = true;
}

static void dequeue(void *arg)
{
    struct hcall *h = arg;
    if (!h->queued)
        return;
    if (h->prev)
        h->prev->next = h->next;
    else
        queue_head = h->next;
    if (h->next)
        h->next->prev = h->prev;
    else
        queue_tail = h->prev;
    h->queued = false;
}

/* No older call of this rank still holds or waits for h's line. */
static bool line_free(const struct hcall *h)
{
    for (const struct hcall *o = queue_head; o && o != h; o = o->next)
        if (o->slot == h->slot && o->line == h->line)
            return false;
    return true;
}

/* Publishes this rank's line once its older calls on it have completed here. */
static bool try_publish(struct hcall *h)
{
    if (h->published)
        return true;
    if (!line_free(h))
        return false;
    struct nbc_desc *d = desc(h->slot, h->a.rank, h->line);
    d->soff = h->data ? heap_offset(h->data) : 0;
    d->roff = h->res ? heap_offset(h->res) : 0;
    d->voff = h->v ? heap_offset(h->v) : UINT64_MAX;
    d->bytes = h->a.block;
    atomic_store_explicit(&d->readers, 0, memory_order_relaxed);
    atomic_store_explicit(&d->readers2, 0, memory_order_relaxed);
    atomic_store_explicit(&d->reduced, 0, memory_order_relaxed);
    atomic_store_explicit(&d->key, h->key, memory_order_release);
    h->published = true;
    wake_all(h);
    return true;
}

/* Member p's line for this call, or NULL while p has not published it. */
static const struct nbc_desc *peer(const struct hcall *h, int p)
{
    const struct nbc_desc *d = desc(h->slot, p, h->line);
    return atomic_load_explicit(&d->key, memory_order_acquire) == h->key ? d : NULL;
}

static void count_read(const struct hcall *h, int p, bool second)
{
    struct nbc_desc *d = desc(h->slot, p, h->line);
    atomic_fetch_add_explicit(second ? &d->readers2 : &d->readers, 1, memory_order_acq_rel);
    wake(h, p);
}

/* n bytes at src into this rank's receive side at dst, in its layout. */
static void put(const struct hcall *h, const char *src, char *dst, size_t n)
{
    size_t done;
    if (h->a.rl.type && n)
        dt_copy_typed(src, n, HINT_BYTE, dst, nbc_elems(n, &h->a.rl), h->a.rl.type, &done);
    else
        copy_bytes(dst, src, n);
}

/* Where peer p's part for this rank starts in p's published data, and its bytes there. */
static const char *part_of(const struct hcall *h, const struct nbc_desc *d, int me, size_t *bytes)
{
    const char *base = heap_at(d->soff);
    if (d->voff != UINT64_MAX) {
        const uint64_t *v = heap_at(d->voff);
        int n = h->a.size;
        *bytes = v[n + me];
        return base + v[me];
    }
    *bytes = d->bytes;
    bool blocks = h->a.op_id == COLL_ALLTOALL || h->a.op_id == COLL_SCATTER;
    return blocks ? base + (size_t)me * d->bytes : base;
}

/* Where this rank's data from peer p lands, and the bytes it expects. */
static char *dest_of(const struct hcall *h, int p, size_t *bytes)
{
    const struct coll_args *a = &h->a;
    switch (a->op_id) {
    case COLL_BCAST: *bytes = a->block; return a->rbuf;
    case COLL_SCATTER: case COLL_SCATTERV: *bytes = a->block; return a->rbuf;
    case COLL_ALLTOALLV: case COLL_ALLGATHERV: case COLL_GATHERV: *bytes = a->rcounts[p]; return a->rbuf + a->rdispls[p];
    default: *bytes = a->block; return coll_recv_block(a, p);
    }
}

static void mismatch(struct sched *s, const struct hcall *h, int p, size_t want, size_t got)
{
    RT_ERR("coll", "%s (nonblocking, shared heap): rank %d expects %zu bytes from rank %d, which "
           "sends %zu; the call ends with HINT_ERR_MISMATCH", coll_tables[h->a.op_id].op, h->a.rank, want, p, got);
    sched_fail(s, HINT_ERR_MISMATCH);
}

static enum role role_of(int op);

/* Whether this rank copies a part from peer p: the root from everyone in gather, everyone from
   the root in bcast and scatter, everyone from everyone else in alltoall and allgather. */
static bool pulls_from(const struct hcall *h, int p)
{
    switch (role_of(h->a.op_id)) {
    case R_LEAF: return h->a.rank == h->a.root;
    case R_ROOT: return p == h->a.root;
    default: return true;
    }
}

/* Copies what it can of the parts this rank pulls from its peers. */
static void pull(struct sched *s, struct hcall *h)
{
    int P = h->a.size, me = h->a.rank;
    for (int i = 1; i < P && h->ngot < h->need; i++) {
        int p = (me + i) % P;
        if (h->got[p] || !pulls_from(h, p))
            continue;
        const struct nbc_desc *d = peer(h, p);
        if (d == NULL)
            continue;
        size_t want, have;
        char *dst = dest_of(h, p, &want);
        const char *src = part_of(h, d, me, &have);
        if (have != want)
            mismatch(s, h, p, want, have);
        else
            put(h, src, dst, want);
        count_read(h, p, false);
        h->got[p] = 1;
        h->ngot++;
    }
}

/* ---- the reductions ---- */

static void segment(const struct hcall *h, int i, size_t *first, size_t *n)
{
    size_t P = (size_t)h->a.size, q = h->a.count / P, r = h->a.count % P, k = (size_t)i;
    *first = k * q + (k < r ? k : r);
    *n = q + (k < r);
}

/* The input of member p, from its line (all published). */
static const char *input_of(const struct hcall *h, int p) { return heap_at(peer(h, p)->soff); }

static void give_up(struct hcall *h);

/* True once every member has published this call; a member whose size differs ends the call
   with HINT_ERR_MISMATCH (all see it, and each counts its reads so that all still finish). */
static bool all_published(struct sched *s, struct hcall *h, size_t bytes)
{
    for (int p = 0; p < h->a.size; p++) {
        const struct nbc_desc *d = peer(h, p);
        if (d == NULL)
            return false;
        if (d->bytes != bytes) {
            mismatch(s, h, p, bytes, d->bytes);
            give_up(h);
            return false;
        }
    }
    return true;
}

/* dst[0, n) = in_0 op (in_1 op ... in_{P-1}) over elements [first, first + n), in rank order. */
static void reduce_all(const struct hcall *h, size_t off, size_t n, char *dst)
{
    int P = h->a.size;
    if (n == 0)
        return;
    copy_bytes(dst, input_of(h, P - 1) + off, n * h->a.esize);
    for (int p = P - 2; p >= 0; p--)
        op_reduce(h->a.op, h->a.basic, input_of(h, p) + off, dst, n);
}

static void done_reading_inputs(const struct hcall *h)
{
    for (int p = 0; p < h->a.size; p++)
        if (p != h->a.rank)
            count_read(h, p, false);
}

/* A mismatch in a reduction: nothing is read; each peer's reads are counted once it has
   published this call (counted earlier, they would land on the line's previous call and be
   reset), so that every member still finishes. */
static void give_up(struct hcall *h)
{
    h->failed = true;
}

static void drain(struct hcall *h)
{
    int op = h->a.op_id, me = h->a.rank;
    for (int p = 0; p < h->a.size; p++) {
        if (p == me || h->got[p] || peer(h, p) == NULL)
            continue;
        count_read(h, p, false);
        if (op == COLL_ALLREDUCE || (op == COLL_REDUCE && p == h->a.root))
            count_read(h, p, true);
        h->got[p] = 1;
        h->ndrained++;
    }
    if (h->ndrained == h->a.size - 1)
        h->ngot = h->need;
}

static void run_rsb(struct sched *s, struct hcall *h)
{
    if (h->ngot == h->need || !all_published(s, h, h->a.block))
        return;
    char *out = h->res ? h->res : h->a.rbuf;
    reduce_all(h, (size_t)h->a.rank * h->a.block, h->a.count, out);
    done_reading_inputs(h);
    h->ngot = h->need;
}

static void run_reduce(struct sched *s, struct hcall *h)
{
    if (h->ngot == h->need || !all_published(s, h, h->a.block))
        return;
    const struct nbc_desc *root = peer(h, h->a.root);
    size_t first, n;
    segment(h, h->a.rank, &first, &n);
    reduce_all(h, first * h->a.esize, n, (char *)heap_at(root->roff) + first * h->a.esize);
    done_reading_inputs(h);
    if (h->a.rank != h->a.root)
        count_read(h, h->a.root, true);
    h->ngot = h->need;
}

static void run_allreduce(struct sched *s, struct hcall *h)
{
    int P = h->a.size, me = h->a.rank;
    size_t es = h->a.esize, first, n;
    if (h->phase == 0) {
        if (!all_published(s, h, h->a.block))
            return;
        segment(h, me, &first, &n);
        reduce_all(h, first * es, n, h->res + first * es);
        done_reading_inputs(h);
        atomic_store_explicit(&desc(h->slot, me, h->line)->reduced, h->key, memory_order_release);
        wake_all(h);
        h->phase = 1;
    }
    for (int i = 1; i < P && h->phase == 1; i++) {
        int p = (me + i) % P;
        const struct nbc_desc *d = desc(h->slot, p, h->line);
        if (h->got[p] || atomic_load_explicit(&d->reduced, memory_order_acquire) != h->key)
            continue;
        segment(h, p, &first, &n);
        copy_bytes(h->res + first * es, (const char *)heap_at(d->roff) + first * es, n * es);
        count_read(h, p, true);
        h->got[p] = 1;
        h->ngot++;
    }
}

/* ---- the poll ---- */

static bool readers_done(const struct hcall *h)
{
    if (!h->published)
        return true;
    const struct nbc_desc *d = desc(h->slot, h->a.rank, h->line);
    return (int)atomic_load_explicit(&d->readers, memory_order_acquire) >= h->want_readers &&
           (int)atomic_load_explicit(&d->readers2, memory_order_acquire) >= h->want_readers2;
}

/* The result from its dense scratch into the caller's layout (allreduce, reduce at the root,
   reduce_scatter_block with a derived receive side). */
static void result_out(const struct hcall *h)
{
    if (h->res == NULL || (h->a.op_id == COLL_REDUCE && h->a.rank != h->a.root))
        return;
    size_t n = h->a.block, done;
    if (h->a.rl.type)
        dt_copy_typed(h->res, n, HINT_BYTE, h->a.rbuf, nbc_elems(n, &h->a.rl), h->a.rl.type, &done);
    else if (h->res != h->a.rbuf)
        copy_bytes(h->a.rbuf, h->res, n);
}

static bool poll(struct sched *s, void *state)
{
    struct hcall *h = state;
    if (h->done_own)
        return true;
    if (h->publish && !try_publish(h))
        return false;
    switch (h->failed ? -1 : h->a.op_id) {
    case -1: drain(h); break;
    case COLL_REDUCE_SCATTER_BLOCK: run_rsb(s, h); break;
    case COLL_REDUCE: run_reduce(s, h); break;
    case COLL_ALLREDUCE: run_allreduce(s, h); break;
    default: pull(s, h); break;
    }
    if (h->ngot < h->need || !readers_done(h))
        return false;
    result_out(h);
    dequeue(h);
    dt_release(h->a.rl.type);
    h->done_own = true;
    return true;
}

static void hcall_free(void *arg)
{
    struct hcall *h = arg;
    dequeue(h);
    if (!h->done_own)
        dt_release(h->a.rl.type);
    for (int i = 0; i < h->nheap; i++)
        heap_release(h->heap_bufs[i]);
}

/* ---- building ---- */

static enum role role_of(int op)
{
    switch (op) {
    case COLL_BCAST: case COLL_SCATTER: case COLL_SCATTERV: return R_ROOT;
    case COLL_GATHER: case COLL_GATHERV: return R_LEAF;
    default: return R_ALL;
    }
}

/* Parts this rank copies in, and reads of its published lines it waits for. */
static void counts(struct hcall *h)
{
    int P = h->a.size;
    bool root = h->a.rank == h->a.root;
    switch (h->a.op_id) {
    case COLL_BCAST: case COLL_SCATTER: case COLL_SCATTERV:
        h->need = root ? 0 : 1;
        h->want_readers = root ? P - 1 : 0;
        break;
    case COLL_GATHER: case COLL_GATHERV:
        h->need = root ? P - 1 : 0;
        h->want_readers = root ? 0 : 1;
        break;
    case COLL_ALLREDUCE:
        h->need = P - 1;
        h->want_readers = h->want_readers2 = P - 1;
        break;
    case COLL_REDUCE:
        h->need = 1;
        h->want_readers = P - 1;
        h->want_readers2 = root ? P - 1 : 0;
        break;
    case COLL_REDUCE_SCATTER_BLOCK:
        h->need = 1;
        h->want_readers = P - 1;
        break;
    default:
        h->need = P - 1;
        h->want_readers = P - 1;
        break;
    }
}

/* The dense result: the caller's receive buffer when it is contiguous and on the heap, else heap
   scratch (reduce: only the root's is read by peers). */
static void result_buffer(struct sched *s, struct hcall *h)
{
    int op = h->a.op_id;
    bool root = h->a.rank == h->a.root;
    if (!is_reduction(op) || (op == COLL_REDUCE && !root))
        return;
    size_t n = h->a.block;
    bool shared = op != COLL_REDUCE_SCATTER_BLOCK; /* read or written by peers */
    if (!h->a.rl.type && (!shared || heap_span(h->a.rbuf, n) != UINT64_MAX))
        h->res = op == COLL_REDUCE_SCATTER_BLOCK ? NULL : h->a.rbuf;
    else
        h->res = heap_scratch(s, h, n);
}

/* The v arrays are api.c's, freed when the call returns: the poll reads its own copies. */
static const size_t *keep_array(struct sched *s, const size_t *v, int n)
{
    size_t *c = v ? sched_scratch(s, (size_t)n * sizeof *c) : NULL;
    if (c)
        memcpy(c, v, (size_t)n * sizeof *c);
    return c;
}

static void keep_v(struct sched *s, struct hcall *h)
{
    int P = h->a.size;
    h->a.scounts = keep_array(s, h->a.scounts, P);
    h->a.sdispls = keep_array(s, h->a.sdispls, P);
    h->a.rcounts = keep_array(s, h->a.rcounts, P);
    h->a.rdispls = keep_array(s, h->a.rdispls, P);
}

void nbc_heap(struct sched *s, const struct coll_args *a)
{
    struct hcall *h = sched_scratch(s, sizeof *h + (size_t)a->size);
    if (h == NULL)
        return;
    *h = (struct hcall){.a = *a};
    dt_retain(h->a.rl.type);         /* released when the poll finishes, or with the schedule */
    sched_on_free(s, hcall_free, h); /* its heap scratch, its place in the queue */
    h->got = (unsigned char *)(h + 1);
    memset(h->got, 0, (size_t)a->size);
    keep_v(s, h);
    h->slot = coll_group_of(a->g)->slot;
    unsigned seq = (unsigned)(a->tag - GRP_TAG_COLL) >> 5;
    h->line = (int)(seq % NBC_RING);
    h->key = (atomic_load(&coll_shm_slot(h->slot)->generation) << 32) | ((uint64_t)seq + 1);
    bool root = a->rank == a->root;
    enum role r = role_of(a->op_id);
    h->publish = r == R_ALL || (r == R_ROOT) == root;
    counts(h);
    if (h->publish)
        dense_send(s, h);
    result_buffer(s, h);
    if (sched_error(s) != HINT_SUCCESS)
        return;
    if (h->publish)
        enqueue(h);
    /* this rank's own part, copied at the call (gather's root in place: the same bytes) */
    size_t n, own;
    const struct coll_layout *l;
    if (r == R_ALL && !is_reduction(a->op_id)) {
        const char *from = piece(h, a->op_id == COLL_ALLTOALL || a->op_id == COLL_ALLTOALLV ? a->rank : 0, &own, &l);
        char *to = dest_of(h, a->rank, &n);
        nbc_copy(s, from, l, to, &a->rl, own);
    } else if ((a->op_id == COLL_GATHER || a->op_id == COLL_GATHERV) && root) {
        nbc_copy(s, a->sbuf, &a->sl, dest_of(h, a->rank, &n), &a->rl, a->block);
    } else if ((a->op_id == COLL_SCATTER || a->op_id == COLL_SCATTERV) && root) {
        const char *from = piece(h, a->rank, &own, &l);
        nbc_copy(s, from, l, a->rbuf, &a->rl, a->block);
    }
    sched_poll(s, poll, h);
}
