/*
 * collectives/staging.c — per-rank staging areas on the shared heap for the small-message
 * algorithms that need one synchronisation per call (the staged algorithms of alltoall,
 * allgather, allreduce, reduce, gather, scatter and reduce_scatter_block):
 * each rank copies its data for call e into its own head e % STAGE_HEADS (and, beyond
 * STAGE_HEAD_BYTES, area e % STAGE_AREAS), publishes e in its head, waits for the flags of the ranks it reads (all of them, or for the rooted operations
 * the root's or none) and reads what it needs out of their areas. No barrier: a head (area) is
 * rewritten STAGE_HEADS (STAGE_AREAS) calls later, once every member has set its flag for a later call, i.e.
 * has finished reading it (coll_stage_begin waits for that when the rank ran ahead). For the
 * same reason an area outlives its group: a slow peer may still read the last call's data after
 * this rank freed the group, so a freed group's area is released once every member has freed the
 * group (its slot is free or taken by a later group), at the latest by hint_finalize, which runs
 * after a fence. The area and its epochs belong to the group, so the
 * operations using it may interleave in any order all ranks agree on. Each area starts with the
 * signature of the call staged in it (coll_signature): a reader whose own call differs returns
 * HINT_ERR_MISMATCH without reading the blocks.
 * One line per member per call (issue 18): a call's head (head e % STAGE_HEADS for call e) holds
 * the signature, the call's number once its data is staged (what readers poll, instead of a
 * flag on another line) and, when the call's data fits the rest of the head (compact: up to
 * STAGE_HEAD_BYTES - 16 bytes: a reduce or allreduce of 2 KiB, an alltoall of P * 8 bytes up to
 * P = 262), the data itself right after them, so an 8-byte call is one line transfer where it
 * took three (flag, signature, block). The member's flag in the slot says only that its area
 * exists (set once, with its offset), so the hot path never reads it.
 * Deep for small calls (issue 18, oversubscribed): the heads form a ring of STAGE_HEADS, data
 * of up to one block (coll_stage_block) a ring of STAGE_AREAS * P blocks of the areas (block_ring:
 * as deep as the heads' at P=8, since issue 18 item 4), bigger data a ring of STAGE_AREAS, so a
 * compact call needs only its head free and a rank
 * whose call does not wait for the others (the non-roots of reduce and gather, the root of
 * scatter) runs up to STAGE_HEADS - 1 small calls ahead (when the node's ranks outnumber its
 * cores; else the ring has STAGE_AREAS heads, the cache footprint of before). There, each
 * wait for a rank that is not running costs a context switch; with 8 areas an 8-byte reduce at
 * P=8 made 0.41 sched_yields per call and rank, with 64 heads 0.03 (Open MPI: 0.02).
 * A member whose partition has no room for its areas (heap_alloc fails on it alone) must not
 * leave its peers waiting for a call it never stages: it publishes AREA_MISSING | e in its flag
 * (and rings them), and a peer waiting for its call e, or a later one, returns HINT_ERR_NOMEM as it
 * does. The member keeps counting calls and tries again at its next call; the heads of a late
 * area say "no call staged here" (signature 0) for every call before it, so a reader of one of
 * those that comes late still sees the failure, never another call's data.
 */
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/algs.h"
#include "collectives/coll_shm.h"
#include "runtime/heap.h"
#include "runtime/request.h"
#include "runtime/runtime.h"
#include "runtime/trace.h"
#include "runtime/transport.h"

/* Heads and block areas per rank: call e uses head e % STAGE_HEADS and, unless compact, area
   e % STAGE_AREAS (one block of it when its data fits one: block_of), so a rank whose call does
   not wait for the others can run STAGE_HEADS - 1 compact calls, min(STAGE_HEADS,
   STAGE_AREAS * P) - 1 one-block calls or STAGE_AREAS - 1 others ahead. Memory per member and group:
   STAGE_HEADS * STAGE_HEAD_BYTES (132 KiB; 8 heads, 16.5 KiB, when the ranks fit the cores) +
   STAGE_AREAS * P * coll_stage_block(P). */
