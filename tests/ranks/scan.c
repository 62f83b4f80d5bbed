/*
 * tests/ranks/scan.c — the MPI reductions beyond reduce and allreduce, run as ranks under hintrun:
 *   - scan and exscan (HINT_SUM on int64, double and a strided vector of int64, in place too;
 *     exscan leaves rank 0's output alone), every algorithm forced in turn;
 *   - reduce_scatter with counts per rank (zeros and odd counts, in place, a derived type);
 *   - MINLOC / MAXLOC on the four pair types with many ties (the lowest index wins, and the index
 *     order is not the rank order) through reduce, allreduce, reduce_scatter(_block), scan and
 *     exscan, every algorithm; the pairs' padding is never written;
 *   - the pair types themselves: sizes, extents, the layout commit would give, point to point
 *     against a user-made struct type and inside a derived type;
 *   - alltoallw with a type per peer (contiguous and strided, int64 and double, counts 0 to 3);
 *   - bad arguments: HINT_ERR_OP, _ARG, _BUFFER, _TYPE on every rank, nobody waiting.
 * Each result is compared with a value every rank computes locally.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/coll.h"
#include "datatype/datatype.h"
#include "hint.h"
#include "tests/common/rankcheck.h"

int rc_rank;
static int P;
static const size_t counts[] = {0, 1, 7, 1000, 100000};
#define NCOUNTS (sizeof counts / sizeof counts[0])

/* Every algorithm of an operation in turn, then back to automatic selection. A forced algorithm
   that cannot run a call returns HINT_ERR_UNSUPPORTED (allowed; nothing was written). */
#define FOR_EACH_ALG(opid, alg)                                                                 \
    for (int k_ = 0; k_ <= coll_tables[opid].nalgs; k_++)                                        \
        for (const char *alg = force(opid, k_); alg; alg = NULL)

/* Algorithm k of the operation forced ("auto" past the last), and its name. */
static const char *force(int opid, int k)
{
    const struct coll_table *t = &coll_tables[opid];
    const char *name = k < t->nalgs ? t->algs[k].name : "auto";
    RC_OK(hint_coll_set(t->op, name));
    return name;
}

static bool ran(int st)
{
    if (st == HINT_ERR_UNSUPPORTED)
        return false;
    RC_OK(st);
    return true;
}

/* ---------------------------------------------------------------- scan, exscan */

static int64_t val(int r, size_t e) { return (int64_t)r * 1000 + (int64_t)(e % 997); }
static int64_t prefix(int upto, size_t e) /* sum over ranks 0 .. upto-1 */
{
    int64_t s = 0;
    for (int r = 0; r < upto; r++)
        s += val(r, e);
    return s;
}

static void scan_int64(const char *alg, size_t n, bool exclusive, bool in_place)
{
    int64_t *s = malloc((n + 1) * sizeof *s), *r = malloc((n + 1) * sizeof *r);
    for (size_t e = 0; e <= n; e++) {
        s[e] = val(rc_rank, e);
        r[e] = in_place ? s[e] : -1;
    }
    const void *src = in_place ? HINT_IN_PLACE : s;
    int st = exclusive ? hint_exscan(src, r, n, HINT_INT64, HINT_SUM, HINT_WORLD)
                       : hint_scan(src, r, n, HINT_INT64, HINT_SUM, HINT_WORLD);
    if (ran(st)) {
        for (size_t e = 0; e < n; e++) {
            int64_t want = exclusive && rc_rank == 0 ? (in_place ? s[e] : -1) : prefix(rc_rank + !exclusive, e);
            if (r[e] != want)
                RC_FAIL("%s %s%s P=%d n=%zu: element %zu is %lld, want %lld", exclusive ? "exscan" : "scan", alg,
                        in_place ? " in place" : "", P, n, e, (long long)r[e], (long long)want);
        }
        RC_CHECK(r[n] == (in_place ? s[n] : -1));
    }
    free(s);
    free(r);
}

