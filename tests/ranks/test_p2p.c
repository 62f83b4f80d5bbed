/*
 * tests/ranks/test_p2p.c — end-to-end point-to-point, group and life-cycle tests: each case runs
 * real ranks under hintrun for P in {1, 2, 3, 4, 5, 8, 16} and asserts the job's exit status
 * (every rank checks its own data) and that no shared-memory object of the job is left.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <string.h>

#include "tests/common/job.h"

static void run_ok(int np, const char *const argv[])
{
    struct job_result res;
    cr_assert_eq(job_run(NULL, np, argv, NULL, &res), 0, "could not start hintrun");
    cr_expect_eq(res.status, 0, "%s with %d ranks failed with status %d:\n%s", argv[0], np, res.status,
                 res.output);
    cr_expect_eq(job_shm_left(&res), 0, "job left shared memory behind or printed no jobid:\n%s", res.output);
    free(res.output);
}

static const char *prog(void) { return job_build_path("tests/ranks/p2p_patterns"); }

#define P2P_CASE(name, ...)                                                                       \
    ParameterizedTestParameters(p2p, name)                                                        \
    {                                                                                             \
        static int ps[] = {1, 2, 3, 4, 5, 8, 16};                                                 \
        return cr_make_param_array(int, ps, sizeof ps / sizeof ps[0]);                            \
    }                                                                                             \
    ParameterizedTest(int *np, p2p, name, .timeout = 120)                                         \
    {                                                                                             \
        const char *argv[] = {prog(), __VA_ARGS__, NULL};                                         \
        run_ok(*np, argv);                                                                        \
    }

P2P_CASE(ring_0_bytes, "ring", "0")
P2P_CASE(ring_1_byte, "ring", "1")
P2P_CASE(ring_eager, "ring", "1000")
P2P_CASE(ring_rendezvous, "ring", "1000003")
P2P_CASE(allpairs_small, "allpairs", "7")
P2P_CASE(allpairs_large, "allpairs", "65536")
P2P_CASE(anysource, "anysource")
P2P_CASE(many_outstanding, "many")
P2P_CASE(order, "order")
P2P_CASE(truncate, "truncate")
P2P_CASE(badargs, "badargs")
P2P_CASE(testpoll, "testpoll")
P2P_CASE(flood_unexpected, "flood")

/* A blocking receive polling one peer's cell (recv_now) must not stall a third rank whose channel
   to the receiver is full: tests/ranks/p2p_patterns stall, with a yield budget (10 s) far beyond
   the 3 s the case gives the stalled sends, so only a progress pass the receiver is told to make
   lets them through in time. */
ParameterizedTestParameters(p2p, full_channel_not_stalled_by_polling_receiver)
{
    static int ps[] = {3, 4};
    return cr_make_param_array(int, ps, sizeof ps / sizeof ps[0]);
}

ParameterizedTest(int *np, p2p, full_channel_not_stalled_by_polling_receiver, .timeout = 120)
{
    const char *argv[] = {prog(), "stall", NULL};
    const char *const extra[] = {"HINT_WAIT_SPIN_US=0", "HINT_WAIT_YIELD_US=10000000", NULL};
    struct job_result res;
    cr_assert_eq(job_run(NULL, *np, argv, extra, &res), 0, "could not start hintrun");
    cr_expect_eq(res.status, 0, "%d ranks failed with status %d:\n%s", *np, res.status, res.output);
    cr_expect(strstr(res.output, "ok stall") != NULL, "%d ranks did not finish:\n%s", *np, res.output);
    cr_expect_eq(job_shm_left(&res), 0, "job left shared memory behind or printed no jobid:\n%s", res.output);
    free(res.output);
}

/* 64 MiB through the bounded channels: memory stays flat, data arrives intact (up to 4 ranks:
   beyond, 2 x 64 MiB of buffers per rank is more than this 2-core box should hold per test) */
ParameterizedTestParameters(p2p, ring_64MiB)
{
    static int ps[] = {1, 2, 3, 4};
    return cr_make_param_array(int, ps, sizeof ps / sizeof ps[0]);
}

ParameterizedTest(int *np, p2p, ring_64MiB, .timeout = 200)
{
    const char *argv[] = {prog(), "ring", "67108864", NULL};
    run_ok(*np, argv);
}

ParameterizedTestParameters(groups, all)
{
    static int ps[] = {1, 2, 3, 4, 5, 8, 16};
    return cr_make_param_array(int, ps, sizeof ps / sizeof ps[0]);
}

ParameterizedTest(int *np, groups, all, .timeout = 120)
{
    const char *argv[] = {job_build_path("tests/ranks/groups"), NULL};
    run_ok(*np, argv);
}

Test(lifecycle, under_hintrun, .timeout = 60)
{
    const char *argv[] = {job_build_path("tests/ranks/lifecycle"), NULL};
    struct job_result res;
    cr_assert_eq(job_run(NULL, 3, argv, NULL, &res), 0);
    cr_expect_eq(res.status, 0, "%s", res.output);
    cr_expect(strstr(res.output, "ok lifecycle rank 2 of 3") != NULL, "%s", res.output);
    free(res.output);
}

/* The shared heap, the shm transport's paths and an injected socket map are one node's things:
   these cases stay on one node when HINT_TEST_NODES reruns the suite across virtual nodes. */
