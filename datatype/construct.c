/*
 * datatype/construct.c — the type constructors, free and the size/extent queries.
 *
 * Every constructor reduces to one of three node kinds (type.h): HVECTOR (contiguous, vector,
 * hvector, the dimensions of a subarray), HINDEXED (indexed, hindexed, indexed_block, struct)
 * and RESIZED. lb/ub follow MPI: the minimum of every copy's lb and the maximum of every copy's
 * ub (lb + extent), so markers set by resized stick through later constructors; the true bounds
 * take only data. No alignment padding is added: a struct's extent is what its displacements and
 * types give. Any overflow of the byte arithmetic is HINT_ERR_COUNT.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "datatype/type.h"

/* What the blocks of a node add up to, accumulated block by block. */
struct dt_acc {
    int st;
    bool any, tany;       /* some block has copies / some block has data */
    ptrdiff_t lo, hi;     /* MPI lb and ub */
    ptrdiff_t tlo, thi;   /* true lb and ub */
    size_t size;
    int sig;
    bool run, started;    /* data so far is one run ending at `end` */
    ptrdiff_t end;
};

static bool dt_add(ptrdiff_t a, ptrdiff_t b, ptrdiff_t *r) { return __builtin_add_overflow(a, b, r); }
static bool dt_mul(ptrdiff_t a, ptrdiff_t b, ptrdiff_t *r) { return __builtin_mul_overflow(a, b, r); }

static bool dt_as_diff(size_t n, ptrdiff_t *r)
{
    if (n > (size_t)PTRDIFF_MAX)
        return true;
    *r = (ptrdiff_t)n;
    return false;
}

int dt_valid(hint_type t) { return dt_live(t) ? HINT_SUCCESS : reg_reject(REG_TYPE, t, HINT_ERR_TYPE); }

static void dt_acc_init(struct dt_acc *a)
{
    memset(a, 0, sizeof *a);
    a->sig = DT_SIG_EMPTY;
    a->run = true;
}

/* [lo, hi] of bl copies of old placed from disp, for a pair of (lb, width). */
static bool dt_copies_range(ptrdiff_t disp, size_t bl, ptrdiff_t ext, ptrdiff_t lb, ptrdiff_t width,
                            ptrdiff_t *lo, ptrdiff_t *hi)
{
    ptrdiff_t n, last, a, b, ea, eb;
    if (dt_as_diff(bl - 1, &n) || dt_mul(n, ext, &last) || dt_add(disp, lb, &a) || dt_add(a, last, &b) ||
        dt_add(a, width, &ea) || dt_add(b, width, &eb))
        return true;
    *lo = a < b ? a : b;
    *hi = ea > eb ? ea : eb;
    return false;
}

/* Bounds of a block of bl copies of old at disp (bl > 0). */
static void dt_acc_span(struct dt_acc *a, ptrdiff_t disp, size_t bl, hint_type old)
{
    ptrdiff_t lo, hi;
    if (dt_copies_range(disp, bl, old->extent, old->lb, old->extent, &lo, &hi)) {
        a->st = HINT_ERR_COUNT;
        return;
    }
    /* lb markers sit at copy + lb and ub markers at copy + lb + extent, so this holds for a
       negative extent too (then ub < lb and the extent comes out negative, as in MPI) */
    a->lo = a->any && a->lo < lo ? a->lo : lo;
    a->hi = a->any && a->hi > hi ? a->hi : hi;
    a->any = true;
    if (old->size == 0)
        return;
    if (dt_copies_range(disp, bl, old->extent, old->true_lb, old->true_extent, &lo, &hi)) {
        a->st = HINT_ERR_COUNT;
        return;
    }
    a->tlo = a->tany && a->tlo < lo ? a->tlo : lo;
    a->thi = a->tany && a->thi > hi ? a->thi : hi;
    a->tany = true;
}

/* Data (size, signature kind, one-run-ness) of a block of bl copies of old at disp. */
static void dt_acc_data(struct dt_acc *a, ptrdiff_t disp, size_t bl, hint_type old)
{
    size_t bytes;
    ptrdiff_t start, len, end;
    if (old->size == 0 || bl == 0)
        return;
    if (__builtin_mul_overflow(bl, old->size, &bytes) || __builtin_add_overflow(a->size, bytes, &a->size) ||
        dt_as_diff(bytes, &len) || dt_add(disp, old->true_lb, &start) || dt_add(start, len, &end)) {
        a->st = HINT_ERR_COUNT;
        return;
    }
    if (a->sig == DT_SIG_EMPTY)
        a->sig = old->sig;
    else if (a->sig != old->sig)
        a->sig = DT_NONE;
    if (!old->run || (bl > 1 && old->extent != (ptrdiff_t)old->size) || (a->started && start != a->end))
        a->run = false;
    a->started = true;
    a->end = end;
}

