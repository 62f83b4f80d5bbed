/*
 * examples/fft3d.c — a distributed complex-to-complex 3-D FFT: local transforms with FFTW, the
 * global transposes through hint's alltoall(v). Forward then backward, checked against a serial
 * FFTW transform of the same input.
 *
 *   hintrun -n 4 build/examples/fft3d --n 64 --decomp pencil --transpose datatype --check
 *
 * The grid is N1 x N2 x N3 complex doubles, stored (i1, i2, i3) with i3 fastest on every rank at
 * every step; only which axes are whole and which are cut into blocks changes. The ranks form a
 * Pr x Pc grid (hint_dims_create, hint_cart_create); row groups (same first coordinate, Pc ranks)
 * and column groups (same second coordinate, Pr ranks) come from hint_group_split of the grid,
 * since hint has no cart_sub yet. The forward transform goes through three layouts:
 *
 *   Z: i1 cut over Pr, i2 cut over Pc, i3 whole      FFT along i3
 *      transpose in the row group:    i2 becomes whole, i3 cut over Pc
 *   Y: i1 cut over Pr, i2 whole, i3 cut over Pc      FFT along i2
 *      transpose in the column group: i1 becomes whole, i2 cut over Pr
 *   X: i1 whole, i2 cut over Pr, i3 cut over Pc      FFT along i1
 *
 * and the backward transform goes back. --decomp slab is the grid P x 1: the row groups are single
 * ranks, so there is one transpose (one alltoall) per direction; --decomp pencil is the grid
 * hint_dims_create gives (4 ranks: 2 x 2), two transposes per direction.
 *
 * Blocks are ceil(N / Q) long, as FFTW's own MPI transforms cut them, so a size that is not a
 * multiple of Q leaves the last blocks short or empty. A whole axis is stored padded to Q blocks
 * (positions past N are never transformed), which gives every block the same shape in memory.
 * The two ways to transpose (--transpose):
 *
 *   pack      copy each destination's block into a contiguous buffer, one hint_alltoallv with the
 *             exact counts (uneven blocks send only their data), copy each received block out;
 *   datatype  one hint_alltoall, no copies by the program: the send type is a subarray (one
 *             block of the destination's columns), the receive type a subarray (one block of the
 *             source's rows), each resized so that block p starts where p's type does; hint's
 *             copy-order algorithms copy straight from one layout to the other (HINT_COLL_STATS=1
 *             counts them). Every block has the same shape, so the padding of short blocks moves
 *             too: with one type per side, blocks whose shape differs per peer in two axes would
 *             need alltoallw, which hint does not have yet (issue 20).
 *
 * Not here: the variant that overlaps the next pencil's FFTs with the transpose needs nonblocking
 * collectives (hint_ialltoall(v)), which hint does not have yet (issue 20). Nothing here
 * pretends to overlap.
 *
 * The check (--check): rank 0 gathers the forward result and compares it with FFTW's serial 3-D
 * transform of the same input; every rank compares the backward result, divided by N1*N2*N3,
 * with its input. The forward result is often bit for bit the serial one (the same 1-D
 * transforms of the same numbers); the tolerance allows for plans that differ.
 *
 * Timing: one untimed forward+backward pair first (and the checked pair with --check), then
 * --iters pairs; for each the slowest rank's time is taken, and the median over pairs printed:
 * the whole pair, its transposes (packing and unpacking included) and its FFTs.
 *
 * The same source builds against Open MPI and MPICH as bench/fft3d's peers: with HINT_ON_MPI
 * defined, bench/mpi/hint_on_mpi.h provides the hint calls used here on top of MPI.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fftw3.h>

#ifdef HINT_ON_MPI
#include "bench/mpi/hint_on_mpi.h"
#else
#include "hint.h"
#endif

#define TOLERANCE 1e-9 /* relative max error allowed, forward and round trip */
#define MAX_SIDE 65536L
#define MAX_POINTS (1L << 30)

enum decomp { SLAB, PENCIL };
enum way { PACK, DATATYPE };

struct options {
    long n[3];
    enum decomp decomp;
    enum way way;
    long iters;
    int check, csv, help;
};

/* How a local array lies, per axis (i1, i2, i3, also the storage order): ext elements stored,
   global index of position 0, and n valid elements. */
struct layout {
    size_t ext[3];
    long lo[3], n[3];
};

/* One transpose between two layouts in one group: axis a goes from cut (blocks of ma) to whole,
   axis b from whole to cut (blocks of mb); the third axis keeps its state. */
struct transpose {
    hint_group g;
    int Q, q;
    int a, b, c;
    size_t ma, mb;
    long na_all, nb_all; /* the global sizes of axes a and b */
    const struct layout *in, *out;
    size_t *sc, *sd, *rc, *rd; /* pack: counts and displacements in complex elements */
    hint_type st, rt;          /* datatype: one block each side */
};

