/*
 * reduce_scatter_block reduce_scatter — binomial reduce of all P blocks to rank 0, then
 * binomial scatter of the result. Any P. Cost: 2 ceil(log2 P) alpha + P n log2(P) beta:
 * for small blocks.
 */
#include "collectives/algs.h"

int reduce_scatter_block_reduce_scatter(struct coll_args *a)
{
    int st = HINT_SUCCESS;
    size_t total = a->block * (size_t)a->size;
    void *tmp = NULL;
    CHECK_GOTO(coll_scratch(total, &tmp), out);
    struct coll_args r = *a;
    r.root = 0;
    r.rbuf = tmp;
    r.block = total;
    r.count = a->count * (size_t)a->size;
    CHECK_GOTO(reduce_binomial(&r), out);
    struct coll_args s = *a;
    s.root = 0;
    s.sbuf = tmp;
    CHECK_GOTO(scatter_binomial(&s), out);
out:
    free(tmp);
    return st;
}
