/*
 * bcast hier — over the node hierarchy (hier.h): on the root's node, a bcast from the root (the
 * node's own algorithm: shared cells or the shared heap); a binomial bcast among the node
 * leaders from the root's node; on every other node a bcast from its leader.
 * Cost: ceil(log2 nodes) (alpha + n beta) between nodes, two node bcasts on the critical path.
 */
#include "collectives/algs.h"
#include "collectives/hier.h"

static int node_bcast(const struct coll_args *a, const struct hier *h, int root)
{
    if (h->node->size == 1)
        return HINT_SUCCESS;
    struct coll_args s;
    hier_sub(a, h->node, COLL_BCAST, &s);
    s.rbuf = a->rbuf;
    s.block = a->block;
    s.root = root;
    return hier_node_run(&s);
}

int bcast_hier(struct coll_args *a)
{
    struct hier *h;
    int st, kr = 0;
    CHECK_GOTO(hier_get(a, &h), out);
    kr = h->node_of[a->root];
    if (h->my_node == kr)
        CHECK_GOTO(node_bcast(a, h, h->local_of[a->root]), out);
    if (h->my_local == 0 && h->nnodes > 1) {
        struct coll_args s;
        hier_sub(a, h->column, COLL_BCAST, &s);
        s.rbuf = a->rbuf;
        s.block = a->block;
        s.root = kr;
        CHECK_GOTO(bcast_binomial(&s), out);
    }
    if (h->my_node != kr)
        CHECK_GOTO(node_bcast(a, h, 0), out);
    coll_record(a->op_id, "hier");
out:
    return st;
}
