/*
 * tests/ranks/neighbors_dh.c — hint_graph_create, neighbor_allgather distance_halving and the
 * morton neighbourhood collectives, run under hintrun.
 *
 * Every rank makes the same global edge list from a fixed seed (random graphs of several
 * densities, with and without self loops and repeated edges; Moore neighbourhoods (r, d) on a
 * periodic grid; an empty graph; a star out of rank 0 only (asymmetric lists, empty
 * neighbourhoods); the complete graph with self loops), and each edge is named to
 * hint_graph_create by a rank other than its source, so the constructor's exchange is what
 * gives each rank its lists. The lists are checked against the reference order (naming rank,
 * then as named). Then neighbor_allgather runs with naive and distance_halving forced, twice
 * (the second call reuses the pattern) and on a dup, at 0, 1, 5 and 1000 ints per block and once
 * with a strided type on the receive side; every slot must hold its source's block, sentinels
 * elsewhere. morton: neighbor_allgather against the same expectation, neighbor_alltoall against
 * naive's result, with buffers from hint_malloc (hint_coll_last must say morton), on the stack
 * and with a strided receive type on every rank or on rank 0 only (every rank falls back to
 * naive); with --nodes (ranks on several nodes) forcing it must return HINT_ERR_UNSUPPORTED.
 * Carts (periodic or not, 1-D to 3-D) too. neighbor_allgather staged (forced) against the same
 * expectation at 0 B (trivial), in a head (4, 20 B), in an area (4000 B), with a strided receive
 * side on every rank or on rank 0 only; neighbor_alltoall staged against naive's result (0, 5,
 * 300 ints, and 3 with a strided receive side on rank 0); forced on neighbor_alltoallv it returns
 * HINT_ERR_UNSUPPORTED, as across nodes. Forcing distance_halving on neighbor_alltoall(v)
 * returns HINT_ERR_UNSUPPORTED; hint_graph_create's argument errors fail on every rank.
 * neighbor_allgatherv with naive, distance_halving and morton: counts differing per origin (some
 * 0), receive slots in reverse order with gaps. neighbor_alltoallv with morton against naive's
 * result: counts per edge (some 0), send blocks in reverse order with gaps. The morton v cases
 * run with buffers from hint_malloc (hint_coll_last must say morton) and off the heap (an
 * anonymous mapping: naive, unless no rank moves a byte); with --nodes forcing morton on them
 * returns HINT_ERR_UNSUPPORTED too. Counts that differ on the two ends of an edge: morton
 * neighbor_alltoallv returns HINT_ERR_MISMATCH on every rank.
 *
 * Usage: neighbors_dh [--quick] [--nodes] [--help]. Rank 0 prints "ok neighbors_dh".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "hint.h"
#include "tests/common/rankcheck.h"

int rc_rank;
static int P;
static char where[200] = "setup";

#define FAIL(...)                                                                                \
    do {                                                                                         \
        fprintf(stderr, "rank %d of %d: [%s] ", rc_rank, P, where);                              \
        fprintf(stderr, __VA_ARGS__);                                                            \
        fprintf(stderr, "\n");                                                                   \
        exit(1);                                                                                 \
    } while (0)

struct graph {
    int ne;
    int *src, *dst; /* the global edge list, in the order the reference gives it */
};

static uint64_t rng_state;
static uint32_t rng(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_state >> 33);
}

static void add_edge(struct graph *g, int s, int d)
{
    g->src = realloc(g->src, (size_t)(g->ne + 1) * sizeof(int));
    g->dst = realloc(g->dst, (size_t)(g->ne + 1) * sizeof(int));
    g->src[g->ne] = s;
    g->dst[g->ne++] = d;
}

/* Erdős–Rényi with density delta; loops and repeats: some self loops and doubled edges. */
static struct graph random_graph(double delta, int loops, uint64_t seed)
{
    struct graph g = {0};
    rng_state = seed;
    for (int s = 0; s < P; s++)
        for (int d = 0; d < P; d++) {
            if (s == d && !loops)
                continue;
            if (rng() % 1000 < (uint32_t)(delta * 1000)) {
                add_edge(&g, s, d);
                if (loops && rng() % 4 == 0)
                    add_edge(&g, s, d);
            }
        }
    return g;
}

/* Moore neighbourhood of radius r in d dimensions on a periodic grid from hint_dims_create
   (every offset in [-r, r]^d but 0; wrapped offsets may repeat a neighbour or hit the rank). */
