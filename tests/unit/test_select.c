/*
 * tests/unit/test_select.c — the selection tables and rules: names unique and looked up, forcing
 * and "auto", the built-in rules pinned to their choices and always applicable, rule files
 * parsed strictly, before any rank exists.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "collectives/algs.h"
#include "collectives/coll.h"
#include "collectives/copy.h"
#include "collectives/rules.h"
#include "runtime/group.h"
#include "tests/unit/select_pins.h"

Test(select, names_unique_and_described)
{
    for (int op = 0; op < COLL_NOPS; op++) {
        const struct coll_table *t = &coll_tables[op];
        cr_assert(t->op != NULL && t->nalgs > 0);
        for (int i = 0; i < t->nalgs; i++) {
            cr_expect(t->algs[i].desc && strlen(t->algs[i].desc) > 10, "%s/%s", t->op, t->algs[i].name);
            for (int j = 0; j < i; j++)
                cr_expect(strcmp(t->algs[i].name, t->algs[j].name) != 0, "%s has %s twice", t->op,
                          t->algs[i].name);
        }
    }
}

Test(select, api_md_names_exist)
{
    const char *need[][2] = {{"barrier", "dissemination"}, {"barrier", "shm"}, {"bcast", "binomial"},
                             {"bcast", "shm"}, {"allreduce", "recursive_doubling"}, {"allreduce", "reduce_bcast"},
                             {"allreduce", "ring"}, {"allgather", "ring"}, {"allgather", "recursive_doubling"},
                             {"allgather", "bruck"}, {"alltoall", "pairwise"}, {"alltoall", "bruck"},
                             {"alltoall", "linear"}};
    for (size_t k = 0; k < sizeof need / sizeof need[0]; k++)
        cr_expect_eq(hint_coll_set(need[k][0], need[k][1]), HINT_SUCCESS, "%s/%s", need[k][0], need[k][1]);
    cr_expect_eq(hint_coll_set("alltoall", "nonsense"), HINT_ERR_ARG);
    /* the staged algorithms were called shm: the old name still selects them */
    cr_expect_eq(hint_coll_set("allreduce", "shm"), HINT_SUCCESS);
    cr_expect_str_eq(coll_forced_name(COLL_ALLREDUCE), "staged");
    cr_expect_eq(hint_coll_set("allreduce", "auto"), HINT_SUCCESS);
    cr_expect_eq(hint_coll_set("barrier", "shm"), HINT_SUCCESS);
    cr_expect_str_eq(coll_forced_name(COLL_BARRIER), "shm");
    cr_expect_eq(hint_coll_set("barrier", "auto"), HINT_SUCCESS);
    cr_expect_eq(hint_coll_set("alltoall", "auto"), HINT_SUCCESS);
    cr_expect_null(coll_forced_name(COLL_ALLTOALL));
    cr_expect_eq(hint_coll_set("alltoall", "bruck"), HINT_SUCCESS);
    cr_expect_str_eq(coll_forced_name(COLL_ALLTOALL), "bruck");
}

/* The built-in rules choose what the C code they replaced chose, for every operation, environment
   (heap and shm; shm only; neither), rank count and size of the pins. */
Test(select, defaults_match_pins)
{
    struct coll_group slot0 = {.slot = 0}, noslot = {.slot = -1};
    struct hint_group_s shm_only = {0}, none = {0};
    coll_group_attach(&shm_only, &slot0);
    coll_group_attach(&none, &noslot);
    hint_group envs[] = {NULL, &shm_only, &none};
    int copy;
    for (size_t i = 0; i < sizeof pins / sizeof pins[0]; i++)
        for (size_t j = 0; j < NPIN_BYTES; j++) {
            const struct pin *p = &pins[i];
            struct coll_args a = {.op_id = p->op, .g = envs[p->env], .size = p->P, .block = pin_bytes[j],
                                  .count = pin_bytes[j] / 8};
            int k = rules_pick(rules_default(), &a, &copy);
            cr_assert(k >= 0, "%s env %d P=%d %zu B: no rule", coll_tables[p->op].op, p->env, p->P, pin_bytes[j]);
            cr_expect_str_eq(coll_tables[p->op].algs[k].name, p->name[j], "%s env %d P=%d %zu B: %s, pinned %s",
                             coll_tables[p->op].op, p->env, p->P, pin_bytes[j], coll_tables[p->op].algs[k].name,
                             p->name[j]);
            cr_expect_eq(copy, -1);
        }
}

