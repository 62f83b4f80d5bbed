/*
 * collectives/op.c — the nine predefined reduction operations, a kernel per (operation, kind)
 * generated from one macro each. Which pairs exist follows MPI: arithmetic (sum, prod) on
 * integers, floats and complex; min/max on integers and floats; logical (land, lor) on
 * integers; bitwise (band, bor, bxor) on integers and bytes. Any other pair is HINT_ERR_OP.
 */
#include <complex.h>
#include <stdint.h>

#include "collectives/op.h"
#include "datatype/datatype.h"

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
};

op_kernel op_kernel_for(hint_op op, int basic)
{
    if (op == NULL || op->magic != OP_MAGIC || op->id < 0 || op->id >= OP_NOPS)
        return NULL;
    if (basic < 0 || basic >= DT_NBASIC)
        return NULL;
    return kernels[basic][op->id];
}

int op_check(hint_op op, int basic) { return op_kernel_for(op, basic) ? HINT_SUCCESS : HINT_ERR_OP; }

void op_reduce(hint_op op, int basic, const void *in, void *inout, size_t count)
{
    op_kernel_for(op, basic)(in, inout, count);
}
