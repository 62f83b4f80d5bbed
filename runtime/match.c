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

#include "runtime/match.h"
#include "runtime/request.h"
#include "runtime/transport.h"

/* An entry of the unexpected queue (struct hint_message_s, runtime/match.h) is also the
   hint_message that a matched probe hands out. HINT_MESSAGE_NO_PROC, what hint_mprobe gives for
   HINT_PROC_NULL, is this one, never in the queue. */
HINT_API struct hint_message_s hint_message_no_proc_;

/* Pool blocks are chained so they can be freed; n entries each. */
struct pool_block {
    struct pool_block *next;
    size_t n;
    struct hint_message_s entries[];
};

static struct {
    struct hint_request_s *posted_head, *posted_tail;
    int nposted;
    struct hint_message_s *head, *tail, *free;
    struct pool_block *blocks;
} M;

int rt_match_reserve(size_t n)
{
    if (n == 0)
        return HINT_SUCCESS;
    struct pool_block *b = malloc(sizeof *b + n * sizeof(struct hint_message_s));
    if (b == NULL)
        return HINT_ERR_NOMEM;
    b->next = M.blocks;
    b->n = n;
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

bool rt_match_peek_any(void) { return M.head != NULL; }

static inline bool envelope_matches(int want_src, int want_tag, uint32_t want_ctx, int src, int tag, uint32_t ctx)
{
    return want_ctx == ctx && (want_src < 0 || want_src == src) && (want_tag < 0 || want_tag == tag);
}

static inline bool matches(const struct hint_request_s *r, int src, int tag, uint32_t ctx)
{
    return envelope_matches(r->peer, r->tag, r->ctx, src, tag, ctx);
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
    r->posted = false;
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
    struct hint_message_s *u = M.free;
    M.free = u->next;
    *u = (struct hint_message_s){.tp = tp, .msg = msg, .src = src, .tag = tag, .ctx = ctx, .next = NULL};
    if (M.tail)
        M.tail->next = u;
    else
        M.head = u;
    M.tail = u;
    return NULL;
}

/* The oldest unexpected message on ctx from src (-1: any) with tag (-1: any), taken off the
   list when `take`; NULL when none. */
static struct hint_message_s *find_unexpected(int src, int tag, uint32_t ctx, bool take)
{
    struct hint_message_s *prev = NULL;
    for (struct hint_message_s *u = M.head; u; prev = u, u = u->next) {
        if (!envelope_matches(src, tag, ctx, u->src, u->tag, u->ctx))
            continue;
        if (!take)
            return u;
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

/* The oldest unexpected message r matches, taken off the list; NULL when none. */
static struct hint_message_s *take_unexpected(const struct hint_request_s *r)
{
    return find_unexpected(r->peer, r->tag, r->ctx, true);
}

/* Hand unexpected message u to receive r through its transport; u's entry goes back to the pool
   first, as the transport may report new arrivals while it delivers. */
static void deliver_entry(struct hint_message_s *u, struct hint_request_s *r)
{
    const struct rt_transport *tp = u->tp;
    void *msg = u->msg;
    int src = u->src;
    u->next = M.free;
    M.free = u;
    tp->deliver(r, src, msg);
}

/* No progress pass first: a message still in its transport is matched against the posted
   receives in post order when a pass finds it, which gives it the same receive as taking it now
   would (the oldest posted one that matches; one sender's messages are found in send order).
   A pass per post made a window of small receives the bottleneck of a stream of small sends:
   each receive paid a pass, and a message found while posting went through the unexpected
   queue, often spilled out of its cell (bench bandwidth, 8 B at P=2: 680 instructions per
   receive, 258 without the pass; 53 against 114 MB/s). */
void rt_match_post(struct hint_request_s *r)
{
    struct hint_message_s *u = take_unexpected(r);
    if (u == NULL) {
        r->next = NULL;
        r->prev = M.posted_tail;
        if (M.posted_tail)
            M.posted_tail->next = r;
        else
            M.posted_head = r;
        M.posted_tail = r;
        M.nposted++;
        r->posted = true;
        return;
    }
    deliver_entry(u, r);
}

struct hint_message_s *rt_match_peek(uint32_t ctx, int src, int tag)
{
    return find_unexpected(src, tag, ctx, false);
}

struct hint_message_s *rt_match_take(uint32_t ctx, int src, int tag)
{
    struct hint_message_s *u = find_unexpected(src, tag, ctx, true);
    if (u) {
        u->next = NULL;
        u->taken = true;
    }
    return u;
}

size_t rt_match_bytes(const struct hint_message_s *m)
{
    return m->tp->msg_bytes ? m->tp->msg_bytes(m->msg) : 0;
}

bool rt_match_message_live(const struct hint_message_s *m)
{
    for (const struct pool_block *b = M.blocks; b; b = b->next) {
        uintptr_t first = (uintptr_t)b->entries, p = (uintptr_t)m;
        if (p >= first && p < first + b->n * sizeof(struct hint_message_s) && (p - first) % sizeof(struct hint_message_s) == 0)
            return m->taken;
    }
    return false;
}

void rt_match_deliver_taken(struct hint_message_s *m, struct hint_request_s *r)
{
    m->taken = false;
    m->group = NULL;
    deliver_entry(m, r);
}

bool rt_match_cancel(struct hint_request_s *r)
{
    if (!r->posted)
        return false;
    posted_remove(r);
    return true;
}
