/*
 * tests/ranks/test_coll.c — every algorithm of every collective against its reference, for P in
 * {1, 2, 3, 4, 5, 7, 8, 16}: one job per (operation, P); the ranks check their own results.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/common/job.h"

struct coll_case {
    char op[32];
    int np;
};

static const char *const ops[] = {"barrier",   "bcast",    "reduce",     "allreduce", "gather",
                                  "gatherv",   "scatter",  "scatterv",   "allgather", "allgatherv",
                                  "alltoall",  "alltoallv", "reduce_scatter_block", "errors"};
static const int nps[] = {1, 2, 3, 4, 5, 7, 8, 16};

/* HINT_TEST_NODES=K (tests/common/job.c) reruns these jobs across K virtual nodes: a job of np
   ranks then spans min(K, np) nodes, where the node-only algorithms cannot run. */
static bool spans_nodes(int np)
{
    const char *k = getenv("HINT_TEST_NODES");
    return k && atoi(k) > 1 && np > 1;
}

ParameterizedTestParameters(coll, algorithms)
{
    size_t nops = sizeof ops / sizeof ops[0], nnp = sizeof nps / sizeof nps[0];
    struct coll_case *cases = cr_malloc(nops * nnp * sizeof *cases);
    size_t k = 0;
    for (size_t i = 0; i < nops; i++)
        for (size_t j = 0; j < nnp; j++) {
            snprintf(cases[k].op, sizeof cases[k].op, "%s", ops[i]);
            cases[k++].np = nps[j];
        }
    return cr_make_param_array(struct coll_case, cases, k, NULL);
}

/* Runs argv at np ranks (hintrun options opts, extra environment env) and expects exit status 0
   and, when ok_line is given, that line in the output; `what` names the case in a failure. */
static void run_ok(const char *const opts[], int np, const char *const argv[], const char *const env[],
                   const char *ok_line, const char *what)
{
    struct job_result res;
    cr_assert_eq(job_run(opts, np, argv, env, &res), 0, "could not start hintrun");
    cr_expect_eq(res.status, 0, "%s, %d ranks: status %d:\n%s", what, np, res.status, res.output);
    if (ok_line)
        cr_expect(strstr(res.output, ok_line) != NULL, "%s, %d ranks: no '%s' line:\n%s", what, np, ok_line,
                  res.output);
    free(res.output);
}

ParameterizedTest(struct coll_case *c, coll, algorithms, .timeout = 900)
{
    const char *argv[] = {job_build_path("tests/ranks/coll_check"), c->op, NULL};
    run_ok(NULL, c->np, argv, NULL, NULL, c->op);
}

/* The same with every buffer off the shared heap: private mmaps at 3 ranks, a static array at 4. */
struct coll_mmap_case {
    char op[32];
    int np;
};

ParameterizedTestParameters(coll, algorithms_off_heap)
{
    size_t nops = sizeof ops / sizeof ops[0] - 1; /* not "errors" */
    struct coll_mmap_case *cases = cr_malloc(nops * 2 * sizeof *cases);
    size_t k = 0;
    for (size_t i = 0; i < nops; i++)
        for (int np = 3; np <= 4; np++) {
            snprintf(cases[k].op, sizeof cases[k].op, "%s", ops[i]);
            cases[k++].np = np;
        }
    return cr_make_param_array(struct coll_mmap_case, cases, k, NULL);
}

ParameterizedTest(struct coll_mmap_case *c, coll, algorithms_off_heap, .timeout = 900)
{
    const char *argv[] = {job_build_path("tests/ranks/coll_check"), c->op, NULL};
    const char *const env[] = {c->np == 3 ? "HINT_TEST_BUFFERS=mmap" : "HINT_TEST_BUFFERS=static", NULL};
    run_ok(NULL, c->np, argv, env, NULL, env[0]);
}

/* Issue 13: every algorithm on groups made, freed and made again, each reusing the freed
   group's collective slot, with new data each time; on the heap for every P, and with buffers
   in private mmaps (P=3) and a static array (P=4). */
struct regroup_case {
    char op[32];
    int np;
    char buffers[16];
};

