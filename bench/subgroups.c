/*
 * bench/subgroups.c — hint-subgroups: the sub-group protocol of the mixed-radix paper (§4.1)
 * over every order of a hierarchy.
 *
 *   hintrun -n P hint-subgroups --hierarchy H --group-size K [--op alltoall|allreduce|allgather]
 *                               [--bytes N] [--seconds S]
 *
 * For each order (Heap's algorithm): (1) reorder the world by the order (hint_group_reorder),
 * (2) split it into sub-groups of K by reordered rank / K, (3) run the collective in the first
 * sub-group alone for S seconds (the others wait), (4) run it in all sub-groups at once for S
 * seconds. The bandwidth is K x bytes per rank divided by the average duration of one call, as
 * the paper's figures; printed beside the paper's legend columns (order, ring cost, pairs per
 * level).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hint.h"
#include "topology/topology.h"

struct sg {
    struct topo_hier hier;
    int K, op, rank, P;
    size_t bytes;
    double seconds;
};

enum { OP_ALLTOALL, OP_ALLREDUCE, OP_ALLGATHER };
static const char *const op_names[] = {"alltoall", "allreduce", "allgather"};

static int one_call(const struct sg *s, hint_group g, char *sb, char *rb)
{
    switch (s->op) {
    case OP_ALLTOALL: return hint_alltoall(sb, s->bytes / (size_t)s->K, HINT_BYTE, rb, s->bytes / (size_t)s->K, HINT_BYTE, g);
    case OP_ALLREDUCE: return hint_allreduce(sb, rb, s->bytes / sizeof(double), HINT_DOUBLE, HINT_SUM, g);
    default: return hint_allgather(sb, s->bytes / (size_t)s->K, HINT_BYTE, rb, s->bytes / (size_t)s->K, HINT_BYTE, g);
    }
}

/* Calls in a time window started by a barrier of the group; the window length is agreed
   through rank 0's clock so every member makes the same number of calls. Returns seconds per
   call (0 for a rank not taking part). */
static double window(const struct sg *s, hint_group g, char *sb, char *rb)
{
    long calls = 0;
    hint_barrier(g);
    double t0 = hint_wtime();
    for (;;) {
        int go = hint_wtime() - t0 < s->seconds;
        hint_bcast(&go, 1, HINT_INT, 0, g);
        if (!go)
            break;
        if (one_call(s, g, sb, rb) != HINT_SUCCESS) {
            fprintf(stderr, "hint-subgroups: %s failed\n", op_names[s->op]);
            hint_abort(1);
        }
        calls++;
    }
    return calls ? (hint_wtime() - t0) / (double)calls : 0;
}

static int run_order(const int order[], void *arg)
{
    struct sg *s = arg;
    hint_group re, sub;
    int st = hint_group_reorder(HINT_WORLD, s->hier.nlevels, s->hier.h, order, &re);
    if (st != HINT_SUCCESS)
        return st;
    int rr;
    hint_group_rank(re, &rr);
    hint_group_split(re, rr / s->K, rr, &sub);
    char *sb = calloc(s->bytes + 64, 1), *rb = calloc(s->bytes * (size_t)s->K + 64, 1);
    int first = rr / s->K == 0;
    /* (3) the first sub-group alone; everyone else waits at the world barrier */
    double alone = first ? window(s, sub, sb, rb) : 0;
    hint_barrier(HINT_WORLD);
    /* (4) all sub-groups at once */
    double all = window(s, sub, sb, rb);
    /* average over the sub-groups' rank 0, as the paper's curves */
    int sr;
    hint_group_rank(sub, &sr);
    double mine[2] = {sr == 0 ? all : 0, sr == 0 ? 1 : 0}, sum[2];
    hint_allreduce(mine, sum, 2, HINT_DOUBLE, HINT_SUM, HINT_WORLD);
    double alone0 = 0;
    hint_allreduce(&alone, &alone0, 1, HINT_DOUBLE, HINT_MAX, HINT_WORLD);
    if (s->rank == 0) {
        long cost;
        double pct[TOPO_MAX_LEVELS];
        char ord[64], pp[128];
        hint_mr_ring_cost(s->hier.nlevels, s->hier.h, order, s->K, &cost);
        hint_mr_pairs_per_level(s->hier.nlevels, s->hier.h, order, s->K, pct);
        topo_format_list(s->hier.nlevels, order, ord, sizeof ord);
        int n = 0;
        for (int l = 0; l < s->hier.nlevels; l++)
            n += snprintf(pp + n, sizeof pp - (size_t)n, "%s%.1f", l ? "," : "", pct[l]);
        double data = (double)s->bytes * s->K;
        printf("[%-10s] %9ld  [%-20s] %12.1f %12.1f\n", ord, cost, pp, alone0 > 0 ? data / alone0 / 1e6 : 0,
               sum[0] > 0 ? data / (sum[0] / sum[1]) / 1e6 : 0);
        fflush(stdout);
    }
    free(sb);
    free(rb);
    hint_group_free(&sub);
    hint_group_free(&re);
    return 0;
}