static struct graph moore(int r, int d)
{
    struct graph g = {0};
    int dims[3] = {0, 0, 0};
    RC_OK(hint_dims_create(P, d, dims));
    int span = 2 * r + 1, noff = 1;
    for (int k = 0; k < d; k++)
        noff *= span;
    for (int s = 0; s < P; s++) {
        int c[3], rest = s;
        for (int k = d - 1; k >= 0; k--) {
            c[k] = rest % dims[k];
            rest /= dims[k];
        }
        for (int o = 0; o < noff; o++) {
            int off = o, t = 0, zero = 1;
            for (int k = 0; k < d; k++) {
                int dk = off % span - r;
                off /= span;
                zero &= dk == 0;
                t = t * dims[k] + ((c[k] + dk) % dims[k] + dims[k]) % dims[k];
            }
            if (!zero)
                add_edge(&g, s, t);
        }
    }
    return g;
}

/* Which rank names edge e to hint_graph_create: another than its source when P > 1. */
static int namer(int e, int src) { return P > 1 ? (src + 1 + e % (P - 1)) % P : 0; }

/* Build the group: each rank names its share, grouped by source as hint_graph_create wants. */
static hint_group create(const struct graph *g)
{
    int *sources = malloc((size_t)g->ne * sizeof(int) + 1), *dests = malloc((size_t)g->ne * sizeof(int) + 1);
    size_t *deg = malloc((size_t)g->ne * sizeof(size_t) + 1), n = 0, k = 0;
    for (int e = 0; e < g->ne; e++) {
        if (namer(e, g->src[e]) != rc_rank)
            continue;
        if (n == 0 || sources[n - 1] != g->src[e]) {
            sources[n] = g->src[e];
            deg[n++] = 0;
        }
        deg[n - 1]++;
        dests[k++] = g->dst[e];
    }
    hint_group out;
    RC_OK(hint_graph_create(HINT_WORLD, n, sources, deg, dests, 0, &out));
    free(sources);
    free(dests);
    free(deg);
    return out;
}

/* The lists in the reference order: by naming rank, then as named (edges of one source kept
   in list order within a rank). */
static void reference_lists(const struct graph *g, int me, int *in, int *nin, int *out, int *nout)
{
    *nin = *nout = 0;
    for (int r = 0; r < P; r++)
        for (int e = 0; e < g->ne; e++) {
            if (namer(e, g->src[e]) != r)
                continue;
            if (g->src[e] == me)
                out[(*nout)++] = g->dst[e];
            if (g->dst[e] == me)
                in[(*nin)++] = g->src[e];
        }
}

/* Buffers on the node's shared heap, where morton can reach them (malloc is too, unless the
   malloc override is compiled out, as in the sanitizer build). */
static void *halloc(size_t bytes)
{
    void *p = hint_malloc(bytes + 1);
    if (p == NULL)
        FAIL("hint_malloc(%zu) failed", bytes + 1);
    return p;
}

static int some_strided; /* another rank passes a strided receive type in this call */

static int val(int src, size_t e) { return src * 100000 + (int)(e % 100000); }

/* neighbor_allgather of n ints per block with algorithm alg; strided: the receive side a vector
   type with stride 2 (odd elements keep their sentinels). */
static void run_allgather(hint_group gr, const char *alg, size_t n, int strided, const int *in, int nin)
{
    size_t base = strlen(where);
    snprintf(where + base, sizeof where - base, " %s n=%zu%s", alg, n, strided ? " strided" : "");
    RC_OK(hint_coll_set("neighbor_allgather", alg));
    int *s = halloc(n * sizeof(int));
    for (size_t e = 0; e < n; e++)
        s[e] = val(rc_rank, e);
    size_t per = strided ? 2 * n : n, len = (size_t)nin * per;
    int *r = halloc(len * sizeof(int));
    hint_type vt = HINT_INT;
    if (strided && n > 0) {
        hint_type v;
        RC_OK(hint_type_vector(n, 1, 2, HINT_INT, &v));
        RC_OK(hint_type_resized(v, 0, (ptrdiff_t)(2 * n * sizeof(int)), &vt));
        RC_OK(hint_type_free(&v));
        RC_OK(hint_type_commit(&vt));
    }
    for (int rep = 0; rep < 2; rep++) {
        for (size_t i = 0; i < len; i++)
            r[i] = -7;
        RC_OK(hint_neighbor_allgather(s, n, HINT_INT, r, strided && n > 0 ? 1 : n, vt, gr));
        for (int i = 0; i < nin; i++)
            for (size_t e = 0; e < per; e++) {
                int want = (strided && e % 2) || in[i] == HINT_PROC_NULL ? -7 : val(in[i], strided ? e / 2 : e);
                if (r[(size_t)i * per + e] != want)
                    FAIL("rep %d slot %d (source %d) element %zu: %d, expected %d", rep, i, in[i], e,
                         r[(size_t)i * per + e], want);
            }
        /* morton with a derived side: every rank runs naive instead; empty blocks move nothing,
           whatever is forced (api.c: no rank waits for another) */
        const char *last = NULL,
                   *expect = n == 0 ? "trivial"
                             : (strided || some_strided) && strcmp(alg, "morton") == 0 ? "naive" : alg;
        RC_OK(hint_coll_last("neighbor_allgather", &last));
        if (last == NULL || strcmp(last, expect) != 0)
            FAIL("ran %s, expected %s", last ? last : "(none)", expect);
    }
    for (size_t e = 0; e < n; e++)
        if (s[e] != val(rc_rank, e))
            FAIL("send buffer changed");
    if (vt != HINT_INT)
        RC_OK(hint_type_free(&vt));
    hint_free(s);
    hint_free(r);
    where[base] = 0;
}

