/*
 * runtime/p2p.c — the public point-to-point calls: argument checks, group-to-world rank
 * translation, then the transport. Every message carries its group's context id, so traffic of
 * different groups (and collectives, on ctx + 1) never matches.
 * Beyond send and receive: synchronous sends (a flag the transports honour), probes and matched
 * probes (match.c's unexpected queue), cancel of a posted receive, persistent requests (kept
 * across starts), and the completion calls over arrays, all built on one test of one request's
 * completion (rq_done) and one way to hand a completed request back (retire).
 */
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "datatype/datatype.h"
#include "runtime/group.h"
#include "runtime/match.h"
#include "runtime/p2p.h"
#include "runtime/request.h"
#include "runtime/runtime.h"
#include "runtime/trace.h"
#include "runtime/transport.h"

static int check_buffer(const void *buf, size_t count, hint_type t, size_t *bytes)
{
    int st = dt_count_bytes(t, count, bytes);
    if (st == HINT_SUCCESS && *bytes > 0 && buf == NULL)
        st = HINT_ERR_BUFFER;
    return st;
}

static struct hint_request_s *make_request(int kind, const void *buf, size_t count, hint_type t, int tag,
                                           hint_group g, uint32_t ctx)
{
    struct hint_request_s *r = rq_alloc();
    if (r == NULL)
        return NULL;
    r->kind = (uint8_t)kind;
    r->buf = (void *)buf;
    r->count = count;
    r->type = t;
    r->bytes = count * dt_size(t);
    r->contig = dt_is_contig(t);
    r->sig = dt_sig_basic(t);
    dt_retain(t); /* the user may free a derived type before the wait */
    r->tag = tag;
    r->ctx = ctx;
    r->group = g;
    r->status.tag = tag;
    return r;
}

/* A send to or receive from HINT_PROC_NULL completes at once with nothing moved. */
static void complete_null(struct hint_request_s *r)
{
    r->status.source = HINT_PROC_NULL;
    r->status.tag = HINT_ANY_TAG;
    r->status.bytes = 0;
    r->peer = HINT_PROC_NULL;
    rq_complete(r);
}

/* Hand send r to the transport that reaches group rank dest. */
static void start_send(struct hint_request_s *r, int dest)
{
    if (dest == HINT_PROC_NULL) {
        complete_null(r);
        return;
    }
    r->peer = r->group->world[dest];
    r->status.source = dest;
    rt_transport_of(r->peer)->isend(r);
}

/* Post receive r from group rank source (or any) to matching. */
static void start_recv(struct hint_request_s *r, int source)
{
    if (source == HINT_PROC_NULL) {
        complete_null(r);
        return;
    }
    r->peer = source == HINT_ANY_SOURCE ? -1 : r->group->world[source];
    rt_match_post(r);
}

static int post_send(const void *buf, size_t count, hint_type t, int dest, int tag, hint_group g, uint32_t ctx,
                     bool sync, hint_request *out)
{
    struct hint_request_s *r = make_request(RQ_SEND, buf, count, t, tag, g, ctx);
    if (r == NULL)
        return HINT_ERR_NOMEM;
    r->sync = sync;
    *out = r;
    start_send(r, dest);
    return HINT_SUCCESS;
}

int p2p_isend(const void *buf, size_t count, hint_type t, int dest, int tag, hint_group g, uint32_t ctx,
              hint_request *out)
{
    return post_send(buf, count, t, dest, tag, g, ctx, false, out);
}

int p2p_irecv(void *buf, size_t count, hint_type t, int source, int tag, hint_group g, uint32_t ctx,
              hint_request *out)
{
    struct hint_request_s *r = make_request(RQ_RECV, buf, count, t, tag, g, ctx);
    if (r == NULL)
        return HINT_ERR_NOMEM;
    *out = r;
    start_recv(r, source);
    return HINT_SUCCESS;
}

static bool request_done(void *arg) { return rq_done(arg); }

/* What a wait on a null or inactive request reports. */
static void empty_status(hint_status *st)
{
    if (st)
        *st = (hint_status){.source = HINT_PROC_NULL, .tag = HINT_ANY_TAG, .error = 0, .bytes = 0};
}