/* doubles (exact: small integers) in a strided vector: every other double is data */
static void scan_strided(const char *alg, size_t n, bool exclusive)
{
    hint_type v;
    RC_OK(hint_type_vector(n ? n : 1, 1, 2, HINT_DOUBLE, &v));
    RC_OK(hint_type_commit(&v));
    size_t k = n ? 1 : 0, len = 2 * (n ? n : 1);
    double *s = malloc(len * sizeof *s), *r = malloc(len * sizeof *r);
    for (size_t i = 0; i < len; i++) {
        s[i] = (double)val(rc_rank, i / 2);
        r[i] = -1;
    }
    int st = exclusive ? hint_exscan(s, r, k, v, HINT_SUM, HINT_WORLD) : hint_scan(s, r, k, v, HINT_SUM, HINT_WORLD);
    if (ran(st))
        for (size_t i = 0; i < len; i++) {
            bool data = i % 2 == 0 && k && !(exclusive && rc_rank == 0);
            double want = data ? (double)prefix(rc_rank + !exclusive, i / 2) : -1;
            if (r[i] != want)
                RC_FAIL("%s strided %s P=%d n=%zu: double %zu is %g, want %g", exclusive ? "exscan" : "scan", alg, P,
                        n, i, r[i], want);
        }
    free(s);
    free(r);
    RC_OK(hint_type_free(&v));
}

static void test_scans(void)
{
    for (int ex = 0; ex < 2; ex++) {
        int opid = ex ? COLL_EXSCAN : COLL_SCAN;
        FOR_EACH_ALG(opid, alg)
        {
            for (size_t c = 0; c < NCOUNTS; c++) {
                scan_int64(alg, counts[c], ex, false);
                scan_int64(alg, counts[c], ex, true);
            }
            scan_strided(alg, 0, ex);
            scan_strided(alg, 5, ex);
            scan_strided(alg, 3000, ex);
        }
    }
}

/* ---------------------------------------------------------------- reduce_scatter */

static void reduce_scatter_case(const char *alg, size_t base, bool in_place, bool strided)
{
    size_t *rc = malloc((size_t)P * sizeof *rc), total = 0, first = 0;
    for (int p = 0; p < P; p++) {
        rc[p] = (base * (size_t)(p % 3)) / 2 + (size_t)(p % 2); /* 0 for rank 0 when base is small */
        first += p < rc_rank ? rc[p] : 0;
        total += rc[p];
    }
    hint_type t = HINT_INT64;
    size_t step = 1;
    if (strided) {
        hint_type v;
        RC_OK(hint_type_vector(1, 1, 2, HINT_INT64, &v));
        RC_OK(hint_type_resized(v, 0, 16, &t)); /* one int64 every 16 bytes */
        RC_OK(hint_type_free(&v));
        RC_OK(hint_type_commit(&t));
        step = 2;
    }
    size_t slen = step * (total + 1), rlen = step * (in_place ? total + 1 : rc[rc_rank] + 1);
    int64_t *s = malloc(slen * sizeof *s), *r = malloc(rlen * sizeof *r);
    for (size_t i = 0; i < slen; i++)
        s[i] = i % step ? -2 : val(rc_rank, i / step);
    for (size_t i = 0; i < rlen; i++)
        r[i] = in_place ? s[i] : -1;
    if (ran(hint_reduce_scatter(in_place ? HINT_IN_PLACE : s, r, rc, t, HINT_SUM, HINT_WORLD))) {
        for (size_t i = 0; i < step * rc[rc_rank]; i++) {
            int64_t want = i % step ? (in_place ? -2 : -1) : prefix(P, first + i / step);
            if (r[i] != want)
                RC_FAIL("reduce_scatter %s%s%s P=%d base %zu: int64 %zu is %lld, want %lld", alg,
                        in_place ? " in place" : "", strided ? " strided" : "", P, base, i, (long long)r[i],
                        (long long)want);
        }
        if (!in_place)
            RC_CHECK(r[step * rc[rc_rank]] == -1);
    }
    if (strided)
        RC_OK(hint_type_free(&t));
    free(s);
    free(r);
    free(rc);
}

