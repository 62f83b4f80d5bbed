/*
 * tests/topology/test_hier.c — topology/'s internal API without hwloc: parsing hierarchies and
 * orders (and their error messages), Heap's enumeration, rank maps, hintrun's core list, the
 * Slurm equivalents of Fig. 2, and building hierarchies from leaf tables and HINT_TOPO_FILE.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hint.h"
#include "topology/topology.h"

#define expect_msg(needle)                                                                          \
    cr_expect(strstr(topo_last_error(), needle) != NULL, "message '%s' lacks '%s'", topo_last_error(), \
              needle)

Test(parse, hierarchy_ok)
{
    struct topo_hier h;
    const char *good[] = {"2,2,4", "[2, 2, 4]", "[[2,2,4]]", "2x2x4", " 2 2 4 "};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        cr_assert_eq(topo_parse_hierarchy(good[i], &h), HINT_SUCCESS, "%s: %s", good[i], topo_last_error());
        cr_expect(h.nlevels == 3 && h.h[0] == 2 && h.h[1] == 2 && h.h[2] == 4 && h.size == 16);
        cr_expect_eq(h.kind[0], TOPO_KIND_USER);
    }
    /* fake levels: a 16-core socket given as 2 x 8 is just more sizes */
    cr_assert_eq(topo_parse_hierarchy("32,2,2,8", &h), HINT_SUCCESS);
    cr_expect_eq(h.size, 1024);
}

Test(parse, hierarchy_errors)
{
    struct topo_hier h;
    cr_expect_eq(topo_parse_hierarchy("", &h), HINT_ERR_ARG);
    expect_msg("no numbers");
    cr_expect_eq(topo_parse_hierarchy("2,a,4", &h), HINT_ERR_ARG);
    expect_msg("'a'");
    cr_expect_eq(topo_parse_hierarchy("2,0,4", &h), HINT_ERR_TOPOLOGY);
    expect_msg("level 1 has size 0");
    cr_expect_eq(topo_parse_hierarchy("2,-3", &h), HINT_ERR_TOPOLOGY);
    expect_msg("size -3");
    cr_expect_eq(topo_parse_hierarchy("65536,65536", &h), HINT_ERR_TOPOLOGY);
    expect_msg("product");
    cr_expect_eq(topo_parse_hierarchy("2.5,2", &h), HINT_ERR_ARG);
    cr_expect_eq(topo_parse_hierarchy(NULL, &h), HINT_ERR_ARG);
}

Test(parse, order)
{
    int o[3];
    cr_assert_eq(topo_parse_order("2,0,1", 3, o), HINT_SUCCESS);
    cr_expect(o[0] == 2 && o[1] == 0 && o[2] == 1);
    cr_expect_eq(topo_parse_order("0,1", 3, o), HINT_ERR_TOPOLOGY);
    expect_msg("has 2 entries but the hierarchy has 3 levels");
    cr_expect_eq(topo_parse_order("0,0,2", 3, o), HINT_ERR_TOPOLOGY);
    expect_msg("level 0 appears twice");
    cr_expect_eq(topo_parse_order("0,1,3", 3, o), HINT_ERR_TOPOLOGY);
    expect_msg("3 is not a level (levels are 0..2)");
    cr_expect_eq(topo_parse_order("x", 3, o), HINT_ERR_ARG);
}

Test(parse, size_and_refines)
{
    struct topo_hier u, r;
    topo_parse_hierarchy("2,2,4", &u);
    cr_expect_eq(topo_check_size(&u, 16), HINT_SUCCESS);
    cr_expect_eq(topo_check_size(&u, 8), HINT_ERR_TOPOLOGY);
    expect_msg("hierarchy 2,2,4 numbers 16 ranks but there are 8");
    topo_parse_hierarchy("2,8", &r);
    cr_expect_eq(topo_hier_refines(&u, &r), HINT_SUCCESS);
    topo_parse_hierarchy("1,2,8", &r);
    cr_expect_eq(topo_hier_refines(&u, &r), HINT_SUCCESS);
    topo_parse_hierarchy("4,4", &r); /* groups of 4 and 16: 2,2,4 has both */
    cr_expect_eq(topo_hier_refines(&u, &r), HINT_SUCCESS);
    topo_parse_hierarchy("8,2", &r);
    cr_expect_eq(topo_hier_refines(&u, &r), HINT_ERR_TOPOLOGY);
    expect_msg("2,2,4 does not split the levels of 8,2: no level of it has groups of 2");
    topo_parse_hierarchy("2,4", &r);
    cr_expect_eq(topo_hier_refines(&u, &r), HINT_ERR_TOPOLOGY);
}