/* A completed request's status as the user sees it: the source as a rank of its group. */
static void user_status(const struct hint_request_s *r, hint_status *st)
{
    *st = r->status;
    if (r->kind == RQ_RECV && r->peer != HINT_PROC_NULL)
        st->source = r->group->from_world[r->status.source];
}

/* Fill the user's status from a completed request and give the request back; a persistent one
   stays, inactive, for its next start. Returns the request's error. */
static int retire(hint_request *rp, hint_status *st)
{
    struct hint_request_s *r = *rp;
    int err = r->status.error;
    if (r->persistent) {
        if (!r->active) {
            empty_status(st);
            return HINT_SUCCESS;
        }
        r->active = false;
        if (st)
            user_status(r, st);
        return err;
    }
    dt_release(r->type);
    if (st)
        user_status(r, st);
    rq_release(r);
    *rp = HINT_REQUEST_NULL;
    return err;
}

int p2p_wait(hint_request *r, hint_status *st)
{
    trace_wait_requests(r, 1);
    rt_wait_until(request_done, *r);
    return retire(r, st);
}

struct all_done {
    size_t n;
    hint_request *r;
};

static bool all_complete(void *arg)
{
    struct all_done *a = arg;
    for (size_t i = 0; i < a->n; i++)
        if (a->r[i] && !rq_done(a->r[i]))
            return false;
    return true;
}

static int waitall_statuses(size_t n, hint_request r[], hint_status st[])
{
    struct all_done a = {n, r};
    trace_wait_requests(r, n);
    rt_wait_until(all_complete, &a);
    int first = HINT_SUCCESS;
    for (size_t i = 0; i < n; i++) {
        if (r[i] == HINT_REQUEST_NULL) {
            empty_status(st ? &st[i] : NULL);
            continue;
        }
        int err = retire(&r[i], st ? &st[i] : NULL);
        if (first == HINT_SUCCESS)
            first = err;
    }
    return first;
}

int p2p_waitall(size_t n, hint_request r[]) { return waitall_statuses(n, r, NULL); }

/* ---- one small contiguous message without a request ----
   A blocking send or receive of a contiguous buffer first asks the peer's transport to move the
   message at once (send_now, recv_now in runtime/transport.h): no request to allocate, fill,
   complete and release, and a receive that polls the sender's next message alone. Anything the
   fast path cannot take (queued sends, a rendezvous, a posted or unexpected message that must
   match first, a transport without it) goes the general way, which gives the same result. */

static bool send_now(const void *buf, size_t bytes, int world, int tag, uint32_t ctx, int sig)
{
    const struct rt_transport *tp = rt_transport_of(world);
    return tp->send_now && tp->send_now(world, buf, bytes, tag, ctx, sig);
}

/* Poll world rank `world`'s next message while nothing else is in flight: for the wait's spin
   budget, then, when no network transport needs passes, with a sched_yield between polls for
   its yield budget, as rt_wait_until would but without a request or a progress pass per poll
   (oversubscribed ranks have no spin budget, so every blocking receive that had to wait took the
   general path: ~400 instructions more per message, issue 18's latency at P=4). true: received
   into buf (*got bytes, tag *got_tag). false: take the general path; the time spent here counts
   against its spin and yield budgets, so it goes on to sleep. No progress pass runs here: another
   rank that needs one from this rank (its channel to us full) rings our doorbell, and the
   transport's recv_now answers -1 once the bell moved (transport/shm/p2p.c channel_full). */
