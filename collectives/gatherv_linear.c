/*
 * gatherv linear — as gather linear, with each rank's block at rdispls[p] and rcounts[p] bytes
 * long. Any P, any counts (zero included). Cost: (P-1) alpha + sum(n_p) beta at the root.
 */
#include "collectives/algs.h"

int gatherv_linear(struct coll_args *a)
{
    if (a->rank != a->root)
        return coll_send(a->sbuf, a->block, a->root, a);
    int st = HINT_SUCCESS;
    hint_request *rq = coll_requests((size_t)a->size);
    if (rq == NULL)
        return HINT_ERR_NOMEM;
    for (int p = 0; p < a->size; p++)
        if (p != a->root)
            CHECK_GOTO(coll_irecv(a->rbuf + a->rdispls[p], a->rcounts[p], p, a, &rq[p]), out);
    copy_bytes(a->rbuf + a->rdispls[a->root], a->sbuf, a->rcounts[a->root]);
out:
    return coll_wait_free(rq, (size_t)a->size, st);
}