struct heap_seen {
    int n, count, prev[TOPO_MAX_LEVELS];
    char seen[5040][8];
};

static int heap_cb(const int order[], void *arg)
{
    struct heap_seen *s = arg;
    cr_assert_eq(topo_mr_check_order(s->n, order), HINT_SUCCESS);
    char key[8] = {0};
    for (int i = 0; i < s->n; i++)
        key[i] = (char)order[i];
    for (int i = 0; i < s->count; i++)
        cr_assert(memcmp(s->seen[i], key, 8) != 0, "order repeated");
    if (s->count > 0) { /* Heap: consecutive orders differ by exactly one swap */
        int diff = 0;
        for (int i = 0; i < s->n; i++)
            diff += order[i] != s->prev[i];
        cr_assert_eq(diff, 2);
    }
    memcpy(s->seen[s->count++], key, 8);
    memcpy(s->prev, order, (size_t)s->n * sizeof *order);
    return 0;
}

static int stop_at_3(const int order[], void *arg)
{
    (void)order;
    return ++*(int *)arg == 3 ? 42 : 0;
}

Test(orders, heap_enumerates_all)
{
    static const int fact[] = {1, 1, 2, 6, 24, 120, 720, 5040};
    for (int n = 1; n <= 7; n++) {
        struct heap_seen *s = calloc(1, sizeof *s);
        s->n = n;
        cr_assert_eq(topo_for_each_order(n, heap_cb, s), 0);
        cr_expect_eq(s->count, fact[n], "n=%d: %d orders", n, s->count);
        free(s);
    }
    int calls = 0;
    cr_expect_eq(topo_for_each_order(4, stop_at_3, &calls), 42);
    cr_expect_eq(calls, 3);
}

Test(orders, rank_map)
{
    int map[16], inv[16];
    static const int h[3] = {2, 2, 4};
    cr_assert_eq(topo_rank_map(3, h, (int[]){2, 1, 0}, map), HINT_SUCCESS);
    for (int r = 0; r < 16; r++)
        cr_expect_eq(map[r], r); /* Fig. 2f: the natural order */
    cr_assert_eq(topo_rank_map(3, h, (int[]){1, 0, 2}, map), HINT_SUCCESS);
    cr_expect_eq(map[10], 10);
    cr_assert_eq(topo_rank_unmap(3, h, (int[]){1, 0, 2}, inv), HINT_SUCCESS);
    for (int r = 0; r < 16; r++)
        cr_expect_eq(inv[map[r]], r);
    /* sub-group 0 of [0,1,2] and [1,0,2] is on the same cores (0,4,8,12), in another order */
    cr_expect(inv[0] == 0 && inv[1] == 4 && inv[2] == 8 && inv[3] == 12);
    cr_assert_eq(topo_rank_unmap(3, h, (int[]){0, 1, 2}, inv), HINT_SUCCESS);
    cr_expect(inv[0] == 0 && inv[1] == 8 && inv[2] == 4 && inv[3] == 12);
    cr_expect_eq(topo_rank_map(3, h, (int[]){1, 1, 0}, map), HINT_ERR_TOPOLOGY);
    expect_msg("not a permutation");
}

Test(orders, core_list)
{
    static const int h[3] = {2, 2, 4};
    int node[16], core[16];
    cr_assert_eq(topo_core_list(3, h, NULL, 16, 2, 8, node, core), HINT_SUCCESS);
    for (int r = 0; r < 16; r++)
        cr_expect(node[r] == r / 8 && core[r] == r % 8);
    /* [0,1,2]: nodes fastest, so ranks alternate nodes */
    cr_assert_eq(topo_core_list(3, h, (int[]){0, 1, 2}, 4, 2, 8, node, core), HINT_SUCCESS);
    cr_expect(node[0] == 0 && core[0] == 0 && node[1] == 1 && core[1] == 0 && node[2] == 0 && core[2] == 4);
    /* one node: fewer ranks than cores (§3.4) */
    cr_assert_eq(topo_core_list(2, (int[]){2, 4}, (int[]){0, 1}, 2, 1, 8, NULL, core), HINT_SUCCESS);
    cr_expect(core[0] == 0 && core[1] == 4);
    cr_expect_eq(topo_core_list(3, h, NULL, 16, 2, 2, node, core), HINT_ERR_TOPOLOGY);
    expect_msg("needs 8 cores per node but only 2 are available");
    cr_expect_eq(topo_core_list(3, h, NULL, 17, 1, 16, node, core), HINT_ERR_TOPOLOGY);
    expect_msg("17 ranks asked but hierarchy 2,2,4 has 16 cores");
    cr_expect_eq(topo_core_list(3, h, NULL, 16, 3, 16, node, core), HINT_ERR_TOPOLOGY);
    expect_msg("do not divide over 3 nodes");
}