static bool recv_now(void *buf, size_t bytes, int world, int tag, uint32_t ctx, int sig, size_t *got,
                     int *got_tag)
{
    const struct rt_transport *tp = rt_transport_of(world);
    if (!tp->recv_now || !rt_idle())
        return false;
    int st = tp->recv_now(world, buf, bytes, tag, ctx, sig, got, got_tag);
    if (st != 0)
        return st > 0;
    long spin = rt_wait_spin_ns(), yield = rt_net_threads() ? 0 : rt_wait_yield_ns();
    if (spin <= 0 && yield <= 0)
        return false;
    long start = trace_now_ns(), spent = 0;
    for (unsigned i = 1; st == 0; i++) {
        if (spent < spin)
            rt_cpu_relax();
        else
            sched_yield();
        st = tp->recv_now(world, buf, bytes, tag, ctx, sig, got, got_tag);
        /* the clock every 32 spins, and after every yield (a yield costs more than a clock read) */
        if (st == 0 && (spent >= spin || i % 32 == 0) && (spent = trace_now_ns() - start) >= spin + yield)
            break;
    }
    if (st > 0)
        return true;
    rt_wait_spun(trace_now_ns() - start);
    return false;
}

int p2p_send_bytes(const void *buf, size_t bytes, int dest, int tag, hint_group g)
{
    if (dest != HINT_PROC_NULL && send_now(buf, bytes, g->world[dest], tag, g->ctx + 1, DT_BYTE))
        return HINT_SUCCESS;
    hint_request r;
    int st = p2p_isend(buf, bytes, HINT_BYTE, dest, tag, g, g->ctx + 1, &r);
    return st != HINT_SUCCESS ? st : p2p_wait(&r, NULL);
}

int p2p_recv_bytes(void *buf, size_t bytes, int source, int tag, hint_group g)
{
    size_t got;
    int got_tag;
    if (source >= 0 && recv_now(buf, bytes, g->world[source], tag, g->ctx + 1, DT_BYTE, &got, &got_tag))
        return HINT_SUCCESS;
    hint_request r;
    int st = p2p_irecv(buf, bytes, HINT_BYTE, source, tag, g, g->ctx + 1, &r);
    return st != HINT_SUCCESS ? st : p2p_wait(&r, NULL);
}

int p2p_sendrecv_bytes(const void *sbuf, size_t sbytes, int dest, void *rbuf, size_t rbytes, int source, int tag,
                       hint_group g)
{
    hint_request r[2];
    int st = p2p_irecv(rbuf, rbytes, HINT_BYTE, source, tag, g, g->ctx + 1, &r[0]);
    if (st != HINT_SUCCESS)
        return st;
    st = p2p_isend(sbuf, sbytes, HINT_BYTE, dest, tag, g, g->ctx + 1, &r[1]);
    if (st != HINT_SUCCESS) {
        p2p_wait(&r[0], NULL);
        return st;
    }
    return p2p_waitall(2, r);
}

/* ---- public calls ---- */

static int check_send(const void *buf, size_t count, hint_type t, int dest, int tag, hint_group g)
{
    RT_CHECK_INIT();
    int st = grp_check(g);
    if (st != HINT_SUCCESS)
        return st;
    size_t bytes;
    if ((st = check_buffer(buf, count, t, &bytes)) != HINT_SUCCESS)
        return st;
    if (dest != HINT_PROC_NULL && (dest < 0 || dest >= g->size))
        return HINT_ERR_RANK;
    if (tag < 0 || tag > HINT_TAG_UB)
        return HINT_ERR_TAG;
    return HINT_SUCCESS;
}

/* The envelope a receive or a probe names: a rank of g, any or none; a tag or any. */
static int check_envelope(int source, int tag, hint_group g)
{
    if (source != HINT_PROC_NULL && source != HINT_ANY_SOURCE && (source < 0 || source >= g->size))
        return HINT_ERR_RANK;
    if (tag != HINT_ANY_TAG && (tag < 0 || tag > HINT_TAG_UB))
        return HINT_ERR_TAG;
    return HINT_SUCCESS;
}

static int check_recv(const void *buf, size_t count, hint_type t, int source, int tag, hint_group g)
{
    RT_CHECK_INIT();
    int st = grp_check(g);
    if (st != HINT_SUCCESS)
        return st;
    size_t bytes;
    if ((st = check_buffer(buf, count, t, &bytes)) != HINT_SUCCESS)
        return st;
    return check_envelope(source, tag, g);
}

