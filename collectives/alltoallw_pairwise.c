/*
 * alltoallw pairwise / linear — every block in its own datatype, moved by point-to-point
 * messages on the group's collective context in the two peers' types (the datatype engine packs
 * and unpacks per message; no copy here). pairwise: step s receives from rank - s and sends to
 * rank + s, one pair of messages in flight; linear: every message posted at once. The own block
 * is copied type to type. Any P. Cost: P-1 steps of alpha + the block's bytes (pairwise).
 */
#include "collectives/algs.h"
#include "datatype/datatype.h"
#include "runtime/p2p.h"

static int recv_from(const struct coll_args *a, int p, hint_request *rq)
{
    return p2p_irecv(a->rbuf + a->rdispls[p], a->rcounts[p], a->rtypes[p], p, a->tag, a->g, a->g->ctx + 1, rq);
}

static int send_to(const struct coll_args *a, int p, hint_request *rq)
{
    return p2p_isend(a->sbuf + a->sdispls[p], a->scounts[p], a->stypes[p], p, a->tag, a->g, a->g->ctx + 1, rq);
}

static int copy_own(const struct coll_args *a)
{
    size_t done;
    int me = a->rank;
    return dt_copy_typed(a->sbuf + a->sdispls[me], a->scounts[me], a->stypes[me], a->rbuf + a->rdispls[me],
                         a->rcounts[me], a->rtypes[me], &done);
}

int alltoallw_pairwise(struct coll_args *a)
{
    int st, P = a->size, r = a->rank;
    CHECK_GOTO(copy_own(a), out);
    for (int s = 1; s < P; s++) {
        hint_request rq[2] = {HINT_REQUEST_NULL, HINT_REQUEST_NULL};
        int src = (r - s + P) % P, dst = (r + s) % P;
        st = recv_from(a, src, &rq[0]);
        if (st == HINT_SUCCESS)
            st = send_to(a, dst, &rq[1]);
        int wst = p2p_waitall(2, rq);
        CHECK_GOTO(st != HINT_SUCCESS ? st : wst, out);
    }
out:
    return st;
}

int alltoallw_linear(struct coll_args *a)
{
    int st = HINT_SUCCESS, P = a->size, r = a->rank;
    hint_request *rq = coll_requests(2 * (size_t)P);
    if (rq == NULL)
        return HINT_ERR_NOMEM;
    for (int s = 1; s < P && st == HINT_SUCCESS; s++)
        st = recv_from(a, (r - s + P) % P, &rq[s]);
    for (int s = 1; s < P && st == HINT_SUCCESS; s++)
        st = send_to(a, (r + s) % P, &rq[P + s]);
    if (st == HINT_SUCCESS)
        st = copy_own(a);
    return coll_wait_free(rq, 2 * (size_t)P, st);
}