static void test_reduce_scatter(void)
{
    FOR_EACH_ALG(COLL_REDUCE_SCATTER, alg)
    {
        for (size_t c = 0; c < NCOUNTS; c++) {
            size_t base = counts[c] > 20000 ? 20000 : counts[c];
            reduce_scatter_case(alg, base, false, false);
            reduce_scatter_case(alg, base, true, false);
        }
        reduce_scatter_case(alg, 7, false, true);
        reduce_scatter_case(alg, 999, true, true);
    }
}

/* ---------------------------------------------------------------- MINLOC / MAXLOC */

struct pairkind {
    hint_type t;
    const char *name;
    size_t vsize, ioff, ext; /* value bytes, offset of the int, extent */
    int vkind;               /* 0 float, 1 double, 2 long, 3 int */
};

static const struct pairkind pairs[] = {
    {HINT_FLOAT_INT, "float_int", sizeof(float), offsetof(struct { float v; int i; }, i),
     sizeof(struct { float v; int i; }), 0},
    {HINT_DOUBLE_INT, "double_int", sizeof(double), offsetof(struct { double v; int i; }, i),
     sizeof(struct { double v; int i; }), 1},
    {HINT_LONG_INT, "long_int", sizeof(long), offsetof(struct { long v; int i; }, i),
     sizeof(struct { long v; int i; }), 2},
    {HINT_2INT, "2int", sizeof(int), offsetof(struct { int v; int i; }, i), sizeof(struct { int v; int i; }), 3},
};
#define PAD 0xEE

/* Rank r's pair at index e: values 0..2, ranks 2k and 2k+1 always tie; the index runs against
   the rank order at odd e, so "lowest index" and "lowest rank" differ there. */
static int pv(int r, size_t e) { return (int)(((size_t)r / 2 + e) % 3); }
static int pi(int r, size_t e) { return e % 2 ? P - 1 - r : r; }

static void pair_put(const struct pairkind *k, char *buf, size_t e, int v, int i)
{
    char *at = buf + e * k->ext;
    float f = (float)v;
    double d = v;
    long l = v;
    memcpy(at, k->vkind == 0 ? (void *)&f : k->vkind == 1 ? (void *)&d : k->vkind == 2 ? (void *)&l : (void *)&v,
           k->vsize);
    memcpy(at + k->ioff, &i, sizeof i);
}

static void pair_get(const struct pairkind *k, const char *buf, size_t e, int *v, int *i)
{
    const char *at = buf + e * k->ext;
    float f;
    double d;
    long l;
    switch (k->vkind) {
    case 0: memcpy(&f, at, sizeof f); *v = (int)f; break;
    case 1: memcpy(&d, at, sizeof d); *v = (int)d; break;
    case 2: memcpy(&l, at, sizeof l); *v = (int)l; break;
    default: memcpy(v, at, sizeof *v);
    }
    memcpy(i, at + k->ioff, sizeof *i);
}

/* The winner over ranks [lo, hi) at index e. */
static void pair_want(bool max, int lo, int hi, size_t e, int *v, int *i)
{
    *v = pv(lo, e);
    *i = pi(lo, e);
    for (int r = lo + 1; r < hi; r++) {
        int x = pv(r, e), y = pi(r, e);
        if ((max ? x > *v : x < *v) || (x == *v && y < *i)) {
            *v = x;
            *i = y;
        }
    }
}

static char *pair_buf(const struct pairkind *k, size_t n, size_t first, bool filled)
{
    char *b = malloc((n + 1) * k->ext);
    memset(b, PAD, (n + 1) * k->ext);
    for (size_t e = 0; filled && e < n; e++)
        pair_put(k, b, e, pv(rc_rank, first + e), pi(rc_rank, first + e));
    return b;
}

/* n pairs of r against the winners over [lo, hi) from global index first; padding and the
   element past the end untouched. */
