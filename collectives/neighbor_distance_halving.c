/*
 * neighbor_allgather(v) distance_halving — paper 002 (../shared/papers/002_*.txt), Algorithms 1-4.
 *
 * Pattern (built on the first call on a group, collective, then kept with the group's
 * collective state: the topology of a group never changes). Ranks halve their range
 * [lo, hi] while it holds more than L ranks (L: most of the group's ranks on one socket, from
 * HINT_VIRTUAL_SOCKETS, HINT_TOPO_FILE or hwloc, per node). In each halving step every rank
 * looks for an agent in the opposite half (find_agent, Algorithm 2) and answers the ranks there
 * that look for one in its half (find_origin, Algorithm 3); the lower half looks first, then
 * the upper, as Algorithm 1 orders the two calls. Signals: REQ and EXIT from the one looking,
 * ACCEPT and DROP from the one answering; every pair of candidates exchanges exactly one signal
 * each way, so both know when the step's negotiation is over. Candidates are the ranks of the
 * opposite half with a common out-neighbour there (matrix A: each rank sends its in-list to its
 * in-neighbours, so a rank learns who shares each of its out-neighbours). The best candidate
 * has the most common out-neighbours in the half; ties go to the nearer rank, then the lower
 * ranks, one strict order of pairs seen alike from both sides, which is what keeps the waits
 * of find_agent and find_origin from forming a cycle (the heaviest pair left is always
 * mutually best).
 *
 * With an agent, a rank hands it every block it carries that still has destinations in the
 * opposite half, with those destinations (the descriptor D of Algorithm 1); the agent keeps a
 * block addressed to itself and carries the rest. Where the paper's agent gets its origin's
 * whole main buffer, here only the blocks with destinations beyond go (a block with nothing
 * left to deliver stops travelling). Without an agent the destinations stay and are reached in
 * the final phase. The final (intra-socket) phase sends each remaining destination one message
 * with every block it needs from this rank; instead of Algorithm 1's per-step notifications to
 * I and O, each rank tells each final destination, once at build time, which origins its
 * message carries, and a rank collects such notices until every in-neighbour not yet served
 * is covered (every (origin, destination) pair is the task of exactly one rank at any time).
 *
 * Any graph: repeated neighbours and self loops (a rank's own block goes to its own slots
 * directly), asymmetric lists, empty neighbourhoods, any P. Carts too (HINT_PROC_NULL skipped).
 * The graph must be consistent (X lists Y as a destination as often as Y lists X as a source),
 * as MPI requires. A rank short of memory during the build fails it on every rank (see struct
 * build): all return HINT_ERR_NOMEM and build again at their next call.
 *
 * Cost per call with an agent in each of the s = ceil(log2(P / L)) steps: s messages of at most
 * 2^t blocks, then one message per remaining destination (Section V's n_off + n_in).
 *
 * allgatherv carries over: the pattern does not depend on sizes, but a carrier does not know the
 * sizes of the blocks it receives, so in each halving step a header of the blocks' sizes (8 bytes
 * each) goes before them (2 messages per step instead of 1); the final messages need none, since
 * a receiver knows its in-neighbours' counts.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/algs.h"
#include "collectives/neighbor.h"
#include "datatype/datatype.h"
#include "runtime/group.h"
#include "runtime/p2p.h"
#include "runtime/runtime.h"
#include "topology/topology.h"
#include "topology/vtopo.h"

enum { SIG_REQ = 1, SIG_ACCEPT, SIG_DROP, SIG_EXIT };
/* tags of the build's messages on its private duplicate of the group */
enum { TAG_A = 1, TAG_NOTICE = 2, TAG_STAGE = 8 }; /* stage s: TAG_STAGE * (s + 1) + kind */
enum { KIND_SIG = 0, KIND_D = 1 };

/* HINT_TEST_DH_BUILD_NOMEM=RANK[:N]: on world rank RANK, the k-th build of the pattern on a
   group (k = 1..N) finds no memory at its k-th allocation, so that a test passes every
   allocation point of the build in turn. Thread-local: builds on different groups may run at
   once under HINT_THREAD_MULTIPLE. */
static _Thread_local unsigned refuse_at, allocs;

static void *build_realloc(void *p, size_t bytes)
{
    if (refuse_at != 0 && ++allocs == refuse_at)
        return NULL;
    return realloc(p, bytes);
}

static void *build_calloc(size_t n, size_t size)
{
    if (size != 0 && n > SIZE_MAX / size)
        return NULL;
    void *p = build_realloc(NULL, n * size);
    if (p != NULL)
        memset(p, 0, n * size);
    return p;
}

struct ivec {
    int *v;
    int n, cap;
};

/* Room for one more element of `size` bytes in the array *v holding n of *cap (doubling). */
static int make_room(void **v, int n, int *cap, size_t size)
{
    if (n < *cap)
        return HINT_SUCCESS;
    int c = *cap ? 2 * *cap : 8;
    void *grown = build_realloc(*v, (size_t)c * size);
    if (grown == NULL)
        return HINT_ERR_NOMEM;
    *v = grown;
    *cap = c;
    return HINT_SUCCESS;
}

static int ivec_push(struct ivec *x, int val)
{
    int st = make_room((void **)&x->v, x->n, &x->cap, sizeof *x->v);
    if (st == HINT_SUCCESS)
        x->v[x->n++] = val;
    return st;
}

/* Room for n elements in all (one allocation at most). */
static int ivec_reserve(struct ivec *x, int n)
{
    if (n <= x->cap)
        return HINT_SUCCESS;
    int *v = build_realloc(x->v, (size_t)n * sizeof *v);
    if (v == NULL)
        return HINT_ERR_NOMEM;
    x->v = v;
    x->cap = n;
    return HINT_SUCCESS;
}

static bool ivec_has(const struct ivec *x, int val)
{
    for (int i = 0; i < x->n; i++)
        if (x->v[i] == val)
            return true;
    return false;
}

struct dh_step {
    int agent, origin;     /* group ranks, -1: none this step */
    struct ivec send;      /* carried blocks (indices) that go to the agent, in order */
    int first_recv, nrecv; /* blocks from the origin land at carried indices first_recv.. */
    struct ivec keep;      /* of those, the ones addressed to this rank */
};

