/*
 * barrier shm — every rank adds one to the group's arrival counter in the node segment; the
 * rank that completes barrier e (counter == e * P) publishes e in the release word and rings
 * the others, who wait (spin, yield, sleep) for it. Needs all ranks on one node and a
 * collective slot for the group. Cost: P atomic increments on one line + one release:
 * ~2 cache-line transfers per rank instead of log2(P) message round trips.
 */
#include "collectives/algs.h"
#include "collectives/coll_shm.h"
#include "runtime/heap.h"
#include "runtime/request.h"
#include "runtime/runtime.h"
#include "runtime/transport.h"

bool coll_shm_ok(const struct coll_args *a)
{
    if (a->g == NULL) /* hint_info asking about a single-node group in general */
        return true;
    /* a slot is only ever handed to a group on one node; the shape says so on its own too */
    int nodes, ppn;
    coll_shape(a, &nodes, &ppn);
    return nodes == 1 && coll_group_of(a->g)->slot >= 0;
}

bool coll_heap_ok(const struct coll_args *a)
{
    /* without a group (hint_info asking about defaults) assume the heap is on, as it is by default */
    return coll_shm_ok(a) && (a->g == NULL || heap.active);
}

struct release_wait {
    struct coll_shm_slot *slot;
    uint64_t epoch;
};

static bool released(void *arg)
{
    struct release_wait *w = arg;
    return atomic_load_explicit(&w->slot->release, memory_order_acquire) >= w->epoch;
}

/* Wake every member of g but this rank that sleeps (their waits read shared words): one fence for
   all of them, then a look at each one's own line (runtime/transport.h rt_wake_others). */
void coll_ring_members(hint_group g)
{
    if (g->size == 2) /* one member to wake: the one fence either way, and fewer calls */
        rt_wake(g->world[1 - g->rank]);
    else
        rt_wake_others(g->world, g->size, g->rank);
}

int barrier_shm(struct coll_args *a)
{
    struct coll_group *cg = coll_group_of(a->g);
    struct coll_shm_slot *slot = coll_shm_slot(cg->slot);
    uint64_t e = ++cg->bar_epoch;
    uint64_t v = atomic_fetch_add_explicit(&slot->arrive, 1, memory_order_acq_rel) + 1;
    if (v == e * (uint64_t)a->size) {
        atomic_store_explicit(&slot->release, e, memory_order_release);
        coll_ring_members(a->g);
        return HINT_SUCCESS;
    }
    struct release_wait w = {slot, e};
    rt_wait_until(released, &w);
    return HINT_SUCCESS;
}
