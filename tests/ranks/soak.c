/*
 * tests/ranks/soak.c — a randomized soak of the collectives, run as ranks under hintrun:
 *
 *   soak [--seed N] [--rounds N] [--max-bytes N] [--verbose]
 *
 * Each round is one action drawn from (seed, round): a collective on one of several live groups
 * (the world, dups, splits with random colours and some ranks left out, groups created from
 * random subsets, Cartesian grids), or freeing one group and creating another in its place, so
 * new groups keep inheriting the collective slots and staging areas of freed ones. A collective
 * draws its operation, block size (0 B to --max-bytes, skewed towards small), root, element
 * type, reduction op, in place or not, algorithm (auto, or forced with hint_coll_set to any
 * name of the operation's table; HINT_ERR_UNSUPPORTED is counted, not failed) and buffer kind
 * (stack, malloc, mmap, hint_malloc; sometimes a different kind per rank).
 *
 * Every world rank draws every decision of every round in the same order, members or not, so
 * the members of a group always agree. Data is a function of (round, rank, block, index), so
 * each rank checks what it received against a reference computed locally; send buffers and the
 * bytes after every buffer must come back unchanged. The first wrong byte ends the job with the
 * round, seed, operation, group, algorithm, size, root, buffers, index, expected and got, and a
 * command line that repeats the run. Rank 0 ends with a one-line summary.
 */
#include <alloca.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "collectives/coll.h"
#include "hint.h"

/* ---- options ---- */

static uint64_t opt_seed = 1;
static long opt_rounds = 200;
static size_t opt_max_bytes = 256 << 10;
static bool opt_verbose;

static int world_rank, world_size;

/* ---- the shared random stream: one per (seed, round), drawn identically by every rank ---- */

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t stream; /* this round's state */

static uint64_t draw(void) { return mix64(stream += 0x9E3779B97F4A7C15ull); }

static void stream_start(long round) { stream = mix64(opt_seed * 0x9E3779B97F4A7C15ull + (uint64_t)round); }

/* 0 with probability 1/(log2(max)+2), else log-uniform in [1, max]: small sizes are frequent */
static size_t draw_bytes(size_t max)
{
    uint64_t a = draw(), b = draw();
    int bits = 0;
    while (bits < 62 && ((size_t)1 << bits) <= max)
        bits++;
    int e = (int)(a % (uint64_t)(bits + 1));
    if (e == 0 || max == 0)
        return 0;
    size_t lo = (size_t)1 << (e - 1), hi = ((size_t)1 << e) - 1;
    if (hi > max)
        hi = max;
    return lo + (size_t)(b % (hi - lo + 1));
}

/* ---- groups: slot 0 is the world; the others are freed and recreated as the run goes ---- */

enum { NSLOTS = 6 };
enum slot_kind { SK_NONE, SK_WORLD, SK_DUP, SK_SPLIT, SK_CREATE, SK_CART };

struct slot {
    enum slot_kind kind;
    bool cart;       /* a Cartesian topology (neighbourhood collectives apply) */
    bool full;       /* every world rank is a member, numbered as in the world */
    int gen;         /* how many groups this slot has held */
    char desc[120];
    hint_group h;    /* this rank's handle; HINT_GROUP_NULL when not a member */
};
static struct slot slots[NSLOTS];

static long groups_created, groups_freed;

/* ---- one call ---- */

static const char *const kind_names[] = {"stack", "malloc", "mmap", "hint_malloc"};
enum buf_kind { BK_STACK, BK_MALLOC, BK_MMAP, BK_HINT_MALLOC, BK_N };
#define GUARD 64
#define GUARD_BYTE 0xEE
#define STACK_MAX ((size_t)6 << 20) /* per call; larger stack buffers come from malloc */

struct buf {
    unsigned char *p;
    size_t n;
    int kind;
    unsigned char *before; /* a send buffer: its bytes before the call, which it must keep */
};

struct call {
    long round;
    int op;                /* enum coll_op_id */
    int slot;
    hint_group g;
    int r, P;
    size_t bytes;          /* drawn bytes per block */
    size_t count;          /* elements per block */
    hint_type t;
    const char *tname;
    size_t esize;
    hint_op rop;
    const char *ropname;
    int root;
    bool in_place;
    const char *alg;       /* forced name or "auto" */
    int kind;              /* this rank's buffer kind */
    bool mixed;            /* kinds drawn per rank */
    uint32_t salt;         /* varies the data per round */
    uint64_t vbase;        /* counts of the v variants */
    struct buf bufs[4];
    int nbufs;
    unsigned char *stack;  /* the stack kind's buffers: alloca'd by collective() */
    size_t stack_left;
};

static long calls[COLL_NOPS], unsupported[COLL_NOPS], kinds_used[BK_N];
static long bytes_checked;

static const char *op_name(int op) { return coll_tables[op].op; }

static void repro_line(void)
{
    fprintf(stderr, "soak: reproduce with: hintrun -n %d soak --seed %" PRIu64 " --rounds %ld --max-bytes %zu\n",
            world_size, opt_seed, opt_rounds, opt_max_bytes);
}

static void fail(const struct call *c, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    const char *ran = NULL;
    hint_coll_last(op_name(c->op), &ran);
    char kinds[128] = "";
    for (int i = 0; i < c->nbufs; i++)
        snprintf(kinds + strlen(kinds), sizeof kinds - strlen(kinds), "%s%s", i ? "+" : "",
                 kind_names[c->bufs[i].kind]);
    fprintf(stderr,
            "soak FAILED: seed %" PRIu64 " round %ld, world rank %d: %s on slot %d [%s] (rank %d of %d), "
            "algorithm %s (ran %s), %zu bytes per block (%zu x %s%s%s), root %d%s, buffers %s%s: %s\n",
            opt_seed, c->round, world_rank, op_name(c->op), c->slot, slots[c->slot].desc, c->r, c->P, c->alg,
            ran ? ran : "?", c->bytes, c->count, c->tname, c->ropname ? ", op " : "", c->ropname ? c->ropname : "",
            c->root, c->in_place ? ", in place" : "", kinds, c->mixed ? " (kinds differ per rank)" : "", what);
    repro_line();
    exit(1);
}

