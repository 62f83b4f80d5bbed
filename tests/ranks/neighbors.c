/*
 * tests/ranks/neighbors.c — virtual topologies and neighbourhood collectives, run under hintrun.
 *
 * Every rank builds, for each topology, the same reference model of the whole group: every
 * rank's in- and out-neighbour lists and, for each in-slot, which rank sends into it and from
 * which of its out-slots (the MPI matching rules: in a cart what goes to the +1 neighbour of dim
 * d lands in its -1 slot 2d and the other way round, which decides the case where both
 * neighbours are one rank (periodic size 2) or the rank itself (periodic size 1); in a graph the
 * k-th occurrence of X in my sources is the k-th occurrence of me in X's dests). Each received
 * value encodes (sender, receiver, sender's slot, element), so a wrong block names its origin;
 * every position that should not be written holds a sentinel and is checked too, as is the
 * send buffer after the call.
 *
 * Covered: hint_dims_create + hint_cart_create on 1-D to 4-D shapes (periodic or not, size-1
 * and periodic size-2 dims, fewer ranks than the group so some get HINT_GROUP_NULL, ndims 0,
 * carts on split groups); cart_coords / cart_rank (wrapping with any integer) / cart_shift
 * against coordinates; graphs (bidirectional ring, star, random graphs from a fixed seed with
 * duplicate edges, self-loops and degree-0 ranks); neighbors_count / neighbors; the four
 * neighbourhood collectives with HINT_INT and derived double types on one or both sides at
 * sizes 0 .. 10000, the v variants with irregular counts and non-monotone displacements;
 * hint_coll_last (naive while forced, a neighbourhood algorithm under selection) /
 * hint_coll_set; dup keeping the topology, split dropping it; every error case of the API.
 *
 * Usage: neighbors [all|errors|graph|cart|split]   (default all). Rank 0 prints "ok neighbors".
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hint.h"
#include "tests/common/rankcheck.h"

int rc_rank;
static int P;

/* What is being checked, printed with every failure. */
static char where[320] = "setup";

#define T_RANK rc_rank
#define T_SIZE P
#define T_WHERE where
#include "tests/common/stepcheck.h"

#define MAXD 8 /* dims of a cart here */

/* ---- reference model of a topology: every rank's lists and the matching of slots ---- */

struct model {
    char name[128];
    int n;                  /* group size */
    int is_cart;
    int *indeg, *outdeg;    /* per rank */
    int **in, **out;        /* neighbour lists (group ranks or HINT_PROC_NULL) */
    int **from, **from_slot; /* receiver r, in-slot i: the sender and its out-slot (or PROC_NULL, -1) */
};

static struct model *model_new(const char *name, int n)
{
    struct model *m = calloc(1, sizeof *m);
    snprintf(m->name, sizeof m->name, "%s", name);
    m->n = n;
    m->indeg = calloc((size_t)n, sizeof(int));
    m->outdeg = calloc((size_t)n, sizeof(int));
    m->in = calloc((size_t)n, sizeof(int *));
    m->out = calloc((size_t)n, sizeof(int *));
    m->from = calloc((size_t)n, sizeof(int *));
    m->from_slot = calloc((size_t)n, sizeof(int *));
    return m;
}

/* Lists of rank r (copied); +1 so that degree 0 still gives a non-NULL array. */
static void model_set(struct model *m, int r, int nin, const int *in, int nout, const int *out)
{
    m->indeg[r] = nin;
    m->outdeg[r] = nout;
    m->in[r] = malloc(((size_t)nin + 1) * sizeof(int));
    m->out[r] = malloc(((size_t)nout + 1) * sizeof(int));
    m->from[r] = malloc(((size_t)nin + 1) * sizeof(int));
    m->from_slot[r] = malloc(((size_t)nin + 1) * sizeof(int));
    if (nin)
        memcpy(m->in[r], in, (size_t)nin * sizeof(int));
    if (nout)
        memcpy(m->out[r], out, (size_t)nout * sizeof(int));
}

static void model_free(struct model *m)
{
    for (int r = 0; r < m->n; r++) {
        free(m->in[r]);
        free(m->out[r]);
        free(m->from[r]);
        free(m->from_slot[r]);
    }
    free(m->indeg);
    free(m->outdeg);
    free(m->in);
    free(m->out);
    free(m->from);
    free(m->from_slot);
    free(m);
}

/* Graph matching: the k-th occurrence of X in r's sources is the k-th occurrence of r in X's dests. */
static void model_match_graph(struct model *m)
{
    for (int r = 0; r < m->n; r++)
        for (int i = 0; i < m->indeg[r]; i++) {
            int x = m->in[r][i], k = 0;
            for (int j = 0; j < i; j++)
                k += m->in[r][j] == x;
            int slot = -1;
            for (int j = 0; j < m->outdeg[x] && slot < 0; j++)
                if (m->out[x][j] == r && k-- == 0)
                    slot = j;
            if (slot < 0)
                T_FAIL("test bug: graph %s: rank %d lists %d as a source more often than %d lists it", m->name, r, x,
                       x);
            m->from[r][i] = x;
            m->from_slot[r][i] = slot;
        }
}

/* ---- cart reference arithmetic (row-major, last dim fastest) ---- */

static int prod_of(int ndims, const int dims[])
{
    int p = 1;
    for (int d = 0; d < ndims; d++)
        p *= dims[d];
    return p;
}

static void ref_coords(int ndims, const int dims[], int r, int c[])
{
    for (int d = ndims - 1; d >= 0; d--) {
        c[d] = r % dims[d];
        r /= dims[d];
    }
}

static int wrap(long long c, int n) { return (int)(((c % n) + n) % n); }

/* Rank of coordinates c (periodic dims wrapped), or -1 when a non-periodic one is out of range. */
static int ref_rank(int ndims, const int dims[], const int periods[], const long long c[])
{
    int r = 0;
    for (int d = 0; d < ndims; d++) {
        long long x = c[d];
        if (periods[d])
            x = wrap(x, dims[d]);
        else if (x < 0 || x >= dims[d])
            return -1;
        r = r * dims[d] + (int)x;
    }
    return r;
}

