/*
 * tools/hint_tune.c — hint-tune: measure every algorithm (and, for the shared-heap ones, every
 * copy mode) of each collective that has more than one, over a range of sizes at the current
 * rank count, and write the winners as a tuning file that HINT_TUNING_FILE loads (version 1 of
 * the format of collectives/rules.h: per operation, {"P": P, "rules": [...]}). Each rule carries
 * the shape it was measured on (min/max_nodes, min/max_ppn), so one file can hold a job's
 * tuning on one node and across nodes at the same P: under `hintrun --nodes K` (or a launcher
 * across hosts) the hierarchical algorithms are among the candidates and the node-only ones
 * cannot run.
 *
 *   hintrun -n P hint-tune [OP[,OP...]|all] [--sizes 8:1M] [--iters N] [--out FILE]
 *
 * A candidate counts only when every call of it returned HINT_SUCCESS on every rank and
 * hint_coll_last says it ran: a forced algorithm that cannot run the call (HINT_ERR_UNSUPPORTED,
 * or a fallback under HINT_COLL_FALLBACK) is not a timing. Timing as hint-bench's default
 * (warm-up, barrier, back-to-back calls); the slowest rank's average counts. Consecutive sizes
 * with the same winner become one rule. Operations whose selection does not see a size (barrier,
 * alltoallv: the rules match their calls with 0 bytes) get one rule, the candidate fastest over
 * all sizes, so that the file gives exactly the choices printed. An existing FILE keeps its
 * entries for other operations and rank counts.
 */
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/coll.h"
#include "hint.h"
#include "runtime/runtime.h"

struct cand {
    const char *alg;
    int copy; /* -1: the default copy mode */
};

static const char *const copy_names[] = {"hybrid", "temporal", "nt"};

struct bufs {
    char *s, *r;
    size_t *counts, *displs; /* v variants: P equal blocks */
};

static void usage(FILE *to)
{
    fprintf(to,
        "usage: hintrun -n P hint-tune [OP[,OP...]|all] [--sizes A:B] [--iters N] [--out FILE]\n"
        "Measures every algorithm of each collective OP that has more than one (shared-heap ones in\n"
        "each copy mode; default: all of them) for sizes from A to B bytes (powers of two, default\n"
        "8:1M; bytes of one rank's block, of the whole message for bcast, reduce and allreduce) and\n"
        "writes the fastest per size as rules for P ranks, on this job's number of nodes and ranks\n"
        "per node, into FILE (default hint-tuning.json; its entries for other operations, rank\n"
        "counts or shapes are kept). Load it with HINT_TUNING_FILE=FILE.\n"
        "A candidate whose call fails (e.g. HINT_ERR_UNSUPPORTED) on any rank, or that is not the\n"
        "algorithm hint_coll_last reports, is skipped, not timed. barrier and alltoallv get one rule\n"
        "(their selection does not see a size).\n"
        "  --iters N   calls per measurement (default: 500 for small messages down to 10 for large)\n");
}

/* The library's one size parser (runtime/runtime.h), with hint-tune's bounds. */
static int parse_size(const char *s, size_t *out)
{
    return rt_parse_size(s, out) != HINT_SUCCESS || *out < 1 || *out > ((size_t)1 << 40) ? -1 : 0;
}

/* ---------------------------------------------------------------- one call of each operation */

static bool op_is_reduction(int op)
{
    return op == COLL_REDUCE || op == COLL_ALLREDUCE || op == COLL_REDUCE_SCATTER_BLOCK;
}

/* 1 when the rules see the call's size (see rules.h and the file comment) */
static bool op_sized(int op)
{
    return op != COLL_BARRIER && op != COLL_ALLTOALLV;
}

/* One call of op with b bytes (per block, or the whole message for bcast/reduce/allreduce). */
static int run_op(int op, size_t b, struct bufs *x, int P)
{
    hint_group w = HINT_WORLD;
    for (int i = 0; i < P; i++) {
        x->counts[i] = b;
        x->displs[i] = b * (size_t)i;
    }
    switch (op) {
    case COLL_BARRIER: return hint_barrier(w);
    case COLL_BCAST: return hint_bcast(x->s, b, HINT_BYTE, 0, w);
    case COLL_REDUCE: return hint_reduce(x->s, x->r, b / 8, HINT_DOUBLE, HINT_SUM, 0, w);
    case COLL_ALLREDUCE: return hint_allreduce(x->s, x->r, b / 8, HINT_DOUBLE, HINT_SUM, w);
    case COLL_REDUCE_SCATTER_BLOCK:
        return hint_reduce_scatter_block(x->s, x->r, b / 8, HINT_DOUBLE, HINT_SUM, w);
    case COLL_GATHER: return hint_gather(x->s, b, HINT_BYTE, x->r, b, HINT_BYTE, 0, w);
    case COLL_SCATTER: return hint_scatter(x->s, b, HINT_BYTE, x->r, b, HINT_BYTE, 0, w);
    case COLL_ALLGATHER: return hint_allgather(x->s, b, HINT_BYTE, x->r, b, HINT_BYTE, w);
    case COLL_ALLTOALL: return hint_alltoall(x->s, b, HINT_BYTE, x->r, b, HINT_BYTE, w);
    case COLL_ALLGATHERV:
        return hint_allgatherv(x->s, b, HINT_BYTE, x->r, x->counts, x->displs, HINT_BYTE, w);
    case COLL_ALLTOALLV:
        return hint_alltoallv(x->s, x->counts, x->displs, HINT_BYTE, x->r, x->counts, x->displs, HINT_BYTE, w);
    default: return HINT_ERR_UNSUPPORTED;
    }
}

