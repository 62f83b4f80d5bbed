/*
 * collectives/nbc_neighbor.c — the schedule of the four nonblocking neighbourhood collectives:
 * neighbor_naive's messages in one round (every receive from an in-neighbour, then every send to
 * an out-neighbour, in the caller's datatypes), posted in the same order as the blocking call so
 * that repeated neighbours match the same way (see neighbor_naive.c).
 * Cost: indegree + outdegree messages in flight at once.
 */
#include "collectives/sched.h"
#include "topology/vtopo.h"

static bool is_v(const struct coll_args *a)
{
    return a->op_id == COLL_NEIGHBOR_ALLGATHERV || a->op_id == COLL_NEIGHBOR_ALLTOALLV;
}

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
    if (!is_v(a)) {
        *count = a->rl.count;
        return a->rbuf + (ptrdiff_t)i * (ptrdiff_t)a->rl.count * a->rl.extent;
    }
    *count = a->rcounts[i];
    return a->rbuf + (ptrdiff_t)a->rdispls[i] * a->rl.extent;
}

void nbc_neighbor(struct sched *s, const struct coll_args *a)
{
    struct vtopo_lists l;
    size_t count;
    if (vtopo_lists(a->g, &l) != HINT_SUCCESS)
        return; /* api.c asked for the lists already */
    for (int i = 0; i < l.indegree; i++) {
        char *r = recv_block(a, i, &count);
        if (l.sources[i] != HINT_PROC_NULL)
            sched_recv(s, r, count, a->rl.type, l.sources[i]);
    }
    for (int k = 0; k < l.outdegree; k++) {
        int j = l.cart ? k ^ 1 : k; /* cartesian: per dimension the +1 message first */
        const char *p = send_block(a, j, &count);
        if (l.dests[j] != HINT_PROC_NULL)
            sched_send(s, p, count, a->sl.type, l.dests[j]);
    }
}
