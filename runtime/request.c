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

/* Freed requests are kept for reuse; the pool only grows to the most requests ever in flight.
   Every request ever allocated stays in the registry until the pool is freed at finalize, so a
   check may read its magic (0 once released) without ever touching freed memory, and sends and
   receives pay no registry update. */
static struct hint_request_s *pool;

struct hint_request_s *rq_alloc(void)
{
    struct hint_request_s *r = pool;
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
