/*
 * bench/datatype/mpi-dt-bench.c — the peer of hint-dt-bench: MPI_Pack / MPI_Unpack of the same
 * MARs-paper types, built once against Open MPI and once against MPICH (bench/datatype/meson.build),
 * one process, same options and output columns, so the tables sit side by side. `--once` runs the
 * packs without timing for valgrind --tool=callgrind --toggle-collect='*MPI_Pack'.
 */
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct bench_type {
    const char *name;
    int first; /* doubles in the first cache line; 0 = indexed gap, -1 = optimized indexed gap */
};

static const struct bench_type types[] = {
    {"7_1", 7}, {"6_1_1", 6}, {"5_1_1_1", 5}, {"4_1_1_1_1", 4}, {"3_1_1_1_1_1", 3},
    {"2_1_1_1_1_1_1", 2}, {"1_1_1_1_1_1_1_1", 1}, {"indexed_gap", 0}, {"optimized_indexed_gap", -1},
};
enum { NTYPES = sizeof types / sizeof types[0] };

static void usage(FILE *f)
{
    fprintf(f, "usage: mpi-dt-bench [options]\n"
               "MPI_Pack (or MPI_Unpack) bandwidth of this MPI on the MARs paper's types; the peer of\n"
               "hint-dt-bench, with the same options:\n"
               "  --types LIST  --counts A:B  --unpack  --min-time S  --samples N  --once N  --csv\n"
               "  --reps mpi    (accepted for symmetry; there is one representation)\n"
               "  --help\n");
}

static MPI_Datatype paper_type(int first)
{
    int bl[8], n = 1 + (8 - first);
    MPI_Aint d[8];
    MPI_Datatype h, t;
    bl[0] = first;
    d[0] = 0;
    for (int i = 1; i < n; i++) {
        bl[i] = 1;
        d[i] = 64 * i;
    }
    MPI_Type_create_hindexed(n, bl, d, MPI_DOUBLE, &h);
    MPI_Type_create_resized(h, 0, 512, &t);
    MPI_Type_free(&h);
    return t;
}

static MPI_Datatype indexed_gap(void)
{
    MPI_Datatype pair, trio, outer, all;
    MPI_Datatype t2[2] = {MPI_INT, MPI_FLOAT};
    int b2[2] = {2, 1}, b1[2] = {1, 1};
    MPI_Aint d2[2] = {8, 16}, d1[2] = {0, 0};
    MPI_Type_create_struct(2, b2, d2, t2, &pair);
    MPI_Type_contiguous(3, pair, &trio);
    MPI_Datatype t3[2] = {MPI_INT, trio};
    MPI_Type_create_struct(2, b1, d1, t3, &outer);
    MPI_Type_contiguous(10, outer, &all);
    MPI_Type_free(&pair);
    MPI_Type_free(&trio);
    MPI_Type_free(&outer);
    return all;
}