/* One FFT step: along one whole axis of a layout, on one of the two arrays. */
struct fft_step {
    int axis, array;
    fftw_plan fwd, bwd; /* NULL when this rank holds no data in this layout */
};

struct fft3d {
    struct options o;
    int P, rank, dims[2], coords[2];
    hint_group cart, row, col;
    size_t W[3];            /* stored size of each axis when whole */
    struct layout Z, Y, X;  /* the three layouts (see the top) */
    struct transpose tr[4]; /* row Z->Y, column Y->X, column X->Y, row Y->Z */
    struct fft_step fs[3];  /* along i3 on Z, i2 on Y, i1 on X */
    size_t elems;           /* complex elements of each array */
    fftw_complex *arr[2], *sbuf, *rbuf;
    double t_tr, t_fft; /* this rank's time in transposes and FFTs, summed */
};

/* ---- options ---- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: hintrun -n P fft3d [--n N | --n N1xN2xN3] [--decomp slab|pencil] [--transpose pack|datatype]\n"
            "                          [--iters K] [--check] [--csv]\n"
            "A complex-to-complex 3-D FFT of an N1 x N2 x N3 grid of doubles distributed over P ranks:\n"
            "FFTW along each axis, hint's alltoall(v) for the global transposes, forward then backward.\n"
            "  --n N, --n N1xN2xN3  grid size, each side 1..%ld, at most 2^30 points (default 64)\n"
            "  --decomp slab        P x 1 ranks: one transpose per direction\n"
            "  --decomp pencil      the 2-D grid hint_dims_create gives: two transposes (default)\n"
            "  --transpose pack     pack blocks by hand, hint_alltoallv with exact counts, unpack (default)\n"
            "  --transpose datatype one hint_alltoall with subarray types, no copies by the program\n"
            "  --iters K            timed forward+backward pairs after one warm-up, 0..100000 (default 5)\n"
            "  --check              compare the forward result with a serial FFTW transform on rank 0, and\n"
            "                       the backward one with the input; fail above %.0e relative error\n"
            "  --csv                also print one CSV line: lib,decomp,transpose,grid,P,PrxPc,iters,\n"
            "                       pair_us,transpose_us,fft_us,max_error (medians over pairs, slowest rank)\n"
            "Exit status: 0 done (and checked), 1 check failed or a call failed, 2 bad arguments.\n",
            MAX_SIDE, TOLERANCE);
}

/* A decimal in [min, max] ending at *end; 0 on success. */
static int parse_long(const char *s, long min, long max, long *out, char **end)
{
    errno = 0;
    if (*s < '0' || *s > '9')
        return -1;
    long v = strtol(s, end, 10);
    if (errno || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

static int parse_grid(const char *s, long n[3])
{
    char *end;
    if (parse_long(s, 1, MAX_SIDE, &n[0], &end))
        return -1;
    if (*end == '\0') {
        n[1] = n[2] = n[0];
    } else if (*end != 'x' || parse_long(end + 1, 1, MAX_SIDE, &n[1], &end) || *end != 'x' ||
               parse_long(end + 1, 1, MAX_SIDE, &n[2], &end) || *end != '\0') {
        return -1;
    }
    return n[0] * n[1] > MAX_POINTS / n[2] ? -1 : 0;
}

/* Fills o; on a bad argument writes a message to err and returns -1. */
static int parse_options(int argc, char **argv, struct options *o, char *err, size_t errlen)
{
    *o = (struct options){.n = {64, 64, 64}, .decomp = PENCIL, .way = PACK, .iters = 5};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            o->help = 1;
        } else if (!strcmp(a, "--check")) {
            o->check = 1;
        } else if (!strcmp(a, "--csv")) {
            o->csv = 1;
        } else if (!strcmp(a, "--n") || !strcmp(a, "--decomp") || !strcmp(a, "--transpose") ||
                   !strcmp(a, "--iters")) {
            if (!v) {
                snprintf(err, errlen, "%s needs a value", a);
                return -1;
            }
            i++;
            if (!strcmp(a, "--n") && parse_grid(v, o->n)) {
                snprintf(err, errlen, "--n '%s': want N or N1xN2xN3, each 1..%ld, at most 2^30 points", v,
                         MAX_SIDE);
                return -1;
            }
            if (!strcmp(a, "--decomp")) {
                if (strcmp(v, "slab") && strcmp(v, "pencil")) {
                    snprintf(err, errlen, "--decomp '%s': want slab or pencil", v);
                    return -1;
                }
                o->decomp = !strcmp(v, "slab") ? SLAB : PENCIL;
            }
            if (!strcmp(a, "--transpose")) {
                if (strcmp(v, "pack") && strcmp(v, "datatype")) {
                    snprintf(err, errlen, "--transpose '%s': want pack or datatype", v);
                    return -1;
                }
                o->way = !strcmp(v, "pack") ? PACK : DATATYPE;
            }
            if (!strcmp(a, "--iters") && (parse_long(v, 0, 100000, &o->iters, &end) || *end)) {
                snprintf(err, errlen, "--iters '%s': want a count 0..100000", v);
                return -1;
            }
        } else {
            snprintf(err, errlen, "unknown argument '%s' (try --help)", a);
            return -1;
        }
    }
    return 0;
}

