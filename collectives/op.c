/*
 * collectives/op.c — the eleven predefined reduction operations, a kernel per (operation, kind)
 * generated from one macro each. Which pairs exist follows MPI: arithmetic (sum, prod) on
 * integers, floats and complex; min/max on integers and floats; logical (land, lor) on
 * integers; bitwise (band, bor, bxor) on integers and bytes; minloc/maxloc on the pair kinds.
 * Any other pair is HINT_ERR_OP. And the user-defined ops: hint_op_create / hint_op_free, kept
 * in a set of live ones so that a freed handle is refused without being read.
 */
#include <complex.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/op.h"
#include "datatype/datatype.h"
#include "runtime/runtime.h"

#define OP_MAGIC 0x6f707370u

#define OP_OBJ(var, id_, text) struct hint_op_s var = {.magic = OP_MAGIC, .id = id_, .name = text};
OP_OBJ(hint_op_sum_, OP_SUM, "sum")
OP_OBJ(hint_op_prod_, OP_PROD, "prod")
OP_OBJ(hint_op_min_, OP_MIN, "min")
OP_OBJ(hint_op_max_, OP_MAX, "max")
OP_OBJ(hint_op_land_, OP_LAND, "land")
OP_OBJ(hint_op_lor_, OP_LOR, "lor")
OP_OBJ(hint_op_band_, OP_BAND, "band")
OP_OBJ(hint_op_bor_, OP_BOR, "bor")
OP_OBJ(hint_op_bxor_, OP_BXOR, "bxor")
OP_OBJ(hint_op_minloc_, OP_MINLOC, "minloc")
OP_OBJ(hint_op_maxloc_, OP_MAXLOC, "maxloc")

static const hint_op predefined_ops[OP_NOPS] = {HINT_SUM,  HINT_PROD, HINT_MIN,  HINT_MAX,    HINT_LAND,  HINT_LOR,
                                                HINT_BAND, HINT_BOR,  HINT_BXOR, HINT_MINLOC, HINT_MAXLOC};

#define KERNEL(name, ctype, expr)                                                                \
    static void name(const void *in_, void *inout_, size_t n)                                   \
    {                                                                                            \
        const ctype *a = in_;                                                                    \
        ctype *b = inout_;                                                                       \
        for (size_t i = 0; i < n; i++)                                                           \
            b[i] = (expr);                                                                       \
    }