struct dh_peer {
    int rank;
    struct ivec blocks; /* final sends: carried indices; final receives: origin ranks */
};

struct dh_pattern {
    int nsteps;
    struct dh_step *steps;
    struct ivec carry;     /* origin of each carried block; carry.v[0] is this rank */
    int nout, nin;
    struct dh_peer *out, *in; /* in[i].blocks: views into in_origins, not owned */
    int *in_origins;
    int *slot_head, *slot_next; /* in-slots of origin o: slot_head[o], then slot_next[...], -1 ends */
    size_t final_blocks;   /* blocks of all final messages, sent and received */
};

static void pattern_free(void *p)
{
    struct dh_pattern *cp = p;
    if (cp == NULL)
        return;
    for (int t = 0; t < cp->nsteps; t++) {
        free(cp->steps[t].send.v);
        free(cp->steps[t].keep.v);
    }
    free(cp->steps);
    for (int i = 0; i < cp->nout; i++)
        free(cp->out[i].blocks.v);
    free(cp->out);
    free(cp->in);
    free(cp->in_origins);
    free(cp->carry.v);
    free(cp->slot_head);
    free(cp->slot_next);
    free(cp);
}

/* ---- the build's state ----

   Every rank builds together, so a rank short of memory must not leave the others waiting for
   its part of an exchange. What can be sized before the exchanges is allocated before the first
   of them (the scratch of Algorithms 2 and 3, the signals' requests, the steps, the receive
   buffer of matrix A's lists, the socket keys), and agreed on (all_still_have: grp_all_ok, which
   needs no memory). What cannot (matrix A's rows, the descriptors D and what the blocks they
   announce add, the final phase's peers) may fail on one rank: it notes `nomem` and still sends
   and receives every message the protocol has it send and receive (an empty D to its agent; a
   message it has no room for is received truncated, which takes it all the same), and the next
   agreement (after matrix A, after the halving steps, before the final phase's notices) fails
   the build on every rank with HINT_ERR_NOMEM. The REQ/ACCEPT/DROP/EXIT rounds allocate nothing
   and depend on matrix A only, so they stay in step. */
struct build {
    hint_group pg;          /* private duplicate: its tags are the build's alone */
    int me, P;
    bool nomem;             /* an allocation failed since the last agreement */
    struct cand *cand;      /* Algorithms 2 and 3's candidates (at most P) ... */
    char *flags;            /* ... and their sent/got/waiting flags, 3 * (P + 1) */
    int *keys;              /* every rank's socket key */
    hint_request *areq;     /* matrix A's sends, one per in-neighbour */
    struct ivec alist;      /* an out-neighbour's in-list (distinct ranks: at most P) */
    int max_steps;
    struct ivec O, I;       /* distinct out- and in-neighbours, not this rank */
    struct ivec *shared;    /* shared[c]: out-neighbours this rank and c both have */
    struct ivec *pend;      /* per carried block: destinations still this rank's task */
    int npend;
    hint_request *rq;       /* signals in flight */
    int nrq, caprq;
    struct dh_pattern *cp;
};

static const int sig_value[] = {0, SIG_REQ, SIG_ACCEPT, SIG_DROP, SIG_EXIT}; /* stable send buffers */

static int signal_send(struct build *b, int sig, int to, int stage)
{
    int st = make_room((void **)&b->rq, b->nrq, &b->caprq, sizeof *b->rq);
    if (st != HINT_SUCCESS)
        return st;
    return p2p_isend(&sig_value[sig], 1, HINT_INT, to, TAG_STAGE * (stage + 1) + KIND_SIG, b->pg, b->pg->ctx,
                     &b->rq[b->nrq++]);
}

static int signal_recv(struct build *b, int stage, int *sig, int *from)
{
    hint_request r;
    hint_status s = {.source = -1};
    int st = p2p_irecv(sig, 1, HINT_INT, HINT_ANY_SOURCE, TAG_STAGE * (stage + 1) + KIND_SIG, b->pg, b->pg->ctx, &r);
    if (st == HINT_SUCCESS)
        st = p2p_wait(&r, &s);
    *from = s.source;
    return st;
}

/* Receive a list of ints of unknown length from `from`. Without room for it (or after an
   earlier failure) the message is taken all the same, truncated to nothing, so that its sender
   is not left waiting; out is then empty and b->nomem set. */
static int list_recv(struct build *b, int from, int tag, struct ivec *out)
{
    hint_status s;
    int st = hint_probe(from, tag, b->pg, &s);
    if (st != HINT_SUCCESS)
        return st;
    int n = (int)(s.bytes / sizeof(int));
    out->n = 0;
    bool room = !b->nomem && ivec_reserve(out, n) == HINT_SUCCESS;
    b->nomem = !room;
    hint_request r;
    int none;
    st = p2p_irecv(room && n ? out->v : &none, room ? (size_t)n : 0, HINT_INT, s.source, tag, b->pg, b->pg->ctx, &r);
    if (st == HINT_SUCCESS)
        st = p2p_wait(&r, NULL);
    if (room && st == HINT_SUCCESS)
        out->n = n;
    return !room && st == HINT_ERR_TRUNCATE ? HINT_SUCCESS : st;
}

/* x gets val; without memory the rank notes it and goes on (see struct build). */
static void push_or_note(struct build *b, struct ivec *x, int val)
{
    if (!b->nomem && ivec_push(x, val) != HINT_SUCCESS)
        b->nomem = true;
}

/* Collective over the build's group: HINT_ERR_NOMEM on every rank if any lacked memory since the
   last agreement (or failed otherwise: it takes part, then returns its own error). */
static int all_still_have(struct build *b, int st)
{
    int all = neighbor_all_have(b->pg, st == HINT_SUCCESS && !b->nomem);
    return st != HINT_SUCCESS ? st : all;
}

/* ---- Algorithms 2 and 3 ---- */

struct cand {
    int rank, score;
};