static void dt_acc_block(struct dt_acc *a, ptrdiff_t disp, size_t bl, hint_type old)
{
    if (bl == 0)
        return;
    dt_acc_span(a, disp, bl, old);
    dt_acc_data(a, disp, bl, old);
}

/* The accumulated status, with extents that must fit a ptrdiff_t too. */
static int dt_acc_status(const struct dt_acc *a)
{
    ptrdiff_t d;
    if (a->st != HINT_SUCCESS)
        return a->st;
    if (__builtin_sub_overflow(a->hi, a->lo, &d) || __builtin_sub_overflow(a->thi, a->tlo, &d))
        return HINT_ERR_COUNT;
    return HINT_SUCCESS;
}

/* A fresh node holding a reference on each of its n old types. */
static int dt_node_new(int kind, size_t ntypes, const hint_type *types, hint_type *out)
{
    int st = HINT_SUCCESS;
    hint_type t = calloc(1, sizeof *t);
    if (t == NULL)
        return HINT_ERR_NOMEM;
    t->types = calloc(ntypes ? ntypes : 1, sizeof *t->types);
    if (t->types == NULL || reg_add(REG_TYPE, t) != HINT_SUCCESS) {
        free(t->types);
        st = HINT_ERR_NOMEM;
        goto out;
    }
    t->magic = DT_MAGIC;
    t->kind = kind;
    t->refs = 1;
    t->name = "derived";
    t->basic = DT_NONE;
    for (size_t i = 0; i < ntypes; i++) {
        t->types[i] = types[i];
        if (!types[i]->predefined)
            types[i]->refs++;
    }
    t->ntypes = ntypes;
    *out = t;
out:
    if (st != HINT_SUCCESS)
        free(t);
    return st;
}

static void dt_node_finish(hint_type t, const struct dt_acc *a)
{
    t->size = a->size;
    t->sig = a->sig;
    t->run = a->size > 0 && a->run;
    t->lb = a->any ? a->lo : 0;
    t->extent = a->any ? a->hi - a->lo : 0;
    t->true_lb = a->tany ? a->tlo : 0;
    t->true_extent = a->tany ? a->thi - a->tlo : 0;
}

void dt_retain(hint_type t)
{
    if (t != NULL && !t->predefined)
        t->refs++;
}

void dt_release(hint_type t)
{
    if (t == NULL || t->predefined || --t->refs > 0)
        return;
    for (size_t i = 0; i < t->ntypes; i++)
        dt_release(t->types[i]);
    dt_plan_free(t->plan);
    free(t->types);
    free(t->blocklens);
    free(t->displs);
    t->magic = 0;
    reg_remove(REG_TYPE, t);
    free(t);
}

/* The one generic hvector: every vector-like constructor lands here. */
static int dt_hvector(size_t count, size_t blocklen, ptrdiff_t stride, hint_type old, hint_type *out)
{
    int st;
    struct dt_acc a;
    ptrdiff_t n, last;
    hint_type t = NULL;
    if (out == NULL)
        return HINT_ERR_ARG;
    if ((st = dt_valid(old)) != HINT_SUCCESS)
        return st;
    dt_acc_init(&a);
    if (count > 0 && blocklen > 0) {
        if (dt_as_diff(count - 1, &n) || dt_mul(n, stride, &last))
            return HINT_ERR_COUNT;
        dt_acc_block(&a, 0, blocklen, old);
        dt_acc_span(&a, last, blocklen, old);
        /* the data of the other blocks: same as block 0, count times */
        size_t one = a.size;
        if (__builtin_mul_overflow(one, count, &a.size))
            return HINT_ERR_COUNT;
        if (count > 1 && (ptrdiff_t)one != stride)
            a.run = false;
    }
    if ((st = dt_acc_status(&a)) != HINT_SUCCESS)
        return st;
    if ((st = dt_node_new(DT_K_HVECTOR, 1, &old, &t)) != HINT_SUCCESS)
        return st;
    t->count = count;
    t->blocklen = blocklen;
    t->stride = count > 1 ? stride : 0;
    dt_node_finish(t, &a);
    *out = t;
    return HINT_SUCCESS;
}