/* The slowest rank's average time of op with candidate c, or a negative value when c did not
   run on every rank (a failed status, or another algorithm ran). */
static double measure(int op, const struct cand *c, size_t b, int iters, struct bufs *x, int P)
{
    const char *name = coll_tables[op].op, *ran = NULL;
    int bad = 0, any_bad = 0;
    hint_coll_set(name, c->alg);
    coll_copy_override = c->copy;
    for (int i = 0; i < 3; i++)
        bad |= run_op(op, b, x, P) != HINT_SUCCESS;
    bad |= hint_coll_last(name, &ran) != HINT_SUCCESS || !ran || strcmp(ran, c->alg) != 0;
    hint_allreduce(&bad, &any_bad, 1, HINT_INT, HINT_MAX, HINT_WORLD);
    if (any_bad)
        return -1;
    hint_barrier(HINT_WORLD);
    double t0 = hint_wtime();
    for (int i = 0; i < iters; i++)
        bad |= run_op(op, b, x, P) != HINT_SUCCESS;
    double t = (hint_wtime() - t0) / iters, worst;
    hint_allreduce(&t, &worst, 1, HINT_DOUBLE, HINT_MAX, HINT_WORLD);
    hint_allreduce(&bad, &any_bad, 1, HINT_INT, HINT_MAX, HINT_WORLD);
    return any_bad ? -1 : worst;
}

/* ---------------------------------------------------------------- candidates and rules */

static int list_cands(int op, struct cand *cands, int cap)
{
    const struct coll_table *t = &coll_tables[op];
    int nc = 0;
    for (int i = 0; i < t->nalgs; i++) {
        bool heap = strncmp(t->algs[i].desc, "shared heap", 11) == 0;
        for (int m = 0; m < (heap ? 3 : 1) && nc < cap; m++)
            cands[nc++] = (struct cand){t->algs[i].name, heap ? m : -1};
    }
    return nc;
}

static json_t *rule_of(const struct cand *c, size_t max_bytes)
{
    json_t *rule = json_pack("{s:s}", "algorithm", c->alg);
    if (max_bytes)
        json_object_set_new(rule, "max_bytes", json_integer((json_int_t)max_bytes));
    if (c->copy >= 0)
        json_object_set_new(rule, "copy", json_string(copy_names[c->copy]));
    return rule;
}

/* The job's shape as the rules see it: nodes, and the most ranks on one node. */
struct shape {
    int nodes, ppn;
};

static struct shape shape_of_world(void)
{
    hint_group node;
    int local = 1, leader = 1, all[2] = {1, 1};
    if (hint_group_split_type(HINT_WORLD, HINT_SPLIT_NODE, 0, &node) == HINT_SUCCESS) {
        int me = 0;
        hint_group_size(node, &local);
        hint_group_rank(node, &me);
        leader = me == 0;
        hint_group_free(&node);
    }
    int mine[2] = {local, leader};
    hint_allreduce(&mine[0], &all[0], 1, HINT_INT, HINT_MAX, HINT_WORLD);
    hint_allreduce(&mine[1], &all[1], 1, HINT_INT, HINT_SUM, HINT_WORLD);
    return (struct shape){.nodes = all[1], .ppn = all[0]};
}

/* Every rule measured on this shape says so, so that a file tuned on one node never picks a
   node-only algorithm for a job across nodes at the same P, nor one tuned across nodes a
   hierarchical one on a single node. */
static void bound_to_shape(json_t *rules, struct shape sh)
{
    size_t i;
    json_t *r;
    json_array_foreach(rules, i, r)
    {
        json_object_set_new(r, "min_nodes", json_integer(sh.nodes));
        json_object_set_new(r, "max_nodes", json_integer(sh.nodes));
        json_object_set_new(r, "min_ppn", json_integer(sh.ppn));
        json_object_set_new(r, "max_ppn", json_integer(sh.ppn));
    }
}

/* The shape an entry was tuned on: its first rule's bounds; an entry without them (written
   before hint-tune recorded the shape) counts as one node. */