ParameterizedTestParameters(coll, regroup)
{
    size_t nops = sizeof ops / sizeof ops[0] - 1, nnp = sizeof nps / sizeof nps[0];
    struct regroup_case *cases = cr_malloc(nops * (nnp + 2) * sizeof *cases);
    size_t k = 0;
    for (size_t i = 0; i < nops; i++) {
        for (size_t j = 0; j < nnp + 2; j++) {
            snprintf(cases[k].op, sizeof cases[k].op, "%s", ops[i]);
            cases[k].np = j < nnp ? nps[j] : (int)(j - nnp) + 3;
            snprintf(cases[k].buffers, sizeof cases[k].buffers, "%s", j < nnp ? "heap" : j == nnp ? "mmap" : "static");
            k++;
        }
    }
    return cr_make_param_array(struct regroup_case, cases, k, NULL);
}

ParameterizedTest(struct regroup_case *c, coll, regroup, .timeout = 300)
{
    char env[64];
    snprintf(env, sizeof env, "HINT_TEST_BUFFERS=%s", c->buffers);
    const char *const extra[] = {env, NULL};
    const char *argv[] = {job_build_path("tests/ranks/coll_check"), c->op, "regroup", NULL};
    struct job_result res;
    cr_assert_eq(job_run(NULL, c->np, argv, extra, &res), 0, "could not start hintrun");
    cr_expect_eq(res.status, 0, "%s regroup with %d ranks, %s buffers, failed (status %d):\n%s", c->op, c->np,
                 c->buffers, res.status, res.output);
    free(res.output);
}

/* Derived datatypes in the collectives typed_coll does not cover (reductions, gather/scatter and
   their v variants, in place), every algorithm, against the same calls on packed data. */
ParameterizedTestParameters(coll, derived_more)
{
    static int ps[] = {1, 2, 3, 4, 5, 7, 8};
    return cr_make_param_array(int, ps, sizeof ps / sizeof ps[0]);
}

ParameterizedTest(int *np, coll, derived_more, .timeout = 600)
{
    const char *argv[] = {job_build_path("tests/ranks/typed_more"), NULL};
    run_ok(NULL, *np, argv, NULL, NULL, "typed_more");
}

/* Collectives of 0 bytes (tests/ranks/empty_calls.c): success without touching a buffer, their
   argument errors still returned, the ranks still in step. */
ParameterizedTestParameters(coll, empty_calls)
{
    static int ps[] = {1, 2, 3, 5, 8};
    return cr_make_param_array(int, ps, sizeof ps / sizeof ps[0]);
}

ParameterizedTest(int *np, coll, empty_calls, .timeout = 300)
{
    const char *argv[] = {job_build_path("tests/ranks/empty_calls"), NULL};
    run_ok(NULL, *np, argv, NULL, NULL, "empty_calls");
}

/* Issue 13: members that disagree get HINT_ERR_MISMATCH (tests/ranks/mismatch.c): the shared-heap
   and staged algorithms on their own, every operation under HINT_COLL_CHECK=1. */
struct mismatch_case {
    char mode[16];
    int np;
};

ParameterizedTestParameters(coll, mismatch)
{
    static const int mnps[] = {2, 3, 4, 5, 8};
    size_t nnp = sizeof mnps / sizeof mnps[0];
    struct mismatch_case *cases = cr_malloc(2 * nnp * sizeof *cases);
    size_t k = 0;
    for (int m = 0; m < 2; m++)
        for (size_t j = 0; j < nnp; j++) {
            snprintf(cases[k].mode, sizeof cases[k].mode, "%s", m ? "checked" : "algorithms");
            cases[k++].np = mnps[j];
        }
    return cr_make_param_array(struct mismatch_case, cases, k, NULL);
}

ParameterizedTest(struct mismatch_case *c, coll, mismatch, .timeout = 300)
{
    if (!strcmp(c->mode, "algorithms") && spans_nodes(c->np))
        cr_skip_test("HINT_TEST_NODES: this mode forces node-only algorithms, which a world spanning nodes refuses "
                     "(coll_check asserts that)");
    const char *const extra[] = {!strcmp(c->mode, "checked") ? "HINT_COLL_CHECK=1" : "HINT_COLL_CHECK=0", NULL};
    const char *argv[] = {job_build_path("tests/ranks/mismatch"), c->mode, NULL};
    struct job_result res;
    cr_assert_eq(job_run(NULL, c->np, argv, extra, &res), 0, "could not start hintrun");
    cr_expect_eq(res.status, 0, "mismatch %s with %d ranks failed (status %d):\n%s", c->mode, c->np, res.status,
                 res.output);
    cr_expect(strstr(res.output, "HINT_ERR_MISMATCH") != NULL, "no rank said why:\n%s", res.output);
    free(res.output);
}

