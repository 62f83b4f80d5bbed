/*
 * datatype/predefined.c — the predefined types (HINT_BYTE …) and the accessors that the other
 * layers use (datatype/datatype.h).
 */
#include <complex.h>
#include <stddef.h>
#include <stdint.h>

#include "datatype/type.h"

#define DT_PREDEFINED(var, k, ctype, text)                                                     \
    struct hint_type_s var = {.magic = DT_MAGIC, .predefined = true, .committed = true,          \
                              .run = true, .contig = true, .basic = k, .sig = k,                 \
                              .size = sizeof(ctype), .lb = 0, .extent = sizeof(ctype),           \
                              .true_lb = 0, .true_extent = sizeof(ctype), .name = text,          \
                              .refs = 1, .kind = DT_K_BASIC};

DT_PREDEFINED(hint_type_byte_, DT_BYTE, unsigned char, "byte")
DT_PREDEFINED(hint_type_char_, DT_CHAR, char, "char")
DT_PREDEFINED(hint_type_int_, DT_INT, int, "int")
DT_PREDEFINED(hint_type_long_, DT_LONG, long, "long")
DT_PREDEFINED(hint_type_int32_, DT_INT32, int32_t, "int32")
DT_PREDEFINED(hint_type_int64_, DT_INT64, int64_t, "int64")
DT_PREDEFINED(hint_type_uint32_, DT_UINT32, uint32_t, "uint32")
DT_PREDEFINED(hint_type_uint64_, DT_UINT64, uint64_t, "uint64")
DT_PREDEFINED(hint_type_float_, DT_FLOAT, float, "float")
DT_PREDEFINED(hint_type_double_, DT_DOUBLE, double, "double")
DT_PREDEFINED(hint_type_complex_float_, DT_COMPLEX_FLOAT, float complex, "complex_float")
DT_PREDEFINED(hint_type_complex_double_, DT_COMPLEX_DOUBLE, double complex, "complex_double")

/* MPI's pair types for MINLOC/MAXLOC, laid out as these structs. The data of one is the value
   and the index, one run from offset 0; the double and long pairs' tail padding is outside it
   (size 12, extent 16), so those two are not contiguous and carry the plan that commit would
   build for that layout (a single 12-byte piece per 16-byte element), written out here because
   the predefined types exist before main, when nothing may be allocated. */
struct dt_float_int { float v; int i; };
struct dt_double_int { double v; int i; };
struct dt_long_int { long v; int i; };
struct dt_2int { int v; int i; };
#define PAIR_SIZE(s) (offsetof(struct s, i) + sizeof(int))
#define PAIR_CONTIG(s) (PAIR_SIZE(s) == sizeof(struct s))

#define DT_PAIR(var, k, s, text)                                                                  \
    static struct dt_iov var##iov = {.disp = 0, .len = PAIR_SIZE(s), .pos = 0};                  \
    static struct dt_item var##items[2] = {                                                       \
        {.disp = 0, .stride = sizeof(struct s), .count = 1, .nbody = 1, .span = 2, .size = PAIR_SIZE(s)}, \
        {.disp = 0, .count = 1, .blocklen = PAIR_SIZE(s), .span = 1, .size = PAIR_SIZE(s)}};    \
    static struct dt_plan var##plan = {                                                           \
        .items = var##items, .nitems = 2, .fusable = true,                                        \
        .fused = {.disp = 0, .stride = sizeof(struct s), .count = 1, .blocklen = PAIR_SIZE(s),    \
                  .span = 1, .size = PAIR_SIZE(s)},                                               \
        .iov = &var##iov, .niov = 1, .nblocks = 1, .loop_visits = 1};                             \
    struct hint_type_s var = {.magic = DT_MAGIC, .predefined = true, .committed = true, .run = true, \
                              .contig = PAIR_CONTIG(s), .basic = PAIR_CONTIG(s) ? k : DT_NONE,   \
                              .sig = k, .size = PAIR_SIZE(s), .lb = 0, .extent = sizeof(struct s), \
                              .true_lb = 0, .true_extent = PAIR_SIZE(s), .name = text, .refs = 1, \
                              .kind = DT_K_BASIC, .plan = PAIR_CONTIG(s) ? NULL : &var##plan};

DT_PAIR(hint_type_float_int_, DT_FLOAT_INT, dt_float_int, "float_int")
DT_PAIR(hint_type_double_int_, DT_DOUBLE_INT, dt_double_int, "double_int")
DT_PAIR(hint_type_long_int_, DT_LONG_INT, dt_long_int, "long_int")
DT_PAIR(hint_type_2int_, DT_2INT, dt_2int, "2int")

static const hint_type dt_basic_types[DT_NBASIC] = {
    HINT_BYTE,  HINT_CHAR,   HINT_INT,   HINT_LONG,  HINT_INT32,         HINT_INT64,
    HINT_UINT32, HINT_UINT64, HINT_FLOAT, HINT_DOUBLE, HINT_COMPLEX_FLOAT, HINT_COMPLEX_DOUBLE,
    HINT_FLOAT_INT, HINT_DOUBLE_INT, HINT_LONG_INT, HINT_2INT,
};

/* The predefined types are live from the start, so that their checks find them at the first probe
   and a message about a wrong-kind handle can tell that it is a type. mmap only: this runs before
   main, before any malloc override is set up. */
__attribute__((constructor)) static void dt_register_predefined(void)
{
    for (int i = 0; i < DT_NBASIC; i++)
        reg_add(REG_TYPE, dt_basic_types[i]);
}

/* Only reached when the registry could not take them (no memory for a page at load time). */
bool dt_live_predefined(hint_type t)
{
    for (int i = 0; i < DT_NBASIC; i++)
        if (t == dt_basic_types[i])
            return true;
    return false;
}

/* The element sizes of the kinds, in dt_basic_types' order (dt_basic_size inlines this table). */
const size_t dt_basic_sizes[DT_NBASIC] = {
    sizeof(unsigned char), sizeof(char), sizeof(int), sizeof(long), sizeof(int32_t), sizeof(int64_t),
    sizeof(uint32_t), sizeof(uint64_t), sizeof(float), sizeof(double), sizeof(float complex), sizeof(double complex),
    PAIR_SIZE(dt_float_int), PAIR_SIZE(dt_double_int), PAIR_SIZE(dt_long_int), PAIR_SIZE(dt_2int),
};

const char *dt_basic_name(int basic)
{
    return basic >= 0 && basic < DT_NBASIC ? dt_basic_types[basic]->name : "derived";
}

int dt_span(hint_type t, size_t count, ptrdiff_t *lo, ptrdiff_t *hi)
{
    ptrdiff_t last, a, b;
    *lo = *hi = 0;
    if (count == 0 || t->size == 0)
        return HINT_SUCCESS;
    /* the first and the last element bound the others: elements sit one extent apart */
    if (count - 1 > (size_t)PTRDIFF_MAX || __builtin_mul_overflow((ptrdiff_t)(count - 1), t->extent, &last) ||
        __builtin_add_overflow(t->true_lb, last, &a) || __builtin_add_overflow(a, t->true_extent, &b))
        return HINT_ERR_COUNT;
    *lo = last < 0 ? a : t->true_lb;
    *hi = last < 0 ? t->true_lb + t->true_extent : b;
    return HINT_SUCCESS;
}