#define STAGE_AREAS 8
#define STAGE_HEADS 64 /* when the node's ranks outnumber its cores; else STAGE_AREAS (see heads_for) */
#define STAGE_HEAD_BYTES (COLL_CACHE_LINE + 2048) /* 2 KiB of data and the line it starts in */

/* A member's flag in the slot (struct coll_shm_member): 0 until it has tried to make its areas,
   AREA_READY once they exist (at stage_off, for the rest of the group's life), AREA_MISSING | e
   while it has none, e being its last call that found no room. */
#define AREA_READY ((uint64_t)1)
#define AREA_MISSING ((uint64_t)1 << 63)
#define AREA_NEVER (AREA_MISSING | (AREA_MISSING - 1)) /* not even its private bookkeeping: every call */

/* A call's head: its first line is what readers poll. */
struct stage_head {
    uint64_t sig;            /* stage_sig of the call staged here; 0: none (the calls before a late area) */
    _Atomic uint64_t epoch;  /* that call's number, stored once its data is in place */
    char data[STAGE_HEAD_BYTES - 16]; /* a compact call's data */
};
static_assert(sizeof(struct stage_head) == STAGE_HEAD_BYTES, "a head is whole lines");
static_assert(STAGE_HEADS % STAGE_AREAS == 0 && STAGE_HEADS >= STAGE_AREAS, "heads cover the areas");
/* Both rings are powers of two: a head is found with a mask, not a division (a 64-bit div takes
   14-46 cycles on this machine's EPYC, and a staged call found 6-10 heads: its own, each peer's
   while polling and checking signatures). */
static_assert((STAGE_HEADS & (STAGE_HEADS - 1)) == 0 && (STAGE_AREAS & (STAGE_AREAS - 1)) == 0, "rings of 2^k");

/* The deep ring only pays where a waited-for rank may not be running: when the ranks fit the
   cores every waiter spins and the shallow ring keeps a rank's staged calls in 8 heads (its
   cache) instead of 64. rt.boot.oversubscribed is the node's (the launcher's HINT_OVERSUBSCRIBED,
   or this node's ranks against its cores), so every member of a group, all on one node, agrees. */
static int heads_for(void) { return rt.boot.oversubscribed ? STAGE_HEADS : STAGE_AREAS; }

struct staging {
    char *area;             /* STAGE_HEADS heads, then STAGE_AREAS areas of P blocks of coll_stage_block(P), in this rank's heap partition; NULL until made */
    char **peer;            /* every member's areas (this rank's too), learnt once each has made them */
    bool compact;           /* this call's data sits in its head */
    bool one_block;         /* ... else in one block of the areas (block_of), else in an area */
    size_t block_off;       /* a one-block call's block in its area, bytes (block_of) */
    bool two_lines;         /* ... and reaches into the head's second line */
    int heads;              /* heads in the ring: heads_for() when made */
    uint64_t head_mask;     /* heads - 1 */
    uint64_t epoch;         /* calls made */
    uint64_t seen;          /* every member's flag was at least this */
    uint64_t last_area;     /* the last call staged in a whole area (0: none) */
    uint64_t near_after;    /* coll_stage_begin tries the half-ring pass again from this call on */
    int slot;               /* the group's collective slot */
    uint64_t generation;    /* the slot's generation while the group held it */
    unsigned attempts;      /* tries to make the areas (HINT_TEST_STAGE_NOMEM) */
    struct staging *next;   /* on the retired list once its group is freed */
};

static struct staging *retired;

static void staging_free(struct staging *s)
{
    heap_release(s->area);
    free(s->peer);
    free(s);
}

/* Once every member has freed the group (the slot is free, or held by a later group), nobody
   reads the area any more. */
