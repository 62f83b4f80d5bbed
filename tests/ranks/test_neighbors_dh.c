/*
 * tests/ranks/test_neighbors_dh.c — hint_graph_create, neighbor_allgather distance_halving and
 * the morton neighbourhood collectives end to end: runs tests/ranks/neighbors_dh under hintrun for P in {1, 2, 3, 4, 5, 7, 8, 16}, with
 * HINT_VIRTUAL_SOCKETS = P (one rank per socket: every halving step runs down to single ranks),
 * = 2 (one halving step, then the intra-socket phase on halves) and 0 (hwloc's packages; on a
 * one-package machine no halving at all). Under HINT_TEST_NODES (ranks spread over virtual
 * nodes, distance_halving uses messages only; morton must be refused there) P = 7 and 8 with one
 * rank per socket run.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/common/job.h"

struct dh_case {
    int np, vsockets, quick;
};

ParameterizedTestParameters(neighbors_dh, run)
{
    static struct dh_case cases[] = {{1, 1, 0}, {2, 2, 0}, {3, 3, 0}, {4, 4, 0}, {4, 2, 1}, {5, 5, 0},
                                     {7, 7, 1}, {8, 8, 0}, {8, 2, 1}, {8, 0, 1}, {16, 16, 1}};
    return cr_make_param_array(struct dh_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct dh_case *c, neighbors_dh, run, .timeout = 300)
{
    if (getenv("HINT_TEST_NODES") && (c->vsockets != c->np || (c->np != 7 && c->np != 8)))
        cr_skip_test("P=%d: across nodes only P = 7 and 8 with every halving step (CI time)", c->np);
    char env0[64];
    snprintf(env0, sizeof env0, "HINT_VIRTUAL_SOCKETS=%d", c->vsockets);
    const char *const env[] = {env0, NULL};
    const char *argv[4] = {job_build_path("tests/ranks/neighbors_dh")}, **a = argv + 1;
    if (c->quick)
        *a++ = "--quick";
    if (getenv("HINT_TEST_NODES"))
        *a++ = "--nodes";
    struct job_result res;
    cr_assert_eq(job_run(NULL, c->np, argv, env, &res), 0, "could not start hintrun");
    cr_expect_eq(res.status, 0, "neighbors_dh P=%d %s failed (status %d, %.1f s):\n%s", c->np, env0, res.status,
                 res.seconds, res.output);
    cr_expect(strstr(res.output, "ok neighbors_dh") != NULL, "neighbors_dh P=%d %s did not finish:\n%s", c->np, env0,
              res.output);
    free(res.output);
}
