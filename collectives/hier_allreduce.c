/*
 * allreduce hier — over the node hierarchy (hier.h).
 *  small, or nodes of different sizes: a reduce to each node's leader (the node's own
 *    algorithm), an allreduce among the leaders (recursive doubling, the ring beyond
 *    HIER_ALLREDUCE_RING bytes), a bcast on each node from its leader;
 *  large, every node with m members and the count a multiple of m: a reduce-scatter on each node
 *    (member l gets segment l of the node's sum; the shared heap's where it runs), an allreduce
 *    of segment l across the nodes by column l (every member takes part, not only the leaders),
 *    an allgather of the segments on each node.
 * Combining by node changes the order of the operands, so an op that does not commute runs
 * recursive doubling instead.
 * Cost, large: between nodes each rank moves 2 (nodes-1)/nodes * n/m bytes (ring), instead of a
 * leader moving 2 (nodes-1)/nodes * n while the others wait.
 */
#include <stdlib.h>

#include "collectives/algs.h"
#include "collectives/hier.h"

#define HIER_ALLREDUCE_SEGMENTED 16384 /* bytes from which the large scheme runs */
#define HIER_ALLREDUCE_RING 16384      /* bytes from which the leaders or columns use the ring */

/* The allreduce of buf (n elements, bytes in place) among the members of column g. */
static int column_allreduce(const struct coll_args *a, hint_group g, char *buf, size_t count)
{
    if (g->size == 1)
        return HINT_SUCCESS;
    struct coll_args s;
    hier_sub(a, g, COLL_ALLREDUCE, &s);
    s.sbuf = buf;
    s.rbuf = buf;
    s.count = count;
    s.block = count * a->esize;
    return s.block >= HIER_ALLREDUCE_RING ? allreduce_ring(&s) : allreduce_recursive_doubling(&s);
}

static int small(struct coll_args *a, const struct hier *h)
{
    int st;
    CHECK_GOTO(hier_node_reduce(a, h, a->sbuf, a->rbuf), out);
    if (h->my_local == 0)
        CHECK_GOTO(column_allreduce(a, h->column, a->rbuf, a->count), out);
    if (h->node->size > 1) {
        struct coll_args s;
        hier_sub(a, h->node, COLL_BCAST, &s);
        s.rbuf = a->rbuf;
        s.block = a->block;
        s.root = 0;
        CHECK_GOTO(hier_node_run(&s), out);
    }
out:
    return st;
}

static int segmented(struct coll_args *a, const struct hier *h)
{
    int st, m = h->node->size;
    size_t seg = a->count / (size_t)m, bytes = seg * a->esize;
    void *mine = NULL;
    struct coll_args s;
    CHECK_GOTO(coll_scratch(bytes, &mine), out);
    hier_sub(a, h->node, COLL_REDUCE_SCATTER_BLOCK, &s);
    s.sbuf = a->sbuf;
    s.rbuf = mine;
    s.count = seg;
    s.block = bytes;
    CHECK_GOTO(hier_node_run(&s), out);
    CHECK_GOTO(column_allreduce(a, h->column, mine, seg), out);
    hier_sub(a, h->node, COLL_ALLGATHER, &s);
    s.sbuf = mine;
    s.rbuf = a->rbuf;
    s.block = bytes;
    CHECK_GOTO(hier_node_run(&s), out);
out:
    free(mine);
    return st;
}

int allreduce_hier(struct coll_args *a)
{
    if (!op_commutes(a->op))
        return coll_noncommutative_fallback(a, "recursive_doubling", allreduce_recursive_doubling);
    struct hier *h;
    int st;
    CHECK_GOTO(hier_get(a, &h), out);
    int m = h->node->size;
    bool seg = a->block >= HIER_ALLREDUCE_SEGMENTED && h->even && m > 1 && h->nnodes > 1 &&
               a->count % (size_t)m == 0;
    CHECK_GOTO(seg ? segmented(a, h) : small(a, h), out);
    coll_record(a->op_id, "hier");
out:
    return st;
}