/* Whether pair (finder f, answerer a) with score s beats pair (f2, a2) with s2: one strict order
   of all pairs, computed alike by both members of a pair. */
static bool pair_better(int s, int f, int a, int s2, int f2, int a2)
{
    if (s != s2)
        return s > s2;
    int d = abs(f - a), d2 = abs(f2 - a2);
    if (d != d2)
        return d < d2;
    if (f != f2)
        return f < f2;
    return a < a2;
}

/* Candidates in [ylo, yhi] with their number of common out-neighbours in [zlo, zhi], in
   b->cand (room for P); their flags, cleared, in b->flags. */
static struct cand *candidates(struct build *b, int ylo, int yhi, int zlo, int zhi, int *n)
{
    *n = 0;
    for (int c = ylo; c <= yhi; c++) {
        int score = 0;
        for (int i = 0; i < b->shared[c].n; i++)
            score += b->shared[c].v[i] >= zlo && b->shared[c].v[i] <= zhi;
        if (score > 0)
            b->cand[(*n)++] = (struct cand){c, score};
    }
    memset(b->flags, 0, 3 * ((size_t)b->P + 1));
    return b->cand;
}

static int cand_index(const struct cand *c, int n, int rank)
{
    for (int i = 0; i < n; i++)
        if (c[i].rank == rank)
            return i;
    return -1;
}

/* Algorithm 2: the agent in [ylo, yhi], or -1. */
static int find_agent(struct build *b, int stage, int ylo, int yhi, int *agent)
{
    int n, st = HINT_SUCCESS;
    struct cand *c = candidates(b, ylo, yhi, ylo, yhi, &n);
    char *sent = b->flags, *got = sent + n + 1;
    int outstanding = -1, done = 0;
    *agent = -1;
    while (st == HINT_SUCCESS && done < 2 * n) {
        if (outstanding < 0 && *agent < 0) { /* get_best_agent */
            int best = -1;
            for (int i = 0; i < n; i++)
                if (!sent[i] && !got[i] &&
                    (best < 0 || pair_better(c[i].score, b->me, c[i].rank, c[best].score, b->me, c[best].rank)))
                    best = i;
            if (best >= 0) {
                st = signal_send(b, SIG_REQ, c[best].rank, stage);
                sent[best] = 1;
                done++;
                outstanding = best;
            }
        }
        if (st != HINT_SUCCESS || done == 2 * n)
            break;
        int sig, from;
        if ((st = signal_recv(b, stage, &sig, &from)) != HINT_SUCCESS)
            break;
        int k = cand_index(c, n, from);
        if (k < 0 || got[k] || (sig != SIG_ACCEPT && sig != SIG_DROP) || (sig == SIG_ACCEPT && k != outstanding)) {
            st = HINT_ERR_INTERNAL; /* a signal the protocol does not send */
            break;
        }
        got[k] = 1;
        done++;
        if (sig == SIG_ACCEPT) {
            *agent = from;
            outstanding = -1;
            for (int i = 0; i < n && st == HINT_SUCCESS; i++)
                if (!sent[i]) {
                    st = signal_send(b, SIG_EXIT, c[i].rank, stage);
                    sent[i] = 1;
                    done++;
                }
        } else if (k == outstanding) {
            outstanding = -1; /* refused: try the next best */
        } else if (!sent[k]) {
            st = signal_send(b, SIG_EXIT, from, stage); /* it took another origin before we asked */
            sent[k] = 1;
            done++;
        }
    }
    return st;
}

/* Algorithm 3: the origin in [ylo, yhi] this rank becomes the agent of, or -1. Candidates share
   an out-neighbour with this rank in its own half [zlo, zhi]. */
static int find_origin(struct build *b, int stage, int ylo, int yhi, int zlo, int zhi, int *origin)
{
    int n, st = HINT_SUCCESS;
    struct cand *c = candidates(b, ylo, yhi, zlo, zhi, &n);
    /* per candidate: sent (our one answer), got (its one signal), waiting (a REQ not answered) */
    char *sent = b->flags, *got = sent + n + 1, *waiting = got + n + 1;
    int done = 0;
    *origin = -1;
    while (st == HINT_SUCCESS && done < 2 * n) {
        if (*origin < 0) { /* get_best_origin: the best one still in the running */
            int best = -1;
            for (int i = 0; i < n; i++)
                if (!sent[i] && (!got[i] || waiting[i]) &&
                    (best < 0 || pair_better(c[i].score, c[i].rank, b->me, c[best].score, c[best].rank, b->me)))
                    best = i;
            if (best >= 0 && waiting[best]) {
                st = signal_send(b, SIG_ACCEPT, c[best].rank, stage);
                sent[best] = 1;
                waiting[best] = 0;
                done++;
                *origin = c[best].rank;
                for (int i = 0; i < n && st == HINT_SUCCESS; i++)
                    if (!sent[i]) {
                        st = signal_send(b, SIG_DROP, c[i].rank, stage);
                        sent[i] = 1;
                        waiting[i] = 0;
                        done++;
                    }
            }
        }
        if (st != HINT_SUCCESS || done == 2 * n)
            break;
        int sig, from;
        if ((st = signal_recv(b, stage, &sig, &from)) != HINT_SUCCESS)
            break;
        int k = cand_index(c, n, from);
        if (k < 0 || got[k] || (sig != SIG_REQ && sig != SIG_EXIT)) {
            st = HINT_ERR_INTERNAL;
            break;
        }
        got[k] = 1;
        done++;
        if (sig == SIG_REQ) {
            if (!sent[k])
                waiting[k] = 1; /* answered at the top when it is (or becomes) the best */
        } else if (!sent[k]) {
            st = signal_send(b, SIG_DROP, from, stage); /* it found another agent */
            sent[k] = 1;
            done++;
        }
    }
    return st;
}

/* ---- Algorithm 1 ---- */

/* calculate_A: each rank tells its in-neighbours who else sends to it. A row of A it has no
   memory for is noted (b->nomem) while the lists are still received. */
