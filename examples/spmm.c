/*
 * examples/spmm.c — sparse matrix x dense matrix with a 1-D row distribution, the SpMM kernel of
 * paper 002 (../shared/papers/002_*.txt, §V.C): its halo exchange is one
 * hint_neighbor_allgatherv on the matrix's communication graph.
 *
 *   hintrun -n 4 build/examples/spmm --matrix bcstkt13 --k 8 --iters 20 --algorithm distance_halving
 *
 * A is n x n, sparse; X is n x k, dense. Rank r owns a block of consecutive rows of both (the
 * first n mod P ranks one row more). Each iteration computes X' = A X + X0 (A's rows scaled to
 * an absolute sum of 0.9, so the values stay bounded): rank r needs the rows of X that the
 * columns of its rows of A name, so it receives the whole X block of every rank owning such a
 * column — an edge s -> r of the communication graph, named by r (the receiver knows what it
 * needs) through hint_graph_create — and sends its own block, the same to every out-neighbour:
 * exactly a neighbour allgatherv (blocks differ in size when P does not divide n).
 *
 * The paper's matrices come from SuiteSparse, which cannot be downloaded here: --matrix NAME
 * generates a matrix with the size, number of non-zeros and kind of structure of each (banded for
 * the structural ones, block-diagonal with random couplings for the multiphysics ones, power-law
 * rows for the citation network, uniform for the least-squares one), row by row from --seed, so
 * every rank generates its own rows and the check can regenerate all of them.
 *
 * The check (on unless --no-check): every rank runs the same iterations serially over the whole
 * matrix and compares its rows; any difference above 1e-12 (relative) fails the run on every
 * rank. --corrupt adds 1 to one received halo value that a product uses, once, on the highest
 * rank that reads a halo, to show that the check catches a wrong exchange.
 */
#include <math.h>

#include "stencil_spmm_common.h"

#define OP "neighbor_allgatherv"
#define TOLERANCE 1e-12
#define MAX_N 2000000L

enum kind { BANDED, BLOCKDIAG, POWERLAW, UNIFORM };
static const char *const kind_names[] = {"banded", "blockdiag", "powerlaw", "random"};

/* Table II of paper 002: each name's size and non-zeros, and the structure generated for it */
static const struct preset {
    const char *name;
    enum kind kind;
    long n, nnz;
} presets[] = {
    {"dwt_193", BANDED, 193, 1843},     {"journals", POWERLAW, 128, 6096}, {"heart1", BLOCKDIAG, 3600, 1387773},
    {"ash292", UNIFORM, 292, 2208},     {"bcstkt13", BANDED, 2003, 83883}, {"cegb2802", BANDED, 2802, 277362},
    {"comsol", BLOCKDIAG, 1500, 97645},
};
#define NPRESETS (sizeof presets / sizeof presets[0])

struct options {
    const char *matrix, *algorithm;
    enum kind kind;
    long n, nnz, k, iters, seed;
    int check, corrupt, help;
};

struct matrix {
    enum kind kind;
    long n;
    double per_row; /* target non-zeros per row */
    long band;      /* banded: half bandwidth; blockdiag: block size */
    double far;     /* share of a row's off-diagonal entries placed anywhere */
    uint64_t seed;
    unsigned char *mark; /* n flags, all 0 between rows */
};

/* rows [row_lo(r), row_lo(r + 1)) belong to rank r */
static long row_lo(long n, int P, int r)
{
    return r * (n / P) + (r < n % P ? r : n % P);
}

static int owner_of(long n, int P, long j)
{
    long base = n / P, rem = n % P;
    return (int)(j < rem * (base + 1) ? j / (base + 1) : rem + (j - rem * (base + 1)) / base);
}