/* The rank disp steps from r along dim d, or HINT_PROC_NULL beyond a non-periodic edge. */
static int ref_shift(int ndims, const int dims[], const int periods[], int r, int d, int disp)
{
    int c[MAXD];
    long long cc[MAXD];
    ref_coords(ndims, dims, r, c);
    for (int k = 0; k < ndims; k++)
        cc[k] = c[k];
    cc[d] += disp;
    int q = ref_rank(ndims, dims, periods, cc);
    return q < 0 ? HINT_PROC_NULL : q;
}

static struct model *model_cart(const char *name, int ndims, const int dims[], const int periods[])
{
    int n = prod_of(ndims, dims);
    struct model *m = model_new(name, n);
    m->is_cart = 1;
    for (int r = 0; r < n; r++) {
        int l[2 * MAXD];
        for (int d = 0; d < ndims; d++) {
            l[2 * d] = ref_shift(ndims, dims, periods, r, d, -1);
            l[2 * d + 1] = ref_shift(ndims, dims, periods, r, d, +1);
        }
        model_set(m, r, 2 * ndims, l, 2 * ndims, l);
        /* slot 2d (the -1 neighbour) gets what that neighbour sent to its +1 (its slot 2d+1) */
        for (int d = 0; d < ndims; d++) {
            m->from[r][2 * d] = l[2 * d];
            m->from_slot[r][2 * d] = l[2 * d] == HINT_PROC_NULL ? -1 : 2 * d + 1;
            m->from[r][2 * d + 1] = l[2 * d + 1];
            m->from_slot[r][2 * d + 1] = l[2 * d + 1] == HINT_PROC_NULL ? -1 : 2 * d;
        }
    }
    return m;
}

/* ---- values, sentinels, buffers ---- */

#define SENT_R (-7) /* receive positions that must stay untouched */
#define SENT_S (-9) /* send-buffer positions that are not data */
#define GUARD 16    /* untouched elements after every receive buffer */
#define ANY_TO 31   /* receiver field of allgather values (the sender does not know it) */
#define AG_SLOT 63  /* slot field of allgather values */

/* (sender, receiver, slot, element) in 30 bits: ranks < 31, slots < 63, elements < 16384 */
static int enc(int from, int to, int slot, size_t e)
{
    if (to == HINT_PROC_NULL)
        to = ANY_TO;
    return ((from * 32 + to) * 64 + slot) * 16384 + (int)e;
}

static void describe(double v, char *buf, size_t len)
{
    if (v == SENT_R)
        snprintf(buf, len, "the untouched sentinel %d", SENT_R);
    else if (v == SENT_S)
        snprintf(buf, len, "%d (the filler of the send buffer's gaps)", SENT_S);
    else if (v >= 0 && v < (double)(1 << 30) && v == (double)(int)v) {
        int x = (int)v, e = x % 16384, slot = (x / 16384) % 64, to = (x / 16384 / 64) % 32, from = x / 16384 / 64 / 32;
        char ts[16], ss[16];
        snprintf(ts, sizeof ts, "%d", to);
        snprintf(ss, sizeof ss, "%d", slot);
        snprintf(buf, len, "%d = {from %d, to %s, slot %s, element %d}", x, from, to == ANY_TO ? "any" : ts,
                 slot == AG_SLOT ? "allgather" : ss, e);
    } else
        snprintf(buf, len, "%g (not a value this test sends)", v);
}

enum lay { L_CONTIG, L_EVERY_OTHER, L_PAIRS };

/* One side of a call: base element (int or double) and how the type lays elements out. */
struct side {
    const char *name;
    int dbl;
    enum lay lay;
    hint_type t;
};

static struct side S_INT, S_DBL, S_EO, S_PAIRS;
static hint_type t_vec;

/* logical elements per element of the side's type */
static size_t per(const struct side *s) { return s->lay == L_PAIRS ? 2 : 1; }
/* extent of the side's type in base elements */
static size_t ext(const struct side *s) { return s->lay == L_CONTIG ? 1 : s->lay == L_EVERY_OTHER ? 2 : 5; }
/* base-element offset of logical element e from the start of a block */
static size_t off(const struct side *s, size_t e)
{
    return s->lay == L_CONTIG ? e : s->lay == L_EVERY_OTHER ? 2 * e : (e / 2) * 5 + (e % 2) * 3;
}

static void make_types(void)
{
    hint_type eo;
    ptrdiff_t lb, ex;
    RC_OK(hint_type_resized(HINT_DOUBLE, 0, 2 * (ptrdiff_t)sizeof(double), &eo));
    RC_OK(hint_type_commit(&eo));
    RC_OK(hint_type_vector(2, 1, 3, HINT_DOUBLE, &t_vec));
    hint_type pairs;
    RC_OK(hint_type_resized(t_vec, 0, 5 * (ptrdiff_t)sizeof(double), &pairs));
    RC_OK(hint_type_commit(&pairs));
    RC_OK(hint_type_extent(eo, &lb, &ex));
    RC_CHECK(lb == 0 && ex == 2 * (ptrdiff_t)sizeof(double));
    RC_OK(hint_type_extent(pairs, &lb, &ex));
    RC_CHECK(lb == 0 && ex == 5 * (ptrdiff_t)sizeof(double));
    S_INT = (struct side){"int", 0, L_CONTIG, HINT_INT};
    S_DBL = (struct side){"double", 1, L_CONTIG, HINT_DOUBLE};
    S_EO = (struct side){"every-other double (resized)", 1, L_EVERY_OTHER, eo};
    S_PAIRS = (struct side){"vector(2,1,3) of double resized to 5", 1, L_PAIRS, pairs};
}

static void free_types(void)
{
    RC_OK(hint_type_free(&S_EO.t));
    RC_OK(hint_type_free(&S_PAIRS.t));
    RC_OK(hint_type_free(&t_vec));
    RC_CHECK(S_EO.t == HINT_TYPE_NULL && S_PAIRS.t == HINT_TYPE_NULL);
}

static void *balloc(int dbl, size_t n, int fill)
{
    void *p = malloc((n + 1) * (dbl ? sizeof(double) : sizeof(int)));
    T_CHECK(p != NULL);
    for (size_t i = 0; i < n; i++) {
        if (dbl)
            ((double *)p)[i] = fill;
        else
            ((int *)p)[i] = fill;
    }
    return p;
}

