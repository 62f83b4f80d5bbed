/*
 * allgather hier — over the node hierarchy (hier.h): a gather of each node's blocks to its
 * leader (the node's own algorithm), an allgather among the leaders of each node's blocks
 * together (nodes of equal size: the rules' choice across nodes, recursive doubling or Bruck for
 * small totals and the ring beyond; nodes of different sizes: an allgatherv ring), a bcast of the
 * whole result on each node from its leader. When the nodes' members are consecutive ranks (the
 * world, most splits) the leaders gather straight into the receive buffer; otherwise through a
 * buffer in node order.
 * Cost between nodes, n bytes per rank and m ranks per node: (nodes-1) (alpha + n m beta) by the
 * ring, log2(nodes) alpha + (nodes-1) n m beta by recursive doubling; a node gather and a node
 * bcast of P n bytes.
 */
#include <stdlib.h>

#include "collectives/algs.h"
#include "collectives/hier.h"

static int node_gather(const struct coll_args *a, const struct hier *h, char *into)
{
    if (h->node->size == 1) {
        copy_bytes(into, a->sbuf, a->block);
        return HINT_SUCCESS;
    }
    struct coll_args s;
    hier_sub(a, h->node, COLL_GATHER, &s);
    s.sbuf = a->sbuf;
    s.rbuf = into;
    s.block = a->block;
    s.root = 0;
    return hier_node_run(&s);
}

/* Among the leaders, nodes of equal size: an allgather of each node's blocks, by the rules'
   choice for a group spanning nodes (recursive doubling or Bruck for small totals, the ring
   beyond), so that small messages cross log2(nodes) steps instead of nodes - 1. */
static int leaders_allgather(const struct coll_args *a, const struct hier *h, char *buf)
{
    size_t node_bytes = (size_t)hier_node_size(h, 0) * a->block;
    struct coll_args s;
    hier_sub(a, h->column, COLL_ALLGATHER, &s);
    s.sbuf = buf + (size_t)h->my_node * node_bytes; /* in place: the node's own blocks */
    s.rbuf = buf;
    s.block = node_bytes;
    return hier_node_run(&s);
}

/* Among the leaders, nodes of different sizes: an allgatherv ring; node n's blocks lie at
   buf + start[n] * block. */
static int leaders_allgatherv(const struct coll_args *a, const struct hier *h, char *buf)
{
    if (h->even)
        return leaders_allgather(a, h, buf);
    int st = HINT_SUCCESS, K = h->nnodes;
    size_t *counts = malloc(2 * (size_t)K * sizeof *counts);
    if (counts == NULL)
        return HINT_ERR_NOMEM;
    size_t *displs = counts + K;
    for (int n = 0; n < K; n++) {
        counts[n] = (size_t)hier_node_size(h, n) * a->block;
        displs[n] = (size_t)h->start[n] * a->block;
    }
    struct coll_args s;
    hier_sub(a, h->column, COLL_ALLGATHERV, &s);
    s.sbuf = buf + displs[h->my_node];
    s.rbuf = buf;
    s.rcounts = counts;
    s.rdispls = displs;
    s.block = a->block;
    st = allgatherv_ring(&s);
    free(counts);
    return st;
}

int allgather_hier(struct coll_args *a)
{
    struct hier *h;
    void *order = NULL;
    int st;
    size_t b = a->block;
    CHECK_GOTO(hier_get(a, &h), out);
    char *buf = a->rbuf;
    if (h->my_local == 0 && !h->blocked) {
        CHECK_GOTO(coll_scratch((size_t)a->size * b, &order), out);
        buf = order;
    }
    CHECK_GOTO(node_gather(a, h, buf + (size_t)h->start[h->my_node] * b), out);
    if (h->my_local == 0 && h->nnodes > 1)
        CHECK_GOTO(leaders_allgatherv(a, h, buf), out);
    if (order)
        for (int i = 0; i < a->size; i++)
            copy_bytes(a->rbuf + (size_t)h->members[i] * b, (char *)order + (size_t)i * b, b);
    if (h->node->size > 1) {
        struct coll_args s;
        hier_sub(a, h->node, COLL_BCAST, &s);
        s.rbuf = a->rbuf;
        s.block = (size_t)a->size * b;
        s.root = 0;
        CHECK_GOTO(hier_node_run(&s), out);
    }
    coll_record(a->op_id, "hier");
out:
    free(order);
    return st;
}
