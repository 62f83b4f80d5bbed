/*
 * examples/stencil.c — the heat equation on a 2-D or 3-D grid, explicit (Jacobi) steps, the grid
 * cut into blocks over a cart (hint_cart_create with hint_dims_create's shape); each step's halo
 * exchange is one hint_neighbor_alltoall on the cart.
 *
 *   hintrun -n 4 build/examples/stencil --grid 512x512 --iters 50 --algorithm morton
 *
 * A step: u'(x) = u(x) + 0.1 * sum over the dimensions d of (u(x - e_d) + u(x + e_d) - 2 u(x)).
 * Periodic boundaries wrap; fixed ones hold 0 outside the grid (the cart's HINT_PROC_NULL
 * neighbours: their blocks are neither sent nor received, so the zero ghost cells stay).
 * The cart's neighbours are, per dimension, the rank at -1 then the rank at +1; block 2d of the
 * alltoall goes to the -1 neighbour (my low face, its high ghost layer) and block 2d+1 to the +1
 * neighbour. neighbor_alltoall moves one size of block, so every block is the largest face any
 * rank has (blocks differ when the grid's sides are not multiples of the cart's): faces are
 * packed into the front of their block.
 *
 * The check (on unless --no-check): every rank runs the same steps serially on the whole grid and
 * compares its block; any difference above 1e-12 fails the run on every rank. --corrupt adds 1
 * to one received halo value once, on the highest rank that receives one, to show that the check
 * catches a wrong exchange.
 */
#include <math.h>

#include "stencil_spmm_common.h"

#define OP "neighbor_alltoall"
#define TOLERANCE 1e-12
#define MAX_SIDE 65536L
#define MAX_POINTS (1L << 28)
#define RATE 0.1 /* below 1 / (2 * dims), so the explicit steps are stable */

struct options {
    const char *algorithm;
    int nd;      /* dimensions, 2 or 3 */
    long n[3];   /* grid sides; n[2] = 1 in 2-D */
    long iters, seed;
    int periodic, check, corrupt, help;
};

struct stencil {
    struct options o;
    int rank, P;
    hint_group cart;
    int dims[3], coords[3], nbr[6];
    long lo[3], len[3]; /* my block: global start and length per dimension (1 past nd) */
    long ext[3];        /* stored extents: len + 2 ghost cells in the grid's dimensions */
    size_t block;       /* doubles per alltoall block */
    double *u, *unext, *sbuf, *rbuf;
};