static void pair_expect(const char *what, const char *alg, const struct pairkind *k, bool max, const char *r,
                        size_t n, size_t first, int lo, int hi)
{
    for (size_t e = 0; e < n; e++) {
        int v, i, wv, wi;
        pair_get(k, r, e, &v, &i);
        pair_want(max, lo, hi, first + e, &wv, &wi);
        if (v != wv || i != wi)
            RC_FAIL("%s %s %s %s P=%d n=%zu: element %zu is (%d, %d), want (%d, %d)", what, max ? "maxloc" : "minloc",
                    k->name, alg, P, n, e, v, i, wv, wi);
        for (size_t b = k->ioff + sizeof(int); b < k->ext; b++)
            if ((unsigned char)r[e * k->ext + b] != PAD)
                RC_FAIL("%s %s %s: element %zu's padding byte %zu was written", what, k->name, alg, e, b);
    }
    for (size_t b = 0; b < k->ext; b++)
        RC_CHECK((unsigned char)r[n * k->ext + b] == PAD);
}

static void minmaxloc_calls(const struct pairkind *k, bool max, int opid, const char *alg, size_t n)
{
    hint_op op = max ? HINT_MAXLOC : HINT_MINLOC;
    char *s, *r;
    switch (opid) {
    case COLL_REDUCE:
        for (int root = 0; root < P; root += P > 2 ? P - 2 : 1) {
            s = pair_buf(k, n, 0, true);
            r = pair_buf(k, n, 0, false);
            if (ran(hint_reduce(s, r, n, k->t, op, root, HINT_WORLD)) && rc_rank == root)
                pair_expect("reduce", alg, k, max, r, n, 0, 0, P);
            free(s);
            free(r);
        }
        return;
    case COLL_ALLREDUCE:
        s = pair_buf(k, n, 0, true);
        r = pair_buf(k, n, 0, false);
        if (ran(hint_allreduce(s, r, n, k->t, op, HINT_WORLD)))
            pair_expect("allreduce", alg, k, max, r, n, 0, 0, P);
        break;
    case COLL_SCAN:
    case COLL_EXSCAN:
        s = pair_buf(k, n, 0, true);
        r = pair_buf(k, n, 0, false);
        if (opid == COLL_SCAN && ran(hint_scan(s, r, n, k->t, op, HINT_WORLD)))
            pair_expect("scan", alg, k, max, r, n, 0, 0, rc_rank + 1);
        if (opid == COLL_EXSCAN && ran(hint_exscan(s, r, n, k->t, op, HINT_WORLD)) && rc_rank > 0)
            pair_expect("exscan", alg, k, max, r, n, 0, 0, rc_rank);
        break;
    case COLL_REDUCE_SCATTER_BLOCK:
        s = pair_buf(k, n * (size_t)P, 0, true);
        r = pair_buf(k, n, 0, false);
        if (ran(hint_reduce_scatter_block(s, r, n, k->t, op, HINT_WORLD)))
            pair_expect("reduce_scatter_block", alg, k, max, r, n, n * (size_t)rc_rank, 0, P);
        break;
    default: { /* reduce_scatter: rank p gets n + p % 2 pairs */
        size_t *rc = malloc((size_t)P * sizeof *rc), total = 0, first = 0;
        for (int p = 0; p < P; p++) {
            rc[p] = n + (size_t)(p % 2);
            first += p < rc_rank ? rc[p] : 0;
            total += rc[p];
        }
        s = pair_buf(k, total, 0, true);
        r = pair_buf(k, rc[rc_rank], 0, false);
        if (ran(hint_reduce_scatter(s, r, rc, k->t, op, HINT_WORLD)))
            pair_expect("reduce_scatter", alg, k, max, r, rc[rc_rank], first, 0, P);
        free(rc);
    }
    }
    free(s);
    free(r);
}

static void test_minmaxloc(void)
{
    static const int ops[] = {COLL_REDUCE, COLL_ALLREDUCE, COLL_REDUCE_SCATTER_BLOCK, COLL_REDUCE_SCATTER, COLL_SCAN,
                              COLL_EXSCAN};
    static const size_t ns[] = {0, 1, 7, 3000};
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
        FOR_EACH_ALG(ops[o], alg)
    for (size_t k = 0; k < 4; k++)
        for (int max = 0; max < 2; max++)
            for (size_t c = 0; c < sizeof ns / sizeof ns[0]; c++)
                minmaxloc_calls(&pairs[k], max, ops[o], alg, ns[c]);
}

/* ---------------------------------------------------------------- the pair types */

