/*
 * runtime/request.c — the request pool and datatype-aware copies in and out of a request's
 * buffer.
 */
#include <stdlib.h>
#include <string.h>

#include "datatype/datatype.h"
#include "runtime/registry.h"
#include "runtime/request.h"
#include "runtime/runtime.h"
#include "runtime/trace.h"

/* Freed requests are kept for reuse; the pool only grows to the most requests ever in flight.
   Every request ever allocated stays in the registry until the pool is freed at finalize, so a
   check may read its magic (0 once released) without ever touching freed memory, and sends and
   receives pay no registry update. */
static struct hint_request_s *pool;
/* Requests given up by hint_request_free before they completed, linked through `detached`. */
static struct hint_request_s *detached;

/* Release the detached requests that have completed; the others stay on the list. */
static void reclaim_detached(void)
{
    for (struct hint_request_s **p = &detached; *p;) {
        struct hint_request_s *r = *p;
        if (!rq_done(r)) {
            p = &r->detached;
            continue;
        }
        *p = r->detached;
        dt_release(r->type);
        rq_release(r);
    }
}

void rq_detach(struct hint_request_s *r)
{
    r->detached = detached;
    detached = r;
}

/* Every detached request has completed, or the deadline (ns, CLOCK_MONOTONIC) passed. */
static bool detached_settled(void *arg)
{
    for (struct hint_request_s *r = detached; r; r = r->detached)
        if (!rq_done(r))
            return trace_now_ns() > *(long *)arg;
    return true;
}

void rq_settle_detached(void)
{
    if (detached == NULL)
        return;
    long deadline = trace_now_ns() + 1000L * 1000 * 1000;
    rt_wait_until(detached_settled, &deadline);
    reclaim_detached();
}

struct hint_request_s *rq_alloc(void)
{
    struct hint_request_s *r = pool;
    if (r == NULL && detached) { /* only when the pool is dry: the fast path stays one load */
        reclaim_detached();
        r = pool;
    }
    if (r) {
        pool = r->next;
    } else {
        if ((r = calloc(1, sizeof *r)) == NULL)
            return NULL;
        if (reg_add(REG_REQUEST, r) != HINT_SUCCESS) {
            free(r);
            return NULL;
        }
    }
    memset(r, 0, sizeof *r);
    r->magic = RQ_MAGIC;
    return r;
}

void rq_release(struct hint_request_s *r)
{
    r->magic = 0;
    r->next = pool;
    pool = r;
}

void rq_pool_fini(void)
{
    /* Still in flight at finalize: the transports are gone, so nothing completes them now. */
    for (struct hint_request_s *r = detached; r; r = r->detached)
        r->complete = true;
    reclaim_detached();
    while (pool) {
        struct hint_request_s *r = pool;
        pool = r->next;
        reg_remove(REG_REQUEST, r);
        free(r);
    }
}

int rq_check(hint_request r)
{
    if (reg_live(REG_REQUEST, r) && r->magic == RQ_MAGIC)
        return HINT_SUCCESS;
    return reg_reject(REG_REQUEST, r, HINT_ERR_REQUEST);
}

void rq_pack_typed(const struct hint_request_s *r, size_t off, void *dst, size_t len)
{
    size_t done = 0;
    dt_pack_range_rep(r->buf, r->count, r->type, off, dst, len, &done, DT_REP_AUTO);
}

void rq_unpack_typed(struct hint_request_s *r, size_t off, const void *src, size_t len)
{
    size_t done = 0;
    dt_unpack_range_rep(src, len, off, r->buf, r->count, r->type, &done, DT_REP_AUTO);
}