static bool staging_unread(const struct staging *s)
{
    const struct coll_shm_slot *sl = coll_shm_slot(s->slot);
    return atomic_load(&sl->used) == 0 || atomic_load(&sl->generation) != s->generation;
}

/* Release the retired areas that no peer can read any more. */
static void staging_reclaim(void)
{
    for (struct staging **at = &retired; *at;) {
        struct staging *s = *at;
        if (!staging_unread(s)) {
            at = &s->next;
            continue;
        }
        *at = s->next;
        staging_free(s);
    }
}

/* The group is gone here, but peers may still be reading the last call: keep the area until
   they have all freed the group too. */
static void staging_retire(void *p)
{
    struct staging *s = p;
    s->next = retired;
    retired = s;
    staging_reclaim();
}

void coll_staging_release_all(void)
{
    while (retired) {
        struct staging *s = retired;
        retired = s->next;
        staging_free(s);
    }
}

/* An area: P blocks. */
static size_t area_bytes(const struct coll_args *a) { return (size_t)a->size * coll_stage_block(a->size); }

static struct stage_head *head_of(const struct staging *s, const char *areas, uint64_t epoch)
{
    return (struct stage_head *)(areas + (epoch & s->head_mask) * STAGE_HEAD_BYTES);
}

/* block_of: where the ranks outnumber the cores, a rooted call (runs_ahead) whose data fits one
   block of an area (bcast, reduce, gather up to 8 KiB at up to 8 ranks) takes block
   e / STAGE_AREAS % P of area e % STAGE_AREAS: such calls form a ring of STAGE_AREAS * P blocks
   (as deep as the heads' at P=8), so a rank that does not wait runs as many of them ahead as
   compact calls, not 7. Issue 18 item 4: through the 8 areas, bcast staged at P=4 made 0.55
   context switches per call at 2112 B against 0.17 in its heads at 2048, and lost to shm at
   every size past them. Call e's block lies in the area that call e would take whole, so a
   whole-area call and a one-block call over the same memory are a multiple of STAGE_AREAS calls
   apart: each ring's own rule (members past e - 7 for an area, past e - (ring - 1) for a block)
   covers the other's calls too, except that a one-block call while whole-area calls are in its
   ring's reach waits as an area call does (stage_ahead). */
static uint64_t block_ring(const struct coll_args *a, const struct staging *s)
{
    uint64_t blocks = (uint64_t)STAGE_AREAS * (uint64_t)a->size;
    return blocks < (uint64_t)s->heads ? blocks : (uint64_t)s->heads;
}

/* The rooted operations, whose non-roots (reduce, gather) or root (bcast, scatter) leave without
   waiting: only they gain from the deep ring of blocks, and only where the heads' ring is deep
   (oversubscribed); the others keep the 8 areas' footprint in the caches (8 blocks, not 8 P). */
static bool runs_ahead(const struct coll_args *a)
{
    return a->op_id == COLL_BCAST || a->op_id == COLL_REDUCE || a->op_id == COLL_GATHER || a->op_id == COLL_SCATTER;
}

/* Call e's block in its area, bytes: once per call (a division by P), not per member read. */
static size_t block_of(const struct coll_args *a, uint64_t e)
{
    return (size_t)(e / STAGE_AREAS % (uint64_t)a->size) * coll_stage_block(a->size);
}

/* Where a member's data for this rank's current call (epoch) starts: in its head for a compact
   call, else in an area (one block of it for a one-block call). */
static const char *data_of(const struct coll_args *a, const struct staging *s, const char *areas, uint64_t epoch)
{
    if (s->compact)
        return head_of(s, areas, epoch)->data;
    const char *area = areas + (size_t)s->heads * STAGE_HEAD_BYTES + (epoch % STAGE_AREAS) * area_bytes(a);
    return s->one_block ? area + s->block_off : area;
}

/* How far ahead of the slowest member call e may be staged: its ring (the heads'; the blocks' or
   the areas' for data beyond its head) less one; and the call every member must have posted,
   at least (floor). */
