/*
 * allgatherv hier — allgather hier (hier_allgather.c) with each member's own count: a gatherv of
 * each node's blocks to its leader (the node's own algorithm), packed in node order; an
 * allgatherv ring among the leaders (one message per node per step, a node's blocks together);
 * a bcast of the packed result on each node from its leader; every member then places the
 * blocks at its displacements. When the displacements already lie in node order without gaps
 * (the world with the usual prefix sums) the packed result is the receive buffer itself and
 * nothing is placed. Any counts, zero included.
 * Cost: (nodes-1) alpha + (total - node's) beta between nodes; a node gatherv and a node bcast
 * of the total.
 */
#include <stdlib.h>

#include "collectives/algs.h"
#include "collectives/hier.h"

/* Where the blocks go in the packed buffer: node by node, a node's members in group order. */
struct packing {
    size_t *at;     /* [P]: offset of group rank p's block */
    size_t *node;   /* [nnodes + 1]: node n's blocks at node[n] .. node[n + 1] */
    bool in_place;  /* the receive buffer, from rdispls[members[0]], is the packed buffer */
};

static int make_packing(const struct coll_args *a, const struct hier *h, struct packing *pk)
{
    pk->at = malloc(((size_t)a->size + (size_t)h->nnodes + 1) * sizeof *pk->at);
    if (pk->at == NULL)
        return HINT_ERR_NOMEM;
    pk->node = pk->at + a->size;
    size_t off = 0, base = a->rdispls[h->members[0]];
    pk->in_place = true;
    for (int n = 0; n < h->nnodes; n++) {
        pk->node[n] = off;
        for (int i = h->start[n]; i < h->start[n + 1]; i++) {
            int p = h->members[i];
            pk->at[p] = off;
            pk->in_place = pk->in_place && a->rdispls[p] == base + off;
            off += a->rcounts[p];
        }
    }
    pk->node[h->nnodes] = off;
    return HINT_SUCCESS;
}

static int node_gatherv(const struct coll_args *a, const struct hier *h, const struct packing *pk, char *packed)
{
    int m = h->node->size, st;
    const int *mem = h->members + h->start[h->my_node];
    if (m == 1) {
        copy_bytes(packed + pk->at[a->rank], a->sbuf, a->block);
        return HINT_SUCCESS;
    }
    size_t *c = malloc(2 * (size_t)m * sizeof *c);
    if (c == NULL)
        return HINT_ERR_NOMEM;
    for (int l = 0; l < m; l++) {
        c[l] = a->rcounts[mem[l]];
        c[m + l] = pk->at[mem[l]];
    }
    struct coll_args s;
    hier_sub(a, h->node, COLL_GATHERV, &s);
    s.sbuf = a->sbuf;
    s.rbuf = packed;
    s.block = a->block;
    s.rcounts = c;
    s.rdispls = c + m;
    s.root = 0;
    st = hier_node_run(&s);
    free(c);
    return st;
}

static int leaders_allgatherv(const struct coll_args *a, const struct hier *h, const struct packing *pk, char *packed)
{
    int st, K = h->nnodes;
    size_t *c = malloc(2 * (size_t)K * sizeof *c);
    if (c == NULL)
        return HINT_ERR_NOMEM;
    for (int n = 0; n < K; n++) {
        c[n] = pk->node[n + 1] - pk->node[n];
        c[K + n] = pk->node[n];
    }
    struct coll_args s;
    hier_sub(a, h->column, COLL_ALLGATHERV, &s);
    s.sbuf = packed + pk->node[h->my_node];
    s.rbuf = packed;
    s.block = c[h->my_node];
    s.rcounts = c;
    s.rdispls = c + K;
    st = allgatherv_ring(&s);
    free(c);
    return st;
}

static int node_bcast(const struct coll_args *a, const struct hier *h, char *packed, size_t total)
{
    if (h->node->size == 1)
        return HINT_SUCCESS;
    struct coll_args s;
    hier_sub(a, h->node, COLL_BCAST, &s);
    s.rbuf = packed;
    s.block = total;
    s.root = 0;
    return hier_node_run(&s);
}

int allgatherv_hier(struct coll_args *a)
{
    struct hier *h;
    struct packing pk = {0};
    char *scratch = NULL;
    int st;
    CHECK_GOTO(hier_get(a, &h), out);
    CHECK_GOTO(make_packing(a, h, &pk), out);
    size_t total = pk.node[h->nnodes];
    char *packed = a->rbuf + a->rdispls[h->members[0]];
    if (!pk.in_place) {
        CHECK_GOTO(coll_scratch(total, (void **)&scratch), out);
        packed = scratch;
    }
    CHECK_GOTO(node_gatherv(a, h, &pk, packed), out);
    if (h->my_local == 0 && h->nnodes > 1)
        CHECK_GOTO(leaders_allgatherv(a, h, &pk, packed), out);
    CHECK_GOTO(node_bcast(a, h, packed, total), out);
    if (!pk.in_place)
        for (int p = 0; p < a->size; p++)
            copy_bytes(a->rbuf + a->rdispls[p], packed + pk.at[p], a->rcounts[p]);
    coll_record(a->op_id, "hier");
out:
    free(pk.at);
    free(scratch);
    return st;
}
