/*
 * collectives/sched.c — the schedule engine of the nonblocking collectives (sched.h): steps in
 * rounds, posted and advanced from rt_progress, and the request that completes with them.
 */
#include <stdint.h>
#include <stdlib.h>

#include "collectives/sched.h"
#include "datatype/datatype.h"
#include "runtime/group.h"
#include "runtime/p2p.h"
#include "runtime/request.h"
#include "runtime/runtime.h"
#include "runtime/transport.h"

enum step_kind { SC_SEND, SC_RECV, SC_COPY, SC_REDUCE, SC_REDUCE_AFTER, SC_POLL, SC_ROUND };

struct step {
    uint8_t kind;          /* enum step_kind */
    int peer;              /* send, receive: a rank of the group */
    const void *src;       /* send: the data; copy, reduce: the input */
    void *dst;             /* receive: where it lands; copy: the output; reduce: inout */
    size_t scount, dcount; /* elements of st / dt (bytes when the type is NULL); reduce: scount
                              elements, reduce_after: dcount its bytes */
    hint_type st, dt;      /* held (dt_retain) until the schedule is freed */
    int tag;               /* send, receive: 0 for the call's tag, else this one */
    sched_poll_fn poll;    /* poll: called with `state` until it returns true */
    void *state;
};

struct sched {
    struct step *steps;
    int n, cap;
    int pc;                /* the next step to run */
    hint_request *rq;      /* the current round's requests, nrq of them (room for the largest round) */
    size_t nrq;
    const struct step *polls[SCHED_POLLS]; /* the current round's polls that have not finished */
    int npoll;
    void **owned;          /* scratch freed with the schedule */
    int nowned, ownedcap;
    hint_group g;
    int tag;
    hint_op op;
    int basic;
    int err;               /* the first error; once set, no further step is posted */
    struct hint_request_s *req;
    struct sched *next, *prev; /* in the list of schedules in flight */
    void (*on_free)(void *); /* sched_on_free's, called when the schedule is freed */
    void *on_free_arg;
    bool free_group;       /* the caller freed g meanwhile: the last schedule on it destroys it */
    hint_op free_op;       /* the caller freed this user op meanwhile: the same */
};

static struct sched *active;
static bool progressing; /* sched_progress_all is running: no nested pass */

struct sched *sched_new(const struct coll_args *a)
{
    struct sched *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    s->g = a->g;
    s->tag = a->tag;
    s->op = a->op;
    s->basic = a->basic;
    return s;
}

static void note_error(struct sched *s, int st)
{
    if (s->err == HINT_SUCCESS)
        s->err = st;
}

void sched_adopt(struct sched *s, void *p)
{
    if (p == NULL)
        return;
    if (s->nowned == s->ownedcap) {
        int cap = s->ownedcap ? 2 * s->ownedcap : 4;
        void **o = realloc(s->owned, (size_t)cap * sizeof *o);
        if (o == NULL) {
            free(p);
            note_error(s, HINT_ERR_NOMEM);
            return;
        }
        s->owned = o;
        s->ownedcap = cap;
    }
    s->owned[s->nowned++] = p;
}

void *sched_scratch(struct sched *s, size_t n)
{
    if (n == 0)
        return NULL;
    void *p = malloc(n);
    if (p == NULL) {
        note_error(s, HINT_ERR_NOMEM);
        return NULL;
    }
    sched_adopt(s, p);
    return s->err == HINT_SUCCESS ? p : NULL;
}

static void add(struct sched *s, struct step st)
{
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        struct step *n = realloc(s->steps, (size_t)cap * sizeof *n);
        if (n == NULL) {
            note_error(s, HINT_ERR_NOMEM);
            return;
        }
        s->steps = n;
        s->cap = cap;
    }
    dt_retain(st.st); /* the caller may free a derived type before the wait */
    dt_retain(st.dt);
    s->steps[s->n++] = st;
}

void sched_send(struct sched *s, const void *buf, size_t count, hint_type t, int peer)
{
    add(s, (struct step){.kind = SC_SEND, .peer = peer, .src = buf, .scount = count, .st = t});
}

void sched_recv(struct sched *s, void *buf, size_t count, hint_type t, int peer)
{
    add(s, (struct step){.kind = SC_RECV, .peer = peer, .dst = buf, .dcount = count, .dt = t});
}

void sched_send_tag(struct sched *s, const void *buf, size_t bytes, int peer, int tag)
{
    add(s, (struct step){.kind = SC_SEND, .peer = peer, .src = buf, .scount = bytes, .tag = tag});
}

void sched_recv_tag(struct sched *s, void *buf, size_t bytes, int peer, int tag)
{
    add(s, (struct step){.kind = SC_RECV, .peer = peer, .dst = buf, .dcount = bytes, .tag = tag});
}

void sched_copy(struct sched *s, const void *src, size_t scount, hint_type st, void *dst, size_t dcount, hint_type dt)
{
    if (src == dst && st == dt && scount == dcount)
        return;
    add(s, (struct step){.kind = SC_COPY, .src = src, .dst = dst, .scount = scount, .dcount = dcount, .st = st,
                         .dt = dt});
}

