/*
 * tests/ranks/test_p2p_extra.c — probes, matched probes, synchronous sends, the completion calls
 * over arrays, cancel and persistent requests end to end: runs tests/ranks/p2p_extra's cases
 * under hintrun for P in {1, 2, 3, 4, 5, 8, 16}, and across virtual nodes (hintrun --nodes K: the
 * ranks of other nodes reached through libfabric, tcp over loopback unless FI_PROVIDER says
 * otherwise), and asserts the job's exit status (every rank checks its own data), that it
 * finished, that finalize found no request left incomplete, and that no shared-memory object of
 * the job is left.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/common/job.h"

/* nodes 1: one node, no hintrun option */
static void run_case(int np, int nodes, const char *what)
{
    const char *argv[] = {job_build_path("tests/ranks/p2p_extra"), what, NULL};
    char nodes_arg[16];
    snprintf(nodes_arg, sizeof nodes_arg, "%d", nodes);
    const char *const opts[] = {"--nodes", nodes_arg, NULL};
    const char *env[] = {getenv("FI_PROVIDER") ? NULL : "FI_PROVIDER=tcp", NULL, NULL};
    if (env[0])
        env[1] = "FI_TCP_IFACE=lo";
    struct job_result res;
    char done[64];
    snprintf(done, sizeof done, "ok %s", what);
    cr_assert_eq(job_run(nodes > 1 ? opts : NULL, np, argv, nodes > 1 && env[0] ? env : NULL, &res), 0,
                 "could not start hintrun");
    cr_expect_eq(res.status, 0, "p2p_extra %s with %d ranks on %d nodes failed (status %d, %.1f s):\n%s", what, np,
                 nodes, res.status, res.seconds, res.output);
    cr_expect(strstr(res.output, done) != NULL, "p2p_extra %s with %d ranks did not finish:\n%s", what, np,
              res.output);
    cr_expect(strstr(res.output, "never completed") == NULL, "p2p_extra %s with %d ranks left requests:\n%s", what,
              np, res.output);
    cr_expect_eq(job_shm_left(&res), 0, "job left shared memory behind or printed no jobid:\n%s", res.output);
    free(res.output);
}

struct shape {
    int np, nodes;
};

#define EXTRA_CASE(name)                                                                          \
    ParameterizedTestParameters(p2p_extra, name)                                                  \
    {                                                                                             \
        static int ps[] = {1, 2, 3, 4, 5, 8, 16};                                                 \
        return cr_make_param_array(int, ps, sizeof ps / sizeof ps[0]);                            \
    }                                                                                             \
    ParameterizedTest(int *np, p2p_extra, name, .timeout = 240) { run_case(*np, 1, #name); }  \
    ParameterizedTestParameters(p2p_extra_nodes, name)                                            \
    {                                                                                             \
        static struct shape shapes[] = {{3, 2}, {5, 3}, {4, 4}};                                  \
        return cr_make_param_array(struct shape, shapes, sizeof shapes / sizeof shapes[0]);       \
    }                                                                                             \
    ParameterizedTest(struct shape *s, p2p_extra_nodes, name, .timeout = 240) { run_case(s->np, s->nodes, #name); }

EXTRA_CASE(probe)
EXTRA_CASE(mprobe)
EXTRA_CASE(ssend)
EXTRA_CASE(complete)
EXTRA_CASE(cancel)
EXTRA_CASE(persistent)
EXTRA_CASE(detach)
