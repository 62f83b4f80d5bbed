/*
 * reduce binomial, in rank order — what reduce binomial runs for an op that does not commute:
 * the tree is rooted at rank 0 whatever the root, so that every subtree holds a contiguous range
 * of ranks, and a rank combines its own range (the lower) on the left of its partner's; rank 0
 * then hands the result to the root. Cost: ceil(log2 P) * (alpha + n beta + n gamma) plus one
 * message when the root is not 0; per combine, one extra copy of n bytes.
 */
#include "collectives/algs.h"

int reduce_binomial_in_order(struct coll_args *a)
{
    int st = HINT_SUCCESS, P = a->size, v = a->rank;
    void *acc = NULL, *tmp = NULL;
    CHECK_GOTO(coll_scratch(a->block, &acc), out);
    CHECK_GOTO(coll_scratch(a->block, &tmp), out);
    copy_bytes(acc, a->sbuf, a->block);
    for (int mask = 1; mask < P; mask <<= 1) {
        if (v & mask) {
            CHECK_GOTO(coll_send(acc, a->block, v - mask, a), out);
            break;
        }
        if (v + mask < P) {
            CHECK_GOTO(coll_recv(tmp, a->block, v + mask, a), out);
            op_reduce_ordered(a->op, a->basic, tmp, acc, a->count, a->block, false);
        }
    }
    if (a->root != 0 && v == 0)
        CHECK_GOTO(coll_send(acc, a->block, a->root, a), out);
    else if (a->root != 0 && v == a->root)
        CHECK_GOTO(coll_recv(a->rbuf, a->block, 0, a), out);
    else if (v == a->root)
        copy_bytes(a->rbuf, acc, a->block);
out:
    free(acc);
    free(tmp);
    return st;
}

int coll_noncommutative_fallback(struct coll_args *a, const char *name, int (*run)(struct coll_args *))
{
    coll_record(a->op_id, name);
    return run(a);
}
