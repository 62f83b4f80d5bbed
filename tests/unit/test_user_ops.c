/*
 * tests/unit/test_user_ops.c — hint_op_create / hint_op_free and their errors, a user op bound to
 * a call's type (contiguous, and strided: the function sees its elements in their layout), the
 * MINLOC / MAXLOC kernels on packed pairs with ties, and which (op, kind) pairs are refused.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "collectives/op.h"
#include "datatype/datatype.h"

static hint_type seen;
static size_t seen_count;

static void add_fn(const void *in, void *inout, size_t n, hint_type t)
{
    const int64_t *a = in;
    int64_t *b = inout;
    ptrdiff_t lb, ext;
    seen = t;
    seen_count = n;
    hint_type_extent(t, &lb, &ext);
    size_t step = (size_t)ext / sizeof(int64_t); /* one int64 of data at the start of each extent */
    for (size_t i = 0; i < n; i++)
        b[i * step] = a[i * step] * 10 + b[i * step];
}

Test(user_ops, create_and_free)
{
    hint_op op = HINT_OP_NULL;
    cr_expect_eq(hint_op_create(NULL, 1, &op), HINT_ERR_ARG);
    cr_expect_eq(hint_op_create(add_fn, 1, NULL), HINT_ERR_ARG);
    cr_assert_eq(hint_op_create(add_fn, 0, &op), HINT_SUCCESS);
    cr_expect_neq(op, HINT_OP_NULL);
    cr_expect(op_is_user(op));
    cr_expect(!op_commutes(op), "created with commute = 0");
    cr_expect_eq(op_check(op, DT_NONE), HINT_SUCCESS, "a user op takes any type, a mix of kinds too");
    hint_op stale = op;
    cr_expect_eq(hint_op_free(&op), HINT_SUCCESS);
    cr_expect_eq(op, HINT_OP_NULL);
    cr_expect_eq(hint_op_free(&stale), HINT_ERR_OP, "a second free is refused without reading the handle");
    cr_expect_eq(op_check(stale, DT_INT), HINT_ERR_OP, "a freed op is not live");
    cr_expect_eq(hint_op_free(&op), HINT_ERR_OP, "HINT_OP_NULL");
    cr_expect_eq(hint_op_free(NULL), HINT_ERR_ARG);
}

Test(user_ops, predefined_ops_cannot_be_freed)
{
    hint_op ops[] = {HINT_SUM, HINT_MAX, HINT_BXOR, HINT_MINLOC, HINT_MAXLOC};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        hint_op op = ops[i];
        cr_expect_eq(hint_op_free(&op), HINT_ERR_OP);
        cr_expect_eq(op, ops[i], "the handle is left as it was");
        cr_expect(op_commutes(op));
        cr_expect(!op_is_user(op));
    }
    hint_op sum = HINT_SUM;
    cr_expect_eq(hint_op_free(&sum), HINT_ERR_OP);
    cr_expect_eq(op_check(HINT_SUM, DT_INT), HINT_SUCCESS, "still usable");
}