/* Issue 18 item 4: the staged algorithms run to where their latency line crosses the upper
   algorithm's (at P=2 gather 1.5 KiB, alltoall 2.375 KiB, allgather 2.75 KiB), not to a power of
   two where the upper one starts a step above; bench/cliffs.py --np P --list shows these. */
Test(select, switch_points_at_two_ranks)
{
    static const struct {
        int op;
        size_t last;
        const char *upper;
    } sw[] = {{COLL_GATHER, 1536, "heap"}, {COLL_ALLTOALL, 2432, "column"}, {COLL_ALLGATHER, 2816, "morton"}};
    for (size_t i = 0; i < sizeof sw / sizeof sw[0]; i++) {
        cr_expect_str_eq(coll_default_name(sw[i].op, 2, sw[i].last), "staged", "%s", coll_tables[sw[i].op].op);
        cr_expect_str_eq(coll_default_name(sw[i].op, 2, sw[i].last + 1), sw[i].upper, "%s", coll_tables[sw[i].op].op);
    }
    /* from 3 to 8 ranks: allreduce staged to 8 KiB, alltoall to 6 KiB; gather and allgather to
       24 KiB, past their 8 KiB staging block (one block per rank may fill the area: P * 8 KiB) */
    cr_expect_str_eq(coll_default_name(COLL_ALLREDUCE, 4, 8192), "staged");
    cr_expect_str_eq(coll_default_name(COLL_ALLREDUCE, 4, 8200), "heap");
    cr_expect_str_eq(coll_default_name(COLL_ALLTOALL, 8, 6144), "staged");
    cr_expect_str_eq(coll_default_name(COLL_ALLTOALL, 8, 6145), "hilbert");
    for (int P = 3; P <= 8; P++) {
        cr_expect_str_eq(coll_default_name(COLL_ALLGATHER, P, 24576), "staged", "P=%d", P);
        cr_expect_str_eq(coll_default_name(COLL_ALLGATHER, P, 24577), "morton", "P=%d", P);
    }
    /* the remaining cliffs at 3-8 ranks (docs/BENCHMARKS.md "Remaining cliffs"): gather staged as
       far as its area allows up to 40 KiB, then the heap, not linear (whose senders wait for the
       root: 6.8-8.7x); reduce staged to 16 KiB (24 KiB from 5 ranks: the heap's two barriers
       made a 2x step at 16392 B, P=8), then the heap, not binomial (1.3-2x);
       reduce_scatter_block staged to 2 KiB; bcast's cells to 32 KiB, not 16 (3-3.5x) */
    for (int P = 3; P <= 8; P++) {
        size_t g = coll_stage_area(P) < 40960 ? coll_stage_area(P) : 40960;
        cr_expect_str_eq(coll_default_name(COLL_GATHER, P, g), "staged", "P=%d", P);
        cr_expect_str_eq(coll_default_name(COLL_GATHER, P, g + 1), "heap", "P=%d", P);
        cr_expect_str_eq(coll_default_name(COLL_GATHER, P, 131071), "heap", "P=%d", P);
        size_t r = P <= 4 ? 16384 : 24576;
        cr_expect_str_eq(coll_default_name(COLL_REDUCE, P, r), "staged", "P=%d", P);
        cr_expect_str_eq(coll_default_name(COLL_REDUCE, P, r + 8), "heap", "P=%d", P);
        /* neighbor_alltoall staged to 8 KiB at 3-4 ranks, 16 KiB at 5-8 (naive's rendezvous past
           8 KiB made a 1.14x step at P=8) */
        size_t na = P <= 4 ? 8192 : 16384;
        cr_expect_str_eq(coll_default_name(COLL_NEIGHBOR_ALLTOALL, P, na), "staged", "P=%d", P);
        cr_expect_str_neq(coll_default_name(COLL_NEIGHBOR_ALLTOALL, P, na + 1), "staged", "P=%d", P);
        cr_expect_str_eq(coll_default_name(COLL_REDUCE_SCATTER_BLOCK, P, 2048), "staged", "P=%d", P);
        cr_expect_str_eq(coll_default_name(COLL_REDUCE_SCATTER_BLOCK, P, 2056), "heap", "P=%d", P);
        /* bcast staged to 8 KiB (one block of the areas: a ring as deep as the heads'), shm on */
        cr_expect_str_eq(coll_default_name(COLL_BCAST, P, 8192), "staged", "P=%d", P);
        cr_expect_str_eq(coll_default_name(COLL_BCAST, P, 8193), "shm", "P=%d", P);
        cr_expect_str_eq(coll_default_name(COLL_BCAST, P, 32768), "shm", "P=%d", P);
        cr_expect_str_eq(coll_default_name(COLL_BCAST, P, 32769), "heap", "P=%d", P);
    }
}