static uint64_t stage_ahead(const struct coll_args *a, const struct staging *s, uint64_t e, uint64_t *floor)
{
    uint64_t ring = s->compact ? (uint64_t)s->heads : s->one_block ? block_ring(a, s) : STAGE_AREAS;
    *floor = e >= ring ? e - (ring - 1) : 0;
    if (s->one_block && s->last_area != 0 && s->last_area + ring > e && e >= STAGE_AREAS &&
        *floor < e - (STAGE_AREAS - 1))
        *floor = e - (STAGE_AREAS - 1); /* a whole-area call within reach: its rule */
    return ring - 1;
}

bool coll_test_hook_fires(struct coll_test_hook *h, const struct coll_args *a, unsigned *tries)
{
    if (h->rank == -2) {
        const char *v = rt_cfg_str(h->var);
        h->rank = -1;
        h->tries = 1;
        if (v != NULL && *v != '\0' && sscanf(v, "%d:%u", &h->rank, &h->tries) < 1)
            h->rank = -1;
    }
    return h->rank >= 0 && a->g->world[a->rank] == h->rank && (*tries)++ < h->tries;
}

/* HINT_TEST_STAGE_NOMEM=RANK[:N]: world rank RANK finds no room for its staging areas at its
   first N tries (1 if N is not given) on each group, as when its partition is full. */
static bool test_refuses(const struct coll_args *a, struct staging *s)
{
    static struct coll_test_hook hook = {"HINT_TEST_STAGE_NOMEM", -2, 0};
    return coll_test_hook_fires(&hook, a, &s->attempts);
}

/* A member that could not stage its call says so, and wakes the peers that may wait for it. */
static void say_missing(struct coll_args *a, int slot, uint64_t flag)
{
    atomic_store_explicit(&coll_shm_member(slot, a->rank)->flag, flag, memory_order_release);
    coll_ring_members(a->g);
}

/* This rank's bookkeeping of the group's staging, made on first use (the areas come later:
   make_areas). Private memory; should even that fail, the group's staged calls fail on every
   member from now on (AREA_NEVER), rather than count calls from 1 again later. */
static struct staging no_staging;

static struct staging *staging_of(struct coll_args *a)
{
    hint_group g = a->g;
    struct coll_owned *o = &coll_group_of(g)->stage;
    if (o->p == NULL) {
        staging_reclaim();
        struct staging *s = calloc(1, sizeof *s);
        if (s != NULL)
            s->peer = calloc((size_t)a->size, sizeof *s->peer);
        if (s == NULL || s->peer == NULL) {
            free(s);
            say_missing(a, coll_group_of(g)->slot, AREA_NEVER);
            *o = (struct coll_owned){&no_staging, NULL};
            return o->p;
        }
        s->heads = heads_for();
        s->head_mask = (uint64_t)s->heads - 1;
        s->slot = coll_group_of(g)->slot;
        s->generation = atomic_load(&coll_shm_slot(coll_group_of(g)->slot)->generation);
        *o = (struct coll_owned){s, staging_retire};
    }
    return o->p;
}

/* This rank's areas, for its call e and on: heads whose numbers say every call before e is
   staged, with no signature (it staged none of them); then its offset and flag (release) say
   they exist. No room: the flag says AREA_MISSING | e, and the call fails. */
static __attribute__((noinline)) bool make_areas(struct coll_args *a, struct staging *s, uint64_t e)
{
    if (s == &no_staging)
        return false; /* said so for good (staging_of) */
    char *area = test_refuses(a, s) ? NULL
                 : heap_alloc((size_t)s->heads * STAGE_HEAD_BYTES + STAGE_AREAS * area_bytes(a), 64, false);
    if (area == NULL) {
        say_missing(a, s->slot, AREA_MISSING | e);
        return false;
    }
    for (uint64_t k = 0; k < (uint64_t)s->heads; k++) {
        struct stage_head *h = head_of(s, area, k);
        h->sig = 0;
        atomic_store_explicit(&h->epoch, e - 1, memory_order_relaxed);
    }
    s->area = s->peer[a->rank] = area;
    struct coll_shm_member *me = coll_shm_member(s->slot, a->rank);
    me->stage_off = heap_offset(area);
    atomic_store_explicit(&me->flag, AREA_READY, memory_order_release);
    return true;
}

