/*
 * collectives/api.c — the public collective calls: check the arguments, resolve HINT_IN_PLACE,
 * express everything in bytes, take the trivial path for P = 1 and empty messages, then let
 * select.c pick and run an algorithm.
 *
 * Errors that every rank detects alike (bad group, root, op, type) return before any message
 * is sent, so nobody hangs. alltoall and allgather hand derived (non-contiguous) sides to
 * selection with their layouts (typed.c); the other calls with a derived datatype, and those
 * two in place, are staged through contiguous bytes by derived.c.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/algs.h"
#include "collectives/derived.h"
#include "datatype/datatype.h"
#include "runtime/runtime.h"
#include "topology/vtopo.h"

static const char trivial[] = "trivial";

/* Common start: group, a fresh tag, rank and size. */
static int begin(struct coll_args *a, int op_id, hint_group g)
{
    RT_CHECK_INIT();
    if (grp_check(g) != HINT_SUCCESS)
        return HINT_ERR_GROUP;
    memset(a, 0, sizeof *a);
    a->op_id = op_id;
    a->g = g;
    a->rank = g->rank;
    a->size = g->size;
    a->copy = -1;
    return HINT_SUCCESS;
}

/* The next tag of g; called once every check has passed, so all ranks stay in step. */
static void take_tag(struct coll_args *a)
{
    a->tag = GRP_TAG_COLL + (int)(a->g->coll_seq++ & 0x0fffffff);
}

/* Bytes of data in count elements of t, which must be usable. */
static int block_bytes(size_t count, hint_type t, size_t *bytes)
{
    int st = dt_check(t);
    if (st != HINT_SUCCESS)
        return st;
    size_t es = dt_size(t);
    if (es != 0 && count > SIZE_MAX / es)
        return HINT_ERR_COUNT;
    *bytes = count * es;
    return HINT_SUCCESS;
}

/* The layout of a side of alltoall / allgather holding nblocks blocks of count elements of t:
   none when t is contiguous; HINT_ERR_COUNT when the blocks' span overflows. */
static int side_layout(size_t count, hint_type t, size_t nblocks, struct coll_layout *l)
{
    ptrdiff_t lo, hi;
    *l = (struct coll_layout){0};
    if (!coll_is_derived(t))
        return HINT_SUCCESS;
    if (nblocks && count > SIZE_MAX / nblocks)
        return HINT_ERR_COUNT;
    int st = dt_span(t, count * nblocks, &lo, &hi);
    if (st == HINT_SUCCESS)
        *l = (struct coll_layout){.type = t, .count = count, .extent = dt_extent(t)};
    return st;
}

/* One rank alone: its send block goes to its receive block, each in its own layout. */
static void copy_own_block(const struct coll_args *a, const void *s, size_t sc, hint_type st_, void *r, size_t rc,
                           hint_type rt_)
{
    size_t bytes;
    if (coll_has_layout(a))
        dt_copy_typed(s, sc, st_, r, rc, rt_, &bytes); /* sizes and kinds were checked */
    else
        copy_bytes(r, s, a->block);
}

static int check_buf(const void *p, size_t bytes) { return p == NULL && bytes > 0 ? HINT_ERR_BUFFER : HINT_SUCCESS; }

static int check_root(const struct coll_args *a, int root)
{
    return root < 0 || root >= a->size ? HINT_ERR_ROOT : HINT_SUCCESS;
}

static int run(struct coll_args *a, bool is_trivial)
{
    take_tag(a);
    if (a->size > 1 && coll_check_enabled()) {
        int st = coll_check_call(a);
        if (st != HINT_SUCCESS)
            return st;
    }
    if (is_trivial) {
        coll_record(a->op_id, trivial);
        return HINT_SUCCESS;
    }
    return coll_run(a);
}

int hint_barrier(hint_group g)
{
    struct coll_args a;
    int st = begin(&a, COLL_BARRIER, g);
    if (st != HINT_SUCCESS)
        return st;
    return run(&a, a.size == 1);
}

