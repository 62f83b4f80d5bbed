/*
 * reduce hier — over the node hierarchy (hier.h): a reduce to each node's leader (the node's
 * own algorithm: staged or over the shared heap), a binomial reduce among the leaders to the
 * leader of the root's node, and from there to the root when it is not that leader. Combining
 * by node changes the order of the operands, so an op that does not commute runs binomial in
 * rank order instead. Cost: one node reduce + ceil(log2 nodes) (alpha + n beta + n gamma).
 */
#include <stdlib.h>

#include "collectives/algs.h"
#include "collectives/hier.h"

int hier_node_reduce(const struct coll_args *a, const struct hier *h, const void *in, char *acc)
{
    if (h->node->size == 1) {
        copy_bytes(acc, in, a->block);
        return HINT_SUCCESS;
    }
    struct coll_args s;
    hier_sub(a, h->node, COLL_REDUCE, &s);
    s.sbuf = in;
    s.rbuf = acc;
    s.block = a->block;
    s.root = 0;
    return hier_node_run(&s);
}

int reduce_hier(struct coll_args *a)
{
    if (!op_commutes(a->op))
        return coll_noncommutative_fallback(a, "binomial", reduce_binomial_in_order);
    struct hier *h;
    void *own = NULL;
    int st, kr, lr, leader;
    char *acc = a->rbuf;
    CHECK_GOTO(hier_get(a, &h), out);
    kr = h->node_of[a->root];
    lr = h->local_of[a->root];
    leader = h->members[h->start[kr]]; /* the root's node's leader, a group rank */
    if (h->my_local == 0 && a->rank != a->root) {
        CHECK_GOTO(coll_scratch(a->block, &own), out);
        acc = own;
    }
    CHECK_GOTO(hier_node_reduce(a, h, a->sbuf, acc), out);
    if (h->my_local == 0 && h->nnodes > 1) {
        struct coll_args s;
        hier_sub(a, h->column, COLL_REDUCE, &s);
        s.sbuf = acc;
        s.rbuf = acc;
        s.block = a->block;
        s.root = kr;
        CHECK_GOTO(reduce_binomial(&s), out);
    }
    if (lr != 0 && a->rank == leader)
        CHECK_GOTO(coll_send(acc, a->block, a->root, a), out);
    else if (lr != 0 && a->rank == a->root)
        CHECK_GOTO(coll_recv(a->rbuf, a->block, leader, a), out);
    coll_record(a->op_id, "hier");
out:
    free(own);
    return st;
}