static void bset(int dbl, void *p, size_t i, int v)
{
    if (dbl)
        ((double *)p)[i] = v;
    else
        ((int *)p)[i] = v;
}

static double bget(int dbl, const void *p, size_t i) { return dbl ? ((const double *)p)[i] : ((const int *)p)[i]; }

/* Compare a buffer with what it should hold; on a difference name the first wrong position. */
static void verify(const char *what, int dbl, const void *buf, const int *want, const int *wslot, size_t len)
{
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < len; i++)
        if (bget(dbl, buf, i) != (double)want[i] && bad++ == 0)
            first = i;
    if (bad) {
        char a[128], b[128];
        describe(bget(dbl, buf, first), a, sizeof a);
        describe(want[first], b, sizeof b);
        char slot[48] = "a gap or the guard";
        if (wslot && wslot[first] >= 0)
            snprintf(slot, sizeof slot, "block of in-slot %d", wslot[first]);
        T_FAIL("%s: %zu of %zu elements wrong; first at element %zu (%s) holds %s, expected %s", what, bad, len, first,
               slot, a, b);
    }
}

static int grank(hint_group g)
{
    int r;
    T_OK(hint_group_rank(g, &r));
    return r;
}

/* naive while hint_coll_set forces it; NULL: selection chooses (collectives/rules_default.c) */
static const char *forced_alg;

/* The last call of op ran the forced algorithm, or under selection one of the neighbourhood
   algorithms ("trivial" allowed for a group of one or a call moving nothing). */
static void check_last(const char *op, int gsize, int may_trivial)
{
    static const char *const names[] = {"naive", "morton", "distance_halving", "staged"};
    const char *alg = NULL;
    T_OK(hint_coll_last(op, &alg));
    if (alg == NULL)
        T_FAIL("hint_coll_last(\"%s\") gave NULL after a call", op);
    int known = 0;
    for (int k = 0; k < (forced_alg ? 1 : 4); k++)
        known |= strcmp(alg, forced_alg ? forced_alg : names[k]) == 0;
    if (!known && !((gsize == 1 || may_trivial) && strcmp(alg, "trivial") == 0))
        T_FAIL("hint_coll_last(\"%s\") = \"%s\", expected %s (group size %d)", op, alg,
               forced_alg ? forced_alg : "a neighbourhood algorithm", gsize);
}

/* ---- neighbor_allgather / neighbor_alltoall ---- */

static void t_regular(hint_group g, const struct model *m, int a2a, size_t n, const struct side *ss,
                      const struct side *rs)
{
    const char *op = a2a ? "neighbor_alltoall" : "neighbor_allgather";
    snprintf(where, sizeof where, "%s: %s of %zu elements, %s -> %s", m->name, op, n, ss->name, rs->name);
    int me = grank(g), nin = m->indeg[me], nout = m->outdeg[me];
    size_t sblocks = a2a ? (size_t)nout : 1, sspan = n / per(ss) * ext(ss), rspan = n / per(rs) * ext(rs);
    size_t slen = sblocks * sspan + GUARD, rlen = (size_t)nin * rspan + GUARD;
    void *sb = balloc(ss->dbl, slen, SENT_S), *rb = balloc(rs->dbl, rlen, SENT_R);
    int *swant = malloc(slen * sizeof(int)), *want = malloc(rlen * sizeof(int)), *wslot = malloc(rlen * sizeof(int));
    for (size_t i = 0; i < slen; i++)
        swant[i] = SENT_S;
    for (size_t k = 0; k < sblocks; k++)
        for (size_t e = 0; e < n; e++) {
            size_t pos = k * sspan + off(ss, e);
            swant[pos] = a2a ? enc(me, m->out[me][k], (int)k, e) : enc(me, ANY_TO, AG_SLOT, e);
            bset(ss->dbl, sb, pos, swant[pos]);
        }
    for (size_t i = 0; i < rlen; i++) {
        want[i] = SENT_R;
        wslot[i] = i < (size_t)nin * rspan ? (int)(i / (rspan ? rspan : 1)) : -1;
    }
    for (int i = 0; i < nin; i++) {
        int s = m->from[me][i];
        if (s == HINT_PROC_NULL)
            continue;
        for (size_t e = 0; e < n; e++)
            want[(size_t)i * rspan + off(rs, e)] = a2a ? enc(s, me, m->from_slot[me][i], e) : enc(s, ANY_TO, AG_SLOT, e);
    }
    if (a2a)
        T_OK(hint_neighbor_alltoall(sb, n / per(ss), ss->t, rb, n / per(rs), rs->t, g));
    else
        T_OK(hint_neighbor_allgather(sb, n / per(ss), ss->t, rb, n / per(rs), rs->t, g));
    verify("receive buffer", rs->dbl, rb, want, wslot, rlen);
    verify("send buffer (must not change)", ss->dbl, sb, swant, NULL, slen);
    check_last(op, m->n, n == 0);
    free(sb);
    free(rb);
    free(swant);
    free(want);
    free(wslot);
}

/* ---- the v variants: irregular counts (some 0), displacements out of order with gaps ---- */

/* logical elements rank s sends in allgatherv, and along its out-slot j in alltoallv */
static size_t cnt_ag(int s, size_t scale) { return (size_t)((s * 7 + 3) % 5) * scale / 2; }
static size_t cnt_a2a(int s, int j, size_t scale) { return (size_t)((s * 5 + j * 3 + 1) % 4) * scale; }

/* Displacements of nb blocks of cnt[] elements: odd blocks first in reverse, then the even ones
   ascending, one element of gap before each; returns the total length in elements. */
static size_t scatter_displs(int nb, const size_t cnt[], size_t displ[])
{
    size_t pos = 1;
    for (int i = nb - 1 - ((nb - 1) % 2 == 0); i >= 1; i -= 2) {
        displ[i] = pos;
        pos += cnt[i] + 1;
    }
    for (int i = 0; i < nb; i += 2) {
        displ[i] = pos;
        pos += cnt[i] + 1;
    }
    return pos;
}