int hint_bcast(void *buf, size_t count, hint_type t, int root, hint_group g)
{
    struct coll_args a;
    int st = begin(&a, COLL_BCAST, g);
    if (st == HINT_SUCCESS)
        st = check_root(&a, root);
    if (st == HINT_SUCCESS)
        st = block_bytes(count, t, &a.block);
    if (st == HINT_SUCCESS && buf == HINT_IN_PLACE)
        st = HINT_ERR_BUFFER;
    if (st == HINT_SUCCESS)
        st = check_buf(buf, a.block);
    if (st == HINT_SUCCESS)
        st = side_layout(count, t, 1, &a.rl); /* a derived buffer goes to selection as a layout */
    if (st != HINT_SUCCESS)
        return st;
    a.root = root;
    a.rbuf = buf;
    return run(&a, a.size == 1 || a.block == 0);
}

/* Reductions: element kind and op must fit together. */
static int reduction_args(struct coll_args *a, size_t count, hint_type t, hint_op op)
{
    int st = block_bytes(count, t, &a->block);
    if (st != HINT_SUCCESS)
        return st;
    a->basic = dt_basic(t);
    if (op_check(op, a->basic) != HINT_SUCCESS)
        return HINT_ERR_OP;
    a->esize = dt_basic_size(a->basic);
    a->count = a->block / a->esize;
    a->op = op;
    return HINT_SUCCESS;
}

int hint_reduce(const void *s, void *r, size_t count, hint_type t, hint_op op, int root, hint_group g)
{
    if (coll_is_derived(t))
        return coll_derived_reduce(1, s, r, count, t, op, root, g);
    struct coll_args a;
    int st = begin(&a, COLL_REDUCE, g);
    if (st == HINT_SUCCESS)
        st = check_root(&a, root);
    if (st == HINT_SUCCESS)
        st = reduction_args(&a, count, t, op);
    if (st != HINT_SUCCESS)
        return st;
    bool is_root = a.rank == root;
    if (s == HINT_IN_PLACE && !is_root)
        return HINT_ERR_BUFFER;
    if (s == HINT_IN_PLACE)
        s = r;
    if (check_buf(s, a.block) || (is_root && check_buf(r, a.block)))
        return HINT_ERR_BUFFER;
    a.root = root;
    a.sbuf = s;
    a.rbuf = r;
    if (a.size == 1 && a.block)
        copy_bytes(r, s, a.block);
    return run(&a, a.size == 1 || a.block == 0);
}

int hint_allreduce(const void *s, void *r, size_t count, hint_type t, hint_op op, hint_group g)
{
    if (coll_is_derived(t))
        return coll_derived_reduce(0, s, r, count, t, op, 0, g);
    struct coll_args a;
    int st = begin(&a, COLL_ALLREDUCE, g);
    if (st == HINT_SUCCESS)
        st = reduction_args(&a, count, t, op);
    if (st != HINT_SUCCESS)
        return st;
    if (s == HINT_IN_PLACE)
        s = r;
    if (check_buf(s, a.block) || check_buf(r, a.block) || r == HINT_IN_PLACE)
        return HINT_ERR_BUFFER;
    a.sbuf = s;
    a.rbuf = r;
    if (a.size == 1 && a.block)
        copy_bytes(r, s, a.block);
    return run(&a, a.size == 1 || a.block == 0);
}

int hint_reduce_scatter_block(const void *s, void *r, size_t rcount, hint_type t, hint_op op, hint_group g)
{
    if (coll_is_derived(t))
        return coll_derived_reduce(2, s, r, rcount, t, op, 0, g);
    struct coll_args a;
    int st = begin(&a, COLL_REDUCE_SCATTER_BLOCK, g);
    if (st == HINT_SUCCESS)
        st = reduction_args(&a, rcount, t, op);
    if (st != HINT_SUCCESS)
        return st;
    if (a.block != 0 && SIZE_MAX / a.block < (size_t)a.size)
        return HINT_ERR_COUNT;
    void *copy = NULL;
    if (s == HINT_IN_PLACE) {
        /* the input is all of r, the output its first block: work from a copy */
        if (check_buf(r, a.block))
            return HINT_ERR_BUFFER;
        st = coll_scratch(a.block * (size_t)a.size, &copy);
        if (st != HINT_SUCCESS)
            return st;
        copy_bytes(copy, r, a.block * (size_t)a.size);
        s = copy;
    }
    if (check_buf(s, a.block) || check_buf(r, a.block)) {
        free(copy);
        return HINT_ERR_BUFFER;
    }
    a.sbuf = s;
    a.rbuf = r;
    if (a.size == 1 && a.block)
        copy_bytes(r, s, a.block);
    st = run(&a, a.size == 1 || a.block == 0);
    free(copy);
    return st;
}