static MPI_Datatype optimized_indexed_gap(void)
{
    MPI_Datatype mid, all;
    int b[3] = {4, 1, 36};
    MPI_Aint d[3] = {0, 8, 404};
    MPI_Type_create_hvector(9, 40, 44, MPI_BYTE, &mid);
    MPI_Datatype t3[3] = {MPI_BYTE, mid, MPI_BYTE};
    MPI_Type_create_struct(3, b, d, t3, &all);
    MPI_Type_free(&mid);
    return all;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

struct opts {
    bool sel_type[NTYPES];
    size_t cmin, cmax, once;
    double min_time;
    int samples;
    bool unpack, csv;
};

static bool select_types(const char *list, bool *sel)
{
    char *copy = strdup(list), *save = NULL;
    bool ok = true;
    memset(sel, 0, NTYPES * sizeof *sel);
    for (char *tok = strtok_r(copy, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        int i = 0;
        while (i < NTYPES && strcmp(tok, types[i].name) != 0)
            i++;
        if (i == NTYPES) {
            fprintf(stderr, "mpi-dt-bench: unknown type '%s'\n", tok);
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
    for (int i = 0; i < NTYPES; i++)
        o->sel_type[i] = true;
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
        } else if (v != NULL && !strcmp(a, "--types")) {
            ok = select_types(v, o->sel_type), i++;
        } else if (v != NULL && !strcmp(a, "--reps")) {
            ok = !strcmp(v, "mpi"), i++;
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
            fprintf(stderr, "mpi-dt-bench: bad option or value: %s\n", a);
            usage(stderr);
            exit(2);
        }
    }
}

static void run_once(MPI_Datatype t, size_t count, char *user, char *packed, int bytes, bool unpack)
{
    int pos = 0;
    if (unpack)
        MPI_Unpack(packed, bytes, &pos, user, (int)count, t, MPI_COMM_SELF);
    else
        MPI_Pack(user, (int)count, t, packed, bytes, &pos, MPI_COMM_SELF);
}

static double measure(MPI_Datatype t, size_t count, char *user, char *packed, int bytes, const struct opts *o)
{
    double samples[64];
    size_t iters = 1;
    int ns = o->samples < 64 ? o->samples : 64;
    for (;;) {
        double t0 = MPI_Wtime();
        for (size_t i = 0; i < iters; i++)
            run_once(t, count, user, packed, bytes, o->unpack);
        if (MPI_Wtime() - t0 >= o->min_time || iters > ((size_t)1 << 30))
            break;
        iters *= 2;
    }
    for (int s = 0; s < ns; s++) {
        double t0 = MPI_Wtime();
        for (size_t i = 0; i < iters; i++)
            run_once(t, count, user, packed, bytes, o->unpack);
        samples[s] = (MPI_Wtime() - t0) / (double)iters;
    }
    qsort(samples, (size_t)ns, sizeof samples[0], cmp_double);
    return samples[ns / 2];
}

int main(int argc, char **argv)
{
    struct opts o = {0};
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int liblen;
    parse(argc, argv, &o);
    MPI_Init(&argc, &argv);
    MPI_Get_library_version(lib, &liblen);
    lib[strcspn(lib, "\n")] = '\0';
    if (!o.once && !o.csv) {
        printf("# %s: %s\n", o.unpack ? "MPI_Unpack" : "MPI_Pack", lib);
        printf("%-22s %-10s %6s %9s %10s %9s\n", "type", "rep", "count", "bytes", "MB/s", "ns/elem");
    } else if (o.csv) {
        printf("type,rep,chosen,count,bytes,mbps,ns_per_elem\n");
    }
    for (int ti = 0; ti < NTYPES; ti++) {
        if (!o.sel_type[ti])
            continue;
        MPI_Datatype t = types[ti].first > 0    ? paper_type(types[ti].first)
                         : types[ti].first == 0 ? indexed_gap()
                                                : optimized_indexed_gap();
        int size;
        MPI_Aint lb, ext;
        MPI_Type_commit(&t);
        MPI_Type_size(t, &size);
        MPI_Type_get_extent(t, &lb, &ext);
        char *user = calloc(o.cmax, (size_t)ext), *packed = calloc(o.cmax, (size_t)size);
        for (size_t i = 0; i < o.cmax * (size_t)ext; i++)
            user[i] = (char)i;
        for (size_t count = o.cmin; count <= o.cmax; count *= 2) {
            int bytes = (int)(count * (size_t)size);
            if (o.once) {
                for (size_t i = 0; i < o.once; i++)
                    run_once(t, count, user, packed, bytes, o.unpack);
                continue;
            }
            double sec = measure(t, count, user, packed, bytes, &o);
            if (o.csv)
                printf("%s,mpi,mpi,%zu,%d,%.1f,%.2f\n", types[ti].name, count, bytes, (double)bytes / sec / 1e6,
                       sec * 1e9 / (double)count);
            else
                printf("%-22s %-10s %6zu %9d %10.1f %9.2f\n", types[ti].name, "mpi", count, bytes,
                       (double)bytes / sec / 1e6, sec * 1e9 / (double)count);
            fflush(stdout);
        }
        free(user);
        free(packed);
        MPI_Type_free(&t);
    }
    MPI_Finalize();
    return 0;
}
