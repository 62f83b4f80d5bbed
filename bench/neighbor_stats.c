/*
 * bench/neighbor_stats.c — paper 002's evidence: how many messages each rank sends per
 * neighbor_allgather, on the paper's graphs (Erdős–Rényi random sparse graphs of density δ;
 * Moore neighbourhoods (r, d) on a periodic d-dimensional grid), for the algorithm forced with
 * --algorithm. The graph comes from one seed on every rank and is built with hint_graph_create
 * (each rank names its own out-edges). The first call builds distance_halving's pattern; then
 * `--calls` more run. Messages are counted by the transports (HINT_P2P_STATS=1 prints them per
 * rank at finalize): run once with --calls 0 and once with --calls N and divide the difference
 * by N (bench/neighbor-stats.sh does that and prints the paper's model beside it).
 *
 * Rank 0 also prints the graph's mean out-degree (the naive algorithm's messages per rank,
 * δ(n-1) in expectation) and the mean number of distinct out-neighbours other than the rank
 * itself (what the model's δ counts).
 *
 * --compare instead times naive, distance_halving and morton side by side (round-robin per call,
 * the slowest rank's time per call, medians).
 *
 * usage: hintrun -n P neighbor_stats [--graph random|moore] [--density D] [--r R] [--d DIMS]
 *        [--bytes M] [--calls N] [--algorithm naive|distance_halving|morton] [--seed S] [--compare]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hint.h"

static uint64_t rng_state;
static uint32_t rng(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_state >> 33);
}

static void die(const char *what, int st)
{
    fprintf(stderr, "neighbor_stats: %s failed: %s\n", what, hint_strerror(st));
    exit(1);
}
#define OK(call)                                                                                 \
    do {                                                                                         \
        int st_ = (call);                                                                        \
        if (st_ != HINT_SUCCESS)                                                                 \
            die(#call, st_);                                                                     \
    } while (0)

/* This rank's out-neighbours (rank `me` of P) in the chosen graph; returns how many. */
static int out_edges(const char *graph, double density, int r, int d, int me, int P, uint64_t seed, int *dests)
{
    int n = 0;
    if (strcmp(graph, "random") == 0) {
        rng_state = seed;
        for (int s = 0; s < P; s++)
            for (int t = 0; t < P; t++) {
                int take = s != t && rng() % 100000 < (uint32_t)(density * 100000);
                if (take && s == me)
                    dests[n++] = t;
            }
        return n;
    }
    int dims[8] = {0};
    OK(hint_dims_create(P, d, dims));
    int c[8], rest = me, span = 2 * r + 1, noff = 1;
    for (int k = d - 1; k >= 0; k--) {
        c[k] = rest % dims[k];
        rest /= dims[k];
    }
    for (int k = 0; k < d; k++)
        noff *= span;
    for (int o = 0; o < noff; o++) {
        int off = o, t = 0, zero = 1;
        for (int k = 0; k < d; k++) {
            int dk = off % span - r;
            off /= span;
            zero &= dk == 0;
            t = t * dims[k] + ((c[k] + dk) % dims[k] + dims[k]) % dims[k];
        }
        if (!zero)
            dests[n++] = t;
    }
    return n;
}

static int by_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* --compare: naive, distance_halving and morton on the same graph in one run, round-robin per
   call so that load on the machine falls on all three alike; each call's time is the slowest
   rank's (a barrier before each call); rank 0 prints the medians in microseconds. */
static void time_side_by_side(hint_group g, const char *s, char *rb, size_t bytes, int calls, int me)
{
    static const char *const algs[] = {"naive", "distance_halving", "morton"};
    double *t[3];
    for (int a = 0; a < 3; a++) {
        t[a] = calloc((size_t)calls + 1, sizeof(double));
        OK(hint_coll_set("neighbor_allgather", algs[a]));
        OK(hint_neighbor_allgather(s, bytes, HINT_BYTE, rb, bytes, HINT_BYTE, g)); /* builds its plan */
    }
    for (int c = 0; c < calls; c++)
        for (int a = 0; a < 3; a++) {
            OK(hint_coll_set("neighbor_allgather", algs[a]));
            OK(hint_barrier(HINT_WORLD));
            double t0 = hint_wtime();
            OK(hint_neighbor_allgather(s, bytes, HINT_BYTE, rb, bytes, HINT_BYTE, g));
            double dt = hint_wtime() - t0, worst = 0;
            OK(hint_allreduce(&dt, &worst, 1, HINT_DOUBLE, HINT_MAX, HINT_WORLD));
            t[a][c] = worst;
        }
    for (int a = 0; a < 3; a++) {
        qsort(t[a], (size_t)calls, sizeof(double), by_double);
        if (me == 0 && calls > 0)
            printf("%s %zu bytes: median %.2f us over %d calls\n", algs[a], bytes, t[a][calls / 2] * 1e6, calls);
        free(t[a]);
    }
}