/* Fails on any status but success; false (and counted) for a forced algorithm that says it
   cannot run here. */
static bool call_ok(struct call *c, int st, const char *fn)
{
    if (st == HINT_ERR_UNSUPPORTED && strcmp(c->alg, "auto") != 0) {
        unsupported[c->op]++;
        return false;
    }
    if (st != HINT_SUCCESS)
        fail(c, "%s returned %d (%s)", fn, st, hint_strerror(st));
    return true;
}

/* ---- buffers of every kind, each followed by GUARD bytes that must stay untouched ---- */

static unsigned char *buf_take(struct call *c, size_t n)
{
    int kind = c->kind;
    size_t need = (n + GUARD + 63) & ~(size_t)63;
    if (kind == BK_STACK && need > c->stack_left)
        kind = BK_MALLOC; /* too large for the stack */
    unsigned char *p;
    if (kind == BK_STACK) {
        p = c->stack;
        c->stack += need;
        c->stack_left -= need;
    }
    else if (kind == BK_MALLOC)
        p = malloc(n + GUARD);
    else if (kind == BK_HINT_MALLOC && (p = hint_malloc(n + GUARD)) != NULL)
        ;
    else if (kind == BK_HINT_MALLOC)
        p = malloc(n + GUARD), kind = BK_MALLOC; /* no shared heap (HINT_HEAP=private) */
    else {
        p = mmap(NULL, n + GUARD, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            p = NULL;
    }
    if (p == NULL)
        fail(c, "no memory for a %s buffer of %zu bytes", kind_names[kind], n + GUARD);
    memset(p + n, GUARD_BYTE, GUARD);
    c->bufs[c->nbufs++] = (struct buf){.p = p, .n = n, .kind = kind};
    kinds_used[kind]++;
    return p;
}

#define BUF(c, n) buf_take((c), (n))

static void buf_release_all(struct call *c)
{
    for (int i = 0; i < c->nbufs; i++) {
        struct buf *b = &c->bufs[i];
        for (size_t k = 0; b->before && k < b->n; k++)
            if (b->p[k] != b->before[k])
                fail(c, "send buffer %d changed by the call: byte %zu of %zu: expected %u, got %u", i, k, b->n,
                     b->before[k], b->p[k]);
        free(b->before);
        for (size_t k = 0; k < GUARD; k++)
            if (b->p[b->n + k] != GUARD_BYTE)
                fail(c, "byte %zu past the end of buffer %d (%zu bytes) was overwritten: expected %u, got %u", k, i,
                     b->n, GUARD_BYTE, b->p[b->n + k]);
        if (b->kind == BK_MALLOC)
            free(b->p);
        else if (b->kind == BK_HINT_MALLOC)
            hint_free(b->p);
        else if (b->kind == BK_MMAP)
            munmap(b->p, b->n + GUARD);
    }
    c->nbufs = 0;
}

/* ---- data: bytes and reduction inputs as functions of (round salt, rank, block, index) ---- */

static unsigned char gen8(const struct call *c, int src, int blk, size_t i)
{
    return (unsigned char)((i ^ c->salt) * 11 + (i >> 8) * 7 + (size_t)src * 37 + (size_t)blk * 101 + (c->salt >> 8));
}

static void fill(const struct call *c, unsigned char *b, size_t n, int src, int blk)
{
    for (size_t i = 0; i < n; i++)
        b[i] = gen8(c, src, blk, i);
}

static void expect_block(const struct call *c, const char *what, const unsigned char *b, size_t n, int src, int blk)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != gen8(c, src, blk, i))
            fail(c, "%s: block %d from rank %d, first wrong byte %zu of %zu: expected %u, got %u", what, blk, src, i,
                 n, gen8(c, src, blk, i), b[i]);
    bytes_checked += (long)n;
}

/* a receive area nobody should write */
static void expect_untouched(const struct call *c, const char *what, const unsigned char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != GUARD_BYTE)
            fail(c, "%s: byte %zu of %zu was written: expected %u, got %u", what, i, n, GUARD_BYTE, b[i]);
}

/* The send buffer p, filled: a copy of its bytes, which it must still hold after the call. */
static void remember_send(struct call *c, const unsigned char *p)
{
    for (int i = 0; i < c->nbufs; i++)
        if (c->bufs[i].p == p && (c->bufs[i].before = malloc(c->bufs[i].n + 1)) != NULL)
            memcpy(c->bufs[i].before, p, c->bufs[i].n);
}

/* Small integers: sums of up to thousands of them are exact in every type. */
static long rval(const struct call *c, int q, size_t i)
{
    uint32_t h = (uint32_t)((i ^ c->salt) * 2654435761u) + (uint32_t)q * 40503u + (c->salt >> 12);
    return (long)((h >> 7) % 2001) - 1000;
}

static void rstore(const struct call *c, void *b, size_t i, long v)
{
    if (c->t == HINT_INT)
        ((int *)b)[i] = (int)v;
    else if (c->t == HINT_LONG)
        ((long *)b)[i] = v;
    else
        ((double *)b)[i] = (double)v;
}

static double rload(const struct call *c, const void *b, size_t i)
{
    if (c->t == HINT_INT)
        return ((const int *)b)[i];
    if (c->t == HINT_LONG)
        return (double)((const long *)b)[i];
    return ((const double *)b)[i];
}

static void rfill(const struct call *c, void *b, size_t n, int q)
{
    for (size_t i = 0; i < n; i++)
        rstore(c, b, i, rval(c, q, i));
}

/* element gi of the reduction over all ranks */
static long rwant(const struct call *c, size_t gi)
{
    long w = rval(c, 0, gi);
    for (int q = 1; q < c->P; q++) {
        long x = rval(c, q, gi);
        w = c->rop == HINT_SUM ? w + x : c->rop == HINT_MAX ? (x > w ? x : w) : (x < w ? x : w);
    }
    return w;
}

static void expect_reduced(const struct call *c, const char *what, const void *b, size_t n, size_t first)
{
    for (size_t i = 0; i < n; i++) {
        long w = rwant(c, first + i);
        double got = rload(c, b, i);
        if (got != (double)w)
            fail(c, "%s: first wrong element %zu of %zu: expected %ld, got %.17g", what, i, n, w, got);
    }
    bytes_checked += (long)(n * c->esize);
}