/* ---- options ---- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: hintrun -n P spmm [--matrix NAME] [--n N] [--nnz Z] [--k K] [--iters I] [--seed S]\n"
            "                         [--algorithm NAME] [--no-check] [--corrupt]\n"
            "Sparse x dense matrix product X' = A X + X0, iterated, A and X distributed by rows over P\n"
            "ranks; the halo (the X rows a rank's columns of A name) moves with one\n"
            "hint_neighbor_allgatherv per iteration on the graph hint_graph_create builds from A.\n"
            "  --matrix NAME     a stand-in for a SuiteSparse matrix of paper 002's Table II, generated\n"
            "                    with its size, non-zeros and kind of structure: dwt_193, bcstkt13,\n"
            "                    cegb2802 (banded), heart1, comsol (block-diagonal + random couplings),\n"
            "                    journals (power-law rows, hub columns), ash292 (uniform);\n"
            "                    or a kind, sized by --n and --nnz: banded, blockdiag, powerlaw, random\n"
            "                    (default bcstkt13)\n"
            "  --n N             rows (= columns) for a kind, 1..%ld (default 2000)\n"
            "  --nnz Z           non-zeros for a kind, about; at least N (default 20 N)\n"
            "  --k K             columns of X, 1..1024 (default 8)\n"
            "  --iters I         iterations, 1..100000 (default 10)\n"
            "  --seed S          generator seed, 0..2^31 (default 1)\n"
            "  --algorithm NAME  force " OP "'s algorithm: naive, distance_halving, morton,\n"
            "                    or auto (default: hint's selection); see docs/COLLECTIVES.md\n"
            "  --no-check        skip the serial computation (each rank redoes the whole product)\n"
            "  --corrupt         add 1 to one received halo value once (the check must then fail)\n"
            "Prints the time per iteration (and its halo exchange alone): per iteration the slowest\n"
            "rank, then the median over iterations.\n"
            "Exit status: 0 done and checked, 1 check or a call failed, 2 bad arguments,\n"
            "3 the forced algorithm cannot run this exchange (HINT_ERR_UNSUPPORTED; says UNSUPPORTED).\n",
            MAX_N);
}

static int set_matrix(struct options *o, const char *v)
{
    for (size_t i = 0; i < NPRESETS; i++)
        if (!strcmp(v, presets[i].name)) {
            o->matrix = v;
            o->kind = presets[i].kind;
            o->n = presets[i].n;
            o->nnz = presets[i].nnz;
            return 0;
        }
    for (int i = 0; i < 4; i++)
        if (!strcmp(v, kind_names[i])) {
            o->matrix = v;
            o->kind = (enum kind)i;
            return 0;
        }
    return -1;
}

static int is_preset(const char *m)
{
    for (size_t i = 0; i < NPRESETS; i++)
        if (!strcmp(m, presets[i].name))
            return 1;
    return 0;
}

/* Fills o; on a bad argument writes a message to err and returns -1. */
static int parse_options(int argc, char **argv, struct options *o, char *err, size_t errlen)
{
    *o = (struct options){.algorithm = "auto", .k = 8, .iters = 10, .seed = 1, .check = 1};
    set_matrix(o, "bcstkt13");
    long n = -1, nnz = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            o->help = 1;
            continue;
        }
        if (!strcmp(a, "--no-check")) {
            o->check = 0;
            continue;
        }
        if (!strcmp(a, "--corrupt")) {
            o->corrupt = 1;
            continue;
        }
        int takes = !strcmp(a, "--matrix") || !strcmp(a, "--n") || !strcmp(a, "--nnz") || !strcmp(a, "--k") ||
                    !strcmp(a, "--iters") || !strcmp(a, "--seed") || !strcmp(a, "--algorithm");
        if (!takes) {
            snprintf(err, errlen, "unknown argument '%s' (see --help)", a);
            return -1;
        }
        if (!v) {
            snprintf(err, errlen, "%s needs a value", a);
            return -1;
        }
        i++;
        int bad = 0;
        if (!strcmp(a, "--matrix"))
            bad = set_matrix(o, v);
        else if (!strcmp(a, "--n"))
            bad = parse_count(v, 1, MAX_N, &n);
        else if (!strcmp(a, "--nnz"))
            bad = parse_count(v, 1, 1L << 40, &nnz);
        else if (!strcmp(a, "--k"))
            bad = parse_count(v, 1, 1024, &o->k);
        else if (!strcmp(a, "--iters"))
            bad = parse_count(v, 1, 100000, &o->iters);
        else if (!strcmp(a, "--seed"))
            bad = parse_count(v, 0, 1L << 31, &o->seed);
        else
            o->algorithm = v;
        if (bad) {
            snprintf(err, errlen, "%s '%s' is not valid (see --help)", a, v);
            return -1;
        }
    }
    if (is_preset(o->matrix)) {
        if (n >= 0 || nnz >= 0) {
            snprintf(err, errlen, "--n and --nnz size the kinds only; --matrix %s has its own", o->matrix);
            return -1;
        }
        return 0;
    }
    o->n = n >= 0 ? n : 2000;
    o->nnz = nnz >= 0 ? nnz : 20 * o->n;
    if (o->nnz < o->n || o->nnz / o->n > o->n) {
        snprintf(err, errlen, "--nnz %ld: want N..N*N for N = %ld (the diagonal is always there)", o->nnz, o->n);
        return -1;
    }
    return 0;
}