/* ---- layouts ---- */

static size_t ceil_div(long n, int q) { return (size_t)((n + q - 1) / q); }

/* Valid length of block q of blocks of m over n elements (short or empty at the end). */
static long block_len(long n, size_t m, int q)
{
    long left = n - (long)m * q;
    return left < 0 ? 0 : left < (long)m ? left : (long)m;
}

/* Axis `ax` of L cut over Q ranks, this one being q; over one rank it is whole. */
static void cut_axis(struct layout *L, const struct fft3d *f, int ax, int Q, int q)
{
    long n = f->o.n[ax];
    if (Q == 1) {
        L->ext[ax] = f->W[ax], L->lo[ax] = 0, L->n[ax] = n;
        return;
    }
    size_t m = ceil_div(n, Q);
    L->ext[ax] = m, L->lo[ax] = (long)m * q, L->n[ax] = block_len(n, m, q);
}

static void whole_axis(struct layout *L, const struct fft3d *f, int ax) { cut_axis(L, f, ax, 1, 0); }

/* The X layout (forward output) of the rank at grid coordinates c. */
static void layout_x(struct layout *L, const struct fft3d *f, const int c[2])
{
    whole_axis(L, f, 0);
    cut_axis(L, f, 1, f->dims[0], c[0]);
    cut_axis(L, f, 2, f->dims[1], c[1]);
}

static void make_layouts(struct fft3d *f)
{
    int Pr = f->dims[0], Pc = f->dims[1];
    size_t w2r = Pr * ceil_div(f->o.n[1], Pr), w2c = Pc * ceil_div(f->o.n[1], Pc);
    f->W[0] = Pr * ceil_div(f->o.n[0], Pr);
    f->W[1] = w2r > w2c ? w2r : w2c; /* i2 is cut over Pc (Z) and over Pr (X) */
    f->W[2] = Pc * ceil_div(f->o.n[2], Pc);
    cut_axis(&f->Z, f, 0, Pr, f->coords[0]);
    cut_axis(&f->Z, f, 1, Pc, f->coords[1]);
    whole_axis(&f->Z, f, 2);
    cut_axis(&f->Y, f, 0, Pr, f->coords[0]);
    whole_axis(&f->Y, f, 1);
    cut_axis(&f->Y, f, 2, Pc, f->coords[1]);
    layout_x(&f->X, f, f->coords);
    f->elems = 0;
    const struct layout *all[] = {&f->Z, &f->Y, &f->X};
    for (int i = 0; i < 3; i++) {
        size_t e = all[i]->ext[0] * all[i]->ext[1] * all[i]->ext[2];
        f->elems = e > f->elems ? e : f->elems;
    }
}

static size_t stride(const struct layout *L, int ax) { return ax == 2 ? 1 : ax == 1 ? L->ext[2] : L->ext[1] * L->ext[2]; }

/* Copies the box start + [0, count) of arr (extents ext) to or from the contiguous buf, in storage
   order. */
static void copy_box(fftw_complex *arr, const size_t ext[3], const size_t start[3], const long count[3],
                     fftw_complex *buf, int into_buf)
{
    if (count[0] <= 0 || count[1] <= 0 || count[2] <= 0)
        return;
    size_t run = (size_t)count[2] * sizeof(fftw_complex);
    for (long i = 0; i < count[0]; i++)
        for (long j = 0; j < count[1]; j++, buf += count[2]) {
            fftw_complex *row = arr + ((start[0] + (size_t)i) * ext[1] + start[1] + (size_t)j) * ext[2] + start[2];
            memcpy(into_buf ? (void *)buf : (void *)row, into_buf ? (void *)row : (void *)buf, run);
        }
}

/* ---- transposes ---- */