/* ---- v layouts: counts in elements, blocks in reverse rank order with gaps ---- */

static size_t vcount(const struct call *c, int p)
{
    uint64_t h = mix64(c->vbase + (uint64_t)p);
    return h % 5 == 0 ? 0 : c->count * (size_t)(h % 4 + 1) / 2 + (size_t)((h >> 8) % 3);
}

/* count of the block rank a sends to rank b (alltoallv); symmetric when in place */
static size_t pair_count(const struct call *c, int a, int b)
{
    if (c->in_place && a > b) {
        int t = a;
        a = b;
        b = t;
    }
    return vcount(c, a * 257 + b + 1);
}

static size_t layout_n(const struct call *c, int n, const size_t *cnt, size_t *dsp)
{
    size_t off = 0;
    for (int p = n - 1; p >= 0; p--) {
        dsp[p] = off;
        off += cnt[p] + (size_t)(mix64(c->vbase ^ (uint64_t)p) % 3);
    }
    return off;
}

static size_t layout(const struct call *c, const size_t *cnt, size_t *dsp) { return layout_n(c, c->P, cnt, dsp); }

/* ---- the operations ---- */

static void do_barrier(struct call *c) { call_ok(c, hint_barrier(c->g), "hint_barrier"); }

static void do_bcast(struct call *c)
{
    size_t n = c->count * c->esize;
    unsigned char *b = BUF(c, n);
    if (c->r == c->root)
        fill(c, b, n, c->root, 0);
    else
        memset(b, 0xA5, n);
    if (call_ok(c, hint_bcast(b, c->count, c->t, c->root, c->g), "hint_bcast"))
        expect_block(c, "bcast", b, n, c->root, 0);
}

static void do_gather(struct call *c)
{
    size_t n = c->count * c->esize, P = (size_t)c->P;
    unsigned char *s = BUF(c, n), *r = BUF(c, P * n);
    bool ip = c->in_place && c->r == c->root;
    fill(c, s, n, c->r, 0);
    memset(r, 0xA5, P * n);
    if (ip)
        fill(c, r + (size_t)c->r * n, n, c->r, 0);
    remember_send(c, s);
    if (!call_ok(c, hint_gather(ip ? HINT_IN_PLACE : s, c->count, c->t, r, c->count, c->t, c->root, c->g),
                 "hint_gather"))
        return;
    for (int p = 0; c->r == c->root && p < c->P; p++)
        expect_block(c, "gather", r + (size_t)p * n, n, p, 0);
}

static void do_scatter(struct call *c)
{
    size_t n = c->count * c->esize, P = (size_t)c->P;
    unsigned char *s = BUF(c, P * n), *r = BUF(c, n);
    bool ip = c->in_place && c->r == c->root;
    if (c->r == c->root)
        for (int p = 0; p < c->P; p++)
            fill(c, s + (size_t)p * n, n, c->root, p);
    memset(r, 0xA5, n);
    if (c->r == c->root)
        remember_send(c, s);
    if (!call_ok(c, hint_scatter(s, c->count, c->t, ip ? HINT_IN_PLACE : r, c->count, c->t, c->root, c->g),
                 "hint_scatter"))
        return;
    expect_block(c, "scatter", ip ? s + (size_t)c->r * n : r, n, c->root, c->r);
}

static void do_allgather(struct call *c)
{
    size_t n = c->count * c->esize, P = (size_t)c->P;
    unsigned char *s = BUF(c, n), *r = BUF(c, P * n);
    fill(c, s, n, c->r, 0);
    memset(r, 0xA5, P * n);
    if (c->in_place)
        fill(c, r + (size_t)c->r * n, n, c->r, 0);
    remember_send(c, s);
    if (!call_ok(c, hint_allgather(c->in_place ? HINT_IN_PLACE : s, c->count, c->t, r, c->count, c->t, c->g),
                 "hint_allgather"))
        return;
    for (int p = 0; p < c->P; p++)
        expect_block(c, "allgather", r + (size_t)p * n, n, p, 0);
}

static void do_alltoall(struct call *c)
{
    size_t n = c->count * c->esize, P = (size_t)c->P;
    unsigned char *s = BUF(c, P * n), *r = BUF(c, P * n);
    for (int p = 0; p < c->P; p++)
        fill(c, (c->in_place ? r : s) + (size_t)p * n, n, c->r, p);
    if (!c->in_place) {
        memset(r, 0xA5, P * n);
        remember_send(c, s);
    }
    if (!call_ok(c, hint_alltoall(c->in_place ? HINT_IN_PLACE : s, c->count, c->t, r, c->count, c->t, c->g),
                 "hint_alltoall"))
        return;
    for (int p = 0; p < c->P; p++)
        expect_block(c, "alltoall", r + (size_t)p * n, n, p, c->r);
}

/* The gaps of a v layout must stay as they were. */
static void expect_gaps_n(const struct call *c, const char *what, int n, const unsigned char *b, const size_t *cnt,
                          const size_t *dsp, size_t total)
{
    size_t e = c->esize, at = 0;
    for (int p = n - 1; p >= 0; p--) {
        if (dsp[p] > at)
            expect_untouched(c, what, b + at * e, (dsp[p] - at) * e);
        at = dsp[p] + cnt[p];
    }
    if (total > at)
        expect_untouched(c, what, b + at * e, (total - at) * e);
}

static void expect_gaps(const struct call *c, const char *what, const unsigned char *b, const size_t *cnt,
                        const size_t *dsp, size_t total)
{
    expect_gaps_n(c, what, c->P, b, cnt, dsp, total);
}

