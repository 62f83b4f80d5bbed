/*
 * tools/hint_tune.c — hint-tune: measure every algorithm (and, for the shared-heap ones, every
 * copy mode) of a collective over a range of sizes at the current rank count, and write the
 * winners as a tuning file that HINT_TUNING_FILE loads (format: collectives/tune.h).
 *
 *   hintrun -n P hint-tune alltoall [--sizes 8:1M] [--iters N] [--out FILE]
 *
 * Timing as hint-bench's default (warm-up, barrier, back-to-back calls), the slowest rank's
 * average counts. Consecutive sizes with the same winner become one rule. An existing FILE keeps
 * its entries for other operations and rank counts.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/algs.h"
#include "collectives/copy.h"
#include "hint.h"

struct cand {
    const char *alg;
    int copy; /* -1: not a shared-heap algorithm */
};

static const char *const copy_names[] = {"hybrid", "temporal", "nt"};

static void usage(FILE *to)
{
    fprintf(to, "usage: hintrun -n P hint-tune alltoall [--sizes A:B] [--iters N] [--out FILE]\n"
                "Measures every alltoall algorithm (shared-heap ones in each copy mode) for bytes per block\n"
                "from A to B (powers of two, default 8:1M) and writes the fastest per size as rules for P\n"
                "ranks into FILE (default hint-tuning.json; other entries in it are kept).\n");
}

static size_t parse_size(const char *s)
{
    char *e;
    double v = strtod(s, &e);
    size_t m = *e == 'K' || *e == 'k' ? 1024 : *e == 'M' || *e == 'm' ? 1 << 20 : 1;
    return (size_t)(v * (double)m);
}

static double measure(size_t block, int P, int iters, void *s, void *r)
{
    for (int i = 0; i < 3; i++)
        hint_alltoall(s, block, HINT_BYTE, r, block, HINT_BYTE, HINT_WORLD);
    hint_barrier(HINT_WORLD);
    double t0 = hint_wtime();
    for (int i = 0; i < iters; i++)
        hint_alltoall(s, block, HINT_BYTE, r, block, HINT_BYTE, HINT_WORLD);
    double t = (hint_wtime() - t0) / iters, worst;
    hint_allreduce(&t, &worst, 1, HINT_DOUBLE, HINT_MAX, HINT_WORLD);
    (void)P;
    return worst;
}

/* Replace the entry for P of op in root (an object), keeping everything else. */
static void put_entry(json_t *root, const char *op, int P, json_t *rules)
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
        if (json_integer_value(json_object_get(e, "P")) == P) {
            json_array_remove(arr, i);
            break;
        }
    }
    json_array_append_new(arr, json_pack("{s:i, s:o}", "P", P, "rules", rules));
}

int main(int argc, char **argv)
{
    const char *out = "hint-tuning.json", *op = NULL;
    size_t lo = 8, hi = 1 << 20;
    int iters = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
            char *c = strchr(argv[++i], ':');
            if (!c) {
                fprintf(stderr, "hint-tune: --sizes wants A:B\n");
                return 2;
            }
            *c = '\0';
            lo = parse_size(argv[i]);
            hi = parse_size(c + 1);
        } else if (!strcmp(argv[i], "--iters") && i + 1 < argc) {
            iters = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--out") && i + 1 < argc) {
            out = argv[++i];
        } else if (argv[i][0] != '-' && !op) {
            op = argv[i];
        } else {
            fprintf(stderr, "hint-tune: unknown or incomplete option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (!op || strcmp(op, "alltoall") != 0 || lo < 1 || hi < lo) {
        fprintf(stderr, "hint-tune: only 'alltoall' can be tuned so far, with sizes 1 <= A <= B\n");
        return 2;
    }
    if (hint_init(&argc, &argv) != HINT_SUCCESS)
        return 1;
    int rank, P;
    hint_group_rank(HINT_WORLD, &rank);
    hint_group_size(HINT_WORLD, &P);
    const struct coll_table *t = &coll_tables[COLL_ALLTOALL];
    struct cand cands[32];
    int nc = 0;
    for (int i = 0; i < t->nalgs && nc < 29; i++) {
        bool heap = t->algs[i].applicable == coll_shm_ok;
        for (int m = 0; m < (heap ? 3 : 1); m++)
            cands[nc++] = (struct cand){t->algs[i].name, heap ? m : -1};
    }
    void *s = malloc(hi * (size_t)P), *r = malloc(hi * (size_t)P);
    memset(s, 1, hi * (size_t)P);
    json_t *rules = json_array();
    const char *prev_alg = NULL;
    int prev_copy = -2;
    if (rank == 0)
        printf("# hint-tune alltoall, P=%d: fastest per block size (slowest rank's average)\n", P);
    for (size_t b = lo; b <= hi; b *= 2) {
        int n = iters > 0 ? iters : (int)(b * (size_t)P <= 65536 ? 500 : b * (size_t)P <= (4 << 20) ? 50 : 10);
        int best = -1;
        double best_t = 0;
        for (int k = 0; k < nc; k++) {
            hint_coll_set("alltoall", cands[k].alg);
            coll_copy_override = cands[k].copy;
            double tk = measure(b, P, n, s, r);
            if (best < 0 || tk < best_t) {
                best = k;
                best_t = tk;
            }
        }
        if (rank == 0)
            printf("%10zu B  %-10s %-8s %10.3f us\n", b, cands[best].alg,
                   cands[best].copy >= 0 ? copy_names[cands[best].copy] : "-", best_t * 1e6);
        /* extend the last rule or start a new one */
        if (prev_alg && !strcmp(prev_alg, cands[best].alg) && prev_copy == cands[best].copy) {
            json_object_set_new(json_array_get(rules, json_array_size(rules) - 1), "max_bytes", json_integer((json_int_t)b));
        } else {
            json_t *rule = json_pack("{s:i, s:s}", "max_bytes", (json_int_t)b, "algorithm", cands[best].alg);
            if (cands[best].copy >= 0)
                json_object_set_new(rule, "copy", json_string(copy_names[cands[best].copy]));
            json_array_append_new(rules, rule);
        }
        prev_alg = cands[best].alg;
        prev_copy = cands[best].copy;
    }
    /* the last rule covers everything larger too */
    json_object_del(json_array_get(rules, json_array_size(rules) - 1), "max_bytes");
    int rc = 0;
    if (rank == 0) {
        json_t *root = json_load_file(out, 0, NULL);
        if (!json_is_object(root)) {
            json_decref(root);
            root = json_pack("{s:i}", "version", 1);
        }
        put_entry(root, "alltoall", P, rules);
        if (json_dump_file(root, out, JSON_INDENT(2) | JSON_SORT_KEYS) != 0) {
            fprintf(stderr, "hint-tune: cannot write %s\n", out);
            rc = 1;
        } else {
            printf("# wrote %s: load it with HINT_TUNING_FILE=%s\n", out, out);
        }
        json_decref(root);
    } else {
        json_decref(rules);
    }
    free(s);
    free(r);
    hint_coll_set("alltoall", "auto");
    hint_finalize();
    return rc;
}
