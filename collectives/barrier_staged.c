/*
 * barrier staged — every rank stores the barrier's number in the head line of its staging area
 * (collectives/staging.c) and polls the other members' heads. Each rank writes only its own line
 * and reads each peer's once, so at P=2 the barrier costs one line transfer each way, both at
 * once, where barrier shm's shared counter takes three in a row (two read-modify-writes of one
 * line, then the release word). The cost grows as P-1 line reads per rank, so the defaults take
 * it for a few ranks per node only. Needs the shared heap and a collective slot.
 */
#include "collectives/algs.h"

int barrier_staged(struct coll_args *a)
{
    if (coll_stage_begin(a, 0) == NULL)
        return HINT_ERR_NOMEM;
    return coll_stage_publish(a);
}