static void slurm_expect(const char *hs, const char *os, const char *want)
{
    struct topo_hier h;
    int o[TOPO_MAX_LEVELS];
    char buf[64];
    cr_assert_eq(topo_parse_hierarchy(hs, &h), HINT_SUCCESS);
    cr_assert_eq(topo_parse_order(os, h.nlevels, o), HINT_SUCCESS);
    int st = topo_slurm_distribution(&h, o, buf, sizeof buf);
    if (!want) {
        cr_expect_eq(st, HINT_ERR_UNSUPPORTED, "%s order %s: got '%s'", hs, os, buf);
        return;
    }
    cr_expect_eq(st, HINT_SUCCESS, "%s order %s: %s", hs, os, topo_last_error());
    cr_expect_str_eq(buf, want, "%s order %s", hs, os);
}

/* Fig. 2: every order of [2,2,4] but [1,0,2] has a --distribution equivalent. */
Test(slurm, fig2)
{
    slurm_expect("2,2,4", "2,1,0", "block:block");
    slurm_expect("2,2,4", "1,2,0", "block:cyclic");
    slurm_expect("2,2,4", "0,1,2", "cyclic:cyclic");
    slurm_expect("2,2,4", "0,2,1", "cyclic:block");
    slurm_expect("2,2,4", "2,0,1", "plane=4:block");
    slurm_expect("2,2,4", "1,0,2", NULL);
    /* §4.2: on Hydra [32,2,2,8] (a fake level in each socket), [1,3,2,0] is Slurm's default */
    slurm_expect("32,2,2,8", "1,3,2,0", "block:cyclic");
    slurm_expect("32,2,2,8", "3,2,1,0", "block:block");
    slurm_expect("32,2,2,8", "2,3,1,0", NULL); /* fake level before the cores: not Slurm's */
    slurm_expect("2,8", "0,1", "cyclic");
    slurm_expect("2,8", "1,0", "block");
    slurm_expect("1,2,4", "2,0,1", "block:block"); /* one node: its place in the order is moot */
}

Test(build, from_leaves)
{
    /* 8 leaves: 2 packages x 2 L3 x 2 cores, one NUMA per package */
    int node[8] = {0}, pkg[8] = {0, 0, 0, 0, 1, 1, 1, 1}, numa[8] = {5, 5, 5, 5, 7, 7, 7, 7};
    int l3[8] = {0, 0, 1, 1, 2, 2, 3, 3};
    const int *cand[4] = {node, pkg, numa, l3};
    const unsigned kinds[4] = {TOPO_KIND_NODE, TOPO_KIND_PACKAGE, TOPO_KIND_NUMA, TOPO_KIND_L3};
    struct topo_hier h;
    cr_assert_eq(topo_hier_build(8, 4, cand, kinds, TOPO_KIND_CORE, "core", &h), HINT_SUCCESS, "%s", topo_last_error());
    cr_assert_eq(h.nlevels, 4);
    cr_expect(h.h[0] == 1 && h.h[1] == 2 && h.h[2] == 2 && h.h[3] == 2);
    cr_expect_eq(h.kind[1], TOPO_KIND_PACKAGE | TOPO_KIND_NUMA);
    cr_expect_eq(h.kind[2], TOPO_KIND_L3);
    char d[128];
    cr_expect_str_eq(topo_hier_describe(&h, d, sizeof d), "1 node x 2 package+numa x 2 L3 x 2 core");
    /* inhomogeneous: package 1 has one L3 of 4 cores */
    int l3b[8] = {0, 0, 1, 1, 2, 2, 2, 2};
    const int *cand2[4] = {node, pkg, numa, l3b};
    cr_expect_eq(topo_hier_build(8, 4, cand2, kinds, TOPO_KIND_CORE, "core", &h), HINT_ERR_TOPOLOGY);
    expect_msg("inhomogeneous machine: package 0 has 2 L3(s) but package 1 has 1");
    /* not numbered hierarchically: packages interleaved */
    int pkgc[8] = {0, 1, 0, 1, 0, 1, 0, 1};
    const int *cand3[2] = {node, pkgc};
    cr_expect_eq(topo_hier_build(8, 2, cand3, kinds, TOPO_KIND_CORE, "core", &h), HINT_ERR_TOPOLOGY);
    expect_msg("core 1 is not numbered hierarchically (it belongs at position 4)");
}