/* gather/scatter/allgather/alltoall: the block each rank contributes, equal on both sides. */
static int block_pair(const struct coll_args *a, bool send_significant, size_t sc, hint_type stype,
                      bool recv_significant, size_t rc, hint_type rtype, size_t *block)
{
    size_t sb = 0, rb = 0;
    int st;
    if (send_significant && (st = block_bytes(sc, stype, &sb)) != HINT_SUCCESS)
        return st;
    if (recv_significant && (st = block_bytes(rc, rtype, &rb)) != HINT_SUCCESS)
        return st;
    if (send_significant && recv_significant && (sb != rb || coll_same_kind(stype, rtype) != HINT_SUCCESS))
        return HINT_ERR_TYPE; /* the type signatures of a block differ */
    if (rb != 0 && SIZE_MAX / rb < (size_t)a->size)
        return HINT_ERR_COUNT;
    *block = send_significant ? sb : rb;
    return HINT_SUCCESS;
}

int hint_gather(const void *s, size_t sc, hint_type st_, void *r, size_t rc, hint_type rt_, int root, hint_group g)
{
    if (coll_is_derived(st_) || coll_is_derived(rt_))
        return coll_derived_blocks(0, s, sc, st_, r, rc, rt_, root, g);
    struct coll_args a;
    int st = begin(&a, COLL_GATHER, g);
    if (st == HINT_SUCCESS)
        st = check_root(&a, root);
    if (st != HINT_SUCCESS)
        return st;
    bool is_root = a.rank == root, in_place = s == HINT_IN_PLACE;
    if (in_place && !is_root)
        return HINT_ERR_BUFFER;
    st = block_pair(&a, !in_place, sc, st_, is_root, rc, rt_, &a.block);
    if (st != HINT_SUCCESS)
        return st;
    if (in_place)
        s = (char *)r + (size_t)root * a.block;
    if (check_buf(s, a.block) || (is_root && check_buf(r, a.block)))
        return HINT_ERR_BUFFER;
    a.root = root;
    a.sbuf = s;
    a.rbuf = r;
    if (a.size == 1)
        copy_bytes(r, s, a.block);
    return run(&a, a.size == 1 || a.block == 0);
}

int hint_scatter(const void *s, size_t sc, hint_type st_, void *r, size_t rc, hint_type rt_, int root, hint_group g)
{
    if (coll_is_derived(st_) || coll_is_derived(rt_))
        return coll_derived_blocks(1, s, sc, st_, r, rc, rt_, root, g);
    struct coll_args a;
    int st = begin(&a, COLL_SCATTER, g);
    if (st == HINT_SUCCESS)
        st = check_root(&a, root);
    if (st != HINT_SUCCESS)
        return st;
    bool is_root = a.rank == root, in_place = r == HINT_IN_PLACE;
    if (in_place && !is_root)
        return HINT_ERR_BUFFER;
    st = block_pair(&a, is_root, sc, st_, !in_place, rc, rt_, &a.block);
    if (st != HINT_SUCCESS)
        return st;
    if (in_place)
        r = (char *)s + (size_t)root * a.block;
    if (check_buf(r, a.block) || (is_root && check_buf(s, a.block)))
        return HINT_ERR_BUFFER;
    a.root = root;
    a.sbuf = s;
    a.rbuf = r;
    if (a.size == 1)
        copy_bytes(r, s, a.block);
    return run(&a, a.size == 1 || a.block == 0);
}

int hint_allgather(const void *s, size_t sc, hint_type st_, void *r, size_t rc, hint_type rt_, hint_group g)
{
    bool in_place = s == HINT_IN_PLACE;
    if (in_place && coll_is_derived(rt_))
        return coll_derived_blocks(2, s, sc, st_, r, rc, rt_, 0, g);
    struct coll_args a;
    int st = begin(&a, COLL_ALLGATHER, g);
    if (st != HINT_SUCCESS)
        return st;
    st = block_pair(&a, !in_place, sc, st_, true, rc, rt_, &a.block);
    if (st == HINT_SUCCESS && !in_place)
        st = side_layout(sc, st_, 1, &a.sl);
    if (st == HINT_SUCCESS)
        st = side_layout(rc, rt_, (size_t)a.size, &a.rl);
    if (st != HINT_SUCCESS)
        return st;
    if (in_place)
        s = (char *)r + (size_t)a.rank * a.block;
    if (check_buf(s, a.block) || check_buf(r, a.block))
        return HINT_ERR_BUFFER;
    a.sbuf = s;
    a.rbuf = r;
    if (a.size == 1)
        copy_own_block(&a, s, sc, st_, r, rc, rt_);
    return run(&a, a.size == 1 || a.block == 0);
}

