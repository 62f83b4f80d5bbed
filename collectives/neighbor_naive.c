/*
 * neighbor_allgather(v) and neighbor_alltoall(v) naive — every receive from an in-neighbour and
 * every send to an out-neighbour posted at once, in the datatypes the caller gave (point to
 * point moves derived types itself), then one wait. HINT_PROC_NULL neighbours are skipped.
 * Messages between one pair of ranks match in the order they are posted: for a graph, the k-th
 * edge to X meets X's k-th edge from here, as MPI has it; for a cartesian group, per dimension
 * the +1 message goes out before the -1 one and the -1 slot is received first, so what goes to
 * the +1 neighbour lands in its -1 slot even when both neighbours are one rank (a periodic
 * dimension of 2) or this rank itself (a periodic dimension of 1).
 * Cost: indegree + outdegree messages in flight at once.
 */
#include "collectives/algs.h"
#include "runtime/p2p.h"
#include "topology/vtopo.h"

/* Where send block k starts and how many elements it has. */
static const char *send_block(const struct coll_args *a, int k, size_t *count)
{
    switch (a->op_id) {
    case COLL_NEIGHBOR_ALLGATHER:
    case COLL_NEIGHBOR_ALLGATHERV: *count = a->sl.count; return a->sbuf;
    case COLL_NEIGHBOR_ALLTOALL: *count = a->sl.count; return a->sbuf + (ptrdiff_t)k * (ptrdiff_t)a->sl.count * a->sl.extent;
    default: *count = a->scounts[k]; return a->sbuf + (ptrdiff_t)a->sdispls[k] * a->sl.extent;
    }
}

static char *recv_block(const struct coll_args *a, int i, size_t *count)
{
    if (a->op_id == COLL_NEIGHBOR_ALLGATHER || a->op_id == COLL_NEIGHBOR_ALLTOALL) {
        *count = a->rl.count;
        return a->rbuf + (ptrdiff_t)i * (ptrdiff_t)a->rl.count * a->rl.extent;
    }
    *count = a->rcounts[i];
    return a->rbuf + (ptrdiff_t)a->rdispls[i] * a->rl.extent;
}

/* The k-th send: the destination index it goes to (cartesian: +1 before -1 per dimension). */
static int send_index(const struct vtopo_lists *l, int k) { return l->cart ? k ^ 1 : k; }

int neighbor_naive(struct coll_args *a)
{
    struct vtopo_lists l;
    int st = vtopo_lists(a->g, &l);
    if (st != HINT_SUCCESS)
        return st;
    size_t n = 0, count;
    hint_request *rq = coll_requests((size_t)l.indegree + (size_t)l.outdegree + 1);
    if (rq == NULL)
        return HINT_ERR_NOMEM;
    uint32_t ctx = a->g->ctx + 1;
    for (int i = 0; i < l.indegree && st == HINT_SUCCESS; i++) {
        char *r = recv_block(a, i, &count);
        if (l.sources[i] != HINT_PROC_NULL)
            st = p2p_irecv(r, count, a->rl.type, l.sources[i], a->tag, a->g, ctx, &rq[n++]);
    }
    for (int k = 0; k < l.outdegree && st == HINT_SUCCESS; k++) {
        int j = send_index(&l, k);
        const char *s = send_block(a, j, &count);
        if (l.dests[j] != HINT_PROC_NULL)
            st = p2p_isend(s, count, a->sl.type, l.dests[j], a->tag, a->g, ctx, &rq[n++]);
    }
    return coll_wait_free(rq, n, st);
}
