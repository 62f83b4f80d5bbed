/*
 * bcast staged — small messages through the staging areas (collectives/staging.c), no barrier:
 * the root stages the message (in its call's head up to 2 KiB) and leaves; every other rank
 * waits for the root's post and copies the message out. On an oversubscribed node the root
 * runs up to 63 small calls ahead of the slowest reader (7 where the ranks fit the cores)
 * where shm's ring of 16 cells lets it run 16, so when ranks
 * outnumber the cores a rank that holds a core does every call it can without waiting for one
 * that does not (issue 18: sched_yields per call and rank at P=8, 8 B, in docs/BENCHMARKS.md).
 * Needs the shared heap, a collective slot and at most P * coll_stage_block(P) bytes.
 * Cost: 1 copy in, P-1 copies out in parallel, one flag store per rank, one flag load per reader.
 */
#include "collectives/algs.h"

bool bcast_staged_ok(const struct coll_args *a) { return allreduce_staged_ok(a); }

int bcast_staged(struct coll_args *a)
{
    char *mine = coll_stage_begin(a, a->block); /* every rank: its number says it is past the last call */
    if (mine == NULL)
        return HINT_ERR_NOMEM;
    if (a->rank == a->root && a->block) /* 0 bytes may come with a NULL buffer (a hier phase) */
        memcpy(mine, a->rbuf, a->block);
    coll_stage_post(a);
    if (a->rank == a->root)
        return HINT_SUCCESS;
    int st = coll_stage_wait(a, a->root);
    if (st != HINT_SUCCESS)
        return st;
    if (a->block)
        memcpy(a->rbuf, coll_stage_half(a, a->root), a->block);
    return HINT_SUCCESS;
}