static int setup_transpose(struct transpose *t, hint_group g, int a, int b, const struct layout *in,
                           const struct layout *out, const struct fft3d *f)
{
    *t = (struct transpose){.g = g, .a = a, .b = b, .c = 3 - a - b, .in = in, .out = out,
                            .st = HINT_TYPE_NULL, .rt = HINT_TYPE_NULL};
    if (g == HINT_GROUP_NULL) /* a group of one: nothing to move, the layouts are the same */
        return HINT_SUCCESS;
    hint_group_size(g, &t->Q);
    hint_group_rank(g, &t->q);
    t->ma = in->ext[a], t->mb = out->ext[b];
    t->na_all = f->o.n[a], t->nb_all = f->o.n[b];
    t->sc = calloc(4 * (size_t)t->Q, sizeof(size_t));
    if (!t->sc)
        return HINT_ERR_NOMEM;
    t->sd = t->sc + t->Q, t->rc = t->sd + t->Q, t->rd = t->rc + t->Q;
    long nc = in->n[t->c];
    for (int p = 0; p < t->Q; p++) {
        t->sc[p] = (size_t)(in->n[a] * block_len(t->nb_all, t->mb, p) * nc);
        t->rc[p] = (size_t)(block_len(t->na_all, t->ma, p) * out->n[b] * nc);
        if (p > 0) {
            t->sd[p] = t->sd[p - 1] + t->sc[p - 1];
            t->rd[p] = t->rd[p - 1] + t->rc[p - 1];
        }
    }
    if (f->o.way != DATATYPE)
        return HINT_SUCCESS;
    /* block p of the send side: all of axes a and c, the p-th block of mb along b; the next
       block starts mb positions of b further, so that is the type's extent */
    size_t zero[3] = {0, 0, 0}, sub[3];
    sub[a] = t->ma, sub[b] = t->mb, sub[t->c] = in->ext[t->c];
    hint_type s, r;
    int st = hint_type_subarray(3, in->ext, sub, zero, HINT_ORDER_C, HINT_COMPLEX_DOUBLE, &s);
    if (st == HINT_SUCCESS)
        st = hint_type_resized(s, 0, (ptrdiff_t)(t->mb * stride(in, b) * sizeof(fftw_complex)), &t->st);
    if (st == HINT_SUCCESS)
        st = hint_type_commit(&t->st);
    hint_type_free(&s);
    /* block q of the receive side: the q-th block of ma along a, all of b and c */
    if (st == HINT_SUCCESS)
        st = hint_type_subarray(3, out->ext, sub, zero, HINT_ORDER_C, HINT_COMPLEX_DOUBLE, &r);
    if (st == HINT_SUCCESS) {
        st = hint_type_resized(r, 0, (ptrdiff_t)(t->ma * stride(out, a) * sizeof(fftw_complex)), &t->rt);
        hint_type_free(&r);
    }
    if (st == HINT_SUCCESS)
        st = hint_type_commit(&t->rt);
    return st;
}

static void free_transpose(struct transpose *t)
{
    free(t->sc);
    if (t->st != HINT_TYPE_NULL)
        hint_type_free(&t->st);
    if (t->rt != HINT_TYPE_NULL)
        hint_type_free(&t->rt);
}

static int transpose_packed(const struct transpose *t, fftw_complex *in, fftw_complex *out, fftw_complex *sbuf,
                            fftw_complex *rbuf)
{
    int a = t->a, b = t->b, c = t->c;
    for (int p = 0; p < t->Q; p++) {
        size_t start[3];
        long count[3];
        start[a] = 0, start[b] = (size_t)p * t->mb, start[c] = 0;
        count[a] = t->in->n[a], count[b] = block_len(t->nb_all, t->mb, p), count[c] = t->in->n[c];
        copy_box(in, t->in->ext, start, count, sbuf + t->sd[p], 1);
    }
    int st = hint_alltoallv(sbuf, t->sc, t->sd, HINT_COMPLEX_DOUBLE, rbuf, t->rc, t->rd, HINT_COMPLEX_DOUBLE, t->g);
    for (int q = 0; q < t->Q && st == HINT_SUCCESS; q++) {
        size_t start[3];
        long count[3];
        start[a] = (size_t)q * t->ma, start[b] = 0, start[c] = 0;
        count[a] = block_len(t->na_all, t->ma, q), count[b] = t->out->n[b], count[c] = t->out->n[c];
        copy_box(out, t->out->ext, start, count, rbuf + t->rd[q], 0);
    }
    return st;
}

/* Runs transpose k from one array to the other; the time goes to t_tr. */
static int run_transpose(struct fft3d *f, int k, int from)
{
    const struct transpose *t = &f->tr[k];
    if (t->g == HINT_GROUP_NULL)
        return HINT_SUCCESS;
    double t0 = hint_wtime();
    int st = f->o.way == PACK ? transpose_packed(t, f->arr[from], f->arr[!from], f->sbuf, f->rbuf)
                              : hint_alltoall(f->arr[from], 1, t->st, f->arr[!from], 1, t->rt, t->g);
    f->t_tr += hint_wtime() - t0;
    return st;
}

/* ---- local FFTs ---- */

