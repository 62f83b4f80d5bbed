/*
 * runtime/match.c — matching of receives against arrived messages, once for every transport.
 *
 * A message is matched on (context, source, tag); a receive may name any source or any tag.
 * Posted receives are kept in post order and arrived-but-unmatched messages in arrival order, so
 * a message takes the oldest receive it matches and a receive the oldest message. Each transport
 * keeps the first parts of one sender's messages in send order, so MPI's non-overtaking rule holds
 * per pair; across transports, HINT_ANY_SOURCE takes whichever message arrived first.
 * An unexpected message stays where its transport holds it (a shm cell): only its envelope is
 * queued here, in an entry of a pool that transports reserve at init for their own bound, so an
 * arrival never allocates.
 */
#include <stdlib.h>

#include "runtime/request.h"
#include "runtime/transport.h"

struct unexp {
    const struct rt_transport *tp;
    void *msg;           /* the transport's handle */
    int src, tag;        /* world rank of the sender, the message's tag */
    uint32_t ctx;
    struct unexp *next;
};

/* Pool blocks are chained through their first entry's spare `next` so they can be freed. */
struct pool_block {
    struct pool_block *next;
    struct unexp entries[];
};

static struct {
    struct hint_request_s *posted_head, *posted_tail;
    int nposted;
    struct unexp *head, *tail, *free;
    struct pool_block *blocks;
} M;

int rt_match_reserve(size_t n)
{
    if (n == 0)
        return HINT_SUCCESS;
    struct pool_block *b = malloc(sizeof *b + n * sizeof(struct unexp));
    if (b == NULL)
        return HINT_ERR_NOMEM;
    b->next = M.blocks;
    M.blocks = b;
    for (size_t i = 0; i < n; i++) {
        b->entries[i].next = M.free;
        M.free = &b->entries[i];
    }
    return HINT_SUCCESS;
}

void rt_match_fini(void)
{
    while (M.blocks) {
        struct pool_block *b = M.blocks;
        M.blocks = b->next;
        free(b);
    }
    M = (__typeof__(M)){0};
}

int rt_match_posted(void) { return M.nposted; }

static inline bool matches(const struct hint_request_s *r, int src, int tag, uint32_t ctx)
{
    return r->ctx == ctx && (r->peer < 0 || r->peer == src) && (r->tag < 0 || r->tag == tag);
}

static void posted_remove(struct hint_request_s *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        M.posted_head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    else
        M.posted_tail = r->prev;
    r->next = r->prev = NULL;
    M.nposted--;
}

struct hint_request_s *rt_match_arrival(const struct rt_transport *tp, int src, int tag, uint32_t ctx, void *msg)
{
    for (struct hint_request_s *r = M.posted_head; r; r = r->next) {
        if (matches(r, src, tag, ctx)) {
            posted_remove(r);
            return r;
        }
    }
    /* The transports reserved one entry for every message they can leave unexpected. */
    struct unexp *u = M.free;
    M.free = u->next;
    *u = (struct unexp){.tp = tp, .msg = msg, .src = src, .tag = tag, .ctx = ctx, .next = NULL};
    if (M.tail)
        M.tail->next = u;
    else
        M.head = u;
    M.tail = u;
    return NULL;
}

/* The oldest unexpected message r matches, taken off the list; NULL when none. */
static struct unexp *take_unexpected(const struct hint_request_s *r)
{
    struct unexp *prev = NULL;
    for (struct unexp *u = M.head; u; prev = u, u = u->next) {
        if (!matches(r, u->src, u->tag, u->ctx))
            continue;
        if (prev)
            prev->next = u->next;
        else
            M.head = u->next;
        if (M.tail == u)
            M.tail = prev;
        return u;
    }
    return NULL;
}

void rt_match_post(struct hint_request_s *r)
{
    rt_progress(); /* messages that arrived since the last pass are older than this receive */
    struct unexp *u = take_unexpected(r);
    if (u == NULL) {
        r->next = NULL;
        r->prev = M.posted_tail;
        if (M.posted_tail)
            M.posted_tail->next = r;
        else
            M.posted_head = r;
        M.posted_tail = r;
        M.nposted++;
        return;
    }
    const struct rt_transport *tp = u->tp;
    void *msg = u->msg;
    int src = u->src;
    u->next = M.free;
    M.free = u;
    tp->deliver(r, src, msg);
}