static void test_pair_types(void)
{
    for (size_t k = 0; k < 4; k++) {
        size_t size;
        ptrdiff_t lb, ext, tlb, text;
        RC_OK(hint_type_size(pairs[k].t, &size));
        RC_OK(hint_type_extent(pairs[k].t, &lb, &ext));
        RC_OK(hint_type_true_extent(pairs[k].t, &tlb, &text));
        RC_CHECK(size == pairs[k].ioff + sizeof(int) && lb == 0 && (size_t)ext == pairs[k].ext);
        RC_CHECK(tlb == 0 && (size_t)text == size);
        /* the layout is the one commit gives a user's struct of the same fields */
        hint_type fields[2] = {pairs[k].vkind == 0 ? HINT_FLOAT : pairs[k].vkind == 1 ? HINT_DOUBLE
                                                   : pairs[k].vkind == 2 ? HINT_LONG : HINT_INT,
                               HINT_INT},
                  st, mine;
        size_t bl[2] = {1, 1};
        ptrdiff_t d[2] = {0, (ptrdiff_t)pairs[k].ioff};
        RC_OK(hint_type_struct(2, bl, d, fields, &st));
        RC_OK(hint_type_resized(st, 0, (ptrdiff_t)pairs[k].ext, &mine));
        RC_OK(hint_type_commit(&mine));
        char a[512], b[512];
        dt_describe(pairs[k].t, a, sizeof a);
        dt_describe(mine, b, sizeof b);
        if (strcmp(a, b) != 0)
            RC_FAIL("%s is described as\n%s\nbut a struct of its fields as\n%s", pairs[k].name, a, b);
        RC_CHECK(dt_is_contig(pairs[k].t) == dt_is_contig(mine));
        /* point to point: the pairs sent as HINT_*_INT arrive in the user's struct type and back */
        enum { N = 5 };
        char *s = pair_buf(&pairs[k], N, 0, true), *r = pair_buf(&pairs[k], N, 0, false);
        int to = (rc_rank + 1) % P, from = (rc_rank - 1 + P) % P;
        hint_status stt;
        RC_OK(hint_sendrecv(s, N, pairs[k].t, to, 7, r, N, mine, from, 7, HINT_WORLD, &stt));
        RC_CHECK(stt.bytes == N * size);
        for (size_t e = 0; e < N; e++) {
            int v, i;
            pair_get(&pairs[k], r, e, &v, &i);
            RC_CHECK(v == pv(from, e) && i == pi(from, e));
            for (size_t pb = pairs[k].ioff + sizeof(int); pb < pairs[k].ext; pb++)
                RC_CHECK((unsigned char)r[e * pairs[k].ext + pb] == PAD);
        }
        /* inside a derived type: every other pair of an array */
        hint_type every_other;
        RC_OK(hint_type_vector(2, 1, 2, pairs[k].t, &every_other));
        RC_OK(hint_type_commit(&every_other));
        memset(r, PAD, (N + 1) * pairs[k].ext);
        RC_OK(hint_sendrecv(s, 1, every_other, to, 8, r, 2, pairs[k].t, from, 8, HINT_WORLD, &stt));
        for (size_t e = 0; e < 2; e++) {
            int v, i;
            pair_get(&pairs[k], r, e, &v, &i);
            RC_CHECK(v == pv(from, 2 * e) && i == pi(from, 2 * e));
        }
        size_t ps;
        RC_OK(hint_pack_size(3, every_other, &ps));
        RC_CHECK(ps == 6 * size);
        RC_OK(hint_type_free(&every_other));
        RC_OK(hint_type_free(&mine));
        RC_OK(hint_type_free(&st));
        free(s);
        free(r);
    }
    /* 2int is two ints: a message of HINT_2INT may be received as ints; double_int not as doubles */
    int two[4] = {1, 2, 3, 4}, got[4] = {0};
    hint_status stt;
    RC_OK(hint_sendrecv(two, 2, HINT_2INT, rc_rank, 9, got, 4, HINT_INT, rc_rank, 9, HINT_WORLD, &stt));
    RC_CHECK(got[3] == 4 && stt.error == HINT_SUCCESS);
    struct {
        double v;
        int i;
    } di = {2.5, 3};
    double dd[2];
    RC_EXPECT(hint_sendrecv(&di, 1, HINT_DOUBLE_INT, rc_rank, 9, dd, 2, HINT_DOUBLE, rc_rank, 9, HINT_WORLD, &stt),
              HINT_ERR_TYPE);
}

