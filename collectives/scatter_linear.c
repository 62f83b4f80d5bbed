/*
 * scatter linear — the root sends each rank its block straight from the send buffer; everyone
 * else receives once. Any P. Cost: (P-1) (alpha + n beta) at the root.
 */
#include "collectives/algs.h"

int scatter_linear(struct coll_args *a)
{
    if (a->rank != a->root)
        return coll_recv(a->rbuf, a->block, a->root, a);
    int st = HINT_SUCCESS;
    hint_request *rq = calloc((size_t)a->size, sizeof *rq);
    if (rq == NULL)
        return HINT_ERR_NOMEM;
    for (int p = 0; p < a->size; p++)
        if (p != a->root)
            CHECK_ST(coll_isend(a->sbuf + (size_t)p * a->block, a->block, p, a, &rq[p]));
    copy_bytes(a->rbuf, a->sbuf + (size_t)a->root * a->block, a->block);
out:
    {
        int wst = coll_waitall((size_t)a->size, rq);
        if (st == HINT_SUCCESS)
            st = wst;
    }
    free(rq);
    return st;
}