int hint_isend(const void *buf, size_t count, hint_type t, int dest, int tag, hint_group g, hint_request *r)
{
    if (r == NULL)
        return HINT_ERR_ARG;
    int st = check_send(buf, count, t, dest, tag, g);
    return st != HINT_SUCCESS ? st : p2p_isend(buf, count, t, dest, tag, g, g->ctx, r);
}

int hint_irecv(void *buf, size_t count, hint_type t, int source, int tag, hint_group g, hint_request *r)
{
    if (r == NULL)
        return HINT_ERR_ARG;
    int st = check_recv(buf, count, t, source, tag, g);
    return st != HINT_SUCCESS ? st : p2p_irecv(buf, count, t, source, tag, g, g->ctx, r);
}

int hint_send(const void *buf, size_t count, hint_type t, int dest, int tag, hint_group g)
{
    int st = check_send(buf, count, t, dest, tag, g);
    if (st != HINT_SUCCESS)
        return st;
    if (dest != HINT_PROC_NULL && dt_is_contig(t) &&
        send_now(buf, count * dt_size(t), g->world[dest], tag, g->ctx, dt_sig_basic(t)))
        return HINT_SUCCESS;
    hint_request r;
    st = p2p_isend(buf, count, t, dest, tag, g, g->ctx, &r);
    return st != HINT_SUCCESS ? st : p2p_wait(&r, NULL);
}

int hint_recv(void *buf, size_t count, hint_type t, int source, int tag, hint_group g, hint_status *status)
{
    int st = check_recv(buf, count, t, source, tag, g);
    if (st != HINT_SUCCESS)
        return st;
    size_t got;
    int got_tag;
    if (source >= 0 && dt_is_contig(t) &&
        recv_now(buf, count * dt_size(t), g->world[source], tag, g->ctx, dt_sig_basic(t), &got, &got_tag)) {
        if (status)
            *status = (hint_status){.source = source, .tag = got_tag, .error = 0, .bytes = got};
        return HINT_SUCCESS;
    }
    hint_request r;
    st = p2p_irecv(buf, count, t, source, tag, g, g->ctx, &r);
    return st != HINT_SUCCESS ? st : p2p_wait(&r, status);
}

int hint_sendrecv(const void *sbuf, size_t scount, hint_type stype, int dest, int stag, void *rbuf, size_t rcount,
                  hint_type rtype, int source, int rtag, hint_group g, hint_status *status)
{
    int st = check_send(sbuf, scount, stype, dest, stag, g);
    if (st == HINT_SUCCESS)
        st = check_recv(rbuf, rcount, rtype, source, rtag, g);
    if (st != HINT_SUCCESS)
        return st;
    hint_request r[2];
    CHECK_GOTO(p2p_irecv(rbuf, rcount, rtype, source, rtag, g, g->ctx, &r[0]), out);
    st = p2p_isend(sbuf, scount, stype, dest, stag, g, g->ctx, &r[1]);
    if (st != HINT_SUCCESS) {
        p2p_wait(&r[0], NULL);
        goto out;
    }
    hint_status sts[2];
    st = waitall_statuses(2, r, sts);
    if (status)
        *status = sts[0];
out:
    return st;
}

static int check_request(hint_request *r)
{
    RT_CHECK_INIT();
    if (r == NULL)
        return HINT_ERR_ARG;
    if (*r != HINT_REQUEST_NULL && rq_check(*r) != HINT_SUCCESS)
        return HINT_ERR_REQUEST;
    return HINT_SUCCESS;
}

int hint_wait(hint_request *r, hint_status *st)
{
    int s = check_request(r);
    if (s != HINT_SUCCESS)
        return s;
    if (*r == HINT_REQUEST_NULL) {
        empty_status(st);
        return HINT_SUCCESS;
    }
    return p2p_wait(r, st);
}

int hint_test(hint_request *r, int *done, hint_status *st)
{
    int s = check_request(r);
    if (s != HINT_SUCCESS)
        return s;
    if (done == NULL)
        return HINT_ERR_ARG;
    if (*r == HINT_REQUEST_NULL) {
        *done = 1;
        empty_status(st);
        return HINT_SUCCESS;
    }
    rt_progress();
    *done = rq_done(*r);
    return *done ? retire(r, st) : HINT_SUCCESS;
}

