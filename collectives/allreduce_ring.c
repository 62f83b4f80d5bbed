/*
 * allreduce ring — reduce-scatter around the ring (P-1 steps, each rank ends with one fully
 * reduced chunk), then allgather around the ring (P-1 steps). Each chunk is combined in one
 * fixed order, so every rank gets bit-identical results. Any P, any count (chunks may be empty).
 * A chunk's combining starts at the rank of its number and wraps around, so an op that does not
 * commute runs recursive doubling instead (recorded as such).
 * Cost: 2 (P-1) alpha + 2 (P-1)/P n beta + (P-1)/P n gamma: bandwidth-optimal for large n.
 */
#include "collectives/algs.h"

/* Elements [first, first + len) of chunk c when count elements are cut into P chunks. */
static void chunk(size_t count, int P, int c, size_t *first, size_t *len)
{
    size_t q = count / (size_t)P, rem = count % (size_t)P, uc = (size_t)c;
    *first = uc * q + (uc < rem ? uc : rem);
    *len = q + (uc < rem);
}

int allreduce_ring(struct coll_args *a)
{
    if (!op_commutes(a->op))
        return coll_noncommutative_fallback(a, "recursive_doubling", allreduce_recursive_doubling);
    int st = HINT_SUCCESS, P = a->size, r = a->rank;
    int right = (r + 1) % P, left = (r - 1 + P) % P;
    size_t es = a->esize, first, len, rfirst, rlen;
    void *tmp = NULL;
    CHECK_GOTO(coll_scratch((a->count / (size_t)P + 1) * es, &tmp), out);
    copy_bytes(a->rbuf, a->sbuf, a->block);
    for (int s = 0; s < P - 1; s++) {
        chunk(a->count, P, (r - s + P) % P, &first, &len);
        chunk(a->count, P, (r - s - 1 + 2 * P) % P, &rfirst, &rlen);
        CHECK_GOTO(coll_sendrecv(a->rbuf + first * es, len * es, right, tmp, rlen * es, left, a), out);
        op_reduce(a->op, a->basic, tmp, a->rbuf + rfirst * es, rlen);
    }
    for (int s = 0; s < P - 1; s++) {
        chunk(a->count, P, (r + 1 - s + P) % P, &first, &len);
        chunk(a->count, P, (r - s + P) % P, &rfirst, &rlen);
        CHECK_GOTO(coll_sendrecv(a->rbuf + first * es, len * es, right, a->rbuf + rfirst * es, rlen * es, left, a), out);
    }
out:
    free(tmp);
    return st;
}