int hint_alltoall(const void *s, size_t sc, hint_type st_, void *r, size_t rc, hint_type rt_, hint_group g)
{
    bool in_place = s == HINT_IN_PLACE;
    if (in_place && coll_is_derived(rt_))
        return coll_derived_blocks(3, s, sc, st_, r, rc, rt_, 0, g);
    struct coll_args a;
    int st = begin(&a, COLL_ALLTOALL, g);
    if (st != HINT_SUCCESS)
        return st;
    st = block_pair(&a, !in_place, sc, st_, true, rc, rt_, &a.block);
    if (st == HINT_SUCCESS && !in_place)
        st = side_layout(sc, st_, (size_t)a.size, &a.sl);
    if (st == HINT_SUCCESS)
        st = side_layout(rc, rt_, (size_t)a.size, &a.rl);
    if (st != HINT_SUCCESS)
        return st;
    if (check_buf(r, a.block) || (!in_place && check_buf(s, a.block)))
        return HINT_ERR_BUFFER;
    void *copy = NULL;
    if (in_place && a.size > 1) {
        /* every block of r is both read and overwritten: send from a copy */
        st = coll_scratch(a.block * (size_t)a.size, &copy);
        if (st != HINT_SUCCESS)
            return st;
        copy_bytes(copy, r, a.block * (size_t)a.size);
    }
    a.sbuf = in_place ? (copy ? copy : r) : s;
    a.rbuf = r;
    if (a.size == 1)
        copy_own_block(&a, a.sbuf, sc, st_, r, rc, rt_);
    st = run(&a, a.size == 1 || a.block == 0);
    free(copy);
    return st;
}

/* ---- v variants: counts and displacements converted to bytes ---- */

struct vbytes {
    size_t *counts, *displs;
};

/* Counts to bytes of data, displacements (in extents) to byte offsets. */
static int to_bytes(const struct coll_args *a, const size_t counts[], const size_t displs[], hint_type t,
                    struct vbytes *out)
{
    out->counts = out->displs = NULL;
    if (counts == NULL || displs == NULL)
        return HINT_ERR_ARG;
    size_t es;
    int st = block_bytes(1, t, &es);
    if (st != HINT_SUCCESS)
        return st;
    ptrdiff_t ext = dt_extent(t);
    size_t ex = ext > 0 ? (size_t)ext : es; /* a derived side reaches here only with ext > 0 */
    out->counts = malloc(2 * (size_t)a->size * sizeof(size_t));
    if (out->counts == NULL)
        return HINT_ERR_NOMEM;
    out->displs = out->counts + a->size;
    for (int p = 0; p < a->size; p++) {
        if ((es != 0 && counts[p] > SIZE_MAX / es) || (ex != 0 && displs[p] > SIZE_MAX / ex)) {
            free(out->counts);
            out->counts = NULL;
            return HINT_ERR_COUNT;
        }
        out->counts[p] = counts[p] * es;
        out->displs[p] = displs[p] * ex;
    }
    return HINT_SUCCESS;
}

/* A v side of a derived type goes to selection with its layout (typed.c) when its extent is
   positive (byte displacements stay unsigned); otherwise the call is staged by derived.c. */
static bool v_layout_ok(hint_type t) { return !coll_is_derived(t) || dt_extent(t) > 0; }

static struct coll_layout v_layout(hint_type t, size_t count)
{
    return coll_is_derived(t) ? (struct coll_layout){.type = t, .count = count, .extent = dt_extent(t)}
                              : (struct coll_layout){0};
}

/* One rank alone, v variants: its block from s at sdispl to r at rdispl, each in its own type. */
static void copy_own_vblock(const struct coll_args *a, const char *s, size_t sc, hint_type st_, char *r,
                            size_t rc, hint_type rt_, size_t bytes)
{
    size_t done;
    if (coll_has_layout(a))
        dt_copy_typed(s, sc, st_, r, rc, rt_, &done);
    else
        copy_bytes(r, s, bytes);
}