/* An array of requests: every handle live or HINT_REQUEST_NULL. */
static int check_requests(size_t n, hint_request r[])
{
    RT_CHECK_INIT();
    if (n > 0 && r == NULL)
        return HINT_ERR_ARG;
    for (size_t i = 0; i < n; i++)
        if (r[i] != HINT_REQUEST_NULL && rq_check(r[i]) != HINT_SUCCESS)
            return HINT_ERR_REQUEST;
    return HINT_SUCCESS;
}

int hint_waitall(size_t n, hint_request r[], hint_status st[])
{
    int s = check_requests(n, r);
    return s != HINT_SUCCESS ? s : waitall_statuses(n, r, st);
}

int hint_testall(size_t n, hint_request r[], int *done, hint_status st[])
{
    int s = check_requests(n, r);
    if (s != HINT_SUCCESS)
        return s;
    if (done == NULL)
        return HINT_ERR_ARG;
    rt_progress();
    struct all_done a = {n, r};
    *done = all_complete(&a);
    return *done ? waitall_statuses(n, r, st) : HINT_SUCCESS;
}

/* The first active request of r[0..n) that has completed: its index, or n when none has; *live
   says whether any request is active at all. */
static size_t first_done(size_t n, hint_request r[], bool *live)
{
    *live = false;
    for (size_t i = 0; i < n; i++) {
        if (rq_inactive(r[i]))
            continue;
        *live = true;
        if (rq_done(r[i]))
            return i;
    }
    return n;
}

static bool any_complete(void *arg)
{
    struct all_done *a = arg;
    bool live;
    return first_done(a->n, a->r, &live) < a->n || !live;
}

int hint_waitany(size_t n, hint_request r[], size_t *index, hint_status *st)
{
    int s = check_requests(n, r);
    if (s != HINT_SUCCESS)
        return s;
    if (index == NULL)
        return HINT_ERR_ARG;
    struct all_done a = {n, r};
    trace_wait_requests(r, n);
    rt_wait_until(any_complete, &a);
    bool live;
    size_t i = first_done(n, r, &live);
    if (i == n) { /* every request null or inactive */
        *index = HINT_UNDEFINED_INDEX;
        empty_status(st);
        return HINT_SUCCESS;
    }
    *index = i;
    return retire(&r[i], st);
}

int hint_testany(size_t n, hint_request r[], size_t *index, int *done, hint_status *st)
{
    int s = check_requests(n, r);
    if (s != HINT_SUCCESS)
        return s;
    if (index == NULL || done == NULL)
        return HINT_ERR_ARG;
    rt_progress();
    bool live;
    size_t i = first_done(n, r, &live);
    *index = i < n ? i : HINT_UNDEFINED_INDEX;
    *done = i < n || !live;
    if (i < n)
        return retire(&r[i], st);
    if (!live)
        empty_status(st);
    return HINT_SUCCESS;
}

/* Retire every active request of r[0..n) that has completed: their indices and statuses in
   order, *outcount of them, HINT_UNDEFINED_INDEX when no request was active. */
static int retire_done(size_t n, hint_request r[], size_t *outcount, size_t indices[], hint_status st[])
{
    bool live = false;
    size_t k = 0;
    int first = HINT_SUCCESS;
    for (size_t i = 0; i < n; i++) {
        if (rq_inactive(r[i]))
            continue;
        live = true;
        if (!rq_done(r[i]))
            continue;
        indices[k] = i;
        int err = retire(&r[i], st ? &st[k] : NULL);
        if (first == HINT_SUCCESS)
            first = err;
        k++;
    }
    *outcount = live ? k : HINT_UNDEFINED_INDEX;
    return first;
}

static int check_some(size_t n, hint_request r[], size_t *outcount, size_t indices[])
{
    int s = check_requests(n, r);
    if (s == HINT_SUCCESS && (outcount == NULL || (n > 0 && indices == NULL)))
        s = HINT_ERR_ARG;
    return s;
}