/* ---------------------------------------------------------------- alltoallw */

/* The block from rank a to rank b: c = (a + b) % 4 elements; int64 when a + b is even, double
   otherwise; each side picks its own layout: contiguous on even ranks, every other element on
   odd ones. Values encode (sender, receiver, element). */
static size_t wcount(int a, int b) { return (size_t)((a + b) % 4); }
static double wval(int a, int b, size_t e) { return a * 10000.0 + b * 10.0 + (double)e; }

static void test_alltoallw(bool in_place)
{
    hint_type vi, vd, ti, td;
    RC_OK(hint_type_vector(1, 1, 2, HINT_INT64, &vi)); /* resized to two elements: every other */
    RC_OK(hint_type_resized(vi, 0, 16, &ti));
    RC_OK(hint_type_vector(1, 1, 2, HINT_DOUBLE, &vd));
    RC_OK(hint_type_resized(vd, 0, 16, &td));
    RC_OK(hint_type_commit(&ti));
    RC_OK(hint_type_commit(&td));
    size_t *sc = malloc(4 * (size_t)P * sizeof *sc), *sd = sc + P, *rc = sc + 2 * P, *rd = sc + 3 * P;
    hint_type *stypes = malloc(2 * (size_t)P * sizeof *stypes), *rtypes = stypes + P;
    size_t slot = 64; /* bytes per peer, blocks 8 bytes into their slot: the gaps must stay */
    bool odd = rc_rank % 2;
    for (int p = 0; p < P; p++) {
        bool dbl = (rc_rank + p) % 2;
        sc[p] = rc[p] = wcount(rc_rank, p);
        sd[p] = rd[p] = (size_t)p * slot + 8;
        stypes[p] = rtypes[p] = odd ? (dbl ? td : ti) : (dbl ? HINT_DOUBLE : HINT_INT64);
    }
    unsigned char *s = malloc((size_t)P * slot), *r = malloc((size_t)P * slot);
    memset(s, 0x5A, (size_t)P * slot);
    memset(r, 0xA5, (size_t)P * slot);
    size_t step = odd ? 2 : 1;
    for (int p = 0; p < P; p++)
        for (size_t e = 0; e < wcount(rc_rank, p); e++) {
            char *at = (char *)(in_place ? r : s) + sd[p] + e * 8 * step;
            double v = wval(rc_rank, p, e);
            int64_t iv = (int64_t)v;
            memcpy(at, (rc_rank + p) % 2 ? (void *)&v : (void *)&iv, 8);
        }
    unsigned char *before = malloc((size_t)P * slot);
    memcpy(before, r, (size_t)P * slot);
    FOR_EACH_ALG(COLL_ALLTOALLW, alg)
    {
        if (!in_place)
            memcpy(r, before, (size_t)P * slot);
        else if (alg[0] != 'p') /* in place: one run (pairwise) changes r */
            continue;
        if (!ran(hint_alltoallw(in_place ? HINT_IN_PLACE : s, sc, sd, stypes, r, rc, rd, rtypes, HINT_WORLD)))
            continue;
        for (int p = 0; p < P; p++)
            for (size_t b = 0; b < slot; b++) {
                size_t off = b - 8, e = off / (8 * step);
                bool data = b >= 8 && off % (8 * step) < 8 && e < wcount(p, rc_rank);
                unsigned char got = r[(size_t)p * slot + b];
                if (!data) {
                    unsigned char want = in_place ? before[(size_t)p * slot + b] : 0xA5;
                    if (got != want)
                        RC_FAIL("alltoallw %s%s P=%d: byte %zu of the block from %d (outside the data) changed", alg,
                                in_place ? " in place" : "", P, b, p);
                    continue;
                }
                if (off % 8)
                    continue;
                double want = wval(p, rc_rank, e), v;
                int64_t iv;
                if ((p + rc_rank) % 2)
                    memcpy(&v, r + (size_t)p * slot + b, 8);
                else {
                    memcpy(&iv, r + (size_t)p * slot + b, 8);
                    v = (double)iv;
                }
                if (v != want)
                    RC_FAIL("alltoallw %s%s P=%d: element %zu from %d is %g, want %g", alg, in_place ? " in place" : "",
                            P, e, p, v, want);
            }
    }
    free(before);
    free(s);
    free(r);
    free(sc);
    free(stypes);
    RC_OK(hint_type_free(&vi));
    RC_OK(hint_type_free(&vd));
    RC_OK(hint_type_free(&ti));
    RC_OK(hint_type_free(&td));
}