Test(user_ops, bound_to_contiguous_and_strided_types)
{
    hint_op op, b, b2;
    cr_assert_eq(hint_op_create(add_fn, 1, &op), HINT_SUCCESS);
    cr_assert_eq(op_bind(op, HINT_INT64, &b), HINT_SUCCESS);
    cr_expect_neq(b, op, "a user op runs as its copy bound to the type");
    cr_assert_eq(op_bind(op, HINT_INT64, &b2), HINT_SUCCESS);
    cr_expect_eq(b2, b, "one bound copy per type, kept by the op");
    cr_assert_eq(op_bind(HINT_SUM, HINT_INT64, &b2), HINT_SUCCESS);
    cr_expect_eq(b2, HINT_SUM, "predefined ops are not bound");
    int64_t in[3] = {1, 2, 3}, io[3] = {4, 5, 6};
    op_reduce(b, DT_INT64, in, io, 3);
    cr_expect(io[0] == 14 && io[1] == 25 && io[2] == 36);
    cr_expect_eq(seen, HINT_INT64);
    /* strided: one int64 per 16 bytes; the algorithms hand over packed data, the function must
       get it in the layout and its result must come back packed */
    hint_type v, t;
    cr_assert_eq(hint_type_vector(1, 1, 2, HINT_INT64, &v), HINT_SUCCESS);
    cr_assert_eq(hint_type_resized(v, 0, 16, &t), HINT_SUCCESS);
    cr_assert_eq(hint_type_commit(&t), HINT_SUCCESS);
    cr_assert_eq(op_bind(op, t, &b), HINT_SUCCESS);
    int64_t pin[3] = {7, 8, 9}, pio[3] = {1, 1, 1};
    op_reduce(b, dt_sig_basic(t), pin, pio, 3);
    cr_expect(pio[0] == 71 && pio[1] == 81 && pio[2] == 91, "got %lld %lld %lld", (long long)pio[0],
              (long long)pio[1], (long long)pio[2]);
    cr_expect_eq(seen, t);
    cr_expect_eq(seen_count, 3);
    hint_type_free(&v);
    hint_type_free(&t);
    hint_op_free(&op);
}

Test(user_ops, minloc_maxloc_kernels)
{
    /* packed double_int pairs: 8 bytes of value, 4 of index */
    char a[36], b[36];
    double av[3] = {1.0, 2.0, 3.0}, bv[3] = {1.0, 1.5, 3.0};
    int ai[3] = {5, 0, 9}, bi[3] = {2, 1, 4};
    for (int k = 0; k < 3; k++) {
        memcpy(a + 12 * k, &av[k], 8);
        memcpy(a + 12 * k + 8, &ai[k], 4);
        memcpy(b + 12 * k, &bv[k], 8);
        memcpy(b + 12 * k + 8, &bi[k], 4);
    }
    char c[36];
    memcpy(c, b, sizeof c);
    op_reduce(HINT_MINLOC, DT_DOUBLE_INT, a, c, 3);
    double v;
    int i;
    memcpy(&v, c, 8), memcpy(&i, c + 8, 4);
    cr_expect(v == 1.0 && i == 2, "tie: the lower index");
    memcpy(&v, c + 12, 8), memcpy(&i, c + 20, 4);
    cr_expect(v == 1.5 && i == 1);
    memcpy(&v, c + 24, 8), memcpy(&i, c + 32, 4);
    cr_expect(v == 3.0 && i == 4, "tie: the lower index");
    memcpy(c, b, sizeof c);
    op_reduce(HINT_MAXLOC, DT_DOUBLE_INT, a, c, 3);
    memcpy(&v, c + 12, 8), memcpy(&i, c + 20, 4);
    cr_expect(v == 2.0 && i == 0);
    int p[4] = {3, 7, 3, 2}, q[4] = {3, 1, 4, 0};
    op_reduce(HINT_MAXLOC, DT_2INT, p, q, 2);
    cr_expect(q[0] == 3 && q[1] == 1 && q[2] == 4 && q[3] == 0);
}

Test(user_ops, pair_kinds_and_refusals)
{
    cr_expect_eq(op_check(HINT_MINLOC, DT_DOUBLE), HINT_ERR_OP);
    cr_expect_eq(op_check(HINT_SUM, DT_DOUBLE_INT), HINT_ERR_OP);
    cr_expect_eq(op_check(HINT_MAXLOC, DT_LONG_INT), HINT_SUCCESS);
    cr_expect_eq(op_check(HINT_MINLOC, DT_FLOAT_INT), HINT_SUCCESS);
    cr_expect_eq(dt_basic_size(DT_DOUBLE_INT), 12, "packed: the value and the int, no padding");
    cr_expect_eq(dt_basic_size(DT_2INT), 8);
    cr_expect(dt_kinds_match(DT_2INT, DT_INT), "2int is two ints");
    cr_expect(!dt_kinds_match(DT_DOUBLE_INT, DT_DOUBLE));
    cr_expect(!dt_is_contig(HINT_DOUBLE_INT) && dt_is_contig(HINT_2INT) && dt_is_contig(HINT_FLOAT_INT));
}