/* Member p's areas once it has made them, else NULL. */
static const char *peer_areas(struct staging *s, int p)
{
    if (s->peer[p] == NULL) {
        const struct coll_shm_member *m = coll_shm_member(s->slot, p);
        if (atomic_load_explicit(&m->flag, memory_order_acquire) == AREA_READY)
            s->peer[p] = heap_at(m->stage_off);
    }
    return s->peer[p];
}


struct flags_wait {
    struct staging *s;
    int first, last; /* members first .. last - 1 */
    uint64_t epoch;
    bool missing;    /* some member has no areas for call `epoch` */
};

/* Member p, without areas, had none at its call w->epoch or a later one (so it has started that
   call, and reads nothing of earlier ones): then w->missing. Out of line: the hot path only
   reaches it while a member has no areas. */
static __attribute__((noinline)) bool missing_at(struct flags_wait *w, int p)
{
    uint64_t f = atomic_load_explicit(&coll_shm_member(w->s->slot, p)->flag, memory_order_acquire);
    bool missing = (f & AREA_MISSING) && (f & ~AREA_MISSING) >= w->epoch;
    w->missing |= missing;
    return missing;
}

/* Head e % STAGE_HEADS of a member holds e, e + STAGE_HEADS, ... in turn, and no member gets
   STAGE_HEADS calls ahead of another (coll_stage_begin), so a number >= e there means the member
   has staged call e, or has started it without areas. */
static inline bool member_staged(struct flags_wait *w, int p)
{
    const char *areas = peer_areas(w->s, p);
    if (areas != NULL)
        return atomic_load_explicit(&head_of(w->s, areas, w->epoch)->epoch, memory_order_acquire) >= w->epoch;
    return missing_at(w, p);
}

static bool all_staged(void *arg)
{
    struct flags_wait *w = arg;
    for (int p = w->first; p < w->last; p++)
        if (!member_staged(w, p))
            return false;
    return true;
}

/* The members of a list (negative entries skipped, repeats allowed) that have staged call epoch
   (or started it without areas), from `next` on: members found ready are not polled again (a
   call's number only grows). */
struct list_wait {
    struct flags_wait f; /* its s, epoch and missing */
    const int *members;
    int n, next;
};

static bool listed_staged(void *arg)
{
    struct list_wait *w = arg;
    for (; w->next < w->n; w->next++) {
        int p = w->members[w->next];
        if (p >= 0 && !member_staged(&w->f, p))
            return false;
    }
    return true;
}

/* Oversubscribed (no spin budget) and nothing else in flight: yield between looks at the members'
   lines, for as long as rt_wait_until would yield, without its pass between two yields (progress
   hooks, the doorbell, the clock: about 800 instructions per yield at P=8 on a 2-D cart, 8 B
   neighbor_allgather, more than the rest of the call's 1140) and the lines it touches, which a
   rank pulls in again after every hand-off (issue 19 item 6: the cost per hand-off is what is
   left at 8-64 B oversubscribed). The clock is read every 8 yields; the time counts against
   rt_wait_until's yielding (rt_wait_spun), so a wait that goes on sleeps as it did. */
static bool stage_yield(bool (*done)(void *), void *arg)
{
    long budget = rt_wait_yield_ns();
    if (budget <= 0)
        return false;
    long start = trace_now_ns();
    for (unsigned i = 1;; i++) {
        sched_yield();
        if (done(arg))
            return true;
        if (i % 8 == 0 && trace_now_ns() - start >= budget)
            break;
    }
    rt_wait_spun(trace_now_ns() - start);
    return false;
}