static int spans_nodes; /* --nodes: ranks on several nodes, where morton (node-only) is refused */

/* Buffers off the shared heap (malloc is on it): an anonymous mapping of its own. */
static void *offheap(size_t bytes)
{
    size_t len = bytes + sizeof(size_t);
    size_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        FAIL("mmap(%zu) failed", len);
    *p = len;
    return p + 1;
}
static void offheap_free(void *q)
{
    size_t *p = (size_t *)q - 1;
    munmap(p, *p);
}
static void *vbuf(int heap, size_t bytes) { return heap ? halloc(bytes) : offheap(bytes); }
static void vbuf_free(int heap, void *p) { heap ? hint_free(p) : offheap_free(p); }

/* What hint_coll_last must say after forcing alg on a v variant: morton runs naive when some
   rank's buffer is off the heap and any rank has a byte to move (one rank needs no heap). */
static void check_last_v(hint_group gr, const char *op, const char *alg, int heap, size_t mine)
{
    size_t any = 0;
    int gsize;
    RC_OK(hint_allreduce(&mine, &any, 1, HINT_UINT64, HINT_SUM, gr));
    RC_OK(hint_group_size(gr, &gsize));
    const char *expect = strcmp(alg, "morton") == 0 && !heap && any > 0 && gsize > 1 ? "naive" : alg;
    const char *last = NULL;
    RC_OK(hint_coll_last(op, &last));
    if (last == NULL || (strcmp(last, expect) != 0 && strcmp(last, "trivial") != 0))
        FAIL("ran %s, expected %s", last ? last : "(none)", expect);
}

/* allgatherv: origin s sends vcount(s) ints (some none); receive slots lie in reverse order with
   a one-element gap between them, the gaps and the rest holding sentinels. heap: buffers from
   hint_malloc, else off the heap. */
static size_t vcount(int s, size_t scale) { return (size_t)((s * 7 + 3) % 5) * scale / 2; }

static void run_allgatherv(hint_group gr, const char *alg, size_t scale, const int *in, int nin, int heap)
{
    size_t base = strlen(where);
    snprintf(where + base, sizeof where - base, " allgatherv %s scale=%zu%s", alg, scale, heap ? "" : " off-heap");
    RC_OK(hint_coll_set("neighbor_allgatherv", alg));
    size_t sc = vcount(rc_rank, scale), len = 0;
    size_t *cnt = malloc(((size_t)nin + 1) * sizeof *cnt), *dsp = malloc(((size_t)nin + 1) * sizeof *dsp);
    for (int i = nin - 1; i >= 0; i--) {
        cnt[i] = in[i] == HINT_PROC_NULL ? 0 : vcount(in[i], scale);
        dsp[i] = len;
        len += cnt[i] + 1;
    }
    int *sb = vbuf(heap, sc * sizeof(int)), *r = vbuf(heap, len * sizeof(int));
    for (size_t e = 0; e < sc; e++)
        sb[e] = val(rc_rank, e);
    for (int rep = 0; rep < 2; rep++) {
        for (size_t e = 0; e < len; e++)
            r[e] = -7;
        int st = hint_neighbor_allgatherv(sb, sc, HINT_INT, r, cnt, dsp, HINT_INT, gr);
        if (spans_nodes && strcmp(alg, "morton") == 0) {
            if (st != HINT_ERR_UNSUPPORTED)
                FAIL("morton on a group over several nodes returned %d, expected HINT_ERR_UNSUPPORTED", st);
            break;
        }
        RC_OK(st);
        for (int i = 0; i < nin; i++)
            for (size_t e = 0; e <= cnt[i]; e++) {
                int want = e < cnt[i] ? val(in[i], e) : -7;
                if (r[dsp[i] + e] != want)
                    FAIL("rep %d slot %d (source %d) element %zu: %d, expected %d", rep, i, in[i], e, r[dsp[i] + e],
                         want);
            }
        int gin, gout;
        RC_OK(hint_neighbors_count(gr, &gin, &gout));
        size_t mine = sc * (size_t)(gout > 0) + len - (size_t)nin; /* bytes this rank's buffers span */
        check_last_v(gr, "neighbor_allgatherv", alg, heap, mine);
    }
    for (size_t e = 0; e < sc; e++)
        if (sb[e] != val(rc_rank, e))
            FAIL("send buffer changed");
    RC_OK(hint_coll_set("neighbor_allgatherv", "auto"));
    vbuf_free(heap, sb);
    vbuf_free(heap, r);
    free(cnt);
    free(dsp);
    where[base] = 0;
}