static void t_vector(hint_group g, const struct model *m, int a2a, size_t scale, const struct side *ss,
                     const struct side *rs)
{
    const char *op = a2a ? "neighbor_alltoallv" : "neighbor_allgatherv";
    snprintf(where, sizeof where, "%s: %s at scale %zu, %s -> %s", m->name, op, scale, ss->name, rs->name);
    int me = grank(g), nin = m->indeg[me], nout = m->outdeg[me];
    size_t lcm = per(ss) > per(rs) ? per(ss) : per(rs), moved = 0;
    size_t *sc = calloc((size_t)nout + 1, sizeof(size_t)), *sd = calloc((size_t)nout + 1, sizeof(size_t));
    size_t *rc = calloc((size_t)nin + 1, sizeof(size_t)), *rd = calloc((size_t)nin + 1, sizeof(size_t));
    size_t *sl = calloc((size_t)nout + 1, sizeof(size_t)), *rl = calloc((size_t)nin + 1, sizeof(size_t));
    /* send side */
    size_t slen;
    if (a2a) {
        for (int k = 0; k < nout; k++) {
            sl[k] = cnt_a2a(me, k, scale) * lcm;
            sc[k] = sl[k] / per(ss);
            if (m->out[me][k] != HINT_PROC_NULL)
                moved += sl[k];
        }
        slen = scatter_displs(nout, sc, sd) * ext(ss) + GUARD;
    } else {
        sl[0] = cnt_ag(me, scale) * lcm;
        sc[0] = sl[0] / per(ss);
        slen = sc[0] * ext(ss) + GUARD;
        for (int k = 0; k < nout; k++)
            moved += m->out[me][k] != HINT_PROC_NULL ? sl[0] : 0;
    }
    void *sb = balloc(ss->dbl, slen, SENT_S);
    int *swant = malloc(slen * sizeof(int));
    for (size_t i = 0; i < slen; i++)
        swant[i] = SENT_S;
    for (int k = 0; k < (a2a ? nout : 1); k++)
        for (size_t e = 0; e < sl[k]; e++) {
            size_t pos = sd[k] * ext(ss) + off(ss, e);
            swant[pos] = a2a ? enc(me, m->out[me][k], k, e) : enc(me, ANY_TO, AG_SLOT, e);
            bset(ss->dbl, sb, pos, swant[pos]);
        }
    /* receive side */
    for (int i = 0; i < nin; i++) {
        int s = m->from[me][i];
        if (s == HINT_PROC_NULL) {
            rc[i] = 2; /* nothing comes: this block stays untouched */
            continue;
        }
        rl[i] = (a2a ? cnt_a2a(s, m->from_slot[me][i], scale) : cnt_ag(s, scale)) * lcm;
        rc[i] = rl[i] / per(rs);
        moved += rl[i];
    }
    size_t rlen = scatter_displs(nin, rc, rd) * ext(rs) + GUARD;
    void *rb = balloc(rs->dbl, rlen, SENT_R);
    int *want = malloc(rlen * sizeof(int)), *wslot = malloc(rlen * sizeof(int));
    for (size_t i = 0; i < rlen; i++) {
        want[i] = SENT_R;
        wslot[i] = -1;
    }
    for (int i = 0; i < nin; i++) {
        for (size_t p = rd[i] * ext(rs); p < (rd[i] + rc[i]) * ext(rs); p++)
            wslot[p] = i;
        for (size_t e = 0; e < rl[i]; e++)
            want[rd[i] * ext(rs) + off(rs, e)] = a2a ? enc(m->from[me][i], me, m->from_slot[me][i], e)
                                                     : enc(m->from[me][i], ANY_TO, AG_SLOT, e);
    }
    if (a2a)
        T_OK(hint_neighbor_alltoallv(sb, sc, sd, ss->t, rb, rc, rd, rs->t, g));
    else
        T_OK(hint_neighbor_allgatherv(sb, sc[0], ss->t, rb, rc, rd, rs->t, g));
    verify("receive buffer", rs->dbl, rb, want, wslot, rlen);
    verify("send buffer (must not change)", ss->dbl, sb, swant, NULL, slen);
    check_last(op, m->n, moved == 0);
    free(sb);
    free(rb);
    free(swant);
    free(want);
    free(wslot);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(sl);
    free(rl);
}