void sched_reduce(struct sched *s, const void *in, void *inout, size_t count)
{
    add(s, (struct step){.kind = SC_REDUCE, .src = in, .dst = inout, .scount = count});
}

void sched_reduce_after(struct sched *s, void *in, void *inout, size_t count, size_t bytes)
{
    add(s, (struct step){.kind = SC_REDUCE_AFTER, .src = in, .dst = inout, .scount = count, .dcount = bytes});
}

void sched_round(struct sched *s) { add(s, (struct step){.kind = SC_ROUND}); }

void sched_poll(struct sched *s, sched_poll_fn fn, void *state)
{
    add(s, (struct step){.kind = SC_POLL, .poll = fn, .state = state});
}

void sched_fail(struct sched *s, int st) { note_error(s, st); }
int sched_error(const struct sched *s) { return s->err; }

void sched_on_free(struct sched *s, void (*fn)(void *), void *arg)
{
    s->on_free = fn;
    s->on_free_arg = arg;
}

static void sched_free(struct sched *s)
{
    if (s->on_free)
        s->on_free(s->on_free_arg);
    for (int i = 0; i < s->n; i++) {
        dt_release(s->steps[i].st);
        dt_release(s->steps[i].dt);
    }
    for (int i = 0; i < s->nowned; i++)
        free(s->owned[i]);
    free(s->owned);
    free(s->steps);
    free(s->rq);
    free(s);
}

void sched_discard(struct sched *s) { sched_free(s); }

/* ---- running ---- */

static hint_type or_bytes(hint_type t) { return t ? t : HINT_BYTE; }

static void run_copy(struct sched *s, const struct step *p)
{
    size_t bytes;
    if (p->st == NULL && p->dt == NULL) {
        copy_bytes(p->dst, p->src, p->scount);
        return;
    }
    int st = dt_copy_typed(p->src, p->scount, or_bytes(p->st), p->dst, p->dcount, or_bytes(p->dt), &bytes);
    if (st != HINT_SUCCESS)
        note_error(s, st);
}

static void run_step(struct sched *s, const struct step *p)
{
    uint32_t ctx = s->g->ctx + 1;
    int st = HINT_SUCCESS, tag = p->tag ? p->tag : s->tag;
    switch (p->kind) {
    case SC_SEND:
        st = p2p_isend(p->src, p->scount, or_bytes(p->st), p->peer, tag, s->g, ctx, &s->rq[s->nrq]);
        s->nrq += st == HINT_SUCCESS;
        break;
    case SC_RECV:
        st = p2p_irecv(p->dst, p->dcount, or_bytes(p->dt), p->peer, tag, s->g, ctx, &s->rq[s->nrq]);
        s->nrq += st == HINT_SUCCESS;
        break;
    case SC_COPY: run_copy(s, p); break;
    case SC_REDUCE: op_reduce(s->op, s->basic, p->src, p->dst, p->scount); break;
    case SC_REDUCE_AFTER:
        op_reduce_ordered(s->op, s->basic, (void *)p->src, p->dst, p->scount, p->dcount, false);
        break;
    case SC_POLL:
        if (s->npoll < SCHED_POLLS && !p->poll(s, p->state))
            s->polls[s->npoll++] = p;
        else if (s->npoll == SCHED_POLLS)
            st = HINT_ERR_INTERNAL; /* a builder adds at most SCHED_POLLS per round */
        break;
    default: break;
    }
    if (st != HINT_SUCCESS)
        note_error(s, st);
}

/* Runs the steps of the next round: local ones now, sends and receives posted. After an error
   nothing more is posted (the requests already in flight still complete). */
static void run_round(struct sched *s)
{
    while (s->pc < s->n && s->err == HINT_SUCCESS) {
        const struct step *p = &s->steps[s->pc++];
        if (p->kind == SC_ROUND)
            return;
        run_step(s, p);
    }
    s->pc = s->n;
}

/* Gives back a completed internal request: its error, its hold on the type, its slot. Not
   p2p_wait, which would reset the wait record of the wait this pass runs inside. */
static int retire(struct hint_request_s *r)
{
    int err = r->status.error;
    dt_release(r->type);
    rq_release(r);
    return err;
}

/* Polls the round's unfinished polls once; true when none is left. */
static bool polls_done(struct sched *s)
{
    int left = 0;
    for (int i = 0; i < s->npoll; i++)
        if (!s->polls[i]->poll(s, s->polls[i]->state))
            s->polls[left++] = s->polls[i];
    s->npoll = left;
    return left == 0;
}

/* True when every request and poll of the round has completed (then the requests are given
   back). */
static bool round_complete(struct sched *s)
{
    if (!polls_done(s))
        return false;
    for (size_t i = 0; i < s->nrq; i++)
        if (!rq_done(s->rq[i]))
            return false;
    for (size_t i = 0; i < s->nrq; i++) {
        int err = retire(s->rq[i]);
        if (err != HINT_SUCCESS)
            note_error(s, err);
    }
    s->nrq = 0;
    return true;
}