static fftw_plan plan_axis(const struct layout *L, int axis, fftw_complex *data, int sign)
{
    fftw_iodim dim = {.n = (int)L->n[axis], .is = (int)stride(L, axis), .os = (int)stride(L, axis)};
    fftw_iodim many[2];
    int k = 0;
    for (int ax = 0; ax < 3; ax++)
        if (ax != axis) {
            if (L->n[ax] == 0)
                return NULL; /* this rank holds nothing here */
            many[k++] = (fftw_iodim){.n = (int)L->n[ax], .is = (int)stride(L, ax), .os = (int)stride(L, ax)};
        }
    return fftw_plan_guru_dft(1, &dim, 2, many, data, data, sign, FFTW_ESTIMATE);
}

static void run_fft(struct fft3d *f, int k, int sign)
{
    double t0 = hint_wtime();
    fftw_plan p = sign == FFTW_FORWARD ? f->fs[k].fwd : f->fs[k].bwd;
    if (p)
        fftw_execute(p);
    f->t_fft += hint_wtime() - t0;
}

static int forward(struct fft3d *f)
{
    int st;
    run_fft(f, 0, FFTW_FORWARD);
    if ((st = run_transpose(f, 0, f->fs[0].array)) != HINT_SUCCESS)
        return st;
    run_fft(f, 1, FFTW_FORWARD);
    if ((st = run_transpose(f, 1, f->fs[1].array)) != HINT_SUCCESS)
        return st;
    run_fft(f, 2, FFTW_FORWARD);
    return HINT_SUCCESS;
}

static int backward(struct fft3d *f)
{
    int st;
    run_fft(f, 2, FFTW_BACKWARD);
    if ((st = run_transpose(f, 2, f->fs[2].array)) != HINT_SUCCESS)
        return st;
    run_fft(f, 1, FFTW_BACKWARD);
    if ((st = run_transpose(f, 3, f->fs[1].array)) != HINT_SUCCESS)
        return st;
    run_fft(f, 0, FFTW_BACKWARD);
    return HINT_SUCCESS;
}

/* ---- set-up ---- */

/* The input: a fixed pseudo-random value of each point's global index. */
static void input_value(long i1, long i2, long i3, const long n[3], fftw_complex v)
{
    uint64_t x = (uint64_t)((i1 * n[1] + i2) * n[2] + i3) + 0x9e3779b97f4a7c15u;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
    x ^= x >> 31;
    v[0] = (double)(x >> 40) / (double)(1u << 24) - 0.5;
    v[1] = (double)(x & 0xffffff) / (double)(1u << 24) - 0.5;
}

static void fill_input(struct fft3d *f)
{
    const struct layout *L = &f->Z;
    fftw_complex *a = f->arr[0];
    for (long i = 0; i < L->n[0]; i++)
        for (long j = 0; j < L->n[1]; j++)
            for (long k = 0; k < L->n[2]; k++)
                input_value(L->lo[0] + i, L->lo[1] + j, L->lo[2] + k, f->o.n,
                            a[((size_t)i * L->ext[1] + (size_t)j) * L->ext[2] + (size_t)k]);
}

static int make_groups(struct fft3d *f)
{
    f->dims[0] = f->dims[1] = 0;
    if (f->o.decomp == SLAB)
        f->dims[0] = f->P, f->dims[1] = 1;
    int periods[2] = {0, 0};
    int st = hint_dims_create(f->P, 2, f->dims);
    if (st == HINT_SUCCESS)
        st = hint_cart_create(HINT_WORLD, 2, f->dims, periods, 0, &f->cart);
    if (st == HINT_SUCCESS)
        st = hint_cart_coords(f->cart, f->rank, 2, f->coords);
    /* row group: my first coordinate, ranked by the second; column group the other way */
    if (st == HINT_SUCCESS)
        st = hint_group_split(f->cart, f->coords[0], f->coords[1], &f->row);
    if (st == HINT_SUCCESS)
        st = hint_group_split(f->cart, f->coords[1], f->coords[0], &f->col);
    return st;
}