/* The HINT alltoall's orders under each copy mode for P in {1..8, 12, 16, 17} (issue 6's list):
   coll_check runs every alltoall algorithm at every size, in place and not, world and split. */
struct copy_case {
    char mode[16];
    int np;
};

ParameterizedTestParameters(coll, alltoall_copy_modes)
{
    static const char *modes[] = {"temporal", "nt", "hybrid"};
    static const int nps[] = {1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 17};
    size_t nnp = sizeof nps / sizeof nps[0];
    struct copy_case *c = cr_malloc(3 * nnp * sizeof *c);
    size_t k = 0;
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < nnp; j++) {
            snprintf(c[k].mode, sizeof c[k].mode, "%s", modes[i]);
            c[k++].np = nps[j];
        }
    return cr_make_param_array(struct copy_case, c, k, NULL);
}

ParameterizedTest(struct copy_case *c, coll, alltoall_copy_modes, .timeout = 900)
{
    char env[64];
    snprintf(env, sizeof env, "HINT_COPY=%s", c->mode);
    const char *const extra[] = {env, NULL};
    const char *argv[] = {job_build_path("tests/ranks/coll_check"), "alltoall", NULL};
    run_ok(NULL, c->np, argv, extra, NULL, env);
}

/* HINT_AUTOTUNE=1: trials, then one order kept by every rank (tests/ranks/autotune.c). */
ParameterizedTestParameters(coll, autotune)
{
    static int ps[] = {2, 3, 4, 8};
    return cr_make_param_array(int, ps, sizeof ps / sizeof ps[0]);
}

ParameterizedTest(int *np, coll, autotune, .timeout = 120)
{
    const char *argv[] = {job_build_path("tests/ranks/autotune"), NULL};
    const char *const env[] = {"HINT_AUTOTUNE=1", NULL};
    run_ok(NULL, *np, argv, env, NULL, "autotune");
}

/* The copy orders with buffers of every kind on both sides (heap, stack, static, mmap; issue 23),
   contiguous and derived: through CMA (derived: iovecs), and with CMA refused by a seccomp
   filter, pairwise / ring (tests/ranks/order_buffers.c). Each rank's HINT_COLL_STATS lines must
   count as many calls through CMA with derived types as the rank expects, and as many with a
   piece list copied to the heap (types committed before hint_init, of more than 2^20 pieces,
   every type under ASan) or, under HINT_HEAP=private, read through CMA. */
struct buffers_case {
    int np;
    bool refused;
    bool private_heap; /* HINT_HEAP=private: piece lists read through CMA */
};

ParameterizedTestParameters(coll, order_buffers)
{
    static struct buffers_case c[] = {{1, false, false}, {2, false, false}, {3, false, false}, {4, false, false},
                                      {5, false, false}, {8, false, false}, {3, true, false}, {3, false, true}};
    return cr_make_param_array(struct buffers_case, c, sizeof c / sizeof c[0]);
}

/* Rank r's "expect derived cma N" and the sum of its stats lines' "N through CMA with derived
   types"; false when the expectation is missing. */
static bool derived_cma_counts(const char *out, int r, unsigned long *want, unsigned long *got)
{
    char key[64];
    snprintf(key, sizeof key, "rank %d: expect derived cma ", r);
    const char *w = strstr(out, key);
    if (w == NULL || sscanf(w + strlen(key), "%lu", want) != 1)
        return false;
    *got = 0;
    snprintf(key, sizeof key, "hint[rank %d] coll: order_stats_report: ", r);
    for (const char *g = strstr(out, key); g; g = strstr(g + 1, key)) {
        unsigned long heap, cma, derived;
        const char *calls = strstr(g, "calls: ");
        if (calls && sscanf(calls, "calls: %lu on the shared heap, %lu through CMA (a buffer off the heap), %lu",
                            &heap, &cma, &derived) == 3)
            *got += derived;
    }
    return true;
}

/* Rank r's "expect lists copied N" (cma: "expect lists cma N") and the sum of its stats lines'
   "piece lists: N calls with one copied to the shared heap, M with one read through CMA" (N, or
   M); false when the expectation is missing. */
