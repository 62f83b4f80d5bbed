/*
 * neighbor_allgather staged — small blocks through the staging areas (collectives/staging.c),
 * no barrier: every rank stages its block (in its call's head up to 2 KiB, an area beyond) and
 * posts the call's number; then it waits for its in-neighbours' posts only, one by one, and
 * copies each one's block into its slot. A rank never waits for its out-neighbours (they read
 * its head whenever they come: the ring of heads keeps it until every member has started a
 * later call), and a rank with no in-neighbour never waits at all, where morton's two barriers
 * make every rank wait for the slowest member twice per call (1.5 sched_yields per call and
 * rank at P=4, 8-512 B oversubscribed, docs/BENCHMARKS.md) and naive posts indegree +
 * outdegree requests. This is Open MPI's eager send without the messages: the block is copied
 * once into the sender's head, once out by each reader, one line written per call and read per
 * in-neighbour.
 *
 * Every rank passes the same block size (neighbor_allgather's one count), so every rank takes
 * the same choice by size and stages the call (a rank without neighbours too: the call numbers
 * of the group's staged operations stay in step). A derived side is packed into the head and
 * unpacked out of it per block (dt_copy_typed). Self loops read the rank's own head; repeated
 * in-neighbours are read once per slot; HINT_PROC_NULL slots are left alone.
 * Needs the shared heap and a collective slot (one rank alone: its blocks copied directly).
 * Cost: 1 copy in, indegree copies out, 1 line store, one line load per in-neighbour.
 */
#include <string.h>

#include "collectives/algs.h"
#include "datatype/datatype.h"
#include "topology/vtopo.h"

bool neighbor_staged_ok(const struct coll_args *a)
{
    if (a->op_id != COLL_NEIGHBOR_ALLGATHER)
        return false;
    return (a->g != NULL && a->size == 1) || allreduce_staged_ok(a);
}

/* bytes of one side's block, to or from contiguous bytes at `bytes` */
static void pack_side(const char *buf, const struct coll_layout *l, char *bytes, size_t n)
{
    size_t done;
    if (n == 0)
        return;
    if (dt_is_contig(l->type))
        memcpy(bytes, buf, n);
    else
        dt_copy_typed(buf, l->count, l->type, bytes, n, HINT_BYTE, &done); /* sizes checked by api.c */
}

static void unpack_side(const char *bytes, size_t n, char *buf, const struct coll_layout *l)
{
    size_t done;
    if (n == 0)
        return;
    if (dt_is_contig(l->type))
        memcpy(buf, bytes, n);
    else
        dt_copy_typed(bytes, n, HINT_BYTE, buf, l->count, l->type, &done);
}

/* One rank alone: every in-slot is a self loop (or HINT_PROC_NULL). */
static int staged_self(struct coll_args *a, const struct vtopo_lists *l, size_t sbytes, size_t rbytes)
{
    char *tmp = NULL;
    int st;
    CHECK_GOTO(coll_scratch(sbytes, (void **)&tmp), out);
    pack_side(a->sbuf, &a->sl, tmp, sbytes);
    for (int i = 0; i < l->indegree; i++)
        if (l->sources[i] != HINT_PROC_NULL)
            unpack_side(tmp, rbytes < sbytes ? rbytes : sbytes, a->rbuf + (ptrdiff_t)i * (ptrdiff_t)a->rl.count * a->rl.extent, &a->rl);
out:
    free(tmp);
    return st;
}

int neighbor_staged(struct coll_args *a)
{
    struct vtopo_lists l;
    int st = vtopo_lists(a->g, &l);
    if (st != HINT_SUCCESS)
        return st;
    size_t sbytes = l.outdegree > 0 ? a->sl.count * dt_size(a->sl.type) : 0;
    size_t rbytes = a->rl.count * dt_size(a->rl.type);
    if (a->size == 1)
        return staged_self(a, &l, sbytes, rbytes);
    char *mine = coll_stage_begin(a, a->block); /* a->block: the same on every rank, so is the head/area choice */
    if (mine == NULL)
        return HINT_ERR_NOMEM;
    pack_side(a->sbuf, &a->sl, mine, sbytes);
    coll_stage_post(a);
    if ((st = coll_stage_wait_list(a, l.sources, l.indegree)) != HINT_SUCCESS)
        return st;
    for (int i = 0; i < l.indegree; i++)
        if (l.sources[i] != HINT_PROC_NULL)
            unpack_side(coll_stage_half(a, l.sources[i]), rbytes,
                        a->rbuf + (ptrdiff_t)i * (ptrdiff_t)a->rl.count * a->rl.extent, &a->rl);
    return HINT_SUCCESS;
}