static const char *const one_node[] = {"--nodes", "1", NULL};

Test(groups, split_by_injected_sockets, .timeout = 60)
{
    char env[4200];
    const char *root = getenv("HINT_TEST_SOURCE_ROOT");
    snprintf(env, sizeof env, "HINT_TOPO_FILE=%s/tests/ranks/topo4.txt", root ? root : ".");
    const char *const extra[] = {env, NULL};
    const char *argv[] = {job_build_path("tests/ranks/groups"), NULL};
    struct job_result res;
    cr_assert_eq(job_run(one_node, 4, argv, extra, &res), 0);
    cr_expect_eq(res.status, 0, "%s", res.output);
    free(res.output);
}

/* ---- the shared heap (tests/ranks/heap.c) ---- */



static void run_heap(int np, const char *mode, const char *const env[])
{
    const char *argv[] = {job_build_path("tests/ranks/heap"), mode, NULL};
    struct job_result res;
    cr_assert_eq(job_run(one_node, np, argv, env, &res), 0);
    cr_expect_eq(res.status, 0, "heap %s with %d ranks failed (status %d):\n%s", mode, np, res.status, res.output);
    free(res.output);
}

ParameterizedTestParameters(heap, basics)
{
    static int ps[] = {1, 2, 3, 4, 8};
    return cr_make_param_array(int, ps, sizeof ps / sizeof ps[0]);
}
ParameterizedTest(int *np, heap, basics, .timeout = 60) { run_heap(*np, "basics", NULL); }

Test(heap, threads, .timeout = 120) { run_heap(2, "threads", NULL); }

Test(heap, first_calls_reserve_little, .timeout = 60) { run_heap(4, "reserve", NULL); }

/* Huge callocs: fresh memory left as it is (few page faults), reused memory cleared. */
ParameterizedTestParameters(heap, calloc_fresh_and_reused)
{
    static int ps[] = {1, 2};
    return cr_make_param_array(int, ps, sizeof ps / sizeof ps[0]);
}
ParameterizedTest(int *np, heap, calloc_fresh_and_reused, .timeout = 120) { run_heap(*np, "calloc", NULL); }

Test(heap, exhausted_partition_falls_back, .timeout = 60)
{
    const char *const env[] = {"HINT_HEAP_SIZE=64M", NULL};
    run_heap(2, "exhaust", env);
}

Test(heap, exhausted_partition_strict_gives_null, .timeout = 60)
{
    const char *const env[] = {"HINT_HEAP_SIZE=64M", "HINT_HEAP_STRICT=1", NULL};
    run_heap(2, "exhaust", env);
}

/* Every buffer kind with every rendezvous path forced, and the automatic choice. */
struct path_case {
    char path[16];
    int np;
};

ParameterizedTestParameters(p2p, buffer_kinds_and_paths)
{
    static const char *paths[] = {"auto", "heap", "cma", "bounce"};
    static const int nps[] = {1, 2, 3, 5};
    struct path_case *c = cr_malloc(16 * sizeof *c);
    size_t k = 0;
    for (size_t i = 0; i < 4; i++)
        for (size_t j = 0; j < 4; j++) {
            snprintf(c[k].path, sizeof c[k].path, "%s", paths[i]);
            c[k++].np = nps[j];
        }
    return cr_make_param_array(struct path_case, c, k, NULL);
}

ParameterizedTest(struct path_case *c, p2p, buffer_kinds_and_paths, .timeout = 120)
{
    char env[64];
    snprintf(env, sizeof env, "HINT_P2P_PATH=%s", c->path);
    const char *const extra[] = {env, "HINT_P2P_STATS=1", NULL};
    const char *argv[] = {prog(), "buffers", NULL};
    struct job_result res;
    cr_assert_eq(job_run(one_node, c->np, argv, extra, &res), 0);
    cr_expect_eq(res.status, 0, "path %s, %d ranks:\n%s", c->path, c->np, res.output);
    cr_expect(strstr(res.output, "refused") == NULL, "CMA was refused here:\n%s", res.output);
    /* 16 large sends per rank: heap-to-any, 4 from the heap; cma: the other 12 (or all 16) */
    const char *want = !strcmp(c->path, "heap")   ? "heap 4, cma 0, bounce 12"
                       : !strcmp(c->path, "cma")  ? "heap 0, cma 16, bounce 0"
                       : !strcmp(c->path, "bounce") ? "heap 0, cma 0, bounce 16"
                                                     : "heap 4, cma 12, bounce 0";
    cr_expect(strstr(res.output, want) != NULL, "path %s should give '%s':\n%s", c->path, want, res.output);
    free(res.output);
}

/* Derived datatypes in point to point and collectives (tests/ranks/derived.c). */
ParameterizedTestParameters(derived, p2p_and_collectives)
{
    static int ps[] = {1, 2, 3, 4, 5, 8};
    return cr_make_param_array(int, ps, sizeof ps / sizeof ps[0]);
}

ParameterizedTest(int *np, derived, p2p_and_collectives, .timeout = 120)
{
    const char *argv[] = {job_build_path("tests/ranks/derived"), NULL};
    struct job_result res;
    cr_assert_eq(job_run(NULL, *np, argv, NULL, &res), 0);
    cr_expect_eq(res.status, 0, "%d ranks:\n%s", *np, res.output);
    free(res.output);
}