static bool lists_counts(const char *out, int r, bool cma, unsigned long *want, unsigned long *got)
{
    char key[64];
    snprintf(key, sizeof key, "rank %d: expect lists %s ", r, cma ? "cma" : "copied");
    const char *w = strstr(out, key);
    if (w == NULL || sscanf(w + strlen(key), "%lu", want) != 1)
        return false;
    *got = 0;
    snprintf(key, sizeof key, "hint[rank %d] coll: order_stats_report: ", r);
    for (const char *g = strstr(out, key); g; g = strstr(g + 1, key)) {
        unsigned long n[2];
        const char *lists = strstr(g, "piece lists: ");
        if (lists && sscanf(lists, "piece lists: %lu calls with one copied to the shared heap, %lu with one read "
                            "through CMA", &n[0], &n[1]) == 2)
            *got += n[cma];
    }
    return true;
}

ParameterizedTest(struct buffers_case *c, coll, order_buffers, .timeout = 600)
{
    if (spans_nodes(c->np))
        cr_skip_test("the copy orders need one node");
    const char *argv[] = {job_build_path("tests/ranks/order_buffers"), c->refused ? "refused" : NULL, NULL};
    const char *const env[] = {"HINT_COLL_STATS=1", c->private_heap ? "HINT_HEAP=private" : NULL, NULL};
    struct job_result res;
    cr_assert_eq(job_run(NULL, c->np, argv, env, &res), 0);
    if ((c->refused || c->private_heap) && strstr(res.output, "# SKIP"))
        cr_skip_test("%s", strstr(res.output, "# SKIP"));
    cr_expect_eq(res.status, 0, "%d ranks%s:\n%s", c->np, c->refused ? ", CMA refused" : "", res.output);
    /* each rank's HINT_COLL_STATS line names the path: CMA, or the fallback when refused (one
       rank: every call is trivial, no copy order runs) */
    const char *want = c->refused ? "fell back (CMA refused)" : "through CMA";
    if (c->np > 1)
        cr_expect(strstr(res.output, want) != NULL, "no '%s' in:\n%s", want, res.output);
    if (!c->refused && c->np > 1)
        cr_expect(strstr(res.output, " 0 fell back (CMA refused)") != NULL, "%s", res.output);
    for (int r = 0; c->np > 1 && r < c->np; r++) {
        unsigned long want, got;
        cr_expect(derived_cma_counts(res.output, r, &want, &got) && want == got,
                  "rank %d: derived-type calls through CMA expected %lu, stats say %lu:\n%s", r, want, got, res.output);
        /* types committed before hint_init, of more than 2^20 pieces, every type under ASan: their
           piece lists copied to the heap, the order run (not the fallback) */
        cr_expect(lists_counts(res.output, r, c->private_heap, &want, &got) && want == got &&
                      (c->refused || want > 0),
                  "rank %d: calls with a piece list %s expected %lu, stats say %lu:\n%s", r,
                  c->private_heap ? "read through CMA" : "copied to the heap", want, got, res.output);
    }
    free(res.output);
}

/* Piece lists read through CMA are kept (tests/ranks/order_buffers.c lists): under
   HINT_HEAP=private each rank reads each peer's list of each of the 3 types once, 3 (P - 1) in
   all, where it read P - 1 in every one of the 60 calls before; and right results, also for the
   type committed after the first was freed (a cache keyed by address could take its list for the
   freed one's). With the heap: no list is read. */
ParameterizedTestParameters(coll, order_lists_kept)
{
    static struct buffers_case c[] = {{2, false, true}, {3, false, true}, {4, false, true}, {3, false, false}};
    return cr_make_param_array(struct buffers_case, c, sizeof c / sizeof c[0]);
}

static void order_lists_run(const struct buffers_case *c, const char *cap)
{
    if (spans_nodes(c->np))
        cr_skip_test("the copy orders need one node");
    const char *argv[] = {job_build_path("tests/ranks/order_buffers"), "lists", NULL};
    const char *const env[] = {"HINT_COLL_STATS=1", cap ? cap : "HINT_TEST_LISTS_KEPT_MAX=64M",
                               c->private_heap ? "HINT_HEAP=private" : NULL, NULL};
    struct job_result res;
    cr_assert_eq(job_run(NULL, c->np, argv, env, &res), 0);
    cr_expect_eq(res.status, 0, "%d ranks:\n%s", c->np, res.output);
    for (int r = 0; r < c->np; r++) {
        char key[64];
        unsigned long want = ~0ul, got = 0, lines = 0;
        snprintf(key, sizeof key, "rank %d: expect list reads ", r);
        const char *w = strstr(res.output, key);
        cr_expect(w && sscanf(w + strlen(key), "%lu", &want) == 1, "rank %d: no expectation:\n%s", r, res.output);
        snprintf(key, sizeof key, "hint[rank %d] coll: order_stats_report: ", r);
        for (const char *g = strstr(res.output, key); g; g = strstr(g + 1, key)) {
            unsigned long n;
            const char *at = strstr(g, "with one read through CMA, ");
            if (at && sscanf(at, "with one read through CMA, %lu lists read", &n) == 1) {
                got += n;
                lines++;
            }
        }
        /* no stats line at all would read as 0 lists: the heap case expects 0 */
        cr_expect(lines > 0, "rank %d: no order_stats_report line with a list count:\n%s", r, res.output);
        cr_expect_eq(got, want, "rank %d: %lu piece lists read through CMA, expected %lu:\n%s", r, got, want,
                     res.output);
    }
    free(res.output);
}

