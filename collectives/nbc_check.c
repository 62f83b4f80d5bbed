/*
 * collectives/nbc_check.c — HINT_COLL_CHECK=1 for the nonblocking collectives: the blocking
 * check's comparison (collectives/check.c) as the first rounds of the call's schedule, so the
 * i-call still returns at once.
 *
 * Round 1: every member sends every other its signature (operation, root, reduction op and kind,
 * block bytes; for alltoallv also the bytes it sends that member) and receives theirs; a poll
 * judges them as check.c does (the common fields alike on every member; the v variants' counts
 * by the members holding them). Round 2: every member sends every other whether it saw a
 * mismatch. A poll then ends the schedule with HINT_ERR_MISMATCH on every member if any did,
 * before anything of the call itself is posted (the member that saw it, or group rank 0 for a
 * common fault, names it). The messages use the call's number with the operation bits set to 31,
 * so members that called different collectives still meet.
 * Cost: 2 (P - 1) small messages per rank, in two rounds.
 */
#include <assert.h>
#include <stdlib.h>

#include "collectives/algs.h"
#include "collectives/sched.h"

static_assert(COLL_NOPS < 32, "operation bits 31 are free for the check's messages");

#define MSG_INTS (COLL_SIG_INTS + 2) /* the signature, then the bytes sent to the receiver */

struct check {
    struct coll_args a;
    int tag;
    int *out, *in;          /* [P][MSG_INTS]: to and from each member */
    int bad, *bads;         /* this member's verdict, and every member's */
    const char *why;
    bool common;
};

static bool judge(struct sched *s, void *state)
{
    struct check *c = state;
    int P = c->a.size, me = c->a.rank;
    int *all = malloc((size_t)P * COLL_SIG_INTS * sizeof *all);
    if (all == NULL) {
        sched_fail(s, HINT_ERR_NOMEM);
        return true;
    }
    for (int p = 0; p < P; p++)
        memcpy(all + (size_t)p * COLL_SIG_INTS, (p == me ? c->out : c->in) + (size_t)p * MSG_INTS,
               COLL_SIG_INTS * sizeof *all);
    c->why = coll_judge_signatures(&c->a, all, &c->common);
    free(all);
    if (c->why == NULL && c->a.op_id == COLL_ALLTOALLV)
        for (int p = 0; p < P && c->why == NULL; p++) {
            const int *m = c->in + (size_t)p * MSG_INTS + COLL_SIG_INTS;
            uint64_t got = (uint64_t)(uint32_t)m[0] | (uint64_t)(uint32_t)m[1] << 32;
            if (p != me && got != c->a.rcounts[p])
                c->why = "a member's send count differs from its receiver's count";
        }
    c->bad = c->why != NULL;
    return true;
}

static bool verdict(struct sched *s, void *state)
{
    struct check *c = state;
    bool any = c->bad;
    for (int p = 0; p < c->a.size; p++)
        any = any || (p != c->a.rank && c->bads[p]);
    if (c->why && (!c->common || c->a.rank == 0))
        coll_mismatch(&c->a, c->why); /* names it */
    if (any)
        sched_fail(s, HINT_ERR_MISMATCH);
    return true;
}

void nbc_check(struct sched *s, const struct coll_args *a)
{
    int P = a->size, me = a->rank;
    struct check *c = sched_scratch(s, sizeof *c);
    size_t n = (size_t)P * MSG_INTS;
    int *buf = sched_scratch(s, (2 * n + (size_t)P) * sizeof *buf);
    if (c == NULL || buf == NULL)
        return;
    *c = (struct check){.a = *a, .out = buf, .in = buf + n, .bads = buf + 2 * n};
    c->a.scounts = c->a.sdispls = c->a.rdispls = NULL; /* api.c's arrays do not outlive the call */
    c->a.rcounts = NULL;
    c->tag = GRP_TAG_COLL + (int)((((unsigned)(a->tag - GRP_TAG_COLL) >> 5) << 5) | 31u);
    int sig[COLL_SIG_INTS];
    coll_signature_ints(a, sig);
    for (int p = 0; p < P; p++) {
        int *m = c->out + (size_t)p * MSG_INTS;
        uint64_t to = a->op_id == COLL_ALLTOALLV ? a->scounts[p] : 0;
        memcpy(m, sig, sizeof sig);
        m[COLL_SIG_INTS] = (int)(uint32_t)to;
        m[COLL_SIG_INTS + 1] = (int)(uint32_t)(to >> 32);
    }
    /* the per-peer counts the judgement reads, kept (api.c frees its own) */
    bool v = a->op_id == COLL_GATHERV || a->op_id == COLL_SCATTERV || a->op_id == COLL_ALLGATHERV ||
             a->op_id == COLL_ALLTOALLV;
    if (v) {
        size_t *keep = sched_scratch(s, 2 * (size_t)P * sizeof *keep);
        if (keep == NULL)
            return;
        if (a->scounts)
            memcpy(keep, a->scounts, (size_t)P * sizeof *keep);
        if (a->rcounts)
            memcpy(keep + P, a->rcounts, (size_t)P * sizeof *keep);
        c->a.scounts = a->scounts ? keep : NULL;
        c->a.rcounts = a->rcounts ? keep + P : NULL;
    }
    for (int i = 1; i < P; i++) {
        int p = (me - i + P) % P;
        sched_recv_tag(s, c->in + (size_t)p * MSG_INTS, MSG_INTS * sizeof(int), p, c->tag);
    }
    for (int i = 1; i < P; i++) {
        int p = (me + i) % P;
        sched_send_tag(s, c->out + (size_t)p * MSG_INTS, MSG_INTS * sizeof(int), p, c->tag);
    }
    sched_round(s);
    sched_poll(s, judge, c);
    sched_round(s);
    for (int i = 1; i < P; i++) {
        int p = (me - i + P) % P;
        sched_recv_tag(s, &c->bads[p], sizeof(int), p, c->tag);
    }
    for (int i = 1; i < P; i++)
        sched_send_tag(s, &c->bad, sizeof(int), (me + i) % P, c->tag);
    sched_round(s);
    sched_poll(s, verdict, c);
    sched_round(s);
}