/* neighbor_alltoallv with alg against naive's result: out-slot j carries acount(me, j) ints
   (0 for some), blocks laid out in reverse order with gaps; the receiver learns each slot's
   count from a neighbor_alltoall of the counts (naive), so the sizes agree by construction. */
static size_t acount(int s, int j, size_t scale) { return (size_t)((s * 5 + j * 3 + 1) % 4) * scale / 2; }

static void run_alltoallv(hint_group gr, const char *alg, size_t scale, int heap)
{
    int nin, nout;
    RC_OK(hint_neighbors_count(gr, &nin, &nout));
    size_t base = strlen(where);
    snprintf(where + base, sizeof where - base, " alltoallv %s scale=%zu%s", alg, scale, heap ? "" : " off-heap");
    size_t *sc = calloc((size_t)nout + 1, sizeof *sc), *sd = calloc((size_t)nout + 1, sizeof *sd);
    size_t *rc = calloc((size_t)nin + 1, sizeof *rc), *rd = calloc((size_t)nin + 1, sizeof *rd), slen = 0, rlen = 0;
    for (int j = nout - 1; j >= 0; j--) {
        sc[j] = acount(rc_rank, j, scale);
        sd[j] = slen;
        slen += sc[j] + 2;
    }
    RC_OK(hint_coll_set("neighbor_alltoall", "naive"));
    RC_OK(hint_neighbor_alltoall(sc, 1, HINT_UINT64, rc, 1, HINT_UINT64, gr));
    RC_OK(hint_coll_set("neighbor_alltoall", "auto"));
    for (int i = 0; i < nin; i++) {
        rd[i] = rlen;
        rlen += rc[i] + 1;
    }
    int *s = vbuf(heap, slen * sizeof(int)), *r = vbuf(heap, rlen * sizeof(int));
    int *want = malloc((rlen + 1) * sizeof(int));
    for (size_t e = 0; e < slen; e++)
        s[e] = val(rc_rank, e);
    for (size_t e = 0; e < rlen; e++)
        want[e] = r[e] = -7;
    RC_OK(hint_coll_set("neighbor_alltoallv", "naive"));
    RC_OK(hint_neighbor_alltoallv(s, sc, sd, HINT_INT, want, rc, rd, HINT_INT, gr));
    RC_OK(hint_coll_set("neighbor_alltoallv", alg));
    for (int rep = 0; rep < 2; rep++) {
        for (size_t e = 0; e < rlen; e++)
            r[e] = -7;
        int st = hint_neighbor_alltoallv(s, sc, sd, HINT_INT, r, rc, rd, HINT_INT, gr);
        if (spans_nodes && strcmp(alg, "morton") == 0) {
            if (st != HINT_ERR_UNSUPPORTED)
                FAIL("morton on a group over several nodes returned %d, expected HINT_ERR_UNSUPPORTED", st);
            break;
        }
        RC_OK(st);
        for (size_t e = 0; e < rlen; e++)
            if (r[e] != want[e])
                FAIL("rep %d element %zu: %d, naive gave %d", rep, e, r[e], want[e]);
        size_t mine = 0;
        for (int j = 0; j < nout; j++)
            mine += sc[j];
        check_last_v(gr, "neighbor_alltoallv", alg, heap, mine);
    }
    for (size_t e = 0; e < slen; e++)
        if (s[e] != val(rc_rank, e))
            FAIL("send buffer changed");
    RC_OK(hint_coll_set("neighbor_alltoallv", "auto"));
    vbuf_free(heap, s);
    vbuf_free(heap, r);
    free(want);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    where[base] = 0;
}

/* neighbor_alltoall with morton against naive's result (the matching of repeated edges and a
   cart's +1/-1 order is naive's); heap: buffers from malloc (the shared heap), else on the stack
   (every rank falls back to naive). */