/* When the ranks fit the cores (a spin budget) and nothing else is in flight (rt_idle: no
   receive posted, no message unexpected, no send pending, so no progress pass is owed to
   anyone), poll the members' lines themselves before rt_wait_until, as the p2p fast path polls
   its cell (runtime/p2p.c recv_now): a pass of rt_wait_until's loop also runs the progress
   hooks, reads the clock and the doorbell, ~100 instructions and a clock read between two looks
   at the line, so an arrival waited half of that on average before it was seen (issue 18: the
   8-64 B staged calls at P=2). The clock is read every 32 polls; the time spun counts against
   rt_wait_until's spin (rt_wait_spun). Without a spin budget (oversubscribed): stage_yield.
   true: done. Out of line: only a call that has to wait comes here. */
static __attribute__((noinline)) bool stage_spin(bool (*done)(void *), void *arg)
{
    long budget = rt_wait_spin_ns();
    if (!rt_idle())
        return false;
    if (budget <= 0) /* no spin; yield per look only where ranks outnumber the cores (rt_wait_until's rule) */
        return rt.boot.oversubscribed && stage_yield(done, arg);
    long start = trace_now_ns();
    for (unsigned i = 1;; i++) {
        rt_cpu_relax();
        if (done(arg))
            return true;
        if (i % 32 == 0 && trace_now_ns() - start >= budget)
            break;
    }
    rt_wait_spun(trace_now_ns() - start);
    return false;
}

bool coll_spin(bool (*done)(void *), void *arg) { return stage_spin(done, arg); }

/* HINT_ERR_NOMEM when one of the members had no areas for the call. Inline: the ahead wait of
   coll_stage_begin runs in every call of a rank that does not wait otherwise. */
static inline __attribute__((always_inline)) int wait_flags(const struct coll_args *a, int first, int last, uint64_t epoch)
{
    struct flags_wait w = {coll_group_of(a->g)->stage.p, first, last, epoch, false};
    if (!all_staged(&w) && !stage_spin(all_staged, &w))
        rt_wait_until(all_staged, &w);
    return w.missing ? HINT_ERR_NOMEM : HINT_SUCCESS;
}

/* What a head's signature holds for a staged call: never 0, which says "none staged". */
static uint64_t stage_sig(const struct coll_args *a) { return coll_signature(a) | 1; }

size_t coll_stage_stride(const struct coll_args *a)
{
    size_t b = (a->block + 7) & ~(size_t)7;
    return (size_t)a->size * b <= sizeof((struct stage_head *)0)->data ? b : (a->block + 63) & ~(size_t)63;
}

