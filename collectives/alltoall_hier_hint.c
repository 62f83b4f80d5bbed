/*
 * alltoall hier_hint — HINT's Algorithm 5 (papers/000, §F): an intra-node step, the node's own
 * alltoall over the shared heap (the copy order and copy mode the rules give on one node: staged,
 * column, Hilbert, Morton...) on the node's sub-group (hier.h), then the inter-node step, a
 * pairwise exchange over the whole group (step i: send to rank + i, receive from rank - i, wait)
 * that skips every peer on this rank's node. As in the paper, the two steps do not overlap.
 * hier_hint_overlap posts every inter-node receive and send first, runs the node step while
 * they are in flight, then waits (the paper names such pipelining as possible, out of its scope).
 * When the node's members are not consecutive ranks, the node step is an alltoallv whose
 * displacements pick their blocks. The v variant is the same with each pair's own counts.
 * Inter-node messages per rank: P - m (m: members on its node), each one block.
 */
#include <stdlib.h>

#include "collectives/algs.h"
#include "collectives/hier.h"

/* The node step as an alltoallv on the node: member l's blocks at the group's displacements. */
static int node_alltoallv(const struct coll_args *a, const struct hier *h, bool v)
{
    int m = h->node->size, st;
    const int *mem = h->members + h->start[h->my_node];
    size_t *c = malloc(4 * (size_t)m * sizeof *c);
    if (c == NULL)
        return HINT_ERR_NOMEM;
    for (int l = 0; l < m; l++) {
        c[l] = v ? a->scounts[mem[l]] : a->block;
        c[m + l] = v ? a->sdispls[mem[l]] : (size_t)mem[l] * a->block;
        c[2 * m + l] = v ? a->rcounts[mem[l]] : a->block;
        c[3 * m + l] = v ? a->rdispls[mem[l]] : (size_t)mem[l] * a->block;
    }
    struct coll_args s;
    hier_sub(a, h->node, COLL_ALLTOALLV, &s);
    s.sbuf = a->sbuf;
    s.rbuf = a->rbuf;
    s.scounts = c;
    s.sdispls = c + m;
    s.rcounts = c + 2 * m;
    s.rdispls = c + 3 * m;
    st = hier_node_run(&s);
    free(c);
    return st;
}

int hier_alltoall_node_step(const struct coll_args *a, const struct hier *h, bool v)
{
    if (h->node->size == 1) {
        size_t r = (size_t)a->rank;
        if (v)
            copy_bytes(a->rbuf + a->rdispls[r], a->sbuf + a->sdispls[r], a->rcounts[r]);
        else
            copy_bytes(a->rbuf + r * a->block, a->sbuf + r * a->block, a->block);
        return HINT_SUCCESS;
    }
    if (v || !h->blocked)
        return node_alltoallv(a, h, v);
    struct coll_args s;
    size_t first = (size_t)h->start[h->my_node] * a->block;
    hier_sub(a, h->node, COLL_ALLTOALL, &s);
    s.sbuf = a->sbuf + first;
    s.rbuf = a->rbuf + first;
    s.block = a->block;
    return hier_node_run(&s);
}

/* Algorithm 5's inter-node step: pairwise, the sends and receives within the node skipped. */
static int inter_node_step(const struct coll_args *a, const struct hier *h, bool v)
{
    int st = HINT_SUCCESS, P = a->size, r = a->rank;
    for (int i = 1; i < P && st == HINT_SUCCESS; i++) {
        int src = (r - i + P) % P, dst = (r + i) % P, n = 0;
        hint_request rq[2];
        if (h->node_of[dst] != h->my_node) {
            size_t at = v ? a->sdispls[dst] : (size_t)dst * a->block, len = v ? a->scounts[dst] : a->block;
            st = coll_isend(a->sbuf + at, len, dst, a, &rq[n]);
            n += st == HINT_SUCCESS;
        }
        if (st == HINT_SUCCESS && h->node_of[src] != h->my_node) {
            size_t at = v ? a->rdispls[src] : (size_t)src * a->block, len = v ? a->rcounts[src] : a->block;
            st = coll_irecv(a->rbuf + at, len, src, a, &rq[n]);
            n += st == HINT_SUCCESS;
        }
        if (n > 0) {
            int wst = hint_waitall(n, rq, HINT_STATUSES_IGNORE);
            st = st == HINT_SUCCESS ? wst : st;
        }
    }
    return st;
}

static int hier_hint(struct coll_args *a, bool v)
{
    struct hier *h;
    int st;
    CHECK_GOTO(hier_get(a, &h), out);
    CHECK_GOTO(hier_alltoall_node_step(a, h, v), out);
    CHECK_GOTO(inter_node_step(a, h, v), out);
    coll_record(a->op_id, "hier_hint");
out:
    return st;
}

/* The overlapped inter-node step's first half: every receive from and send to a rank off the
   node posted at once, in the pairwise order (step i: from rank - i, to rank + i), so that the
   transfers run while the node's copies do. The node step only touches blocks between members
   of the node, these only blocks of other nodes: the two never share bytes. */
static int post_inter_node(const struct coll_args *a, const struct hier *h, bool v, hint_request *rq, size_t *n)
{
    int st = HINT_SUCCESS, P = a->size, r = a->rank;
    for (int i = 1; i < P && st == HINT_SUCCESS; i++) {
        int src = (r - i + P) % P;
        if (h->node_of[src] == h->my_node)
            continue;
        size_t at = v ? a->rdispls[src] : (size_t)src * a->block, len = v ? a->rcounts[src] : a->block;
        st = coll_irecv(a->rbuf + at, len, src, a, &rq[*n]);
        *n += st == HINT_SUCCESS;
    }
    for (int i = 1; i < P && st == HINT_SUCCESS; i++) {
        int dst = (r + i) % P;
        if (h->node_of[dst] == h->my_node)
            continue;
        size_t at = v ? a->sdispls[dst] : (size_t)dst * a->block, len = v ? a->scounts[dst] : a->block;
        st = coll_isend(a->sbuf + at, len, dst, a, &rq[*n]);
        *n += st == HINT_SUCCESS;
    }
    return st;
}

/* hier_hint with the inter-node transfers in flight during the node step (the pipelining the
   paper names as possible but leaves out): post, copy on the node, wait. */
static int hier_hint_overlap(struct coll_args *a, bool v)
{
    struct hier *h;
    hint_request *rq = NULL;
    size_t n = 0;
    int st;
    CHECK_GOTO(hier_get(a, &h), out);
    if ((rq = coll_requests(2 * (size_t)a->size)) == NULL) {
        st = HINT_ERR_NOMEM;
        goto out;
    }
    CHECK_GOTO(post_inter_node(a, h, v, rq, &n), out);
    CHECK_GOTO(hier_alltoall_node_step(a, h, v), out);
    coll_record(a->op_id, "hier_hint_overlap");
out:
    /* on an error the posted transfers still complete before the buffers go back to the caller */
    return rq ? coll_wait_free(rq, n, st) : st;
}

int alltoall_hier_hint(struct coll_args *a) { return hier_hint(a, false); }
int alltoallv_hier_hint(struct coll_args *a) { return hier_hint(a, true); }
int alltoall_hier_hint_overlap(struct coll_args *a) { return hier_hint_overlap(a, false); }
int alltoallv_hier_hint_overlap(struct coll_args *a) { return hier_hint_overlap(a, true); }