static void run_alltoall_morton(hint_group gr, size_t n, int heap)
{
    int nin, nout;
    RC_OK(hint_neighbors_count(gr, &nin, &nout));
    size_t base = strlen(where);
    snprintf(where + base, sizeof where - base, " alltoall morton n=%zu%s", n, heap ? "" : " stack");
    enum { STACK_INTS = 4096 };
    int stack_s[STACK_INTS], stack_r[STACK_INTS];
    if (!heap && ((size_t)nout * n > STACK_INTS || (size_t)nin * n > STACK_INTS))
        FAIL("stack case too large");
    int *s = heap ? halloc((size_t)nout * n * sizeof(int)) : stack_s;
    int *want = malloc((size_t)nin * n * sizeof(int) + 1);
    int *r = heap ? halloc((size_t)nin * n * sizeof(int)) : stack_r;
    for (size_t e = 0; e < (size_t)nout * n; e++)
        s[e] = val(rc_rank, e);
    for (size_t e = 0; e < (size_t)nin * n; e++)
        want[e] = r[e] = -7;
    RC_OK(hint_coll_set("neighbor_alltoall", "naive"));
    RC_OK(hint_neighbor_alltoall(s, n, HINT_INT, want, n, HINT_INT, gr));
    RC_OK(hint_coll_set("neighbor_alltoall", "morton"));
    int st = hint_neighbor_alltoall(s, n, HINT_INT, r, n, HINT_INT, gr);
    if (spans_nodes) {
        if (st != HINT_ERR_UNSUPPORTED)
            FAIL("morton on a group over several nodes returned %d, expected HINT_ERR_UNSUPPORTED", st);
    } else {
        RC_OK(st);
        for (size_t e = 0; e < (size_t)nin * n; e++)
            if (r[e] != want[e])
                FAIL("element %zu (slot %zu): %d, naive gave %d", e, n ? e / n : 0, r[e], want[e]);
        /* off the heap: naive, unless no rank has a byte to move (an empty buffer is anywhere)
           or the group is one rank (its own buffers need no heap) */
        int mine = (nin + nout) * (int)n, any = 0, gsize;
        RC_OK(hint_allreduce(&mine, &any, 1, HINT_INT, HINT_SUM, gr));
        RC_OK(hint_group_size(gr, &gsize));
        const char *expect = heap || any == 0 || gsize == 1 ? "morton" : "naive";
        const char *last = NULL;
        RC_OK(hint_coll_last("neighbor_alltoall", &last));
        if (last == NULL || strcmp(last, expect) != 0)
            FAIL("ran %s, expected %s", last ? last : "(none)", expect);
    }
    RC_OK(hint_coll_set("neighbor_alltoall", "auto"));
    if (heap) {
        hint_free(s);
        hint_free(r);
    }
    free(want);
    where[base] = 0;
}

/* neighbor_alltoall staged against naive's result, with the receive side strided (a vector of
   n ints, stride 2) on rank 0 only when strided; buffers from malloc or the stack alike (staged
   copies through its own heads). hint_coll_last: trivial at 0, staged at a few ints, staged or
   (the group's largest degree of blocks beyond an area) naive at more. */
static void run_alltoall_staged(hint_group gr, size_t n, int strided)
{
    int nin, nout;
    RC_OK(hint_neighbors_count(gr, &nin, &nout));
    size_t base = strlen(where), per = strided && rc_rank == 0 ? 2 * n : n;
    snprintf(where + base, sizeof where - base, " alltoall staged n=%zu%s", n, strided ? " strided" : "");
    int *s = malloc((size_t)nout * n * sizeof(int) + 1), *want = malloc((size_t)nin * n * sizeof(int) + 1);
    int *r = malloc((size_t)nin * per * sizeof(int) + 1);
    for (size_t e = 0; e < (size_t)nout * n; e++)
        s[e] = val(rc_rank, e) + 7 * (int)(e / (n ? n : 1)); /* each out-slot's block differs */
    for (size_t e = 0; e < (size_t)nin * n; e++)
        want[e] = -7;
    for (size_t e = 0; e < (size_t)nin * per; e++)
        r[e] = -7;
    hint_type vt = HINT_INT;
    if (per != n && n > 0) {
        hint_type v;
        RC_OK(hint_type_vector(n, 1, 2, HINT_INT, &v));
        RC_OK(hint_type_resized(v, 0, (ptrdiff_t)(2 * n * sizeof(int)), &vt));
        RC_OK(hint_type_free(&v));
        RC_OK(hint_type_commit(&vt));
    }
    RC_OK(hint_coll_set("neighbor_alltoall", "naive"));
    RC_OK(hint_neighbor_alltoall(s, n, HINT_INT, want, n, HINT_INT, gr));
    RC_OK(hint_coll_set("neighbor_alltoall", "staged"));
    RC_OK(hint_neighbor_alltoall(s, n, HINT_INT, r, vt == HINT_INT ? n : 1, vt, gr));
    for (size_t e = 0; e < (size_t)nin * per; e++) {
        int w = per == n ? want[e] : e % 2 ? -7 : want[(e / (2 * n)) * n + (e % (2 * n)) / 2];
        if (r[e] != w)
            FAIL("element %zu: %d, naive gave %d", e, r[e], w);
    }
    const char *last = NULL;
    RC_OK(hint_coll_last("neighbor_alltoall", &last));
    if (last == NULL || (strcmp(last, n == 0 ? "trivial" : "staged") != 0 && !(n > 100 && strcmp(last, "naive") == 0)))
        FAIL("ran %s", last ? last : "(none)");
    RC_OK(hint_coll_set("neighbor_alltoall", "auto"));
    if (vt != HINT_INT)
        RC_OK(hint_type_free(&vt));
    free(s);
    free(r);
    free(want);
    where[base] = 0;
}