static int setup(struct fft3d *f)
{
    int st = make_groups(f);
    if (st != HINT_SUCCESS)
        return st;
    make_layouts(f);
    hint_group row = f->dims[1] > 1 ? f->row : HINT_GROUP_NULL, col = f->dims[0] > 1 ? f->col : HINT_GROUP_NULL;
    if ((st = setup_transpose(&f->tr[0], row, 1, 2, &f->Z, &f->Y, f)) != HINT_SUCCESS ||
        (st = setup_transpose(&f->tr[1], col, 0, 1, &f->Y, &f->X, f)) != HINT_SUCCESS ||
        (st = setup_transpose(&f->tr[2], col, 1, 0, &f->X, &f->Y, f)) != HINT_SUCCESS ||
        (st = setup_transpose(&f->tr[3], row, 2, 1, &f->Y, &f->Z, f)) != HINT_SUCCESS)
        return st;
    size_t bytes = f->elems * sizeof(fftw_complex);
    for (int i = 0; i < 2; i++)
        if (!(f->arr[i] = fftw_malloc(bytes)))
            return HINT_ERR_NOMEM;
    if (f->o.way == PACK && (!(f->sbuf = fftw_malloc(bytes)) || !(f->rbuf = fftw_malloc(bytes))))
        return HINT_ERR_NOMEM;
    memset(f->arr[0], 0, bytes); /* padding moves with the datatype way: never uninitialised */
    memset(f->arr[1], 0, bytes);
    /* which array each layout's data is in: a transpose moves it to the other one */
    f->fs[0] = (struct fft_step){.axis = 2, .array = 0};
    f->fs[1] = (struct fft_step){.axis = 1, .array = f->tr[0].g != HINT_GROUP_NULL};
    f->fs[2] = (struct fft_step){.axis = 0, .array = f->fs[1].array ^ (f->tr[1].g != HINT_GROUP_NULL)};
    const struct layout *L[3] = {&f->Z, &f->Y, &f->X};
    for (int k = 0; k < 3; k++) {
        f->fs[k].fwd = plan_axis(L[k], f->fs[k].axis, f->arr[f->fs[k].array], FFTW_FORWARD);
        f->fs[k].bwd = plan_axis(L[k], f->fs[k].axis, f->arr[f->fs[k].array], FFTW_BACKWARD);
        long held = L[k]->n[0] * L[k]->n[1] * L[k]->n[2];
        if (held > 0 && (!f->fs[k].fwd || !f->fs[k].bwd)) {
            fprintf(stderr, "fft3d: rank %d: FFTW could not plan the transform along axis %d\n", f->rank,
                    f->fs[k].axis + 1);
            return HINT_ERR_INTERNAL;
        }
    }
    return HINT_SUCCESS;
}

static void teardown(struct fft3d *f)
{
    for (int k = 0; k < 3; k++) {
        if (f->fs[k].fwd)
            fftw_destroy_plan(f->fs[k].fwd);
        if (f->fs[k].bwd)
            fftw_destroy_plan(f->fs[k].bwd);
    }
    for (int k = 0; k < 4; k++)
        free_transpose(&f->tr[k]);
    fftw_free(f->arr[0]);
    fftw_free(f->arr[1]);
    fftw_free(f->sbuf);
    fftw_free(f->rbuf);
    fftw_cleanup();
    hint_group *g[] = {&f->row, &f->col, &f->cart};
    for (int i = 0; i < 3; i++)
        if (*g[i] != HINT_GROUP_NULL)
            hint_group_free(g[i]);
}

/* ---- the check ---- */

/* Rank 0: the serial FFTW transform of the whole input, compared with every rank's X block
   (gathered); returns max |y - ref| / max |ref|, or -1 when it cannot run. Others return 0. */
static double check_forward(struct fft3d *f, int *st)
{
    const struct layout *X = &f->X;
    fftw_complex *arr = f->arr[f->fs[2].array];
    long held = X->n[0] * X->n[1] * X->n[2];
    size_t zero[3] = {0, 0, 0}, total = (size_t)(f->o.n[0] * f->o.n[1] * f->o.n[2]);
    fftw_complex *mine = fftw_malloc((size_t)(held > 0 ? held : 1) * sizeof(fftw_complex));
    size_t *counts = calloc(2 * (size_t)f->P, sizeof(size_t)), *displs = counts ? counts + f->P : NULL;
    fftw_complex *all = NULL, *ref = NULL;
    if (f->rank == 0) {
        all = fftw_malloc(total * sizeof(fftw_complex));
        ref = fftw_malloc(total * sizeof(fftw_complex));
    }
    int ok = mine && counts && (f->rank != 0 || (all && ref)), all_ok = 0;
    hint_allreduce(&ok, &all_ok, 1, HINT_INT, HINT_MIN, HINT_WORLD);
    double err = -1;
    *st = HINT_SUCCESS;
    if (!all_ok && f->rank == 0)
        fprintf(stderr, "fft3d: not enough memory for the check (rank 0 holds the whole grid twice)\n");
    if (all_ok) {
        copy_box(arr, X->ext, zero, X->n, mine, 1);
        struct layout Lr[1];
        for (int r = 0; r < f->P; r++) {
            int c[2] = {r / f->dims[1], r % f->dims[1]}; /* the grid is row-major in world order */
            layout_x(Lr, f, c);
            counts[r] = (size_t)(Lr->n[0] * Lr->n[1] * Lr->n[2]);
            displs[r] = r ? displs[r - 1] + counts[r - 1] : 0;
        }
        *st = hint_gatherv(mine, (size_t)held, HINT_COMPLEX_DOUBLE, all, counts, displs, HINT_COMPLEX_DOUBLE, 0,
                           HINT_WORLD);
        err = 0;
    }
    if (all_ok && *st == HINT_SUCCESS && f->rank == 0) {
        const long *n = f->o.n;
        for (long i = 0; i < n[0]; i++)
            for (long j = 0; j < n[1]; j++)
                for (long k = 0; k < n[2]; k++)
                    input_value(i, j, k, n, ref[(i * n[1] + j) * n[2] + k]);
        fftw_plan p = fftw_plan_dft_3d((int)n[0], (int)n[1], (int)n[2], ref, ref, FFTW_FORWARD, FFTW_ESTIMATE);
        fftw_execute(p);
        fftw_destroy_plan(p);
        double maxref = 0, maxdiff = 0;
        struct layout Lr[1];
        fftw_complex *y = all;
        for (int r = 0; r < f->P; r++) {
            int c[2] = {r / f->dims[1], r % f->dims[1]};
            layout_x(Lr, f, c);
            for (long i = 0; i < Lr->n[0]; i++)
                for (long j = 0; j < Lr->n[1]; j++)
                    for (long k = 0; k < Lr->n[2]; k++, y++) {
                        double *v = ref[((Lr->lo[0] + i) * n[1] + Lr->lo[1] + j) * n[2] + Lr->lo[2] + k];
                        maxref = fmax(maxref, hypot(v[0], v[1]));
                        maxdiff = fmax(maxdiff, hypot((*y)[0] - v[0], (*y)[1] - v[1]));
                    }
        }
        err = maxdiff / (maxref > 0 ? maxref : 1);
    }
    fftw_free(mine);
    fftw_free(all);
    fftw_free(ref);
    free(counts);
    return err;
}

