/*
 * runtime/p2p.c — the public point-to-point calls: argument checks, group-to-world rank
 * translation, then the transport. Every message carries its group's context id, so traffic of
 * different groups (and collectives, on ctx + 1) never matches.
 */
#include <stdint.h>
#include <string.h>

#include "datatype/datatype.h"
#include "runtime/group.h"
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

int p2p_isend(const void *buf, size_t count, hint_type t, int dest, int tag, hint_group g, uint32_t ctx,
              hint_request *out)
{
    struct hint_request_s *r = make_request(RQ_SEND, buf, count, t, tag, g, ctx);
    if (r == NULL)
        return HINT_ERR_NOMEM;
    *out = r;
    if (dest == HINT_PROC_NULL) {
        complete_null(r);
        return HINT_SUCCESS;
    }
    r->peer = g->world[dest];
    r->status.source = dest;
    rt_transport_of(r->peer)->isend(r);
    return HINT_SUCCESS;
}

int p2p_irecv(void *buf, size_t count, hint_type t, int source, int tag, hint_group g, uint32_t ctx,
              hint_request *out)
{
    struct hint_request_s *r = make_request(RQ_RECV, buf, count, t, tag, g, ctx);
    if (r == NULL)
        return HINT_ERR_NOMEM;
    *out = r;
    if (source == HINT_PROC_NULL) {
        complete_null(r);
        return HINT_SUCCESS;
    }
    r->peer = source == HINT_ANY_SOURCE ? -1 : g->world[source];
    rt_match_post(r);
    return HINT_SUCCESS;
}

static bool request_done(void *arg) { return ((struct hint_request_s *)arg)->complete; }

/* Fill the user's status from a completed request and give the request back. */
static int retire(hint_request *rp, hint_status *st)
{
    struct hint_request_s *r = *rp;
    int err = r->status.error;
    dt_release(r->type);
    if (st) {
        *st = r->status;
        if (r->kind == RQ_RECV && r->peer != HINT_PROC_NULL)
            st->source = r->group->from_world[r->status.source];
    }
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
        if (a->r[i] && !a->r[i]->complete)
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
            if (st)
                st[i] = (hint_status){.source = HINT_PROC_NULL, .tag = HINT_ANY_TAG};
            continue;
        }
        int err = retire(&r[i], st ? &st[i] : NULL);
        if (first == HINT_SUCCESS)
            first = err;
    }
    return first;
}

int p2p_waitall(size_t n, hint_request r[]) { return waitall_statuses(n, r, NULL); }

int p2p_send_bytes(const void *buf, size_t bytes, int dest, int tag, hint_group g)
{
    hint_request r;
    int st = p2p_isend(buf, bytes, HINT_BYTE, dest, tag, g, g->ctx + 1, &r);
    return st != HINT_SUCCESS ? st : p2p_wait(&r, NULL);
}

int p2p_recv_bytes(void *buf, size_t bytes, int source, int tag, hint_group g)
{
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

static int check_recv(const void *buf, size_t count, hint_type t, int source, int tag, hint_group g)
{
    RT_CHECK_INIT();
    int st = grp_check(g);
    if (st != HINT_SUCCESS)
        return st;
    size_t bytes;
    if ((st = check_buffer(buf, count, t, &bytes)) != HINT_SUCCESS)
        return st;
    if (source != HINT_PROC_NULL && source != HINT_ANY_SOURCE && (source < 0 || source >= g->size))
        return HINT_ERR_RANK;
    if (tag != HINT_ANY_TAG && (tag < 0 || tag > HINT_TAG_UB))
        return HINT_ERR_TAG;
    return HINT_SUCCESS;
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
    hint_request r;
    int st = hint_isend(buf, count, t, dest, tag, g, &r);
    return st != HINT_SUCCESS ? st : p2p_wait(&r, NULL);
}

int hint_recv(void *buf, size_t count, hint_type t, int source, int tag, hint_group g, hint_status *status)
{
    hint_request r;
    int st = hint_irecv(buf, count, t, source, tag, g, &r);
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

static void empty_status(hint_status *st)
{
    if (st)
        *st = (hint_status){.source = HINT_PROC_NULL, .tag = HINT_ANY_TAG, .error = 0, .bytes = 0};
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
    *done = (*r)->complete;
    return *done ? retire(r, st) : HINT_SUCCESS;
}

int hint_waitall(size_t n, hint_request r[], hint_status st[])
{
    RT_CHECK_INIT();
    if (n > 0 && r == NULL)
        return HINT_ERR_ARG;
    for (size_t i = 0; i < n; i++)
        if (r[i] != HINT_REQUEST_NULL && rq_check(r[i]) != HINT_SUCCESS)
            return HINT_ERR_REQUEST;
    return waitall_statuses(n, r, st);
}