static int calculate_A(struct build *b)
{
    hint_request *r = b->areq;
    int st = HINT_SUCCESS, nr = 0;
    for (int i = 0; i < b->I.n && st == HINT_SUCCESS; i++)
        st = p2p_isend(b->I.v, (size_t)b->I.n, HINT_INT, b->I.v[i], TAG_A, b->pg, b->pg->ctx, &r[nr++]);
    struct ivec *list = &b->alist;
    for (int j = 0; j < b->O.n && st == HINT_SUCCESS; j++) {
        int d = b->O.v[j];
        st = list_recv(b, d, TAG_A, list);
        for (int i = 0; i < list->n && st == HINT_SUCCESS; i++)
            if (list->v[i] < 0 || list->v[i] >= b->P)
                st = HINT_ERR_INTERNAL;
            else if (list->v[i] != b->me)
                push_or_note(b, &b->shared[list->v[i]], d);
    }
    int w = p2p_waitall((size_t)nr, r);
    return st != HINT_SUCCESS ? st : w;
}

/* Carry one more block, from `origin`, with no destinations yet. */
static int carry_push(struct build *b, int origin)
{
    int st = ivec_push(&b->cp->carry, origin);
    if (st == HINT_SUCCESS && b->cp->carry.n > b->npend) {
        struct ivec *p = build_realloc(b->pend, (size_t)b->cp->carry.n * 2 * sizeof *p);
        if (p == NULL)
            return HINT_ERR_NOMEM;
        memset(p + b->npend, 0, ((size_t)b->cp->carry.n * 2 - (size_t)b->npend) * sizeof *p);
        b->pend = p;
        b->npend = b->cp->carry.n * 2;
    }
    return st;
}

/* Lines 25-49: hand the agent the blocks with destinations in [ylo, yhi] (D), take the origin's. */
static int exchange_D(struct build *b, int stage, struct dh_step *s, int ylo, int yhi)
{
    struct ivec D = {0}, in = {0};
    hint_request r = HINT_REQUEST_NULL;
    int st = HINT_SUCCESS, none = 0;
    if (s->agent >= 0) {
        /* without memory for D (now or before), an empty one: the agent takes nothing */
        st = b->nomem ? HINT_ERR_NOMEM : ivec_push(&D, 0);
        for (int i = 0; i < b->cp->carry.n && st == HINT_SUCCESS; i++) {
            struct ivec *p = &b->pend[i];
            int n = 0;
            for (int k = 0; k < p->n; k++)
                n += p->v[k] >= ylo && p->v[k] <= yhi;
            if (n == 0)
                continue;
            D.v[0]++;
            st = ivec_push(&s->send, i);
            if (st == HINT_SUCCESS)
                st = ivec_push(&D, b->cp->carry.v[i]);
            if (st == HINT_SUCCESS)
                st = ivec_push(&D, n);
            int kept = 0;
            for (int k = 0; k < p->n && st == HINT_SUCCESS; k++) {
                if (p->v[k] >= ylo && p->v[k] <= yhi)
                    st = ivec_push(&D, p->v[k]);
                else
                    p->v[kept++] = p->v[k];
            }
            p->n = kept;
        }
        b->nomem = st != HINT_SUCCESS;
        st = p2p_isend(b->nomem ? &none : D.v, b->nomem ? 0 : (size_t)D.n, HINT_INT, s->agent,
                       TAG_STAGE * (stage + 1) + KIND_D, b->pg, b->pg->ctx, &r);
    }
    s->first_recv = b->cp->carry.n;
    if (st == HINT_SUCCESS && s->origin >= 0) {
        st = list_recv(b, s->origin, TAG_STAGE * (stage + 1) + KIND_D, &in);
        int pos = 1, got = HINT_SUCCESS;
        for (int e = 0; st == HINT_SUCCESS && got == HINT_SUCCESS && in.n > 0 && e < in.v[0]; e++) {
            int o = in.v[pos], nd = in.v[pos + 1];
            pos += 2;
            int j = b->cp->carry.n;
            got = carry_push(b, o);
            for (int k = 0; k < nd && got == HINT_SUCCESS; k++, pos++)
                got = in.v[pos] == b->me ? (ivec_has(&s->keep, j) ? HINT_SUCCESS : ivec_push(&s->keep, j))
                                         : ivec_push(&b->pend[j], in.v[pos]);
            s->nrecv++;
        }
        b->nomem = b->nomem || got != HINT_SUCCESS;
    }
    int w = r != HINT_REQUEST_NULL ? p2p_wait(&r, NULL) : HINT_SUCCESS;
    free(D.v);
    free(in.v);
    return st != HINT_SUCCESS ? st : w;
}

/* The socket key of each rank; L = most ranks on one. */
static int ranks_per_socket(struct build *b, hint_group g)
{
    long vs = rt_cfg_long("HINT_VIRTUAL_SOCKETS");
    int key;
    if (vs > 0)
        key = vs > 1 && b->P % vs == 0 ? b->me / (b->P / (int)vs) : 0;
    else {
        int sock = 0;
        if (topo_socket_of_self(&sock) != HINT_SUCCESS || sock < 0)
            sock = 0;
        key = rt_node_of(g->world[b->me]) * 4096 + sock;
    }
    int *keys = b->keys, L = -1;
    if (grp_allgather_ints(b->pg, &key, 1, keys, GRP_TAG_TOPO) == HINT_SUCCESS) {
        L = 1;
        for (int i = 0; i < b->P; i++) {
            int c = 0;
            for (int j = 0; j < b->P; j++)
                c += keys[j] == keys[i];
            L = c > L ? c : L;
        }
    }
    return L;
}

/* Lines 50-53, the sending side: what is left grouped by destination, and the notice telling
   each which origins its message carries. Local: a rank without memory for it notes nomem. */