/* The one generic hindexed: displs already in bytes; types has 1 or count entries. */
static int dt_hindexed(size_t count, const size_t blocklens[], size_t blocklen, const ptrdiff_t displs[],
                       ptrdiff_t unit, const hint_type types[], size_t ntypes, hint_type *out)
{
    int st = HINT_SUCCESS;
    struct dt_acc a;
    hint_type t = NULL;
    size_t *bl = NULL;
    ptrdiff_t *dp = NULL;
    if (out == NULL || (count > 0 && (displs == NULL || types == NULL)))
        return HINT_ERR_ARG;
    for (size_t i = 0; i < ntypes; i++)
        if ((st = dt_valid(types[i])) != HINT_SUCCESS)
            return st;
    bl = malloc((count ? count : 1) * sizeof *bl);
    dp = malloc((count ? count : 1) * sizeof *dp);
    if (bl == NULL || dp == NULL) {
        st = HINT_ERR_NOMEM;
        goto out;
    }
    dt_acc_init(&a);
    for (size_t i = 0; i < count && a.st == HINT_SUCCESS; i++) {
        bl[i] = blocklens ? blocklens[i] : blocklen;
        if (dt_mul(displs[i], unit, &dp[i])) {
            a.st = HINT_ERR_COUNT;
            break;
        }
        dt_acc_block(&a, dp[i], bl[i], types[ntypes == 1 ? 0 : i]);
    }
    if ((st = dt_acc_status(&a)) != HINT_SUCCESS)
        goto out;
    if ((st = dt_node_new(DT_K_HINDEXED, ntypes, types, &t)) != HINT_SUCCESS)
        goto out;
    t->count = count;
    t->blocklens = bl;
    t->displs = dp;
    bl = NULL;
    dp = NULL;
    dt_node_finish(t, &a);
    *out = t;
out:
    free(bl);
    free(dp);
    return st;
}

HINT_API int hint_type_contiguous(size_t count, hint_type old, hint_type *out)
{
    return dt_hvector(1, count, 0, old, out);
}

HINT_API int hint_type_hvector(size_t count, size_t blocklen, ptrdiff_t stride_bytes, hint_type old,
                               hint_type *out)
{
    return dt_hvector(count, blocklen, stride_bytes, old, out);
}

HINT_API int hint_type_vector(size_t count, size_t blocklen, ptrdiff_t stride, hint_type old, hint_type *out)
{
    ptrdiff_t bytes;
    int st = dt_valid(old);
    if (st != HINT_SUCCESS)
        return st;
    if (dt_mul(stride, old->extent, &bytes))
        return HINT_ERR_COUNT;
    return dt_hvector(count, blocklen, bytes, old, out);
}

HINT_API int hint_type_indexed(size_t count, const size_t blocklens[], const ptrdiff_t displs[], hint_type old,
                               hint_type *out)
{
    int st = dt_valid(old);
    if (st != HINT_SUCCESS)
        return st;
    if (count > 0 && blocklens == NULL)
        return HINT_ERR_ARG;
    return dt_hindexed(count, blocklens, 0, displs, old->extent, &old, 1, out);
}

HINT_API int hint_type_hindexed(size_t count, const size_t blocklens[], const ptrdiff_t displs_bytes[],
                                hint_type old, hint_type *out)
{
    int st = dt_valid(old);
    if (st != HINT_SUCCESS)
        return st;
    if (count > 0 && blocklens == NULL)
        return HINT_ERR_ARG;
    return dt_hindexed(count, blocklens, 0, displs_bytes, 1, &old, 1, out);
}

HINT_API int hint_type_indexed_block(size_t count, size_t blocklen, const ptrdiff_t displs[], hint_type old,
                                     hint_type *out)
{
    int st = dt_valid(old);
    if (st != HINT_SUCCESS)
        return st;
    return dt_hindexed(count, NULL, blocklen, displs, old->extent, &old, 1, out);
}

HINT_API int hint_type_struct(size_t count, const size_t blocklens[], const ptrdiff_t displs_bytes[],
                              const hint_type types[], hint_type *out)
{
    if (count > 0 && (blocklens == NULL || types == NULL))
        return HINT_ERR_ARG;
    for (size_t i = 0; i < count; i++)
        if (dt_valid(types[i]) != HINT_SUCCESS)
            return HINT_ERR_TYPE;
    return dt_hindexed(count, blocklens, 0, displs_bytes, 1, types, count, out);
}

HINT_API int hint_type_resized(hint_type old, ptrdiff_t lb, ptrdiff_t extent, hint_type *out)
{
    int st;
    hint_type t = NULL;
    ptrdiff_t ub;
    if ((st = dt_valid(old)) != HINT_SUCCESS)
        return st;
    if (out == NULL)
        return HINT_ERR_ARG;
    if (dt_add(lb, extent, &ub))
        return HINT_ERR_COUNT;
    if ((st = dt_node_new(DT_K_RESIZED, 1, &old, &t)) != HINT_SUCCESS)
        return st;
    t->size = old->size;
    t->sig = old->sig;
    t->run = old->run;
    t->lb = lb;
    t->extent = extent;
    t->true_lb = old->true_lb;
    t->true_extent = old->true_extent;
    *out = t;
    return HINT_SUCCESS;
}

