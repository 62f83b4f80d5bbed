/*
 * runtime/request.h — requests: what a posted send or receive is while a transport moves it.
 * The runtime owns the struct; transports fill the fields marked "transport".
 */
#ifndef HINT_RUNTIME_REQUEST_H
#define HINT_RUNTIME_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hint.h"
#include "runtime/memcopy.h"

#define RQ_MAGIC 0x72657175u

enum rq_kind { RQ_SEND = 1, RQ_RECV = 2, RQ_COLL = 3 /* a nonblocking collective (collectives/sched.c) */ };

struct hint_request_s {
    uint32_t magic;
    uint8_t kind;          /* enum rq_kind */
    bool complete;         /* set once by the transport; then status is final */
    bool contig;           /* buf + offset is the packed stream (no datatype engine needed) */
    int sig;               /* predefined kind of the type signature (DT_NONE: mixed) */
    void *buf;             /* user buffer (const for sends) */
    size_t count;
    hint_type type;
    size_t bytes;          /* packed bytes of count elements (the capacity for a receive) */
    int peer;              /* world rank of the destination / source; -1 for any source */
    int tag;               /* -1 for any tag (receive only) */
    uint32_t ctx;          /* context id of the group */
    hint_group group;      /* to express the status source in the group's ranks */
    hint_status status;    /* source is a world rank until completion */
    bool sync;             /* send: complete only once a receive matched it (hint_ssend); every
                              transport honours it */
    bool posted;           /* receive: on match.c's posted list, so hint_cancel may still take it */
    bool persistent;       /* made by hint_send_init / hint_recv_init: lives across starts */
    bool active;           /* persistent: started and not yet completed by a wait or test */
    int prank;             /* persistent: the destination / source as given (a rank of group) */
    struct hint_request_s *detached; /* freed by hint_request_free while in flight: request.c's list */
    /* transport: from here to the end, zeroed by rq_alloc and again by every hint_start */
    struct hint_request_s *next, *prev; /* transport: in one of its lists */
    /* transport: protocol state */
    uint64_t msgid;        /* rendezvous id of a large send/receive */
    uint32_t slot;         /* send: cell of the rendezvous header */
    uint8_t phase;         /* send: waiting for clear-to-send / streaming */
    size_t off;            /* send: bytes handed to the transport; receive: bytes arrived */
    size_t total;          /* receive: bytes of the matched message */
    uint64_t tp_tag;       /* ofi: tag of the rendezvous data (chosen by the receiver) */
    uint64_t tp_cookie;    /* ofi receive: the sender's handle, echoed in the clear-to-send */
    void *tp_bounce;       /* ofi: packed copy of a non-contiguous rendezvous message */
    void *tp_mr;           /* ofi: the buffer's registration when the provider needs one */
    uint32_t tp_inflight;  /* ofi: fabric operations of this request not completed yet */
};

/* A transport's queue of requests, linked through their next/prev fields (a request is on at
   most one such list at a time). */
struct rq_list {
    struct hint_request_s *head, *tail;
};
static inline void rq_list_push(struct rq_list *l, struct hint_request_s *r)
{
    r->next = NULL;
    r->prev = l->tail;
    if (l->tail)
        l->tail->next = r;
    else
        l->head = r;
    l->tail = r;
}
static inline void rq_list_push_front(struct rq_list *l, struct hint_request_s *r)
{
    r->prev = NULL;
    r->next = l->head;
    if (l->head)
        l->head->prev = r;
    else
        l->tail = r;
    l->head = r;
}
static inline void rq_list_remove(struct rq_list *l, struct hint_request_s *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        l->head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    else
        l->tail = r->prev;
    r->next = r->prev = NULL;
}
static inline struct hint_request_s *rq_list_pop(struct rq_list *l)
{
    struct hint_request_s *r = l->head;
    rq_list_remove(l, r);
    return r;
}

/* A request from the per-rank pool (no malloc on the hot path). */
struct hint_request_s *rq_alloc(void);
void rq_release(struct hint_request_s *r);
/* hint_request_free of a request still in flight: released once it has completed, when the
   pool next runs dry (or at finalize), since nobody will wait for it. */
void rq_detach(struct hint_request_s *r);
/* At finalize: progress until the detached requests have completed (a send whose data the
   receiver took may still wait for this rank's progress to see it), for at most a second; what
   is left is finalize's "never completed" report. */
void rq_settle_detached(void);
void rq_pool_fini(void);
/* HINT_SUCCESS when r is a request in flight (not HINT_REQUEST_NULL, not completed and released
   already, not a pointer to anything else); else HINT_ERR_REQUEST, with a message. */
int rq_check(hint_request r);

/* Copy the slice [off, off+len) of r's packed stream out of / into its buffer. Inline for a
   contiguous buffer (a small message's copy is then a few moves, not two calls); the datatype
   engine's path is rq_pack_typed / rq_unpack_typed. rt_memcpy, not memcpy: a user buffer 1-15
   bytes off the cell or heap copy modulo 64 made glibc's rep movsb 17x slower beyond 2 KiB
   (runtime/memcopy.h), e.g. linear gather's receives at rbuf + p * 24577. */
void rq_pack_typed(const struct hint_request_s *r, size_t off, void *dst, size_t len);
void rq_unpack_typed(struct hint_request_s *r, size_t off, const void *src, size_t len);
static inline void rq_pack(const struct hint_request_s *r, size_t off, void *dst, size_t len)
{
    if (r->contig)
        rt_memcpy(dst, (const char *)r->buf + off, len);
    else
        rq_pack_typed(r, off, dst, len);
}
static inline void rq_unpack(struct hint_request_s *r, size_t off, const void *src, size_t len)
{
    if (r->contig)
        rt_memcpy((char *)r->buf + off, src, len);
    else
        rq_unpack_typed(r, off, src, len);
}

/* The transport calls this once r's data has fully moved (status and error filled in). */
static inline void rq_complete(struct hint_request_s *r) { r->complete = true; }

/* Whether r has completed: the one test behind every wait and test call (an inactive persistent
   request counts as completed), so a kind of request that completes some other way hooks in here. */
static inline bool rq_done(struct hint_request_s *r) { return r->complete; }

/* MPI's "null or inactive" request: waits and tests skip it and report an empty status. */
static inline bool rq_inactive(const struct hint_request_s *r)
{
    return r == NULL || (r->persistent && !r->active);
}

/* One pause between two polls of a line another core writes (25 ns on this machine's EPYC). */
static inline void rt_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Drive every transport once; cheap when nothing happened. Inline, with the started transports'
   progress hooks in one array (runtime/transport.c): the innermost wait loop makes one indirect
   call per transport and nothing else. */
extern struct rt_progress_list {
    int n;
    void (*hook[4])(void);
} rt_progress_list;
static inline void rt_progress(void)
{
    for (int i = 0; i < rt_progress_list.n; i++)
        rt_progress_list.hook[i]();
}
/* Progress until done(arg) is true, spinning, then yielding, then sleeping (runtime/wait.c). */
void rt_wait_until(bool (*done)(void *), void *arg);
void rt_wait_init(void);
/* How long a waiting rank spins before it yields (HINT_WAIT_SPIN_US, or the default for the
   node's load), and: a fast path spun ns already before calling rt_wait_until, which counts
   them as spent (one spin budget per wait, not two). */
long rt_wait_spin_ns(void);
void rt_wait_spun(long ns);
/* How long a waiting rank yields, after its spin, before it sleeps (HINT_WAIT_YIELD_US). */
long rt_wait_yield_ns(void);

#endif