/* ---- options ---- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: hintrun -n P stencil [--dims 2|3] [--grid N | --grid NxM | --grid NxMxL] [--iters I]\n"
            "                            [--boundary periodic|fixed] [--seed S] [--algorithm NAME]\n"
            "                            [--no-check] [--corrupt]\n"
            "The heat equation, explicit steps, on a grid cut into blocks over the cart that\n"
            "hint_dims_create shapes for P ranks; the halos move with one hint_neighbor_alltoall per step.\n"
            "  --dims 2|3        grid dimensions (default 2; a --grid with 3 sides implies 3)\n"
            "  --grid N...       the grid's sides, each at least the cart's ranks along it, at most %ld,\n"
            "                    2^28 points (default 256 per side in 2-D, 64 in 3-D)\n"
            "  --iters I         steps, 1..100000 (default 20)\n"
            "  --boundary B      periodic (default): the grid wraps; fixed: 0 outside the grid\n"
            "  --seed S          seed of the initial values, 0..2^31 (default 1)\n"
            "  --algorithm NAME  force " OP "'s algorithm: naive, morton, distance_halving,\n"
            "                    or auto (default: hint's selection); see docs/COLLECTIVES.md\n"
            "  --no-check        skip the serial computation (each rank redoes the whole grid)\n"
            "  --corrupt         add 1 to one received halo value once (the check must then fail)\n"
            "Prints the time per step (and its neighbor_alltoall alone): per step the slowest rank,\n"
            "then the median over steps.\n"
            "Exit status: 0 done and checked, 1 check or a call failed, 2 bad arguments,\n"
            "3 the forced algorithm cannot run this exchange (HINT_ERR_UNSUPPORTED; says UNSUPPORTED).\n",
            MAX_SIDE);
}

static int parse_grid(const char *s, struct options *o)
{
    char buf[64];
    if (strlen(s) >= sizeof buf)
        return -1;
    strcpy(buf, s);
    int sides = 0;
    for (char *tok = strtok(buf, "x"); tok != NULL; tok = strtok(NULL, "x")) {
        if (sides == 3 || parse_count(tok, 1, MAX_SIDE, &o->n[sides]))
            return -1;
        sides++;
    }
    if (sides == 0 || s[strlen(s) - 1] == 'x' || strstr(s, "xx") != NULL)
        return -1;
    return sides;
}

/* Fills o; on a bad argument writes a message to err and returns -1. */
static int parse_options(int argc, char **argv, struct options *o, char *err, size_t errlen)
{
    *o = (struct options){.algorithm = "auto", .nd = 2, .iters = 20, .seed = 1, .periodic = 1, .check = 1};
    int sides = 0;
    long nd = 0;
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
        int takes = !strcmp(a, "--dims") || !strcmp(a, "--grid") || !strcmp(a, "--iters") ||
                    !strcmp(a, "--boundary") || !strcmp(a, "--seed") || !strcmp(a, "--algorithm");
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
        if (!strcmp(a, "--dims"))
            bad = parse_count(v, 2, 3, &nd);
        else if (!strcmp(a, "--grid"))
            bad = (sides = parse_grid(v, o)) < 0;
        else if (!strcmp(a, "--iters"))
            bad = parse_count(v, 1, 100000, &o->iters);
        else if (!strcmp(a, "--seed"))
            bad = parse_count(v, 0, 1L << 31, &o->seed);
        else if (!strcmp(a, "--boundary"))
            bad = strcmp(v, "periodic") && strcmp(v, "fixed") ? 1 : (o->periodic = !strcmp(v, "periodic"), 0);
        else
            o->algorithm = v;
        if (bad) {
            snprintf(err, errlen, "%s '%s' is not valid (see --help)", a, v);
            return -1;
        }
    }
    o->nd = nd ? (int)nd : sides == 3 ? 3 : 2;
    if (sides == 0 || sides == 1) {
        long side = sides == 1 ? o->n[0] : o->nd == 2 ? 256 : 64;
        o->n[0] = o->n[1] = o->n[2] = side;
    } else if (sides != o->nd) {
        snprintf(err, errlen, "--grid has %d sides but --dims is %d", sides, o->nd);
        return -1;
    }
    if (o->nd == 2)
        o->n[2] = 1;
    if (o->n[0] * o->n[1] > MAX_POINTS / o->n[2]) {
        snprintf(err, errlen, "--grid: more than 2^28 points");
        return -1;
    }
    return 0;
}

/* ---- the grid ---- */

static double initial(uint64_t seed, long i, long j, long l)
{
    return unit_of(hash2(seed, (uint64_t)i, ((uint64_t)j << 32) ^ (uint64_t)l));
}

static size_t at(const long ext[3], long i, long j, long l)
{
    return ((size_t)i * (size_t)ext[1] + (size_t)j) * (size_t)ext[2] + (size_t)l;
}

/* One step over the interior of a stored array (ghost cells filled): the same expression, in the
   same order, for the distributed blocks and the serial grid, so both give the same bits. */
static void step(int nd, const long ext[3], const long len[3], const double *u, double *out)
{
    long g2 = nd == 3, stride[3] = {ext[1] * ext[2], ext[2], 1};
    for (long i = 1; i <= len[0]; i++)
        for (long j = 1; j <= len[1]; j++)
            for (long l = g2; l < len[2] + g2; l++) {
                size_t c = at(ext, i, j, l);
                double sum = 0;
                for (int d = 0; d < nd; d++)
                    sum += u[c - (size_t)stride[d]] + u[c + (size_t)stride[d]] - 2 * u[c];
                out[c] = u[c] + RATE * sum;
            }
}

/* first and length of part c of n cells cut in p (the first n mod p parts one longer) */
static void cut(long n, int p, int c, long *first, long *len)
{
    *first = c * (n / p) + (c < n % p ? c : n % p);
    *len = n / p + (c < n % p);
}

/* The face of dimension d on side s (0 low, 1 high) as a box: lo[], hi[] inclusive, in stored
   coordinates; ghost: the ghost layer beyond that face instead. */