static void final_peers(struct build *b, char *served, int *where, struct ivec **notice)
{
    struct dh_pattern *cp = b->cp;
    for (int i = 0; i < b->P; i++)
        where[i] = -1;
    for (int t = 0; t < cp->nsteps; t++)
        for (int k = 0; k < cp->steps[t].keep.n; k++)
            served[cp->carry.v[cp->steps[t].keep.v[k]]] = 1;
    /* one peer per destination, blocks in carried order */
    for (int i = 0; !b->nomem && i < cp->carry.n; i++)
        for (int k = 0; !b->nomem && k < b->pend[i].n; k++) {
            int d = b->pend[i].v[k];
            if (where[d] < 0) {
                struct dh_peer *p = build_realloc(cp->out, (size_t)(cp->nout + 1) * sizeof *p);
                if (p == NULL) {
                    b->nomem = true;
                    break;
                }
                cp->out = p;
                cp->out[cp->nout] = (struct dh_peer){.rank = d};
                where[d] = cp->nout++;
            }
            push_or_note(b, &cp->out[where[d]].blocks, i);
            cp->final_blocks++;
        }
    *notice = b->nomem ? NULL : build_calloc((size_t)cp->nout + 1, sizeof **notice);
    b->nomem = *notice == NULL;
    for (int j = 0; !b->nomem && j < cp->nout; j++)
        for (int k = 0; k < cp->out[j].blocks.n; k++)
            push_or_note(b, &(*notice)[j], cp->carry.v[cp->out[j].blocks.v[k]]);
}

/* One notice from whoever sends first, into the room left in cp->in_origins (*used of `room`):
   the origins a final message from that rank carries here. */
static int notice_recv(struct build *b, int room, int *used)
{
    struct dh_pattern *cp = b->cp;
    hint_status s;
    int st = hint_probe(HINT_ANY_SOURCE, TAG_NOTICE, b->pg, &s);
    if (st != HINT_SUCCESS)
        return st;
    int n = (int)(s.bytes / sizeof(int));
    if (n < 1 || n > room - *used)
        return HINT_ERR_INTERNAL; /* a notice with more origins than in-neighbours left to serve */
    hint_request r;
    int *at = cp->in_origins + *used;
    st = p2p_irecv(at, (size_t)n, HINT_INT, s.source, TAG_NOTICE, b->pg, b->pg->ctx, &r);
    if (st == HINT_SUCCESS)
        st = p2p_wait(&r, NULL);
    if (st != HINT_SUCCESS)
        return st;
    cp->in[cp->nin++] = (struct dh_peer){.rank = s.source, .blocks = {.v = at, .n = n}};
    cp->final_blocks += (size_t)n;
    *used += n;
    return HINT_SUCCESS;
}

/* The final phase's pairing: tell each destination its origins, and collect the notices for the
   in-neighbours nobody served in the halving steps. Everything is allocated (the receiving side
   for at most every in-neighbour) and agreed on before the first notice goes. */
static int final_phase(struct build *b)
{
    struct dh_pattern *cp = b->cp;
    char *served = build_calloc((size_t)b->P, 1);
    int *where = build_realloc(NULL, (size_t)b->P * sizeof *where);
    hint_request *r = NULL;
    struct ivec *notice = NULL;
    b->nomem = b->nomem || served == NULL || where == NULL;
    if (!b->nomem)
        final_peers(b, served, where, &notice);
    if (!b->nomem) {
        r = build_calloc((size_t)cp->nout + 1, sizeof *r);
        cp->in = build_calloc((size_t)b->I.n + 1, sizeof *cp->in);
        cp->in_origins = build_realloc(NULL, ((size_t)b->I.n + 1) * sizeof *cp->in_origins);
        b->nomem = r == NULL || cp->in == NULL || cp->in_origins == NULL;
    }
    int st = all_still_have(b, HINT_SUCCESS), n = 0;
    for (int j = 0; st == HINT_SUCCESS && j < cp->nout; j++, n++)
        st = p2p_isend(notice[j].v, (size_t)notice[j].n, HINT_INT, cp->out[j].rank, TAG_NOTICE, b->pg, b->pg->ctx,
                       &r[j]);
    /* receives: until every in-neighbour is served */
    int missing = 0, used = 0;
    for (int i = 0; st == HINT_SUCCESS && i < b->I.n; i++)
        missing += !served[b->I.v[i]];
    while (st == HINT_SUCCESS && missing > 0) {
        int first = used;
        st = notice_recv(b, b->I.n, &used);
        for (int k = first; st == HINT_SUCCESS && k < used; k++) {
            int o = cp->in_origins[k];
            if (o < 0 || o >= b->P || served[o] || !ivec_has(&b->I, o))
                st = HINT_ERR_INTERNAL; /* an origin twice, or one that is no in-neighbour */
            else {
                served[o] = 1;
                missing--;
            }
        }
    }
    int w = n ? p2p_waitall((size_t)n, r) : HINT_SUCCESS;
    for (int j = 0; notice && j < cp->nout; j++)
        free(notice[j].v);
    free(notice);
    free(r);
    free(served);
    free(where);
    return st != HINT_SUCCESS ? st : w;
}

/* Distinct neighbours of a list, without HINT_PROC_NULL and this rank. */
static int distinct(const int *list, int n, int me, struct ivec *out)
{
    int st = HINT_SUCCESS;
    for (int i = 0; i < n && st == HINT_SUCCESS; i++)
        if (list[i] >= 0 && list[i] != me && !ivec_has(out, list[i]))
            st = ivec_push(out, list[i]);
    return st;
}

static int build_steps(struct build *b, int L)
{
    int lo = 0, hi = b->P - 1, stage = 0, st = HINT_SUCCESS;
    struct dh_pattern *cp = b->cp;
    while (st == HINT_SUCCESS && hi - lo + 1 > L) {
        int mid = lo + (hi - lo) / 2;
        bool lower = b->me <= mid;
        int xlo = lower ? lo : mid + 1, xhi = lower ? mid : hi;
        int ylo = lower ? mid + 1 : lo, yhi = lower ? hi : mid;
        if (cp->nsteps == b->max_steps)
            return HINT_ERR_INTERNAL; /* the range halves each step: not reached */
        struct dh_step *s = &cp->steps[cp->nsteps++];
        *s = (struct dh_step){.agent = -1, .origin = -1};
        /* the lower half looks for agents while the upper answers, then the other way */
        if (lower) {
            st = find_agent(b, stage, ylo, yhi, &s->agent);
            if (st == HINT_SUCCESS)
                st = find_origin(b, stage + 1, ylo, yhi, xlo, xhi, &s->origin);
        } else {
            st = find_origin(b, stage, ylo, yhi, xlo, xhi, &s->origin);
            if (st == HINT_SUCCESS)
                st = find_agent(b, stage + 1, ylo, yhi, &s->agent);
        }
        if (st == HINT_SUCCESS)
            st = p2p_waitall((size_t)b->nrq, b->rq);
        b->nrq = 0;
        if (st == HINT_SUCCESS)
            st = exchange_D(b, stage, s, ylo, yhi);
        stage += 2;
        lo = xlo;
        hi = xhi;
    }
    return st;
}