/* Every collective on topology group g described by m. */
static void run_collectives(hint_group g, const struct model *m)
{
    static const size_t sizes[] = {0, 1, 7, 64, 10000};
    const struct side *combos[][2] = {{&S_DBL, &S_EO}, {&S_EO, &S_DBL}, {&S_DBL, &S_PAIRS}, {&S_PAIRS, &S_EO}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (int a2a = 0; a2a < 2; a2a++) {
            t_regular(g, m, a2a, sizes[i], &S_INT, &S_INT);
            for (size_t c = 0; c < sizeof combos / sizeof combos[0]; c++)
                if (sizes[i] % per(combos[c][0]) == 0 && sizes[i] % per(combos[c][1]) == 0)
                    t_regular(g, m, a2a, sizes[i], combos[c][0], combos[c][1]);
        }
    static const size_t scales[] = {0, 1, 5, 1500};
    for (size_t i = 0; i < sizeof scales / sizeof scales[0]; i++)
        for (int a2a = 0; a2a < 2; a2a++) {
            t_vector(g, m, a2a, scales[i], &S_INT, &S_INT);
            if (scales[i] == 5 || scales[i] == 1500) {
                t_vector(g, m, a2a, scales[i], &S_DBL, &S_EO);
                t_vector(g, m, a2a, scales[i], &S_PAIRS, &S_DBL);
                t_vector(g, m, a2a, scales[i], &S_EO, &S_PAIRS);
            }
        }
}

/* neighbors_count / neighbors of g against the model. */
static void check_lists(hint_group g, const struct model *m)
{
    snprintf(where, sizeof where, "%s: neighbors_count / neighbors", m->name);
    int me = grank(g), nin = -1, nout = -1;
    T_OK(hint_neighbors_count(g, &nin, &nout));
    if (nin != m->indeg[me] || nout != m->outdeg[me])
        T_FAIL("hint_neighbors_count gave in %d, out %d; expected in %d, out %d", nin, nout, m->indeg[me],
               m->outdeg[me]);
    int *src = malloc(((size_t)nin + 4) * sizeof(int)), *dst = malloc(((size_t)nout + 4) * sizeof(int));
    for (int extra = 0; extra <= 3; extra += 3) {
        for (int i = 0; i < nin + 4; i++)
            src[i] = -99;
        for (int i = 0; i < nout + 4; i++)
            dst[i] = -99;
        T_OK(hint_neighbors(g, nin + extra, src, nout + extra, dst));
        for (int i = 0; i < nin; i++)
            if (src[i] != m->in[me][i])
                T_FAIL("hint_neighbors (max +%d): sources[%d] = %d, expected %d", extra, i, src[i], m->in[me][i]);
        for (int i = 0; i < nout; i++)
            if (dst[i] != m->out[me][i])
                T_FAIL("hint_neighbors (max +%d): dests[%d] = %d, expected %d", extra, i, dst[i], m->out[me][i]);
    }
    if (nin > 0)
        T_EXPECT(hint_neighbors(g, nin - 1, src, nout, dst), HINT_ERR_ARG);
    if (nout > 0)
        T_EXPECT(hint_neighbors(g, nin, src, nout - 1, dst), HINT_ERR_ARG);
    free(src);
    free(dst);
}

/* A duplicate keeps the topology (as MPI_Comm_dup does) and works on its own; a group split
   from a topology group has none (as MPI_Comm_split). */
static void check_dup_split(hint_group g, const struct model *m)
{
    hint_group d = HINT_GROUP_NULL, s = HINT_GROUP_NULL;
    snprintf(where, sizeof where, "%s: hint_group_dup", m->name);
    T_OK(hint_group_dup(g, &d));
    struct model dm = *m; /* the same lists under another name */
    snprintf(dm.name, sizeof dm.name, "dup of %.100s", m->name);
    check_lists(d, &dm);
    t_regular(d, &dm, 1, 7, &S_INT, &S_INT);
    t_vector(d, &dm, 1, 5, &S_INT, &S_INT);
    snprintf(where, sizeof where, "%s: hint_group_free", dm.name);
    T_OK(hint_group_free(&d));
    snprintf(where, sizeof where, "%s: hint_group_split of it has no topology", m->name);
    T_OK(hint_group_split(g, 0, grank(g), &s));
    int a, b;
    T_EXPECT(hint_neighbors_count(s, &a, &b), HINT_ERR_TOPOLOGY);
    T_OK(hint_group_free(&s));
}

/* ---- carts ---- */

static int reorder_flip;

/* Create a cart on base, check every query against the reference and run the collectives. */
static void check_cart(hint_group base, const char *label, int ndims, const int dims[], const int periods[])
{
    char name[128];
    int len = snprintf(name, sizeof name, "cart %s ", label);
    for (int d = 0; d < ndims; d++)
        len += snprintf(name + len, sizeof name - (size_t)len, "%s%d%s", d ? "x" : "", dims[d], periods[d] ? "p" : "");
    if (ndims == 0)
        snprintf(name + len, sizeof name - (size_t)len, "(ndims 0)");
    snprintf(where, sizeof where, "%s: hint_cart_create", name);
    int n = prod_of(ndims, dims), bsize, brank = grank(base);
    T_OK(hint_group_size(base, &bsize));
    T_CHECK(n <= bsize);
    hint_group g = (hint_group)&reorder_flip; /* must be overwritten */
    T_OK(hint_cart_create(base, ndims, dims, periods, reorder_flip ^= 1, &g));
    if (brank >= n) {
        if (g != HINT_GROUP_NULL)
            T_FAIL("base rank %d is beyond the cart's %d ranks but got a group", brank, n);
        return;
    }
    T_CHECK(g != HINT_GROUP_NULL);
    int gsize, gr = grank(g);
    T_OK(hint_group_size(g, &gsize));
    if (gsize != n || gr != brank)
        T_FAIL("cart group has size %d and my rank %d in it; expected size %d and rank %d", gsize, gr, n, brank);
    /* the same order as base: rank q of the cart is rank q of base */
    for (int q = 0; q < n; q++) {
        int qb = -1;
        T_OK(hint_group_translate(g, 1, &q, base, &qb));
        if (qb != q)
            T_FAIL("cart rank %d is base rank %d (should be %d: same rank order)", q, qb, q);
    }
    /* coords / rank round trips for every rank */
    snprintf(where, sizeof where, "%s: cart_coords / cart_rank", name);
    for (int q = 0; q < n; q++) {
        int c[MAXD + 2], want[MAXD], r = -1;
        ref_coords(ndims, dims, q, want);
        T_OK(hint_cart_coords(g, q, ndims, c));
        for (int d = 0; d < ndims; d++)
            if (c[d] != want[d])
                T_FAIL("hint_cart_coords(rank %d): coordinate %d is %d, expected %d", q, d, c[d], want[d]);
        T_OK(hint_cart_coords(g, q, ndims + 2, c)); /* a larger array is fine */
        for (int d = 0; d < ndims; d++)
            T_CHECK(c[d] == want[d]);
        T_OK(hint_cart_rank(g, want, &r));
        if (r != q)
            T_FAIL("hint_cart_rank of rank %d's coordinates gave %d", q, r);
        /* periodic dims wrap any integer; non-periodic ones out of range are HINT_ERR_RANK */
        static const long long mult[] = {-1, 1, 3, -7, -1000003};
        for (int d = 0; d < ndims; d++)
            for (size_t s = 0; s < sizeof mult / sizeof mult[0] + 4; s++) {
                long long cc[MAXD];
                int ci[MAXD];
                for (int k = 0; k < ndims; k++)
                    cc[k] = want[k];
                cc[d] = s < 5 ? want[d] + mult[s] * dims[d] : s == 5 ? -1 : s == 6 ? dims[d] : s == 7 ? INT_MAX : INT_MIN;
                for (int k = 0; k < ndims; k++)
                    ci[k] = (int)cc[k];
                int wr = ref_rank(ndims, dims, periods, cc), st;
                r = -5;
                st = hint_cart_rank(g, ci, &r);
                if (wr < 0 && st != HINT_ERR_RANK)
                    T_FAIL("hint_cart_rank with non-periodic coordinate %d = %d (size %d) returned %d (%s), "
                           "expected HINT_ERR_RANK",
                           d, ci[d], dims[d], st, hint_strerror(st));
                if (wr >= 0 && (st != HINT_SUCCESS || r != wr))
                    T_FAIL("hint_cart_rank with periodic coordinate %d = %d (size %d): status %d (%s), rank %d; "
                           "expected rank %d",
                           d, ci[d], dims[d], st, hint_strerror(st), r, wr);
            }
        /* all periodic dims moved at once */
        long long cc[MAXD];
        int ci[MAXD];
        for (int d = 0; d < ndims; d++)
            cc[d] = want[d] + (periods[d] ? (long long)(d % 2 ? -3 : 2) * dims[d] - 1 : 0);
        for (int d = 0; d < ndims; d++)
            ci[d] = (int)cc[d];
        int wr = ref_rank(ndims, dims, periods, cc);
        if (wr >= 0) {
            T_OK(hint_cart_rank(g, ci, &r));
            if (r != wr)
                T_FAIL("hint_cart_rank with all periodic coordinates shifted (rank %d): got %d, expected %d", q, r, wr);
        }
    }
    /* errors of the queries */
    snprintf(where, sizeof where, "%s: cart query errors", name);
    {
        int c[MAXD + 2], src, dst;
        T_EXPECT(hint_cart_coords(g, -1, ndims, c), HINT_ERR_RANK);
        T_EXPECT(hint_cart_coords(g, n, ndims, c), HINT_ERR_RANK);
        if (ndims > 0)
            T_EXPECT(hint_cart_coords(g, 0, ndims - 1, c), HINT_ERR_ARG);
        T_EXPECT(hint_cart_shift(g, -1, 1, &src, &dst), HINT_ERR_ARG);
        T_EXPECT(hint_cart_shift(g, ndims, 1, &src, &dst), HINT_ERR_ARG);
    }
    /* shifts against the coordinates */
    snprintf(where, sizeof where, "%s: cart_shift", name);
    static const int disps[] = {1, -1, 2, 0, -3, 5, INT_MAX, INT_MIN + 1};
    for (int d = 0; d < ndims; d++)
        for (size_t k = 0; k < sizeof disps / sizeof disps[0]; k++) {
            int src = -99, dst = -99;
            T_OK(hint_cart_shift(g, d, disps[k], &src, &dst));
            int ws = ref_shift(ndims, dims, periods, gr, d, -disps[k]);
            int wd = ref_shift(ndims, dims, periods, gr, d, disps[k]);
            if (src != ws || dst != wd)
                T_FAIL("hint_cart_shift(dim %d, disp %d) at rank %d gave source %d, dest %d; expected %d, %d", d,
                       disps[k], gr, src, dst, ws, wd);
        }
    struct model *m = model_cart(name, ndims, dims, periods);
    check_lists(g, m);
    /* neighbors agrees with cart_shift(d, 1) */
    for (int d = 0; d < ndims; d++) {
        int src, dst;
        T_OK(hint_cart_shift(g, d, 1, &src, &dst));
        T_CHECK(src == m->in[gr][2 * d] && dst == m->in[gr][2 * d + 1]);
    }
    run_collectives(g, m);
    check_dup_split(g, m);
    model_free(m);
    snprintf(where, sizeof where, "%s: hint_group_free", name);
    T_OK(hint_group_free(&g));
    T_CHECK(g == HINT_GROUP_NULL);
}

/* dims_create for ndims dims (entries given in fixed, 0 = free) then the cart. */
static void check_cart_dc(hint_group base, const char *label, int ndims, const int fixed[], const int periods[])
{
    int size, dims[MAXD];
    T_OK(hint_group_size(base, &size));
    snprintf(where, sizeof where, "hint_dims_create(%d, %d) for cart %s", size, ndims, label);
    for (int d = 0; d < ndims; d++)
        dims[d] = fixed ? fixed[d] : 0;
    T_OK(hint_dims_create(size, ndims, dims));
    T_CHECK(prod_of(ndims, dims) == size);
    for (int d = 0; d < ndims; d++)
        T_CHECK(dims[d] >= 1 && (!fixed || !fixed[d] || dims[d] == fixed[d]));
    for (int d = 1; d < ndims; d++)
        T_CHECK(fixed || dims[d] <= dims[d - 1]);
    check_cart(base, label, ndims, dims, periods);
}

static void carts(hint_group base)
{
    int size;
    T_OK(hint_group_size(base, &size));
    const int p1[] = {1}, p0[] = {0}, p10[] = {1, 0}, p01[] = {0, 1}, p00[] = {0, 0}, p11[] = {1, 1};
    const int p101[] = {1, 0, 1}, p111[] = {1, 1, 1}, p1111[] = {1, 1, 1, 1};
    int d[4];
    d[0] = size;
    check_cart(base, "1-D", 1, d, p1);
    check_cart(base, "1-D", 1, d, p0);
    check_cart_dc(base, "2-D", 2, NULL, p10);
    check_cart_dc(base, "2-D", 2, NULL, p01);
    check_cart_dc(base, "3-D", 3, NULL, p101);
    check_cart_dc(base, "3-D", 3, NULL, p111);
    check_cart_dc(base, "4-D", 4, NULL, p1111);
    /* a size-1 dim, periodic (the rank is both its own neighbours) and not (both PROC_NULL) */
    const int f1x[] = {1, 0}, fx1[] = {0, 1};
    check_cart_dc(base, "size-1 dim", 2, f1x, p10);
    check_cart_dc(base, "size-1 dim", 2, fx1, p00);
    check_cart_dc(base, "size-1 dim", 2, fx1, p01);
    /* a periodic dim of size 2: both neighbours are one rank (fewer ranks than size when odd) */
    if (size >= 2) {
        d[0] = 2;
        d[1] = size / 2;
        check_cart(base, "size-2 periodic", 2, d, size % 2 ? p10 : p11);
        d[0] = size / 2;
        d[1] = 2;
        check_cart(base, "size-2 periodic", 2, d, p01);
    }
    /* fewer ranks than the group: the others get HINT_GROUP_NULL */
    if (size >= 2) {
        d[0] = size - 1;
        check_cart(base, "fewer ranks", 1, d, p1);
    }
    d[0] = 1;
    check_cart(base, "one rank", 1, d, p1);
    d[0] = d[1] = d[2] = 1;
    check_cart(base, "one rank", 3, d, p101);
    check_cart(base, "ndims 0", 0, NULL, NULL);
}

/* ---- graphs ---- */

static uint64_t rng_state;
static uint32_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 11);
}