char *coll_stage_begin(struct coll_args *a, size_t bytes)
{
    struct staging *s = staging_of(a);
    uint64_t e = ++s->epoch;
    if (s->area == NULL && !make_areas(a, s, e))
        return NULL; /* the members that wait for this call see the flag and fail too */
    struct stage_head *h = head_of(s, s->area, e);
    s->compact = bytes <= sizeof h->data;
    s->one_block = !s->compact && bytes <= coll_stage_block(a->size) && s->heads > STAGE_AREAS && runs_ahead(a);
    if (s->one_block)
        s->block_off = block_of(a, e);
    s->two_lines = s->compact && offsetof(struct stage_head, data) + bytes > COLL_CACHE_LINE;
    /* The head about to be rewritten is call e-HEADS's, the area (if any) call e-AREAS's or older:
       every member has started the call after it once its number says e-HEADS+1 (e-AREAS+1), so
       it has read all it wanted of it. The all-to-all operations waited for more in the last call
       already; the rooted ones, whose non-roots (or root) leave without waiting, wait here when
       they run that far ahead. */
    uint64_t floor, ahead = stage_ahead(a, s, e, &floor);
    if (s->seen < floor) {
        /* In the deep ring (oversubscribed), members within half of it (all of them, usually,
           where every rank waits for others: the neighbourhood operations) spare the next
           ahead / 2 calls this pass over every member's line; else the wait needed, and no such
           try for ahead / 2 calls (a rooted operation's non-root that runs far ahead would fail
           it every call). The shallow ring's calls are as before. */
        uint64_t half = e - ahead / 2 > floor ? e - ahead / 2 : floor;
        struct flags_wait near = {s, 0, a->size, half, false};
        if (ahead > STAGE_AREAS && e >= s->near_after && all_staged(&near)) {
            s->seen = half;
        } else {
            /* The shallow ring (the ranks fit the cores, so the wait spins): wait until every member
               is within half of it, not just out of the head about to be rewritten, so the next
               ahead / 2 calls do not look. A rank that runs ahead (reduce's non-roots) then
               reads the others' lines once in ahead / 2 + 1 calls instead of every call, and
               most of their stores go to heads it has not pulled into its cache (issue 18:
               reduce 8-64 B at P=2, where the root's every post paid for taking its next head
               back from the non-root polling it). This rank has posted every call before e, so
               every member reaches e - ahead / 2 without it, as it reaches e - ahead. The deep
               ring (oversubscribed) waits as before: each wait there may cost a hand-off.
               A member without areas reads nothing. A post may wake only its readers
               (coll_stage_post_to): while this rank waits, the slot's count says "wake all"
               (Dekker with the post: count, fence, poll; the post stores, fences, reads it). */
            uint64_t need = s->heads > STAGE_AREAS ? floor : half;
            struct flags_wait w = {s, 0, a->size, need, false};
            if (!all_staged(&w)) {
                _Atomic uint32_t *waiting = &coll_shm_slot(s->slot)->stage_ahead;
                atomic_fetch_add_explicit(waiting, 1, memory_order_seq_cst);
                atomic_thread_fence(memory_order_seq_cst);
                if (!stage_spin(all_staged, &w))
                    rt_wait_until(all_staged, &w);
                atomic_fetch_sub_explicit(waiting, 1, memory_order_release);
            }
            s->seen = need;
            s->near_after = e + ahead / 2;
        }
    }
    if (!s->compact && !s->one_block)
        s->last_area = e;
    h->sig = stage_sig(a); /* published with the call's number */
    return (char *)data_of(a, s, s->area, e);
}

/* The call as failed: numbered as any (so this rank's calls stay in step with its peers'), its head
   without a signature, which its readers take for HINT_ERR_NOMEM (same_calls), as they take a
   missing area's flag; every member rung, since the caller may not know its readers. */
void coll_stage_fail(struct coll_args *a)
{
    if (coll_stage_begin(a, 0) == NULL)
        return; /* no areas either: the flag says so (make_areas) */
    struct staging *s = coll_group_of(a->g)->stage.p;
    head_of(s, s->area, s->epoch)->sig = 0;
    coll_stage_post(a);
}

/* Members first .. last - 1 staged this call with the signature this rank's call has (the
   signature decides the size, so also whether the call is compact). A head without one is of a
   call its member had no areas for (they came later). */
static inline __attribute__((always_inline)) int same_calls(const struct coll_args *a, struct staging *s, int first, int last)
{
    uint64_t mine = head_of(s, s->area, s->epoch)->sig;
    for (int p = first; p < last; p++) {
        uint64_t theirs = head_of(s, s->peer[p], s->epoch)->sig;
        if (theirs != mine) /* never 0 (stage_sig) */
            return theirs == 0 ? HINT_ERR_NOMEM : coll_mismatch(a, "a member staged a call with another root, size or op");
    }
    return HINT_SUCCESS;
}

void coll_stage_post(struct coll_args *a)
{
    struct staging *s = coll_group_of(a->g)->stage.p;
    atomic_store_explicit(&head_of(s, s->area, s->epoch)->epoch, s->epoch, memory_order_release);
    coll_ring_members(a->g);
}

