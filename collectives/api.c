/*
 * collectives/api.c — the public collective calls: check the arguments, resolve HINT_IN_PLACE,
 * express sizes, counts and displacements in bytes, take the trivial path for P = 1 and empty
 * messages, then let select.c pick and run an algorithm.
 *
 * Errors that every rank detects alike (bad group, root, op, type) return before any message
 * is sent, so nobody hangs. A side whose datatype is derived (non-contiguous) goes to selection
 * as its layout (struct coll_layout) beside the user's buffer, for every call: so every rank
 * picks the same algorithm whatever types it passed. The algorithms marked `typed` copy straight
 * from and to layouts; for the others select.c packs around the call, in one place
 * (coll_run_packed, typed.c). A reduction on a derived type reduces the predefined kind the type
 * is made of.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/algs.h"
#include "collectives/sched.h"
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
    *a = (struct coll_args){.op_id = op_id, .g = g, .rank = g->rank, .size = g->size, .copy = -1};
    return HINT_SUCCESS;
}

/* The next tag of g; called once every check has passed, so all ranks stay in step. The
   operation rides in the low 5 bits: in a program whose ranks call different collectives (an
   error), a message-based barrier's message can then never complete another rank's bcast
   receive, so the ranks wait where HINT_HANG_TIMEOUT and --timeout can name it. */
static_assert(COLL_NOPS <= 32, "the operation fits the tag's low 5 bits");
static void take_tag(struct coll_args *a)
{
    a->tag = GRP_TAG_COLL + (int)(((a->g->coll_seq++ & 0x007fffffu) << 5) | (unsigned)a->op_id);
}

static bool is_derived(hint_type t) { return !dt_is_contig(t); }

/* `code` when the condition holds: the argument checks below read as one CHECK_GOTO each. */
static int refuse_if(bool bad, int code) { return bad ? code : HINT_SUCCESS; }

/* Bytes of data in count elements of t, which must be usable (datatype.h's one conversion). */
static int block_bytes(size_t count, hint_type t, size_t *bytes) { return dt_count_bytes(t, count, bytes); }

/* Both sides of one rank's call hold the same kind of data (bytes match any kind; a type of
   mixed kinds cannot be told apart from another here). */
static bool kinds_match(hint_type a, hint_type b) { return dt_kinds_match(dt_sig_basic(a), dt_sig_basic(b)); }

/* The layout of a side holding nblocks blocks of count elements of t, one after another: none
   when t is contiguous; HINT_ERR_COUNT when the blocks' span overflows. */
static int derived_layout(size_t count, hint_type t, size_t nblocks, struct coll_layout *l);
static inline int side_layout(size_t count, hint_type t, size_t nblocks, struct coll_layout *l)
{
    *l = (struct coll_layout){0};
    return is_derived(t) ? derived_layout(count, t, nblocks, l) : HINT_SUCCESS;
}

static int derived_layout(size_t count, hint_type t, size_t nblocks, struct coll_layout *l)
{
    ptrdiff_t lo, hi;
    if (nblocks && count > SIZE_MAX / nblocks)
        return HINT_ERR_COUNT;
    int st;
    CHECK_GOTO(dt_span(t, count * nblocks, &lo, &hi), out);
    *l = (struct coll_layout){.type = t, .count = count, .extent = dt_extent(t)};
out:
    return st;
}

/* A v side: its type's layout for blocks given by byte counts and displacements. */
static struct coll_layout v_layout(hint_type t, size_t count)
{
    return is_derived(t) ? (struct coll_layout){.type = t, .count = count, .extent = dt_extent(t)}
                         : (struct coll_layout){0};
}

/* One rank alone: sc elements of st at s to rc of rt at r, each in its own layout. */
static void copy_own(const void *s, size_t sc, hint_type st_, void *r, size_t rc, hint_type rt_, size_t bytes)
{
    size_t done;
    if (is_derived(st_) || is_derived(rt_))
        dt_copy_typed(s, sc, st_, r, rc, rt_, &done); /* sizes and kinds were checked */
    else
        copy_bytes(r, s, bytes);
}

static int check_buf(const void *p, size_t bytes) { return p == NULL && bytes > 0 ? HINT_ERR_BUFFER : HINT_SUCCESS; }

static int check_root(const struct coll_args *a, int root)
{
    return root < 0 || root >= a->size ? HINT_ERR_ROOT : HINT_SUCCESS;
}

/* A nonblocking call (hint_i*, at the end of this file) in progress: the blocking call's checks
   run as they are, then run() starts a schedule (collectives/sched.h) instead of an algorithm.
   nbc_stash: an in-place copy the checked arguments point into, which the schedule then owns. */
static hint_request *nbc_req;
static void *nbc_stash;

/* In a nonblocking call, the in-place copy goes to the schedule (NULL back: not the caller's to
   free); in a blocking one it stays the caller's. */
static void *nbc_keep(void *copy)
{
    if (nbc_req == NULL)
        return copy;
    nbc_stash = copy;
    return NULL;
}

static int nbc_run(const struct coll_args *a, bool is_trivial)
{
    void *stash = nbc_stash;
    nbc_stash = NULL;
    /* no HINT_COLL_CHECK exchange: it would block, and a nonblocking call must not */
    return nbc_start(a, is_trivial, stash, nbc_req);
}

static int run(struct coll_args *a, bool is_trivial)
{
    int st = HINT_SUCCESS;
    take_tag(a);
    if (nbc_req)
        return nbc_run(a, is_trivial);
    if (a->size > 1 && coll_check_enabled())
        CHECK_GOTO(coll_check_call(a), out);
    if (is_trivial) {
        coll_record(a->op_id, trivial);
        return HINT_SUCCESS;
    }
    return coll_run(a);
out:
    return st;
}

/* ---- Empty messages: the short path ----
   bcast, reduce, allreduce, reduce_scatter_block, scan, exscan, gather, scatter, allgather and
   alltoall move count x type size bytes per rank (per block), a size MPI's matching rules make
   equal on every rank: a call that moves nothing on one rank moves nothing on any, so each rank
   finishes it alone (MPI does not make a collective synchronise; docs/API.md). The v variants
   cannot know that (a rank sees only its own counts) and keep the general path.
   The short path only ever finishes a call that passes every check: when one fails, or the call
   needs more (HINT_COLL_CHECK's exchange, a nonblocking call's request), the general path runs
   and returns the error or takes its own trivial path, so the checks' codes and order stay in
   one place. It does what run() does for a trivial call: take the call's tag (all ranks take
   it, whichever path each took, so they stay in step) and record "trivial". It asks the
   registries without their reports (the general path then makes them once). Each of these calls
   is a thin function: a test of its counts, then NAME_empty (the short path, inline: no call, no
   frame, so a call with data still pays only the count test and a jump to NAME_checked, the
   general path, out of line). NAME_empty knows a handle as live only when it is the one the
   registry remembers (reg_hot, op_hot: the last group, type and op a short path found live, one
   compare each); anything else goes to NAME_empty_cold, the same checks with the registries'
   probes, which remembers what it found live and passes what it cannot finish to NAME_checked.
   Callgrind, 0-byte allgather at P=2, instructions a call with the generated wrapper: 275 before
   the short path, 150 with it inside the general function, 75 out of line, 45 now; bcast 60 ->
   40, allreduce 98 -> 46. The neighbourhood calls of empty blocks (every member passes the same
   block: docs/API.md) take the same kind of path (neighbor_empty): 275 -> 56. */

/* Blocking, HINT_COLL_CHECK known to be off, a live group. */
static inline __attribute__((always_inline)) bool empty_live(enum reg_kind k, const void *p, bool probe)
{
    return probe ? reg_live_hot(k, p) : p == reg_hot[k];
}

static inline __attribute__((always_inline)) bool empty_group_ok(hint_group g, bool probe)
{
    return rt_running() && nbc_req == NULL && coll_check_state == 0 && empty_live(REG_GROUP, g, probe);
}

/* The registry alone: a predefined type missing from it (datatype.h's fallback) takes the general
   path, so that the short one makes no call and needs no stack frame. */
static inline __attribute__((always_inline)) bool empty_type_ok(hint_type t, bool probe)
{
    return empty_live(REG_TYPE, t, probe) && t->committed;
}

static inline bool empty_root_ok(hint_group g, int root) { return root >= 0 && root < g->size; }

static inline __attribute__((always_inline)) bool empty_reduction_ok(hint_type t, hint_op op, bool probe)
{
    return empty_type_ok(t, probe) &&
           (probe ? op_check_hot(op, dt_sig_basic(t)) : op == op_hot && dt_sig_basic(t) == op_hot_basic);
}