static int reorder_graph;

static void check_graph(hint_group base, struct model *m)
{
    model_match_graph(m);
    snprintf(where, sizeof where, "%s: hint_graph_create_adjacent", m->name);
    int me = grank(base), bsize;
    T_OK(hint_group_size(base, &bsize));
    T_CHECK(bsize == m->n);
    hint_group g = HINT_GROUP_NULL;
    T_OK(hint_graph_create_adjacent(base, m->indeg[me], m->in[me], m->outdeg[me], m->out[me], reorder_graph ^= 1,
                                    &g));
    T_CHECK(g != HINT_GROUP_NULL);
    int gsize, gr = grank(g);
    T_OK(hint_group_size(g, &gsize));
    if (gsize != m->n || gr != me)
        T_FAIL("graph group has size %d and my rank %d in it; expected %d and %d", gsize, gr, m->n, me);
    for (int q = 0; q < m->n; q++) {
        int qb = -1;
        T_OK(hint_group_translate(g, 1, &q, base, &qb));
        T_CHECK(qb == q);
    }
    check_lists(g, m);
    snprintf(where, sizeof where, "%s: cart queries on a graph", m->name);
    int c[MAXD] = {0}, r, s, d;
    T_EXPECT(hint_cart_coords(g, 0, 1, c), HINT_ERR_TOPOLOGY);
    T_EXPECT(hint_cart_rank(g, c, &r), HINT_ERR_TOPOLOGY);
    T_EXPECT(hint_cart_shift(g, 0, 1, &s, &d), HINT_ERR_TOPOLOGY);
    run_collectives(g, m);
    check_dup_split(g, m);
    snprintf(where, sizeof where, "%s: hint_group_free", m->name);
    T_OK(hint_group_free(&g));
    T_CHECK(g == HINT_GROUP_NULL);
    model_free(m);
}

