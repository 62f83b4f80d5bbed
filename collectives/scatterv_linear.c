/*
 * scatterv linear — the root sends rank p scounts[p] bytes from sdispls[p]. Any P, any counts.
 * Cost: (P-1) alpha + sum(n_p) beta at the root.
 */
#include "collectives/algs.h"

int scatterv_linear(struct coll_args *a)
{
    if (a->rank != a->root)
        return coll_recv(a->rbuf, a->block, a->root, a);
    int st = HINT_SUCCESS;
    hint_request *rq = coll_requests((size_t)a->size);
    if (rq == NULL)
        return HINT_ERR_NOMEM;
    for (int p = 0; p < a->size; p++)
        if (p != a->root)
            CHECK_GOTO(coll_isend(a->sbuf + a->sdispls[p], a->scounts[p], p, a, &rq[p]), out);
    copy_bytes(a->rbuf, a->sbuf + a->sdispls[a->root], a->scounts[a->root]);
out:
    return coll_wait_free(rq, (size_t)a->size, st);
}