/* gather/scatter/allgather/alltoall: each side that counts has no elements, of a usable type, and
   with both counting their kinds match (block_pair's checks, for empty blocks). */
static inline __attribute__((always_inline)) bool empty_pair_ok(bool s_counts, size_t sc, hint_type st_, bool r_counts,
                                                                size_t rc, hint_type rt_, bool probe)
{
    if (s_counts && r_counts && st_ == rt_) /* one type: one lookup, and its kinds match */
        return sc == 0 && rc == 0 && empty_type_ok(st_, probe);
    if ((s_counts && (sc != 0 || !empty_type_ok(st_, probe))) || (r_counts && (rc != 0 || !empty_type_ok(rt_, probe))))
        return false;
    return !(s_counts && r_counts) || kinds_match(st_, rt_);
}

static inline int empty_done(int op_id, hint_group g)
{
    g->coll_seq++; /* take_tag's */
    coll_record(op_id, trivial);
    return HINT_SUCCESS;
}

/* A scratch copy of the bytes count elements of t touch at buf (in place: the input that the
   call overwrites); *from is where buf's data now is, at the same offsets. */
static int copy_span(const void *buf, size_t count, hint_type t, void **copy, const char **from)
{
    ptrdiff_t lo, hi;
    int st;
    CHECK_GOTO(dt_span(t, count, &lo, &hi), out);
    CHECK_GOTO(coll_scratch((size_t)(hi - lo), copy), out);
    copy_bytes(*copy, (const char *)buf + lo, (size_t)(hi - lo));
    *from = (const char *)*copy - lo;
out:
    return st;
}

int hint_barrier(hint_group g)
{
    struct coll_args a;
    int st;
    CHECK_GOTO(begin(&a, COLL_BARRIER, g), out);
    return run(&a, a.size == 1);
out:
    return st;
}

static __attribute__((noinline)) int bcast_checked(void *buf, size_t count, hint_type t, int root, hint_group g)
{
    struct coll_args a;
    int st;
    CHECK_GOTO(begin(&a, COLL_BCAST, g), out);
    CHECK_GOTO(check_root(&a, root), out);
    CHECK_GOTO(block_bytes(count, t, &a.block), out);
    CHECK_GOTO(refuse_if(buf == HINT_IN_PLACE, HINT_ERR_BUFFER), out);
    CHECK_GOTO(check_buf(buf, a.block), out);
    CHECK_GOTO(side_layout(count, t, 1, &a.rl), out);
    a.root = root;
    a.rbuf = buf;
    return run(&a, a.size == 1 || a.block == 0);
out:
    return st;
}

static int bcast_empty_cold(void *buf, size_t count, hint_type t, int root, hint_group g);
static inline __attribute__((always_inline)) int bcast_empty_in(void *buf, size_t count, hint_type t, int root,
                                                                hint_group g, bool probe)
{
    if (count == 0 && empty_group_ok(g, probe) && empty_root_ok(g, root) && empty_type_ok(t, probe) &&
        buf != HINT_IN_PLACE)
        return empty_done(COLL_BCAST, g);
    return probe ? bcast_checked(buf, count, t, root, g) : bcast_empty_cold(buf, count, t, root, g);
}

static inline __attribute__((always_inline)) int bcast_empty(void *buf, size_t count, hint_type t, int root,
                                                             hint_group g)
{
    return bcast_empty_in(buf, count, t, root, g, false);
}
static __attribute__((noinline)) int bcast_empty_cold(void *buf, size_t count, hint_type t, int root, hint_group g)
{
    return bcast_empty_in(buf, count, t, root, g, true);
}

int hint_bcast(void *buf, size_t count, hint_type t, int root, hint_group g)
{
    return count == 0 ? bcast_empty(buf, count, t, root, g) : bcast_checked(buf, count, t, root, g);
}

/* Reductions: the elements' predefined kind (of a derived type: the kind it is made of) and op
   must fit together; a user op takes any type, its elements whole (the op bound to t, which
   its function is given). in_count elements of t are read, count written. */
static inline __attribute__((always_inline)) int reduction_args(struct coll_args *a, size_t in_count, size_t count,
                                                               hint_type t, hint_op op)
{
    int st;
    CHECK_GOTO(block_bytes(count, t, &a->block), out);
    a->basic = dt_sig_basic(t);
    /* a mix of kinds has no predefined reduction (op_check: DT_NONE) */
    CHECK_GOTO(refuse_if(op_check(op, a->basic) != HINT_SUCCESS, HINT_ERR_OP), out);
    a->esize = op_is_user(op) ? (dt_size(t) ? dt_size(t) : 1) : dt_basic_size(a->basic);
    a->count = dt_size(t) == a->esize ? count : a->block / a->esize; /* no division for a predefined t */
    CHECK_GOTO(op_bind(op, t, &a->op), out);
    CHECK_GOTO(side_layout(in_count, t, 1, &a->sl), out);
    CHECK_GOTO(side_layout(count, t, 1, &a->rl), out);
out:
    return st;
}

static __attribute__((noinline)) int reduce_checked(const void *s, void *r, size_t count, hint_type t, hint_op op,
                                                    int root, hint_group g)
{
    struct coll_args a;
    int st;
    CHECK_GOTO(begin(&a, COLL_REDUCE, g), out);
    CHECK_GOTO(check_root(&a, root), out);
    CHECK_GOTO(reduction_args(&a, count, count, t, op), out);
    bool is_root = a.rank == root;
    CHECK_GOTO(refuse_if(s == HINT_IN_PLACE && !is_root, HINT_ERR_BUFFER), out);
    if (s == HINT_IN_PLACE)
        s = r;
    CHECK_GOTO(check_buf(s, a.block), out);
    if (is_root)
        CHECK_GOTO(check_buf(r, a.block), out);
    else
        a.rl = (struct coll_layout){0}; /* nothing is written here */
    a.root = root;
    a.sbuf = s;
    a.rbuf = r;
    if (a.size == 1 && a.block)
        copy_own(s, count, t, r, count, t, a.block);
    return run(&a, a.size == 1 || a.block == 0);
out:
    return st;
}

static int reduce_empty_cold(const void *s, void *r, size_t count, hint_type t, hint_op op, int root, hint_group g);
static inline __attribute__((always_inline)) int reduce_empty_in(const void *s, void *r, size_t count, hint_type t,
                                                                 hint_op op, int root, hint_group g, bool probe)
{
    if (count == 0 && empty_group_ok(g, probe) && empty_root_ok(g, root) && empty_reduction_ok(t, op, probe) &&
        (s != HINT_IN_PLACE || g->rank == root))
        return empty_done(COLL_REDUCE, g);
    return probe ? reduce_checked(s, r, count, t, op, root, g) : reduce_empty_cold(s, r, count, t, op, root, g);
}

static inline __attribute__((always_inline)) int reduce_empty(const void *s, void *r, size_t count, hint_type t,
                                                              hint_op op, int root, hint_group g)
{
    return reduce_empty_in(s, r, count, t, op, root, g, false);
}
static __attribute__((noinline)) int reduce_empty_cold(const void *s, void *r, size_t count, hint_type t, hint_op op,
                                                       int root, hint_group g)
{
    return reduce_empty_in(s, r, count, t, op, root, g, true);
}

int hint_reduce(const void *s, void *r, size_t count, hint_type t, hint_op op, int root, hint_group g)
{
    return count == 0 ? reduce_empty(s, r, count, t, op, root, g) : reduce_checked(s, r, count, t, op, root, g);
}

static __attribute__((noinline)) int allreduce_checked(const void *s, void *r, size_t count, hint_type t, hint_op op,
                                                       hint_group g)
{
    struct coll_args a;
    int st;
    CHECK_GOTO(begin(&a, COLL_ALLREDUCE, g), out);
    CHECK_GOTO(reduction_args(&a, count, count, t, op), out);
    if (s == HINT_IN_PLACE)
        s = r;
    CHECK_GOTO(refuse_if(r == HINT_IN_PLACE, HINT_ERR_BUFFER), out);
    CHECK_GOTO(check_buf(s, a.block), out);
    CHECK_GOTO(check_buf(r, a.block), out);
    a.sbuf = s;
    a.rbuf = r;
    if (a.size == 1 && a.block)
        copy_own(s, count, t, r, count, t, a.block);
    return run(&a, a.size == 1 || a.block == 0);
out:
    return st;
}