/* Bidirectional ring: sources {prev, next}, dests {next, prev} (n = 2: duplicates; n = 1: self-loops). */
static struct model *graph_ring(const char *label, int n)
{
    char name[96];
    snprintf(name, sizeof name, "graph %sring of %d", label, n);
    struct model *m = model_new(name, n);
    for (int r = 0; r < n; r++) {
        int prev = (r + n - 1) % n, next = (r + 1) % n;
        int in[2] = {prev, next}, out[2] = {next, prev};
        model_set(m, r, 2, in, 2, out);
    }
    return m;
}

/* Star: rank 0 hears from 1..n-1 and sends to them in reverse; the others talk to 0 only. */
static struct model *graph_star(int n)
{
    char name[96];
    snprintf(name, sizeof name, "graph star of %d", n);
    struct model *m = model_new(name, n);
    int *in = malloc((size_t)n * sizeof(int)), *out = malloc((size_t)n * sizeof(int)), zero = 0;
    for (int i = 1; i < n; i++) {
        in[i - 1] = i;
        out[i - 1] = n - i;
    }
    model_set(m, 0, n - 1, in, n - 1, out);
    for (int r = 1; r < n; r++)
        model_set(m, r, 1, &zero, 1, &zero);
    free(in);
    free(out);
    return m;
}

/* Random graph from seed, the same on every rank: duplicate edges, self-loops, rank n-1 sends to
   nobody, rank 0 hears from nobody (n > 2), sources in shuffled order. */
static struct model *graph_random(const char *label, int n, uint64_t seed)
{
    char name[96];
    snprintf(name, sizeof name, "graph %srandom of %d (seed %llu)", label, n, (unsigned long long)seed);
    struct model *m = model_new(name, n);
    rng_state = seed;
    int **out = calloc((size_t)n, sizeof(int *)), *nout = calloc((size_t)n, sizeof(int));
    for (int r = 0; r < n; r++) {
        out[r] = malloc(((size_t)n + 8) * sizeof(int));
        int k = (n > 1 && r == n - 1) ? 0 : (int)(rng() % (uint32_t)(n + 3));
        for (int j = 0; j < k; j++)
            out[r][j] = n > 2 ? 1 + (int)(rng() % (uint32_t)(n - 1)) : (int)(rng() % (uint32_t)n);
        if (n == 1 || (r == 0 && n >= 2)) { /* a duplicate edge */
            out[r][k++] = n - 1 > 0 ? 1 : 0;
            out[r][k++] = n - 1 > 0 ? 1 : 0;
        }
        if (r == 1 && n > 2) { /* duplicate self-loops */
            out[r][k++] = 1;
            out[r][k++] = 1;
        }
        nout[r] = k;
    }
    for (int r = 0; r < n; r++) {
        int cnt = 0;
        for (int s = 0; s < n; s++)
            for (int j = 0; j < nout[s]; j++)
                cnt += out[s][j] == r;
        int *in = malloc(((size_t)cnt + 1) * sizeof(int)), k = 0;
        for (int s = 0; s < n; s++)
            for (int j = 0; j < nout[s]; j++)
                if (out[s][j] == r)
                    in[k++] = s;
        for (int i = cnt - 1; i > 0; i--) {
            int j = (int)(rng() % (uint32_t)(i + 1)), t = in[i];
            in[i] = in[j];
            in[j] = t;
        }
        model_set(m, r, cnt, in, nout[r], out[r]);
        free(in);
    }
    for (int r = 0; r < n; r++)
        free(out[r]);
    free(out);
    free(nout);
    return m;
}

/* ---- errors: every rank makes the same bad call, so nobody waits for anyone ---- */

