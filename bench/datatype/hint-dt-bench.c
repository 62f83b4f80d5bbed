/*
 * bench/datatype/hint-dt-bench.c — pack/unpack bandwidth of each datatype representation on the
 * MARs paper's types (64 bytes of doubles in a 512-byte extent) and its indexed-gap pair.
 * Medians of several timed samples; no assertions (benchmarks are programs, not tests).
 * `--once` runs a fixed number of packs without timing, for valgrind --tool=callgrind
 * (see docs/DATATYPES.md for the exact commands).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "datatype/datatype.h"

struct bench_type {
    const char *name;
    int first; /* paper types: doubles in the first cache line; 0 = indexed gap, -1 = optimized */
};

static const struct bench_type types[] = {
    {"7_1", 7}, {"6_1_1", 6}, {"5_1_1_1", 5}, {"4_1_1_1_1", 4}, {"3_1_1_1_1_1", 3},
    {"2_1_1_1_1_1_1", 2}, {"1_1_1_1_1_1_1_1", 1}, {"indexed_gap", 0}, {"optimized_indexed_gap", -1},
};
enum { NTYPES = sizeof types / sizeof types[0] };

struct bench_rep {
    const char *name;
    int rep;
    size_t seg; /* MARs segment in elements; 0 = default */
};

static const struct bench_rep reps[] = {
    {"loop", DT_REP_LOOP, 0},      {"iovec", DT_REP_IOVEC, 0},     {"mars", DT_REP_MARS, 0},
    {"mars8", DT_REP_MARS, 8},     {"mars16", DT_REP_MARS, 16},    {"mars64", DT_REP_MARS, 64},
    {"mars512", DT_REP_MARS, 512}, {"mars2048", DT_REP_MARS, 2048}, {"auto", DT_REP_AUTO, 0},
};
enum { NREPS = sizeof reps / sizeof reps[0] };

static void usage(FILE *f)
{
    fprintf(f,
            "usage: hint-dt-bench [options]\n"
            "Pack (or unpack) bandwidth of hint's datatype representations on the MARs paper's types.\n"
            "  --types LIST     comma-separated type names (default: all):\n"
            "                   7_1 6_1_1 5_1_1_1 4_1_1_1_1 3_1_1_1_1_1 2_1_1_1_1_1_1 1_1_1_1_1_1_1_1\n"
            "                   indexed_gap optimized_indexed_gap\n"
            "  --reps LIST      comma-separated representations (default: loop,iovec,mars,mars16,auto):\n"
            "                   loop iovec mars mars8 mars16 mars64 mars512 mars2048 auto\n"
            "                   (marsN = MARs with a segment of N elements; mars = default segment)\n"
            "  --counts A:B     element counts from A to B, doubling (default 8:2048)\n"
            "  --unpack         time unpack instead of pack\n"
            "  --min-time S     seconds per timed sample (default 0.01)\n"
            "  --samples N      timed samples per point; the median is printed (default 7)\n"
            "  --once N         no timing: pack each selected point N times (for callgrind)\n"
            "  --describe       print each type's committed loop description and exit\n"
            "  --csv            comma-separated output\n"
            "  --help           this text\n"
            "Columns: type, representation (auto shows its choice), count, packed bytes, MB/s (median),\n"
            "ns per datatype element.\n");
}

static hint_type paper_type(int first)
{
    size_t bl[8];
    ptrdiff_t d[8];
    int n = 1 + (8 - first);
    hint_type h = NULL, t = NULL;
    bl[0] = (size_t)first;
    d[0] = 0;
    for (int i = 1; i < n; i++) {
        bl[i] = 1;
        d[i] = 64 * i;
    }
    if (hint_type_hindexed((size_t)n, bl, d, HINT_DOUBLE, &h) == HINT_SUCCESS)
        hint_type_resized(h, 0, 512, &t);
    hint_type_free(&h);
    return t;
}

