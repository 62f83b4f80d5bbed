/*
 * collectives/util.c — helpers for algorithms: point-to-point on a group's collective context
 * (ctx + 1) with the call's own tag, so collective traffic never meets the user's messages or
 * another call's; scratch buffers; the shared-heap algorithms' way to their fallback.
 */
#include <stdlib.h>

#include "collectives/algs.h"
#include "runtime/p2p.h"

int coll_isend(const void *buf, size_t n, int peer, const struct coll_args *a, hint_request *r)
{
    return p2p_isend(buf, n, HINT_BYTE, peer, a->tag, a->g, a->g->ctx + 1, r);
}

int coll_irecv(void *buf, size_t n, int peer, const struct coll_args *a, hint_request *r)
{
    return p2p_irecv(buf, n, HINT_BYTE, peer, a->tag, a->g, a->g->ctx + 1, r);
}

int coll_waitall(size_t n, hint_request *r) { return p2p_waitall(n, r); }

hint_request *coll_requests(size_t n) { return calloc(n, sizeof(hint_request)); }

int coll_wait_free(hint_request *r, size_t n, int st)
{
    int wst = p2p_waitall(n, r);
    free(r);
    return st != HINT_SUCCESS ? st : wst;
}

int coll_send(const void *buf, size_t n, int peer, const struct coll_args *a)
{
    hint_request r;
    int st = coll_isend(buf, n, peer, a, &r);
    return st != HINT_SUCCESS ? st : p2p_wait(&r, NULL);
}

int coll_recv(void *buf, size_t n, int peer, const struct coll_args *a)
{
    hint_request r;
    int st = coll_irecv(buf, n, peer, a, &r);
    return st != HINT_SUCCESS ? st : p2p_wait(&r, NULL);
}

int coll_sendrecv(const void *s, size_t sn, int dst, void *r, size_t rn, int src, const struct coll_args *a)
{
    hint_request rq[2];
    int st = coll_irecv(r, rn, src, a, &rq[0]);
    if (st != HINT_SUCCESS)
        return st;
    st = coll_isend(s, sn, dst, a, &rq[1]);
    if (st != HINT_SUCCESS) {
        p2p_wait(&rq[0], NULL);
        return st;
    }
    return p2p_waitall(2, rq);
}

int coll_scratch(size_t n, void **p)
{
    *p = NULL;
    if (n == 0)
        return HINT_SUCCESS;
    *p = malloc(n);
    return *p ? HINT_SUCCESS : HINT_ERR_NOMEM;
}

int coll_heap_fallback(struct coll_args *a, const char *name, int (*run)(struct coll_args *))
{
    /* a fallback whose ranks may finish without hearing from all would let a fast one publish
       its next offsets before a slow one has read these */
    int st = barrier_shm(a);
    if (st != HINT_SUCCESS)
        return st;
    coll_record(a->op_id, name);
    return run(a);
}