/* How far the staged algorithms run (issue 18 item 4): gather and allgather stage one block per
   rank, which may fill the rank's whole area (P * 8 KiB up to 8 ranks); scatter's root and
   alltoall stage P blocks, each at most one area block (8 KiB up to 8 ranks). */
Test(select, staged_reach)
{
    static const struct {
        int op;
        bool whole_area;
    } ops[] = {{COLL_GATHER, true}, {COLL_ALLGATHER, true}, {COLL_SCATTER, false}, {COLL_ALLTOALL, false}};
    int ps[] = {2, 3, 4, 5, 7, 8, 9, 16, 64};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        const struct coll_table *t = &coll_tables[ops[i].op];
        const struct coll_alg *staged = NULL;
        for (int k = 0; k < t->nalgs; k++)
            if (!strcmp(t->algs[k].name, "staged"))
                staged = &t->algs[k];
        cr_assert(staged && staged->applicable, "%s", t->op);
        for (size_t j = 0; j < sizeof ps / sizeof ps[0]; j++) {
            size_t limit = ops[i].whole_area ? coll_stage_area(ps[j]) : coll_stage_block(ps[j]);
            if (ps[j] <= 8)
                cr_expect_eq(limit, ops[i].whole_area ? (size_t)ps[j] * 8192 : 8192, "%s P=%d", t->op, ps[j]);
            struct coll_args a = {.op_id = ops[i].op, .size = ps[j], .block = limit};
            cr_expect(staged->applicable(&a), "%s P=%d %zu B", t->op, ps[j], limit);
            a.block = limit + 1;
            cr_expect(!staged->applicable(&a), "%s P=%d %zu B", t->op, ps[j], limit + 1);
        }
    }
}

/* What the rules pick can run, and every table's first algorithm (the last resort) runs anywhere. */
Test(select, defaults_are_applicable)
{
    int ps[] = {2, 3, 4, 5, 7, 8, 16, 17, 64, 1000};
    size_t bytes[] = {1, 8, 256, 4096, 65536, 1 << 20, (size_t)8 << 20};
    for (int op = 0; op < COLL_NOPS; op++) {
        cr_expect_null(coll_tables[op].algs[0].applicable, "%s", coll_tables[op].op);
        for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
            for (size_t j = 0; j < sizeof bytes / sizeof bytes[0]; j++) {
                struct coll_args a = {.op_id = op, .size = ps[i], .block = bytes[j], .count = bytes[j] / 8};
                int copy, k = rules_pick(rules_default(), &a, &copy);
                cr_assert(k >= 0 && k < coll_tables[op].nalgs, "%s P=%d: no rule", coll_tables[op].op, ps[i]);
                const struct coll_alg *alg = &coll_tables[op].algs[k];
                cr_expect(alg->applicable == NULL || alg->applicable(&a), "%s picks %s at P=%d", coll_tables[op].op,
                          alg->name, ps[i]);
            }
    }
}

