/*
 * alltoall shm and allgather shm — small blocks, one synchronisation: each rank copies its P blocks into its own
 * staging area on the shared heap (half e % 2 for call e), publishes e in its flag, waits for
 * every rank's flag e and copies its block out of each rank's staging area. No barrier: the send
 * buffer is free once staged and the receive buffer is only written by its owner. A half is
 * rewritten two calls later, when every reader has set its flag for the call in between, i.e.
 * has finished reading it. For the same reason an area outlives its group: a slow peer may
 * still read the last call's blocks after this rank freed the group, so freed areas wait for
 * hint_finalize, which runs after a fence. Needs the shared heap (staging areas every rank can read), a
 * collective slot, and blocks of at most SHM_STAGE_BLOCK bytes.
 * Cost: 2 copies of P blocks per rank, 1 flag store and P flag loads; no message.
 * allgather shm is the same with one staged block per rank, which every rank copies out.
 * Derived datatypes cost nothing extra: staging packs from the sender's layout and copying out
 * unpacks into the receiver's, each with its own type.
 */
#include <stdint.h>
#include <string.h>

#include "collectives/algs.h"
#include "runtime/heap.h"
#include "runtime/request.h"
#include "runtime/runtime.h"
#include "transport/shm/shm.h"

#define SHM_STAGE_BLOCK 1024 /* bytes per block at most */

struct staging {
    char *area;             /* 2 halves of P blocks of SHM_STAGE_BLOCK, in this rank's heap partition */
    uint64_t epoch;         /* calls made */
    struct staging *next;   /* on the retired list once its group is freed */
};

static struct staging *retired;

/* The group is gone here, but peers may still be reading the last call: keep the area. */
static void staging_retire(void *p)
{
    struct staging *s = p;
    s->next = retired;
    retired = s;
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

bool allgather_staged_ok(const struct coll_args *a) { return alltoall_staged_ok(a); }

bool alltoall_staged_ok(const struct coll_args *a)
{
    /* without a group (hint_info asking about defaults) assume the heap is on, as it is by default */
    return coll_shm_ok(a) && (a->g == NULL || heap.active) && a->block <= SHM_STAGE_BLOCK;
}

/* This rank's staging area, made on first use; its offset is published with the first call's
   flag (the flag's release store covers it). */
static struct staging *staging_of(struct coll_args *a)
{
    hint_group g = a->g;
    if (g->cache[GRP_CACHE_STAGE] == NULL) {
        struct staging *s = calloc(1, sizeof *s);
        if (s == NULL)
            return NULL;
        s->area = heap_alloc(2 * (size_t)a->size * SHM_STAGE_BLOCK, 64, false);
        if (s->area == NULL) {
            free(s);
            return NULL;
        }
        g->cache[GRP_CACHE_STAGE] = s;
        g->cache_free[GRP_CACHE_STAGE] = staging_retire;
        shm_coll_member(rt.shm, g->shm_slot, g->rank)->stage_off = heap_offset(s->area);
    }
    return g->cache[GRP_CACHE_STAGE];
}

struct flags_wait {
    int slot, P;
    uint64_t epoch;
};

static bool all_staged(void *arg)
{
    struct flags_wait *w = arg;
    for (int p = 0; p < w->P; p++)
        if (atomic_load_explicit(&shm_coll_member(rt.shm, w->slot, p)->flag, memory_order_acquire) < w->epoch)
            return false;
    return true;
}

/* Stage (all P blocks, or for allgather the one block) and publish, then wait for everyone's. */
static int stage_and_wait(struct coll_args *a, struct staging *s, bool one_block, char **half_out)
{
    int P = a->size, slot = a->g->shm_slot;
    size_t half = (size_t)P * SHM_STAGE_BLOCK;
    uint64_t e = ++s->epoch;
    char *mine = s->area + (e % 2) * half;
    for (int d = 0; d < (one_block ? 1 : P); d++)
        coll_pack_block(a, d, mine + (size_t)d * SHM_STAGE_BLOCK);
    atomic_store_explicit(&shm_coll_member(rt.shm, slot, a->rank)->flag, e, memory_order_release);
    coll_ring_members(a->g);
    struct flags_wait w = {slot, P, e};
    if (!all_staged(&w))
        rt_wait_until(all_staged, &w);
    *half_out = (char *)(uintptr_t)((e % 2) * half);
    return HINT_SUCCESS;
}

static int staged(struct coll_args *a, bool allgather)
{
    struct staging *s = staging_of(a);
    if (s == NULL)
        return HINT_ERR_NOMEM; /* every rank's partition has room for this at once, or none has */
    char *half;
    stage_and_wait(a, s, allgather, &half);
    int slot = a->g->shm_slot;
    size_t at = (size_t)(uintptr_t)half + (allgather ? 0 : (size_t)a->rank * SHM_STAGE_BLOCK);
    for (int src = 0; src < a->size; src++) {
        const char *theirs = heap_at(shm_coll_member(rt.shm, slot, src)->stage_off) + at;
        coll_unpack_block(a, src, theirs);
    }
    if (coll_has_layout(a))
        coll_count_direct();
    return HINT_SUCCESS;
}

int alltoall_staged(struct coll_args *a) { return staged(a, false); }
int allgather_staged(struct coll_args *a) { return staged(a, true); }