static char *write_file(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/hint-topo-test-XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

/* 16 ranks: 2 nodes x 2 sockets x 2 NUMA x 2 cores, lines shuffled, comments and a header. */
static const char *table16 = "# two nodes, each 2 sockets x 2 NUMA x 2 cores\n"
                             "rank node socket numa core\n"
                             "1 0 0 0 1\n0 0 0 0 0\n2 0 0 1 2\n3 0 0 1 3\n"
                             "4 0 1 2 4\n5 0 1 2 5\n6 0 1 3 6\n7 0 1 3 7  # trailing comment\n\n"
                             "8 1 0 0 0\n9 1 0 0 1\n10 1 0 1 2\n11 1 0 1 3\n"
                             "12 1 1 2 4\n13 1 1 2 5\n14 1 1 3 6\n15 1 1 3 7\n";

Test(table, load_and_hierarchy)
{
    struct topo_table t;
    struct topo_hier h;
    char *path = write_file(table16);
    cr_assert_eq(topo_table_load(path, &t), HINT_SUCCESS, "%s", topo_last_error());
    cr_expect_eq(t.nranks, 16);
    cr_expect(t.loc[13].node == 1 && t.loc[13].socket == 1 && t.loc[13].numa == 2 && t.loc[13].core == 5);
    cr_assert_eq(topo_hier_from_table(&t, &h), HINT_SUCCESS, "%s", topo_last_error());
    cr_expect(h.nlevels == 4 && h.h[0] == 2 && h.h[1] == 2 && h.h[2] == 2 && h.h[3] == 2);
    cr_expect_eq(h.source, TOPO_SRC_FILE);
    topo_table_free(&t);
    /* through the environment, as the runtime sees it */
    setenv("HINT_TOPO_FILE", path, 1);
    setenv("HINT_RANK", "13", 1);
    cr_assert_eq(topo_discover(1, &h), HINT_SUCCESS, "%s", topo_last_error());
    cr_expect_eq(h.size, 16);
    int s = -1, n = -1;
    cr_expect_eq(topo_socket_of_self(&s), HINT_SUCCESS);
    cr_expect_eq(topo_numa_of_self(&n), HINT_SUCCESS);
    cr_expect(s == 1 && n == 2, "socket %d numa %d", s, n);
    setenv("HINT_RANK", "16", 1);
    cr_expect_eq(topo_socket_of_self(&s), HINT_ERR_TOPOLOGY);
    expect_msg("describes 16 ranks but this process is rank 16");
    topo_release();
    unlink(path);
}

static void table_error(const char *text, int st, const char *needle, int build)
{
    struct topo_table t;
    struct topo_hier h;
    char *path = write_file(text);
    int got = topo_table_load(path, &t);
    if (build && got == HINT_SUCCESS) {
        got = topo_hier_from_table(&t, &h);
        topo_table_free(&t);
    }
    cr_expect_eq(got, st, "%s", text);
    expect_msg(needle);
    unlink(path);
}

Test(table, errors)
{
    table_error("0 0 0 0 0\n1 0 0 0\n", HINT_ERR_TOPOLOGY, ":2: expected five non-negative integers", 0);
    table_error("0 0 0 0 0\n0 0 0 0 1\n", HINT_ERR_TOPOLOGY, ":2: rank 0 already given on line 1", 0);
    table_error("0 0 0 0 0\n5 0 0 0 1\n", HINT_ERR_TOPOLOGY, "rank 5, but the file has 2 lines", 0);
    table_error("0 0 0 0 -1\n", HINT_ERR_TOPOLOGY, "non-negative", 0);
    table_error("# nothing\n", HINT_ERR_TOPOLOGY, "no ranks", 0);
    table_error("0 0 0 0 0\n1 0 0 0 0\n", HINT_ERR_TOPOLOGY, "ranks 0 and 1 are both on core 0 of node 0", 1);
    /* node 0 has 2 ranks, node 1 has 1 */
    table_error("0 0 0 0 0\n1 0 0 0 1\n2 1 0 0 0\n", HINT_ERR_TOPOLOGY, "inhomogeneous machine: node 0 has 2", 1);
    /* round-robin over nodes: not hierarchical */
    table_error("0 0 0 0 0\n1 1 0 0 0\n2 0 0 0 1\n3 1 0 0 1\n", HINT_ERR_TOPOLOGY, "rank 1 is not numbered", 1);
    struct topo_table t;
    cr_expect_eq(topo_table_load("/nonexistent/hint-topo", &t), HINT_ERR_TOPOLOGY);
    expect_msg("cannot open");
}