/* The defaults are parsed one operation at a time, on its first pick: what that gives is what
   parsing the whole text gives, and the whole text parses. */
Test(select, lazy_defaults_equal_whole_parse)
{
    struct coll_rules whole;
    char msg[512];
    cr_assert_eq(rules_parse(coll_default_rules, "built-in defaults", &whole, msg, sizeof msg), HINT_SUCCESS, "%s",
                 msg);
    struct coll_rules *lazy = rules_default();
    for (int op = 0; op < COLL_NOPS; op++) {
        struct coll_args a = {.op_id = op, .size = 2, .block = 8, .count = 1};
        int copy;
        (void)rules_pick(lazy, &a, &copy);
        cr_assert(lazy->loaded[op], "%s", coll_tables[op].op);
        cr_assert_eq(lazy->n[op], whole.n[op], "%s: %d rules lazily, %d whole", coll_tables[op].op, lazy->n[op],
                     whole.n[op]);
        for (int k = 0; k < whole.n[op]; k++)
            cr_expect(!memcmp(&lazy->r[op][k], &whole.r[op][k], sizeof whole.r[op][k]), "%s rule %d differs",
                      coll_tables[op].op, k);
    }
    rules_free(&whole);
}

/* Rules are data: a typo in an algorithm name, an unknown key or operation is an error at load,
   with the place; bounds and lists behave as rules.h says. */