ParameterizedTest(struct buffers_case *c, coll, order_lists_kept, .timeout = 300)
{
    order_lists_run(c, NULL);
}

/* The kept lists' byte bound: below one list, those a call does not use are dropped and read
   again (order_buffers lists says how many reads that makes); every result stays right. */
ParameterizedTestParameters(coll, order_lists_capped)
{
    static struct buffers_case c[] = {{2, false, true}, {3, false, true}, {4, false, true}};
    return cr_make_param_array(struct buffers_case, c, sizeof c / sizeof c[0]);
}

ParameterizedTest(struct buffers_case *c, coll, order_lists_capped, .timeout = 300)
{
    order_lists_run(c, "HINT_TEST_LISTS_KEPT_MAX=1");
}

/* Heap partitions bound to their NUMA domains (issue 23; tests/ranks/heap_numa.c): two and four
   virtual sockets (bound, on a one-node machine all to node 0), and one domain (not bound). */
struct numa_case {
    int np, sockets;
};

ParameterizedTestParameters(coll, heap_partitions_numa_bound)
{
    static struct numa_case c[] = {{4, 2}, {4, 4}, {3, 1}};
    return cr_make_param_array(struct numa_case, c, sizeof c / sizeof c[0]);
}

ParameterizedTest(struct numa_case *c, coll, heap_partitions_numa_bound, .timeout = 300)
{
    if (spans_nodes(c->np))
        cr_skip_test("one node's heap");
    char env0[64], dom[16];
    snprintf(env0, sizeof env0, "HINT_VIRTUAL_SOCKETS=%d", c->sockets > 1 ? c->sockets : 0);
    snprintf(dom, sizeof dom, "%d", c->sockets);
    const char *argv[] = {job_build_path("tests/ranks/heap_numa"), dom, NULL};
    const char *const env[] = {env0, NULL};
    struct job_result res;
    cr_assert_eq(job_run(NULL, c->np, argv, env, &res), 0);
    if (strstr(res.output, "# SKIP"))
        cr_skip_test("%s", strstr(res.output, "# SKIP"));
    cr_expect_eq(res.status, 0, "%d ranks, %d sockets:\n%s", c->np, c->sockets, res.output);
    free(res.output);
}

/* The Morton family (issue 7): plain and NUMA-aware, with 2 virtual sockets where P is even,
   for issue 7's rank counts; coll_check runs every algorithm of the operation. */
struct morton_case {
    char op[16];
    int np;
};

ParameterizedTestParameters(coll, morton_virtual_sockets)
{
    static const char *ops[] = {"allgather", "alltoall"};
    static const int nps[] = {1, 2, 3, 5, 7, 8, 9, 16, 17, 32};
    size_t nnp = sizeof nps / sizeof nps[0];
    struct morton_case *c = cr_malloc(2 * nnp * sizeof *c);
    size_t k = 0;
    for (size_t i = 0; i < 2; i++)
        for (size_t j = 0; j < nnp; j++) {
            snprintf(c[k].op, sizeof c[k].op, "%s", ops[i]);
            c[k++].np = nps[j];
        }
    return cr_make_param_array(struct morton_case, c, k, NULL);
}

ParameterizedTest(struct morton_case *c, coll, morton_virtual_sockets, .timeout = 900)
{
    const char *argv[] = {job_build_path("tests/ranks/coll_check"), c->op, NULL};
    const char *const env[] = {c->np % 2 == 0 ? "HINT_VIRTUAL_SOCKETS=2" : "HINT_VIRTUAL_SOCKETS=1", NULL};
    run_ok(NULL, c->np, argv, env, NULL, env[0]);
}