static void check_group(hint_group gr, const int *in, int nin, int quick)
{
    static const size_t sizes[] = {0, 1, 5, 1000};
    const char *algs[] = {"naive", "distance_halving"};
    for (int a = 0; a < 2; a++)
        for (int k = 0; k < 4; k++) {
            if (quick && k != 2)
                continue;
            run_allgather(gr, algs[a], sizes[k], 0, in, nin);
        }
    run_allgather(gr, "distance_halving", 3, 1, in, nin);
    if (!spans_nodes) {
        /* staged: 0 B, 4 B and 20 B in the head, 4000 B in an area; a derived receive side on
           every rank or on rank 0 only (each rank packs its own: staged still runs) */
        for (int k = 0; k < 4; k++)
            if (!quick || k == 2)
                run_allgather(gr, "staged", sizes[k], 0, in, nin);
        run_allgather(gr, "staged", 3, 1, in, nin);
        run_allgather(gr, "staged", 3, rc_rank == 0, in, nin);
        run_alltoall_staged(gr, 0, 0);
        run_alltoall_staged(gr, 5, 0);
        run_alltoall_staged(gr, 3, 1);
        if (!quick)
            run_alltoall_staged(gr, 300, 0);
        run_allgather(gr, "morton", 3, 1, in, nin);
        some_strided = 1; /* only rank 0's side is derived: all must still agree on naive */
        run_allgather(gr, "morton", 3, rc_rank == 0, in, nin);
        some_strided = 0;
        run_allgather(gr, "morton", quick ? 5 : 1000, 0, in, nin);
        if (!quick)
            run_allgather(gr, "morton", 1, 0, in, nin);
    }
    run_allgatherv(gr, "naive", quick ? 3 : 400, in, nin, 1);
    run_allgatherv(gr, "distance_halving", quick ? 3 : 400, in, nin, 1);
    run_allgatherv(gr, "morton", quick ? 3 : 400, in, nin, 1);
    run_allgatherv(gr, "morton", 3, in, nin, 0);
    if (!quick)
        run_allgatherv(gr, "morton", 1, in, nin, 1);
    run_alltoallv(gr, "morton", quick ? 3 : 300, 1);
    run_alltoallv(gr, "morton", 2, 0);
    if (!quick)
        run_alltoallv(gr, "morton", 1, 1);
    run_alltoall_morton(gr, quick ? 3 : 300, 1);
    run_alltoall_morton(gr, 2, 0);
    hint_group d;
    RC_OK(hint_group_dup(gr, &d));
    run_allgather(d, "distance_halving", 5, 0, in, nin);
    RC_OK(hint_group_free(&d));
}

static void check_graph(const char *name, struct graph g, int quick)
{
    snprintf(where, sizeof where, "%s (%d edges)", name, g.ne);
    hint_group gr = create(&g);
    int kind;
    RC_OK(hint_topo_test(gr, &kind));
    RC_CHECK(kind == HINT_DIST_GRAPH);
    int *in = malloc((size_t)g.ne * sizeof(int) + 1), *out = malloc((size_t)g.ne * sizeof(int) + 1), nin, nout;
    reference_lists(&g, rc_rank, in, &nin, out, &nout);
    int gin, gout;
    RC_OK(hint_graph_neighbors_count(gr, &gin, &gout));
    if (gin != nin || gout != nout)
        FAIL("degrees %d/%d, expected %d/%d", gin, gout, nin, nout);
    int *lin = malloc((size_t)nin * sizeof(int) + 1), *lout = malloc((size_t)nout * sizeof(int) + 1);
    RC_OK(hint_graph_neighbors(gr, nin, lin, nout, lout));
    for (int i = 0; i < nin; i++)
        if (lin[i] != in[i])
            FAIL("source %d is %d, expected %d", i, lin[i], in[i]);
    for (int i = 0; i < nout; i++)
        if (lout[i] != out[i])
            FAIL("destination %d is %d, expected %d", i, lout[i], out[i]);
    check_group(gr, in, nin, quick);
    RC_OK(hint_group_free(&gr));
    free(lin);
    free(lout);
    free(in);
    free(out);
    free(g.src);
    free(g.dst);
}

static void check_cart(int ndims, const int periods[], int quick)
{
    int dims[3] = {0, 0, 0};
    RC_OK(hint_dims_create(P, ndims, dims));
    snprintf(where, sizeof where, "cart %dd %d%d%d periodic %d%d%d", ndims, dims[0], dims[1], dims[2], periods[0],
             periods[1], periods[2]);
    hint_group c;
    RC_OK(hint_cart_create(HINT_WORLD, ndims, dims, periods, 0, &c));
    int in[6], nin = 2 * ndims;
    for (int d = 0; d < ndims; d++)
        RC_OK(hint_cart_shift(c, d, 1, &in[2 * d], &in[2 * d + 1]));
    /* slot 2d holds the -1 neighbour's block, 2d+1 the +1 one's; beyond an edge (HINT_PROC_NULL)
       the slot keeps its sentinels */
    check_group(c, in, nin, quick);
    RC_OK(hint_group_free(&c));
}