static int dt_subarray_check(int ndims, const size_t sizes[], const size_t subsizes[], const size_t starts[],
                             int order, hint_type old, hint_type *out)
{
    if (out == NULL || ndims < 1 || sizes == NULL || subsizes == NULL || starts == NULL)
        return HINT_ERR_ARG;
    if (order != HINT_ORDER_C && order != HINT_ORDER_FORTRAN)
        return HINT_ERR_ARG;
    for (int d = 0; d < ndims; d++)
        if (sizes[d] == 0 || subsizes[d] > sizes[d] || starts[d] > sizes[d] - subsizes[d])
            return HINT_ERR_ARG;
    return dt_valid(old);
}

/* A subarray is nested hvectors (fastest dimension innermost) shifted to the start corner and
   resized to the full array: lb 0, extent prod(sizes) * extent(old), as MPI defines it. */
HINT_API int hint_type_subarray(int ndims, const size_t sizes[], const size_t subsizes[], const size_t starts[],
                                int order, hint_type old, hint_type *out)
{
    int st = dt_subarray_check(ndims, sizes, subsizes, starts, order, old, out);
    hint_type cur = old, next = NULL;
    ptrdiff_t stride, offset = 0, n, term;
    size_t one = 1;
    if (st != HINT_SUCCESS)
        return st;
    stride = old->extent;
    for (int i = 0; i < ndims; i++) {
        int d = order == HINT_ORDER_C ? ndims - 1 - i : i;
        if (dt_as_diff(starts[d], &n) || dt_mul(n, stride, &term) || dt_add(offset, term, &offset)) {
            st = HINT_ERR_COUNT;
            goto out;
        }
        if ((st = dt_hvector(subsizes[d], 1, stride, cur, &next)) != HINT_SUCCESS)
            goto out;
        if (cur != old)
            dt_release(cur);
        cur = next;
        if (dt_as_diff(sizes[d], &n) || dt_mul(n, stride, &stride)) {
            st = HINT_ERR_COUNT;
            goto out;
        }
    }
    if ((st = dt_hindexed(1, &one, 0, &offset, 1, &cur, 1, &next)) != HINT_SUCCESS)
        goto out;
    dt_release(cur);
    cur = next;
    if ((st = hint_type_resized(cur, 0, stride, out)) != HINT_SUCCESS)
        goto out;
out:
    if (cur != old)
        dt_release(cur);
    return st;
}

HINT_API int hint_type_commit(hint_type *t)
{
    int st;
    if (t == NULL)
        return HINT_ERR_ARG;
    if ((st = dt_valid(*t)) != HINT_SUCCESS)
        return st;
    if ((*t)->committed)
        return HINT_SUCCESS;
    if ((st = dt_plan_build(*t)) != HINT_SUCCESS)
        return st;
    (*t)->committed = true;
    return HINT_SUCCESS;
}

HINT_API int hint_type_free(hint_type *t)
{
    int st;
    if (t == NULL)
        return HINT_ERR_ARG;
    if ((st = dt_valid(*t)) != HINT_SUCCESS)
        return st;
    if ((*t)->predefined)
        return HINT_ERR_TYPE;
    (*t)->freed = true;
    reg_remove(REG_TYPE, *t); /* no longer a handle, even while types built on it keep it */
    dt_release(*t);
    *t = HINT_TYPE_NULL;
    return HINT_SUCCESS;
}

HINT_API int hint_type_size(hint_type t, size_t *size)
{
    int st = dt_valid(t);
    if (st != HINT_SUCCESS)
        return st;
    if (size == NULL)
        return HINT_ERR_ARG;
    *size = t->size;
    return HINT_SUCCESS;
}

HINT_API int hint_type_extent(hint_type t, ptrdiff_t *lb, ptrdiff_t *extent)
{
    int st = dt_valid(t);
    if (st != HINT_SUCCESS)
        return st;
    if (lb == NULL || extent == NULL)
        return HINT_ERR_ARG;
    *lb = t->lb;
    *extent = t->extent;
    return HINT_SUCCESS;
}

HINT_API int hint_type_true_extent(hint_type t, ptrdiff_t *true_lb, ptrdiff_t *true_extent)
{
    int st = dt_valid(t);
    if (st != HINT_SUCCESS)
        return st;
    if (true_lb == NULL || true_extent == NULL)
        return HINT_ERR_ARG;
    *true_lb = t->true_lb;
    *true_extent = t->true_extent;
    return HINT_SUCCESS;
}

int dt_set_segment(hint_type t, size_t elems)
{
    int st = dt_valid(t);
    if (st != HINT_SUCCESS)
        return st;
    if (t->predefined)
        return HINT_ERR_TYPE;
    t->mars_seg = elems;
    return HINT_SUCCESS;
}