/* morton_numa with sockets from HINT_TOPO_FILE: interleaved (ranks 0 and 2 on one socket) and
   unequal (2 + 1 ranks: each socket's ranks split the bunches along their Morton curve). */
struct topo_case {
    char op[16];
    char file[16];
    int np;
};

ParameterizedTestParameters(coll, morton_numa_topology_files)
{
    static struct topo_case c[] = {{"alltoall", "topo4i.txt", 4}, {"allgather", "topo4i.txt", 4},
                                   {"alltoall", "topo3u.txt", 3}, {"allgather", "topo3u.txt", 3}};
    return cr_make_param_array(struct topo_case, c, sizeof c / sizeof c[0]);
}

ParameterizedTest(struct topo_case *c, coll, morton_numa_topology_files, .timeout = 300)
{
    char env[4200];
    const char *root = getenv("HINT_TEST_SOURCE_ROOT");
    snprintf(env, sizeof env, "HINT_TOPO_FILE=%s/tests/ranks/%s", root ? root : ".", c->file);
    const char *const extra[] = {env, NULL};
    const char *argv[] = {job_build_path("tests/ranks/coll_check"), c->op, NULL};
    run_ok(NULL, c->np, argv, extra, NULL, env);
}

/* Derived datatypes in alltoall and allgather, every algorithm (tests/ranks/typed_coll.c), on the
   heap and in private mmaps; two virtual sockets for morton_numa. Each rank's HINT_COLL_STATS
   line must give the counts of direct and packed calls that the rank expects from the
   algorithms that ran (hint_coll_last): the staged algorithms and the copy orders copy straight
   from the layouts wherever the buffers are (the orders through CMA off the heap); where they
   fall back (a type's pieces off the heap, CMA refused) pairwise or ring run on packed bytes and
   report that name. */
struct typed_case {
    int np;
    bool mmap;
    bool packed; /* HINT_COLL_TYPED=0 */
};

ParameterizedTestParameters(coll, derived_types)
{
    static struct typed_case cases[2 * sizeof nps / sizeof nps[0] + 2];
    size_t k = 0;
    for (size_t j = 0; j < sizeof nps / sizeof nps[0]; j++)
        for (int m = 0; m < 2; m++)
            cases[k++] = (struct typed_case){nps[j], m == 1, false};
    cases[k++] = (struct typed_case){3, false, true};
    cases[k++] = (struct typed_case){4, true, true};
    return cr_make_param_array(struct typed_case, cases, k);
}

/* The counts rank r expects ("rank r: expect direct D, packed K") and those its stats line
   reports; false when either line is missing. */
static bool typed_counts(const char *out, int r, unsigned long want[2], unsigned long got[2])
{
    char key[64];
    snprintf(key, sizeof key, "rank %d: expect direct ", r);
    const char *w = strstr(out, key);
    snprintf(key, sizeof key, "hint[rank %d] coll: ", r);
    const char *g = strstr(out, key);
    if (w == NULL || g == NULL || (g = strstr(g, "calls: ")) == NULL)
        return false;
    return sscanf(w, "rank %*d: expect direct %lu, packed %lu", &want[0], &want[1]) == 2 &&
           sscanf(g, "calls: %lu copied straight from and to the layouts, %lu staged", &got[0], &got[1]) == 2;
}

ParameterizedTest(struct typed_case *c, coll, derived_types, .timeout = 900)
{
    const char *argv[] = {job_build_path("tests/ranks/typed_coll"), c->mmap ? "mmap" : "heap", NULL};
    const char *env[] = {"HINT_COLL_STATS=1", "HINT_VIRTUAL_SOCKETS=2", c->packed ? "HINT_COLL_TYPED=0" : NULL, NULL};
    struct job_result res;
    cr_assert_eq(job_run(NULL, c->np, argv, env, &res), 0, "could not start hintrun");
    cr_expect_eq(res.status, 0, "%d ranks (%s) failed (status %d):\n%s", c->np, c->mmap ? "mmap" : "heap",
                 res.status, res.output);
    unsigned long total_direct = 0;
    for (int r = 0; c->np > 1 && r < c->np; r++) {
        unsigned long want[2], got[2];
        cr_assert(typed_counts(res.output, r, want, got), "rank %d's counts missing:\n%s", r, res.output);
        cr_expect(want[0] == got[0] && want[1] == got[1], "rank %d expected direct %lu packed %lu, stats say %lu %lu",
                  r, want[0], want[1], got[0], got[1]);
        cr_expect(want[1] > 0, "rank %d: the fallback and the byte-only algorithms must pack", r);
        total_direct += got[0];
    }
    /* across nodes only node-only algorithms copy straight from layouts, and none runs */
    if (c->np > 1)
        cr_expect(c->packed || spans_nodes(c->np) ? total_direct == 0 : total_direct > 0,
                  "%lu calls copied straight from the layouts%s", total_direct,
                  c->packed ? " under HINT_COLL_TYPED=0" : spans_nodes(c->np) ? " across nodes" : "");
    free(res.output);
}

