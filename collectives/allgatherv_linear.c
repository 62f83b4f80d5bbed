/*
 * allgatherv linear — every rank posts receives from all and sends its block to all at once.
 * Any P, any counts. Cost: (P-1) alpha + sum(n_p) beta, all overlapping; good for small P.
 */
#include "collectives/algs.h"

int allgatherv_linear(struct coll_args *a)
{
    int st = HINT_SUCCESS, P = a->size, r = a->rank;
    hint_request *rq = coll_requests(2 * (size_t)P);
    if (rq == NULL)
        return HINT_ERR_NOMEM;
    for (int p = 0; p < P; p++)
        if (p != r)
            CHECK_GOTO(coll_irecv(a->rbuf + a->rdispls[p], a->rcounts[p], p, a, &rq[p]), out);
    for (int p = 0; p < P; p++)
        if (p != r)
            CHECK_GOTO(coll_isend(a->sbuf, a->block, p, a, &rq[P + p]), out);
    copy_bytes(a->rbuf + a->rdispls[r], a->sbuf, a->rcounts[r]);
out:
    return coll_wait_free(rq, 2 * (size_t)P, st);
}
