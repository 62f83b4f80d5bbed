/*
 * tests/unit/test_select.c — the selection tables: names unique and looked up, forcing and
 * "auto", defaults always applicable, before any rank exists.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "collectives/coll.h"

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
    cr_expect_eq(hint_coll_set("alltoall", "auto"), HINT_SUCCESS);
    cr_expect_null(coll_forced_name(COLL_ALLTOALL));
    cr_expect_eq(hint_coll_set("alltoall", "bruck"), HINT_SUCCESS);
    cr_expect_str_eq(coll_forced_name(COLL_ALLTOALL), "bruck");
}

Test(select, defaults_are_applicable)
{
    int ps[] = {2, 3, 4, 5, 7, 8, 16, 17, 64};
    size_t bytes[] = {1, 8, 256, 4096, 65536, 1 << 20, (size_t)8 << 20};
    for (int op = 0; op < COLL_NOPS; op++)
        for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
            for (size_t j = 0; j < sizeof bytes / sizeof bytes[0]; j++) {
                struct coll_args a = {.op_id = op, .size = ps[i], .block = bytes[j], .count = bytes[j] / 8};
                const struct coll_table *t = &coll_tables[op];
                int k = t->choose(&a);
                cr_assert(k >= 0 && k < t->nalgs);
                cr_expect(t->algs[k].applicable == NULL || t->algs[k].applicable(&a), "%s picks %s at P=%d",
                          t->op, t->algs[k].name, ps[i]);
            }
}
