/*
 * bench/bench.c — hint-bench: collective and point-to-point latency in the manner of the OSU
 * micro-benchmarks, written against bench/adapter.h so the same source measures hint, Open MPI
 * and MPICH.
 *
 *   hintrun -n P hint-bench OP [--sizes 8:1M] [--iters N] [--warmup N] [--algorithm NAME]
 *                              [--stype L] [--rtype L] [--flush-cache] [--vary-data] [--check] [--csv]
 *                              [--papi EVENTS] [--first-call]
 *
 * Timing: by default, as OSU, a barrier then N back-to-back calls timed together. With
 * --flush-cache, --vary-data or --check every call is timed alone after its preparation:
 * --flush-cache follows the Morton paper's Fig. 9 (evict the buffers from every cache, touch
 * them sequentially so they sit in this rank's cache only, barrier, time one call);
 * --vary-data rewrites the send buffers before every call; --check verifies every result.
 * Per size: the per-rank average latency, then its average, minimum and maximum over ranks.
 *
 * Layouts (alltoall and allgather only; bench/adapter.h defines them): --stype and --rtype set how
 * each send and receive block of B bytes lies in memory. contig (the default) is B bytes sent as
 * bytes; strided is B/8 doubles each followed by an 8-byte hole (a double resized to extent 16),
 * so blocks span 2B bytes and the library must handle a derived datatype. A strided layout needs
 * every size to be a multiple of 8: any other size is refused before anything runs, so a
 * comparison never has silent gaps. --check also verifies that the receive holes, filled with a
 * sentinel, were left alone. With a strided layout the output says so: the plain header names
 * both layouts, and every CSV line gets two more fields, stype and rtype (the CSV of contiguous
 * runs keeps its nine fields, which bench/compare parses).
 *
 * Output: OSU's layout, so OSU parsers and gnuplot read it as they read osu_alltoall -f: every
 * line that is not data starts with '#' (a description, then the column header), and a data line
 * holds the size, average, minimum and maximum latency over ranks, the iterations, one column per
 * --papi event, and last the algorithm the library chose (hint_coll_last; '-' for the MPI peers).
 * --papi counts PAPI events around the timed calls only (bench/counters.c) and prints each as
 * events per call summed over the ranks (total / iterations); where the machine exposes no
 * counters one line on stderr says so and the run goes on without them.
 *
 * First calls (--first-call): what a program pays before the steady state. init is the time from
 * just before bk_init (hint_init, MPI_Init) to just after the barrier that follows it, on each
 * rank (so it covers the launch skew between ranks and the first barrier); then, per size, after a
 * barrier, the first call at that size is timed alone before the warm-up and the timed calls. In a
 * fresh process run with one size (bench/compare --first-call does so) that is the operation's
 * very first call; with several sizes, the first size's is, and the later ones are the first call
 * at a new size. For barrier the first timed call follows the one init ends with.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/adapter.h"
#include "bench/counters.h"

enum bop {
    B_BARRIER, B_BCAST, B_REDUCE, B_ALLREDUCE, B_REDUCE_SCATTER_BLOCK, B_GATHER, B_SCATTER, B_ALLGATHER,
    B_ALLTOALL, B_GATHERV, B_SCATTERV, B_ALLGATHERV, B_ALLTOALLV, B_LATENCY, B_BANDWIDTH,
    B_NEIGHBOR_ALLGATHER, B_NEIGHBOR_ALLTOALL, B_NEIGHBOR_ALLGATHERV, B_NEIGHBOR_ALLTOALLV, B_NOPS
};
static const char *const op_names[B_NOPS] = {
    "barrier", "bcast", "reduce", "allreduce", "reduce_scatter_block", "gather", "scatter", "allgather",
    "alltoall", "gatherv", "scatterv", "allgatherv", "alltoallv", "latency", "bandwidth",
    "neighbor_allgather", "neighbor_alltoall", "neighbor_allgatherv", "neighbor_alltoallv"};

static int is_neighbor(int op) { return op >= B_NEIGHBOR_ALLGATHER && op <= B_NEIGHBOR_ALLTOALLV; }

/* The neighbourhood operations' topology (--graph): a 2-D periodic cart, or a random sparse graph
   in which every edge s -> d (s != d) is present with probability `density`, the same on every
   rank (one generator, one seed); in and out are this rank's lists in the library's order. */
static struct neighborhood {
    const char *spec; /* "cart" or "random:D" */
    double density;
    unsigned long seed;
    int nin, nout;
    int *in, *out;
} nbh = {"cart", 0, 1, 0, 0, NULL, NULL};

static const char *const layout_names[BK_NLAYOUTS] = {"contig", "strided"};

struct opts {
    int op;
    size_t sizes[64];
    int nsizes;
    long iters, warmup;
    const char *algorithm;
    int flush, vary, check, csv;
    enum bk_layout stype, rtype; /* BK_CONTIG for every operation but alltoall and allgather */
    int layout_given;            /* --stype or --rtype was on the command line */
    struct bc_set counters;      /* --papi events; counters.n == 0 without --papi */
    int counting;                /* every rank counts the events (bc_open succeeded everywhere) */
    int first_call;              /* --first-call: init and each size's first call timed alone */
};