int hint_waitsome(size_t n, hint_request r[], size_t *outcount, size_t indices[], hint_status st[])
{
    int s = check_some(n, r, outcount, indices);
    if (s != HINT_SUCCESS)
        return s;
    struct all_done a = {n, r};
    trace_wait_requests(r, n);
    rt_wait_until(any_complete, &a);
    return retire_done(n, r, outcount, indices, st);
}

int hint_testsome(size_t n, hint_request r[], size_t *outcount, size_t indices[], hint_status st[])
{
    int s = check_some(n, r, outcount, indices);
    if (s != HINT_SUCCESS)
        return s;
    rt_progress();
    return retire_done(n, r, outcount, indices, st);
}

/* ---- synchronous sends ---- */

int hint_issend(const void *buf, size_t count, hint_type t, int dest, int tag, hint_group g, hint_request *r)
{
    if (r == NULL)
        return HINT_ERR_ARG;
    int st = check_send(buf, count, t, dest, tag, g);
    return st != HINT_SUCCESS ? st : post_send(buf, count, t, dest, tag, g, g->ctx, true, r);
}

int hint_ssend(const void *buf, size_t count, hint_type t, int dest, int tag, hint_group g)
{
    hint_request r;
    int st = hint_issend(buf, count, t, dest, tag, g, &r);
    return st != HINT_SUCCESS ? st : p2p_wait(&r, NULL);
}

/* ---- probes ---- */

/* The status a probe reports for message m of group g. */
static void probe_status(const struct hint_message_s *m, hint_group g, hint_status *st)
{
    if (st)
        *st = (hint_status){.source = g->from_world[m->src], .tag = m->tag, .error = 0, .bytes = rt_match_bytes(m)};
}

/* What a probe looks for on the unexpected queue, and what it found (taken off the queue when
   `take`: a matched probe). */
struct probe {
    uint32_t ctx;
    int src, tag; /* world rank or -1, tag or -1 */
    bool take;
    struct hint_message_s *found;
};

static bool probe_found(void *arg)
{
    struct probe *p = arg;
    p->found = p->take ? rt_match_take(p->ctx, p->src, p->tag) : rt_match_peek(p->ctx, p->src, p->tag);
    return p->found != NULL;
}

static int check_probe(int source, int tag, hint_group g)
{
    RT_CHECK_INIT();
    int st = grp_check(g);
    return st != HINT_SUCCESS ? st : check_envelope(source, tag, g);
}

static struct probe probe_of(int source, int tag, hint_group g, bool take)
{
    return (struct probe){g->ctx, source == HINT_ANY_SOURCE ? -1 : g->world[source], tag, take, NULL};
}

/* One look (after a progress pass) or a wait until a message is there; HINT_PROC_NULL finds
   "nothing from nobody" at once, as MPI's. */
static int probe(int source, int tag, hint_group g, bool wait, bool take, int *flag, hint_message *m,
                 hint_status *st)
{
    if (source == HINT_PROC_NULL) {
        *flag = 1;
        if (m)
            *m = HINT_MESSAGE_NO_PROC;
        empty_status(st);
        return HINT_SUCCESS;
    }
    struct probe p = probe_of(source, tag, g, take);
    if (wait) {
        rt_wait_until(probe_found, &p);
    } else {
        rt_progress();
        probe_found(&p);
    }
    *flag = p.found != NULL;
    if (m)
        *m = p.found;
    if (p.found) {
        probe_status(p.found, g, st);
        if (take)
            p.found->group = g;
    }
    return HINT_SUCCESS;
}

int hint_probe(int source, int tag, hint_group g, hint_status *st)
{
    int flag, s = check_probe(source, tag, g);
    return s != HINT_SUCCESS ? s : probe(source, tag, g, true, false, &flag, NULL, st);
}

int hint_iprobe(int source, int tag, hint_group g, int *flag, hint_status *st)
{
    int s = check_probe(source, tag, g);
    if (s == HINT_SUCCESS && flag == NULL)
        s = HINT_ERR_ARG;
    return s != HINT_SUCCESS ? s : probe(source, tag, g, false, false, flag, NULL, st);
}

