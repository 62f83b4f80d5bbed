/*
 * hint-topo — show the machine's hierarchy and, for a hierarchy and a sub-group size, every
 * mixed-radix order (Heap's algorithm) with what it gives: the rank mapping, the core list
 * (Alg. 3), the ring cost and pairs per level of the first sub-group (§3.3) and the Slurm
 * --distribution value with the same mapping (Fig. 2's captions). A table, or JSON with --json.
 *
 *   hint-topo                                   detected hierarchy and its orders
 *   hint-topo --hierarchy 2,2,4 --group-size 4  the paper's Fig. 2
 *
 * Exit status: 0 success, 1 topology error, 2 usage error.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hint.h"
#include "topology/topology.h"

#define TOPO_TOOL_SHOW 64 /* table mode prints at most this many mapping / core entries */
#define TOPO_TOOL_MAX_ORDERS_LEVELS 9 /* 9! = 362880 lines; more needs --order */

struct opts {
    const char *hierarchy; /* --hierarchy, NULL = detected */
    const char *order;     /* --order, NULL = every order */
    int group_size;        /* --group-size, 0 = the innermost level's size */
    int ncores;            /* --ncores, 0 = group size */
    int nnodes;            /* --nodes for detection */
    int json;
};

/* State shared by the per-order callback. */
struct run {
    const struct opts *o;
    const struct topo_hier *hier;
    int k, ncores;   /* sub-group size, cores listed */
    int *map, *cores;
    int count;       /* orders printed so far */
    int wpairs, wcores; /* table column widths */
    int status;
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: hint-topo [--hierarchy H] [--order S] [--group-size K] [--ncores N] [--nodes N] [--json]\n"
            "Prints the detected hierarchy (hwloc, or HINT_TOPO_FILE) and, for hierarchy H (default:\n"
            "the detected one), every order (or only S) with:\n"
            "  ring      ring cost of the first sub-group of K ranks (ranks 0..K-1)\n"
            "  pairs     %% of its rank pairs per level, lowest level first\n"
            "  slurm     the srun --distribution value giving the same mapping, '-' if none\n"
            "  cores     the first N cores in rank order (Alg. 3, for --cpu-bind=map_cpu / hintrun)\n"
            "  mapping   the new rank of the process at each position 0, 1, ... (Fig. 2)\n"
            "H: level sizes outermost first, e.g. 2,2,4 = 2 nodes x 2 sockets x 4 cores.\n"
            "S: a permutation of the levels, fastest-varying first; the natural order is n-1,...,1,0.\n"
            "  --group-size K   sub-group size (default: the innermost level's size)\n"
            "  --ncores N       cores to list (default K)\n"
            "  --nodes N        node count prepended to the detected hierarchy (default 1)\n"
            "  --json           JSON instead of a table\n"
            "  --help\n");
}

static int parse_int(const char *s, const char *what, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < 1 || v > 1 << 30) {
        fprintf(stderr, "hint-topo: %s must be a positive integer, not '%s'\n", what, s);
        return 0;
    }
    *out = (int)v;
    return 1;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
    static const struct option longs[] = {
        {"hierarchy", required_argument, 0, 'H'}, {"order", required_argument, 0, 'o'},
        {"group-size", required_argument, 0, 'k'}, {"ncores", required_argument, 0, 'n'},
        {"nodes", required_argument, 0, 'N'},     {"json", no_argument, 0, 'j'},
        {"help", no_argument, 0, 'h'},            {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "H:o:k:n:N:jh", longs, NULL)) != -1) {
        switch (c) {
        case 'H': o->hierarchy = optarg; break;
        case 'o': o->order = optarg; break;
        case 'k': if (!parse_int(optarg, "--group-size", &o->group_size)) return 2; break;
        case 'n': if (!parse_int(optarg, "--ncores", &o->ncores)) return 2; break;
        case 'N': if (!parse_int(optarg, "--nodes", &o->nnodes)) return 2; break;
        case 'j': o->json = 1; break;
        case 'h': usage(stdout); return -1;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "hint-topo: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    return 0;
}

/* Prints "a,b,c" (",..." past limit); returns the characters printed. */
static int print_list(const int *v, int n, int limit)
{
    int w = 0;
    for (int i = 0; i < n && i < limit; i++)
        w += printf("%s%d", i ? "," : "", v[i]);
    if (n > limit)
        w += printf(",...");
    return w;
}

/* A JSON string: quotes and backslashes escaped, control characters dropped. */
static void json_str(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            putchar('\\');
        if ((unsigned char)*s >= 0x20)
            putchar(*s);
    }
    putchar('"');
}