static void face_box(const struct stencil *st, int d, int s, int ghost, long lo[3], long hi[3])
{
    for (int e = 0; e < 3; e++) {
        long g = e < st->o.nd;
        lo[e] = g;
        hi[e] = st->len[e] + g - 1;
    }
    long plane = s == 0 ? (ghost ? 0 : 1) : (ghost ? st->len[d] + 1 : st->len[d]);
    lo[d] = hi[d] = plane;
}

/* copies a box of u to buf (pack) or buf into it (!pack); returns the cells moved */
static size_t copy_box(const struct stencil *st, double *u, double *buf, const long lo[3], const long hi[3],
                       int pack)
{
    size_t k = 0;
    for (long i = lo[0]; i <= hi[0]; i++)
        for (long j = lo[1]; j <= hi[1]; j++)
            for (long l = lo[2]; l <= hi[2]; l++, k++) {
                double *c = &u[at(st->ext, i, j, l)];
                if (pack)
                    buf[k] = *c;
                else
                    *c = buf[k];
            }
    return k;
}

static void pack_faces(struct stencil *st)
{
    long lo[3], hi[3];
    for (int d = 0; d < st->o.nd; d++)
        for (int s = 0; s < 2; s++) {
            face_box(st, d, s, 0, lo, hi);
            copy_box(st, st->u, st->sbuf + (size_t)(2 * d + s) * st->block, lo, hi, 1);
        }
}

/* Block 2d + s came from the neighbour on side s of dimension d: it fills my ghost layer there.
   HINT_PROC_NULL neighbours sent nothing; their ghost cells keep the boundary's 0. */
static void unpack_ghosts(struct stencil *st)
{
    long lo[3], hi[3];
    for (int d = 0; d < st->o.nd; d++)
        for (int s = 0; s < 2; s++)
            if (st->nbr[2 * d + s] != HINT_PROC_NULL) {
                face_box(st, d, s, 1, lo, hi);
                copy_box(st, st->u, st->rbuf + (size_t)(2 * d + s) * st->block, lo, hi, 0);
            }
}

/* the largest face over all ranks: the longest part of each other dimension multiplied */
static size_t largest_face(const struct stencil *st)
{
    size_t best = 0;
    for (int d = 0; d < st->o.nd; d++) {
        size_t f = 1;
        for (int e = 0; e < st->o.nd; e++)
            if (e != d)
                f *= (size_t)((st->o.n[e] + st->dims[e] - 1) / st->dims[e]);
        best = f > best ? f : best;
    }
    return best;
}

static int setup(struct stencil *st)
{
    int nd = st->o.nd, periods[3];
    for (int d = 0; d < nd; d++)
        periods[d] = st->o.periodic;
    int rc = hint_cart_create(HINT_WORLD, nd, st->dims, periods, 0, &st->cart);
    if (rc == HINT_SUCCESS)
        rc = hint_cart_coords(st->cart, st->rank, nd, st->coords);
    int dests[6]; /* a cart's destinations are its sources */
    if (rc == HINT_SUCCESS)
        rc = hint_neighbors(st->cart, 2 * nd, st->nbr, 2 * nd, dests);
    if (rc != HINT_SUCCESS)
        return rc;
    size_t cells = 1;
    for (int d = 0; d < 3; d++) {
        if (d < nd) {
            cut(st->o.n[d], st->dims[d], st->coords[d], &st->lo[d], &st->len[d]);
            st->ext[d] = st->len[d] + 2;
        } else {
            st->lo[d] = 0;
            st->len[d] = st->ext[d] = 1;
        }
        cells *= (size_t)st->ext[d];
    }
    st->block = largest_face(st);
    st->u = calloc(cells, sizeof(double)); /* ghost cells 0: the fixed boundary's value */
    st->unext = calloc(cells, sizeof(double));
    st->sbuf = comm_alloc((size_t)(2 * nd) * st->block * sizeof(double));
    st->rbuf = comm_alloc((size_t)(2 * nd) * st->block * sizeof(double));
    if (!st->u || !st->unext || !st->sbuf || !st->rbuf)
        return HINT_ERR_NOMEM;
    memset(st->sbuf, 0, (size_t)(2 * nd) * st->block * sizeof(double)); /* padding sent as 0 */
    long g2 = nd == 3;
    for (long i = 0; i < st->len[0]; i++)
        for (long j = 0; j < st->len[1]; j++)
            for (long l = 0; l < st->len[2]; l++)
                st->u[at(st->ext, i + 1, j + 1, l + g2)] =
                    initial((uint64_t)st->o.seed, st->lo[0] + i, st->lo[1] + j, st->lo[2] + l);
    return HINT_SUCCESS;
}