int hint_gatherv(const void *s, size_t sc, hint_type st_, void *r, const size_t rcounts[], const size_t rdispls[],
                 hint_type rt_, int root, hint_group g)
{
    if (coll_is_derived(st_) || coll_is_derived(rt_))
        return coll_derived_vblocks(0, s, NULL, sc, st_, r, rcounts, 0, rdispls, rt_, root, g);
    struct coll_args a;
    struct vbytes rv = {0};
    int st = begin(&a, COLL_GATHERV, g);
    if (st == HINT_SUCCESS)
        st = check_root(&a, root);
    if (st != HINT_SUCCESS)
        return st;
    bool is_root = a.rank == root, in_place = s == HINT_IN_PLACE;
    if (in_place && !is_root)
        return HINT_ERR_BUFFER;
    if (is_root && (st = to_bytes(&a, rcounts, rdispls, rt_, &rv)) != HINT_SUCCESS)
        return st;
    if (!in_place)
        st = block_bytes(sc, st_, &a.block);
    else {
        a.block = rv.counts[root];
        s = (char *)r + rv.displs[root];
    }
    if (st == HINT_SUCCESS && is_root && a.block != rv.counts[root])
        st = HINT_ERR_TYPE;
    if (st == HINT_SUCCESS && (check_buf(s, a.block) || (is_root && r == NULL)))
        st = HINT_ERR_BUFFER;
    if (st == HINT_SUCCESS) {
        a.root = root;
        a.sbuf = s;
        a.rbuf = r;
        a.rcounts = rv.counts;
        a.rdispls = rv.displs;
        if (a.size == 1)
            copy_bytes((char *)r + rv.displs[0], s, a.block);
        st = run(&a, a.size == 1);
    }
    free(rv.counts);
    return st;
}

int hint_scatterv(const void *s, const size_t scounts[], const size_t sdispls[], hint_type st_, void *r, size_t rc,
                  hint_type rt_, int root, hint_group g)
{
    if (coll_is_derived(st_) || coll_is_derived(rt_))
        return coll_derived_vblocks(1, s, scounts, 0, st_, r, NULL, rc, sdispls, rt_, root, g);
    struct coll_args a;
    struct vbytes sv = {0};
    int st = begin(&a, COLL_SCATTERV, g);
    if (st == HINT_SUCCESS)
        st = check_root(&a, root);
    if (st != HINT_SUCCESS)
        return st;
    bool is_root = a.rank == root, in_place = r == HINT_IN_PLACE;
    if (in_place && !is_root)
        return HINT_ERR_BUFFER;
    if (is_root && (st = to_bytes(&a, scounts, sdispls, st_, &sv)) != HINT_SUCCESS)
        return st;
    if (!in_place)
        st = block_bytes(rc, rt_, &a.block);
    else {
        a.block = sv.counts[root];
        r = (char *)s + sv.displs[root];
    }
    if (st == HINT_SUCCESS && is_root && a.block != sv.counts[root])
        st = HINT_ERR_TYPE;
    if (st == HINT_SUCCESS && (check_buf(r, a.block) || (is_root && s == NULL)))
        st = HINT_ERR_BUFFER;
    if (st == HINT_SUCCESS) {
        a.root = root;
        a.sbuf = s;
        a.rbuf = r;
        a.scounts = sv.counts;
        a.sdispls = sv.displs;
        if (a.size == 1)
            copy_bytes(r, (const char *)s + sv.displs[0], a.block);
        st = run(&a, a.size == 1);
    }
    free(sv.counts);
    return st;
}

int hint_allgatherv(const void *s, size_t sc, hint_type st_, void *r, const size_t rcounts[], const size_t rdispls[],
                    hint_type rt_, hint_group g)
{
    bool derived = coll_is_derived(rt_) || (s != HINT_IN_PLACE && coll_is_derived(st_));
    if (derived && (s == HINT_IN_PLACE || !v_layout_ok(rt_)))
        return coll_derived_vblocks(2, s, NULL, sc, st_, r, rcounts, 0, rdispls, rt_, 0, g);
    struct coll_args a;
    struct vbytes rv = {0};
    int st = begin(&a, COLL_ALLGATHERV, g);
    if (st != HINT_SUCCESS)
        return st;
    if ((st = to_bytes(&a, rcounts, rdispls, rt_, &rv)) != HINT_SUCCESS)
        return st;
    bool in_place = s == HINT_IN_PLACE;
    if (!in_place)
        st = block_bytes(sc, st_, &a.block);
    else {
        a.block = rv.counts[a.rank];
        s = (char *)r + rv.displs[a.rank];
    }
    if (st == HINT_SUCCESS && (a.block != rv.counts[a.rank] || (!in_place && coll_same_kind(st_, rt_))))
        st = HINT_ERR_TYPE;
    if (st == HINT_SUCCESS && (check_buf(s, a.block) || r == NULL))
        st = HINT_ERR_BUFFER;
    if (st == HINT_SUCCESS) {
        a.sbuf = s;
        a.rbuf = r;
        a.rcounts = rv.counts;
        a.rdispls = rv.displs;
        if (!in_place) {
            a.sl = v_layout(st_, sc);
            a.rl = v_layout(rt_, 0);
        }
        if (a.size == 1)
            copy_own_vblock(&a, s, sc, st_, (char *)r + rv.displs[0], rcounts[0], rt_, a.block);
        st = run(&a, a.size == 1);
    }
    free(rv.counts);
    return st;
}