/* In-slots by origin, for delivering a block to every slot it fills. */
static int slot_lists(struct dh_pattern *cp, const struct vtopo_lists *l, int P)
{
    cp->slot_head = build_realloc(NULL, (size_t)P * sizeof(int));
    cp->slot_next = build_realloc(NULL, (size_t)(l->indegree + 1) * sizeof(int));
    if (cp->slot_head == NULL || cp->slot_next == NULL)
        return HINT_ERR_NOMEM;
    for (int o = 0; o < P; o++)
        cp->slot_head[o] = -1;
    for (int i = l->indegree - 1; i >= 0; i--) {
        int o = l->sources[i];
        cp->slot_next[i] = o >= 0 ? cp->slot_head[o] : -1;
        if (o >= 0)
            cp->slot_head[o] = i;
    }
    return HINT_SUCCESS;
}

/* Halving steps of a range of P ranks down to one, at most. */
static int steps_at_most(int P)
{
    int n = 0;
    for (int span = P; span > 1; span = span - span / 2)
        n++;
    return n;
}

/* Everything the build can size before its exchanges. */
static int build_setup(struct build *b, const struct vtopo_lists *l)
{
    int P = b->P;
    b->max_steps = steps_at_most(P);
    b->cp = build_calloc(1, sizeof *b->cp);
    b->shared = build_calloc((size_t)P, sizeof *b->shared);
    b->cand = build_realloc(NULL, ((size_t)P + 1) * sizeof *b->cand);
    b->flags = build_realloc(NULL, 3 * ((size_t)P + 1));
    b->keys = build_realloc(NULL, (size_t)P * sizeof *b->keys);
    if (b->cp == NULL || b->shared == NULL || b->cand == NULL || b->flags == NULL || b->keys == NULL)
        return HINT_ERR_NOMEM;
    b->cp->steps = build_calloc((size_t)b->max_steps + 1, sizeof *b->cp->steps);
    if (b->cp->steps == NULL)
        return HINT_ERR_NOMEM;
    int st = distinct(l->dests, l->outdegree, b->me, &b->O);
    if (st == HINT_SUCCESS)
        st = distinct(l->sources, l->indegree, b->me, &b->I);
    if (st == HINT_SUCCESS)
        st = slot_lists(b->cp, l, P);
    if (st == HINT_SUCCESS)
        st = carry_push(b, b->me);
    for (int i = 0; i < b->O.n && st == HINT_SUCCESS; i++)
        st = ivec_push(&b->pend[0], b->O.v[i]);
    /* a step's signals: at most one to each candidate in each of its two searches */
    if (st == HINT_SUCCESS && (b->rq = build_calloc(2 * (size_t)P + 2, sizeof *b->rq)) == NULL)
        st = HINT_ERR_NOMEM;
    b->caprq = b->rq ? 2 * P + 2 : 0;
    if (st == HINT_SUCCESS && (b->areq = build_calloc((size_t)b->I.n + 1, sizeof *b->areq)) == NULL)
        st = HINT_ERR_NOMEM;
    if (st == HINT_SUCCESS)
        st = ivec_reserve(&b->alist, P);
    return st;
}

static void build_free(struct build *b)
{
    if (b->nrq > 0)
        p2p_waitall((size_t)b->nrq, b->rq);
    free(b->rq);
    for (int c = 0; b->shared && c < b->P; c++)
        free(b->shared[c].v);
    free(b->shared);
    for (int i = 0; i < b->npend; i++)
        free(b->pend[i].v);
    free(b->pend);
    free(b->O.v);
    free(b->I.v);
    free(b->cand);
    free(b->flags);
    free(b->keys);
    free(b->areq);
    free(b->alist.v);
}

static int build_pattern(hint_group g, const struct vtopo_lists *l, struct dh_pattern **out)
{
    struct build b = {.me = g->rank, .P = g->size};
    int st = hint_group_dup(g, &b.pg);
    if (st != HINT_SUCCESS)
        return st;
    st = all_still_have(&b, build_setup(&b, l));
    int L = st == HINT_SUCCESS ? ranks_per_socket(&b, g) : -1;
    if (st == HINT_SUCCESS && L < 1)
        st = HINT_ERR_INTERNAL;
    if (st == HINT_SUCCESS)
        st = all_still_have(&b, calculate_A(&b)); /* the searches need every rank's matrix A */
    if (st == HINT_SUCCESS)
        st = all_still_have(&b, build_steps(&b, L)); /* the final phase needs every rank's destinations */
    if (st == HINT_SUCCESS)
        st = final_phase(&b);
    build_free(&b);
    hint_group_free(&b.pg);
    if (st != HINT_SUCCESS) {
        pattern_free(b.cp);
        return st;
    }
    *out = b.cp;
    return HINT_SUCCESS;
}

/* ---- Algorithm 4 ---- */

bool neighbor_distance_halving_ok(const struct coll_args *a)
{
    if (a->op_id == COLL_NEIGHBOR_ALLGATHERV)
        return true; /* counts may differ per origin: the halving steps carry a size header */
    if (a->op_id != COLL_NEIGHBOR_ALLGATHER)
        return false;
    size_t sb = 0, rb = 0;
    return dt_count_bytes(a->sl.type, a->sl.count, &sb) == HINT_SUCCESS &&
           dt_count_bytes(a->rl.type, a->rl.count, &rb) == HINT_SUCCESS && sb == rb;
}

