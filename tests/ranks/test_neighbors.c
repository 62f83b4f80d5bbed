/*
 * tests/ranks/test_neighbors.c — virtual topologies and neighbourhood collectives end to end: runs
 * tests/ranks/neighbors (carts, graphs, their queries and errors, the four neighbour collectives
 * checked against a reference model on every rank) under hintrun for P in {1, 2, 3, 4, 5, 6, 8}.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <string.h>

#include "tests/common/job.h"

ParameterizedTestParameters(neighbors, all)
{
    static int ps[] = {1, 2, 3, 4, 5, 6, 8};
    return cr_make_param_array(int, ps, sizeof ps / sizeof ps[0]);
}

ParameterizedTest(int *np, neighbors, all, .timeout = 150)
{
    const char *argv[] = {job_build_path("tests/ranks/neighbors"), NULL};
    struct job_result res;
    cr_assert_eq(job_run(NULL, *np, argv, NULL, &res), 0, "could not start hintrun");
    cr_expect_eq(res.status, 0, "neighbors with %d ranks failed (status %d, %.1f s):\n%s", *np, res.status,
                 res.seconds, res.output);
    cr_expect(strstr(res.output, "ok neighbors") != NULL, "neighbors with %d ranks did not finish:\n%s", *np,
              res.output);
    free(res.output);
}