static void do_gatherv(struct call *c)
{
    size_t e = c->esize, *cnt = alloca(2 * sizeof(size_t) * (size_t)c->P), *dsp = cnt + c->P;
    for (int p = 0; p < c->P; p++)
        cnt[p] = vcount(c, p);
    size_t total = layout(c, cnt, dsp), mine = cnt[c->r] * e;
    unsigned char *s = BUF(c, mine), *r = BUF(c, total * e);
    bool ip = c->in_place && c->r == c->root;
    fill(c, s, mine, c->r, 0);
    memset(r, GUARD_BYTE, total * e);
    if (ip)
        fill(c, r + dsp[c->r] * e, mine, c->r, 0);
    remember_send(c, s);
    if (!call_ok(c, hint_gatherv(ip ? HINT_IN_PLACE : s, cnt[c->r], c->t, r, cnt, dsp, c->t, c->root, c->g),
                 "hint_gatherv") ||
        c->r != c->root)
        return;
    for (int p = 0; p < c->P; p++)
        expect_block(c, "gatherv", r + dsp[p] * e, cnt[p] * e, p, 0);
    expect_gaps(c, "gatherv gap", r, cnt, dsp, total);
}

static void do_scatterv(struct call *c)
{
    size_t e = c->esize, *cnt = alloca(2 * sizeof(size_t) * (size_t)c->P), *dsp = cnt + c->P;
    for (int p = 0; p < c->P; p++)
        cnt[p] = vcount(c, p);
    size_t total = layout(c, cnt, dsp), mine = cnt[c->r] * e;
    unsigned char *s = BUF(c, total * e), *r = BUF(c, mine);
    bool ip = c->in_place && c->r == c->root;
    memset(s, 0x5A, total * e);
    if (c->r == c->root) {
        for (int p = 0; p < c->P; p++)
            fill(c, s + dsp[p] * e, cnt[p] * e, c->root, p);
        remember_send(c, s);
    }
    memset(r, 0xA5, mine);
    if (call_ok(c, hint_scatterv(s, cnt, dsp, c->t, ip ? HINT_IN_PLACE : r, cnt[c->r], c->t, c->root, c->g),
                "hint_scatterv"))
        expect_block(c, "scatterv", ip ? s + dsp[c->r] * e : r, mine, c->root, c->r);
}

static void do_allgatherv(struct call *c)
{
    size_t e = c->esize, *cnt = alloca(2 * sizeof(size_t) * (size_t)c->P), *dsp = cnt + c->P;
    for (int p = 0; p < c->P; p++)
        cnt[p] = vcount(c, p);
    size_t total = layout(c, cnt, dsp), mine = cnt[c->r] * e;
    unsigned char *s = BUF(c, mine), *r = BUF(c, total * e);
    fill(c, s, mine, c->r, 0);
    memset(r, GUARD_BYTE, total * e);
    if (c->in_place)
        fill(c, r + dsp[c->r] * e, mine, c->r, 0);
    remember_send(c, s);
    if (!call_ok(c, hint_allgatherv(c->in_place ? HINT_IN_PLACE : s, cnt[c->r], c->t, r, cnt, dsp, c->t, c->g),
                 "hint_allgatherv"))
        return;
    for (int p = 0; p < c->P; p++)
        expect_block(c, "allgatherv", r + dsp[p] * e, cnt[p] * e, p, 0);
    expect_gaps(c, "allgatherv gap", r, cnt, dsp, total);
}

static void do_alltoallv(struct call *c)
{
    size_t e = c->esize, P = (size_t)c->P;
    size_t *sc = alloca(4 * sizeof(size_t) * P), *sd = sc + P, *rc = sd + P, *rd = rc + P;
    for (int p = 0; p < c->P; p++) {
        sc[p] = pair_count(c, c->r, p);
        rc[p] = pair_count(c, p, c->r);
    }
    size_t stot = layout(c, sc, sd), rtot = layout(c, rc, rd);
    unsigned char *s = BUF(c, stot * e), *r = BUF(c, rtot * e);
    memset(r, GUARD_BYTE, rtot * e);
    for (int p = 0; p < c->P; p++)
        if (c->in_place)
            fill(c, r + rd[p] * e, rc[p] * e, c->r, p); /* symmetric: rc[p] == sc[p] */
        else
            fill(c, s + sd[p] * e, sc[p] * e, c->r, p);
    if (!c->in_place)
        remember_send(c, s);
    int st = c->in_place ? hint_alltoallv(HINT_IN_PLACE, NULL, NULL, c->t, r, rc, rd, c->t, c->g)
                         : hint_alltoallv(s, sc, sd, c->t, r, rc, rd, c->t, c->g);
    if (!call_ok(c, st, "hint_alltoallv"))
        return;
    for (int p = 0; p < c->P; p++)
        expect_block(c, "alltoallv", r + rd[p] * e, rc[p] * e, p, c->r);
    expect_gaps(c, "alltoallv gap", r, rc, rd, rtot);
}

static void do_reduce(struct call *c)
{
    size_t n = c->count * c->esize;
    unsigned char *s = BUF(c, n), *r = BUF(c, n);
    bool ip = c->in_place && c->r == c->root;
    rfill(c, ip ? r : s, c->count, c->r);
    if (!ip) {
        memset(r, 0xA5, n);
        remember_send(c, s);
    }
    if (call_ok(c, hint_reduce(ip ? HINT_IN_PLACE : s, r, c->count, c->t, c->rop, c->root, c->g), "hint_reduce") &&
        c->r == c->root)
        expect_reduced(c, "reduce", r, c->count, 0);
}

static void do_allreduce(struct call *c)
{
    size_t n = c->count * c->esize;
    unsigned char *s = BUF(c, n), *r = BUF(c, n);
    rfill(c, c->in_place ? r : s, c->count, c->r);
    if (!c->in_place) {
        memset(r, 0xA5, n);
        remember_send(c, s);
    }
    if (call_ok(c, hint_allreduce(c->in_place ? HINT_IN_PLACE : s, r, c->count, c->t, c->rop, c->g),
                "hint_allreduce"))
        expect_reduced(c, "allreduce", r, c->count, 0);
}

static void do_reduce_scatter_block(struct call *c)
{
    size_t n = c->count * c->esize, P = (size_t)c->P;
    unsigned char *s = BUF(c, P * n), *r = BUF(c, c->in_place ? P * n : n);
    rfill(c, c->in_place ? r : s, c->count * P, c->r);
    if (!c->in_place) {
        memset(r, 0xA5, n);
        remember_send(c, s);
    }
    if (call_ok(c, hint_reduce_scatter_block(c->in_place ? HINT_IN_PLACE : s, r, c->count, c->t, c->rop, c->g),
                "hint_reduce_scatter_block"))
        expect_reduced(c, "reduce_scatter_block", r, c->count, (size_t)c->r * c->count);
}