int hint_mprobe(int source, int tag, hint_group g, hint_message *m, hint_status *st)
{
    int flag, s = check_probe(source, tag, g);
    if (s == HINT_SUCCESS && m == NULL)
        s = HINT_ERR_ARG;
    return s != HINT_SUCCESS ? s : probe(source, tag, g, true, true, &flag, m, st);
}

int hint_improbe(int source, int tag, hint_group g, int *flag, hint_message *m, hint_status *st)
{
    int s = check_probe(source, tag, g);
    if (s == HINT_SUCCESS && (flag == NULL || m == NULL))
        s = HINT_ERR_ARG;
    return s != HINT_SUCCESS ? s : probe(source, tag, g, false, true, flag, m, st);
}

/* A message handle from hint_mprobe / hint_improbe that nobody has received yet, or NO_PROC. */
static int check_message(hint_message *m)
{
    RT_CHECK_INIT();
    if (m == NULL)
        return HINT_ERR_ARG;
    if (*m == HINT_MESSAGE_NO_PROC || (*m != HINT_MESSAGE_NULL && rt_match_message_live(*m)))
        return HINT_SUCCESS;
    if (*m == HINT_MESSAGE_NULL) /* an ordinary bad argument, as for the other null handles */
        return HINT_ERR_REQUEST;
    RT_ERR("p2p", "message handle %p is not one that hint_mprobe or hint_improbe gave and no receive took yet; "
           "the call returns %s", (void *)*m, hint_strerror(HINT_ERR_REQUEST));
    return HINT_ERR_REQUEST;
}

int hint_imrecv(void *buf, size_t count, hint_type t, hint_message *m, hint_request *out)
{
    int s = check_message(m);
    if (s != HINT_SUCCESS)
        return s;
    size_t bytes;
    if (out == NULL)
        return HINT_ERR_ARG;
    if ((s = check_buffer(buf, count, t, &bytes)) != HINT_SUCCESS)
        return s;
    struct hint_message_s *msg = *m;
    bool none = msg == HINT_MESSAGE_NO_PROC;
    struct hint_request_s *r = make_request(RQ_RECV, buf, count, t, none ? HINT_ANY_TAG : msg->tag,
                                            none ? HINT_GROUP_NULL : msg->group, none ? 0 : msg->ctx);
    if (r == NULL)
        return HINT_ERR_NOMEM;
    *out = r;
    *m = HINT_MESSAGE_NULL;
    if (none) {
        complete_null(r);
        return HINT_SUCCESS;
    }
    r->peer = msg->src;
    rt_match_deliver_taken(msg, r);
    return HINT_SUCCESS;
}

int hint_mrecv(void *buf, size_t count, hint_type t, hint_message *m, hint_status *st)
{
    hint_request r;
    int s = hint_imrecv(buf, count, t, m, &r);
    return s != HINT_SUCCESS ? s : p2p_wait(&r, st);
}

/* ---- cancel ---- */

/* A cancelled receive's status carries this tag, which no message has (user tags are >= 0,
   HINT_ANY_TAG is -1): hint_status has no field of its own for it. */
#define TAG_CANCELLED (-3)

int hint_cancel(hint_request *rp)
{
    int s = check_request(rp);
    if (s != HINT_SUCCESS)
        return s;
    struct hint_request_s *r = *rp;
    if (r == HINT_REQUEST_NULL)
        return HINT_ERR_REQUEST;
    if (r->kind != RQ_RECV) {
        RT_ERR("p2p", "only receives can be cancelled (a send may be in its receiver's hands already); "
               "complete request %p with hint_wait or hint_test", (void *)r);
        return HINT_ERR_UNSUPPORTED;
    }
    /* Matched already (or inactive): it completes as it would have, and the status says so. */
    if (rt_match_cancel(r)) {
        r->status = (hint_status){.source = HINT_PROC_NULL, .tag = TAG_CANCELLED, .error = 0, .bytes = 0};
        r->peer = HINT_PROC_NULL;
        rq_complete(r);
    }
    return HINT_SUCCESS;
}