struct bufs {
    unsigned char *s, *r;
    size_t sbytes, rbytes;
    size_t *counts, *displs;
};

static int rank, P;

static void usage(FILE *to)
{
    fprintf(to,
            "usage: hintrun -n P hint-bench OP [options]\n"
            "OP: barrier bcast reduce allreduce reduce_scatter_block gather scatter allgather alltoall\n"
            "    gatherv scatterv allgatherv alltoallv latency bandwidth\n"
            "    neighbor_allgather neighbor_alltoall neighbor_allgatherv neighbor_alltoallv\n"
            "  --sizes A:B | a,b,...  bytes per rank block (reductions: bytes of doubles); A:B = powers of\n"
            "                         two from A to B; K, M, G suffixes (default 8:1M; barrier: 0)\n"
            "  --iters N              timed calls per size (default: 1000 down to 20 as sizes grow)\n"
            "  --warmup N             untimed calls first (default: iters / 10, at least 2)\n"
            "  --algorithm NAME       force the library's algorithm for OP (hint: see hint_info)\n"
            "  --stype L, --rtype L   alltoall, allgather: layout of every send (receive) block of B bytes:\n"
            "                         contig = B bytes (default); strided = B/8 doubles, each followed by\n"
            "                         an 8-byte hole (a double resized to extent 16), B a multiple of 8\n"
            "  --flush-cache          evict and re-touch the buffers before each timed call (Morton paper, Fig. 9)\n"
            "  --vary-data            change the send data before every call\n"
            "  --check                verify the result of every call\n"
            "  --csv                  one CSV line per size: library,op,P,bytes,avg_us,min_us,max_us,iters,algorithm\n"
            "                         and, when a layout is strided, two more fields: stype,rtype; with --papi\n"
            "                         counting, one more field per event (events per call, all ranks)\n"
            "  --papi EVENTS          PAPI events, comma-separated (e.g. PAPI_TOT_INS,PAPI_L1_DCM), counted around\n"
            "                         the timed calls: one column per event, events per call summed over the ranks;\n"
            "                         where the machine exposes no counters a line says so and the run goes on\n"
            "  --first-call           also time init (before bk_init to after the barrier following it) and, per\n"
            "                         size, the first call at that size alone, before the warm-up: a '# init' line\n"
            "                         and three more columns (first-call avg, min, max us); with --csv, one more\n"
            "                         line per size with op OP:first and a line with op init (bytes 0, iters 1)\n"
            "  --graph cart|random:D  neighbor_*: a 2-D periodic cart with dims from dims_create(P, 2) (default),\n"
            "                         or a random sparse graph: every edge s -> d, s != d, with probability D\n"
            "  --seed N               --graph random: the graph's seed (default 1; every rank draws the same graph)\n"
            "  --help\n"
            "Output (without --csv) is OSU's layout: '#' before every line that is not data; a data line is\n"
            "  size, avg, min, max latency (us) over ranks, iterations, the --papi columns, algorithm\n"
            "latency: ping-pong between ranks 0 and 1 (half round trip); bandwidth: windows of 64 sends\n"
            "from rank 0 to rank 1, reported in MB/s in the avg/min/max columns.\n");
}

static size_t parse_size(const char *s, int *ok)
{
    char *end;
    double v = strtod(s, &end);
    size_t mult = 1;
    switch (toupper((unsigned char)*end)) {
    case 'K': mult = 1024; end++; break;
    case 'M': mult = 1024 * 1024; end++; break;
    case 'G': mult = 1024UL * 1024 * 1024; end++; break;
    default: break;
    }
    if (toupper((unsigned char)*end) == 'B')
        end++;
    if (end == s || *end != '\0' || v < 0)
        *ok = 0;
    return (size_t)(v * (double)mult);
}

static int parse_sizes(const char *arg, struct opts *o)
{
    int ok = 1;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", arg);
    char *colon = strchr(buf, ':');
    o->nsizes = 0;
    if (colon) {
        *colon = '\0';
        size_t a = parse_size(buf, &ok), b = parse_size(colon + 1, &ok);
        if (!ok || a > b)
            return -1;
        o->sizes[o->nsizes++] = a;
        for (size_t s = a ? a * 2 : 1; s <= b && o->nsizes < 64; s *= 2)
            o->sizes[o->nsizes++] = s;
        return 0;
    }
    for (char *tok = strtok(buf, ","); tok && o->nsizes < 64; tok = strtok(NULL, ","))
        o->sizes[o->nsizes++] = parse_size(tok, &ok);
    return ok && o->nsizes > 0 ? 0 : -1;
}

static int parse_layout(const char *name, enum bk_layout *out)
{
    for (int l = 0; l < BK_NLAYOUTS; l++)
        if (!strcmp(name, layout_names[l])) {
            *out = (enum bk_layout)l;
            return 0;
        }
    return -1;
}