int main(int argc, char **argv)
{
    const char *graph = "random", *alg = "distance_halving";
    double density = 0.1;
    int r = 1, d = 2, calls = 10, compare = 0;
    size_t bytes = 8;
    uint64_t seed = 1;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : "";
        if (strcmp(argv[i], "--help") == 0) {
            printf("usage: hintrun -n P neighbor_stats [--graph random|moore] [--density D] [--r R] [--d DIMS]\n"
                   "       [--bytes M] [--calls N] [--algorithm naive|distance_halving|morton] [--seed S] [--compare]\n"
                   "Runs neighbor_allgather once (building the pattern), then N more times; with HINT_P2P_STATS=1\n"
                   "each rank prints its messages at finalize (see bench/neighbor-stats.sh). --compare: naive,\n"
                   "distance_halving and morton side by side, N calls each, median of the slowest rank's times.\n");
            return 0;
        } else if (strcmp(argv[i], "--graph") == 0)
            graph = v, i++;
        else if (strcmp(argv[i], "--density") == 0)
            density = atof(v), i++;
        else if (strcmp(argv[i], "--r") == 0)
            r = atoi(v), i++;
        else if (strcmp(argv[i], "--d") == 0)
            d = atoi(v), i++;
        else if (strcmp(argv[i], "--bytes") == 0)
            bytes = (size_t)atol(v), i++;
        else if (strcmp(argv[i], "--calls") == 0)
            calls = atoi(v), i++;
        else if (strcmp(argv[i], "--algorithm") == 0)
            alg = v, i++;
        else if (strcmp(argv[i], "--compare") == 0)
            compare = 1;
        else if (strcmp(argv[i], "--seed") == 0)
            seed = (uint64_t)atoll(v), i++;
        else {
            fprintf(stderr, "neighbor_stats: unknown argument %s (--help)\n", argv[i]);
            return 2;
        }
    }
    if ((strcmp(graph, "random") != 0 && strcmp(graph, "moore") != 0) || d < 1 || d > 8 || r < 1) {
        fprintf(stderr, "neighbor_stats: --graph random|moore, 1 <= --d <= 8, --r >= 1\n");
        return 2;
    }
    OK(hint_init(&argc, &argv));
    int me, P;
    OK(hint_group_rank(HINT_WORLD, &me));
    OK(hint_group_size(HINT_WORLD, &P));
    int maxout = P;
    for (int k = 0; k < d; k++)
        maxout *= 2 * r + 1;
    int *dests = malloc((size_t)maxout * sizeof *dests);
    int nout = out_edges(graph, density, r, d, me, P, seed, dests);
    size_t deg = (size_t)nout;
    hint_group g;
    OK(hint_graph_create(HINT_WORLD, 1, &me, &deg, dests, 0, &g));
    int nin, nout2;
    OK(hint_neighbors_count(g, &nin, &nout2));
    char *s = calloc(bytes + 1, 1), *rb = calloc((size_t)nin * bytes + 1, 1);
    if (compare) {
        time_side_by_side(g, s, rb, bytes, calls, me);
    } else {
        OK(hint_coll_set("neighbor_allgather", alg));
        OK(hint_neighbor_allgather(s, bytes, HINT_BYTE, rb, bytes, HINT_BYTE, g));
        OK(hint_barrier(HINT_WORLD));
        for (int c = 0; c < calls; c++)
            OK(hint_neighbor_allgather(s, bytes, HINT_BYTE, rb, bytes, HINT_BYTE, g));
        OK(hint_barrier(HINT_WORLD));
    }
    /* distinct out-neighbours other than this rank: a wrapped Moore offset may repeat one */
    int distinct = 0;
    for (int i = 0; i < nout; i++) {
        int seen = dests[i] == me;
        for (int k = 0; k < i && !seen; k++)
            seen = dests[k] == dests[i];
        distinct += !seen;
    }
    int mine[2] = {nout, distinct}, total[2] = {0, 0};
    OK(hint_allreduce(mine, total, 2, HINT_INT, HINT_SUM, HINT_WORLD));
    if (me == 0)
        printf("graph %s density %.2f r %d d %d P %d algorithm %s calls %d mean_distinct %.2f mean_outdegree %.2f\n",
               graph, density, r, d, P, alg, calls, (double)total[1] / P, (double)total[0] / P);
    free(s);
    free(rb);
    free(dests);
    OK(hint_group_free(&g));
    OK(hint_finalize());
    return 0;
}
