/*
 * collectives/util.c — helpers for algorithms: point-to-point on a group's collective context
 * (ctx + 1) with the call's own tag, so collective traffic never meets the user's messages or
 * another call's; scratch buffers; the shared-heap algorithms' meeting (signatures compared at
 * their first barrier) and their way to their fallback.
 */
#include <stdint.h>
#include <stdlib.h>

#include "collectives/algs.h"
#include "collectives/coll_shm.h"
#include "runtime/p2p.h"
#include "runtime/runtime.h"

int coll_isend(const void *buf, size_t n, int peer, const struct coll_args *a, hint_request *r)
{
    return p2p_isend(buf, n, HINT_BYTE, peer, a->tag, a->g, a->g->ctx + 1, r);
}

int coll_irecv(void *buf, size_t n, int peer, const struct coll_args *a, hint_request *r)
{
    return p2p_irecv(buf, n, HINT_BYTE, peer, a->tag, a->g, a->g->ctx + 1, r);
}


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

static uint64_t sig_mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001b3ull; }

static bool is_v_variant(int op_id)
{
    return op_id == COLL_GATHERV || op_id == COLL_SCATTERV || op_id == COLL_ALLGATHERV || op_id == COLL_ALLTOALLV;
}

uint64_t coll_signature(const struct coll_args *a)
{
    uint64_t h = 0xcbf29ce484222325ull;
    h = sig_mix(h, (uint64_t)a->op_id);
    h = sig_mix(h, (uint64_t)a->root);
    h = sig_mix(h, is_v_variant(a->op_id) ? 0 : a->block);
    h = sig_mix(h, a->op ? (uint64_t)a->op->id + 1 : 0);
    return sig_mix(h, (uint64_t)a->basic);
}

int coll_mismatch(const struct coll_args *a, const char *what)
{
    RT_ERR("coll", "%s on a group of %d (call %u): %s; every rank returns HINT_ERR_MISMATCH",
           coll_tables[a->op_id].op, a->size, (unsigned)(a->tag - GRP_TAG_COLL) >> 5, what);
    return HINT_ERR_MISMATCH;
}

int coll_heap_meet(struct coll_args *a)
{
    int slot = coll_group_of(a->g)->slot;
    uint64_t mine = coll_signature(a);
    coll_shm_member(slot, a->rank)->sig = mine;
    int st = barrier_shm(a);
    if (st != HINT_SUCCESS)
        return st;
    uint64_t first = coll_shm_member(slot, 0)->sig;
    bool agree = true;
    for (int p = 1; p < a->size && agree; p++)
        agree = coll_shm_member(slot, p)->sig == first;
    if (agree)
        return HINT_SUCCESS;
    /* Every rank read the same signatures, so all leave here; the barrier keeps them until all
       have read, before anyone publishes the next call's. */
    if (mine != first)
        coll_mismatch(a, "this rank's root, size or op differs from group rank 0's");
    st = barrier_shm(a);
    return st != HINT_SUCCESS ? st : HINT_ERR_MISMATCH;
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