static void teardown(struct stencil *st)
{
    free(st->u);
    free(st->unext);
    comm_free(st->sbuf);
    comm_free(st->rbuf);
    if (st->cart != HINT_GROUP_NULL)
        hint_group_free(&st->cart);
}

/* The first received cell that lands in a ghost layer, or NULL with no neighbour. */
static double *first_received(struct stencil *st)
{
    for (int b = 0; b < 2 * st->o.nd; b++)
        if (st->nbr[b] != HINT_PROC_NULL)
            return st->rbuf + (size_t)b * st->block;
    return NULL;
}

/* One step; t[0] the whole step, t[1] its alltoall. */
static int iterate(struct stencil *st, int corrupt, double t[2])
{
    double t0 = hint_wtime();
    pack_faces(st);
    double t1 = hint_wtime();
    int rc = hint_neighbor_alltoall(st->sbuf, st->block, HINT_DOUBLE, st->rbuf, st->block, HINT_DOUBLE, st->cart);
    double t2 = hint_wtime();
    if (rc != HINT_SUCCESS)
        return rc;
    double *victim = corrupt ? first_received(st) : NULL;
    if (victim != NULL)
        *victim += 1.0;
    unpack_ghosts(st);
    step(st->o.nd, st->ext, st->len, st->u, st->unext);
    double *swap = st->u;
    st->u = st->unext;
    st->unext = swap;
    t[0] = hint_wtime() - t0;
    t[1] = t2 - t1;
    return HINT_SUCCESS;
}

/* The serial grid's ghost cells: the opposite side's cells (periodic) or 0 (fixed). */
static void fill_serial_ghosts(int nd, const long ext[3], const long n[3], int periodic, double *u)
{
    for (long i = 0; i < ext[0]; i++)
        for (long j = 0; j < ext[1]; j++)
            for (long l = 0; l < ext[2]; l++) {
                long c[3] = {i, j, l}, src[3] = {i, j, l};
                int ghost = 0;
                for (int d = 0; d < nd; d++) {
                    if (c[d] == 0 || c[d] == n[d] + 1) {
                        ghost = 1;
                        src[d] = c[d] == 0 ? n[d] : 1;
                    }
                }
                if (ghost)
                    u[at(ext, i, j, l)] = periodic ? u[at(ext, src[0], src[1], src[2])] : 0;
            }
}

/* The same steps over the whole grid on this rank; the largest relative difference on my block
   (and the wrong cells in *wrong), or -1 when there is no memory for it. */
static double serial_check(const struct stencil *st, long *wrong)
{
    int nd = st->o.nd;
    long ext[3], g2 = nd == 3;
    size_t cells = 1;
    for (int d = 0; d < 3; d++) {
        ext[d] = d < nd ? st->o.n[d] + 2 : 1;
        cells *= (size_t)ext[d];
    }
    double *u = calloc(cells, sizeof *u), *next = calloc(cells, sizeof *next);
    if (!u || !next) {
        free(u);
        free(next);
        return -1;
    }
    for (long i = 0; i < st->o.n[0]; i++)
        for (long j = 0; j < st->o.n[1]; j++)
            for (long l = 0; l < st->o.n[2]; l++)
                u[at(ext, i + 1, j + 1, l + g2)] = initial((uint64_t)st->o.seed, i, j, l);
    for (long it = 0; it < st->o.iters; it++) {
        /* a corner ghost cell is never read, so filling it from a ghost in another dimension
           (periodic) is harmless */
        fill_serial_ghosts(nd, ext, st->o.n, st->o.periodic, u);
        step(nd, ext, st->o.n, u, next);
        double *swap = u;
        u = next;
        next = swap;
    }
    double worst = 0;
    *wrong = 0;
    for (long i = 0; i < st->len[0]; i++)
        for (long j = 0; j < st->len[1]; j++)
            for (long l = 0; l < st->len[2]; l++) {
                double want = u[at(ext, st->lo[0] + i + 1, st->lo[1] + j + 1, st->lo[2] + l + g2)];
                double got = st->u[at(st->ext, i + 1, j + 1, l + g2)];
                double d = fabs(got - want) / fmax(1.0, fabs(want));
                *wrong += d > TOLERANCE;
                worst = fmax(worst, d);
            }
    free(u);
    free(next);
    return worst;
}