static void json_ints(const char *key, const int *v, int n, const char *after)
{
    printf("\"%s\": [", key);
    for (int i = 0; i < n; i++)
        printf("%s%d", i ? ", " : "", v[i]);
    printf("]%s", after);
}

static void json_kinds(const struct topo_hier *hier)
{
    printf("\"levels\": [");
    for (int l = 0; l < hier->nlevels; l++) {
        char one[128];
        struct topo_hier single = {.nlevels = 1, .h = {hier->h[l]}, .kind = {hier->kind[l]}};
        topo_hier_describe(&single, one, sizeof one);
        char *name = strchr(one, ' '); /* "2 L2+core" -> "L2+core" */
        printf("%s\"%s\"", l ? ", " : "", name ? name + 1 : one);
    }
    printf("]");
}

static const char *source_name(enum topo_source s)
{
    return s == TOPO_SRC_HWLOC ? "hwloc" : s == TOPO_SRC_FILE ? "HINT_TOPO_FILE" : "user";
}

static void print_detected(const struct opts *o, int st, const struct topo_hier *det, int ncores)
{
    char a[256], b[512];
    if (o->json) {
        printf("  \"detected\": ");
        if (st != HINT_SUCCESS) {
            printf("{\"error\": ");
            json_str(topo_last_error());
            printf("}");
            return;
        }
        printf("{");
        json_ints("hierarchy", det->h, det->nlevels, ", ");
        json_kinds(det);
        printf(", \"source\": \"%s\", \"cores\": %d}", source_name(det->source), ncores);
        return;
    }
    if (st != HINT_SUCCESS) {
        printf("detected: none (%s)\n", topo_last_error());
        return;
    }
    printf("detected: %s  (%s; source %s; %d cores on this node)\n", topo_format_list(det->nlevels, det->h, a, sizeof a),
           topo_hier_describe(det, b, sizeof b), source_name(det->source), ncores);
}

/* One order: compute everything, print a table row or a JSON object. */
static int one_order(const int order[], void *arg)
{
    struct run *r = arg;
    const struct topo_hier *hier = r->hier;
    struct topo_mr mr;
    double pct[TOPO_MAX_LEVELS];
    char slurm[64], ord[128];
    int n = hier->nlevels;
    if (topo_mr_setup(&mr, n, hier->h, order) != HINT_SUCCESS ||
        topo_rank_map(n, hier->h, order, r->map) != HINT_SUCCESS ||
        hint_mr_cores(n, hier->h, order, r->ncores, r->cores) != HINT_SUCCESS ||
        topo_mr_pairs_per_level(&mr, r->k, pct) != HINT_SUCCESS) {
        r->status = 1;
        return 1;
    }
    long ring = topo_mr_ring_cost(&mr, r->k);
    int has_slurm = topo_slurm_distribution(hier, order, slurm, sizeof slurm) == HINT_SUCCESS;
    topo_format_list(n, order, ord, sizeof ord);
    if (r->o->json) {
        printf("%s    {", r->count ? ",\n" : "");
        json_ints("order", order, n, ", ");
        printf("\"ring_cost\": %ld, \"pairs_per_level\": [", ring);
        for (int l = 0; l < n; l++)
            printf("%s%.1f", l ? ", " : "", pct[l]);
        printf("], \"slurm\": ");
        printf(has_slurm ? "\"%s\", " : "null, ", slurm);
        json_ints("cores", r->cores, r->ncores, ", ");
        json_ints("mapping", r->map, hier->size, "}");
    } else {
        char pairs[256], bord[136];
        size_t used = 1;
        pairs[0] = '[';
        for (int l = 0; l < n && used < sizeof pairs; l++)
            used += (size_t)snprintf(pairs + used, sizeof pairs - used, "%s%.1f", l ? "," : "", pct[l]);
        if (used < sizeof pairs - 1)
            snprintf(pairs + used, sizeof pairs - used, "]");
        snprintf(bord, sizeof bord, "[%s]", ord);
        printf("%-*s  %5ld  %-*s  %-15s ", 2 * n + 1, bord, ring, r->wpairs, pairs, has_slurm ? slurm : "-");
        int w = print_list(r->cores, r->ncores, TOPO_TOOL_SHOW);
        printf("%*s  ", w < r->wcores ? r->wcores - w : 0, "");
        print_list(r->map, hier->size, TOPO_TOOL_SHOW);
        printf("\n");
    }
    r->count++;
    return 0;
}