static bool entry_has_shape(json_t *e, struct shape sh)
{
    json_t *r = json_array_get(json_object_get(e, "rules"), 0);
    json_t *n = json_object_get(r, "min_nodes"), *p = json_object_get(r, "min_ppn");
    if (!n)
        return sh.nodes == 1;
    return json_integer_value(n) == sh.nodes && (!p || json_integer_value(p) == sh.ppn);
}

/* Replace the entry for P and this shape of op in root (an object), keeping everything else.
   The new entry goes first: an older entry without shape bounds would otherwise match a job
   across nodes before it. */
static void put_entry(json_t *root, const char *op, int P, struct shape sh, json_t *rules)
{
    json_t *arr = json_object_get(root, op);
    if (!json_is_array(arr)) {
        arr = json_array();
        json_object_set_new(root, op, arr);
    }
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e)
    {
        if (json_integer_value(json_object_get(e, "P")) == P && entry_has_shape(e, sh)) {
            json_array_remove(arr, i);
            break;
        }
    }
    bound_to_shape(rules, sh);
    json_array_insert_new(arr, 0, json_pack("{s:i, s:o}", "P", P, "rules", rules));
}

static int iters_for(size_t bytes, int P, int iters)
{
    if (iters > 0)
        return iters;
    size_t all = bytes * (size_t)P;
    return all <= 65536 ? 500 : all <= (4u << 20) ? 50 : 10;
}

static void print_choice(int rank, const char *label, size_t b, const struct cand *c, double t)
{
    if (rank != 0)
        return;
    if (b)
        printf("%-22s %10zu B  %-18s %-8s %10.3f us\n", label, b, c->alg,
               c->copy >= 0 ? copy_names[c->copy] : "-", t * 1e6);
    else
        printf("%-22s %10s    %-18s %-8s %10.3f us\n", label, "any", c->alg,
               c->copy >= 0 ? copy_names[c->copy] : "-", t * 1e6);
}

/* Tunes op over lo..hi; returns its rules (NULL when no candidate ran at all). */
static json_t *tune_op(int op, size_t lo, size_t hi, int iters, struct bufs *x, int P, int rank)
{
    struct cand cands[64];
    double sum[64] = {0};
    int ok[64];
    int nc = list_cands(op, cands, 64);
    const char *name = coll_tables[op].op;
    json_t *rules = json_array();
    int prev = -1;
    if (op_is_reduction(op) && lo < 8)
        lo = 8; /* a double at least */
    if (op == COLL_BARRIER)
        hi = lo;
    for (int k = 0; k < nc; k++)
        ok[k] = 1;
    for (size_t b = lo; b <= hi; b *= 2) {
        int best = -1;
        double best_t = 0;
        for (int k = 0; k < nc; k++) {
            double tk = measure(op, &cands[k], b, iters_for(b, P, iters), x, P);
            if (tk < 0) {
                ok[k] = 0; /* cannot run at some size: not a candidate for a size-blind rule */
                continue;
            }
            sum[k] += tk;
            if (best < 0 || tk < best_t) {
                best = k;
                best_t = tk;
            }
        }
        if (best < 0 || !op_sized(op))
            continue;
        print_choice(rank, name, b, &cands[best], best_t);
        if (prev >= 0 && prev == best) /* extend the last rule */
            json_object_set_new(json_array_get(rules, json_array_size(rules) - 1), "max_bytes",
                                json_integer((json_int_t)b));
        else
            json_array_append_new(rules, rule_of(&cands[best], b));
        prev = best;
    }
    if (!op_sized(op)) {
        for (int k = 0; k < nc; k++)
            if (ok[k] && (prev < 0 || sum[k] < sum[prev]))
                prev = k;
        if (prev >= 0) {
            print_choice(rank, name, 0, &cands[prev], sum[prev]);
            json_array_append_new(rules, rule_of(&cands[prev], 0));
        }
    }
    hint_coll_set(name, "auto");
    coll_copy_override = -1;
    if (json_array_size(rules) == 0) {
        json_decref(rules);
        return NULL;
    }
    /* the last rule covers everything larger too */
    json_object_del(json_array_get(rules, json_array_size(rules) - 1), "max_bytes");
    return rules;
}

/* ---------------------------------------------------------------- command line */

struct opts {
    bool ops[COLL_NOPS];
    size_t lo, hi;
    int iters;
    const char *out;
};

static bool tunable(int op)
{
    return coll_tables[op].nalgs > 1 && (op_sized(op) || op == COLL_BARRIER || op == COLL_ALLTOALLV);
}

