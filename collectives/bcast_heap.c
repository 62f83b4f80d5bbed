/*
 * bcast heap — large messages over the shared heap: the root publishes the heap offset of its
 * buffer, a barrier, every other rank copies the message straight out of the root's buffer
 * (into its own layout when its datatype is derived), a barrier before the root may reuse it.
 * One copy per receiver, all in parallel, against bcast shm's copy into and out of the shared
 * chunks. When the root's buffer is off the heap, or derived (its pieces are not published),
 * every rank sees it in the published offset and the call runs bcast shm instead, after a second
 * barrier (coll_heap_fallback): its root never waits, so it must not publish again before all
 * have read.
 * Cost: 2 barriers + n/bandwidth per receiver.
 */
#include <stdint.h>

#include "collectives/algs.h"
#include "collectives/coll_shm.h"
#include "datatype/datatype.h"
#include "runtime/heap.h"
#include "runtime/runtime.h"


/* The root's buffer as a heap offset; UINT64_MAX (derived, or off the heap) sends everyone to
   bcast shm. */
static uint64_t root_offset(const struct coll_args *a)
{
    return a->rl.type != NULL ? UINT64_MAX : heap_span(a->rbuf, a->block);
}

/* The message from the root's bytes into this rank's buffer, in its own layout. */
static void copy_in(const struct coll_args *a, const char *src)
{
    size_t done;
    if (a->rl.type == NULL)
        memcpy(a->rbuf, src, a->block);
    else
        dt_unpack_range_rep(src, a->block, 0, a->rbuf, a->rl.count, a->rl.type, &done, DT_REP_AUTO);
}

int bcast_heap(struct coll_args *a)
{
    int slot = coll_group_of(a->g)->slot;
    struct coll_shm_member *root = coll_shm_member(slot, a->root);
    if (a->rank == a->root)
        root->soff = root_offset(a);
    int st = coll_heap_meet(a);
    if (st != HINT_SUCCESS)
        return st;
    if (root->soff == UINT64_MAX)
        return coll_heap_fallback(a, "shm", bcast_shm); /* its root finishes without waiting */
    if (a->rank != a->root)
        copy_in(a, heap_at(root->soff));
    if (coll_has_layout(a))
        coll_count_direct();
    return barrier_shm(a);
}