/* ---- the generator ---- */

static struct matrix matrix_of(const struct options *o)
{
    struct matrix m = {.kind = o->kind, .n = o->n, .per_row = (double)o->nnz / (double)o->n,
                       .seed = (uint64_t)o->seed};
    /* structural matrices: a band about 1.5x as wide as a row is long, one entry far off in about
       2 % of the rows; multiphysics: dense-ish blocks twice a row's length, 1 % of the entries
       coupling blocks */
    if (m.kind == BANDED) {
        m.band = (long)ceil(0.75 * m.per_row) + 1;
        m.far = 0.02 / m.per_row;
    } else if (m.kind == BLOCKDIAG) {
        m.band = (long)ceil(2 * m.per_row) + 1;
        m.far = 0.01;
    }
    m.mark = calloc((size_t)m.n, 1);
    return m;
}

/* row i's length: per_row on average; powerlaw: Pareto (alpha 2, mean per_row), so a few rows
   are much longer than the rest */
static long row_length(const struct matrix *m, long i)
{
    double u = unit_of(hash2(m->seed, (uint64_t)i, 0x4c454e));
    double len = m->kind == POWERLAW ? ceil(m->per_row / 2 / sqrt(1 - u)) : floor(m->per_row + u);
    return len < 1 ? 1 : len > (double)m->n ? m->n : (long)len;
}