/* morton neighbor_alltoallv where rank 0 sends 2 ints into a slot of 1 (its out-slot 0 on a
   periodic ring): every rank returns HINT_ERR_MISMATCH (refused across nodes), and the group
   still works afterwards. */
static void mismatched_alltoallv(void)
{
    snprintf(where, sizeof where, "errors: morton alltoallv with differing counts");
    int periodic = 1;
    hint_group ring;
    RC_OK(hint_cart_create(HINT_WORLD, 1, &P, &periodic, 0, &ring));
    int *s = halloc(4 * sizeof(int)), *r = halloc(4 * sizeof(int));
    size_t sc[2] = {rc_rank == 0 ? 2 : 1, 1}, sd[2] = {0, 2}, rc[2] = {1, 1}, rd[2] = {0, 1};
    for (int e = 0; e < 4; e++)
        s[e] = val(rc_rank, (size_t)e);
    RC_OK(hint_coll_set("neighbor_alltoallv", "morton"));
    RC_EXPECT(hint_neighbor_alltoallv(s, sc, sd, HINT_INT, r, rc, rd, HINT_INT, ring),
              spans_nodes ? HINT_ERR_UNSUPPORTED : HINT_ERR_MISMATCH);
    sc[0] = 1;
    RC_EXPECT(hint_neighbor_alltoallv(s, sc, sd, HINT_INT, r, rc, rd, HINT_INT, ring),
              spans_nodes ? HINT_ERR_UNSUPPORTED : HINT_SUCCESS);
    RC_OK(hint_coll_set("neighbor_alltoallv", "auto"));
    hint_free(s);
    hint_free(r);
    RC_OK(hint_group_free(&ring));
}

/* Adjacent lists that disagree (rank 0 lists 1 as a source, 1 does not list 0): neighbor_alltoall
   staged and morton find no send for rank 0's slot and must refuse on every rank alike, so that no
   rank returns while another waits (each checks every rank's slots, not only its own). */
static void invalid_adjacent(void)
{
    if (P < 2 || spans_nodes)
        return;
    snprintf(where, sizeof where, "invalid adjacent lists");
    int one = 1;
    hint_group bad;
    RC_OK(hint_graph_create_adjacent(HINT_WORLD, rc_rank == 0 ? 1 : 0, &one, 0, NULL, 0, &bad));
    RC_OK(hint_group_set_errhandler(bad, HINT_ERRORS_RETURN));
    int sbuf[2] = {0}, rbuf[2] = {0};
    static const char *const algs[] = {"staged", "morton"};
    for (int k = 0; k < 2; k++) {
        RC_OK(hint_coll_set("neighbor_alltoall", algs[k]));
        RC_EXPECT(hint_neighbor_alltoall(sbuf, 1, HINT_INT, rbuf, 1, HINT_INT, bad), HINT_ERR_TOPOLOGY);
    }
    RC_OK(hint_coll_set("neighbor_alltoall", "auto"));
    RC_OK(hint_group_free(&bad));
}

