/*
 * reduce_scatter_block heap — over the shared heap: every rank publishes its input, a barrier,
 * rank i combines block i of every input straight into its output (rank order, through a local
 * chunk), a barrier so nobody changes an input another still reads. Off the heap: ring (after a
 * barrier, coll_heap_fallback). Cost: 2 barriers; per rank P block reads + 1 block write.
 */
#include <stdint.h>

#include "collectives/algs.h"
#include "collectives/coll_shm.h"
#include "runtime/heap.h"
#include "runtime/runtime.h"


int reduce_scatter_block_heap(struct coll_args *a)
{
    int slot = coll_group_of(a->g)->slot;
    coll_shm_member(slot, a->rank)->soff = heap_span(a->sbuf, a->block * (size_t)a->size);
    int st = coll_heap_meet(a);
    if (st != HINT_SUCCESS)
        return st;
    for (int p = 0; p < a->size; p++)
        if (coll_shm_member(slot, p)->soff == UINT64_MAX)
            return coll_heap_fallback(a, "ring", reduce_scatter_block_ring);
    coll_heap_reduce(a, (size_t)a->rank * a->block, a->count, a->rbuf);
    return barrier_shm(a);
}