static void cache_free(void *p)
{
    struct neighbor_cache *c = p;
    if (c != NULL) {
        pattern_free(c->dh);
        neighbor_morton_plan_free(c->morton);
        neighbor_staged_matches_free(c->staged);
        neighbor_staged_plan_free(c->plan);
    }
    free(c);
}

struct neighbor_cache *neighbor_cache_of(hint_group g)
{
    struct coll_group *cg = coll_group_of(g);
    if (cg->neighbor.p == NULL) {
        cg->neighbor.p = calloc(1, sizeof(struct neighbor_cache));
        cg->neighbor.free = cache_free;
    }
    return cg->neighbor.p;
}

static int pattern_of(struct coll_args *a, const struct vtopo_lists *l, struct dh_pattern **cp)
{
    struct neighbor_cache *c = neighbor_cache_of(a->g);
    if (c == NULL || c->dh == NULL) {
        /* The pattern is built by every rank together (a group dup, then exchanges): a rank
           without a cache to keep it in fails the build on every rank before it starts, and all
           try again at their next call, instead of returning alone while the others wait. */
        int st = neighbor_all_have(a->g, c != NULL && !neighbor_lists_refused(a, c));
        if (st == HINT_SUCCESS) {
            static struct coll_test_hook hook = {"HINT_TEST_DH_BUILD_NOMEM", -2, 0};
            refuse_at = coll_test_hook_fires(&hook, a, &c->dh_build_tries) ? c->dh_build_tries : 0;
            allocs = 0;
            st = build_pattern(a->g, l, &c->dh);
            refuse_at = 0;
        }
        if (st != HINT_SUCCESS)
            return st;
    }
    *cp = c->dh;
    return HINT_SUCCESS;
}

/* Where slot i of the receive buffer starts and how many elements it holds. */
static char *slot_at(const struct coll_args *a, int i, size_t *count)
{
    if (a->op_id == COLL_NEIGHBOR_ALLGATHERV) {
        *count = a->rcounts[i];
        return a->rbuf + (ptrdiff_t)a->rdispls[i] * a->rl.extent;
    }
    *count = a->rl.count;
    return a->rbuf + (ptrdiff_t)i * (ptrdiff_t)a->rl.count * a->rl.extent;
}

/* Bytes origin o's block has here (allgatherv: what this rank's first slot from o holds). */
static size_t origin_bytes(const struct coll_args *a, const struct dh_pattern *cp, int o, size_t m)
{
    if (a->op_id != COLL_NEIGHBOR_ALLGATHERV || cp->slot_head[o] < 0)
        return m;
    return a->rcounts[cp->slot_head[o]] * dt_size(a->rl.type);
}

/* A block of m bytes into every in-slot of origin o. */
static int deliver(const struct coll_args *a, const struct dh_pattern *cp, int o, const char *block, size_t m)
{
    size_t bytes, count;
    for (int i = cp->slot_head[o]; i >= 0; i = cp->slot_next[i]) {
        char *dst = slot_at(a, i, &count);
        int st = dt_copy_typed(block, m, HINT_BYTE, dst, count, a->rl.type, &bytes);
        if (st != HINT_SUCCESS)
            return st;
    }
    return HINT_SUCCESS;
}

/* The main buffer of one call: the carried blocks at off[j], size[j] bytes each (allgather: all
   of one size; allgatherv: learnt step by step from the origins' size headers). */
struct mainbuf {
    char *p;
    size_t cap, used;
    size_t *off, *size;
};

static int main_add(struct mainbuf *mb, int j, size_t bytes)
{
    if (mb->used + bytes + 1 > mb->cap) {
        size_t cap = (mb->used + bytes + 1) * 2;
        char *p = realloc(mb->p, cap);
        if (p == NULL)
            return HINT_ERR_NOMEM;
        mb->p = p;
        mb->cap = cap;
    }
    mb->off[j] = mb->used;
    mb->size[j] = bytes;
    mb->used += bytes;
    return HINT_SUCCESS;
}

/* Blocks idx[0..n) of the main buffer as one message (*len bytes): in place when they lie one
   after another, else packed into *tmp (grown as needed). */
static const char *gather_blocks(const struct mainbuf *mb, const int *idx, int n, size_t *len, char **tmp,
                                 size_t *tmpcap)
{
    bool run = true;
    *len = 0;
    for (int k = 0; k < n; k++) {
        *len += mb->size[idx[k]];
        run = run && (k == 0 || mb->off[idx[k]] == mb->off[idx[k - 1]] + mb->size[idx[k - 1]]);
    }
    if (run || *len == 0)
        return mb->p + (n ? mb->off[idx[0]] : 0);
    if (*len > *tmpcap) {
        char *t = realloc(*tmp, *len);
        if (t == NULL)
            return NULL;
        *tmp = t;
        *tmpcap = *len;
    }
    for (size_t k = 0, at = 0; k < (size_t)n; at += mb->size[idx[k]], k++)
        memcpy(*tmp + at, mb->p + mb->off[idx[k]], mb->size[idx[k]]);
    return *tmp;
}