int hint_alltoallv(const void *s, const size_t scounts[], const size_t sdispls[], hint_type st_, void *r,
                   const size_t rcounts[], const size_t rdispls[], hint_type rt_, hint_group g)
{
    bool derived = coll_is_derived(rt_) || (s != HINT_IN_PLACE && coll_is_derived(st_));
    if (derived && (s == HINT_IN_PLACE || !v_layout_ok(rt_) || !v_layout_ok(st_)))
        return coll_derived_alltoallv(s, scounts, sdispls, st_, r, rcounts, rdispls, rt_, g);
    struct coll_args a;
    struct vbytes sv = {0}, rv = {0};
    void *copy = NULL;
    int st = begin(&a, COLL_ALLTOALLV, g);
    if (st != HINT_SUCCESS)
        return st;
    bool in_place = s == HINT_IN_PLACE;
    CHECK_GOTO(to_bytes(&a, rcounts, rdispls, rt_, &rv), out);
    if (in_place) {
        /* as MPI: the receive layout describes the send side too */
        size_t end = 0;
        for (int p = 0; p < a.size; p++)
            if (rv.displs[p] + rv.counts[p] > end)
                end = rv.displs[p] + rv.counts[p];
        CHECK_GOTO(coll_scratch(end, &copy), out);
        copy_bytes(copy, r, end);
        s = copy;
        scounts = rcounts;
        sdispls = rdispls;
        st_ = rt_;
    }
    CHECK_GOTO(to_bytes(&a, scounts, sdispls, st_, &sv), out);
    if (r == NULL || (s == NULL && sv.counts[a.rank] > 0)) {
        st = HINT_ERR_BUFFER;
        goto out;
    }
    if (sv.counts[a.rank] != rv.counts[a.rank] || (!in_place && coll_same_kind(st_, rt_))) {
        st = HINT_ERR_TYPE;
        goto out;
    }
    a.sbuf = s;
    a.rbuf = r;
    a.scounts = sv.counts;
    a.sdispls = sv.displs;
    a.rcounts = rv.counts;
    a.rdispls = rv.displs;
    if (!in_place) {
        a.sl = v_layout(st_, 0);
        a.rl = v_layout(rt_, 0);
    }
    if (a.size == 1)
        copy_own_vblock(&a, (const char *)s + sv.displs[0], scounts[0], st_, (char *)r + rv.displs[0], rcounts[0],
                        rt_, rv.counts[0]);
    st = run(&a, a.size == 1);
out:
    free(sv.counts);
    free(rv.counts);
    free(copy);
    return st;
}

/* ---- neighbourhood collectives: the group's virtual topology gives the blocks' order ---- */

static int neighbor_begin(struct coll_args *a, int op_id, hint_group g, struct vtopo_lists *l)
{
    int st = begin(a, op_id, g);
    return st != HINT_SUCCESS ? st : vtopo_lists(g, l);
}

/* A side in the caller's datatype: count elements of t per block (v variants: count unused). */
static int neighbor_side(size_t count, hint_type t, struct coll_layout *l)
{
    size_t bytes;
    int st = block_bytes(count, t, &bytes);
    if (st == HINT_SUCCESS)
        *l = (struct coll_layout){.type = t, .count = count, .extent = dt_extent(t)};
    return st;
}