static void usage(FILE *to)
{
    fprintf(to, "usage: hintrun -n P hint-subgroups --hierarchy H --group-size K [--op alltoall|allreduce|allgather]\n"
                "                                   [--bytes N] [--seconds S]\n"
                "The mixed-radix paper's sub-group protocol (section 4.1) for every order of H (product = P):\n"
                "reorder, split into groups of K by reordered rank / K, time OP in the first group alone, then\n"
                "in all groups at once. Bandwidth = K x N bytes / average call time, in MB/s.\n"
                "  --bytes N    bytes per rank (default 65536)    --seconds S  window per measurement (0.5)\n");
}

int main(int argc, char **argv)
{
    struct sg s = {.K = 0, .op = OP_ALLTOALL, .bytes = 65536, .seconds = 0.5};
    const char *hier = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--hierarchy") && i + 1 < argc) {
            hier = argv[++i];
        } else if (!strcmp(argv[i], "--group-size") && i + 1 < argc) {
            s.K = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--bytes") && i + 1 < argc) {
            s.bytes = strtoull(argv[++i], NULL, 0);
        } else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
            s.seconds = atof(argv[++i]);
        } else if (!strcmp(argv[i], "--op") && i + 1 < argc) {
            const char *o = argv[++i];
            s.op = !strcmp(o, "allreduce") ? OP_ALLREDUCE : !strcmp(o, "allgather") ? OP_ALLGATHER
                   : !strcmp(o, "alltoall")  ? OP_ALLTOALL : -1;
            if (s.op < 0) {
                fprintf(stderr, "hint-subgroups: unknown --op %s\n", o);
                return 2;
            }
        } else {
            fprintf(stderr, "hint-subgroups: unknown or incomplete option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (hint_init(&argc, &argv) != HINT_SUCCESS)
        return 1;
    hint_group_rank(HINT_WORLD, &s.rank);
    hint_group_size(HINT_WORLD, &s.P);
    int bad = !hier || topo_parse_hierarchy(hier, &s.hier) != HINT_SUCCESS ||
              topo_check_size(&s.hier, s.P) != HINT_SUCCESS || s.K < 1 || s.P % s.K != 0 || s.seconds <= 0;
    if (bad) {
        if (s.rank == 0)
            fprintf(stderr, "hint-subgroups: need --hierarchy H with product P=%d (%s) and --group-size K dividing P\n",
                    s.P, hier ? topo_last_error() : "no --hierarchy");
        hint_finalize();
        return 2;
    }
    if (s.rank == 0)
        printf("# hint-subgroups %s, P=%d, hierarchy %s, groups of %d, %zu bytes per rank, %.2f s windows\n"
               "# %-10s %9s  %-22s %12s %12s\n", op_names[s.op], s.P, hier, s.K, s.bytes, s.seconds, "order",
               "ring cost", "pairs per level (%)", "alone MB/s", "all MB/s");
    topo_for_each_order(s.hier.nlevels, run_order, &s);
    hint_finalize();
    return 0;
}