void coll_stage_post_to(struct coll_args *a, const int *world, int n)
{
    struct staging *s = coll_group_of(a->g)->stage.p;
    atomic_store_explicit(&head_of(s, s->area, s->epoch)->epoch, s->epoch, memory_order_release);
    atomic_thread_fence(memory_order_seq_cst); /* the number stored before the count is read */
    if (atomic_load_explicit(&coll_shm_slot(s->slot)->stage_ahead, memory_order_relaxed) != 0) {
        coll_ring_members(a->g);
        return;
    }
    /* one more fence for all of them (the transport's wake_others), not one per rt_wake */
    if (n == 1)
        rt_wake(world[0]);
    else if (n > 1)
        rt_wake_others(world, n, -1);
}

int coll_stage_wait(struct coll_args *a, int p)
{
    struct staging *s = coll_group_of(a->g)->stage.p;
    int st = wait_flags(a, p, p + 1, s->epoch);
    return st != HINT_SUCCESS ? st : same_calls(a, s, p, p + 1);
}

int coll_stage_wait_list(struct coll_args *a, const int *members, int n)
{
    struct staging *s = coll_group_of(a->g)->stage.p;
    struct list_wait w = {{s, 0, 0, s->epoch, false}, members, n, 0};
    if (!listed_staged(&w) && !stage_spin(listed_staged, &w))
        rt_wait_until(listed_staged, &w);
    if (w.f.missing)
        return HINT_ERR_NOMEM;
    for (int k = 0; k < n; k++) {
        int st = members[k] >= 0 ? same_calls(a, s, members[k], members[k] + 1) : HINT_SUCCESS;
        if (st != HINT_SUCCESS)
            return st;
    }
    return HINT_SUCCESS;
}

/* Ask for the members' heads of the next call now (a prefetch, which waits for nothing): where
   they run ahead (reduce's and gather's non-roots) the line is written already and arrives while
   this rank returns and makes its next call, instead of as a miss in that call; where they do
   not, it is the line this rank read HEADS calls ago, still in its cache, and the prefetch does
   nothing. The second line too when this call's data reached it. The shallow ring only (the
   ranks fit the cores): in the deep one the line read HEADS calls ago may be gone, and a stale
   copy pulled in would cost its writer an invalidation. */
static inline void prefetch_next(const struct coll_args *a, const struct staging *s)
{
    if (s->heads != STAGE_AREAS)
        return;
    for (int p = 0; p < a->size; p++) {
        if (p == a->rank)
            continue;
        const char *h = (const char *)head_of(s, s->peer[p], s->epoch + 1);
        __builtin_prefetch(h);
        if (s->two_lines)
            __builtin_prefetch(h + COLL_CACHE_LINE);
    }
}

int coll_stage_wait_all(struct coll_args *a)
{
    struct staging *s = coll_group_of(a->g)->stage.p;
    int st = wait_flags(a, 0, a->size, s->epoch);
    s->seen = s->epoch; /* each member has staged this call or started it without areas */
    if (st != HINT_SUCCESS || (st = same_calls(a, s, 0, a->size)) != HINT_SUCCESS)
        return st;
    prefetch_next(a, s);
    return HINT_SUCCESS;
}

int coll_stage_publish(struct coll_args *a)
{
    coll_stage_post(a);
    return coll_stage_wait_all(a);
}

const char *coll_stage_half(const struct coll_args *a, int p)
{
    const struct staging *s = coll_group_of(a->g)->stage.p;
    return data_of(a, s, s->peer[p], s->epoch);
}

char *const *coll_stage_peers(const struct coll_args *a, size_t *off)
{
    const struct staging *s = coll_group_of(a->g)->stage.p;
    *off = (size_t)(data_of(a, s, s->area, s->epoch) - s->area);
    return s->peer;
}
