/*
 * tests/ranks/test_coll_hier.c — the hierarchical algorithms (`hier` of barrier, bcast, reduce,
 * allreduce, allgather, allgatherv; `hier_hint`, `hier_hint_overlap` and `hier_morton` of
 * alltoall and alltoallv; collectives/hier.h) against tests/ranks/coll_check's references, with
 * HINT_TEST_ALGS=hier so that only they run: on the world, a split in reversed odd/even order
 * (the nodes' members not consecutive), a split of every third rank (spanning the nodes
 * unevenly) and each node's own group, in place and not.
 * The CI cases are few (coll_check's full runs in ranks-coll-nodes already force every
 * algorithm, these among them, at 5/2, 8/3, 3/2 and 4/4): one node, one rank per node, buffers
 * off the shared heap. HINT_TEST_HIER_ALL=1 (suite nodes-rerun) runs the whole matrix: nodes
 * 1-4 x ranks per node 1-3, even and uneven, heap and mmap buffers, sizes 0 B to 1 MiB.
 * allgatherv runs twice: with coll_check's gapped, reversed layout (counts with zeros; the blocks
 * go through a packed buffer) and with HINT_TEST_VDENSE=1's prefix sums (packed in place).
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/common/job.h"

struct hier_case {
    char op[16];
    int np, nodes;
    bool mmap, dense;
};

static const char *const ops[] = {"barrier", "bcast", "reduce", "allreduce", "allgather", "allgatherv", "allgatherv",
                                  "alltoall", "alltoallv"};
#define NOPS (sizeof ops / sizeof ops[0])

/* P, nodes, buffers off the heap: CI's few ... */
static const int few[][3] = {{3, 1, 0}, {2, 2, 0}, {5, 2, 1}};
/* ... and the matrix: every node count 1-4 at 1-3 ranks per node, uneven splits (hintrun gives
   the first nodes one rank more), heap and mmap buffers. */
static const int all[][3] = {{1, 1, 0}, {2, 1, 1}, {3, 1, 0}, {2, 2, 1}, {4, 2, 0}, {6, 2, 1}, {3, 2, 0},
                             {5, 2, 0}, {3, 3, 0}, {6, 3, 1}, {9, 3, 0}, {7, 3, 1}, {4, 4, 1}, {8, 4, 0},
                             {12, 4, 0}, {10, 4, 1}, {6, 4, 0}};

ParameterizedTestParameters(coll_hier, against_reference)
{
    bool every = getenv("HINT_TEST_HIER_ALL") && atoi(getenv("HINT_TEST_HIER_ALL"));
    const int(*shapes)[3] = every ? all : few;
    size_t ns = every ? sizeof all / sizeof all[0] : sizeof few / sizeof few[0], k = 0;
    struct hier_case *cases = cr_malloc(NOPS * ns * sizeof *cases);
    for (size_t j = 0; j < ns; j++)
        for (size_t i = 0; i < NOPS; i++) {
            /* the second allgatherv: the dense layout */
            bool dense = i > 0 && !strcmp(ops[i], ops[i - 1]);
            cases[k] = (struct hier_case){.np = shapes[j][0], .nodes = shapes[j][1], .mmap = shapes[j][2], .dense = dense};
            snprintf(cases[k++].op, sizeof cases[0].op, "%s", ops[i]);
        }
    return cr_make_param_array(struct hier_case, cases, k, NULL);
}

ParameterizedTest(struct hier_case *c, coll_hier, against_reference, .timeout = 900)
{
    bool every = getenv("HINT_TEST_HIER_ALL") && atoi(getenv("HINT_TEST_HIER_ALL"));
    char nodes[16];
    snprintf(nodes, sizeof nodes, "%d", c->nodes);
    const char *const opts[] = {"--nodes", nodes, NULL};
    const char *argv[] = {job_build_path("tests/ranks/coll_check"), c->op, NULL};
    const char *env[] = {"HINT_TEST_ALGS=hier",
                         every ? "HINT_TEST_SIZES=0,1,8,100,4096,65536,1048576" : "HINT_TEST_SIZES=0,8,4096,65536",
                         c->mmap ? "HINT_TEST_BUFFERS=mmap" : "HINT_TEST_BUFFERS=heap",
                         getenv("FI_PROVIDER") ? "HINT_TEST_UNUSED=1" : "FI_PROVIDER=tcp", "FI_TCP_IFACE=lo",
                         c->dense ? "HINT_TEST_VDENSE=1" : "HINT_TEST_VDENSE=0", NULL};
    struct job_result res;
    cr_assert_eq(job_run(opts, c->np, argv, env, &res), 0, "could not start hintrun");
    cr_expect_eq(res.status, 0, "%s%s with %d ranks on %d nodes (%s buffers) failed (status %d):\n%s", c->op,
                 c->dense ? " (dense)" : "", c->np, c->nodes, c->mmap ? "mmap" : "heap", res.status, res.output);
    char want[64];
    snprintf(want, sizeof want, "ok %s", c->op);
    cr_expect(strstr(res.output, want) != NULL, "%s: no '%s' in:\n%s", c->op, want, res.output);
    free(res.output);
}
