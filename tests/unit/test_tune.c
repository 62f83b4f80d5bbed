/*
 * tests/unit/test_tune.c — the tuning file: a good file is followed, every kind of mistake is
 * reported with its JSON path and the whole file ignored.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "collectives/coll.h"
#include "collectives/copy.h"
#include "collectives/tune.h"

static char path[64];

static void write_file(const char *text)
{
    snprintf(path, sizeof path, "/tmp/hint-tune-test-%d.json", (int)getpid());
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(text, f);
    fclose(f);
}

static void cleanup(void) { unlink(path); }

static void expect_error(const char *text, const char *needle)
{
    write_file(text);
    char msg[512] = "";
    cr_expect_eq(tune_load_file(path, msg, sizeof msg), HINT_ERR_ARG, "accepted: %s", text);
    cr_expect(strstr(msg, needle) != NULL, "message '%s' lacks '%s'", msg, needle);
    struct coll_args a = {.op_id = COLL_ALLTOALL, .size = 8, .block = 8};
    int alg, copy;
    cr_expect(!tune_lookup(&a, &alg, &copy), "a rejected file still selects");
    cleanup();
}

Test(tune, good_file_is_followed)
{
    write_file("{ \"version\": 1, \"_comment\": \"made by hand\",\n"
               "  \"alltoall\": [ { \"P\": 8, \"rules\": [ { \"max_bytes\": 128, \"algorithm\": \"linear\" },\n"
               "                                      { \"algorithm\": \"hilbert\", \"copy\": \"nt\" } ] },\n"
               "                { \"P\": 2, \"rules\": [ { \"algorithm\": \"column\" } ] } ],\n"
               "  \"bcast\": [ { \"P\": 8, \"rules\": [ { \"algorithm\": \"binomial\" } ] } ] }\n");
    char msg[512];
    cr_assert_eq(tune_load_file(path, msg, sizeof msg), HINT_SUCCESS, "%s", msg);
    cleanup();
    int alg, copy;
    struct coll_args a = {.op_id = COLL_ALLTOALL, .size = 8, .block = 100};
    cr_assert(tune_lookup(&a, &alg, &copy));
    cr_expect_str_eq(coll_tables[COLL_ALLTOALL].algs[alg].name, "linear");
    cr_expect_eq(copy, -1);
    a.block = 129;
    cr_assert(tune_lookup(&a, &alg, &copy));
    cr_expect_str_eq(coll_tables[COLL_ALLTOALL].algs[alg].name, "hilbert");
    cr_expect_eq(copy, COPY_NT);
    a.size = 2;
    cr_assert(tune_lookup(&a, &alg, &copy));
    cr_expect_str_eq(coll_tables[COLL_ALLTOALL].algs[alg].name, "column");
    a.size = 4; /* no entry for P = 4 */
    cr_expect(!tune_lookup(&a, &alg, &copy));
    struct coll_args b = {.op_id = COLL_BCAST, .size = 8, .block = 1 << 20};
    cr_assert(tune_lookup(&b, &alg, &copy));
    cr_expect_str_eq(coll_tables[COLL_BCAST].algs[alg].name, "binomial");
    tune_unload();
}

/* Version 2, the built-in rules' format: bounds on the shape and size, lists of algorithms. */
Test(tune, version_2_rules_are_followed)
{
    write_file("{ \"version\": 2,\n"
               "  \"alltoall\": [ { \"min_ranks\": 3, \"max_ppn\": 8, \"max_bytes\": 64, \"algorithm\": \"bruck\" },\n"
               "                { \"min_ranks\": 3, \"algorithm\": [\"morton\", \"pairwise\"], \"copy\": \"temporal\" } ] }\n");
    char msg[512];
    cr_assert_eq(tune_load_file(path, msg, sizeof msg), HINT_SUCCESS, "%s", msg);
    cleanup();
    int alg, copy;
    struct coll_args a = {.op_id = COLL_ALLTOALL, .size = 8, .block = 64};
    cr_assert(tune_lookup(&a, &alg, &copy));
    cr_expect_str_eq(coll_tables[COLL_ALLTOALL].algs[alg].name, "bruck");
    a.block = 65;
    cr_assert(tune_lookup(&a, &alg, &copy));
    cr_expect_str_eq(coll_tables[COLL_ALLTOALL].algs[alg].name, "morton");
    cr_expect_eq(copy, COPY_TEMPORAL);
    a.size = 2;
    cr_expect(!tune_lookup(&a, &alg, &copy));
    tune_unload();
}

Test(tune, mistakes_are_reported_with_their_path)
{
    expect_error("{ \"version\": 1, \"alltoall\": [ { \"P\": 8, \"rules\": [ { \"algorithm\": \"fastest\" } ] } ] }",
                 "alltoall[0].rules[0].algorithm: 'fastest' is not a alltoall algorithm");
    expect_error("{ \"version\": 1, \"alltoal\": [] }", "alltoal: not a collective operation");
    expect_error("{ \"version\": 3 }", "version: must be 1 or 2");
    expect_error("{ \"version\": 2, \"alltoall\": [ { \"max_ppn\": 4, \"algorithm\": [\"row\", \"colum\"] } ] }",
                 "alltoall[0].algorithm: 'colum' is not a alltoall algorithm");
    expect_error("{ \"version\": 2, \"alltoall\": [ { \"ppn\": 4, \"algorithm\": \"row\" } ] }",
                 "alltoall[0]: unknown key \"ppn\"");
    expect_error("{ \"version\": 1, \"alltoall\": [ { \"P\": 0, \"rules\": [] } ] }", "alltoall[0].P");
    expect_error("{ \"version\": 1, \"alltoall\": [ { \"P\": 4, \"rules\": [ { \"algorithm\": \"row\", \"copy\": \"fast\" } ] } ] }",
                 "rules[0].copy");
    expect_error("{ \"version\": 1, \"alltoall\": [ { \"P\": 4, \"rules\": [ { \"algorithm\": \"row\", \"max_bytes\": -3 } ] } ] }",
                 "max_bytes");
    expect_error("{ \"version\": 1, \"alltoall\": [ { \"P\": 4, \"rules\": [ ", ":1:");
    expect_error("[ 1, 2 ]", "top level");
    char msg[256];
    cr_expect_eq(tune_load_file("/nonexistent/tuning.json", msg, sizeof msg), HINT_ERR_ARG);
    cr_expect(strstr(msg, "/nonexistent/tuning.json") != NULL, "%s", msg);
    tune_unload();
}