static int allreduce_empty_cold(const void *s, void *r, size_t count, hint_type t, hint_op op, hint_group g);
static inline __attribute__((always_inline)) int allreduce_empty_in(const void *s, void *r, size_t count, hint_type t,
                                                                    hint_op op, hint_group g, bool probe)
{
    if (count == 0 && empty_group_ok(g, probe) && empty_reduction_ok(t, op, probe) && r != HINT_IN_PLACE)
        return empty_done(COLL_ALLREDUCE, g);
    return probe ? allreduce_checked(s, r, count, t, op, g) : allreduce_empty_cold(s, r, count, t, op, g);
}

static inline __attribute__((always_inline)) int allreduce_empty(const void *s, void *r, size_t count, hint_type t,
                                                                 hint_op op, hint_group g)
{
    return allreduce_empty_in(s, r, count, t, op, g, false);
}
static __attribute__((noinline)) int allreduce_empty_cold(const void *s, void *r, size_t count, hint_type t, hint_op op,
                                                          hint_group g)
{
    return allreduce_empty_in(s, r, count, t, op, g, true);
}

int hint_allreduce(const void *s, void *r, size_t count, hint_type t, hint_op op, hint_group g)
{
    return count == 0 ? allreduce_empty(s, r, count, t, op, g) : allreduce_checked(s, r, count, t, op, g);
}

static __attribute__((noinline)) int reduce_scatter_block_checked(const void *s, void *r, size_t rcount, hint_type t,
                                                                  hint_op op, hint_group g)
{
    struct coll_args a;
    void *copy = NULL;
    int st;
    CHECK_GOTO(begin(&a, COLL_REDUCE_SCATTER_BLOCK, g), out);
    CHECK_GOTO(refuse_if(rcount > SIZE_MAX / (size_t)a.size, HINT_ERR_COUNT), out);
    CHECK_GOTO(reduction_args(&a, rcount * (size_t)a.size, rcount, t, op), out);
    CHECK_GOTO(refuse_if(a.block != 0 && SIZE_MAX / a.block < (size_t)a.size, HINT_ERR_COUNT), out);
    CHECK_GOTO(refuse_if(r == HINT_IN_PLACE, HINT_ERR_BUFFER), out);
    CHECK_GOTO(check_buf(r, a.block), out);
    if (s == HINT_IN_PLACE) {
        /* the input is all of r, the output its first block: work from a copy */
        const char *from;
        if (a.sl.type) {
            CHECK_GOTO(copy_span(r, rcount * (size_t)a.size, t, &copy, &from), out);
        } else {
            CHECK_GOTO(coll_scratch(a.block * (size_t)a.size, &copy), out);
            copy_bytes(copy, r, a.block * (size_t)a.size);
            from = copy;
        }
        s = from;
        copy = nbc_keep(copy);
    }
    CHECK_GOTO(check_buf(s, a.block), out);
    a.sbuf = s;
    a.rbuf = r;
    if (a.size == 1 && a.block)
        copy_own(s, rcount, t, r, rcount, t, a.block);
    st = run(&a, a.size == 1 || a.block == 0);
out:
    free(copy);
    return st;
}

static int reduce_scatter_block_empty_cold(const void *s, void *r, size_t rcount, hint_type t, hint_op op,
                                           hint_group g);
static inline __attribute__((always_inline)) int
reduce_scatter_block_empty_in(const void *s, void *r, size_t rcount, hint_type t, hint_op op, hint_group g, bool probe)
{
    if (rcount == 0 && empty_group_ok(g, probe) && empty_reduction_ok(t, op, probe) && r != HINT_IN_PLACE)
        return empty_done(COLL_REDUCE_SCATTER_BLOCK, g);
    return probe ? reduce_scatter_block_checked(s, r, rcount, t, op, g)
                 : reduce_scatter_block_empty_cold(s, r, rcount, t, op, g);
}

static inline __attribute__((always_inline)) int reduce_scatter_block_empty(const void *s, void *r, size_t rcount,
                                                                            hint_type t, hint_op op, hint_group g)
{
    return reduce_scatter_block_empty_in(s, r, rcount, t, op, g, false);
}
static __attribute__((noinline)) int reduce_scatter_block_empty_cold(const void *s, void *r, size_t rcount, hint_type t,
                                                                     hint_op op, hint_group g)
{
    return reduce_scatter_block_empty_in(s, r, rcount, t, op, g, true);
}

int hint_reduce_scatter_block(const void *s, void *r, size_t rcount, hint_type t, hint_op op, hint_group g)
{
    return rcount == 0 ? reduce_scatter_block_empty(s, r, rcount, t, op, g)
                       : reduce_scatter_block_checked(s, r, rcount, t, op, g);
}

/* gather/scatter/allgather/alltoall: the block each rank contributes, equal on both sides. */
static int block_pair(const struct coll_args *a, bool send_significant, size_t sc, hint_type stype,
                      bool recv_significant, size_t rc, hint_type rtype, size_t *block)
{
    size_t sb = 0, rb = 0;
    int st;
    if (send_significant && recv_significant && stype == rtype && sc == rc) {
        /* the usual call: one type and count on both sides, so one check, and the kinds match */
        if ((st = block_bytes(sc, stype, &sb)) != HINT_SUCCESS)
            return st;
        rb = sb;
    } else {
        if (send_significant && (st = block_bytes(sc, stype, &sb)) != HINT_SUCCESS)
            return st;
        if (recv_significant && (st = block_bytes(rc, rtype, &rb)) != HINT_SUCCESS)
            return st;
        if (send_significant && recv_significant && (sb != rb || !kinds_match(stype, rtype)))
            return HINT_ERR_TYPE; /* the type signatures of a block differ */
    }
    if (rb != 0 && SIZE_MAX / rb < (size_t)a->size)
        return HINT_ERR_COUNT;
    *block = send_significant ? sb : rb;
    return HINT_SUCCESS;
}

/* Bytes from a side's address to its block i. */
static ptrdiff_t block_offset(const struct coll_layout *l, size_t block, int i)
{
    return i * (l->type ? (ptrdiff_t)l->count * l->extent : (ptrdiff_t)block);
}

static __attribute__((noinline)) int gather_checked(const void *s, size_t sc, hint_type st_, void *r, size_t rc,
                                                    hint_type rt_, int root, hint_group g)
{
    struct coll_args a;
    int st;
    CHECK_GOTO(begin(&a, COLL_GATHER, g), out);
    CHECK_GOTO(check_root(&a, root), out);
    bool is_root = a.rank == root, in_place = s == HINT_IN_PLACE;
    CHECK_GOTO(refuse_if(in_place && !is_root, HINT_ERR_BUFFER), out);
    CHECK_GOTO(block_pair(&a, !in_place, sc, st_, is_root, rc, rt_, &a.block), out);
    if (is_root)
        CHECK_GOTO(side_layout(rc, rt_, (size_t)a.size, &a.rl), out);
    if (!in_place)
        CHECK_GOTO(side_layout(sc, st_, 1, &a.sl), out);
    if (in_place) {
        s = (char *)r + block_offset(&a.rl, a.block, root);
        a.sl = a.rl.type ? (struct coll_layout){.type = rt_, .count = rc, .extent = a.rl.extent} : a.sl;
    }
    CHECK_GOTO(check_buf(s, a.block), out);
    if (is_root)
        CHECK_GOTO(check_buf(r, a.block), out);
    a.root = root;
    a.sbuf = s;
    a.rbuf = r;
    if (a.size == 1 && !in_place)
        copy_own(s, sc, st_, r, rc, rt_, a.block);
    return run(&a, a.size == 1 || a.block == 0);
out:
    return st;
}

static int gather_empty_cold(const void *s, size_t sc, hint_type st_, void *r, size_t rc, hint_type rt_, int root,
                             hint_group g);
static inline __attribute__((always_inline)) int gather_empty_in(const void *s, size_t sc, hint_type st_, void *r,
                                                                 size_t rc, hint_type rt_, int root, hint_group g,
                                                                 bool probe)
{
    if ((sc == 0 || rc == 0) && empty_group_ok(g, probe) && empty_root_ok(g, root) &&
        (s != HINT_IN_PLACE || g->rank == root) &&
        empty_pair_ok(s != HINT_IN_PLACE, sc, st_, g->rank == root, rc, rt_, probe))
        return empty_done(COLL_GATHER, g);
    return probe ? gather_checked(s, sc, st_, r, rc, rt_, root, g) : gather_empty_cold(s, sc, st_, r, rc, rt_, root, g);
}