Test(select, rules_parse_and_pick)
{
    struct coll_rules rs;
    char msg[512];
    cr_assert_eq(rules_parse("{\"version\": 2, \"alltoall\": [{\"algorithm\": \"hilbret\"}]}", "t", &rs, msg,
                             sizeof msg), HINT_ERR_ARG);
    cr_expect(strstr(msg, "t: alltoall[0].algorithm: 'hilbret' is not a alltoall algorithm") != NULL, "%s", msg);
    cr_assert_eq(rules_parse("{\"version\": 2, \"alltoall\": [{\"max_byte\": 4, \"algorithm\": \"linear\"}]}", "t",
                             &rs, msg, sizeof msg), HINT_ERR_ARG);
    cr_expect(strstr(msg, "unknown key \"max_byte\"") != NULL, "%s", msg);
    cr_assert_eq(rules_parse("{\"version\": 2, \"alltoal\": []}", "t", &rs, msg, sizeof msg), HINT_ERR_ARG);
    cr_assert_eq(rules_parse("{\"version\": 3}", "t", &rs, msg, sizeof msg), HINT_ERR_ARG);
    cr_assert_eq(rules_parse("{\"version\": 2, \"alltoall\": [{\"min_ppn\": -1, \"algorithm\": \"linear\"}]}", "t",
                             &rs, msg, sizeof msg), HINT_ERR_ARG);
    const char *ok = "{\"version\": 2, \"alltoall\": ["
                     "{\"_why\": \"notes are free\", \"max_ranks\": 4, \"max_bytes\": 100, \"algorithm\": \"bruck\"},"
                     "{\"min_ppn\": 5, \"min_total_bytes\": 1000, \"algorithm\": [\"recursive_doubling_no\"]}]}";
    cr_assert_eq(rules_parse(ok, "t", &rs, msg, sizeof msg), HINT_ERR_ARG);
    ok = "{\"version\": 2, \"alltoall\": ["
         "{\"_why\": \"notes are free\", \"max_ranks\": 4, \"max_bytes\": 100, \"algorithm\": \"bruck\"},"
         "{\"min_ppn\": 5, \"min_total_bytes\": 1000, \"algorithm\": [\"row\", \"linear\"], \"copy\": \"nt\"}]}";
    cr_assert_eq(rules_parse(ok, "t", &rs, msg, sizeof msg), HINT_SUCCESS, "%s", msg);
    struct coll_group noslot = {.slot = -1};
    struct hint_group_s none = {0};
    coll_group_attach(&none, &noslot);
    int copy;
    struct coll_args a = {.op_id = COLL_ALLTOALL, .size = 4, .block = 100};
    cr_expect_str_eq(coll_tables[COLL_ALLTOALL].algs[rules_pick(&rs, &a, &copy)].name, "bruck");
    a.block = 101; /* past max_bytes, and P=4 is below min_ppn: nothing */
    cr_expect_eq(rules_pick(&rs, &a, &copy), -1);
    a = (struct coll_args){.op_id = COLL_ALLTOALL, .size = 8, .block = 125}; /* total 1000 */
    cr_expect_str_eq(coll_tables[COLL_ALLTOALL].algs[rules_pick(&rs, &a, &copy)].name, "row");
    cr_expect_eq(copy, COPY_NT);
    a.g = &none; /* row cannot run without the node segment: the next in the list */
    cr_expect_str_eq(coll_tables[COLL_ALLTOALL].algs[rules_pick(&rs, &a, &copy)].name, "linear");
    a.block = 124; /* total 992 */
    cr_expect_eq(rules_pick(&rs, &a, &copy), -1);
    cr_expect_eq(rules_pick(&rs, &(struct coll_args){.op_id = COLL_BCAST, .size = 2, .block = 8}, &copy), -1);
    rules_free(&rs);
    /* version 1: rules per rank count */
    cr_assert_eq(rules_parse("{\"version\": 1, \"alltoall\": [{\"P\": 3, \"rules\": [{\"max_bytes\": 64, "
                             "\"algorithm\": \"bruck\"}, {\"algorithm\": \"pairwise\"}]}]}", "t", &rs, msg, sizeof msg),
                 HINT_SUCCESS, "%s", msg);
    a = (struct coll_args){.op_id = COLL_ALLTOALL, .size = 3, .block = 64};
    cr_expect_str_eq(coll_tables[COLL_ALLTOALL].algs[rules_pick(&rs, &a, &copy)].name, "bruck");
    a.block = 65;
    cr_expect_str_eq(coll_tables[COLL_ALLTOALL].algs[rules_pick(&rs, &a, &copy)].name, "pairwise");
    a.size = 4;
    cr_expect_eq(rules_pick(&rs, &a, &copy), -1);
    rules_free(&rs);
}

/* Issue 15: the algorithms that read or write peers' memory are marked node-only, and nothing
   else is (the copy orders, the staged and heap ones, barrier's and bcast's shm). */
Test(select, node_only_marks)
{
    static const char *const node[] = {"shm", "staged", "heap", "row", "column", "hilbert", "morton", "morton_numa"};
    for (int op = 0; op < COLL_NOPS; op++)
        for (int i = 0; i < coll_tables[op].nalgs; i++) {
            const struct coll_alg *alg = &coll_tables[op].algs[i];
            bool want = false;
            for (size_t k = 0; k < sizeof node / sizeof node[0]; k++)
                want = want || !strcmp(alg->name, node[k]);
            cr_expect_eq(alg->node_only, want, "%s/%s", coll_tables[op].op, alg->name);
        }
}

/* A group spanning nodes: the built-in rules give every operation, at every size, an algorithm
   that is not node-only and can run, even if the group somehow held a slot; a group on one node
   of a multi-node job (nodes 1) still gets the node-only ones. */