/* Layouts make sense for alltoall and allgather only, and a block must hold whole elements. */
static int check_layouts(const struct opts *o)
{
    if (!o->layout_given)
        return 0;
    if (o->op != B_ALLTOALL && o->op != B_ALLGATHER) {
        if (rank == 0)
            fprintf(stderr, "hint-bench: --stype and --rtype apply to alltoall and allgather only, not to %s\n",
                    op_names[o->op]);
        return 2;
    }
    /* element sizes are 1 and 8, so the larger is a multiple of the other */
    size_t ss = bk_layout_size(o->stype), rs = bk_layout_size(o->rtype), unit = ss > rs ? ss : rs;
    for (int k = 0; k < o->nsizes; k++)
        if (o->sizes[k] % unit != 0) {
            if (rank == 0)
                fprintf(stderr,
                        "hint-bench: the strided layout holds whole doubles, so every size must be a multiple "
                        "of %zu bytes; --sizes has %zu\n",
                        unit, o->sizes[k]);
            return 2;
        }
    return 0;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
    memset(o, 0, sizeof *o);
    o->op = -1;
    o->iters = o->warmup = -1;
    parse_sizes("8:1M", o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            if (rank == 0)
                usage(stdout);
            return 1;
        } else if (!strcmp(a, "--sizes") && val) {
            if (parse_sizes(val, o) != 0) {
                fprintf(stderr, "hint-bench: bad --sizes '%s' (want A:B or a,b,... with K/M/G suffixes)\n", val);
                return 2;
            }
            i++;
        } else if (!strcmp(a, "--iters") && val) {
            o->iters = atol(val), i++;
        } else if (!strcmp(a, "--warmup") && val) {
            o->warmup = atol(val), i++;
        } else if (!strcmp(a, "--algorithm") && val) {
            o->algorithm = val, i++;
        } else if ((!strcmp(a, "--stype") || !strcmp(a, "--rtype")) && val) {
            if (parse_layout(val, a[2] == 's' ? &o->stype : &o->rtype) != 0) {
                if (rank == 0)
                    fprintf(stderr, "hint-bench: bad %s '%s' (want contig or strided)\n", a, val);
                return 2;
            }
            o->layout_given = 1, i++;
        } else if (!strcmp(a, "--graph") && val) {
            char *end = NULL;
            nbh.spec = val, i++;
            if (strncmp(val, "random:", 7) == 0)
                nbh.density = strtod(val + 7, &end);
            if (strcmp(val, "cart") != 0 && (end == NULL || *end != '\0' || nbh.density < 0 || nbh.density > 1)) {
                if (rank == 0)
                    fprintf(stderr, "hint-bench: bad --graph '%s' (want cart or random:D, 0 <= D <= 1)\n", val);
                return 2;
            }
        } else if (!strcmp(a, "--seed") && val) {
            nbh.seed = strtoul(val, NULL, 10), i++;
        } else if (!strcmp(a, "--flush-cache")) {
            o->flush = 1;
        } else if (!strcmp(a, "--vary-data")) {
            o->vary = 1;
        } else if (!strcmp(a, "--check")) {
            o->check = 1;
        } else if (!strcmp(a, "--csv")) {
            o->csv = 1;
        } else if (!strcmp(a, "--first-call")) {
            o->first_call = 1;
        } else if (!strcmp(a, "--papi") && val) {
            char why[BC_WHY_LEN];
            if (bc_parse(val, &o->counters, why) != 0) {
                if (rank == 0)
                    fprintf(stderr, "hint-bench: %s\n", why);
                return 2;
            }
            i++;
        } else if (a[0] != '-' && o->op < 0) {
            for (int k = 0; k < B_NOPS; k++)
                if (!strcmp(a, op_names[k]))
                    o->op = k;
            if (o->op < 0) {
                fprintf(stderr, "hint-bench: unknown operation '%s' (see --help)\n", a);
                return 2;
            }
        } else {
            fprintf(stderr, "hint-bench: unknown or incomplete option '%s' (see --help)\n", a);
            return 2;
        }
    }
    if (o->op < 0) {
        if (rank == 0)
            usage(stderr);
        return 2;
    }
    if (o->op == B_BARRIER) {
        o->nsizes = 1;
        o->sizes[0] = 0;
    }
    if ((o->op == B_LATENCY || o->op == B_BANDWIDTH) && P < 2) {
        fprintf(stderr, "hint-bench: %s needs at least 2 ranks\n", op_names[o->op]);
        return 2;
    }
    return check_layouts(o);
}

/* ---- data, caches, checks ---- */

static unsigned char gen(int from, int to, size_t i, long it)
{
    return (unsigned char)(from * 29 + to * 7 + (long)i * 13 + it * 5 + (long)(i >> 8));
}

static double dgen(int from, size_t i, long it) { return (double)((from + (long)i + it) % 7); }

/* What the holes of strided blocks hold: the receive side's must survive every call (--check
   looks), the send side's must never reach a receiver (--check sees the data they would shift). */
enum { RECV_HOLE = 0xA5, SEND_HOLE = 0x5A };

