/*
 * allreduce heap — large messages over the shared heap, no message at all: every rank publishes
 * the heap offsets of its input and output, a barrier; rank i reduces segment i of the element
 * range straight from the P inputs (in the same rank order as allreduce staged) into its own output,
 * a barrier; then it copies every other segment j from rank j's output into its own, a barrier
 * before anyone may touch its buffers again. A reduce-scatter and an allgather in which each
 * byte is read where it lies. When any rank's buffers are off the heap, every rank sees it in
 * the published offsets and the call runs recursive doubling instead.
 * Cost: 3 barriers; per rank n/P * (P reads + 1 write) to reduce, (P-1)/P * n copied.
 */
#include <stdint.h>

#include "collectives/algs.h"
#include "collectives/coll_shm.h"
#include "runtime/heap.h"
#include "runtime/runtime.h"

#define REDUCE_CHUNK 8192 /* bytes combined at a time: the partial result stays in L1 */


/* Elements [*first, *first + *n) of segment i: count split as evenly as P allows. */
static void segment(const struct coll_args *a, int i, size_t *first, size_t *n)
{
    size_t q = a->count / (size_t)a->size, r = a->count % (size_t)a->size, k = (size_t)i;
    *first = k * q + (k < r ? k : r);
    *n = q + (k < r);
}

void coll_heap_reduce(const struct coll_args *a, size_t off, size_t n, char *dst)
{
    _Alignas(64) char acc[REDUCE_CHUNK];
    int slot = coll_group_of(a->g)->slot;
    size_t es = a->esize, per = REDUCE_CHUNK / es;
    for (size_t done = 0; done < n; done += per) {
        size_t k = n - done < per ? n - done : per, at = off + done * es;
        memcpy(acc, (char *)heap_at(coll_shm_member(slot, a->size - 1)->soff) + at, k * es);
        for (int p = a->size - 2; p >= 0; p--)
            op_reduce(a->op, a->basic, (char *)heap_at(coll_shm_member(slot, p)->soff) + at, acc, k);
        memcpy(dst + done * es, acc, k * es);
    }
}

int allreduce_heap(struct coll_args *a)
{
    int slot = coll_group_of(a->g)->slot, P = a->size;
    struct coll_shm_member *me = coll_shm_member(slot, a->rank);
    me->soff = heap_span(a->sbuf, a->block);
    me->roff = heap_span(a->rbuf, a->block);
    int st = coll_heap_meet(a);
    if (st != HINT_SUCCESS)
        return st;
    for (int p = 0; p < P; p++) {
        struct coll_shm_member *m = coll_shm_member(slot, p);
        if (m->soff == UINT64_MAX || m->roff == UINT64_MAX)
            return coll_heap_fallback(a, "recursive_doubling", allreduce_recursive_doubling);
    }
    size_t first, n;
    segment(a, a->rank, &first, &n);
    coll_heap_reduce(a, first * a->esize, n, a->rbuf + first * a->esize);
    if ((st = barrier_shm(a)) != HINT_SUCCESS)
        return st;
    for (int p = 0; p < P; p++) {
        size_t first, n;
        segment(a, p, &first, &n);
        if (p != a->rank && n)
            memcpy(a->rbuf + first * a->esize,
                   (char *)heap_at(coll_shm_member(slot, p)->roff) + first * a->esize, n * a->esize);
    }
    return barrier_shm(a);
}