/* Advances s as far as it goes now; true once it has finished. */
static bool advance(struct sched *s)
{
    while (round_complete(s)) {
        if (s->pc == s->n)
            return true;
        run_round(s);
    }
    return false;
}

static void unlink_active(struct sched *s)
{
    if (s->prev)
        s->prev->next = s->next;
    else
        active = s->next;
    if (s->next)
        s->next->prev = s->prev;
}

/* A schedule in flight still uses g / user op u (or one of u's bound copies). */
static bool group_in_use(hint_group g)
{
    for (struct sched *s = active; s; s = s->next)
        if (s->g == g)
            return true;
    return false;
}

static bool op_uses(hint_op bound, hint_op u)
{
    for (hint_op b = u; b != NULL; b = b->bound)
        if (b == bound)
            return true;
    return false;
}

/* grp_free_deferred and op_free_deferred (runtime/group.h, op.h): the schedules in flight on g
   (using u) take over its free. */
static bool hold_group(hint_group g)
{
    bool used = false;
    for (struct sched *s = active; s; s = s->next)
        if (s->g == g)
            used = s->free_group = true;
    return used;
}

static bool hold_op(hint_op u)
{
    bool used = false;
    for (struct sched *s = active; s; s = s->next)
        if (op_uses(s->op, u)) {
            s->free_op = u;
            used = true;
        }
    return used;
}

/* s has left the list: the frees it took over happen once no other schedule needs them. */
static void release_held(struct sched *s)
{
    if (s->free_op) {
        bool used = false;
        for (struct sched *t = active; t && !used; t = t->next)
            used = t->free_op == s->free_op;
        if (!used)
            op_destroy(s->free_op);
    }
    if (s->free_group && !group_in_use(s->g))
        grp_destroy(s->g);
}

static void finish(struct sched *s)
{
    s->req->status.error = s->err;
    rq_complete(s->req);
    release_held(s);
    sched_free(s);
}

void sched_progress_all(void)
{
    if (progressing)
        return;
    progressing = true;
    for (struct sched *s = active, *next; s; s = next) {
        next = s->next;
        if (advance(s)) {
            unlink_active(s);
            finish(s);
        }
    }
    if (active == NULL)
        rt_progress_hook_remove(sched_progress_all);
    progressing = false;
}

int sched_pending(void)
{
    int n = 0;
    for (struct sched *s = active; s; s = s->next)
        n++;
    return n;
}

/* Room for the requests of the largest round. */
static int size_rounds(struct sched *s)
{
    size_t most = 0, here = 0;
    for (int i = 0; i <= s->n; i++) {
        if (i == s->n || s->steps[i].kind == SC_ROUND) {
            most = here > most ? here : most;
            here = 0;
        } else {
            here += s->steps[i].kind == SC_SEND || s->steps[i].kind == SC_RECV;
        }
    }
    s->rq = calloc(most ? most : 1, sizeof *s->rq);
    return s->rq ? HINT_SUCCESS : HINT_ERR_NOMEM;
}

static struct hint_request_s *coll_request(hint_group g)
{
    struct hint_request_s *r = rq_alloc();
    if (r == NULL)
        return NULL;
    r->kind = RQ_COLL;
    r->group = g;
    r->peer = HINT_ANY_SOURCE; /* waits on many ranks (a hang report says "any") */
    r->tag = HINT_ANY_TAG;
    r->ctx = g->ctx + 1;
    r->status = (hint_status){.source = HINT_PROC_NULL, .tag = HINT_ANY_TAG};
    return r;
}

static void link_active(struct sched *s)
{
    s->prev = NULL;
    s->next = active;
    if (active)
        active->prev = s;
    active = s;
}

int sched_start(struct sched *s, hint_request *out)
{
    grp_free_deferred = hold_group;
    op_free_deferred = hold_op;
    int st = s->err;
    CHECK_GOTO(st, fail);
    CHECK_GOTO(size_rounds(s), fail);
    s->req = coll_request(s->g);
    CHECK_GOTO(s->req ? HINT_SUCCESS : HINT_ERR_NOMEM, fail);
    if (s->n > 0 && active == NULL && (st = rt_progress_hook_add(sched_progress_all)) != HINT_SUCCESS) {
        RT_ERR("coll", "every progress hook slot is taken, so a nonblocking collective could not "
               "progress; the call returns HINT_ERR_INTERNAL and sends nothing");
        goto fail;
    }
    *out = s->req;
    /* In the list before its first round, and no progress pass of the schedules meanwhile:
       posting a receive runs rt_progress (match.c), which must neither find the list empty and
       drop the hook nor advance this schedule from inside its own advance. */
    link_active(s);
    bool was = progressing;
    progressing = true;
    bool finished = advance(s);
    progressing = was;
    if (finished) {
        unlink_active(s);
        finish(s);
    }
    if (active == NULL)
        rt_progress_hook_remove(sched_progress_all);
    return HINT_SUCCESS;
fail:
    if (s->req)
        rq_release(s->req);
    sched_free(s);
    return st;
}
