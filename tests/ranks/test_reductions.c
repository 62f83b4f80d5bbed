/*
 * tests/ranks/test_reductions.c — scan, exscan, reduce_scatter, alltoallw, MINLOC/MAXLOC and the
 * pair types (tests/ranks/scan), and user-defined ops in every reduction algorithm, an op that
 * does not commute included (tests/ranks/user_op), under hintrun for P in {1, 2, 3, 4, 5, 7, 8, 16}.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <string.h>

#include "tests/common/job.h"

ParameterizedTestParameters(reductions, scan)
{
    static int ps[] = {1, 2, 3, 4, 5, 7, 8, 16};
    return cr_make_param_array(int, ps, sizeof ps / sizeof ps[0]);
}

static void run_rank_program(const char *prog, const char *done, int np)
{
    const char *argv[] = {job_build_path(prog), NULL};
    struct job_result res;
    cr_assert_eq(job_run(NULL, np, argv, NULL, &res), 0, "could not start hintrun");
    cr_expect_eq(res.status, 0, "%s with %d ranks failed (status %d, %.1f s):\n%s", prog, np, res.status,
                 res.seconds, res.output);
    cr_expect(strstr(res.output, done) != NULL, "%s with %d ranks did not finish:\n%s", prog, np, res.output);
    free(res.output);
}

ParameterizedTest(int *np, reductions, scan, .timeout = 300)
{
    run_rank_program("tests/ranks/scan", "ok scan", *np);
}

ParameterizedTestParameters(reductions, user_op)
{
    static int ps[] = {1, 2, 3, 4, 5, 7, 8, 16};
    return cr_make_param_array(int, ps, sizeof ps / sizeof ps[0]);
}

ParameterizedTest(int *np, reductions, user_op, .timeout = 300)
{
    run_rank_program("tests/ranks/user_op", "ok user_op", *np);
}
