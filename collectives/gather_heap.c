/*
 * gather heap and scatter heap — over the shared heap: the root publishes its buffer of P
 * blocks, a barrier, every rank copies its own block straight into (gather) or out of (scatter)
 * the root's buffer, all at once, a barrier before the root may use it. Off the heap: linear
 * (after a barrier, coll_heap_fallback). Cost: 2 barriers + one block copied per rank in
 * parallel, against P-1 copies in and out of channels at the root for linear.
 */
#include <stdint.h>

#include "collectives/algs.h"
#include "collectives/coll_shm.h"
#include "runtime/heap.h"
#include "runtime/runtime.h"


static int rooted_copy(struct coll_args *a, bool gather)
{
    struct coll_shm_member *root = coll_shm_member(coll_group_of(a->g)->slot, a->root);
    size_t all = a->block * (size_t)a->size;
    if (a->rank == a->root)
        root->roff = heap_span(gather ? a->rbuf : a->sbuf, all);
    int st = coll_heap_meet(a);
    if (st != HINT_SUCCESS)
        return st;
    if (root->roff == UINT64_MAX)
        return coll_heap_fallback(a, "linear", gather ? gather_linear : scatter_linear);
    char *mine = (char *)heap_at(root->roff) + (size_t)a->rank * a->block;
    if (gather)
        copy_bytes(mine, a->sbuf, a->block); /* the root in place: the same bytes */
    else
        copy_bytes(a->rbuf, mine, a->block);
    return barrier_shm(a);
}

int gather_heap(struct coll_args *a) { return rooted_copy(a, true); }
int scatter_heap(struct coll_args *a) { return rooted_copy(a, false); }