/* A v side: arrays present when there are neighbours, no count whose bytes overflow. */
static int neighbor_vside(int n, const size_t counts[], const size_t displs[], hint_type t, struct coll_layout *l)
{
    int st = neighbor_side(0, t, l);
    if (st != HINT_SUCCESS)
        return st;
    if (n > 0 && (counts == NULL || displs == NULL))
        return HINT_ERR_ARG;
    size_t bytes;
    for (int i = 0; i < n && st == HINT_SUCCESS; i++)
        st = block_bytes(counts[i], t, &bytes);
    return st;
}

/* A buffer the call reads or writes must exist; in place has no meaning here. */
static int neighbor_buf(const void *p, bool used)
{
    return p == HINT_IN_PLACE || (used && p == NULL) ? HINT_ERR_BUFFER : HINT_SUCCESS;
}

static bool any_count(int n, const size_t counts[])
{
    for (int i = 0; i < n; i++)
        if (counts[i])
            return true;
    return false;
}

/* neighbor_allgather and neighbor_alltoall: one block of sc elements per neighbour or one for all. */
static int neighbor_blocks(int op_id, const void *s, size_t sc, hint_type st_, void *r, size_t rc, hint_type rt_,
                           hint_group g)
{
    struct coll_args a;
    struct vtopo_lists l;
    int st = neighbor_begin(&a, op_id, g, &l);
    if (st == HINT_SUCCESS)
        st = neighbor_side(sc, st_, &a.sl);
    if (st == HINT_SUCCESS)
        st = neighbor_side(rc, rt_, &a.rl);
    if (st == HINT_SUCCESS)
        st = neighbor_buf(s, sc && l.outdegree);
    if (st == HINT_SUCCESS)
        st = neighbor_buf(r, rc && l.indegree);
    if (st != HINT_SUCCESS)
        return st;
    a.sbuf = s;
    a.rbuf = r;
    return run(&a, false);
}

int hint_neighbor_allgather(const void *s, size_t sc, hint_type st_, void *r, size_t rc, hint_type rt_, hint_group g)
{
    return neighbor_blocks(COLL_NEIGHBOR_ALLGATHER, s, sc, st_, r, rc, rt_, g);
}

int hint_neighbor_alltoall(const void *s, size_t sc, hint_type st_, void *r, size_t rc, hint_type rt_, hint_group g)
{
    return neighbor_blocks(COLL_NEIGHBOR_ALLTOALL, s, sc, st_, r, rc, rt_, g);
}

int hint_neighbor_allgatherv(const void *s, size_t sc, hint_type st_, void *r, const size_t rcounts[],
                             const size_t rdispls[], hint_type rt_, hint_group g)
{
    struct coll_args a;
    struct vtopo_lists l;
    int st = neighbor_begin(&a, COLL_NEIGHBOR_ALLGATHERV, g, &l);
    if (st == HINT_SUCCESS)
        st = neighbor_side(sc, st_, &a.sl);
    if (st == HINT_SUCCESS)
        st = neighbor_vside(l.indegree, rcounts, rdispls, rt_, &a.rl);
    if (st == HINT_SUCCESS)
        st = neighbor_buf(s, sc && l.outdegree);
    if (st == HINT_SUCCESS)
        st = neighbor_buf(r, any_count(l.indegree, rcounts));
    if (st != HINT_SUCCESS)
        return st;
    a.sbuf = s;
    a.rbuf = r;
    a.rcounts = rcounts;
    a.rdispls = rdispls;
    return run(&a, false);
}

int hint_neighbor_alltoallv(const void *s, const size_t scounts[], const size_t sdispls[], hint_type st_, void *r,
                            const size_t rcounts[], const size_t rdispls[], hint_type rt_, hint_group g)
{
    struct coll_args a;
    struct vtopo_lists l;
    int st = neighbor_begin(&a, COLL_NEIGHBOR_ALLTOALLV, g, &l);
    if (st == HINT_SUCCESS)
        st = neighbor_vside(l.outdegree, scounts, sdispls, st_, &a.sl);
    if (st == HINT_SUCCESS)
        st = neighbor_vside(l.indegree, rcounts, rdispls, rt_, &a.rl);
    if (st == HINT_SUCCESS)
        st = neighbor_buf(s, any_count(l.outdegree, scounts));
    if (st == HINT_SUCCESS)
        st = neighbor_buf(r, any_count(l.indegree, rcounts));
    if (st != HINT_SUCCESS)
        return st;
    a.sbuf = s;
    a.rbuf = r;
    a.scounts = scounts;
    a.sdispls = sdispls;
    a.rcounts = rcounts;
    a.rdispls = rdispls;
    return run(&a, false);
}
