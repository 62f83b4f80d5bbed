/*
 * tests/ranks/test_topo_misc.c — runs tests/ranks/topo_misc under hintrun: cart_sub, cart_get,
 * topo_test, graph neighbours, version, thread levels and error handlers (issue 20 items 4, 5)
 * for P in {1, 2, 4, 6, 8, 12}; then a fatal error on a row group and one under HINT_ERRORS=fatal,
 * which must end the job with the call's message and the error's code, leaving no shm objects.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <string.h>

#include "tests/common/job.h"

ParameterizedTestParameters(topo_misc, all)
{
    static int ps[] = {1, 2, 4, 6, 8, 12};
    return cr_make_param_array(int, ps, sizeof ps / sizeof ps[0]);
}

ParameterizedTest(int *np, topo_misc, all, .timeout = 200)
{
    const char *argv[] = {job_build_path("tests/ranks/topo_misc"), "all", NULL};
    struct job_result res;
    cr_assert_eq(job_run(NULL, *np, argv, NULL, &res), 0, "could not start hintrun");
    cr_expect_eq(res.status, 0, "topo_misc with %d ranks failed (status %d, %.1f s):\n%s", *np, res.status,
                 res.seconds, res.output);
    cr_expect(strstr(res.output, "ok topo_misc") != NULL, "topo_misc with %d ranks did not finish:\n%s", *np,
              res.output);
    free(res.output);
}

ParameterizedTestParameters(topo_misc, fatal)
{
    static int ps[] = {1, 2, 4};
    return cr_make_param_array(int, ps, sizeof ps / sizeof ps[0]);
}

/* HINT_ERRORS_ARE_FATAL on a row group: rank 1 (rank 0 alone at P = 1) sends to a rank past the
   group; the others wait in a receive from it. HINT_ERR_RANK is 4. */
ParameterizedTest(int *np, topo_misc, fatal, .timeout = 60)
{
    const char *argv[] = {job_build_path("tests/ranks/topo_misc"), "fatal", NULL};
    struct job_result res;
    int who = *np == 1 ? 0 : 1;
    char want[160];
    cr_assert_eq(job_run(NULL, *np, argv, NULL, &res), 0, "could not start hintrun");
    cr_expect_eq(res.status, 4, "a fatal error at P=%d: status %d, not HINT_ERR_RANK's 4:\n%s", *np, res.status,
                 res.output);
    snprintf(want, sizeof want, "hint[rank %d] fatal error in hint_send on group ", who);
    cr_expect(strstr(res.output, want) != NULL, "no '%s' in:\n%s", want, res.output);
    snprintf(want, sizeof want, "(%d ranks), rank %d of it: invalid rank (code 4)", *np, who);
    cr_expect(strstr(res.output, want) != NULL, "no '%s' in:\n%s", want, res.output);
    cr_expect(strstr(res.output, "returned") == NULL, "a call returned on a fatal group:\n%s", res.output);
    cr_expect_eq(job_shm_left(&res), 0, "shm objects left behind:\n%s", res.output);
    free(res.output);
}

/* HINT_ERRORS=fatal for the whole job: a bad tag on the world (HINT_ERR_TAG is 15). */
Test(topo_misc, env_fatal, .timeout = 60)
{
    const char *argv[] = {job_build_path("tests/ranks/topo_misc"), "env-fatal", NULL};
    const char *env[] = {"HINT_ERRORS=fatal", NULL};
    struct job_result res;
    cr_assert_eq(job_run(NULL, 3, argv, env, &res), 0, "could not start hintrun");
    cr_expect_eq(res.status, 15, "status %d, not HINT_ERR_TAG's 15:\n%s", res.status, res.output);
    cr_expect(strstr(res.output, "fatal error in hint_send on HINT_WORLD (3 ranks), rank ") != NULL,
              "no message naming the call and the world:\n%s", res.output);
    cr_expect(strstr(res.output, "invalid tag (code 15)") != NULL, "no message:\n%s", res.output);
    cr_expect_eq(job_shm_left(&res), 0, "shm objects left behind:\n%s", res.output);
    free(res.output);
}

/* A wait's error is raised on its request's group: a FATAL dup of a RETURN world. */
Test(topo_misc, fatal_wait, .timeout = 60)
{
    const char *argv[] = {job_build_path("tests/ranks/topo_misc"), "fatal-wait", NULL};
    struct job_result res;
    cr_assert_eq(job_run(NULL, 3, argv, NULL, &res), 0, "could not start hintrun");
    cr_expect_eq(res.status, 8, "status %d, not HINT_ERR_TRUNCATE's 8:\n%s", res.status, res.output);
    cr_expect(strstr(res.output, "hint[rank 1] fatal error in hint_wait on group ") != NULL &&
                  strstr(res.output, "(3 ranks), rank 1 of it: message truncated") != NULL,
              "no message naming hint_wait, the dup and rank 1:\n%s", res.output);
    cr_expect_eq(job_shm_left(&res), 0, "shm objects left behind:\n%s", res.output);
    free(res.output);
}