/* After backward (unnormalised): max |x' / N - x| / max |x| over all ranks, on every rank. */
static double check_roundtrip(struct fft3d *f)
{
    const struct layout *L = &f->Z;
    const fftw_complex *a = f->arr[0];
    double scale = 1.0 / ((double)f->o.n[0] * (double)f->o.n[1] * (double)f->o.n[2]);
    double m[2] = {0, 0}, all[2] = {0, 0}; /* max |x|, max diff */
    for (long i = 0; i < L->n[0]; i++)
        for (long j = 0; j < L->n[1]; j++)
            for (long k = 0; k < L->n[2]; k++) {
                fftw_complex x;
                input_value(L->lo[0] + i, L->lo[1] + j, L->lo[2] + k, f->o.n, x);
                const double *y = a[((size_t)i * L->ext[1] + (size_t)j) * L->ext[2] + (size_t)k];
                m[0] = fmax(m[0], hypot(x[0], x[1]));
                m[1] = fmax(m[1], hypot(y[0] * scale - x[0], y[1] * scale - x[1]));
            }
    hint_allreduce(m, all, 2, HINT_DOUBLE, HINT_MAX, HINT_WORLD);
    return all[1] / (all[0] > 0 ? all[0] : 1);
}

/* ---- timing ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, long n)
{
    if (n == 0)
        return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One forward+backward pair; the slowest rank's pair, transpose and FFT times in out[3]. */
static int timed_pair(struct fft3d *f, double out[3])
{
    f->t_tr = f->t_fft = 0;
    int st = hint_barrier(HINT_WORLD);
    double t0 = hint_wtime();
    if (st == HINT_SUCCESS)
        st = forward(f);
    if (st == HINT_SUCCESS)
        st = backward(f);
    double mine[3] = {hint_wtime() - t0, f->t_tr, f->t_fft};
    int st2 = hint_allreduce(mine, out, 3, HINT_DOUBLE, HINT_MAX, HINT_WORLD);
    return st != HINT_SUCCESS ? st : st2;
}

static const char *library_name(void)
{
#ifdef HINT_ON_MPI
    return hint_on_mpi_library();
#else
    return "hint " HINT_VERSION_STRING;
#endif
}

static const char *collective_algorithm(const struct fft3d *f)
{
    const char *alg = NULL;
    if (hint_coll_last(f->o.way == PACK ? "alltoallv" : "alltoall", &alg) != HINT_SUCCESS || !alg)
        return "-";
    return alg;
}

