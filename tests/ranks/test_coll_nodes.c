/*
 * tests/ranks/test_coll_nodes.c — the collective suite across virtual nodes (hintrun --nodes K,
 * issue 15): every algorithm of every operation against its reference (tests/ranks/coll_check)
 * at uneven splits, P=5 on 2 nodes, P=8 on 3, P=3 on 2 and P=4 on 4 (one rank per node), on
 * the world, an odd/even split, a split spanning the nodes unevenly and each node's own group.
 * coll_check asserts that every node-only algorithm forced on a group spanning nodes returns
 * HINT_ERR_UNSUPPORTED and that the node-only algorithms run again on a node's own group; this
 * driver also wants the message that says why. Also derived types (typed_more, typed_coll),
 * HINT_COLL_CHECK (mismatch checked) and HINT_AUTOTUNE (autotune) across nodes. Bytes between nodes go through libfabric:
 * tcp over loopback unless FI_PROVIDER says otherwise (meson sets it).
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/common/job.h"

struct nodes_case {
    char op[32];
    int np, nodes;
    char mode[16]; /* "" or "regroup" */
};

static const char *const ops[] = {"barrier",   "bcast",    "reduce",     "allreduce", "gather",
                                  "gatherv",   "scatter",  "scatterv",   "allgather", "allgatherv",
                                  "alltoall",  "alltoallv", "reduce_scatter_block", "errors"};
static const int shapes[][2] = {{5, 2}, {8, 3}, {3, 2}, {4, 4}}; /* P, nodes */

/* Operations whose table has no node-only algorithm: nothing to refuse. */
static bool has_node_only(const char *op)
{
    return strcmp(op, "gatherv") != 0 && strcmp(op, "scatterv") != 0 && strcmp(op, "errors") != 0;
}

ParameterizedTestParameters(coll_nodes, algorithms)
{
    size_t nops = sizeof ops / sizeof ops[0], ns = sizeof shapes / sizeof shapes[0];
    struct nodes_case *cases = cr_malloc((nops + nops - 1) * ns * sizeof *cases);
    size_t k = 0;
    for (size_t j = 0; j < ns; j++)
        for (size_t i = 0; i < nops; i++) {
            cases[k] = (struct nodes_case){.np = shapes[j][0], .nodes = shapes[j][1]};
            snprintf(cases[k++].op, sizeof cases[0].op, "%s", ops[i]);
            if (strcmp(ops[i], "errors") == 0)
                continue;
            /* groups made, freed and made again over the spanning world */
            cases[k] = (struct nodes_case){.np = shapes[j][0], .nodes = shapes[j][1], .mode = "regroup"};
            snprintf(cases[k++].op, sizeof cases[0].op, "%s", ops[i]);
        }
    return cr_make_param_array(struct nodes_case, cases, k, NULL);
}

ParameterizedTest(struct nodes_case *c, coll_nodes, algorithms, .timeout = 900)
{
    char nodes[16];
    snprintf(nodes, sizeof nodes, "%d", c->nodes);
    const char *const opts[] = {"--nodes", nodes, NULL};
    const char *argv[] = {job_build_path("tests/ranks/coll_check"), c->op, c->mode[0] ? c->mode : NULL, NULL};
    const char *env[] = {getenv("FI_PROVIDER") ? NULL : "FI_PROVIDER=tcp", NULL, NULL};
    if (env[0])
        env[1] = "FI_TCP_IFACE=lo";
    struct job_result res;
    cr_assert_eq(job_run(opts, c->np, argv, env[0] ? env : NULL, &res), 0, "could not start hintrun");
    cr_expect_eq(res.status, 0, "%s %s with %d ranks on %d nodes failed (status %d):\n%s", c->op, c->mode, c->np,
                 c->nodes, res.status, res.output);
    if (!c->mode[0] && has_node_only(c->op)) {
        cr_expect(strstr(res.output, "node-only algorithm refusals on groups spanning nodes") != NULL,
                  "%s, %d ranks on %d nodes: no count of refusals:\n%s", c->op, c->np, c->nodes, res.output);
        cr_expect(strstr(res.output, "needs every member on one node") != NULL,
                  "%s, %d ranks on %d nodes: a refused algorithm did not say why:\n%s", c->op, c->np, c->nodes,
                  res.output);
    }
    free(res.output);
}

/* Derived datatypes beyond typed_coll (reductions, gather/scatter, v variants, in place) across
   nodes: every algorithm that can run on the spanning world. */