static inline __attribute__((always_inline)) int gather_empty(const void *s, size_t sc, hint_type st_, void *r,
                                                              size_t rc, hint_type rt_, int root, hint_group g)
{
    return gather_empty_in(s, sc, st_, r, rc, rt_, root, g, false);
}
static __attribute__((noinline)) int gather_empty_cold(const void *s, size_t sc, hint_type st_, void *r, size_t rc,
                                                       hint_type rt_, int root, hint_group g)
{
    return gather_empty_in(s, sc, st_, r, rc, rt_, root, g, true);
}

int hint_gather(const void *s, size_t sc, hint_type st_, void *r, size_t rc, hint_type rt_, int root, hint_group g)
{
    return sc == 0 || rc == 0 ? gather_empty(s, sc, st_, r, rc, rt_, root, g)
                              : gather_checked(s, sc, st_, r, rc, rt_, root, g);
}

static __attribute__((noinline)) int scatter_checked(const void *s, size_t sc, hint_type st_, void *r, size_t rc,
                                                     hint_type rt_, int root, hint_group g)
{
    struct coll_args a;
    int st;
    CHECK_GOTO(begin(&a, COLL_SCATTER, g), out);
    CHECK_GOTO(check_root(&a, root), out);
    bool is_root = a.rank == root, in_place = r == HINT_IN_PLACE;
    CHECK_GOTO(refuse_if(in_place && !is_root, HINT_ERR_BUFFER), out);
    CHECK_GOTO(block_pair(&a, is_root, sc, st_, !in_place, rc, rt_, &a.block), out);
    if (is_root)
        CHECK_GOTO(side_layout(sc, st_, (size_t)a.size, &a.sl), out);
    if (!in_place)
        CHECK_GOTO(side_layout(rc, rt_, 1, &a.rl), out);
    if (in_place) {
        r = (char *)s + block_offset(&a.sl, a.block, root);
        a.rl = a.sl.type ? (struct coll_layout){.type = st_, .count = sc, .extent = a.sl.extent} : a.rl;
    }
    CHECK_GOTO(check_buf(r, a.block), out);
    if (is_root)
        CHECK_GOTO(check_buf(s, a.block), out);
    a.root = root;
    a.sbuf = s;
    a.rbuf = r;
    if (a.size == 1 && !in_place)
        copy_own(s, sc, st_, r, rc, rt_, a.block);
    return run(&a, a.size == 1 || a.block == 0);
out:
    return st;
}

static int scatter_empty_cold(const void *s, size_t sc, hint_type st_, void *r, size_t rc, hint_type rt_, int root,
                              hint_group g);
static inline __attribute__((always_inline)) int scatter_empty_in(const void *s, size_t sc, hint_type st_, void *r,
                                                                  size_t rc, hint_type rt_, int root, hint_group g,
                                                                  bool probe)
{
    if ((sc == 0 || rc == 0) && empty_group_ok(g, probe) && empty_root_ok(g, root) &&
        (r != HINT_IN_PLACE || g->rank == root) &&
        empty_pair_ok(g->rank == root, sc, st_, r != HINT_IN_PLACE, rc, rt_, probe))
        return empty_done(COLL_SCATTER, g);
    return probe ? scatter_checked(s, sc, st_, r, rc, rt_, root, g)
                 : scatter_empty_cold(s, sc, st_, r, rc, rt_, root, g);
}

static inline __attribute__((always_inline)) int scatter_empty(const void *s, size_t sc, hint_type st_, void *r,
                                                               size_t rc, hint_type rt_, int root, hint_group g)
{
    return scatter_empty_in(s, sc, st_, r, rc, rt_, root, g, false);
}
static __attribute__((noinline)) int scatter_empty_cold(const void *s, size_t sc, hint_type st_, void *r, size_t rc,
                                                        hint_type rt_, int root, hint_group g)
{
    return scatter_empty_in(s, sc, st_, r, rc, rt_, root, g, true);
}

int hint_scatter(const void *s, size_t sc, hint_type st_, void *r, size_t rc, hint_type rt_, int root, hint_group g)
{
    return sc == 0 || rc == 0 ? scatter_empty(s, sc, st_, r, rc, rt_, root, g)
                              : scatter_checked(s, sc, st_, r, rc, rt_, root, g);
}

static __attribute__((noinline)) int allgather_checked(const void *s, size_t sc, hint_type st_, void *r, size_t rc,
                                                       hint_type rt_, hint_group g)
{
    bool in_place = s == HINT_IN_PLACE;
    struct coll_args a;
    int st;
    CHECK_GOTO(begin(&a, COLL_ALLGATHER, g), out);
    CHECK_GOTO(block_pair(&a, !in_place, sc, st_, true, rc, rt_, &a.block), out);
    if (!in_place)
        CHECK_GOTO(side_layout(sc, st_, 1, &a.sl), out);
    CHECK_GOTO(side_layout(rc, rt_, (size_t)a.size, &a.rl), out);
    if (in_place) {
        /* this rank's block of r is its input, in r's layout */
        s = (char *)r + block_offset(&a.rl, a.block, a.rank);
        if (a.rl.type)
            a.sl = (struct coll_layout){.type = rt_, .count = rc, .extent = a.rl.extent};
    }
    CHECK_GOTO(check_buf(s, a.block), out);
    CHECK_GOTO(check_buf(r, a.block), out);
    a.sbuf = s;
    a.rbuf = r;
    if (a.size == 1 && !in_place)
        copy_own(s, sc, st_, r, rc, rt_, a.block);
    return run(&a, a.size == 1 || a.block == 0);
out:
    return st;
}

static int allgather_empty_cold(const void *s, size_t sc, hint_type st_, void *r, size_t rc, hint_type rt_,
                                hint_group g);
static inline __attribute__((always_inline)) int allgather_empty_in(const void *s, size_t sc, hint_type st_, void *r,
                                                                    size_t rc, hint_type rt_, hint_group g, bool probe)
{
    if (rc == 0 && empty_group_ok(g, probe) && empty_pair_ok(s != HINT_IN_PLACE, sc, st_, true, rc, rt_, probe))
        return empty_done(COLL_ALLGATHER, g);
    return probe ? allgather_checked(s, sc, st_, r, rc, rt_, g) : allgather_empty_cold(s, sc, st_, r, rc, rt_, g);
}

static inline __attribute__((always_inline)) int allgather_empty(const void *s, size_t sc, hint_type st_, void *r,
                                                                 size_t rc, hint_type rt_, hint_group g)
{
    return allgather_empty_in(s, sc, st_, r, rc, rt_, g, false);
}
static __attribute__((noinline)) int allgather_empty_cold(const void *s, size_t sc, hint_type st_, void *r, size_t rc,
                                                          hint_type rt_, hint_group g)
{
    return allgather_empty_in(s, sc, st_, r, rc, rt_, g, true);
}

int hint_allgather(const void *s, size_t sc, hint_type st_, void *r, size_t rc, hint_type rt_, hint_group g)
{
    return rc == 0 ? allgather_empty(s, sc, st_, r, rc, rt_, g) : allgather_checked(s, sc, st_, r, rc, rt_, g);
}

static __attribute__((noinline)) int alltoall_checked(const void *s, size_t sc, hint_type st_, void *r, size_t rc,
                                                      hint_type rt_, hint_group g)
{
    bool in_place = s == HINT_IN_PLACE;
    struct coll_args a;
    void *copy = NULL;
    int st;
    CHECK_GOTO(begin(&a, COLL_ALLTOALL, g), out);
    CHECK_GOTO(block_pair(&a, !in_place, sc, st_, true, rc, rt_, &a.block), out);
    if (!in_place)
        CHECK_GOTO(side_layout(sc, st_, (size_t)a.size, &a.sl), out);
    CHECK_GOTO(side_layout(rc, rt_, (size_t)a.size, &a.rl), out);
    CHECK_GOTO(check_buf(r, a.block), out);
    if (!in_place)
        CHECK_GOTO(check_buf(s, a.block), out);
    if (in_place && a.size > 1) {
        /* every block of r is both read and overwritten: send from a copy, in r's layout */
        const char *from;
        if (a.rl.type) {
            CHECK_GOTO(copy_span(r, rc * (size_t)a.size, rt_, &copy, &from), out);
            a.sl = a.rl;
        } else {
            CHECK_GOTO(coll_scratch(a.block * (size_t)a.size, &copy), out);
            copy_bytes(copy, r, a.block * (size_t)a.size);
            from = copy;
        }
        s = from;
        copy = nbc_keep(copy);
    }
    a.sbuf = in_place && a.size == 1 ? r : s;
    a.rbuf = r;
    if (a.size == 1 && !in_place)
        copy_own(s, sc, st_, r, rc, rt_, a.block);
    st = run(&a, a.size == 1 || a.block == 0);
out:
    free(copy);
    return st;
}