/* Fill the holes of every element in the first `bytes` of buf. */
static void fill_holes(unsigned char *buf, enum bk_layout l, size_t bytes, unsigned char value)
{
    size_t sz = bk_layout_size(l), ext = bk_layout_extent(l);
    if (ext == sz)
        return; /* no holes: do not walk a contiguous buffer byte by byte */
    for (size_t e = 0; e + ext <= bytes; e += ext)
        memset(buf + e + sz, value, ext - sz);
}

/* Block p of buf (layout l, n data bytes a block) gets the data rank `from` sends to rank `to`. */
static void put_block(unsigned char *buf, enum bk_layout l, size_t n, int p, int from, int to, long it)
{
    size_t sz = bk_layout_size(l), ext = bk_layout_extent(l);
    unsigned char *e = buf + (size_t)p * bk_block_span(l, n);
    for (size_t i = 0; i < n; i += sz, e += ext)
        for (size_t j = 0; j < sz; j++)
            e[j] = gen(from, to, i + j, it);
}

/* Block p of buf holds what rank `from` sent to rank `to`, and its holes were left alone. */
static int block_ok(const unsigned char *buf, enum bk_layout l, size_t n, int p, int from, int to, long it)
{
    size_t sz = bk_layout_size(l), ext = bk_layout_extent(l);
    const unsigned char *e = buf + (size_t)p * bk_block_span(l, n);
    for (size_t i = 0; i < n; i += sz, e += ext) {
        for (size_t j = 0; j < sz; j++)
            if (e[j] != gen(from, to, i + j, it))
                return 0;
        for (size_t j = sz; j < ext; j++)
            if (e[j] != RECV_HOLE)
                return 0;
    }
    return 1;
}

static void fill_send(const struct opts *o, struct bufs *b, size_t n, long it)
{
    switch (o->op) {
    case B_REDUCE:
    case B_ALLREDUCE:
    case B_REDUCE_SCATTER_BLOCK:
        for (size_t i = 0; i < b->sbytes / sizeof(double); i++)
            ((double *)b->s)[i] = dgen(rank, i, it);
        break;
    case B_ALLTOALL:
    case B_ALLTOALLV:
    case B_SCATTER:
    case B_SCATTERV:
        for (int p = 0; p < P; p++)
            put_block(b->s, o->stype, n, p, rank, p, it);
        break;
    case B_ALLGATHER:
        put_block(b->s, o->stype, n, 0, rank, 0, it);
        break;
    case B_BCAST:
        if (rank == 0)
            for (size_t i = 0; i < n; i++)
                b->r[i] = gen(0, 0, i, it);
        break;
    case B_NEIGHBOR_ALLTOALL:
    case B_NEIGHBOR_ALLTOALLV:
        for (int j = 0; j < nbh.nout; j++)
            put_block(b->s, BK_CONTIG, n, j, rank, nbh.out[j], it);
        break;
    case B_NEIGHBOR_ALLGATHER:
    case B_NEIGHBOR_ALLGATHERV:
        put_block(b->s, BK_CONTIG, n, 0, rank, 0, it);
        break;
    default:
        for (size_t i = 0; i < b->sbytes; i++)
            b->s[i] = gen(rank, 0, i, it);
    }
}

static int verify(const struct opts *o, const struct bufs *b, size_t n, long it)
{
    int bad = 0;
    switch (o->op) {
    case B_REDUCE:
    case B_ALLREDUCE:
    case B_REDUCE_SCATTER_BLOCK: {
        if (o->op == B_REDUCE && rank != 0)
            break;
        size_t cnt = b->rbytes / sizeof(double), base = o->op == B_REDUCE_SCATTER_BLOCK ? (size_t)rank * cnt : 0;
        for (size_t i = 0; i < cnt && !bad; i++) {
            double want = 0;
            for (int p = 0; p < P; p++)
                want += dgen(p, base + i, it);
            bad = ((double *)b->r)[i] != want;
        }
        break;
    }
    case B_BCAST:
        for (size_t i = 0; i < n && !bad; i++)
            bad = b->r[i] != gen(0, 0, i, it);
        break;
    case B_GATHER:
    case B_GATHERV:
        if (rank != 0)
            break;
        /* fall through */
    case B_ALLGATHER:
    case B_ALLGATHERV:
        for (int p = 0; p < P && !bad; p++)
            bad = !block_ok(b->r, o->rtype, n, p, p, 0, it);
        break;
    case B_SCATTER:
    case B_SCATTERV:
        for (size_t i = 0; i < n && !bad; i++)
            bad = b->r[i] != gen(0, rank, i, it);
        break;
    case B_ALLTOALL:
    case B_ALLTOALLV:
        for (int p = 0; p < P && !bad; p++)
            bad = !block_ok(b->r, o->rtype, n, p, p, rank, it);
        break;
    case B_NEIGHBOR_ALLGATHER:
    case B_NEIGHBOR_ALLGATHERV:
    case B_NEIGHBOR_ALLTOALL:
    case B_NEIGHBOR_ALLTOALLV: /* slot i holds what in[i] sent here (allgather: to everyone) */
        for (int i = 0; i < nbh.nin && !bad; i++)
            bad = !block_ok(b->r, BK_CONTIG, n, i, nbh.in[i],
                            o->op == B_NEIGHBOR_ALLTOALL || o->op == B_NEIGHBOR_ALLTOALLV ? rank : 0, it);
        break;
    case B_LATENCY:
    case B_BANDWIDTH:
        if (rank == 1 && o->op == B_LATENCY)
            for (size_t i = 0; i < n && !bad; i++)
                bad = b->r[i] != gen(0, 0, i, it);
        break;
    default:
        break;
    }
    if (bad)
        fprintf(stderr, "hint-bench: rank %d: wrong result of %s at %zu bytes, iteration %ld (stype %s, rtype %s)\n",
                rank, op_names[o->op], n, it, layout_names[o->stype], layout_names[o->rtype]);
    return bad;
}

