/*
 * collectives/staging.c — per-rank staging areas on the shared heap for the small-message
 * algorithms that need one synchronisation per call (the staged algorithms of alltoall,
 * allgather, allreduce, reduce, gather, scatter and reduce_scatter_block):
 * each rank copies its data into its own area (area e % STAGE_AREAS for call e), publishes e in
 * its flag, waits for the flags of the ranks it reads (all of them, or for the rooted operations
 * the root's or none) and reads what it needs out of their areas. No barrier: an area is
 * rewritten STAGE_AREAS calls later, once every member has set its flag for a later call, i.e.
 * has finished reading it (coll_stage_begin waits for that when the rank ran ahead). For the
 * same reason an area outlives its group: a slow peer may still read the last call's data after
 * this rank freed the group, so a freed group's area is released once every member has freed the
 * group (its slot is free or taken by a later group), at the latest by hint_finalize, which runs
 * after a fence. The area and its epochs belong to the group, so the
 * operations using it may interleave in any order all ranks agree on. Each area starts with the
 * signature of the call staged in it (coll_signature): a reader whose own call differs returns
 * HINT_ERR_MISMATCH without reading the blocks.
 */
#include <stdint.h>

#include "collectives/algs.h"
#include "collectives/coll_shm.h"
#include "runtime/heap.h"
#include "runtime/request.h"
#include "runtime/runtime.h"

/* Areas per rank: call e uses area e % STAGE_AREAS, so a rank whose call does not wait for the
   others (the non-roots of reduce and gather, the root of scatter) can run that many calls ahead. */
#define STAGE_AREAS 8

struct staging {
    char *area;             /* STAGE_AREAS areas of P blocks of SHM_STAGE_BLOCK, in this rank's heap partition */
    uint64_t epoch;         /* calls made */
    uint64_t seen;          /* every member's flag was at least this */
    int slot;               /* the group's collective slot */
    uint64_t generation;    /* the slot's generation while the group held it */
    struct staging *next;   /* on the retired list once its group is freed */
};

static struct staging *retired;

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
        heap_release(s->area);
        free(s);
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
        heap_release(s->area);
        free(s);
    }
}

/* An area: one line with the call's signature, then P blocks. */
static size_t half_bytes(const struct coll_args *a) { return COLL_CACHE_LINE + (size_t)a->size * SHM_STAGE_BLOCK; }

static char *area_of(const struct staging *s, uint64_t epoch, size_t bytes) { return s->area + (epoch % STAGE_AREAS) * bytes; }

/* This rank's staging area, made on first use; its offset is published with the first call's
   flag (the flag's release store covers it). */
static struct staging *staging_of(struct coll_args *a)
{
    hint_group g = a->g;
    struct coll_owned *o = &coll_group_of(g)->stage;
    if (o->p == NULL) {
        staging_reclaim();
        struct staging *s = calloc(1, sizeof *s);
        if (s == NULL)
            return NULL;
        s->area = heap_alloc(STAGE_AREAS * half_bytes(a), 64, false);
        if (s->area == NULL) {
            free(s);
            return NULL;
        }
        s->slot = coll_group_of(g)->slot;
        s->generation = atomic_load(&coll_shm_slot(coll_group_of(g)->slot)->generation);
        *o = (struct coll_owned){s, staging_retire};
        coll_shm_member(coll_group_of(g)->slot, g->rank)->stage_off = heap_offset(s->area);
    }
    return o->p;
}


struct flags_wait {
    int slot, first, last; /* members first .. last - 1 */
    uint64_t epoch;
};

static bool all_staged(void *arg)
{
    struct flags_wait *w = arg;
    for (int p = w->first; p < w->last; p++)
        if (atomic_load_explicit(&coll_shm_member(w->slot, p)->flag, memory_order_acquire) < w->epoch)
            return false;
    return true;
}

static void wait_flags(const struct coll_args *a, int first, int last, uint64_t epoch)
{
    struct flags_wait w = {coll_group_of(a->g)->slot, first, last, epoch};
    if (!all_staged(&w))
        rt_wait_until(all_staged, &w);
}

char *coll_stage_begin(struct coll_args *a)
{
    struct staging *s = staging_of(a);
    if (s == NULL)
        return NULL; /* every rank's partition has room for this at once, or none has */
    uint64_t e = ++s->epoch;
    /* The area about to be rewritten is call e-AREAS's: every member has started the call after
       it once its flag says e-AREAS+1, so it has read all it wanted of it. The all-to-all
       operations waited for more in the last call already; the rooted ones, whose non-roots (or
       root) leave without waiting, wait here when they run that far ahead. */
    if (s->seen + (STAGE_AREAS - 1) < e) {
        wait_flags(a, 0, a->size, e - (STAGE_AREAS - 1));
        s->seen = e - (STAGE_AREAS - 1);
    }
    char *area = area_of(s, e, half_bytes(a));
    *(uint64_t *)area = coll_signature(a); /* published with the flag */
    return area + COLL_CACHE_LINE;
}

/* Members first .. last - 1 staged this call with the signature this rank's call has. */
static int same_calls(const struct coll_args *a, const struct staging *s, int first, int last)
{
    uint64_t mine = *(const uint64_t *)area_of(s, s->epoch, half_bytes(a));
    for (int p = first; p < last; p++)
        if (*(const uint64_t *)(coll_stage_half(a, p) - COLL_CACHE_LINE) != mine)
            return coll_mismatch(a, "a member staged a call with another root, size or op");
    return HINT_SUCCESS;
}

void coll_stage_post(struct coll_args *a)
{
    struct staging *s = coll_group_of(a->g)->stage.p;
    atomic_store_explicit(&coll_shm_member(coll_group_of(a->g)->slot, a->rank)->flag, s->epoch, memory_order_release);
    coll_ring_members(a->g);
}

int coll_stage_wait(struct coll_args *a, int p)
{
    const struct staging *s = coll_group_of(a->g)->stage.p;
    wait_flags(a, p, p + 1, s->epoch);
    return same_calls(a, s, p, p + 1);
}

int coll_stage_wait_all(struct coll_args *a)
{
    struct staging *s = coll_group_of(a->g)->stage.p;
    wait_flags(a, 0, a->size, s->epoch);
    s->seen = s->epoch;
    return same_calls(a, s, 0, a->size);
}

int coll_stage_publish(struct coll_args *a)
{
    coll_stage_post(a);
    return coll_stage_wait_all(a);
}

const char *coll_stage_half(const struct coll_args *a, int p)
{
    const struct staging *s = coll_group_of(a->g)->stage.p;
    const char *base = heap_at(coll_shm_member(coll_group_of(a->g)->slot, p)->stage_off);
    return base + (s->epoch % STAGE_AREAS) * half_bytes(a) + COLL_CACHE_LINE;
}