/* Fig. 1 of the paper: 10 x {int, 3 x {2 int at 8, float at 16} (extent 12)} (extent 44). */
static hint_type indexed_gap(void)
{
    hint_type pair = NULL, trio = NULL, outer = NULL, all = NULL;
    hint_type t2[2] = {HINT_INT, HINT_FLOAT};
    if (hint_type_struct(2, (size_t[]){2, 1}, (ptrdiff_t[]){8, 16}, t2, &pair) == HINT_SUCCESS &&
        hint_type_contiguous(3, pair, &trio) == HINT_SUCCESS &&
        hint_type_struct(2, (size_t[]){1, 1}, (ptrdiff_t[]){0, 0}, (hint_type[]){HINT_INT, trio}, &outer) ==
            HINT_SUCCESS)
        hint_type_contiguous(10, outer, &all);
    hint_type_free(&pair);
    hint_type_free(&trio);
    hint_type_free(&outer);
    return all;
}

/* Fig. 2: the same bytes described as Open MPI's optimizer would like them. */
static hint_type optimized_indexed_gap(void)
{
    hint_type mid = NULL, all = NULL;
    if (hint_type_hvector(9, 40, 44, HINT_BYTE, &mid) == HINT_SUCCESS)
        hint_type_struct(3, (size_t[]){4, 1, 36}, (ptrdiff_t[]){0, 8, 404},
                         (hint_type[]){HINT_BYTE, mid, HINT_BYTE}, &all);
    hint_type_free(&mid);
    return all;
}