static int alltoall_empty_cold(const void *s, size_t sc, hint_type st_, void *r, size_t rc, hint_type rt_,
                               hint_group g);
static inline __attribute__((always_inline)) int alltoall_empty_in(const void *s, size_t sc, hint_type st_, void *r,
                                                                   size_t rc, hint_type rt_, hint_group g, bool probe)
{
    if (rc == 0 && empty_group_ok(g, probe) && empty_pair_ok(s != HINT_IN_PLACE, sc, st_, true, rc, rt_, probe))
        return empty_done(COLL_ALLTOALL, g);
    return probe ? alltoall_checked(s, sc, st_, r, rc, rt_, g) : alltoall_empty_cold(s, sc, st_, r, rc, rt_, g);
}

static inline __attribute__((always_inline)) int alltoall_empty(const void *s, size_t sc, hint_type st_, void *r,
                                                                size_t rc, hint_type rt_, hint_group g)
{
    return alltoall_empty_in(s, sc, st_, r, rc, rt_, g, false);
}
static __attribute__((noinline)) int alltoall_empty_cold(const void *s, size_t sc, hint_type st_, void *r, size_t rc,
                                                         hint_type rt_, hint_group g)
{
    return alltoall_empty_in(s, sc, st_, r, rc, rt_, g, true);
}

int hint_alltoall(const void *s, size_t sc, hint_type st_, void *r, size_t rc, hint_type rt_, hint_group g)
{
    return rc == 0 ? alltoall_empty(s, sc, st_, r, rc, rt_, g) : alltoall_checked(s, sc, st_, r, rc, rt_, g);
}

/* ---- v variants: counts and displacements converted to bytes ---- */

struct vbytes {
    size_t *counts, *displs;
    ptrdiff_t base;  /* the buffer's blocks are displs[p] bytes from buffer + base */
};

/* Counts to bytes of data, displacements (in extents) to byte offsets from the lowest block
   start (base), so that they stay unsigned whatever the sign of the extent. */
static int to_bytes(const struct coll_args *a, const size_t counts[], const size_t displs[], hint_type t,
                    struct vbytes *out)
{
    size_t es;
    ptrdiff_t ext = dt_extent(t), at, lowest = 0;
    int st;
    *out = (struct vbytes){0};
    CHECK_GOTO(refuse_if(counts == NULL || displs == NULL, HINT_ERR_ARG), out);
    CHECK_GOTO(block_bytes(1, t, &es), out);
    out->counts = malloc(2 * (size_t)a->size * sizeof(size_t));
    CHECK_GOTO(refuse_if(out->counts == NULL, HINT_ERR_NOMEM), out);
    out->displs = out->counts + a->size;
    for (int p = 0; p < a->size; p++) {
        CHECK_GOTO(refuse_if((es != 0 && counts[p] > SIZE_MAX / es) || displs[p] > PTRDIFF_MAX ||
                                 __builtin_mul_overflow((ptrdiff_t)displs[p], ext, &at),
                             HINT_ERR_COUNT),
                   out);
        out->counts[p] = counts[p] * es;
        lowest = at < lowest ? at : lowest;
    }
    for (int p = 0; p < a->size; p++)
        out->displs[p] = (size_t)((ptrdiff_t)displs[p] * ext - lowest);
    out->base = lowest;
out:
    if (st != HINT_SUCCESS) {
        free(out->counts);
        *out = (struct vbytes){0};
    }
    return st;
}

int hint_gatherv(const void *s, size_t sc, hint_type st_, void *r, const size_t rcounts[], const size_t rdispls[],
                 hint_type rt_, int root, hint_group g)
{
    struct coll_args a;
    struct vbytes rv = {0};
    int st;
    CHECK_GOTO(begin(&a, COLL_GATHERV, g), out);
    CHECK_GOTO(check_root(&a, root), out);
    bool is_root = a.rank == root, in_place = s == HINT_IN_PLACE;
    CHECK_GOTO(refuse_if(in_place && !is_root, HINT_ERR_BUFFER), out);
    if (is_root)
        CHECK_GOTO(to_bytes(&a, rcounts, rdispls, rt_, &rv), out);
    char *rb = is_root ? (char *)r + rv.base : r;
    if (!in_place) {
        CHECK_GOTO(block_bytes(sc, st_, &a.block), out);
        a.sl = v_layout(st_, sc);
    } else {
        a.block = rv.counts[root];
        s = rb + rv.displs[root];
        a.sl = v_layout(rt_, rcounts[root]);
    }
    if (is_root)
        CHECK_GOTO(refuse_if(a.block != rv.counts[root] || (!in_place && !kinds_match(st_, rt_)), HINT_ERR_TYPE), out);
    CHECK_GOTO(check_buf(s, a.block), out);
    CHECK_GOTO(refuse_if(is_root && r == NULL, HINT_ERR_BUFFER), out);
    a.root = root;
    a.sbuf = s;
    a.rbuf = rb;
    a.rcounts = rv.counts;
    a.rdispls = rv.displs;
    if (is_root)
        a.rl = v_layout(rt_, 0);
    if (a.size == 1 && !in_place)
        copy_own(s, sc, st_, rb + rv.displs[0], rcounts[0], rt_, a.block);
    st = run(&a, a.size == 1);
out:
    free(rv.counts);
    return st;
}

int hint_scatterv(const void *s, const size_t scounts[], const size_t sdispls[], hint_type st_, void *r, size_t rc,
                  hint_type rt_, int root, hint_group g)
{
    struct coll_args a;
    struct vbytes sv = {0};
    int st;
    CHECK_GOTO(begin(&a, COLL_SCATTERV, g), out);
    CHECK_GOTO(check_root(&a, root), out);
    bool is_root = a.rank == root, in_place = r == HINT_IN_PLACE;
    CHECK_GOTO(refuse_if(in_place && !is_root, HINT_ERR_BUFFER), out);
    if (is_root)
        CHECK_GOTO(to_bytes(&a, scounts, sdispls, st_, &sv), out);
    const char *sb = is_root ? (const char *)s + sv.base : s;
    if (!in_place) {
        CHECK_GOTO(block_bytes(rc, rt_, &a.block), out);
        a.rl = v_layout(rt_, rc);
    } else {
        a.block = sv.counts[root];
        r = (char *)sb + sv.displs[root];
        a.rl = v_layout(st_, scounts[root]);
    }
    if (is_root)
        CHECK_GOTO(refuse_if(a.block != sv.counts[root] || (!in_place && !kinds_match(st_, rt_)), HINT_ERR_TYPE), out);
    CHECK_GOTO(check_buf(r, a.block), out);
    CHECK_GOTO(refuse_if(is_root && s == NULL, HINT_ERR_BUFFER), out);
    a.root = root;
    a.sbuf = sb;
    a.rbuf = r;
    a.scounts = sv.counts;
    a.sdispls = sv.displs;
    if (is_root)
        a.sl = v_layout(st_, 0);
    if (a.size == 1 && !in_place)
        copy_own(sb + sv.displs[0], scounts[0], st_, r, rc, rt_, a.block);
    st = run(&a, a.size == 1);
out:
    free(sv.counts);
    return st;
}

int hint_allgatherv(const void *s, size_t sc, hint_type st_, void *r, const size_t rcounts[], const size_t rdispls[],
                    hint_type rt_, hint_group g)
{
    struct coll_args a;
    struct vbytes rv = {0};
    int st;
    CHECK_GOTO(begin(&a, COLL_ALLGATHERV, g), out);
    CHECK_GOTO(to_bytes(&a, rcounts, rdispls, rt_, &rv), out);
    char *rb = (char *)r + rv.base;
    bool in_place = s == HINT_IN_PLACE;
    if (!in_place) {
        CHECK_GOTO(block_bytes(sc, st_, &a.block), out);
        a.sl = v_layout(st_, sc);
    } else {
        a.block = rv.counts[a.rank];
        s = rb + rv.displs[a.rank];
        a.sl = v_layout(rt_, rcounts[a.rank]);
    }
    CHECK_GOTO(refuse_if(a.block != rv.counts[a.rank] || (!in_place && !kinds_match(st_, rt_)), HINT_ERR_TYPE), out);
    CHECK_GOTO(check_buf(s, a.block), out);
    CHECK_GOTO(refuse_if(r == NULL, HINT_ERR_BUFFER), out);
    a.sbuf = s;
    a.rbuf = rb;
    a.rcounts = rv.counts;
    a.rdispls = rv.displs;
    a.rl = v_layout(rt_, 0);
    if (a.size == 1 && !in_place)
        copy_own(s, sc, st_, rb + rv.displs[0], rcounts[0], rt_, a.block);
    st = run(&a, a.size == 1);
out:
    free(rv.counts);
    return st;
}

