/*
 * allreduce reduce_bcast — binomial reduce to rank 0, then binomial bcast from it. Any P.
 * Cost: 2 ceil(log2 P) * (alpha + n beta) + ceil(log2 P) n gamma. Good for tiny messages at
 * small P; recursive doubling halves the latency.
 */
#include "collectives/algs.h"

int allreduce_reduce_bcast(struct coll_args *a)
{
    int root = a->root;
    a->root = 0;
    int st;
    CHECK_GOTO(reduce_binomial(a), out);
    CHECK_GOTO(bcast_binomial(a), out);
out:
    a->root = root;
    return st;
}