static void report(const struct fft3d *f, double fwd_err, double rt_err, double med[3])
{
    const char *way = f->o.way == PACK ? "pack" : "datatype";
    const long *n = f->o.n;
    printf("fft3d (%s): %ldx%ldx%ld complex doubles, %s %dx%d over %d ranks, transpose by %s (%s)\n",
           library_name(), n[0], n[1], n[2], f->o.decomp == SLAB ? "slab" : "pencil", f->dims[0], f->dims[1], f->P,
           way, f->o.way == PACK ? "pack, alltoallv, unpack" : "one alltoall with subarray types");
    if (f->o.check)
        printf("  check: forward vs serial FFTW max rel. error %.2e, forward+backward vs input %.2e "
               "(tolerance %.0e): %s\n",
               fwd_err, rt_err, TOLERANCE, fwd_err >= 0 && fwd_err <= TOLERANCE && rt_err <= TOLERANCE ? "OK" : "FAILED");
    if (f->o.iters > 0)
        printf("  forward+backward pair: %.3f ms (median of %ld, slowest rank): transposes %.3f ms, FFTs %.3f ms; "
               "last alltoall%s algorithm: %s\n",
               med[0] * 1e3, f->o.iters, med[1] * 1e3, med[2] * 1e3, f->o.way == PACK ? "v" : "",
               collective_algorithm(f));
    if (f->o.csv) {
        char err[32] = "-";
        if (f->o.check)
            snprintf(err, sizeof err, "%.3e", fmax(fwd_err, rt_err));
        printf("fft3d,%s,%s,%s,%ldx%ldx%ld,%d,%dx%d,%ld,%.1f,%.1f,%.1f,%s\n", library_name(),
               f->o.decomp == SLAB ? "slab" : "pencil", way, n[0], n[1], n[2], f->P, f->dims[0], f->dims[1],
               f->o.iters, med[0] * 1e6, med[1] * 1e6, med[2] * 1e6, err);
    }
}

/* Everything after set-up; returns the exit status. */
static int run(struct fft3d *f)
{
    double fwd_err = 0, rt_err = 0, t[3], med[3] = {0, 0, 0};
    int st = HINT_SUCCESS, failed = 0;
    if (f->o.check) {
        fill_input(f);
        st = forward(f);
        if (st == HINT_SUCCESS)
            fwd_err = check_forward(f, &st);
        if (st == HINT_SUCCESS)
            st = backward(f);
        if (st == HINT_SUCCESS)
            rt_err = check_roundtrip(f);
        hint_bcast(&fwd_err, 1, HINT_DOUBLE, 0, HINT_WORLD);
        failed = st != HINT_SUCCESS || fwd_err < 0 || fwd_err > TOLERANCE || rt_err > TOLERANCE;
    }
    double *times = calloc(3 * (size_t)(f->o.iters + 1), sizeof *times);
    if (!times)
        st = HINT_ERR_NOMEM;
    fill_input(f);
    if (st == HINT_SUCCESS && f->o.iters > 0)
        st = timed_pair(f, t); /* warm-up */
    for (long i = 0; i < f->o.iters && st == HINT_SUCCESS; i++) {
        fill_input(f); /* untimed: keeps the values from growing by N per pair */
        st = timed_pair(f, t);
        for (int k = 0; k < 3; k++)
            times[k * f->o.iters + i] = t[k];
    }
    for (int k = 0; k < 3 && st == HINT_SUCCESS; k++)
        med[k] = median(times + k * f->o.iters, f->o.iters);
    free(times);
    if (st != HINT_SUCCESS) {
        fprintf(stderr, "fft3d: rank %d: a collective failed: %s\n", f->rank, hint_strerror(st));
        return 1;
    }
    if (f->rank == 0) {
        report(f, fwd_err, rt_err, med);
        if (failed)
            fprintf(stderr, "fft3d: the check FAILED (max error above %.0e)\n", TOLERANCE);
    }
    return failed;
}

int main(int argc, char **argv)
{
    struct fft3d f = {.cart = HINT_GROUP_NULL, .row = HINT_GROUP_NULL, .col = HINT_GROUP_NULL};
    char err[200] = "";
    int bad = parse_options(argc, argv, &f.o, err, sizeof err);
    int st = hint_init(&argc, &argv);
    if (st != HINT_SUCCESS) {
        fprintf(stderr, "fft3d: hint_init: %s\n", hint_strerror(st));
        return 1;
    }
    hint_group_rank(HINT_WORLD, &f.rank);
    hint_group_size(HINT_WORLD, &f.P);
    if (bad || f.o.help) {
        if (f.rank == 0 && bad)
            fprintf(stderr, "fft3d: %s\n", err);
        if (f.rank == 0 && f.o.help)
            usage(stdout);
        hint_finalize();
        return bad ? 2 : 0;
    }
    int code = 1;
    st = setup(&f);
    int all = 0;
    hint_allreduce(&st, &all, 1, HINT_INT, HINT_MAX, HINT_WORLD);
    if (all != HINT_SUCCESS) {
        if (st != HINT_SUCCESS)
            fprintf(stderr, "fft3d: rank %d: set-up failed: %s\n", f.rank, hint_strerror(st));
    } else {
        code = run(&f);
    }
    teardown(&f);
    hint_finalize();
    return code;
}