/* Neighbourhood collectives on a Cartesian group: sources and destinations come in pairs per
   dimension (-1, +1), and a block sent to the +1 neighbour lands in its -1 slot, so slot i of a
   receiver holds its source's block i ^ 1. Slots without a neighbour stay untouched. */
static void neighbours(struct call *c, int *indeg, int **src)
{
    int outdeg;
    if (hint_neighbors_count(c->g, indeg, &outdeg) != HINT_SUCCESS || *indeg != outdeg)
        fail(c, "hint_neighbors_count failed or in %d != out %d on a Cartesian group", *indeg, outdeg);
    *src = malloc(2 * sizeof(int) * (size_t)(*indeg + 1));
    if (hint_neighbors(c->g, *indeg, *src, outdeg, *src + *indeg) != HINT_SUCCESS)
        fail(c, "hint_neighbors failed");
}

static void do_neighbor(struct call *c, bool alltoall)
{
    int k, *src;
    neighbours(c, &k, &src);
    size_t n = c->count * c->esize;
    unsigned char *s = BUF(c, (alltoall ? (size_t)k : 1) * n), *r = BUF(c, (size_t)k * n);
    for (int j = 0; j < (alltoall ? k : 1); j++)
        fill(c, s + (size_t)j * n, n, c->r, j);
    memset(r, GUARD_BYTE, (size_t)k * n);
    remember_send(c, s);
    int st = alltoall ? hint_neighbor_alltoall(s, c->count, c->t, r, c->count, c->t, c->g)
                      : hint_neighbor_allgather(s, c->count, c->t, r, c->count, c->t, c->g);
    if (call_ok(c, st, alltoall ? "hint_neighbor_alltoall" : "hint_neighbor_allgather"))
        for (int i = 0; i < k; i++) {
            if (src[i] == HINT_PROC_NULL)
                expect_untouched(c, "slot without a neighbour", r + (size_t)i * n, n);
            else
                expect_block(c, alltoall ? "neighbor_alltoall" : "neighbor_allgather", r + (size_t)i * n, n, src[i],
                             alltoall ? i ^ 1 : 0);
        }
    free(src);
}

static void do_neighbor_allgather(struct call *c) { do_neighbor(c, false); }
static void do_neighbor_alltoall(struct call *c) { do_neighbor(c, true); }

/* v variants: rank q sends vcount(q) elements to all (allgatherv), or nb_count(q, j) to its
   destination j (alltoallv); slots without a neighbour get a count too, and stay untouched. */
static size_t nb_count(const struct call *c, int sender, int slot) { return vcount(c, 1000 + sender * 16 + slot); }

static void do_neighbor_v(struct call *c, bool alltoall)
{
    int k, *src;
    neighbours(c, &k, &src);
    size_t e = c->esize, *sc = alloca(4 * sizeof(size_t) * (size_t)(k + 1)), *sd = sc + k + 1, *rc = sd + k + 1,
           *rd = rc + k + 1;
    for (int i = 0; i < k; i++) {
        sc[i] = alltoall ? nb_count(c, c->r, i) : vcount(c, c->r);
        rc[i] = src[i] == HINT_PROC_NULL ? c->count : alltoall ? nb_count(c, src[i], i ^ 1) : vcount(c, src[i]);
    }
    size_t stot = alltoall ? layout_n(c, k, sc, sd) : sc[0], rtot = layout_n(c, k, rc, rd);
    unsigned char *s = BUF(c, stot * e), *r = BUF(c, rtot * e);
    for (int j = 0; j < (alltoall ? k : 1); j++)
        fill(c, s + (alltoall ? sd[j] : 0) * e, sc[j] * e, c->r, alltoall ? j : 0);
    memset(r, GUARD_BYTE, rtot * e);
    remember_send(c, s);
    int st = alltoall ? hint_neighbor_alltoallv(s, sc, sd, c->t, r, rc, rd, c->t, c->g)
                      : hint_neighbor_allgatherv(s, vcount(c, c->r), c->t, r, rc, rd, c->t, c->g);
    if (call_ok(c, st, alltoall ? "hint_neighbor_alltoallv" : "hint_neighbor_allgatherv")) {
        for (int i = 0; i < k; i++)
            if (src[i] == HINT_PROC_NULL)
                expect_untouched(c, "slot without a neighbour", r + rd[i] * e, rc[i] * e);
            else
                expect_block(c, alltoall ? "neighbor_alltoallv" : "neighbor_allgatherv", r + rd[i] * e, rc[i] * e,
                             src[i], alltoall ? i ^ 1 : 0);
        expect_gaps_n(c, alltoall ? "neighbor_alltoallv gap" : "neighbor_allgatherv gap", k, r, rc, rd, rtot);
    }
    free(src);
}

static void do_neighbor_allgatherv(struct call *c) { do_neighbor_v(c, false); }
static void do_neighbor_alltoallv(struct call *c) { do_neighbor_v(c, true); }

typedef void (*op_fn)(struct call *);
static const op_fn op_fns[COLL_NOPS] = {
    [COLL_BARRIER] = do_barrier,
    [COLL_BCAST] = do_bcast,
    [COLL_REDUCE] = do_reduce,
    [COLL_ALLREDUCE] = do_allreduce,
    [COLL_GATHER] = do_gather,
    [COLL_GATHERV] = do_gatherv,
    [COLL_SCATTER] = do_scatter,
    [COLL_SCATTERV] = do_scatterv,
    [COLL_ALLGATHER] = do_allgather,
    [COLL_ALLGATHERV] = do_allgatherv,
    [COLL_ALLTOALL] = do_alltoall,
    [COLL_ALLTOALLV] = do_alltoallv,
    [COLL_REDUCE_SCATTER_BLOCK] = do_reduce_scatter_block,
    [COLL_NEIGHBOR_ALLGATHER] = do_neighbor_allgather,
    [COLL_NEIGHBOR_ALLTOALL] = do_neighbor_alltoall,
    [COLL_NEIGHBOR_ALLGATHERV] = do_neighbor_allgatherv,
    [COLL_NEIGHBOR_ALLTOALLV] = do_neighbor_alltoallv,
};

