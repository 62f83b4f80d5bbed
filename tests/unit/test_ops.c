/*
 * tests/unit/test_ops.c — the reduction kernels against plain C, and the (op, kind) pairs that
 * must be refused.
 */
#include <complex.h>
#include <criterion/criterion.h>
#include <stdint.h>

#include "collectives/op.h"
#include "datatype/datatype.h"

Test(ops, integer_kernels)
{
    int a[4] = {1, -2, 3, 0}, b[4] = {5, 6, -7, 0};
    int r[4];
    memcpy(r, b, sizeof r);
    op_reduce(HINT_SUM, DT_INT, a, r, 4);
    cr_expect(r[0] == 6 && r[1] == 4 && r[2] == -4 && r[3] == 0);
    memcpy(r, b, sizeof r);
    op_reduce(HINT_MIN, DT_INT, a, r, 4);
    cr_expect(r[0] == 1 && r[1] == -2 && r[2] == -7);
    memcpy(r, b, sizeof r);
    op_reduce(HINT_LAND, DT_INT, a, r, 4);
    cr_expect(r[0] == 1 && r[3] == 0);
    memcpy(r, b, sizeof r);
    op_reduce(HINT_BXOR, DT_INT, a, r, 4);
    cr_expect(r[0] == (1 ^ 5) && r[2] == (3 ^ -7));
    uint64_t u[2] = {UINT64_MAX, 3}, v[2] = {1, 4};
    op_reduce(HINT_PROD, DT_UINT64, u, v, 2);
    cr_expect(v[0] == UINT64_MAX && v[1] == 12);
}

Test(ops, float_and_complex_kernels)
{
    double a[2] = {1.5, -2}, b[2] = {2, 8};
    op_reduce(HINT_MAX, DT_DOUBLE, a, b, 2);
    cr_expect(b[0] == 2 && b[1] == 8);
    double complex c[1] = {1 + 2 * I}, d[1] = {3 - I};
    op_reduce(HINT_PROD, DT_COMPLEX_DOUBLE, c, d, 1);
    cr_expect(creal(d[0]) == 5 && cimag(d[0]) == 5);
}

Test(ops, meaningless_pairs_are_refused)
{
    cr_expect_eq(op_check(HINT_SUM, DT_BYTE), HINT_ERR_OP);
    cr_expect_eq(op_check(HINT_BXOR, DT_DOUBLE), HINT_ERR_OP);
    cr_expect_eq(op_check(HINT_MAX, DT_COMPLEX_FLOAT), HINT_ERR_OP);
    cr_expect_eq(op_check(HINT_LAND, DT_FLOAT), HINT_ERR_OP);
    cr_expect_eq(op_check(HINT_SUM, DT_CHAR), HINT_ERR_OP);
    cr_expect_eq(op_check(HINT_SUM, DT_NONE), HINT_ERR_OP);
    cr_expect_eq(op_check(NULL, DT_INT), HINT_ERR_OP);
    cr_expect_eq(op_check(HINT_BAND, DT_BYTE), HINT_SUCCESS);
    /* every integer kind takes all nine */
    hint_op all[] = {HINT_SUM, HINT_PROD, HINT_MIN, HINT_MAX, HINT_LAND, HINT_LOR, HINT_BAND, HINT_BOR, HINT_BXOR};
    int ints[] = {DT_INT, DT_LONG, DT_INT32, DT_INT64, DT_UINT32, DT_UINT64};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        for (size_t k = 0; k < 9; k++)
            cr_expect_eq(op_check(all[k], ints[i]), HINT_SUCCESS, "op %zu kind %d", k, ints[i]);
}
