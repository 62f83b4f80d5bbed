/*
 * reduce_scatter_block ring — P-1 ring steps; in step s a rank passes on its partial sum of
 * block (rank - s - 1) and adds what arrives for block (rank - s - 2); after the last step it
 * holds its own block fully reduced. Any P.
 * A block's combining wraps around the ring, so an op that does not commute runs reduce_scatter
 * instead (recorded as such).
 * Cost: (P-1) (alpha + n beta + n gamma): bandwidth-optimal for large blocks.
 */
#include "collectives/algs.h"

int reduce_scatter_block_ring(struct coll_args *a)
{
    if (!op_commutes(a->op))
        return coll_noncommutative_fallback(a, "reduce_scatter", reduce_scatter_block_reduce_scatter);
    int st = HINT_SUCCESS, P = a->size, r = a->rank;
    size_t b = a->block;
    void *acc = NULL, *in = NULL;
    CHECK_GOTO(coll_scratch((size_t)P * b, &acc), out);
    CHECK_GOTO(coll_scratch(b, &in), out);
    char *t = acc;
    copy_bytes(t, a->sbuf, (size_t)P * b);
    for (int s = 0; s < P - 1; s++) {
        int sb = (r - s - 1 + 2 * P) % P, rb = (r - s - 2 + 2 * P) % P;
        CHECK_GOTO(coll_sendrecv(t + (size_t)sb * b, b, (r + 1) % P, in, b, (r - 1 + P) % P, a), out);
        op_reduce(a->op, a->basic, in, t + (size_t)rb * b, a->count);
    }
    copy_bytes(a->rbuf, t + (size_t)r * b, b);
out:
    free(acc);
    free(in);
    return st;
}