ParameterizedTestParameters(coll_nodes, derived_more)
{
    static const int cases[][2] = {{5, 2}, {8, 3}, {3, 2}};
    return cr_make_param_array(int[2], cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(int (*c)[2], coll_nodes, derived_more, .timeout = 600)
{
    char nodes[16];
    snprintf(nodes, sizeof nodes, "%d", (*c)[1]);
    const char *const opts[] = {"--nodes", nodes, NULL};
    const char *argv[] = {job_build_path("tests/ranks/typed_more"), NULL};
    const char *const env[] = {"FI_PROVIDER=tcp", "FI_TCP_IFACE=lo", NULL};
    struct job_result res;
    cr_assert_eq(job_run(opts, (*c)[0], argv, getenv("FI_PROVIDER") ? NULL : env, &res), 0, "could not start hintrun");
    cr_expect_eq(res.status, 0, "typed_more with %d ranks on %d nodes failed (status %d):\n%s", (*c)[0], (*c)[1],
                 res.status, res.output);
    free(res.output);
}

/* Derived types in alltoall(v), allgather(v) and bcast (typed_coll) on a world spanning nodes:
   every rank's HINT_COLL_STATS counts match what the algorithms that ran make it expect, and
   none of them copied straight from the layouts (only node-only algorithms do). */
ParameterizedTestParameters(coll_nodes, derived_types)
{
    static const int cases[][2] = {{5, 2}, {8, 3}, {3, 2}, {4, 4}};
    return cr_make_param_array(int[2], cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(int (*c)[2], coll_nodes, derived_types, .timeout = 900)
{
    char nodes[16];
    snprintf(nodes, sizeof nodes, "%d", (*c)[1]);
    const char *const opts[] = {"--nodes", nodes, NULL};
    const char *argv[] = {job_build_path("tests/ranks/typed_coll"), "heap", NULL};
    const char *const env[] = {"HINT_COLL_STATS=1", "FI_PROVIDER=tcp", "FI_TCP_IFACE=lo", NULL};
    const char *const stats_only[] = {"HINT_COLL_STATS=1", NULL};
    struct job_result res;
    cr_assert_eq(job_run(opts, (*c)[0], argv, getenv("FI_PROVIDER") ? stats_only : env, &res), 0,
                 "could not start hintrun");
    cr_expect_eq(res.status, 0, "typed_coll with %d ranks on %d nodes failed (status %d):\n%s", (*c)[0], (*c)[1],
                 res.status, res.output);
    for (int r = 0; r < (*c)[0]; r++) {
        char key[64];
        unsigned long want[2], got[2];
        snprintf(key, sizeof key, "rank %d: expect direct ", r);
        const char *w = strstr(res.output, key);
        snprintf(key, sizeof key, "hint[rank %d] coll: ", r);
        const char *g = strstr(res.output, key);
        g = g ? strstr(g, "calls: ") : NULL;
        cr_assert(w && g && sscanf(w, "rank %*d: expect direct %lu, packed %lu", &want[0], &want[1]) == 2 &&
                      sscanf(g, "calls: %lu copied straight from and to the layouts, %lu staged", &got[0], &got[1]) == 2,
                  "rank %d's counts missing:\n%s", r, res.output);
        cr_expect(want[0] == got[0] && want[1] == got[1], "rank %d expected direct %lu packed %lu, stats say %lu %lu", r,
                  want[0], want[1], got[0], got[1]);
        cr_expect(got[0] == 0 && got[1] > 0, "rank %d: %lu direct, %lu packed across nodes", r, got[0], got[1]);
    }
    free(res.output);
}

/* HINT_COLL_CHECK=1 across nodes: members that disagree get HINT_ERR_MISMATCH, said by a rank
   (tests/ranks/mismatch.c checked; its other mode forces node-only algorithms). */
ParameterizedTestParameters(coll_nodes, mismatch_checked)
{
    static const int cases[][2] = {{5, 2}, {8, 3}, {3, 2}, {4, 4}};
    return cr_make_param_array(int[2], cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(int (*c)[2], coll_nodes, mismatch_checked, .timeout = 300)
{
    char nodes[16];
    snprintf(nodes, sizeof nodes, "%d", (*c)[1]);
    const char *const opts[] = {"--nodes", nodes, NULL};
    const char *argv[] = {job_build_path("tests/ranks/mismatch"), "checked", NULL};
    const char *const env[] = {"HINT_COLL_CHECK=1", "FI_PROVIDER=tcp", "FI_TCP_IFACE=lo", NULL};
    const char *const check_only[] = {"HINT_COLL_CHECK=1", NULL};
    struct job_result res;
    cr_assert_eq(job_run(opts, (*c)[0], argv, getenv("FI_PROVIDER") ? check_only : env, &res), 0,
                 "could not start hintrun");
    cr_expect_eq(res.status, 0, "mismatch checked with %d ranks on %d nodes failed (status %d):\n%s", (*c)[0], (*c)[1],
                 res.status, res.output);
    cr_expect(strstr(res.output, "HINT_ERR_MISMATCH") != NULL, "no rank said why:\n%s", res.output);
    free(res.output);
}

/* HINT_AUTOTUNE=1 on a world spanning nodes: the trials never run a shared-heap order (they
   need one node); the defaults' message-based choice runs, right, on every rank alike
   (tests/ranks/autotune.c checks both when HINT_NNODES > 1). */
ParameterizedTestParameters(coll_nodes, autotune)
{
    static const int cases[][2] = {{5, 2}, {8, 3}, {4, 4}};
    return cr_make_param_array(int[2], cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(int (*c)[2], coll_nodes, autotune, .timeout = 300)
{
    char nodes[16];
    snprintf(nodes, sizeof nodes, "%d", (*c)[1]);
    const char *const opts[] = {"--nodes", nodes, NULL};
    const char *argv[] = {job_build_path("tests/ranks/autotune"), NULL};
    const char *const env[] = {"HINT_AUTOTUNE=1", "FI_PROVIDER=tcp", "FI_TCP_IFACE=lo", NULL};
    const char *const tune_only[] = {"HINT_AUTOTUNE=1", NULL};
    struct job_result res;
    cr_assert_eq(job_run(opts, (*c)[0], argv, getenv("FI_PROVIDER") ? tune_only : env, &res), 0,
                 "could not start hintrun");
    cr_expect_eq(res.status, 0, "autotune with %d ranks on %d nodes failed (status %d):\n%s", (*c)[0], (*c)[1],
                 res.status, res.output);
    cr_expect(strstr(res.output, "ok autotune") != NULL, "no ok line:\n%s", res.output);
    free(res.output);
}