static bool is_reduction(int op)
{
    return op == COLL_REDUCE || op == COLL_ALLREDUCE || op == COLL_REDUCE_SCATTER_BLOCK;
}

static bool in_place_allowed(int op)
{
    return op != COLL_BARRIER && op != COLL_BCAST && op < COLL_NEIGHBOR_ALLGATHER;
}

/* The operations a slot can run: the neighbourhood ones need a Cartesian group. */
static int draw_op(const struct slot *s)
{
    static const int plain[] = {COLL_BARRIER,    COLL_BCAST,     COLL_REDUCE,   COLL_ALLREDUCE, COLL_GATHER,
                                COLL_GATHERV,    COLL_SCATTER,   COLL_SCATTERV, COLL_ALLGATHER, COLL_ALLGATHERV,
                                COLL_ALLTOALL,   COLL_ALLTOALLV, COLL_REDUCE_SCATTER_BLOCK,
                                COLL_NEIGHBOR_ALLGATHER, COLL_NEIGHBOR_ALLTOALL, COLL_NEIGHBOR_ALLGATHERV,
                                COLL_NEIGHBOR_ALLTOALLV};
    size_t n = sizeof plain / sizeof plain[0] - (s->cart ? 0 : 4);
    return plain[draw() % n];
}

/* Element type and, for reductions, op: values that every combining order sums exactly. */
static void pick_type(struct call *c, uint64_t type_raw, uint64_t rop_raw)
{
    static hint_type rtypes[] = {HINT_INT, HINT_LONG, HINT_DOUBLE}, mtypes[] = {HINT_BYTE, HINT_INT32, HINT_DOUBLE};
    static const char *rnames[] = {"int", "long", "double"}, *mnames[] = {"byte", "int32", "double"};
    static hint_op rops[] = {HINT_SUM, HINT_SUM, HINT_MAX, HINT_MIN};
    static const char *ropnames[] = {"sum", "sum", "max", "min"};
    bool red = is_reduction(c->op);
    c->t = (red ? rtypes : mtypes)[type_raw % 3];
    c->tname = (red ? rnames : mnames)[type_raw % 3];
    if (red) {
        c->rop = rops[rop_raw % 4];
        c->ropname = ropnames[rop_raw % 4];
    }
    hint_type_size(c->t, &c->esize);
    c->count = c->bytes / c->esize;
}

/* Every decision of a collective round, drawn on every rank in the same order whatever its part;
   only the kind of a rank's buffers may differ between ranks (c->mixed). */
static void draw_call(struct call *c, uint64_t *root_raw)
{
    c->slot = (int)(draw() % NSLOTS);
    if (slots[c->slot].kind == SK_NONE)
        c->slot = 0;
    c->op = draw_op(&slots[c->slot]);
    c->bytes = draw_bytes(opt_max_bytes);
    uint64_t type_raw = draw(), rop_raw = draw();
    *root_raw = draw(); /* taken modulo the size of the group, which members alone know */
    uint64_t ip_raw = draw(), alg_raw = draw(), kind_raw = draw(), mixed_raw = draw();
    c->salt = (uint32_t)draw();
    c->vbase = draw();
    pick_type(c, type_raw, rop_raw);
    c->in_place = in_place_allowed(c->op) && ip_raw % 4 == 0;
    const struct coll_table *tab = &coll_tables[c->op];
    c->alg = alg_raw % 4 == 0 ? "auto" : tab->algs[(alg_raw >> 8) % (uint64_t)tab->nalgs].name;
    c->mixed = mixed_raw % 4 == 0;
    c->kind = (int)((c->mixed ? mix64(kind_raw + (uint64_t)world_rank) : kind_raw) % BK_N);
}

static void collective(long round)
{
    struct call c = {.round = round};
    uint64_t root_raw;
    draw_call(&c, &root_raw);
    struct slot *sl = &slots[c.slot];
    if (opt_verbose && world_rank == 0)
        printf("round %ld: %s on slot %d [%s], %s, %zu B, %s%s%s\n", round, op_name(c.op), c.slot, sl->desc, c.alg,
               c.bytes, kind_names[c.kind], c.mixed ? " (rank 0; kinds differ per rank)" : "",
               c.in_place ? ", in place" : "");
    c.g = sl->h;
    if (c.g == HINT_GROUP_NULL)
        return; /* not a member */
    hint_group_rank(c.g, &c.r);
    hint_group_size(c.g, &c.P);
    c.root = (int)(root_raw % (uint64_t)c.P);
    if (c.kind == BK_STACK) {
        /* room for the largest pair of buffers any operation takes: P (or 4 neighbours) blocks
           of up to 2 count + 2 elements and gaps of up to 2 (v layouts); alloca'd here so that
           it lives until buf_release_all has checked the guards */
        size_t blocks = (size_t)(c.P > 4 ? c.P : 4), room = 2 * (blocks * (2 * c.count + 4) * c.esize + GUARD + 64);
        if (room <= STACK_MAX) {
            unsigned char *frame = alloca(room + 64);
            c.stack = (unsigned char *)(((uintptr_t)frame + 63) & ~(uintptr_t)63);
            c.stack_left = room;
        }
    }
    if (hint_coll_set(op_name(c.op), c.alg) != HINT_SUCCESS)
        fail(&c, "hint_coll_set(%s, %s) refused a name from the table", op_name(c.op), c.alg);
    calls[c.op]++;
    op_fns[c.op](&c);
    hint_coll_set(op_name(c.op), "auto");
    buf_release_all(&c);
}

/* ---- group management ---- */

static void group_fail(long round, int slot, const char *fn, int st)
{
    fprintf(stderr, "soak FAILED: seed %" PRIu64 " round %ld, world rank %d: %s for slot %d [%s] returned %d (%s)\n",
            opt_seed, round, world_rank, fn, slot, slots[slot].desc, st, hint_strerror(st));
    repro_line();
    exit(1);
}