/* Evict both buffers from every cache level (clflush), then read and write them in order so
   they sit in this rank's cache only, as the Morton paper's benchmark does before each call. */
static volatile unsigned char sink;
static void flush_and_touch(struct bufs *b)
{
    unsigned char *ps[2] = {b->s, b->r};
    size_t ns[2] = {b->sbytes, b->rbytes};
    for (int k = 0; k < 2; k++) {
#if defined(__x86_64__) || defined(__i386__)
        for (size_t i = 0; i < ns[k]; i += 64)
            __builtin_ia32_clflush(ps[k] + i);
        __builtin_ia32_mfence();
#endif
        unsigned char acc = 0;
        for (size_t i = 0; i < ns[k]; i += 64) {
            acc ^= ps[k][i];
            ps[k][i] = ps[k][i];
        }
        sink = acc;
    }
}

/* ---- the neighbourhood operations' topology ---- */

/* splitmix64: the same stream on every rank from one seed */
static uint64_t nbh_next(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The random graph's lists of this rank: sources and destinations in increasing rank order. */
static int random_lists(int **in, int *nin, int **out, int *nout)
{
    *in = malloc(((size_t)P + 1) * sizeof(int));
    *out = malloc(((size_t)P + 1) * sizeof(int));
    if (*in == NULL || *out == NULL)
        return -1;
    uint64_t x = nbh.seed;
    *nin = *nout = 0;
    for (int s = 0; s < P; s++)
        for (int d = 0; d < P; d++) {
            int edge = s != d && (double)(nbh_next(&x) >> 11) / 9007199254740992.0 < nbh.density;
            if (edge && s == rank)
                (*out)[(*nout)++] = d;
            if (edge && d == rank)
                (*in)[(*nin)++] = s;
        }
    return 0;
}

/* Make --graph's topology in the library and read back its lists (a cart's from the library). */
static int make_neighborhood(void)
{
    int st;
    if (strcmp(nbh.spec, "cart") == 0) {
        st = bk_topo_cart2d();
    } else {
        int *in, *out, nin, nout;
        st = random_lists(&in, &nin, &out, &nout);
        if (st == 0)
            st = bk_topo_graph(nin, in, nout, out);
        free(in);
        free(out);
    }
    if (st == 0)
        st = bk_topo_counts(&nbh.nin, &nbh.nout);
    if (st == 0) {
        nbh.in = malloc(((size_t)nbh.nin + 1) * sizeof(int));
        nbh.out = malloc(((size_t)nbh.nout + 1) * sizeof(int));
        st = nbh.in && nbh.out ? bk_topo_lists(nbh.in, nbh.out) : -1;
    }
    return st;
}

/* ---- one call of the operation ---- */

static int call(const struct opts *o, struct bufs *b, size_t n)
{
    size_t cnt = n / sizeof(double);
    switch (o->op) {
    case B_BARRIER: return bk_barrier();
    case B_BCAST: return bk_bcast(b->r, n, 0);
    case B_REDUCE: return bk_reduce((double *)b->s, (double *)b->r, cnt, 0);
    case B_ALLREDUCE: return bk_allreduce((double *)b->s, (double *)b->r, cnt);
    case B_REDUCE_SCATTER_BLOCK: return bk_reduce_scatter_block((double *)b->s, (double *)b->r, cnt);
    case B_GATHER: return bk_gather(b->s, b->r, n, 0);
    case B_SCATTER: return bk_scatter(b->s, b->r, n, 0);
    case B_ALLGATHER:
        return bk_allgather(b->s, bk_block_count(o->stype, n), o->stype, b->r, bk_block_count(o->rtype, n), o->rtype);
    case B_ALLTOALL:
        return bk_alltoall(b->s, bk_block_count(o->stype, n), o->stype, b->r, bk_block_count(o->rtype, n), o->rtype);
    case B_GATHERV: return bk_gatherv(b->s, n, b->r, b->counts, b->displs, 0);
    case B_SCATTERV: return bk_scatterv(b->s, b->counts, b->displs, b->r, n, 0);
    case B_ALLGATHERV: return bk_allgatherv(b->s, n, b->r, b->counts, b->displs);
    case B_ALLTOALLV: return bk_alltoallv(b->s, b->counts, b->displs, b->r, b->counts, b->displs);
    case B_NEIGHBOR_ALLGATHER: return bk_neighbor_allgather(b->s, n, b->r);
    case B_NEIGHBOR_ALLTOALL: return bk_neighbor_alltoall(b->s, n, b->r);
    case B_NEIGHBOR_ALLGATHERV: return bk_neighbor_allgatherv(b->s, n, b->r, b->counts, b->displs);
    case B_NEIGHBOR_ALLTOALLV:
        return bk_neighbor_alltoallv(b->s, b->counts, b->displs, b->r, b->counts, b->displs);
    case B_LATENCY:
        if (rank == 0) {
            int st = bk_send(b->s, n, 1, 0);
            return st ? st : bk_recv(b->r, n, 1, 0);
        }
        if (rank == 1) {
            int st = bk_recv(b->r, n, 0, 0);
            return st ? st : bk_send(b->r, n, 0, 0);
        }
        return 0;
    case B_BANDWIDTH:
        if (rank == 0) {
            int st = bk_send_window(b->s, n, 1, 64);
            return st ? st : bk_recv(b->r, 1, 1, 2);
        }
        if (rank == 1) {
            int st = bk_recv_window(b->r, n, 0, 64);
            return st ? st : bk_send(b->s, 1, 0, 2);
        }
        return 0;
    }
    return -1;
}

static int alloc_bufs(const struct opts *o, size_t n, struct bufs *b)
{
    size_t all = n * (size_t)P;
    /* bytes a send and a receive block span: n unless a layout is strided */
    size_t sspan = bk_block_span(o->stype, n), rspan = bk_block_span(o->rtype, n);
    memset(b, 0, sizeof *b);
    switch (o->op) {
    case B_REDUCE:
    case B_ALLREDUCE:
        b->sbytes = b->rbytes = n / sizeof(double) * sizeof(double);
        break;
    case B_REDUCE_SCATTER_BLOCK:
        b->rbytes = n / sizeof(double) * sizeof(double);
        b->sbytes = b->rbytes * (size_t)P;
        break;
    case B_BCAST:
        b->rbytes = n;
        break;
    case B_GATHER: case B_GATHERV: case B_ALLGATHER: case B_ALLGATHERV:
        b->sbytes = sspan;
        b->rbytes = rspan * (size_t)P;
        break;
    case B_SCATTER: case B_SCATTERV:
        b->sbytes = all;
        b->rbytes = n;
        break;
    case B_ALLTOALL: case B_ALLTOALLV:
        b->sbytes = sspan * (size_t)P;
        b->rbytes = rspan * (size_t)P;
        break;
    case B_LATENCY: case B_BANDWIDTH:
        b->sbytes = b->rbytes = n > 0 ? n : 1;
        break;
    case B_NEIGHBOR_ALLGATHER: case B_NEIGHBOR_ALLGATHERV:
        b->sbytes = n;
        b->rbytes = n * (size_t)nbh.nin;
        break;
    case B_NEIGHBOR_ALLTOALL: case B_NEIGHBOR_ALLTOALLV:
        b->sbytes = n * (size_t)nbh.nout;
        b->rbytes = n * (size_t)nbh.nin;
        break;
    default:
        break;
    }
    /* a neighbourhood may be larger than the group (a cart's repeated neighbours) */
    int nc = nbh.nin > P ? nbh.nin : P;
    nc = nbh.nout > nc ? nbh.nout : nc;
    b->s = bk_alloc(b->sbytes + 64);
    b->r = bk_alloc(b->rbytes + 64);
    b->counts = malloc(2 * sizeof(size_t) * (size_t)nc);
    if (!b->s || !b->r || !b->counts)
        return -1;
    b->displs = b->counts + nc;
    for (int p = 0; p < nc; p++) {
        b->counts[p] = n;
        b->displs[p] = (size_t)p * n;
    }
    memset(b->s, 0, b->sbytes);
    memset(b->r, 0, b->rbytes);
    fill_holes(b->s, o->stype, b->sbytes, SEND_HOLE);
    fill_holes(b->r, o->rtype, b->rbytes, RECV_HOLE);
    return 0;
}

static void free_bufs(struct bufs *b)
{
    bk_free(b->s);
    bk_free(b->r);
    free(b->counts);
}

static long default_iters(const struct opts *o, size_t n)
{
    if (o->iters > 0)
        return o->iters;
    size_t moved = (n ? n : 1) * (size_t)P;
    long it = (long)((64UL << 20) / moved);
    if (o->flush)
        it /= 4;
    return it > 1000 ? 1000 : it < 20 ? 20 : it;
}

/* --first-call: this rank's seconds for the first call at this size, timed alone after a barrier
   (so launch skew is not counted) on buffers already written (so their page faults are not). */
static int time_first_call(const struct opts *o, struct bufs *b, size_t n, double *first)
{
    bk_barrier();
    double t0 = bk_wtime();
    int st = call(o, b, n);
    *first = bk_wtime() - t0;
    return st;
}

/* Run one size: returns this rank's average seconds per call (bandwidth: per window) and, with
   --first-call, the seconds of the first call at this size in *first. */
static int run_size(struct opts *o, size_t n, long iters, long warmup, double *per_call, double *first, int *bad)
{
    struct bufs b;
    if (alloc_bufs(o, n, &b) != 0) {
        fprintf(stderr, "hint-bench: rank %d: out of memory for %zu bytes\n", rank, n);
        return -1;
    }
    int st = 0;
    *bad = 0;
    if (o->counting)
        bc_zero(&o->counters);
    fill_send(o, &b, n, 0);
    if (o->first_call)
        st = time_first_call(o, &b, n, first);
    for (long i = 0; i < warmup && !st; i++)
        st = call(o, &b, n);
    double total = 0;
    if (o->flush || o->vary || o->check) {
        for (long it = 0; it < iters && !st; it++) {
            if (o->vary || o->check)
                fill_send(o, &b, n, o->vary ? it : 0);
            if (o->flush)
                flush_and_touch(&b);
            bk_barrier();
            if (o->counting)
                bc_begin(&o->counters);
            double t0 = bk_wtime();
            st = call(o, &b, n);
            total += bk_wtime() - t0;
            if (o->counting)
                bc_end(&o->counters);
            if (o->check)
                *bad |= verify(o, &b, n, o->vary ? it : 0);
        }
    } else {
        bk_barrier();
        if (o->counting)
            bc_begin(&o->counters);
        double t0 = bk_wtime();
        for (long it = 0; it < iters && !st; it++)
            st = call(o, &b, n);
        total = bk_wtime() - t0;
        if (o->counting)
            bc_end(&o->counters);
    }
    *per_call = total / (double)iters;
    free_bufs(&b);
    return st;
}

/* --papi: every rank opens the counters and all agree on the outcome (the per-size sums are
   collectives, so either every rank counts or none). An unknown event name is an error (2); no
   counters on this machine is said in one line on stderr and the run goes on (0). */
static int open_counters(struct opts *o, char why[BC_WHY_LEN])
{
    why[0] = '\0';
    if (o->counters.n == 0)
        return 0;
    enum bc_status mine = bc_open(&o->counters, why);
    double mn, worst, sum;
    bk_reduce_time((double)mine, &mn, &worst, &sum);
    if (worst == BC_COUNTING) {
        o->counting = 1;
        return 0;
    }
    if (mine == BC_COUNTING) {
        bc_close(&o->counters);
        snprintf(why, BC_WHY_LEN, "another rank could not count them");
    }
    if (worst == BC_BAD_NAME) {
        if (rank == 0)
            fprintf(stderr, "hint-bench: --papi: %s\n", why);
        return 2;
    }
    if (rank == 0)
        fprintf(stderr, "hint-bench: PAPI counters are not available here (%s); running without them\n", why);
    return 0;
}

/* A counter column is as wide as its header, "EVENT/call", and at least 20 characters. */
static int counter_width(const struct opts *o, int k)
{
    int w = (int)strlen(o->counters.names[k]) + 5;
    return w > 20 ? w : 20;
}

/* OSU's layout: '#' before the description and the column header, so parsers skip them. */
static void print_header(const struct opts *o, const char *layouts, const char *papi_why)
{
    int bw = o->op == B_BANDWIDTH;
    printf("# OSU-style hint-bench %s: %s, P=%d%s%s%s%s\n", op_names[o->op], bk_library(), P, layouts,
           o->flush ? ", flush-cache" : "", o->vary ? ", vary-data" : "", o->check ? ", checked" : "");
    if (o->counting)
        printf("# PAPI columns: events per call summed over the %d ranks (total / iterations)\n", P);
    else if (o->counters.n > 0)
        printf("# PAPI: not available here (%s)\n", papi_why);
    printf("%-10s%20s%20s%20s%12s", "# Size", bw ? "Avg Bandwidth(MB/s)" : "Avg Latency(us)",
           bw ? "Min Bandwidth(MB/s)" : "Min Latency(us)", bw ? "Max Bandwidth(MB/s)" : "Max Latency(us)",
           "Iterations");
    if (o->first_call)
        printf("%20s%20s%20s", "Avg First(us)", "Min First(us)", "Max First(us)");
    for (int k = 0; o->counting && k < o->counters.n; k++)
        printf("  %*s/call", counter_width(o, k) - 5, o->counters.names[k]);
    printf("  Algorithm\n");
}

/* One size: the OSU-style line, or the CSV line (counters appended after the fields it had). */
static void print_row(const struct opts *o, size_t n, const double t[3], long iters, const char *alg,
                      const double *per_call, const double first[3])
{
    int strided = o->stype != BK_CONTIG || o->rtype != BK_CONTIG;
    if (o->csv) {
        printf("%s,%s,%d,%zu,%.3f,%.3f,%.3f,%ld,%s", bk_library(), op_names[o->op], P, n, t[0], t[1], t[2], iters,
               alg);
        if (strided)
            printf(",%s,%s", layout_names[o->stype], layout_names[o->rtype]);
        for (int k = 0; o->counting && k < o->counters.n; k++)
            printf(",%.1f", per_call[k]);
        if (o->first_call) /* the first call's own line, in the nine fields compare parses */
            printf("\n%s,%s:first,%d,%zu,%.3f,%.3f,%.3f,1,%s", bk_library(), op_names[o->op], P, n, first[0],
                   first[1], first[2], alg);
    } else {
        printf("%-10zu%20.3f%20.3f%20.3f%12ld", n, t[0], t[1], t[2], iters);
        if (o->first_call)
            printf("%20.3f%20.3f%20.3f", first[0], first[1], first[2]);
        for (int k = 0; o->counting && k < o->counters.n; k++)
            printf("  %*.1f", counter_width(o, k), per_call[k]);
        printf("  %s", alg);
    }
    printf("\n");
    fflush(stdout);
}

static double monotonic_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* not bk_wtime: MPI_Wtime is not callable before MPI_Init */
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* --first-call: init as a program sees it, from before bk_init to after the barrier following it,
   over the ranks (us): one '# init' line, or a CSV line with op init. */
static void report_init(const struct opts *o, double before_init)
{
    bk_barrier();
    double mine = (monotonic_seconds() - before_init) * 1e6, mn, mx, sum;
    bk_reduce_time(mine, &mn, &mx, &sum);
    if (rank != 0)
        return;
    if (o->csv)
        printf("%s,init,%d,0,%.3f,%.3f,%.3f,1,-\n", bk_library(), P, sum / P, mn, mx);
    else
        printf("# init (before init to after the barrier following it): avg %.3f us, min %.3f, max %.3f\n",
               sum / P, mn, mx);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    double before_init = monotonic_seconds();
    if (bk_init(&argc, &argv) != 0) {
        fprintf(stderr, "hint-bench: initialisation failed\n");
        return 1;
    }
    rank = bk_rank();
    P = bk_size();
    struct opts o;
    int pst = parse_args(argc, argv, &o);
    if (pst != 0) {
        bk_finalize();
        return pst == 1 ? 0 : 2;
    }
    if (o.algorithm && bk_set_algorithm(op_names[o.op], o.algorithm) != 0) {
        if (rank == 0)
            fprintf(stderr, "hint-bench: %s has no %s algorithm '%s'\n", bk_library(), op_names[o.op], o.algorithm);
        bk_finalize();
        return 2;
    }
    if (is_neighbor(o.op) && make_neighborhood() != 0) {
        if (rank == 0)
            fprintf(stderr, "hint-bench: %s: cannot make the --graph %s topology\n", bk_library(), nbh.spec);
        bk_finalize();
        return 2;
    }
    char papi_why[BC_WHY_LEN];
    if (open_counters(&o, papi_why) != 0) {
        bk_finalize();
        return 2;
    }
    int bw = o.op == B_BANDWIDTH;
    /* strided results are labelled so they are never read as contiguous ones */
    int strided = o.stype != BK_CONTIG || o.rtype != BK_CONTIG;
    char layouts[64] = "";
    if (strided)
        snprintf(layouts, sizeof layouts, ", stype=%s, rtype=%s", layout_names[o.stype], layout_names[o.rtype]);
    if (o.first_call)
        report_init(&o, before_init);
    if (rank == 0 && !o.csv)
        print_header(&o, layouts, papi_why);
    int failed = 0;
    for (int k = 0; k < o.nsizes; k++) {
        size_t n = o.sizes[k];
        long iters = default_iters(&o, n);
        long warmup = o.warmup >= 0 ? o.warmup : (iters / 10 > 2 ? iters / 10 : 2);
        double t = 0, first = 0;
        int bad = 0;
        int rst = run_size(&o, n, iters, warmup, &t, &first, &bad);
        if (rst != 0) {
            fprintf(stderr, "hint-bench: rank %d: %s failed at %zu bytes: %s\n", rank, op_names[o.op], n,
                    rst < 0 ? "out of memory" : bk_strerror(rst));
            bk_abort(1);
        }
        /* before bk_reduce_time, which is an allreduce itself */
        const char *alg = bk_last_algorithm(op_names[o.op]);
        double mn, mx, sum, avg;
        bk_reduce_time(t * 1e6, &mn, &mx, &sum);
        avg = sum / P;
        if (o.op == B_LATENCY || bw) {
            /* point to point: the figure of rank 0 (the other ranks only wait) */
            avg = bw ? (t > 0 ? (double)n * 64 / t / 1e6 : 0) : t * 1e6 / 2;
            mn = mx = avg;
        }
        double first_us[3] = {0, 0, 0};
        if (o.first_call) {
            bk_reduce_time(first * 1e6, &first_us[1], &first_us[2], &first_us[0]);
            first_us[0] /= P;
        }
        double badsum, d1, d2;
        bk_reduce_time((double)bad, &d1, &d2, &badsum);
        failed |= badsum > 0;
        double per_call[BC_MAX_EVENTS];
        for (int e = 0; o.counting && e < o.counters.n; e++) {
            bk_reduce_time((double)o.counters.totals[e], &d1, &d2, &per_call[e]);
            per_call[e] /= (double)iters;
        }
        if (rank == 0)
            print_row(&o, n, (const double[3]){avg, mn, mx}, iters, alg, per_call, first_us);
    }
    if (failed && rank == 0)
        fprintf(stderr, "hint-bench: --check found wrong results (see above)\n");
    if (o.counting)
        bc_close(&o.counters);
    bk_finalize();
    return failed ? 1 : 0;
}
