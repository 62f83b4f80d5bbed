/*
 * barrier hier — over the node hierarchy (hier.h): a barrier on each node (the node's own
 * algorithm, the shm counter where there is a slot), a dissemination barrier among the node
 * leaders, a barrier on each node again. Nobody leaves the last node barrier before its leader
 * has met every other leader, and no leader meets the others before its node arrived.
 * Cost: 2 node barriers + ceil(log2 nodes) inter-node messages per leader.
 */
#include "collectives/algs.h"
#include "collectives/hier.h"

static int node_barrier(const struct coll_args *a, const struct hier *h)
{
    if (h->node->size == 1)
        return HINT_SUCCESS;
    struct coll_args s;
    hier_sub(a, h->node, COLL_BARRIER, &s);
    return hier_node_run(&s);
}

int barrier_hier(struct coll_args *a)
{
    struct hier *h;
    int st;
    CHECK_GOTO(hier_get(a, &h), out);
    CHECK_GOTO(node_barrier(a, h), out);
    if (h->my_local == 0 && h->nnodes > 1) {
        struct coll_args s;
        hier_sub(a, h->column, COLL_BARRIER, &s);
        CHECK_GOTO(barrier_dissemination(&s), out);
    }
    CHECK_GOTO(node_barrier(a, h), out);
    coll_record(a->op_id, "hier");
out:
    return st;
}