static void slot_free(long round, int s)
{
    struct slot *sl = &slots[s];
    if (sl->kind == SK_NONE)
        return;
    if (sl->h != HINT_GROUP_NULL) {
        int st = hint_group_free(&sl->h);
        if (st != HINT_SUCCESS || sl->h != HINT_GROUP_NULL)
            group_fail(round, s, "hint_group_free", st);
    }
    sl->kind = SK_NONE;
    sl->cart = sl->full = false;
    snprintf(sl->desc, sizeof sl->desc, "empty");
    groups_freed++;
}

/* A live slot other than s to derive a group from; `full`: only groups of every world rank. */
static int pick_parent(uint64_t raw, int s, bool full)
{
    int cand[NSLOTS], n = 0;
    for (int i = 0; i < NSLOTS; i++)
        if (i != s && slots[i].kind != SK_NONE && (!full || slots[i].full))
            cand[n++] = i;
    return cand[raw % (uint64_t)n]; /* the world is always there */
}

/* The random shape of a new group: one number, and 3 per world rank (colours, keys, order). */
struct shape {
    uint64_t raw;
    const uint64_t *per_rank;
};

static int make_dup(struct slot *sl, const struct slot *pa, int parent, const struct shape *sh)
{
    (void)sh;
    sl->cart = pa->cart;
    sl->full = pa->full;
    snprintf(sl->desc, sizeof sl->desc, "gen %d: dup of slot %d", sl->gen, parent);
    return pa->h == HINT_GROUP_NULL ? HINT_SUCCESS : hint_group_dup(pa->h, &sl->h);
}

/* colours 0..ncolours-1 with one rank in 6 left out (HINT_UNDEFINED); keys reorder the ranks */
static int make_split(struct slot *sl, const struct slot *pa, int parent, const struct shape *sh)
{
    int P = world_size, ncol = 1 + (int)(sh->raw % 3), left_out = 0;
    for (int w = 0; w < P; w++)
        left_out += sh->per_rank[w] % 6 == 0;
    uint64_t mine = sh->per_rank[world_rank];
    int color = mine % 6 == 0 ? HINT_UNDEFINED : (int)((mine >> 8) % (uint64_t)ncol);
    int key = (int)(sh->per_rank[P + world_rank] % 100);
    snprintf(sl->desc, sizeof sl->desc, "gen %d: split of slot %d into up to %d colours, %d of %d undefined", sl->gen,
             parent, ncol, left_out, P);
    return pa->h == HINT_GROUP_NULL ? HINT_SUCCESS : hint_group_split(pa->h, color, key, &sl->h);
}

/* a random subset of the parent (every world rank, numbered as in the world) in random order;
   only the listed ranks call */
static int make_subset(struct slot *sl, const struct slot *pa, int parent, const struct shape *sh)
{
    int P = world_size, *perm = alloca(sizeof(int) * (size_t)P), k = 1 + (int)(sh->raw % (uint64_t)P);
    bool listed = false;
    for (int i = 0; i < P; i++)
        perm[i] = i;
    for (int i = P - 1; i > 0; i--) {
        int j = (int)(sh->per_rank[2 * P + i] % (uint64_t)(i + 1)), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (int i = 0; i < k; i++)
        listed |= perm[i] == world_rank;
    snprintf(sl->desc, sizeof sl->desc, "gen %d: create from slot %d of %d ranks, first %d", sl->gen, parent, k,
             perm[0]);
    return listed ? hint_group_create(pa->h, k, perm, &sl->h) : HINT_SUCCESS;
}

/* a 1-D or 2-D grid over the whole parent, each dimension periodic or not */
static int make_grid(struct slot *sl, const struct slot *pa, int parent, const struct shape *sh)
{
    int ndims = 1 + (int)(sh->raw % 2), dims[2] = {0, 0};
    int periods[2] = {(int)(sh->raw >> 8) & 1, (int)(sh->raw >> 9) & 1};
    int st = hint_dims_create(world_size, ndims, dims);
    sl->cart = sl->full = true;
    snprintf(sl->desc, sizeof sl->desc, "gen %d: cart of slot %d, %d x %d, periods %d %d", sl->gen, parent, dims[0],
             ndims > 1 ? dims[1] : 1, periods[0], periods[1]);
    return st != HINT_SUCCESS ? st : hint_cart_create(pa->h, ndims, dims, periods, 0, &sl->h);
}

static void slot_create(long round, int s, uint64_t kind_raw, uint64_t parent_raw, const struct shape *sh)
{
    static const struct {
        enum slot_kind kind;
        const char *fn;
        int (*make)(struct slot *, const struct slot *, int, const struct shape *);
        bool full_parent; /* needs a parent of every world rank in world order */
    } makers[] = {
        {SK_DUP, "hint_group_dup", make_dup, false},
        {SK_SPLIT, "hint_group_split", make_split, false},
        {SK_CREATE, "hint_group_create", make_subset, true},
        {SK_CART, "hint_cart_create", make_grid, true},
    };
    const int m = (int)(kind_raw % 4);
    struct slot *sl = &slots[s];
    int parent = pick_parent(parent_raw, s, makers[m].full_parent);
    sl->h = HINT_GROUP_NULL;
    sl->gen++;
    sl->cart = sl->full = false;
    sl->kind = makers[m].kind;
    int st = makers[m].make(sl, &slots[parent], parent, sh);
    if (st != HINT_SUCCESS)
        group_fail(round, s, makers[m].fn, st);
    groups_created++;
    if (opt_verbose && world_rank == 0)
        printf("round %ld: slot %d is now %s\n", round, s, sl->desc);
}

static void manage(long round)
{
    int P = world_size;
    int s = 1 + (int)(draw() % (NSLOTS - 1));
    uint64_t keep_empty = draw(), kind_raw = draw(), parent_raw = draw(), shape_raw = draw();
    uint64_t *per_rank = alloca(sizeof(uint64_t) * 3 * (size_t)P);
    for (int i = 0; i < 3 * P; i++)
        per_rank[i] = draw();
    struct shape sh = {shape_raw, per_rank};
    slot_free(round, s);
    if (keep_empty % 5 != 0)
        slot_create(round, s, kind_raw, parent_raw, &sh);
    else if (opt_verbose && world_rank == 0)
        printf("round %ld: slot %d freed\n", round, s);
}

/* ---- main ---- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: hintrun -n P soak [--seed N] [--rounds N] [--max-bytes N] [--verbose]\n"
            "Random collectives over several live groups (world, dups, splits, created subsets, grids),\n"
            "groups freed and recreated as it goes; random sizes, roots, types, ops, algorithms and\n"
            "buffer kinds; every result checked. The same seed gives the same run.\n"
            "  --seed N       the run's seed (default 1)\n"
            "  --rounds N     actions to run (default 200)\n"
            "  --max-bytes N  largest block in bytes, K and M suffixes allowed (default 256K, at most 64M)\n"
            "  --verbose      rank 0 prints every action\n"
            "Exit status 0 when every result was right; on the first wrong one, the job fails with\n"
            "what was called and what was read.\n");
}

/* A decimal number with an optional K or M suffix; false for anything else or an overflow. */
static bool parse_num(const char *s, uint64_t *out)
{
    char *end;
    if (s == NULL || *s < '0' || *s > '9')
        return false;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    int shift = *end == 'K' || *end == 'k' ? 10 : *end == 'M' || *end == 'm' ? 20 : 0;
    end += shift != 0;
    if (*end != '\0' || errno == ERANGE || v > (UINT64_MAX >> shift))
        return false;
    *out = (uint64_t)v << shift;
    return true;
}

static void bad_arg(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "soak: ");
    fprintf(stderr, fmt, a, b ? b : "nothing");
    fprintf(stderr, "\n");
    usage(stderr);
    exit(2);
}

