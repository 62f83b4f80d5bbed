/*
 * scan / exscan linear — a chain: rank i waits for the prefix of ranks 0 .. i-1 from rank i-1,
 * combines its own input on the right and passes the prefix on to rank i+1. In rank order, so
 * any op. exscan's rank 0 writes nothing. Cost: (P-1) (alpha + n beta + n gamma) on the last
 * rank: for few ranks or when the ranks arrive one after another anyway.
 */
#include "collectives/algs.h"

int scan_linear(struct coll_args *a)
{
    int st = HINT_SUCCESS, r = a->rank;
    void *tmp = NULL;
    CHECK_GOTO(coll_scratch(a->block, &tmp), out);
    copy_bytes(a->rbuf, a->sbuf, a->block);
    if (r > 0) {
        CHECK_GOTO(coll_recv(tmp, a->block, r - 1, a), out);
        op_reduce(a->op, a->basic, tmp, a->rbuf, a->count);
    }
    if (r < a->size - 1)
        CHECK_GOTO(coll_send(a->rbuf, a->block, r + 1, a), out);
out:
    free(tmp);
    return st;
}

int exscan_linear(struct coll_args *a)
{
    int st = HINT_SUCCESS, r = a->rank;
    void *prefix = NULL, *next = NULL;
    if (r == 0)
        return coll_send(a->sbuf, a->block, 1, a);
    CHECK_GOTO(coll_scratch(a->block, &prefix), out);
    CHECK_GOTO(coll_recv(prefix, a->block, r - 1, a), out);
    if (r < a->size - 1) {
        /* in place the input is r: read it before r takes the prefix */
        CHECK_GOTO(coll_scratch(a->block, &next), out);
        copy_bytes(next, a->sbuf, a->block);
        op_reduce(a->op, a->basic, prefix, next, a->count);
        CHECK_GOTO(coll_send(next, a->block, r + 1, a), out);
    }
    copy_bytes(a->rbuf, prefix, a->block);
out:
    free(prefix);
    free(next);
    return st;
}