static void errors(void)
{
    snprintf(where, sizeof where, "errors");
    hint_group out;
    int s = 0, d = P; /* out of range */
    size_t deg = 1;
    RC_EXPECT(hint_graph_create(HINT_WORLD, rc_rank == P - 1 ? 1 : 0, &s, &deg, &d, 0, &out), HINT_ERR_RANK);
    RC_EXPECT(hint_graph_create(HINT_WORLD, rc_rank == 0 ? 1 : 0, &s, NULL, &d, 0, &out), HINT_ERR_ARG);
    RC_EXPECT(hint_graph_create(HINT_WORLD, 0, NULL, NULL, NULL, 0, NULL), HINT_ERR_ARG);
    /* distance_halving is neighbor_allgather's alone */
    struct graph g = random_graph(0.5, 0, 99);
    hint_group gr = create(&g);
    int nin, nout;
    RC_OK(hint_graph_neighbors_count(gr, &nin, &nout));
    int *buf = calloc((size_t)(nin + nout + 1) * 2, sizeof(int));
    size_t *cnt = calloc((size_t)(nin + nout + 1), sizeof(size_t));
    RC_OK(hint_coll_set("neighbor_alltoall", "distance_halving"));
    RC_EXPECT(hint_neighbor_alltoall(buf, 1, HINT_INT, buf + nout + 1, 1, HINT_INT, gr), HINT_ERR_UNSUPPORTED);
    RC_OK(hint_coll_set("neighbor_alltoall", "auto"));
    /* staged: not for the v variants, and needs one node */
    RC_OK(hint_coll_set("neighbor_alltoallv", "staged"));
    RC_EXPECT(hint_neighbor_alltoallv(buf, cnt, cnt, HINT_INT, buf, cnt, cnt, HINT_INT, gr), HINT_ERR_UNSUPPORTED);
    RC_OK(hint_coll_set("neighbor_alltoallv", "auto"));
    RC_OK(hint_coll_set("neighbor_allgather", "staged"));
    RC_EXPECT(hint_neighbor_allgather(buf, 1, HINT_INT, buf + nout + 1, 1, HINT_INT, gr),
              spans_nodes ? HINT_ERR_UNSUPPORTED : HINT_SUCCESS);
    RC_OK(hint_coll_set("neighbor_allgather", "auto"));
    /* morton on the v variants: run on one node, refused across nodes */
    int vmorton = spans_nodes ? HINT_ERR_UNSUPPORTED : HINT_SUCCESS;
    RC_OK(hint_coll_set("neighbor_allgatherv", "morton"));
    RC_EXPECT(hint_neighbor_allgatherv(buf, 0, HINT_INT, buf, cnt, cnt, HINT_INT, gr), vmorton);
    RC_OK(hint_coll_set("neighbor_allgatherv", "auto"));
    RC_OK(hint_coll_set("neighbor_alltoallv", "distance_halving"));
    RC_EXPECT(hint_neighbor_alltoallv(buf, cnt, cnt, HINT_INT, buf, cnt, cnt, HINT_INT, gr), HINT_ERR_UNSUPPORTED);
    RC_OK(hint_coll_set("neighbor_alltoallv", "morton"));
    RC_EXPECT(hint_neighbor_alltoallv(buf, cnt, cnt, HINT_INT, buf, cnt, cnt, HINT_INT, gr), vmorton);
    RC_OK(hint_coll_set("neighbor_alltoallv", "auto"));
    mismatched_alltoallv();
    invalid_adjacent();
    free(buf);
    free(cnt);
    free(g.src);
    free(g.dst);
    RC_OK(hint_group_free(&gr));
}

int main(int argc, char **argv)
{
    int quick = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0) {
            printf("usage: neighbors_dh [--quick] [--nodes]\n  hint_graph_create and neighbor_allgather distance_halving "
                   "against the reference on random graphs, Moore neighbourhoods, carts and corner cases;\n"
                   "  --quick: one block size per graph; --nodes: the ranks span nodes (morton must be refused).\n"
                   "  Run under hintrun; rank 0 prints 'ok neighbors_dh'.\n");
            return 0;
        }
        quick |= strcmp(argv[i], "--quick") == 0;
        spans_nodes |= strcmp(argv[i], "--nodes") == 0;
    }
    RC_OK(hint_init(&argc, &argv));
    RC_OK(hint_group_rank(HINT_WORLD, &rc_rank));
    RC_OK(hint_group_size(HINT_WORLD, &P));
    RC_OK(hint_group_set_errhandler(HINT_WORLD, HINT_ERRORS_RETURN));
    errors();
    static const double dens[] = {0.05, 0.1, 0.3, 0.5, 0.7};
    char name[64];
    for (int k = 0; k < 5; k++)
        for (int loops = 0; loops < 2; loops++) {
            snprintf(name, sizeof name, "random %.2f%s", dens[k], loops ? " loops+repeats" : "");
            check_graph(name, random_graph(dens[k], loops, 1000 + (uint64_t)k * 7 + (uint64_t)loops), quick || k % 2);
        }
    static const int rd[][2] = {{1, 1}, {1, 2}, {2, 2}, {1, 3}};
    for (int k = 0; k < 4; k++) {
        snprintf(name, sizeof name, "moore r=%d d=%d", rd[k][0], rd[k][1]);
        check_graph(name, moore(rd[k][0], rd[k][1]), quick || k > 0);
    }
    check_graph("empty", (struct graph){0}, 1);
    struct graph star = {0};
    for (int d = 1; d < P; d++)
        add_edge(&star, 0, d);
    check_graph("star out of 0", star, 1);
    struct graph full = {0};
    for (int s = 0; s < P; s++)
        for (int d = 0; d < P; d++)
            add_edge(&full, s, d);
    check_graph("complete with loops", full, 1);
    struct graph loop = {0};
    add_edge(&loop, P - 1, P - 1);
    check_graph("one self loop", loop, 1);
    static const int per[][3] = {{1, 1, 1}, {1, 0, 1}, {0, 0, 0}};
    for (int nd = 1; nd <= 3; nd++)
        for (int k = 0; k < 3; k++)
            check_cart(nd, per[k], 1);
    RC_OK(hint_coll_set("neighbor_allgather", "auto"));
    if (rc_rank == 0)
        printf("ok neighbors_dh\n");
    RC_OK(hint_finalize());
    return 0;
}