/* The number after option argv[i], at most max. */
static uint64_t option_value(char **argv, int i, uint64_t max)
{
    uint64_t v = 0;
    if (!parse_num(argv[i + 1], &v))
        bad_arg("%s needs a number (K and M suffixes allowed), got %s", argv[i], argv[i + 1]);
    if (v > max)
        bad_arg("%s %s is too large", argv[i], argv[i + 1]);
    return v;
}

static void parse_args(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(a, "--verbose"))
            opt_verbose = true;
        else if (!strcmp(a, "--seed"))
            opt_seed = option_value(argv, i++, UINT64_MAX);
        else if (!strcmp(a, "--rounds"))
            opt_rounds = (long)option_value(argv, i++, LONG_MAX);
        else if (!strcmp(a, "--max-bytes"))
            opt_max_bytes = (size_t)option_value(argv, i++, 64u << 20);
        else
            bad_arg("unknown argument %s%s", a, "");
    }
}

static void summary(double seconds)
{
    enum { N = 2 * COLL_NOPS + BK_N + 3 };
    long mine[N], all[N];
    memcpy(mine, calls, sizeof calls);
    memcpy(mine + COLL_NOPS, unsupported, sizeof unsupported);
    memcpy(mine + 2 * COLL_NOPS, kinds_used, sizeof kinds_used);
    mine[N - 3] = bytes_checked;
    mine[N - 2] = groups_created;
    mine[N - 1] = groups_freed;
    int st = hint_reduce(mine, all, N, HINT_LONG, HINT_SUM, 0, HINT_WORLD);
    if (st != HINT_SUCCESS) {
        fprintf(stderr, "soak: the summary's reduce failed: %s\n", hint_strerror(st));
        exit(1);
    }
    if (world_rank != 0)
        return;
    char line[2048];
    int at = snprintf(line, sizeof line,
                      "soak OK: seed %" PRIu64 ", P=%d, %ld rounds in %.1f s; calls summed over ranks:", opt_seed,
                      world_size, opt_rounds, seconds);
    long unsup = 0;
    for (int op = 0; op < COLL_NOPS; op++) {
        unsup += all[COLL_NOPS + op];
        if (all[op])
            at += snprintf(line + at, sizeof line - (size_t)at, " %s %ld", op_name(op), all[op]);
    }
    at += snprintf(line + at, sizeof line - (size_t)at, "; %.1f MiB checked; unsupported %ld", all[N - 3] / 1048576.0,
                   unsup);
    for (int op = 0; op < COLL_NOPS && unsup; op++)
        if (all[COLL_NOPS + op])
            at += snprintf(line + at, sizeof line - (size_t)at, " %s %ld", op_name(op), all[COLL_NOPS + op]);
    at += snprintf(line + at, sizeof line - (size_t)at, "; buffers");
    for (int k = 0; k < BK_N; k++)
        at += snprintf(line + at, sizeof line - (size_t)at, " %s %ld", kind_names[k], all[2 * COLL_NOPS + k]);
    snprintf(line + at, sizeof line - (size_t)at, "; groups created %ld, freed %ld (summed over ranks)", all[N - 2],
             all[N - 1]);
    printf("%s\n", line);
}

int main(int argc, char **argv)
{
    parse_args(argc, argv);
    int st = hint_init(&argc, &argv);
    if (st != HINT_SUCCESS) {
        fprintf(stderr, "soak: hint_init: %s\n", hint_strerror(st));
        return 1;
    }
    hint_group_rank(HINT_WORLD, &world_rank);
    hint_group_size(HINT_WORLD, &world_size);
    if (world_rank == 0)
        printf("soak: seed %" PRIu64 ", P=%d, %ld rounds, blocks up to %zu bytes\n", opt_seed, world_size,
               opt_rounds, opt_max_bytes);
    fflush(stdout);
    slots[0] = (struct slot){.kind = SK_WORLD, .full = true, .h = HINT_WORLD, .desc = "the world"};
    for (int s = 1; s < NSLOTS; s++)
        snprintf(slots[s].desc, sizeof slots[s].desc, "empty");
    double t0 = hint_wtime();
    for (long round = 0; round < opt_rounds; round++) {
        stream_start(round);
        if (draw() % 8 == 0)
            manage(round);
        else
            collective(round);
    }
    double seconds = hint_wtime() - t0;
    for (int s = 1; s < NSLOTS; s++)
        slot_free(opt_rounds, s);
    summary(seconds);
    st = hint_finalize();
    if (st != HINT_SUCCESS) {
        fprintf(stderr, "soak: hint_finalize: %s\n", hint_strerror(st));
        return 1;
    }
    return 0;
}