/* A neighbourhood post wakes only its out-neighbours, and every member while one waits for a call
   in coll_stage_begin (tests/ranks/staged_mix.c chain). */
ParameterizedTestParameters(coll, staged_chain)
{
    static int ps[] = {1, 2, 3, 5, 8};
    return cr_make_param_array(int, ps, sizeof ps / sizeof ps[0]);
}

ParameterizedTest(int *np, coll, staged_chain, .timeout = 300)
{
    if (spans_nodes(*np))
        cr_skip_test("HINT_TEST_NODES: the staged algorithms need one node");
    const char *argv[] = {job_build_path("tests/ranks/staged_mix"), "chain", NULL};
    run_ok(NULL, *np, argv, NULL, "ok staged_mix chain", "staged_mix chain");
}

/* The staging areas under interleaved rooted and all-to-all operations (tests/ranks/staged_mix.c). */
ParameterizedTestParameters(coll, staged_interleavings)
{
    static int ps[] = {1, 2, 3, 5, 8};
    return cr_make_param_array(int, ps, sizeof ps / sizeof ps[0]);
}

ParameterizedTest(int *np, coll, staged_interleavings, .timeout = 300)
{
    if (spans_nodes(*np))
        cr_skip_test("HINT_TEST_NODES: the staged algorithms need one node (coll_check asserts they are refused)");
    const char *argv[] = {job_build_path("tests/ranks/staged_mix"), NULL};
    run_ok(NULL, *np, argv, NULL, "ok staged_mix", "staged_mix");
}

/* A staging area that one rank alone cannot make (HINT_TEST_STAGE_NOMEM=R:N: rank R's first N
   tries on each group fail): every rank returns from each staged operation, with HINT_ERR_NOMEM
   where it is R or waits for R's data, and the calls after them work (staged_mix nomem). Before,
   the peers of R waited for its call forever: hintrun's --timeout ends such a job. */
struct nomem_case { int np, bad, fails; };

ParameterizedTestParameters(coll, staged_nomem)
{
    static struct nomem_case cs[] = {{2, 0, 1}, {2, 1, 3}, {3, 2, 1}, {3, 1, 2}, {4, 3, 1}, {4, 0, 3}};
    return cr_make_param_array(struct nomem_case, cs, sizeof cs / sizeof cs[0]);
}

/* staged_mix MODE at c->np ranks with the test hook VAR=bad:fails set; it must print "ok staged_mix
   MODE" within hintrun's --timeout. */
static void run_nomem_case(const struct nomem_case *c, const char *var, const char *mode)
{
    if (spans_nodes(c->np))
        cr_skip_test("HINT_TEST_NODES: the staged algorithms need one node");
    char bad[16], fails[16], hook[64], want[64];
    snprintf(bad, sizeof bad, "%d", c->bad);
    snprintf(fails, sizeof fails, "%d", c->fails);
    snprintf(hook, sizeof hook, "%s=%d:%d", var, c->bad, c->fails);
    snprintf(want, sizeof want, "ok staged_mix %s", mode);
    const char *opts[] = {"--timeout", "120", NULL};
    const char *argv[] = {job_build_path("tests/ranks/staged_mix"), mode, bad, fails, NULL};
    const char *env[] = {hook, NULL};
    run_ok(opts, c->np, argv, env, want, hook);
}

ParameterizedTest(struct nomem_case *c, coll, staged_nomem, .timeout = 300)
{
    run_nomem_case(c, "HINT_TEST_STAGE_NOMEM", "nomem");
}

/* A staged neighbourhood plan that one rank cannot allocate (HINT_TEST_NEIGHBOR_NOMEM=R:N): that
   rank and its out-neighbours return HINT_ERR_NOMEM, the others finish, and the calls after them
   are right (staged_mix neighbor_nomem). Before, the rank returned alone and its peers waited for
   its post (hintrun's --timeout ended the job) or read its next call's blocks. */