/* Lines 5-18, one halving step: (allgatherv: the size header first), then the blocks. */
static int halving_step(struct coll_args *a, const struct dh_pattern *cp, const struct dh_step *s,
                        struct mainbuf *mb, char **tmp, size_t *tmpcap)
{
    hint_request rq[3] = {HINT_REQUEST_NULL, HINT_REQUEST_NULL, HINT_REQUEST_NULL};
    int st = HINT_SUCCESS;
    uint64_t *hin = NULL, *hout = NULL;
    bool sending = s->agent >= 0 && s->send.n > 0, receiving = s->origin >= 0 && s->nrecv > 0;
    size_t m = mb->size[0];
    if (a->op_id == COLL_NEIGHBOR_ALLGATHERV) {
        hin = calloc((size_t)s->nrecv + 1, sizeof *hin);
        hout = calloc((size_t)s->send.n + 1, sizeof *hout);
        if (hin == NULL || hout == NULL)
            st = HINT_ERR_NOMEM;
        for (int k = 0; st == HINT_SUCCESS && k < s->send.n; k++)
            hout[k] = mb->size[s->send.v[k]];
        if (st == HINT_SUCCESS && receiving)
            st = coll_irecv(hin, (size_t)s->nrecv * sizeof *hin, s->origin, a, &rq[0]);
        if (st == HINT_SUCCESS && sending)
            st = coll_isend(hout, (size_t)s->send.n * sizeof *hout, s->agent, a, &rq[1]);
        if (st == HINT_SUCCESS && receiving)
            st = p2p_wait(&rq[0], NULL);
    }
    size_t total = 0;
    for (int k = 0; st == HINT_SUCCESS && k < s->nrecv; k++) {
        size_t b = hin ? (size_t)hin[k] : m;
        st = main_add(mb, s->first_recv + k, b);
        total += b;
    }
    if (st == HINT_SUCCESS && receiving)
        st = coll_irecv(mb->p + mb->off[s->first_recv], total, s->origin, a, &rq[0]);
    if (st == HINT_SUCCESS && sending) {
        size_t len;
        const char *out = gather_blocks(mb, s->send.v, s->send.n, &len, tmp, tmpcap);
        st = out == NULL ? HINT_ERR_NOMEM : coll_isend(out, len, s->agent, a, &rq[2]);
    }
    int w = p2p_waitall(3, rq);
    st = st != HINT_SUCCESS ? st : w;
    for (int k = 0; k < s->keep.n && st == HINT_SUCCESS; k++) {
        int j = s->keep.v[k];
        st = deliver(a, cp, cp->carry.v[j], mb->p + mb->off[j], mb->size[j]);
    }
    free(hin);
    free(hout);
    return st;
}

/* Lines 19-33: every remaining destination its blocks in one message, every notice's sender
   its blocks from this rank's point of view (sizes from the receive counts). */
static int final_step(struct coll_args *a, const struct dh_pattern *cp, const struct mainbuf *mb, size_t m)
{
    size_t n = 0, outlen = 0, inlen = 0, len;
    for (int j = 0; j < cp->nout; j++)
        for (int k = 0; k < cp->out[j].blocks.n; k++)
            outlen += mb->size[cp->out[j].blocks.v[k]];
    for (int j = 0; j < cp->nin; j++)
        for (int k = 0; k < cp->in[j].blocks.n; k++)
            inlen += origin_bytes(a, cp, cp->in[j].blocks.v[k], m);
    hint_request *rq = coll_requests((size_t)cp->nout + (size_t)cp->nin + 1);
    char *buf = malloc(outlen + inlen + 1), *tmp = NULL;
    size_t tmpcap = 0;
    int st = rq && buf ? HINT_SUCCESS : HINT_ERR_NOMEM;
    size_t at = 0;
    for (int j = 0; j < cp->nout && st == HINT_SUCCESS; j++) {
        const struct dh_peer *p = &cp->out[j];
        const char *out = gather_blocks(mb, p->blocks.v, p->blocks.n, &len, &tmp, &tmpcap);
        if (out == tmp) { /* packed: keep it apart from the next peer's */
            memcpy(buf + at, tmp, len);
            out = buf + at;
            at += len;
        }
        st = out == NULL ? HINT_ERR_NOMEM : coll_isend(out, len, p->rank, a, &rq[n++]);
    }
    size_t first_in = at = outlen;
    for (int j = 0; j < cp->nin && st == HINT_SUCCESS; j++) {
        size_t b = 0;
        for (int k = 0; k < cp->in[j].blocks.n; k++)
            b += origin_bytes(a, cp, cp->in[j].blocks.v[k], m);
        st = coll_irecv(buf + at, b, cp->in[j].rank, a, &rq[n++]);
        at += b;
    }
    int w = rq ? p2p_waitall(n, rq) : HINT_SUCCESS;
    st = st != HINT_SUCCESS ? st : w;
    at = first_in;
    for (int j = 0; j < cp->nin && st == HINT_SUCCESS; j++)
        for (int k = 0; k < cp->in[j].blocks.n && st == HINT_SUCCESS; k++) {
            int o = cp->in[j].blocks.v[k];
            size_t b = origin_bytes(a, cp, o, m);
            st = deliver(a, cp, o, buf + at, b);
            at += b;
        }
    free(tmp);
    free(buf);
    free(rq);
    return st;
}

int neighbor_distance_halving(struct coll_args *a)
{
    struct vtopo_lists l;
    struct dh_pattern *cp;
    int st = vtopo_lists(a->g, &l);
    if (st == HINT_SUCCESS)
        st = pattern_of(a, &l, &cp);
    if (st != HINT_SUCCESS)
        return st;
    size_t m, bytes;
    if ((st = dt_count_bytes(a->sl.type, a->sl.count, &m)) != HINT_SUCCESS)
        return st;
    size_t nc = (size_t)cp->carry.n;
    struct mainbuf mb = {.off = calloc(nc + 1, sizeof(size_t)), .size = calloc(nc + 1, sizeof(size_t))};
    char *tmp = NULL;
    size_t tmpcap = 0;
    /* allgather: room for every block at once; allgatherv grows as the sizes arrive */
    mb.cap = (a->op_id == COLL_NEIGHBOR_ALLGATHER ? nc : 1) * m + 1;
    mb.p = malloc(mb.cap);
    if (mb.off == NULL || mb.size == NULL || mb.p == NULL)
        st = HINT_ERR_NOMEM;
    if (st == HINT_SUCCESS)
        st = main_add(&mb, 0, m);
    if (st == HINT_SUCCESS) /* line 3 */
        st = dt_copy_typed(a->sbuf, a->sl.count, a->sl.type, mb.p, m, HINT_BYTE, &bytes);
    if (st == HINT_SUCCESS && cp->slot_head[a->rank] >= 0)
        st = deliver(a, cp, a->rank, mb.p, m); /* self loops */
    for (int t = 0; t < cp->nsteps && st == HINT_SUCCESS; t++)
        st = halving_step(a, cp, &cp->steps[t], &mb, &tmp, &tmpcap);
    if (st == HINT_SUCCESS)
        st = final_step(a, cp, &mb, m);
    free(tmp);
    free(mb.p);
    free(mb.off);
    free(mb.size);
    return st;
}