#define ARITH(sfx, ctype)                                                                        \
    KERNEL(sum_##sfx, ctype, a[i] + b[i])                                                        \
    KERNEL(prod_##sfx, ctype, a[i] * b[i])
#define ORDER(sfx, ctype)                                                                        \
    KERNEL(min_##sfx, ctype, a[i] < b[i] ? a[i] : b[i])                                          \
    KERNEL(max_##sfx, ctype, a[i] > b[i] ? a[i] : b[i])
#define LOGIC(sfx, ctype)                                                                        \
    KERNEL(land_##sfx, ctype, (ctype)(a[i] && b[i]))                                             \
    KERNEL(lor_##sfx, ctype, (ctype)(a[i] || b[i]))
#define BITS(sfx, ctype)                                                                         \
    KERNEL(band_##sfx, ctype, a[i] & b[i])                                                       \
    KERNEL(bor_##sfx, ctype, a[i] | b[i])                                                        \
    KERNEL(bxor_##sfx, ctype, a[i] ^ b[i])
#define INTEGER(sfx, ctype) ARITH(sfx, ctype) ORDER(sfx, ctype) LOGIC(sfx, ctype) BITS(sfx, ctype)

INTEGER(int, int)
INTEGER(long, long)
INTEGER(i32, int32_t)
INTEGER(i64, int64_t)
INTEGER(u32, uint32_t)
INTEGER(u64, uint64_t)
BITS(byte, unsigned char)
ARITH(flt, float)
ORDER(flt, float)
ARITH(dbl, double)
ORDER(dbl, double)
ARITH(cflt, float complex)
ARITH(cdbl, double complex)

/* minloc/maxloc on packed pairs: the value, then the int index right after it (no padding in
   the packed form, so loads go through memcpy). Ties keep the lower index, as MPI. */
#define PAIR_KERNEL(name, vtype, better)                                                         \
    static void name(const void *in_, void *inout_, size_t n)                                   \
    {                                                                                            \
        enum { V = sizeof(vtype), S = sizeof(vtype) + sizeof(int) };                             \
        const char *a = in_;                                                                     \
        char *b = inout_;                                                                        \
        for (size_t i = 0; i < n; i++, a += S, b += S) {                                         \
            vtype av, bv;                                                                        \
            int ai, bi;                                                                          \
            memcpy(&av, a, V);                                                                   \
            memcpy(&bv, b, V);                                                                   \
            memcpy(&ai, a + V, sizeof ai);                                                       \
            memcpy(&bi, b + V, sizeof bi);                                                       \
            if (av better bv || (av == bv && ai < bi))                                           \
                memcpy(b, a, S);                                                                 \
        }                                                                                        \
    }
#define PAIRS(sfx, vtype) PAIR_KERNEL(minloc_##sfx, vtype, <) PAIR_KERNEL(maxloc_##sfx, vtype, >)
PAIRS(flt, float)
PAIRS(dbl, double)
PAIRS(long, long)
PAIRS(int, int)
#define PAIR_ROW(sfx) {[OP_MINLOC] = minloc_##sfx, [OP_MAXLOC] = maxloc_##sfx}

#define INT_ROW(sfx) {sum_##sfx, prod_##sfx, min_##sfx, max_##sfx, land_##sfx, lor_##sfx, band_##sfx, bor_##sfx, bxor_##sfx}

static const op_kernel kernels[DT_NBASIC][OP_NOPS] = {
    [DT_BYTE] = {[OP_BAND] = band_byte, [OP_BOR] = bor_byte, [OP_BXOR] = bxor_byte},
    [DT_CHAR] = {NULL},
    [DT_INT] = INT_ROW(int),
    [DT_LONG] = INT_ROW(long),
    [DT_INT32] = INT_ROW(i32),
    [DT_INT64] = INT_ROW(i64),
    [DT_UINT32] = INT_ROW(u32),
    [DT_UINT64] = INT_ROW(u64),
    [DT_FLOAT] = {sum_flt, prod_flt, min_flt, max_flt},
    [DT_DOUBLE] = {sum_dbl, prod_dbl, min_dbl, max_dbl},
    [DT_COMPLEX_FLOAT] = {sum_cflt, prod_cflt},
    [DT_COMPLEX_DOUBLE] = {sum_cdbl, prod_cdbl},
    [DT_FLOAT_INT] = PAIR_ROW(flt),
    [DT_DOUBLE_INT] = PAIR_ROW(dbl),
    [DT_LONG_INT] = PAIR_ROW(long),
    [DT_2INT] = PAIR_ROW(int),
};

/* ---- user-defined ops ---- */

/* The live user ops: few, so a plain array searched from the end (the newest are used most). */
static struct {
    hint_op *v;
    size_t n, cap;
} user_ops;

static bool user_live(hint_op op)
{
    for (size_t i = user_ops.n; i-- > 0;)
        if (user_ops.v[i] == op)
            return true;
    return false;
}

static bool predefined(hint_op op)
{
    for (int i = 0; i < OP_NOPS; i++)
        if (op == predefined_ops[i])
            return true;
    return false;
}


HINT_API int hint_op_create(hint_user_fn *fn, int commute, hint_op *op)
{
    if (op == NULL || fn == NULL) {
        RT_ERR("op", "hint_op_create needs a function and a place for the handle (got %s NULL)",
               fn == NULL ? "fn" : "op");
        return HINT_ERR_ARG;
    }
    *op = HINT_OP_NULL;
    if (user_ops.n == user_ops.cap) {
        size_t cap = user_ops.cap ? 2 * user_ops.cap : 8;
        hint_op *v = realloc(user_ops.v, cap * sizeof *v);
        if (v == NULL)
            return HINT_ERR_NOMEM;
        user_ops.v = v;
        user_ops.cap = cap;
    }
    struct hint_op_s *o = calloc(1, sizeof *o);
    if (o == NULL)
        return HINT_ERR_NOMEM;
    *o = (struct hint_op_s){.magic = OP_MAGIC, .id = OP_USER, .name = "user", .fn = fn, .commute = commute != 0};
    user_ops.v[user_ops.n++] = o;
    *op = o;
    return HINT_SUCCESS;
}

bool (*op_free_deferred)(hint_op op);

void op_destroy(hint_op op)
{
    for (struct hint_op_s *b = op->bound, *next; b != NULL; b = next) {
        next = b->bound;
        free(b);
    }
    free(op);
}

hint_op op_hot = HINT_OP_NULL;
int op_hot_basic = INT32_MIN; /* no kind: a NULL op never matches */

HINT_API int hint_op_free(hint_op *op)
{
    if (op == NULL)
        return HINT_ERR_ARG;
    if (predefined(*op)) {
        RT_ERR("op", "hint_op_free: %s is a predefined op and cannot be freed; free only what hint_op_create made",
               (*op)->name);
        return HINT_ERR_OP;
    }
    for (size_t i = 0; i < user_ops.n; i++)
        if (user_ops.v[i] == *op) {
            user_ops.v[i] = user_ops.v[--user_ops.n];
            if (op_hot == *op)
                op_hot = HINT_OP_NULL, op_hot_basic = INT32_MIN;
            if (op_free_deferred == NULL || !op_free_deferred(*op))
                op_destroy(*op);
            *op = HINT_OP_NULL;
            return HINT_SUCCESS;
        }
    if (*op != HINT_OP_NULL)
        RT_ERR("op", "hint_op_free: %p is not a live op (freed already, or never made by hint_op_create)",
               (void *)*op);
    return HINT_ERR_OP;
}

/* Past op_check (the algorithms' ops, the call's bound copies included): readable. */
bool op_commutes(hint_op op) { return !op_is_user(op) || op->commute; }

int op_bind_user(hint_op op, hint_type t, hint_op *bound)
{
    struct hint_op_s *b = op->bound;
    while (b != NULL && b->type != t)
        b = b->bound;
    if (b == NULL) {
        if ((b = malloc(sizeof *b)) == NULL)
            return HINT_ERR_NOMEM;
        *b = *op;
        b->type = t;
        op->bound = b; /* the new copy's link is the old list's head */
    }
    *bound = b;
    return HINT_SUCCESS;
}

/* A user function on packed elements of a type that is not contiguous: it is given them in the
   type's layout, a slice at a time, through two buffers spanning the slice. */
#define USER_SLICE 16384 /* bytes of extent per slice, about */
static void user_reduce_layout(hint_op op, const char *in, char *inout, size_t count)
{
    hint_type t = op->type;
    size_t size = dt_size(t), done;
    ptrdiff_t ext = dt_extent(t) < 0 ? -dt_extent(t) : dt_extent(t), lo, hi;
    size_t per = ext > 0 && (size_t)ext < USER_SLICE ? USER_SLICE / (size_t)ext : 1;
    per = per < count ? per : count;
    if (dt_span(t, per, &lo, &hi) != HINT_SUCCESS)
        return; /* cannot happen: the call checked the whole count's span */
    char *a = malloc((size_t)(hi - lo) + 1), *b = malloc((size_t)(hi - lo) + 1);
    if (a == NULL || b == NULL) {
        RT_ERR("op", "out of memory for %td bytes to give a user op its elements in their layout", hi - lo);
        hint_abort(1);
    }
    for (size_t k = 0; k < count; k += per) {
        size_t n = count - k < per ? count - k : per;
        dt_unpack_range_rep(in + k * size, n * size, 0, a - lo, n, t, &done, DT_REP_AUTO);
        dt_unpack_range_rep(inout + k * size, n * size, 0, b - lo, n, t, &done, DT_REP_AUTO);
        op->fn(a - lo, b - lo, n, t);
        dt_pack_range_rep(b - lo, n, t, 0, inout + k * size, n * size, &done, DT_REP_AUTO);
    }
    free(a);
    free(b);
}

static void user_reduce(hint_op op, const void *in, void *inout, size_t count)
{
    if (count == 0)
        return;
    if (op->type == NULL || dt_is_contig(op->type))
        op->fn(in, inout, count, op->type);
    else
        user_reduce_layout(op, in, inout, count);
}

op_kernel op_kernel_for(hint_op op, int basic)
{
    if (op == NULL || op->magic != OP_MAGIC || op->id < 0 || op->id >= OP_NOPS)
        return NULL;
    if (basic < 0 || basic >= DT_NBASIC)
        return NULL;
    return kernels[basic][op->id];
}

/* A handle the user may pass (predefined or a live user op, found without reading it) and has a
   meaning for the kind. */
int op_check(hint_op op, int basic)
{
    if (op == NULL)
        return HINT_ERR_OP;
    for (int i = 0; i < OP_NOPS; i++)
        if (op == predefined_ops[i]) /* predefined_ops[i]->id == i */
            return basic >= 0 && basic < DT_NBASIC && kernels[basic][i] ? HINT_SUCCESS : HINT_ERR_OP;
    return user_live(op) ? HINT_SUCCESS : HINT_ERR_OP;
}

void op_reduce(hint_op op, int basic, const void *in, void *inout, size_t count)
{
    if (op->id == OP_USER)
        user_reduce(op, in, inout, count);
    else
        kernels[basic][op->id](in, inout, count); /* op_check found this kernel */
}

void op_reduce_ordered(hint_op op, int basic, void *in, void *inout, size_t count, size_t bytes, bool in_first)
{
    if (in_first || op_commutes(op)) {
        op_reduce(op, basic, in, inout, count);
        return;
    }
    op_reduce(op, basic, inout, in, count);
    memcpy(inout, in, bytes);
}
