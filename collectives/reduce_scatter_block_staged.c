/*
 * reduce_scatter_block staged — small blocks: every rank stages its P blocks (collectives/
 * staging.c), posts and waits for every rank's; rank i combines block i of every staged input
 * in rank order. Needs the shared heap, a collective slot and blocks of at most coll_stage_block(P).
 * Cost: P blocks copied in, one block's P-1 combines per rank, one synchronisation.
 */
#include "collectives/algs.h"

bool reduce_scatter_block_staged_ok(const struct coll_args *a)
{
    return coll_heap_ok(a) && a->block <= coll_stage_block(a->size);
}

int reduce_scatter_block_staged(struct coll_args *a)
{
    char *mine = coll_stage_begin(a, a->block * (size_t)a->size);
    if (mine == NULL)
        return HINT_ERR_NOMEM;
    memcpy(mine, a->sbuf, a->block * (size_t)a->size);
    int st;
    CHECK_GOTO(coll_stage_publish(a), out);
    coll_stage_reduce(a, (size_t)a->rank * a->block, a->count, a->rbuf);
out:
    return st;
}