static void describe(const struct stencil *st)
{
    if (st->rank != 0)
        return;
    const long *n = st->o.n;
    if (st->o.nd == 2)
        printf("stencil: heat equation on %ld x %ld, %s boundary; cart %d x %d over %d ranks; "
               "blocks of %zu doubles\n",
               n[0], n[1], st->o.periodic ? "periodic" : "fixed", st->dims[0], st->dims[1], st->P, st->block);
    else
        printf("stencil: heat equation on %ld x %ld x %ld, %s boundary; cart %d x %d x %d over %d ranks; "
               "blocks of %zu doubles\n",
               n[0], n[1], n[2], st->o.periodic ? "periodic" : "fixed", st->dims[0], st->dims[1], st->dims[2],
               st->P, st->block);
}

/* iterate() as timed_steps calls it. */
static int timed_step(void *ctx, int corrupt, double t[2]) { return iterate(ctx, corrupt, t); }

/* Everything after set-up; returns the exit status. */
static int run(struct stencil *st)
{
    describe(st);
    int corrupt = st->o.corrupt && corrupting_rank("stencil", first_received(st) != NULL, st->rank) == st->rank;
    double total = 0, exchange = 0;
    int code = timed_steps("stencil", OP, st->o.algorithm, st->o.iters, corrupt, st->rank, st->P, timed_step, st,
                           &total, &exchange);
    if (code != 0)
        return code;
    const char *ran = "?";
    hint_coll_last(OP, &ran);
    if (st->rank == 0) {
        printf("stencil: algorithm %s (ran: %s)\n", st->o.algorithm, ran);
        printf("stencil: %ld steps: time per step %.1f us (" OP " %.1f us), median over steps of the "
               "slowest rank\n",
               st->o.iters, total * 1e6, exchange * 1e6);
    }
    if (!st->o.check)
        return 0;
    long wrong = 0;
    double worst = serial_check(st, &wrong);
    return agree_on_check("stencil", st->rank, worst, wrong, TOLERANCE, "cells", "grid");
}

/* Each side must give every rank along it at least one cell. */
static int grid_fits(const struct stencil *st, char *err, size_t errlen)
{
    for (int d = 0; d < st->o.nd; d++)
        if (st->o.n[d] < st->dims[d]) {
            snprintf(err, errlen, "--grid: side %d has %ld cells for %d ranks along it", d, st->o.n[d],
                     st->dims[d]);
            return -1;
        }
    return 0;
}

/* The parts as run_example calls them. */
static int setup_part(void *ctx) { return setup(ctx); }
static int run_part(void *ctx) { return run(ctx); }
static void teardown_part(void *ctx) { teardown(ctx); }

int main(int argc, char **argv)
{
    struct stencil st = {.cart = HINT_GROUP_NULL};
    char err[200] = "";
    int bad = parse_options(argc, argv, &st.o, err, sizeof err);
    int rc = hint_init(&argc, &argv);
    if (rc != HINT_SUCCESS) {
        fprintf(stderr, "stencil: hint_init: %s\n", hint_strerror(rc));
        return 1;
    }
    hint_group_rank(HINT_WORLD, &st.rank);
    hint_group_size(HINT_WORLD, &st.P);
    if (!bad && !st.o.help)
        bad = hint_dims_create(st.P, st.o.nd, st.dims) != HINT_SUCCESS || grid_fits(&st, err, sizeof err);
    if (bad || st.o.help) {
        if (st.rank == 0 && bad)
            fprintf(stderr, "stencil: %s\n", err);
        if (st.rank == 0 && st.o.help)
            usage(stdout);
        finish_together();
        return bad ? EXIT_USAGE : 0;
    }
    static const struct example_parts parts = {setup_part, run_part, teardown_part};
    return run_example("stencil", OP, st.o.algorithm, st.rank, &parts, &st);
}