/* alltoallv in place: the whole receive side, which is read and overwritten, copied once. */
static int copy_v_side(const char *rb, const struct vbytes *rv, const size_t *rcounts, hint_type t, int P,
                       void **copy, const char **from)
{
    ptrdiff_t lo = PTRDIFF_MAX, hi = PTRDIFF_MIN, a, b;
    for (int p = 0; p < P; p++) {
        if (rcounts[p] == 0 || dt_span(t, rcounts[p], &a, &b) != HINT_SUCCESS || a == b)
            continue;
        lo = (ptrdiff_t)rv->displs[p] + a < lo ? (ptrdiff_t)rv->displs[p] + a : lo;
        hi = (ptrdiff_t)rv->displs[p] + b > hi ? (ptrdiff_t)rv->displs[p] + b : hi;
    }
    if (lo == PTRDIFF_MAX)
        lo = hi = 0;
    int st;
    CHECK_GOTO(coll_scratch((size_t)(hi - lo), copy), out);
    copy_bytes(*copy, rb + lo, (size_t)(hi - lo));
    *from = (const char *)*copy - lo;
out:
    return st;
}

int hint_alltoallv(const void *s, const size_t scounts[], const size_t sdispls[], hint_type st_, void *r,
                   const size_t rcounts[], const size_t rdispls[], hint_type rt_, hint_group g)
{
    struct coll_args a;
    struct vbytes sv = {0}, rv = {0};
    void *copy = NULL;
    int st;
    CHECK_GOTO(begin(&a, COLL_ALLTOALLV, g), out);
    bool in_place = s == HINT_IN_PLACE;
    CHECK_GOTO(to_bytes(&a, rcounts, rdispls, rt_, &rv), out);
    char *rb = (char *)r + rv.base;
    const char *sb;
    if (in_place) {
        /* as MPI: the receive layout describes the send side too */
        CHECK_GOTO(refuse_if(r == NULL, HINT_ERR_BUFFER), out);
        CHECK_GOTO(copy_v_side(rb, &rv, rcounts, rt_, a.size, &copy, &sb), out);
        copy = nbc_keep(copy);
        scounts = rcounts;
        sdispls = rdispls;
        st_ = rt_;
        CHECK_GOTO(to_bytes(&a, scounts, sdispls, st_, &sv), out);
    } else {
        CHECK_GOTO(to_bytes(&a, scounts, sdispls, st_, &sv), out);
        sb = (const char *)s + sv.base;
    }
    CHECK_GOTO(refuse_if(r == NULL || (s == NULL && sv.counts[a.rank] > 0), HINT_ERR_BUFFER), out);
    CHECK_GOTO(refuse_if(sv.counts[a.rank] != rv.counts[a.rank] || (!in_place && !kinds_match(st_, rt_)),
                         HINT_ERR_TYPE), out);
    a.sbuf = sb;
    a.rbuf = rb;
    a.scounts = sv.counts;
    a.sdispls = sv.displs;
    a.rcounts = rv.counts;
    a.rdispls = rv.displs;
    a.sl = v_layout(st_, 0);
    a.rl = v_layout(rt_, 0);
    if (a.size == 1 && !in_place)
        copy_own(sb + sv.displs[0], scounts[0], st_, rb + rv.displs[0], rcounts[0], rt_, rv.counts[0]);
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
    int st;
    CHECK_GOTO(begin(a, op_id, g), out);
    CHECK_GOTO(vtopo_lists(g, l), out);
out:
    return st;
}

/* A side in the caller's datatype: count elements of t per block (v variants: count unused). */
static int neighbor_side(size_t count, hint_type t, struct coll_layout *l)
{
    size_t bytes;
    int st;
    CHECK_GOTO(block_bytes(count, t, &bytes), out);
    *l = (struct coll_layout){.type = t, .count = count, .extent = dt_extent(t)};
out:
    return st;
}