static int run_orders(const struct opts *o, const struct topo_hier *hier)
{
    struct run r = {.o = o, .hier = hier};
    int order[TOPO_MAX_LEVELS], st = 0;
    char a[256], b[512];
    r.k = o->group_size ? o->group_size : hier->h[hier->nlevels - 1];
    r.ncores = o->ncores ? o->ncores : r.k;
    if (r.k > hier->size || r.ncores > hier->size) {
        fprintf(stderr, "hint-topo: hierarchy %s has %d positions: --group-size %d / --ncores %d is too large\n",
                topo_format_list(hier->nlevels, hier->h, a, sizeof a), hier->size, r.k, r.ncores);
        return 2;
    }
    if (o->order && topo_parse_order(o->order, hier->nlevels, order) != HINT_SUCCESS) {
        fprintf(stderr, "hint-topo: %s\n", topo_last_error());
        return 2;
    }
    if (!o->order && hier->nlevels > TOPO_TOOL_MAX_ORDERS_LEVELS) {
        fprintf(stderr, "hint-topo: %d levels have too many orders to list; give one with --order\n",
                hier->nlevels);
        return 2;
    }
    r.map = malloc((size_t)hier->size * sizeof *r.map);
    r.cores = malloc((size_t)r.ncores * sizeof *r.cores);
    if (!r.map || !r.cores) {
        fprintf(stderr, "hint-topo: out of memory for %d positions\n", hier->size);
        st = 1;
        goto out;
    }
    if (o->json) {
        printf(",\n  ");
        json_ints("hierarchy", hier->h, hier->nlevels, ", ");
        json_kinds(hier);
        printf(", \"source\": \"%s\", \"positions\": %d, \"group_size\": %d, \"ncores\": %d,\n  \"orders\": [\n",
               source_name(hier->source), hier->size, r.k, r.ncores);
    } else {
        printf("hierarchy: %s  (%s; %d positions), sub-groups of %d\n",
               topo_format_list(hier->nlevels, hier->h, a, sizeof a), topo_hier_describe(hier, b, sizeof b),
               hier->size, r.k);
        static const char hp[] = "pairs/level (lowest first)";
        int digits = snprintf(NULL, 0, "%d", hier->size - 1);
        int shown = r.ncores < TOPO_TOOL_SHOW ? r.ncores : TOPO_TOOL_SHOW + 1;
        r.wpairs = 6 * hier->nlevels + 1 > (int)sizeof hp - 1 ? 6 * hier->nlevels + 1 : (int)sizeof hp - 1;
        r.wcores = shown * (digits + 1) - 1 > 5 ? shown * (digits + 1) - 1 : 5;
        printf("%-*s  %5s  %-*s  %-15s %-*s  %s\n", 2 * hier->nlevels + 1, "order", "ring", r.wpairs, hp, "slurm",
               r.wcores, "cores", "mapping (new rank at position 0,1,...)");
    }
    if (o->order)
        one_order(order, &r);
    else
        topo_for_each_order(hier->nlevels, one_order, &r);
    if (o->json)
        printf("\n  ]");
    st = r.status;
out:
    free(r.map);
    free(r.cores);
    return st;
}

int main(int argc, char **argv)
{
    struct opts o = {.nnodes = 1};
    struct topo_hier det, user;
    int st = parse_args(argc, argv, &o), ncores = 0;
    if (st)
        return st < 0 ? 0 : st;
    int dst = topo_discover(o.nnodes, &det);
    if (dst == HINT_SUCCESS && topo_ncores(&ncores) != HINT_SUCCESS)
        ncores = 0;
    if (o.json)
        printf("{\n");
    print_detected(&o, dst, &det, ncores);
    const struct topo_hier *hier = &det;
    if (o.hierarchy) {
        if (topo_parse_hierarchy(o.hierarchy, &user) != HINT_SUCCESS) {
            fprintf(stderr, "hint-topo: %s\n", topo_last_error());
            st = 2;
            goto out;
        }
        hier = &user;
    } else if (dst != HINT_SUCCESS) {
        fprintf(stderr, "hint-topo: %s (give a hierarchy with --hierarchy)\n", topo_last_error());
        st = 1;
        goto out;
    }
    st = run_orders(&o, hier);
out:
    if (o.json)
        printf("\n}\n");
    topo_release();
    return st;
}