/* ---------------------------------------------------------------- errors */

static void test_errors(void)
{
    double d[4] = {0}, e[4] = {0};
    size_t c[64] = {0}, z[64] = {0};
    hint_type ts[64];
    for (int p = 0; p < 64; p++)
        ts[p] = HINT_INT;
    RC_EXPECT(hint_allreduce(d, e, 2, HINT_DOUBLE, HINT_MINLOC, HINT_WORLD), HINT_ERR_OP);
    RC_EXPECT(hint_scan(d, e, 1, HINT_DOUBLE_INT, HINT_SUM, HINT_WORLD), HINT_ERR_OP);
    RC_EXPECT(hint_exscan(d, e, 1, HINT_DOUBLE, HINT_OP_NULL, HINT_WORLD), HINT_ERR_OP);
    RC_EXPECT(hint_scan(d, HINT_IN_PLACE, 1, HINT_DOUBLE, HINT_SUM, HINT_WORLD), HINT_ERR_BUFFER);
    RC_EXPECT(hint_reduce_scatter(d, e, NULL, HINT_DOUBLE, HINT_SUM, HINT_WORLD), HINT_ERR_ARG);
    RC_EXPECT(hint_reduce_scatter(d, e, c, HINT_TYPE_NULL, HINT_SUM, HINT_WORLD), HINT_ERR_TYPE);
    RC_EXPECT(hint_alltoallw(d, c, z, NULL, e, c, z, ts, HINT_WORLD), HINT_ERR_ARG);
    RC_EXPECT(hint_alltoallw(d, c, z, ts, e, c, NULL, ts, HINT_WORLD), HINT_ERR_ARG);
    ts[rc_rank] = HINT_TYPE_NULL;
    RC_EXPECT(hint_alltoallw(d, c, z, ts, e, c, z, ts, HINT_WORLD), HINT_ERR_TYPE);
    ts[rc_rank] = HINT_INT;
    hint_type rts[64];
    for (int p = 0; p < 64; p++)
        rts[p] = HINT_INT;
    rts[rc_rank] = HINT_DOUBLE; /* own block: int against double */
    c[rc_rank] = 1;
    RC_EXPECT(hint_alltoallw(d, c, z, ts, e, c, z, rts, HINT_WORLD), HINT_ERR_TYPE);
    /* a freed user op is refused, not read */
    hint_op op;
    RC_OK(hint_op_create((hint_user_fn *)(void *)test_errors, 1, &op));
    hint_op stale = op;
    RC_OK(hint_op_free(&op));
    RC_EXPECT(hint_allreduce(d, e, 1, HINT_DOUBLE, stale, HINT_WORLD), HINT_ERR_OP);
}

int main(int argc, char **argv)
{
    RC_OK(hint_init(&argc, &argv));
    RC_OK(hint_group_rank(HINT_WORLD, &rc_rank));
    RC_OK(hint_group_size(HINT_WORLD, &P));
    RC_CHECK(P <= 64);
    test_pair_types();
    test_errors();
    test_scans();
    test_reduce_scatter();
    test_minmaxloc();
    test_alltoallw(false);
    test_alltoallw(true);
    RC_OK(hint_barrier(HINT_WORLD));
    if (rc_rank == 0)
        printf("ok scan P=%d\n", P);
    RC_OK(hint_finalize());
    return 0;
}