int hint_test_cancelled(const hint_status *st, int *flag)
{
    if (st == NULL || flag == NULL)
        return HINT_ERR_ARG;
    *flag = st->tag == TAG_CANCELLED && st->source == HINT_PROC_NULL;
    return HINT_SUCCESS;
}

/* ---- persistent requests ---- */

/* An inactive persistent request: it counts as completed, so waits and tests return at once. */
static int make_persistent(int kind, const void *buf, size_t count, hint_type t, int rank, int tag, hint_group g,
                           hint_request *out)
{
    struct hint_request_s *r = make_request(kind, buf, count, t, tag, g, g->ctx);
    if (r == NULL)
        return HINT_ERR_NOMEM;
    r->persistent = true;
    r->prank = rank;
    r->complete = true;
    *out = r;
    return HINT_SUCCESS;
}

int hint_send_init(const void *buf, size_t count, hint_type t, int dest, int tag, hint_group g, hint_request *r)
{
    if (r == NULL)
        return HINT_ERR_ARG;
    int st = check_send(buf, count, t, dest, tag, g);
    return st != HINT_SUCCESS ? st : make_persistent(RQ_SEND, buf, count, t, dest, tag, g, r);
}

int hint_recv_init(void *buf, size_t count, hint_type t, int source, int tag, hint_group g, hint_request *r)
{
    if (r == NULL)
        return HINT_ERR_ARG;
    int st = check_recv(buf, count, t, source, tag, g);
    return st != HINT_SUCCESS ? st : make_persistent(RQ_RECV, buf, count, t, source, tag, g, r);
}

static int check_startable(hint_request r)
{
    if (r == HINT_REQUEST_NULL || rq_check(r) != HINT_SUCCESS)
        return HINT_ERR_REQUEST;
    if (!r->persistent) {
        RT_ERR("p2p", "request %p was not made by hint_send_init or hint_recv_init, so it cannot be started",
               (void *)r);
        return HINT_ERR_REQUEST;
    }
    if (r->active) {
        RT_ERR("p2p", "request %p is started already; complete it with hint_wait or hint_test before the next "
               "start", (void *)r);
        return HINT_ERR_REQUEST;
    }
    return HINT_SUCCESS;
}

/* The transport's state from the last run is zeroed as rq_alloc zeroes a new request's. */
static void start_persistent(struct hint_request_s *r)
{
    memset(&r->next, 0, sizeof *r - offsetof(struct hint_request_s, next));
    r->complete = false;
    r->active = true;
    r->status = (hint_status){.tag = r->tag};
    if (r->kind == RQ_SEND)
        start_send(r, r->prank);
    else
        start_recv(r, r->prank);
}

int hint_start(hint_request *r)
{
    RT_CHECK_INIT();
    if (r == NULL)
        return HINT_ERR_ARG;
    int s = check_startable(*r);
    if (s == HINT_SUCCESS)
        start_persistent(*r);
    return s;
}

int hint_startall(size_t n, hint_request r[])
{
    RT_CHECK_INIT();
    if (n > 0 && r == NULL)
        return HINT_ERR_ARG;
    for (size_t i = 0; i < n; i++) {
        int s = check_startable(r[i]);
        if (s != HINT_SUCCESS)
            return s;
    }
    for (size_t i = 0; i < n; i++)
        start_persistent(r[i]);
    return HINT_SUCCESS;
}

int hint_request_free(hint_request *rp)
{
    int s = check_request(rp);
    if (s != HINT_SUCCESS)
        return s;
    struct hint_request_s *r = *rp;
    if (r == HINT_REQUEST_NULL)
        return HINT_ERR_REQUEST;
    *rp = HINT_REQUEST_NULL;
    if (!rq_done(r)) { /* in flight: it completes on its own, nobody waits for it */
        rq_detach(r);
        return HINT_SUCCESS;
    }
    dt_release(r->type);
    rq_release(r);
    return HINT_SUCCESS;
}
