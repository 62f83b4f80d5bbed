/*
 * reduce staged — small messages: every rank stages its input (collectives/staging.c) and posts;
 * the non-roots leave at once, the root waits for every rank's and combines them in rank order
 * as allreduce staged does. Needs the shared heap, a collective slot and at most P * coll_stage_block(P)
 * bytes. Cost: 1 copy in per rank; the root 1 copy + P-1 combines of n bytes; no barrier.
 */
#include "collectives/algs.h"

bool reduce_staged_ok(const struct coll_args *a) { return allreduce_staged_ok(a); }

int reduce_staged(struct coll_args *a)
{
    char *mine = coll_stage_begin(a, a->block);
    if (mine == NULL)
        return HINT_ERR_NOMEM;
    memcpy(mine, a->sbuf, a->block); /* the root's too: in place its input is rbuf */
    coll_stage_post(a);
    if (a->rank != a->root)
        return HINT_SUCCESS; /* leaves without waiting: only the root can see a mismatch */
    int st;
    CHECK_GOTO(coll_stage_wait_all(a), out);
    coll_stage_reduce(a, 0, a->count, a->rbuf);
out:
    return st;
}