static void errors(void)
{
    hint_group W = HINT_WORLD, g = HINT_GROUP_NULL;
    int dims[3], periods[3] = {1, 1, 1}, c[3] = {0, 0, 0}, a, b, lst[4];
    snprintf(where, sizeof where, "cart_create errors");
    dims[0] = P + 1;
    T_EXPECT(hint_cart_create(W, 1, dims, periods, 0, &g), HINT_ERR_TOPOLOGY);
    dims[0] = P;
    dims[1] = 2;
    T_EXPECT(hint_cart_create(W, 2, dims, periods, 0, &g), HINT_ERR_TOPOLOGY);
    T_EXPECT(hint_cart_create(W, -1, dims, periods, 0, &g), HINT_ERR_ARG);
    dims[0] = 0;
    T_EXPECT(hint_cart_create(W, 1, dims, periods, 0, &g), HINT_ERR_ARG);
    dims[0] = -1;
    T_EXPECT(hint_cart_create(W, 1, dims, periods, 0, &g), HINT_ERR_ARG);
    dims[0] = 1;
    dims[1] = -P;
    T_EXPECT(hint_cart_create(W, 2, dims, periods, 0, &g), HINT_ERR_ARG);
    dims[0] = 1;
    T_EXPECT(hint_cart_create(W, 1, NULL, periods, 0, &g), HINT_ERR_ARG);
    T_EXPECT(hint_cart_create(W, 1, dims, NULL, 0, &g), HINT_ERR_ARG);
    T_EXPECT(hint_cart_create(W, 1, dims, periods, 0, NULL), HINT_ERR_ARG);
    T_CHECK(g == HINT_GROUP_NULL);

    snprintf(where, sizeof where, "cart queries on HINT_WORLD (no topology)");
    T_EXPECT(hint_cart_coords(W, 0, 1, c), HINT_ERR_TOPOLOGY);
    T_EXPECT(hint_cart_rank(W, c, &a), HINT_ERR_TOPOLOGY);
    T_EXPECT(hint_cart_shift(W, 0, 1, &a, &b), HINT_ERR_TOPOLOGY);
    T_EXPECT(hint_neighbors_count(W, &a, &b), HINT_ERR_TOPOLOGY);
    T_EXPECT(hint_neighbors(W, 4, lst, 4, lst), HINT_ERR_TOPOLOGY);
    /* a group without topology cannot take a neighbourhood collective either */
    int x = 0, y[8];
    size_t cnt[1] = {1}, dsp[1] = {0};
    T_EXPECT(hint_neighbor_allgather(&x, 1, HINT_INT, y, 1, HINT_INT, W), HINT_ERR_TOPOLOGY);
    T_EXPECT(hint_neighbor_alltoall(&x, 1, HINT_INT, y, 1, HINT_INT, W), HINT_ERR_TOPOLOGY);
    T_EXPECT(hint_neighbor_allgatherv(&x, 1, HINT_INT, y, cnt, dsp, HINT_INT, W), HINT_ERR_TOPOLOGY);
    T_EXPECT(hint_neighbor_alltoallv(&x, cnt, dsp, HINT_INT, y, cnt, dsp, HINT_INT, W), HINT_ERR_TOPOLOGY);

    snprintf(where, sizeof where, "graph_create_adjacent errors");
    int me = rc_rank, bad_hi = P, bad_lo = -1;
    T_EXPECT(hint_graph_create_adjacent(W, -1, &me, 1, &me, 0, &g), HINT_ERR_ARG);
    T_EXPECT(hint_graph_create_adjacent(W, 1, &me, -1, &me, 0, &g), HINT_ERR_ARG);
    T_EXPECT(hint_graph_create_adjacent(W, 1, &bad_hi, 1, &me, 0, &g), HINT_ERR_RANK);
    T_EXPECT(hint_graph_create_adjacent(W, 1, &me, 1, &bad_hi, 0, &g), HINT_ERR_RANK);
    T_EXPECT(hint_graph_create_adjacent(W, 1, &bad_lo, 1, &me, 0, &g), HINT_ERR_RANK);
    T_EXPECT(hint_graph_create_adjacent(W, 1, &me, 1, &bad_lo, 0, &g), HINT_ERR_RANK);
    T_CHECK(g == HINT_GROUP_NULL);

    snprintf(where, sizeof where, "algorithm names");
    static const char *ops[] = {"neighbor_allgather", "neighbor_alltoall", "neighbor_allgatherv", "neighbor_alltoallv"};
    for (int i = 0; i < 4; i++) {
        T_EXPECT(hint_coll_set(ops[i], "no-such-algorithm"), HINT_ERR_ARG);
        T_OK(hint_coll_set(ops[i], "naive"));
        T_OK(hint_coll_set(ops[i], "auto"));
    }
    /* after all the refused calls the world still works together */
    snprintf(where, sizeof where, "barrier after the errors");
    T_OK(hint_barrier(W));
}

int main(int argc, char **argv)
{
    RC_OK(hint_init(&argc, &argv));
    RC_OK(hint_group_rank(HINT_WORLD, &rc_rank));
    RC_OK(hint_group_size(HINT_WORLD, &P));
    RC_CHECK(P <= 30); /* the value encoding has 5 bits per rank */
    const char *what = argc > 1 ? argv[1] : "all";
    int all = !strcmp(what, "all");
    make_types();
    if (all || !strcmp(what, "errors"))
        errors();
    if (all || !strcmp(what, "graph")) {
        /* the first graph with naive forced through hint_coll_set, the rest by selection */
        static const char *ops[] = {"neighbor_allgather", "neighbor_alltoall", "neighbor_allgatherv",
                                    "neighbor_alltoallv"};
        for (int i = 0; i < 4; i++)
            RC_OK(hint_coll_set(ops[i], "naive"));
        forced_alg = "naive";
        check_graph(HINT_WORLD, graph_ring("", P));
        forced_alg = NULL;
        for (int i = 0; i < 4; i++)
            RC_OK(hint_coll_set(ops[i], "auto"));
        check_graph(HINT_WORLD, graph_star(P));
        check_graph(HINT_WORLD, graph_random("", P, 12345));
        check_graph(HINT_WORLD, graph_random("", P, 987654321));
    }
    if (all || !strcmp(what, "cart"))
        carts(HINT_WORLD);
    if (all || !strcmp(what, "split")) {
        /* topologies on the halves of a split world, both at once */
        hint_group half;
        snprintf(where, sizeof where, "split");
        T_OK(hint_group_split(HINT_WORLD, rc_rank % 2, rc_rank, &half));
        char label[32];
        snprintf(label, sizeof label, "half %d ", rc_rank % 2);
        int hs;
        T_OK(hint_group_size(half, &hs));
        int d1[1] = {hs}, p1[1] = {1}, p10[2] = {1, 0};
        check_cart(half, label, 1, d1, p1);
        check_cart_dc(half, label, 2, NULL, p10);
        check_graph(half, graph_random(label, hs, 4242));
        T_OK(hint_group_free(&half));
    }
    free_types();
    RC_OK(hint_finalize());
    if (rc_rank == 0)
        printf("ok neighbors\n");
    return 0;
}