ParameterizedTestParameters(coll, staged_neighbor_nomem)
{
    static struct nomem_case cs[] = {{2, 0, 1}, {2, 1, 3}, {3, 2, 1}, {4, 3, 2}, {5, 0, 1}, {8, 5, 3}};
    return cr_make_param_array(struct nomem_case, cs, sizeof cs / sizeof cs[0]);
}

ParameterizedTest(struct nomem_case *c, coll, staged_neighbor_nomem, .timeout = 300)
{
    run_nomem_case(c, "HINT_TEST_NEIGHBOR_NOMEM", "neighbor_nomem");
}

/* The exchange of the neighbour lists, which one rank has no memory for (HINT_TEST_NEIGHBOR_LISTS_NOMEM=R:N):
   every rank returns HINT_ERR_NOMEM from those calls, and the calls after them are right
   (staged_mix lists_nomem: neighbor_alltoall staged, neighbor_allgather and alltoall morton,
   neighbor_allgather distance_halving).
   Before, the rank returned alone and its peers waited for it in the exchange until hintrun's
   --timeout ended the job. */
ParameterizedTestParameters(coll, neighbor_lists_nomem)
{
    static struct nomem_case cs[] = {{2, 0, 1}, {2, 1, 2}, {3, 2, 1}, {4, 1, 3}, {8, 5, 2}};
    return cr_make_param_array(struct nomem_case, cs, sizeof cs / sizeof cs[0]);
}

ParameterizedTest(struct nomem_case *c, coll, neighbor_lists_nomem, .timeout = 300)
{
    run_nomem_case(c, "HINT_TEST_NEIGHBOR_LISTS_NOMEM", "lists_nomem");
}

/* distance_halving's build, in which one rank finds no memory at one allocation point after
   another (HINT_TEST_DH_BUILD_NOMEM=R:N: its k-th build fails at its k-th allocation; N past the
   build's allocations reaches all of them): every rank returns HINT_ERR_NOMEM from those calls,
   and the calls after them are right (staged_mix dh_nomem, one rank per virtual socket so every
   halving step runs). Before, the rank returned alone while its peers waited for its REQ/ACCEPT/
   DROP/EXIT signals, descriptors or notices, until hintrun's --timeout ended the job. */
ParameterizedTestParameters(coll, dh_build_nomem)
{
    static struct nomem_case cs[] = {{2, 1, 1000}, {3, 2, 1000}, {4, 0, 1000}, {5, 3, 1000}, {8, 5, 1000}, {8, 0, 4}};
    return cr_make_param_array(struct nomem_case, cs, sizeof cs / sizeof cs[0]);
}

ParameterizedTest(struct nomem_case *c, coll, dh_build_nomem, .timeout = 300)
{
    char bad[16], fails[16], hook[64], sockets[64];
    snprintf(bad, sizeof bad, "%d", c->bad);
    snprintf(fails, sizeof fails, "%d", c->fails);
    snprintf(hook, sizeof hook, "HINT_TEST_DH_BUILD_NOMEM=%d:%d", c->bad, c->fails);
    snprintf(sockets, sizeof sockets, "HINT_VIRTUAL_SOCKETS=%d", c->np);
    const char *opts[] = {"--timeout", "120", NULL};
    const char *argv[] = {job_build_path("tests/ranks/staged_mix"), "dh_nomem", bad, fails, NULL};
    const char *env[] = {hook, sockets, NULL};
    run_ok(opts, c->np, argv, env, "ok staged_mix dh_nomem", hook);
}

/* The first 1 MiB alltoall writing the peers' blocks takes no more page faults than reading them
   (tests/ranks/first_faults.c; issue 18 item 3). */
ParameterizedTestParameters(coll, first_call_faults)
{
    static int ps[] = {2, 3, 4};
    return cr_make_param_array(int, ps, sizeof ps / sizeof ps[0]);
}

ParameterizedTest(int *np, coll, first_call_faults, .timeout = 300)
{
    if (spans_nodes(*np))
        cr_skip_test("HINT_TEST_NODES: the copy orders need one node");
    const char *argv[] = {job_build_path("tests/ranks/first_faults"), NULL};
    run_ok(NULL, *np, argv, NULL, "ok first_faults", "first_faults");
}
