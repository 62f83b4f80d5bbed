/*
 * allreduce staged — small messages, one synchronisation (collectives/staging.c): each rank copies
 * its input into its staging area, publishes, waits for every rank's, and reduces all P inputs
 * itself, in the same order on every rank (the last rank's input first, then rank P-2 ... 0
 * combined into it), so every rank computes bitwise the same result with no second exchange.
 * Needs the shared heap, a collective slot and at most P * coll_stage_block(P) bytes of input.
 * Cost: 1 copy in, 1 copy + P-1 combines of n bytes out per rank, 1 flag store and P flag loads.
 */
#include "collectives/algs.h"

bool allreduce_staged_ok(const struct coll_args *a)
{
    return coll_heap_ok(a) && a->block <= (size_t)a->size * coll_stage_block(a->size);
}

void coll_stage_reduce(struct coll_args *a, size_t off, size_t n, char *dst)
{
    memcpy(dst, coll_stage_half(a, a->size - 1) + off, n * a->esize);
    for (int p = a->size - 2; p >= 0; p--)
        op_reduce(a->op, a->basic, coll_stage_half(a, p) + off, dst, n);
}

int allreduce_staged(struct coll_args *a)
{
    char *mine = coll_stage_begin(a, a->block);
    if (mine == NULL)
        return HINT_ERR_NOMEM;
    memcpy(mine, a->sbuf, a->block); /* in place too: the input is read before rbuf is written */
    int st;
    CHECK_GOTO(coll_stage_publish(a), out);
    coll_stage_reduce(a, 0, a->count, a->rbuf);
out:
    return st;
}