static hint_type make_type(const struct bench_type *b)
{
    hint_type t = b->first > 0 ? paper_type(b->first) : b->first == 0 ? indexed_gap() : optimized_indexed_gap();
    if (t == NULL || hint_type_commit(&t) != HINT_SUCCESS) {
        fprintf(stderr, "hint-dt-bench: cannot build type %s\n", b->name);
        exit(1);
    }
    return t;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

struct opts {
    bool sel_type[NTYPES], sel_rep[NREPS];
    size_t cmin, cmax, once;
    double min_time;
    int samples;
    bool unpack, csv, describe;
};

static bool select_list(const char *list, const char *const *names, size_t n, bool *sel)
{
    char *copy = strdup(list), *save = NULL;
    bool ok = true;
    memset(sel, 0, n * sizeof *sel);
    for (char *tok = strtok_r(copy, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        size_t i = 0;
        while (i < n && strcmp(tok, names[i]) != 0)
            i++;
        if (i == n) {
            fprintf(stderr, "hint-dt-bench: unknown name '%s'\n", tok);
            ok = false;
        } else {
            sel[i] = true;
        }
    }
    free(copy);
    return ok;
}

static void parse(int argc, char **argv, struct opts *o)
{
    const char *tnames[NTYPES], *rnames[NREPS];
    for (int i = 0; i < NTYPES; i++)
        tnames[i] = types[i].name, o->sel_type[i] = true;
    for (int i = 0; i < NREPS; i++)
        rnames[i] = reps[i].name;
    select_list("loop,iovec,mars,mars16,auto", rnames, NREPS, o->sel_rep);
    o->cmin = 8, o->cmax = 2048, o->min_time = 0.01, o->samples = 7;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool ok = true;
        if (!strcmp(a, "--help")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(a, "--unpack")) {
            o->unpack = true;
        } else if (!strcmp(a, "--csv")) {
            o->csv = true;
        } else if (!strcmp(a, "--describe")) {
            o->describe = true;
        } else if (v != NULL && !strcmp(a, "--types")) {
            ok = select_list(v, tnames, NTYPES, o->sel_type), i++;
        } else if (v != NULL && !strcmp(a, "--reps")) {
            ok = select_list(v, rnames, NREPS, o->sel_rep), i++;
        } else if (v != NULL && !strcmp(a, "--counts")) {
            ok = sscanf(v, "%zu:%zu", &o->cmin, &o->cmax) == 2 && o->cmin > 0 && o->cmin <= o->cmax, i++;
        } else if (v != NULL && !strcmp(a, "--min-time")) {
            o->min_time = atof(v), i++;
        } else if (v != NULL && !strcmp(a, "--samples")) {
            o->samples = atoi(v), i++;
            ok = o->samples > 0;
        } else if (v != NULL && !strcmp(a, "--once")) {
            o->once = strtoull(v, NULL, 10), i++;
            ok = o->once > 0;
        } else {
            ok = false;
        }
        if (!ok) {
            fprintf(stderr, "hint-dt-bench: bad option or value: %s\n", a);
            usage(stderr);
            exit(2);
        }
    }
}

static void run_once(hint_type t, const struct bench_rep *r, size_t count, char *user, char *packed, bool unpack)
{
    size_t size, done;
    hint_type_size(t, &size);
    if (unpack)
        dt_unpack_range_rep(packed, size * count, 0, user, count, t, &done, r->rep);
    else
        dt_pack_range_rep(user, count, t, 0, packed, size * count, &done, r->rep);
}

/* Median seconds of one pack of count elements. */
static double measure(hint_type t, const struct bench_rep *r, size_t count, char *user, char *packed,
                      const struct opts *o)
{
    double samples[64];
    size_t iters = 1;
    int ns = o->samples < 64 ? o->samples : 64;
    for (;;) { /* grow the iteration count until one sample lasts min_time */
        double t0 = now();
        for (size_t i = 0; i < iters; i++)
            run_once(t, r, count, user, packed, o->unpack);
        if (now() - t0 >= o->min_time || iters > ((size_t)1 << 30))
            break;
        iters *= 2;
    }
    for (int s = 0; s < ns; s++) {
        double t0 = now();
        for (size_t i = 0; i < iters; i++)
            run_once(t, r, count, user, packed, o->unpack);
        samples[s] = (now() - t0) / (double)iters;
    }
    qsort(samples, (size_t)ns, sizeof samples[0], cmp_double);
    return samples[ns / 2];
}

int main(int argc, char **argv)
{
    struct opts o = {0};
    parse(argc, argv, &o);
    double cost[4];
    dt_cost_model(cost); /* calibrate now, outside anything callgrind or the timer measures */
    if (!o.csv && !o.describe && !o.once) {
        printf("# cost model (ns): loop item %.2f, loop block %.2f, iovec piece %.2f, mars piece %.2f\n", cost[0],
               cost[1], cost[2], cost[3]);
        printf("# %s; HINT_PACK default: %s\n", o.unpack ? "unpack" : "pack", dt_rep_name(dt_rep_default()));
        printf("%-22s %-10s %6s %9s %10s %9s\n", "type", "rep", "count", "bytes", "MB/s", "ns/elem");
    } else if (o.csv && !o.describe && !o.once) {
        printf("type,rep,chosen,count,bytes,mbps,ns_per_elem\n");
    }
    for (int ti = 0; ti < NTYPES; ti++) {
        if (!o.sel_type[ti])
            continue;
        hint_type t = make_type(&types[ti]);
        size_t size;
        ptrdiff_t lb, ext;
        hint_type_size(t, &size);
        hint_type_extent(t, &lb, &ext);
        if (o.describe) {
            char d[4096];
            dt_describe(t, d, sizeof d);
            printf("== %s: %zu pieces, %zu loop items entered per element\n%s", types[ti].name, dt_nblocks(t),
                   dt_loop_visits(t), d);
            hint_type_free(&t);
            continue;
        }
        char *user = calloc(o.cmax, (size_t)ext), *packed = calloc(o.cmax, size);
        for (size_t i = 0; i < o.cmax * (size_t)ext; i++)
            user[i] = (char)i;
        for (int ri = 0; ri < NREPS; ri++) {
            if (!o.sel_rep[ri])
                continue;
            dt_set_segment(t, reps[ri].seg);
            for (size_t count = o.cmin; count <= o.cmax; count *= 2) {
                if (o.once) {
                    for (size_t i = 0; i < o.once; i++)
                        run_once(t, &reps[ri], count, user, packed, o.unpack);
                    continue;
                }
                double sec = measure(t, &reps[ri], count, user, packed, &o);
                const char *chosen = dt_rep_name(dt_rep_choose(t, count, reps[ri].rep));
                char label[32];
                snprintf(label, sizeof label, "%s%s%s", reps[ri].name, reps[ri].rep == DT_REP_AUTO ? ":" : "",
                         reps[ri].rep == DT_REP_AUTO ? chosen : "");
                if (o.csv)
                    printf("%s,%s,%s,%zu,%zu,%.1f,%.2f\n", types[ti].name, reps[ri].name, chosen, count,
                           count * size, (double)(count * size) / sec / 1e6, sec * 1e9 / (double)count);
                else
                    printf("%-22s %-10s %6zu %9zu %10.1f %9.2f\n", types[ti].name, label, count, count * size,
                           (double)(count * size) / sec / 1e6, sec * 1e9 / (double)count);
                fflush(stdout);
            }
        }
        free(user);
        free(packed);
        hint_type_free(&t);
    }
    return 0;
}