static int parse_ops(char *list, struct opts *o)
{
    if (!strcmp(list, "all")) {
        for (int op = 0; op < COLL_NOPS; op++)
            o->ops[op] = tunable(op);
        return 0;
    }
    for (char *save = NULL, *w = strtok_r(list, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        int op = coll_op_by_name(w);
        if (op < 0) {
            fprintf(stderr, "hint-tune: '%s' is not a collective operation\n", w);
            return 2;
        }
        if (!tunable(op)) {
            fprintf(stderr, "hint-tune: %s has one algorithm only: nothing to tune\n", w);
            return 2;
        }
        o->ops[op] = true;
    }
    return 0;
}

/* -1 to go on, else the exit status */
static int parse_args(int argc, char **argv, struct opts *o)
{
    char *ops = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--sizes") && has_value) {
            char *c = strchr(argv[++i], ':');
            if (c)
                *c = '\0';
            if (!c || parse_size(argv[i], &o->lo) || parse_size(c + 1, &o->hi) || o->hi < o->lo) {
                fprintf(stderr, "hint-tune: --sizes wants A:B with 1 <= A <= B (e.g. 8:64K)\n");
                return 2;
            }
        } else if (!strcmp(a, "--iters") && has_value) {
            char *e;
            long v = strtol(argv[++i], &e, 10);
            if (*e || e == argv[i] || v < 1 || v > 1000000) {
                fprintf(stderr, "hint-tune: --iters wants a count from 1 to 1000000, not '%s'\n", argv[i]);
                return 2;
            }
            o->iters = (int)v;
        } else if (!strcmp(a, "--out") && has_value) {
            o->out = argv[++i];
        } else if (a[0] != '-' && !ops) {
            ops = argv[i];
        } else {
            fprintf(stderr, "hint-tune: unknown or incomplete option '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    char all[] = "all";
    return parse_ops(ops ? ops : all, o) ? 2 : -1;
}

static int write_file(const struct opts *o, json_t *const per_op[], int P, struct shape sh)
{
    json_error_t err;
    json_t *root = json_load_file(o->out, 0, &err);
    if (root && json_integer_value(json_object_get(root, "version")) != 1) {
        fprintf(stderr, "hint-tune: %s is not a version 1 tuning file; not changing it\n", o->out);
        json_decref(root);
        return 1;
    }
    if (!json_is_object(root)) {
        json_decref(root);
        root = json_pack("{s:i}", "version", 1);
    }
    for (int op = 0; op < COLL_NOPS; op++)
        if (per_op[op])
            put_entry(root, coll_tables[op].op, P, sh, json_incref(per_op[op]));
    int rc = 0;
    if (json_dump_file(root, o->out, JSON_INDENT(2) | JSON_SORT_KEYS) != 0) {
        fprintf(stderr, "hint-tune: cannot write %s\n", o->out);
        rc = 1;
    } else {
        printf("# wrote %s: load it with HINT_TUNING_FILE=%s\n", o->out, o->out);
    }
    json_decref(root);
    return rc;
}

int main(int argc, char **argv)
{
    struct opts o = {.lo = 8, .hi = 1 << 20, .out = "hint-tuning.json"};
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0)
        return rc;
    if (hint_init(&argc, &argv) != HINT_SUCCESS)
        return 1;
    int rank, P;
    hint_group_rank(HINT_WORLD, &rank);
    hint_group_size(HINT_WORLD, &P);
    struct bufs x = {malloc(o.hi * (size_t)P), malloc(o.hi * (size_t)P),
                     calloc((size_t)P, sizeof(size_t)), calloc((size_t)P, sizeof(size_t))};
    if (!x.s || !x.r || !x.counts || !x.displs) {
        fprintf(stderr, "hint-tune: cannot allocate 2 x %zu bytes\n", o.hi * (size_t)P);
        hint_abort(1);
    }
    memset(x.s, 1, o.hi * (size_t)P);
    memset(x.r, 0, o.hi * (size_t)P);
    json_t *per_op[COLL_NOPS] = {0};
    struct shape sh = shape_of_world();
    if (rank == 0)
        printf("# hint-tune, P=%d on %d node(s), at most %d per node: fastest per size (slowest rank's "
               "average); columns: operation, bytes, algorithm, copy mode, time\n", P, sh.nodes, sh.ppn);
    for (int op = 0; op < COLL_NOPS; op++) {
        if (!o.ops[op])
            continue;
        per_op[op] = tune_op(op, o.lo, o.hi, o.iters, &x, P, rank);
        if (!per_op[op] && rank == 0)
            fprintf(stderr, "hint-tune: no algorithm of %s ran at these sizes; no rules for it\n",
                    coll_tables[op].op);
    }
    rc = rank == 0 ? write_file(&o, per_op, P, sh) : 0;
    for (int op = 0; op < COLL_NOPS; op++)
        json_decref(per_op[op]);
    free(x.s);
    free(x.r);
    free(x.counts);
    free(x.displs);
    hint_finalize();
    return rc;
}