/* the d-th candidate column of row i */
static long draw_column(const struct matrix *m, long i, uint64_t d)
{
    uint64_t h = hash2(m->seed, (uint64_t)i, d + 1);
    double u = unit_of(h), w = unit_of(mix64(h));
    long n = m->n;
    if (m->kind == UNIFORM || ((m->kind == BANDED || m->kind == BLOCKDIAG) && w < m->far))
        return (long)(u * (double)n);
    if (m->kind == POWERLAW)
        return (long)(u * u * u * (double)n); /* hub columns: low indices are named far more often */
    if (m->kind == BANDED) {
        long j = i - m->band + (long)(u * (double)(2 * m->band + 1));
        return j < 0 ? 0 : j >= n ? n - 1 : j;
    }
    long b0 = i / m->band * m->band, b1 = b0 + m->band < n ? b0 + m->band : n;
    return b0 + (long)(u * (double)(b1 - b0));
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* Row i into cols (sorted, distinct, the diagonal among them) and vals (absolute sum 0.9);
   returns its length. Draws stop after 8 tries per entry, so a narrow band gives shorter rows. */
static long generate_row(const struct matrix *m, long i, long *cols, double *vals)
{
    long want = row_length(m, i), len = 0;
    cols[len++] = i;
    m->mark[i] = 1;
    for (uint64_t d = 0; len < want && d < 8 * (uint64_t)want + 16; d++) {
        long j = draw_column(m, i, d);
        if (!m->mark[j]) {
            m->mark[j] = 1;
            cols[len++] = j;
        }
    }
    qsort(cols, (size_t)len, sizeof *cols, cmp_long);
    double sum = 0;
    for (long e = 0; e < len; e++) {
        uint64_t h = hash2(m->seed ^ 0x56414c, (uint64_t)i, (uint64_t)cols[e]);
        vals[e] = (0.5 + unit_of(h)) * (h & 1 ? -1 : 1);
        sum += fabs(vals[e]);
        m->mark[cols[e]] = 0;
    }
    for (long e = 0; e < len; e++)
        vals[e] *= 0.9 / sum;
    return len;
}

static double x0_of(uint64_t seed, long row, long col)
{
    return 2 * unit_of(hash2(seed ^ 0x58, (uint64_t)row, (uint64_t)col)) - 1;
}

struct csr {
    long rows, nnz;
    long *ptr, *col;
    double *val;
};

static void csr_free(struct csr *a)
{
    free(a->ptr);
    free(a->col);
    free(a->val);
}

/* rows [lo, hi) of the matrix */
static int csr_generate(const struct matrix *m, long lo, long hi, struct csr *a)
{
    long cap = (long)(m->per_row * (double)(hi - lo) * 1.2) + 64;
    *a = (struct csr){.rows = hi - lo, .ptr = malloc((size_t)(hi - lo + 1) * sizeof(long))};
    long *cols = malloc((size_t)m->n * sizeof *cols);
    double *vals = malloc((size_t)m->n * sizeof *vals);
    a->col = malloc((size_t)cap * sizeof(long));
    a->val = malloc((size_t)cap * sizeof(double));
    if (!a->ptr || !cols || !vals || !a->col || !a->val || !m->mark) {
        free(cols);
        free(vals);
        return HINT_ERR_NOMEM;
    }
    a->ptr[0] = 0;
    for (long i = lo; i < hi; i++) {
        long len = generate_row(m, i, cols, vals);
        if (a->nnz + len > cap) {
            cap = 2 * (a->nnz + len);
            long *c = realloc(a->col, (size_t)cap * sizeof(long));
            double *v = c ? realloc(a->val, (size_t)cap * sizeof(double)) : NULL;
            if (c)
                a->col = c;
            if (!v) {
                free(cols);
                free(vals);
                return HINT_ERR_NOMEM;
            }
            a->val = v;
        }
        memcpy(a->col + a->nnz, cols, (size_t)len * sizeof(long));
        memcpy(a->val + a->nnz, vals, (size_t)len * sizeof(double));
        a->nnz += len;
        a->ptr[i - lo + 1] = a->nnz;
    }
    free(cols);
    free(vals);
    return HINT_SUCCESS;
}

/* ---- the distributed product ---- */

struct spmm {
    struct options o;
    struct matrix m;
    int rank, P;
    long lo, hi, k;
    struct csr a;        /* my rows, global column numbers */
    long *where;         /* per non-zero: offset of its X row in halo (>= 0), or -1 - offset in x */
    hint_group graph;    /* the communication graph */
    int indeg, outdeg;
    int *sources;        /* in-neighbours, in the graph's order */
    size_t *rcounts, *rdispls;
    double *x, *xnext, *x0, *halo;
    size_t halo_len;
};

/* The in-neighbours: owners of the columns my rows name, other than me, ascending. */
static int in_neighbours(const struct spmm *s, int **out)
{
    char *needed = calloc((size_t)s->P, 1);
    int *src = malloc((size_t)s->P * sizeof *src), n = 0;
    if (!needed || !src) {
        free(needed);
        free(src);
        return -1;
    }
    for (long e = 0; e < s->a.nnz; e++)
        needed[owner_of(s->m.n, s->P, s->a.col[e])] = 1;
    for (int r = 0; r < s->P; r++)
        if (needed[r] && r != s->rank)
            src[n++] = r;
    free(needed);
    *out = src;
    return n;
}

/* Builds the graph from the edges this rank receives on (named by the receiver), then lays out
   the halo in the order the graph gives its in-neighbours. */
static int build_graph(struct spmm *s)
{
    int *named = NULL, n = in_neighbours(s, &named);
    int st = n >= 0 ? HINT_SUCCESS : HINT_ERR_NOMEM;
    n = n > 0 ? n : 0;
    size_t *degrees = malloc(((size_t)n + 1) * sizeof *degrees);
    int *dests = malloc(((size_t)n + 1) * sizeof *dests);
    if (!degrees || !dests)
        st = HINT_ERR_NOMEM;
    for (int i = 0; i < n && st == HINT_SUCCESS; i++) {
        degrees[i] = 1;
        dests[i] = s->rank;
    }
    /* every rank calls, those with nothing to receive with n = 0 */
    int all = 0;
    hint_allreduce(&st, &all, 1, HINT_INT, HINT_MAX, HINT_WORLD);
    st = all;
    if (st == HINT_SUCCESS)
        st = hint_graph_create(HINT_WORLD, (size_t)n, named, degrees, dests, 0, &s->graph);
    free(named);
    free(degrees);
    free(dests);
    if (st == HINT_SUCCESS)
        st = hint_graph_neighbors_count(s->graph, &s->indeg, &s->outdeg);
    if (st != HINT_SUCCESS)
        return st;
    int *dst = malloc(((size_t)s->outdeg + 1) * sizeof *dst);
    s->sources = malloc(((size_t)s->indeg + 1) * sizeof *s->sources);
    s->rcounts = malloc(((size_t)s->indeg + 1) * sizeof *s->rcounts);
    s->rdispls = malloc(((size_t)s->indeg + 1) * sizeof *s->rdispls);
    if (!dst || !s->sources || !s->rcounts || !s->rdispls) {
        free(dst);
        return HINT_ERR_NOMEM;
    }
    st = hint_graph_neighbors(s->graph, s->indeg, s->sources, s->outdeg, dst);
    free(dst);
    s->halo_len = 0;
    for (int i = 0; i < s->indeg; i++) {
        int r = s->sources[i];
        s->rcounts[i] = (size_t)((row_lo(s->m.n, s->P, r + 1) - row_lo(s->m.n, s->P, r)) * s->k);
        s->rdispls[i] = s->halo_len;
        s->halo_len += s->rcounts[i];
    }
    return st;
}

/* Where each non-zero finds its X row: my block, or an in-neighbour's block in the halo. */
static int map_columns(struct spmm *s)
{
    long *base = malloc((size_t)s->P * sizeof *base);
    s->where = malloc(((size_t)s->a.nnz + 1) * sizeof *s->where);
    if (!base || !s->where) {
        free(base);
        return HINT_ERR_NOMEM;
    }
    for (int i = 0; i < s->indeg; i++)
        base[s->sources[i]] = (long)s->rdispls[i];
    for (long e = 0; e < s->a.nnz; e++) {
        long j = s->a.col[e];
        int r = owner_of(s->m.n, s->P, j);
        long off = (j - row_lo(s->m.n, s->P, r)) * s->k;
        s->where[e] = r == s->rank ? -1 - off : base[r] + off;
    }
    free(base);
    return HINT_SUCCESS;
}

static int setup(struct spmm *s)
{
    s->m = matrix_of(&s->o);
    s->k = s->o.k;
    s->lo = row_lo(s->m.n, s->P, s->rank);
    s->hi = row_lo(s->m.n, s->P, s->rank + 1);
    int st = csr_generate(&s->m, s->lo, s->hi, &s->a);
    if (st == HINT_SUCCESS)
        st = build_graph(s);
    if (st == HINT_SUCCESS)
        st = map_columns(s);
    if (st != HINT_SUCCESS)
        return st;
    size_t mine = (size_t)((s->hi - s->lo) * s->k) + 1;
    s->x = comm_alloc(mine * sizeof(double));
    s->xnext = comm_alloc(mine * sizeof(double));
    s->x0 = malloc(mine * sizeof(double));
    s->halo = comm_alloc((s->halo_len + 1) * sizeof(double));
    if (!s->x || !s->xnext || !s->x0 || !s->halo)
        return HINT_ERR_NOMEM;
    for (long i = s->lo; i < s->hi; i++)
        for (long c = 0; c < s->k; c++)
            s->x0[(i - s->lo) * s->k + c] = s->x[(i - s->lo) * s->k + c] = x0_of(s->m.seed, i, c);
    return HINT_SUCCESS;
}

static void teardown(struct spmm *s)
{
    csr_free(&s->a);
    free(s->m.mark);
    free(s->where);
    free(s->sources);
    free(s->rcounts);
    free(s->rdispls);
    comm_free(s->x);
    comm_free(s->xnext);
    free(s->x0);
    comm_free(s->halo);
    if (s->graph != HINT_GROUP_NULL)
        hint_group_free(&s->graph);
}

/* out = A x + x0 for rows of a, X rows found through where (or x's own numbering when where is
   NULL: the serial product, x being the whole X) */
static void multiply(const struct csr *a, const long *where, const double *x, const double *halo,
                     const double *x0, long k, double *out)
{
    for (long i = 0; i < a->rows; i++) {
        double *o = out + i * k;
        memcpy(o, x0 + i * k, (size_t)k * sizeof *o);
        for (long e = a->ptr[i]; e < a->ptr[i + 1]; e++) {
            const double *xr = where == NULL ? x + a->col[e] * k
                               : where[e] < 0 ? x + (-1 - where[e])
                                              : halo + where[e];
            for (long c = 0; c < k; c++)
                o[c] += a->val[e] * xr[c];
        }
    }
}

/* The halo offset of the first non-zero that reads the halo, or -1 when none does. */
static long first_halo_use(const struct spmm *s)
{
    for (long e = 0; e < s->a.nnz; e++)
        if (s->where[e] >= 0)
            return s->where[e];
    return -1;
}

/* One iteration; t[0] the whole iteration, t[1] its exchange. */
static int iterate(struct spmm *s, int corrupt, double t[2])
{
    double t0 = hint_wtime();
    int st = hint_neighbor_allgatherv(s->x, (size_t)((s->hi - s->lo) * s->k), HINT_DOUBLE, s->halo, s->rcounts,
                                      s->rdispls, HINT_DOUBLE, s->graph);
    double t1 = hint_wtime();
    if (st != HINT_SUCCESS)
        return st;
    long at = corrupt ? first_halo_use(s) : -1;
    if (at >= 0)
        s->halo[at] += 1.0;
    multiply(&s->a, s->where, s->x, s->halo, s->x0, s->k, s->xnext);
    double *swap = s->x;
    s->x = s->xnext;
    s->xnext = swap;
    t[0] = hint_wtime() - t0;
    t[1] = t1 - t0;
    return HINT_SUCCESS;
}

/* The same iterations over the whole matrix on this rank; the largest relative difference on
   my rows, or -1 when there is no memory for it. */
static double serial_check(const struct spmm *s, long *wrong)
{
    long n = s->m.n, k = s->k;
    struct csr all;
    double *x = malloc((size_t)(n * k) * sizeof *x), *next = malloc((size_t)(n * k) * sizeof *next);
    double *x0 = malloc((size_t)(n * k) * sizeof *x0);
    int st = x && next && x0 ? csr_generate(&s->m, 0, n, &all) : HINT_ERR_NOMEM;
    double worst = -1;
    if (st == HINT_SUCCESS) {
        for (long i = 0; i < n * k; i++)
            x[i] = x0[i] = x0_of(s->m.seed, i / k, i % k);
        for (long it = 0; it < s->o.iters; it++) {
            multiply(&all, NULL, x, NULL, x0, k, next);
            double *swap = x;
            x = next;
            next = swap;
        }
        worst = 0;
        *wrong = 0;
        for (long i = s->lo * k; i < s->hi * k; i++) {
            double d = fabs(s->x[i - s->lo * k] - x[i]) / fmax(1.0, fabs(x[i]));
            *wrong += d > TOLERANCE;
            worst = fmax(worst, d);
        }
        csr_free(&all);
    }
    free(x);
    free(next);
    free(x0);
    return worst;
}

static void describe(const struct spmm *s)
{
    long nnz = s->a.nnz, total = 0;
    int deg[4] = {s->indeg, -s->indeg, s->outdeg, -s->outdeg}, ext[4];
    hint_allreduce(&nnz, &total, 1, HINT_LONG, HINT_SUM, HINT_WORLD);
    hint_allreduce(deg, ext, 4, HINT_INT, HINT_MAX, HINT_WORLD);
    int edges = 0;
    hint_allreduce(&s->indeg, &edges, 1, HINT_INT, HINT_SUM, HINT_WORLD);
    if (s->rank != 0)
        return;
    long rmin = s->m.n / s->P, rmax = rmin + (s->m.n % s->P != 0);
    printf("spmm: matrix %s (%s), %ld x %ld, %ld non-zeros (generated, seed %ld); X is %ld x %ld doubles\n",
           s->o.matrix, kind_names[s->m.kind], s->m.n, s->m.n, total, s->o.seed, s->m.n, s->k);
    printf("spmm: %d ranks, %ld-%ld rows each; graph (hint_graph_create): %d edges, in-degree %d-%d, "
           "out-degree %d-%d\n",
           s->P, rmin, rmax, edges, -ext[1], ext[0], -ext[3], ext[2]);
}

/* iterate() as timed_steps calls it. */
static int timed_step(void *ctx, int corrupt, double t[2]) { return iterate(ctx, corrupt, t); }

/* Everything after set-up; returns the exit status. */
static int run(struct spmm *s)
{
    describe(s);
    int corrupt = s->o.corrupt && corrupting_rank("spmm", first_halo_use(s) >= 0, s->rank) == s->rank;
    double total = 0, exchange = 0;
    int code = timed_steps("spmm", OP, s->o.algorithm, s->o.iters, corrupt, s->rank, s->P, timed_step, s,
                           &total, &exchange);
    if (code != 0)
        return code;
    const char *ran = "?";
    hint_coll_last(OP, &ran);
    if (s->rank == 0) {
        printf("spmm: algorithm %s (ran: %s)\n", s->o.algorithm, ran);
        printf("spmm: %ld iterations: time per iteration %.1f us (halo exchange %.1f us), median over "
               "iterations of the slowest rank\n",
               s->o.iters, total * 1e6, exchange * 1e6);
    }
    if (!s->o.check)
        return 0;
    long wrong = 0;
    double worst = serial_check(s, &wrong);
    return agree_on_check("spmm", s->rank, worst, wrong, TOLERANCE, "values", "product");
}

/* The parts as run_example calls them. */
static int setup_part(void *ctx) { return setup(ctx); }
static int run_part(void *ctx) { return run(ctx); }
static void teardown_part(void *ctx) { teardown(ctx); }

int main(int argc, char **argv)
{
    struct spmm s = {.graph = HINT_GROUP_NULL};
    char err[200] = "";
    int bad = parse_options(argc, argv, &s.o, err, sizeof err);
    int st = hint_init(&argc, &argv);
    if (st != HINT_SUCCESS) {
        fprintf(stderr, "spmm: hint_init: %s\n", hint_strerror(st));
        return 1;
    }
    hint_group_rank(HINT_WORLD, &s.rank);
    hint_group_size(HINT_WORLD, &s.P);
    if (bad || s.o.help) {
        if (s.rank == 0 && bad)
            fprintf(stderr, "spmm: %s\n", err);
        if (s.rank == 0 && s.o.help)
            usage(stdout);
        hint_finalize();
        return bad ? EXIT_USAGE : 0;
    }
    static const struct example_parts parts = {setup_part, run_part, teardown_part};
    return run_example("spmm", OP, s.o.algorithm, s.rank, &parts, &s);
}
