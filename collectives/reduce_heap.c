/*
 * reduce heap — large messages over the shared heap: every rank publishes its input, the root
 * its output, a barrier; rank i combines segment i of every input (rank order, as allreduce heap)
 * straight into the root's output; a barrier. The root's output is written by all ranks at once,
 * each in its own segment. Off the heap: binomial (after a barrier, coll_heap_fallback).
 * Cost: 2 barriers; per rank n/P * (P reads + 1 write); no copy at the root.
 */
#include <stdint.h>

#include "collectives/algs.h"
#include "collectives/coll_shm.h"
#include "runtime/heap.h"
#include "runtime/runtime.h"


int reduce_heap(struct coll_args *a)
{
    int slot = coll_group_of(a->g)->slot, P = a->size;
    struct coll_shm_member *me = coll_shm_member(slot, a->rank), *root = coll_shm_member(slot, a->root);
    me->soff = heap_span(a->sbuf, a->block);
    me->roff = a->rank == a->root ? heap_span(a->rbuf, a->block) : 0;
    int st = coll_heap_meet(a);
    if (st != HINT_SUCCESS)
        return st;
    bool on_heap = root->roff != UINT64_MAX;
    for (int p = 0; p < P; p++)
        on_heap = on_heap && coll_shm_member(slot, p)->soff != UINT64_MAX;
    if (!on_heap)
        return coll_heap_fallback(a, "binomial", reduce_binomial);
    size_t q = a->count / (size_t)P, r = a->count % (size_t)P, k = (size_t)a->rank;
    size_t first = k * q + (k < r ? k : r), n = q + (k < r);
    coll_heap_reduce(a, first * a->esize, n, (char *)heap_at(root->roff) + first * a->esize);
    return barrier_shm(a);
}