/* A v side: arrays present when there are neighbours, no count whose bytes overflow. */
static int neighbor_vside(int n, const size_t counts[], const size_t displs[], hint_type t, struct coll_layout *l)
{
    size_t bytes;
    int st;
    CHECK_GOTO(neighbor_side(0, t, l), out);
    CHECK_GOTO(refuse_if(n > 0 && (counts == NULL || displs == NULL), HINT_ERR_ARG), out);
    for (int i = 0; i < n; i++)
        CHECK_GOTO(block_bytes(counts[i], t, &bytes), out);
out:
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
static __attribute__((noinline)) int neighbor_blocks(int op_id, const void *s, size_t sc, hint_type st_, void *r,
                                                     size_t rc, hint_type rt_, hint_group g)
{
    struct coll_args a;
    struct vtopo_lists l;
    int st;
    CHECK_GOTO(neighbor_begin(&a, op_id, g, &l), out);
    CHECK_GOTO(neighbor_side(sc, st_, &a.sl), out);
    CHECK_GOTO(neighbor_side(rc, rt_, &a.rl), out);
    CHECK_GOTO(neighbor_buf(s, sc && l.outdegree), out);
    CHECK_GOTO(neighbor_buf(r, rc && l.indegree), out);
    a.sbuf = s;
    a.rbuf = r;
    /* The bytes of one block, for the rules (size-dependent choices) and the signature: every
       rank passes the same count here, so every rank sees the same block, even one without
       in- or out-neighbours that passes 0 on that side (hence the larger side). A call whose
       blocks are empty moves nothing anywhere: no rank waits for another (as Open MPI). */
    size_t sbytes = sc * dt_size(st_), rbytes = rc * dt_size(rt_);
    a.block = sbytes > rbytes ? sbytes : rbytes;
    return run(&a, a.block == 0);
out:
    return st;
}

/* Empty blocks on both sides (every member passes the same block: docs/API.md) finish as the
   other empty calls do, after neighbor_blocks' checks: a group with a topology, usable types,
   no HINT_IN_PLACE. */
static int neighbor_empty_cold(int op_id, const void *s, size_t sc, hint_type st_, void *r, size_t rc, hint_type rt_,
                               hint_group g);
static inline __attribute__((always_inline)) int neighbor_empty_in(int op_id, const void *s, size_t sc, hint_type st_,
                                                                   void *r, size_t rc, hint_type rt_, hint_group g,
                                                                   bool probe)
{
    if (sc == 0 && rc == 0 && empty_group_ok(g, probe) && vtopo_key >= 0 && grp_part(g, vtopo_key) != NULL &&
        empty_type_ok(st_, probe) && (rt_ == st_ || empty_type_ok(rt_, probe)) && s != HINT_IN_PLACE &&
        r != HINT_IN_PLACE)
        return empty_done(op_id, g);
    return probe ? neighbor_blocks(op_id, s, sc, st_, r, rc, rt_, g)
                 : neighbor_empty_cold(op_id, s, sc, st_, r, rc, rt_, g);
}

static inline __attribute__((always_inline)) int neighbor_empty(int op_id, const void *s, size_t sc, hint_type st_,
                                                                void *r, size_t rc, hint_type rt_, hint_group g)
{
    return neighbor_empty_in(op_id, s, sc, st_, r, rc, rt_, g, false);
}

static __attribute__((noinline)) int neighbor_empty_cold(int op_id, const void *s, size_t sc, hint_type st_, void *r,
                                                         size_t rc, hint_type rt_, hint_group g)
{
    return neighbor_empty_in(op_id, s, sc, st_, r, rc, rt_, g, true);
}

int hint_neighbor_allgather(const void *s, size_t sc, hint_type st_, void *r, size_t rc, hint_type rt_, hint_group g)
{
    return (sc | rc) == 0 ? neighbor_empty(COLL_NEIGHBOR_ALLGATHER, s, sc, st_, r, rc, rt_, g)
                          : neighbor_blocks(COLL_NEIGHBOR_ALLGATHER, s, sc, st_, r, rc, rt_, g);
}

int hint_neighbor_alltoall(const void *s, size_t sc, hint_type st_, void *r, size_t rc, hint_type rt_, hint_group g)
{
    return (sc | rc) == 0 ? neighbor_empty(COLL_NEIGHBOR_ALLTOALL, s, sc, st_, r, rc, rt_, g)
                          : neighbor_blocks(COLL_NEIGHBOR_ALLTOALL, s, sc, st_, r, rc, rt_, g);
}

int hint_neighbor_allgatherv(const void *s, size_t sc, hint_type st_, void *r, const size_t rcounts[],
                             const size_t rdispls[], hint_type rt_, hint_group g)
{
    struct coll_args a;
    struct vtopo_lists l;
    int st;
    CHECK_GOTO(neighbor_begin(&a, COLL_NEIGHBOR_ALLGATHERV, g, &l), out);
    CHECK_GOTO(neighbor_side(sc, st_, &a.sl), out);
    CHECK_GOTO(neighbor_vside(l.indegree, rcounts, rdispls, rt_, &a.rl), out);
    CHECK_GOTO(neighbor_buf(s, sc && l.outdegree), out);
    CHECK_GOTO(neighbor_buf(r, any_count(l.indegree, rcounts)), out);
    a.sbuf = s;
    a.rbuf = r;
    a.rcounts = rcounts;
    a.rdispls = rdispls;
    return run(&a, false);
out:
    return st;
}

int hint_neighbor_alltoallv(const void *s, const size_t scounts[], const size_t sdispls[], hint_type st_, void *r,
                            const size_t rcounts[], const size_t rdispls[], hint_type rt_, hint_group g)
{
    struct coll_args a;
    struct vtopo_lists l;
    int st;
    CHECK_GOTO(neighbor_begin(&a, COLL_NEIGHBOR_ALLTOALLV, g, &l), out);
    CHECK_GOTO(neighbor_vside(l.outdegree, scounts, sdispls, st_, &a.sl), out);
    CHECK_GOTO(neighbor_vside(l.indegree, rcounts, rdispls, rt_, &a.rl), out);
    CHECK_GOTO(neighbor_buf(s, any_count(l.outdegree, scounts)), out);
    CHECK_GOTO(neighbor_buf(r, any_count(l.indegree, rcounts)), out);
    a.sbuf = s;
    a.rbuf = r;
    a.scounts = scounts;
    a.sdispls = sdispls;
    a.rcounts = rcounts;
    a.rdispls = rdispls;
    return run(&a, false);
out:
    return st;
}

/* ---- nonblocking collectives: the blocking call's checks, then a schedule (run() above) ---- */

static int nbc_begin(hint_request *req)
{
    RT_CHECK_INIT();
    if (req == NULL)
        return HINT_ERR_ARG;
    *req = HINT_REQUEST_NULL;
    nbc_req = req;
    return HINT_SUCCESS;
}

/* After the blocking call's body: back to blocking, and the stash freed if no schedule took it
   (a check failed after the in-place copy was made). */
static int nbc_end(int st)
{
    nbc_req = NULL;
    free(nbc_stash);
    nbc_stash = NULL;
    return st;
}

#define NBC_CALL(req, call)                                                                      \
    do {                                                                                         \
        int nbc_st_ = nbc_begin(req);                                                            \
        return nbc_st_ != HINT_SUCCESS ? nbc_st_ : nbc_end(call);                                \
    } while (0)

int hint_ibarrier(hint_group g, hint_request *req) { NBC_CALL(req, hint_barrier(g)); }

int hint_ibcast(void *buf, size_t count, hint_type t, int root, hint_group g, hint_request *req)
{
    NBC_CALL(req, hint_bcast(buf, count, t, root, g));
}

int hint_ireduce(const void *s, void *r, size_t count, hint_type t, hint_op op, int root, hint_group g,
                 hint_request *req)
{
    NBC_CALL(req, hint_reduce(s, r, count, t, op, root, g));
}

int hint_iallreduce(const void *s, void *r, size_t count, hint_type t, hint_op op, hint_group g, hint_request *req)
{
    NBC_CALL(req, hint_allreduce(s, r, count, t, op, g));
}

int hint_ireduce_scatter_block(const void *s, void *r, size_t rcount, hint_type t, hint_op op, hint_group g,
                               hint_request *req)
{
    NBC_CALL(req, hint_reduce_scatter_block(s, r, rcount, t, op, g));
}

int hint_igather(const void *s, size_t sc, hint_type st_, void *r, size_t rc, hint_type rt_, int root, hint_group g,
                 hint_request *req)
{
    NBC_CALL(req, hint_gather(s, sc, st_, r, rc, rt_, root, g));
}

int hint_iscatter(const void *s, size_t sc, hint_type st_, void *r, size_t rc, hint_type rt_, int root, hint_group g,
                  hint_request *req)
{
    NBC_CALL(req, hint_scatter(s, sc, st_, r, rc, rt_, root, g));
}

int hint_iallgather(const void *s, size_t sc, hint_type st_, void *r, size_t rc, hint_type rt_, hint_group g,
                    hint_request *req)
{
    NBC_CALL(req, hint_allgather(s, sc, st_, r, rc, rt_, g));
}

int hint_ialltoall(const void *s, size_t sc, hint_type st_, void *r, size_t rc, hint_type rt_, hint_group g,
                   hint_request *req)
{
    NBC_CALL(req, hint_alltoall(s, sc, st_, r, rc, rt_, g));
}

int hint_igatherv(const void *s, size_t sc, hint_type st_, void *r, const size_t rcounts[], const size_t rdispls[],
                  hint_type rt_, int root, hint_group g, hint_request *req)
{
    NBC_CALL(req, hint_gatherv(s, sc, st_, r, rcounts, rdispls, rt_, root, g));
}

int hint_iscatterv(const void *s, const size_t scounts[], const size_t sdispls[], hint_type st_, void *r, size_t rc,
                   hint_type rt_, int root, hint_group g, hint_request *req)
{
    NBC_CALL(req, hint_scatterv(s, scounts, sdispls, st_, r, rc, rt_, root, g));
}

int hint_iallgatherv(const void *s, size_t sc, hint_type st_, void *r, const size_t rcounts[],
                     const size_t rdispls[], hint_type rt_, hint_group g, hint_request *req)
{
    NBC_CALL(req, hint_allgatherv(s, sc, st_, r, rcounts, rdispls, rt_, g));
}

int hint_ialltoallv(const void *s, const size_t scounts[], const size_t sdispls[], hint_type st_, void *r,
                    const size_t rcounts[], const size_t rdispls[], hint_type rt_, hint_group g, hint_request *req)
{
    NBC_CALL(req, hint_alltoallv(s, scounts, sdispls, st_, r, rcounts, rdispls, rt_, g));
}

int hint_ineighbor_allgather(const void *s, size_t sc, hint_type st_, void *r, size_t rc, hint_type rt_,
                             hint_group g, hint_request *req)
{
    NBC_CALL(req, hint_neighbor_allgather(s, sc, st_, r, rc, rt_, g));
}

int hint_ineighbor_alltoall(const void *s, size_t sc, hint_type st_, void *r, size_t rc, hint_type rt_,
                            hint_group g, hint_request *req)
{
    NBC_CALL(req, hint_neighbor_alltoall(s, sc, st_, r, rc, rt_, g));
}

int hint_ineighbor_allgatherv(const void *s, size_t sc, hint_type st_, void *r, const size_t rcounts[],
                              const size_t rdispls[], hint_type rt_, hint_group g, hint_request *req)
{
    NBC_CALL(req, hint_neighbor_allgatherv(s, sc, st_, r, rcounts, rdispls, rt_, g));
}

int hint_ineighbor_alltoallv(const void *s, const size_t scounts[], const size_t sdispls[], hint_type st_,
                             void *r, const size_t rcounts[], const size_t rdispls[], hint_type rt_, hint_group g,
                             hint_request *req)
{
    NBC_CALL(req, hint_neighbor_alltoallv(s, scounts, sdispls, st_, r, rcounts, rdispls, rt_, g));
}

/* ---- prefix reductions, reduce_scatter with counts, alltoallw ---- */

static __attribute__((noinline)) int scan_checked(int op_id, const void *s, void *r, size_t count, hint_type t,
                                                  hint_op op, hint_group g)
{
    struct coll_args a;
    int st;
    CHECK_GOTO(begin(&a, op_id, g), out);
    CHECK_GOTO(reduction_args(&a, count, count, t, op), out);
    CHECK_GOTO(refuse_if(r == HINT_IN_PLACE, HINT_ERR_BUFFER), out);
    bool writes_r = op_id == COLL_SCAN || a.rank > 0; /* exscan leaves rank 0's r alone */
    if (s == HINT_IN_PLACE)
        s = r;
    CHECK_GOTO(check_buf(s, a.block), out);
    if (writes_r)
        CHECK_GOTO(check_buf(r, a.block), out);
    a.sbuf = s;
    a.rbuf = r;
    if (a.size == 1 && a.block && op_id == COLL_SCAN)
        copy_own(s, count, t, r, count, t, a.block);
    return run(&a, a.size == 1 || a.block == 0);
out:
    return st;
}

static int scan_empty_cold(int op_id, const void *s, void *r, size_t count, hint_type t, hint_op op, hint_group g);
static inline __attribute__((always_inline)) int scan_empty_in(int op_id, const void *s, void *r, size_t count,
                                                               hint_type t, hint_op op, hint_group g, bool probe)
{
    if (count == 0 && empty_group_ok(g, probe) && empty_reduction_ok(t, op, probe) && r != HINT_IN_PLACE)
        return empty_done(op_id, g);
    return probe ? scan_checked(op_id, s, r, count, t, op, g) : scan_empty_cold(op_id, s, r, count, t, op, g);
}

static inline __attribute__((always_inline)) int scan_empty(int op_id, const void *s, void *r, size_t count,
                                                            hint_type t, hint_op op, hint_group g)
{
    return scan_empty_in(op_id, s, r, count, t, op, g, false);
}
static __attribute__((noinline)) int scan_empty_cold(int op_id, const void *s, void *r, size_t count, hint_type t,
                                                     hint_op op, hint_group g)
{
    return scan_empty_in(op_id, s, r, count, t, op, g, true);
}

static int scan_call(int op_id, const void *s, void *r, size_t count, hint_type t, hint_op op, hint_group g)
{
    return count == 0 ? scan_empty(op_id, s, r, count, t, op, g) : scan_checked(op_id, s, r, count, t, op, g);
}

int hint_scan(const void *s, void *r, size_t count, hint_type t, hint_op op, hint_group g)
{
    return scan_call(COLL_SCAN, s, r, count, t, op, g);
}

int hint_exscan(const void *s, void *r, size_t count, hint_type t, hint_op op, hint_group g)
{
    return scan_call(COLL_EXSCAN, s, r, count, t, op, g);
}

/* Each rank's part of a reduce_scatter in bytes (packed) and its byte offset in the vector;
   *total = the vector's elements. */
static int scatter_parts(const struct coll_args *a, const size_t rcounts[], hint_type t, size_t **parts,
                         size_t *total)
{
    size_t es = dt_size(t);
    *total = 0;
    *parts = NULL;
    if (rcounts == NULL)
        return HINT_ERR_ARG;
    for (int p = 0; p < a->size; p++)
        if (__builtin_add_overflow(*total, rcounts[p], total))
            return HINT_ERR_COUNT;
    if (es != 0 && *total > SIZE_MAX / es)
        return HINT_ERR_COUNT;
    if ((*parts = malloc(2 * (size_t)a->size * sizeof **parts)) == NULL)
        return HINT_ERR_NOMEM;
    size_t at = 0;
    for (int p = 0; p < a->size; p++) {
        (*parts)[p] = rcounts[p] * es;
        (*parts)[a->size + p] = at * es;
        at += rcounts[p];
    }
    return HINT_SUCCESS;
}

int hint_reduce_scatter(const void *s, void *r, const size_t rcounts[], hint_type t, hint_op op, hint_group g)
{
    struct coll_args a;
    size_t *parts = NULL, total;
    void *copy = NULL;
    int st;
    CHECK_GOTO(begin(&a, COLL_REDUCE_SCATTER, g), out);
    CHECK_GOTO(dt_check(t), out);
    CHECK_GOTO(scatter_parts(&a, rcounts, t, &parts, &total), out);
    CHECK_GOTO(reduction_args(&a, total, total, t, op), out);
    CHECK_GOTO(side_layout(rcounts[a.rank], t, 1, &a.rl), out);
    CHECK_GOTO(refuse_if(r == HINT_IN_PLACE, HINT_ERR_BUFFER), out);
    CHECK_GOTO(check_buf(r, parts[a.rank]), out);
    if (s == HINT_IN_PLACE) {
        /* the input is all of r, the output its first part: work from a copy */
        const char *from;
        if (a.sl.type) {
            CHECK_GOTO(copy_span(r, total, t, &copy, &from), out);
        } else {
            CHECK_GOTO(coll_scratch(a.block, &copy), out);
            copy_bytes(copy, r, a.block);
            from = copy;
        }
        s = from;
    }
    CHECK_GOTO(check_buf(s, a.block), out);
    a.sbuf = s;
    a.rbuf = r;
    a.rcounts = parts;
    a.rdispls = parts + a.size;
    if (a.size == 1 && a.block)
        copy_own(s, total, t, r, total, t, a.block);
    st = run(&a, a.size == 1 || a.block == 0);
out:
    free(parts);
    free(copy);
    return st;
}

/* One side of an alltoallw: arrays present, every type usable, counts and displacements that
   fit; *any = some block has data. */
static int w_side(int P, const size_t counts[], const size_t displs[], const hint_type types[], bool *any)
{
    size_t bytes = 0;
    int st = HINT_SUCCESS;
    *any = false;
    if (counts == NULL || displs == NULL || types == NULL)
        return HINT_ERR_ARG;
    for (int p = 0; p < P && st == HINT_SUCCESS; p++) {
        st = block_bytes(counts[p], types[p], &bytes);
        if (st == HINT_SUCCESS && displs[p] > PTRDIFF_MAX)
            st = HINT_ERR_COUNT;
        *any = *any || bytes > 0;
    }
    return st;
}

/* alltoallw in place: the bytes every receive block touches, copied once to send from. */
static int copy_w_side(const char *r, int P, const size_t counts[], const size_t displs[], const hint_type types[],
                       void **copy, const char **from)
{
    ptrdiff_t lo = PTRDIFF_MAX, hi = PTRDIFF_MIN, a, b;
    for (int p = 0; p < P; p++) {
        if (counts[p] == 0 || dt_span(types[p], counts[p], &a, &b) != HINT_SUCCESS || a == b)
            continue;
        lo = (ptrdiff_t)displs[p] + a < lo ? (ptrdiff_t)displs[p] + a : lo;
        hi = (ptrdiff_t)displs[p] + b > hi ? (ptrdiff_t)displs[p] + b : hi;
    }
    if (lo == PTRDIFF_MAX)
        lo = hi = 0;
    int st;
    CHECK_GOTO(coll_scratch((size_t)(hi - lo), copy), out);
    copy_bytes(*copy, r + lo, (size_t)(hi - lo));
    *from = (const char *)*copy - lo;
out:
    return st;
}

int hint_alltoallw(const void *s, const size_t sc[], const size_t sdispls[], const hint_type st_[], void *r,
                   const size_t rc[], const size_t rdispls[], const hint_type rt_[], hint_group g)
{
    struct coll_args a;
    void *copy = NULL;
    bool in_place = s == HINT_IN_PLACE, rany, sany;
    size_t sb, rb;
    int st;
    CHECK_GOTO(begin(&a, COLL_ALLTOALLW, g), out);
    CHECK_GOTO(w_side(a.size, rc, rdispls, rt_, &rany), out);
    CHECK_GOTO(refuse_if(r == HINT_IN_PLACE || (r == NULL && rany), HINT_ERR_BUFFER), out);
    if (in_place) {
        /* as MPI: the receive counts, displacements and types describe the send side too */
        sc = rc;
        sdispls = rdispls;
        st_ = rt_;
        if (a.size > 1) {
            const char *from;
            CHECK_GOTO(copy_w_side(r, a.size, rc, rdispls, rt_, &copy, &from), out);
            s = from;
        } else {
            s = r;
        }
    }
    CHECK_GOTO(w_side(a.size, sc, sdispls, st_, &sany), out);
    CHECK_GOTO(refuse_if(s == NULL && sany, HINT_ERR_BUFFER), out);
    CHECK_GOTO(block_bytes(sc[a.rank], st_[a.rank], &sb), out);
    CHECK_GOTO(block_bytes(rc[a.rank], rt_[a.rank], &rb), out);
    CHECK_GOTO(refuse_if(sb != rb || (sb && !kinds_match(st_[a.rank], rt_[a.rank])), HINT_ERR_TYPE), out);
    a.sbuf = s;
    a.rbuf = r;
    a.scounts = sc;
    a.sdispls = sdispls;
    a.rcounts = rc;
    a.rdispls = rdispls;
    a.stypes = st_;
    a.rtypes = rt_;
    if (a.size == 1 && !in_place)
        copy_own(a.sbuf + sdispls[0], sc[0], st_[0], a.rbuf + rdispls[0], rc[0], rt_[0], rb);
    st = run(&a, a.size == 1);
out:
    free(copy);
    return st;
}