Test(select, defaults_across_nodes)
{
    int ps[] = {2, 3, 4, 5, 7, 8, 16, 17, 64, 1000};
    int ks[] = {2, 3, 4};
    size_t bytes[] = {1, 8, 255, 256, 1024, 4096, 16384, 65536, 1 << 20, (size_t)8 << 20};
    for (int op = 0; op < COLL_NOPS; op++)
        for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
            for (size_t n = 0; n < sizeof ks / sizeof ks[0] && ks[n] <= ps[i]; n++) {
                struct coll_group cg = {.slot = 0, .nodes = ks[n], .ppn = (ps[i] + ks[n] - 1) / ks[n]};
                struct hint_group_s g = {0};
                coll_group_attach(&g, &cg);
                for (size_t j = 0; j < sizeof bytes / sizeof bytes[0]; j++) {
                    struct coll_args a = {.op_id = op, .g = &g, .size = ps[i], .block = bytes[j],
                                          .count = bytes[j] / 8};
                    int copy, k = rules_pick(rules_default(), &a, &copy);
                    cr_assert(k >= 0, "%s P=%d on %d nodes, %zu B: no rule", coll_tables[op].op, ps[i], ks[n],
                              bytes[j]);
                    cr_expect(!coll_tables[op].algs[k].node_only && coll_alg_usable(k, &a),
                              "%s P=%d on %d nodes, %zu B: picks %s", coll_tables[op].op, ps[i], ks[n], bytes[j],
                              coll_tables[op].algs[k].name);
                    for (int x = 0; x < coll_tables[op].nalgs; x++)
                        if (coll_tables[op].algs[x].node_only)
                            cr_expect(!coll_alg_usable(x, &a), "%s/%s usable across nodes", coll_tables[op].op,
                                      coll_tables[op].algs[x].name);
                }
            }
    struct coll_group one = {.slot = 0, .nodes = 1, .ppn = 4};
    struct hint_group_s g = {0};
    coll_group_attach(&g, &one);
    struct coll_args a = {.op_id = COLL_BARRIER, .g = &g, .size = 4};
    int copy;
    cr_expect_str_eq(coll_tables[COLL_BARRIER].algs[rules_pick(rules_default(), &a, &copy)].name, "shm");
    one.nodes = 2; /* the same group spanning two nodes: the hierarchy (issue 16) */
    cr_expect_str_eq(coll_tables[COLL_BARRIER].algs[rules_pick(rules_default(), &a, &copy)].name, "hier");
    one.ppn = 1; /* one rank per node: nothing to gain from a node phase */
    cr_expect_str_eq(coll_tables[COLL_BARRIER].algs[rules_pick(rules_default(), &a, &copy)].name, "dissemination");
}

/* Rules key on the shape: nodes and ranks per node from the group's collective state. */
Test(select, rules_key_on_nodes_and_ppn)
{
    struct coll_rules rs;
    char msg[512];
    const char *text = "{\"version\": 2, \"alltoall\": [{\"min_nodes\": 3, \"algorithm\": \"bruck\"},"
                       "{\"min_nodes\": 2, \"max_ppn\": 2, \"algorithm\": \"pairwise\"}, {\"algorithm\": \"linear\"}]}";
    cr_assert_eq(rules_parse(text, "t", &rs, msg, sizeof msg), HINT_SUCCESS, "%s", msg);
    struct { int nodes, ppn; const char *want; } cases[] = {
        {1, 6, "linear"}, {2, 3, "linear"}, {2, 2, "pairwise"}, {3, 2, "bruck"}, {0, 0, "linear"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct coll_group cg = {.slot = -1, .nodes = cases[i].nodes, .ppn = cases[i].ppn};
        struct hint_group_s g = {0};
        coll_group_attach(&g, &cg);
        struct coll_args a = {.op_id = COLL_ALLTOALL, .g = &g, .size = 6, .block = 8};
        int copy, k = rules_pick(&rs, &a, &copy);
        cr_assert(k >= 0);
        cr_expect_str_eq(coll_tables[COLL_ALLTOALL].algs[k].name, cases[i].want, "nodes %d ppn %d", cases[i].nodes,
                         cases[i].ppn);
    }
    rules_free(&rs);
}
