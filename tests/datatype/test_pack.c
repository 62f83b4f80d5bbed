/*
 * tests/datatype/test_pack.c — pack/unpack by position: for several types and every
 * representation, a pack cut at every byte and resumed equals the one-shot pack, slices of every
 * width resume correctly, unpack(pack(x)) == x, MARs segments, HINT_PACK forcing, the cost model.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "datatype/datatype.h"
#include "dtref.h"

/* The MARs paper's types: 64 bytes of doubles in a 512-byte extent, a first run of `first`
   doubles at 0 then one double at the start of each following cache line. */
static hint_type paper_type(int first)
{
    size_t bl[8];
    ptrdiff_t d[8];
    int n = 1 + (8 - first);
    hint_type h, t;
    bl[0] = (size_t)first;
    d[0] = 0;
    for (int i = 1; i < n; i++) {
        bl[i] = 1;
        d[i] = 64 * i;
    }
    cr_assert_eq(hint_type_hindexed((size_t)n, bl, d, HINT_DOUBLE, &h), HINT_SUCCESS);
    cr_assert_eq(hint_type_resized(h, 0, 512, &t), HINT_SUCCESS);
    hint_type_free(&h);
    cr_assert_eq(hint_type_commit(&t), HINT_SUCCESS);
    return t;
}

enum { NT = 7 };

/* A mix: paper types, a struct with a negative displacement and odd sizes, a subarray, a
   resized vector whose elements overlap nothing but leave gaps, a contiguous type. */
static hint_type sample(int i)
{
    hint_type t = NULL, a, b;
    switch (i) {
    case 0: return paper_type(7);
    case 1: return paper_type(6);
    case 2: return paper_type(1);
    case 3: {
        hint_type ty[3] = {HINT_CHAR, HINT_INT32, HINT_DOUBLE};
        cr_assert_eq(hint_type_struct(3, (size_t[]){3, 2, 1}, (ptrdiff_t[]){-5, 4, 20}, ty, &t), HINT_SUCCESS);
        break;
    }
    case 4: {
        size_t s[2] = {5, 7}, u[2] = {3, 2}, o[2] = {1, 4};
        cr_assert_eq(hint_type_subarray(2, s, u, o, HINT_ORDER_FORTRAN, HINT_INT32, &t), HINT_SUCCESS);
        break;
    }
    case 5:
        cr_assert_eq(hint_type_vector(3, 2, -3, HINT_INT32, &a), HINT_SUCCESS);
        cr_assert_eq(hint_type_contiguous(2, a, &b), HINT_SUCCESS);
        cr_assert_eq(hint_type_resized(b, -40, 64, &t), HINT_SUCCESS);
        hint_type_free(&a);
        hint_type_free(&b);
        break;
    default:
        cr_assert_eq(hint_type_contiguous(5, HINT_INT32, &t), HINT_SUCCESS);
        break;
    }
    cr_assert_eq(hint_type_commit(&t), HINT_SUCCESS);
    return t;
}

/* A user buffer wide enough for count elements of t; *base is the address to pass. */
static char *userbuf(hint_type t, size_t count, char **base, size_t *bytes)
{
    ptrdiff_t lb, ext, tlb, text;
    hint_type_extent(t, &lb, &ext);
    hint_type_true_extent(t, &tlb, &text);
    ptrdiff_t last = (ptrdiff_t)(count ? count - 1 : 0) * ext;
    ptrdiff_t lo = tlb + (last < 0 ? last : 0), hi = tlb + text + (last > 0 ? last : 0);
    *bytes = (size_t)(hi - lo) + 64;
    char *m = malloc(*bytes);
    for (size_t i = 0; i < *bytes; i++)
        m[i] = (char)(i * 37 + 11);
    *base = m + 32 - lo;
    return m;
}

static void cut_everywhere(hint_type t, size_t count, int rep)
{
    size_t size, bytes, ub, done, d2;
    char *base, *mem = userbuf(t, count, &base, &ub);
    hint_type_size(t, &size);
    bytes = size * count;
    char *want = malloc(bytes), *got = malloc(bytes);
    cr_assert_eq(dt_pack_range_rep(base, count, t, 0, want, bytes, &done, rep), HINT_SUCCESS);
    cr_assert_eq(done, bytes);
    for (size_t cut = 0; cut <= bytes; cut++) {
        memset(got, 0, bytes);
        cr_assert_eq(dt_pack_range_rep(base, count, t, 0, got, cut, &done, rep), HINT_SUCCESS);
        cr_assert_eq(dt_pack_range_rep(base, count, t, cut, got + cut, bytes, &d2, rep), HINT_SUCCESS);
        cr_assert(done == cut && d2 == bytes - cut);
        cr_assert(memcmp(got, want, bytes) == 0, "cut at %zu of %zu (%s) differs", cut, bytes, dt_rep_name(rep));
    }
    /* resuming chunk after chunk of every width up to 40 bytes */
    for (size_t w = 1; w <= 40; w++) {
        memset(got, 0, bytes);
        for (size_t off = 0; off < bytes; off += done)
            cr_assert_eq(dt_pack_range_rep(base, count, t, off, got + off, w, &done, rep), HINT_SUCCESS);
        cr_assert(memcmp(got, want, bytes) == 0, "chunks of %zu (%s) differ", w, dt_rep_name(rep));
    }
    /* unpack cut everywhere: the user buffer comes back bit for bit */
    char *ubase, *umem = userbuf(t, count, &ubase, &ub);
    for (size_t cut = 0; cut <= bytes; cut += 1 + cut / 8) {
        char *zbase, *zmem = userbuf(t, count, &zbase, &ub);
        memset(zmem, 0, ub);
        cr_assert_eq(dt_unpack_range_rep(want, cut, 0, zbase, count, t, &done, rep), HINT_SUCCESS);
        cr_assert_eq(dt_unpack_range_rep(want + cut, bytes - cut, cut, zbase, count, t, &d2, rep), HINT_SUCCESS);
        cr_assert_eq(dt_pack_range_rep(zbase, count, t, 0, got, bytes, &done, rep), HINT_SUCCESS);
        cr_assert(memcmp(got, want, bytes) == 0, "unpack cut at %zu (%s)", cut, dt_rep_name(rep));
        free(zmem);
    }
    free(umem);
    free(mem);
    free(want);
    free(got);
}

Test(pack, cut_at_every_byte, .timeout = 120)
{
    for (int i = 0; i < NT; i++) {
        hint_type t = sample(i);
        for (int rep = DT_REP_AUTO; rep < DT_NREP; rep++) {
            cut_everywhere(t, 1, rep);
            cut_everywhere(t, 3, rep);
        }
        hint_type_free(&t);
    }
}

Test(pack, all_representations_agree_large_counts)
{
    for (int i = 0; i < NT; i++) {
        hint_type t = sample(i);
        size_t size, ub, done, count = 2048;
        char *base, *mem = userbuf(t, count, &base, &ub);
        hint_type_size(t, &size);
        char *want = malloc(size * count), *got = malloc(size * count);
        cr_assert_eq(dt_pack_range_rep(base, count, t, 0, want, size * count, &done, DT_REP_LOOP), HINT_SUCCESS);
        for (int rep = DT_REP_AUTO; rep < DT_NREP; rep++)
            for (size_t seg = 0; seg < 40; seg += 13) {
                cr_assert_eq(dt_set_segment(t, seg), HINT_SUCCESS);
                memset(got, 0, size * count);
                cr_assert_eq(dt_pack_range_rep(base, count, t, 0, got, size * count, &done, rep), HINT_SUCCESS);
                cr_assert(memcmp(got, want, size * count) == 0, "type %d rep %s seg %zu", i, dt_rep_name(rep), seg);
                /* a slice starting mid-element and ending mid-element */
                size_t off = size * 5 + size / 2, len = size * 700 + 3;
                memset(got, 0, size * count);
                cr_assert_eq(dt_pack_range_rep(base, count, t, off, got, len, &done, rep), HINT_SUCCESS);
                cr_assert(done == len && memcmp(got, want + off, len) == 0);
            }
        free(mem);
        free(want);
        free(got);
        hint_type_free(&t);
    }
}

Test(pack, unpack_of_pack_is_identity)
{
    for (int i = 0; i < NT; i++) {
        hint_type t = sample(i);
        size_t size, ub, pos = 0, count = 17;
        char *base, *mem = userbuf(t, count, &base, &ub), *zbase, *zmem = userbuf(t, count, &zbase, &ub);
        hint_type_size(t, &size);
        char *packed = malloc(size * count + 8);
        cr_assert_eq(hint_pack(base, count, t, packed, size * count + 8, &pos), HINT_SUCCESS);
        cr_assert_eq(pos, size * count);
        pos = 0;
        cr_assert_eq(hint_unpack(packed, size * count, &pos, zbase, count, t), HINT_SUCCESS);
        cr_assert_eq(pos, size * count);
        /* both buffers started with the same pattern: equal everywhere after the unpack */
        cr_assert(memcmp(mem, zmem, ub) == 0, "type %d", i);
        free(mem);
        free(zmem);
        free(packed);
        hint_type_free(&t);
    }
}

Test(pack, pack_appends_at_position)
{
    double a[4] = {1, 2, 3, 4}, b[4];
    char buf[64];
    size_t pos = 0;
    cr_assert_eq(hint_pack(a, 2, HINT_DOUBLE, buf, sizeof buf, &pos), HINT_SUCCESS);
    cr_assert_eq(hint_pack(a + 2, 2, HINT_DOUBLE, buf, sizeof buf, &pos), HINT_SUCCESS);
    cr_assert_eq(pos, 32);
    pos = 0;
    cr_assert_eq(hint_unpack(buf, pos + 32, &pos, b, 1, HINT_DOUBLE), HINT_SUCCESS);
    cr_assert_eq(hint_unpack(buf, 32, &pos, b + 1, 3, HINT_DOUBLE), HINT_SUCCESS);
    cr_assert(pos == 32 && memcmp(a, b, sizeof a) == 0);
}

Test(pack, representation_choice)
{
    hint_type t = paper_type(6);
    double c[4];
    dt_cost_model(c);
    for (int i = 0; i < 4; i++)
        cr_expect(c[i] > 0 && c[i] < 1e4, "cost %d = %g", i, c[i]);
    for (size_t n = 1; n <= 4096; n *= 4) {
        int r = dt_rep_choose(t, n, DT_REP_AUTO);
        cr_expect(r == DT_REP_LOOP || r == DT_REP_IOVEC || r == DT_REP_MARS);
    }
    cr_expect_eq(dt_rep_choose(t, 8, DT_REP_MARS), DT_REP_MARS);
    cr_expect_eq(dt_rep_choose(t, 8, DT_REP_IOVEC), DT_REP_IOVEC);
    cr_expect_eq(dt_rep_choose(t, 8, DT_REP_LOOP), DT_REP_LOOP);
    cr_expect_str_eq(dt_rep_name(DT_REP_MARS), "mars");
    hint_type_free(&t);
}

/* Criterion runs each test in its own process, so each can set HINT_PACK before the lazy read. */
static void forced(const char *value, int want)
{
    hint_type t = paper_type(5);
    setenv("HINT_PACK", value, 1);
    cr_assert_eq(dt_rep_default(), want);
    cr_expect_eq(dt_rep_choose(t, 64, DT_REP_AUTO), want);
    cut_everywhere(t, 2, DT_REP_AUTO);
    hint_type_free(&t);
}

Test(pack, env_loop) { forced("loop", DT_REP_LOOP); }
Test(pack, env_iovec) { forced("iovec", DT_REP_IOVEC); }
Test(pack, env_mars) { forced("MARS", DT_REP_MARS); }

Test(pack, env_segment)
{
    setenv("HINT_PACK_SEGMENT", "3", 1);
    setenv("HINT_PACK", "mars", 1);
    hint_type t = paper_type(4);
    cut_everywhere(t, 7, DT_REP_AUTO);
    hint_type_free(&t);
}

/* Beyond 2^20 pieces per element there is no IOVEC list: every request runs the loop description. */
Test(pack, huge_type_falls_back_to_loop)
{
    size_t n = ((size_t)1 << 20) + 5, done;
    hint_type v;
    unsigned char *user = malloc(2 * n), *out = malloc(n);
    for (size_t i = 0; i < 2 * n; i++)
        user[i] = (unsigned char)(i * 7);
    cr_assert_eq(hint_type_vector(n, 1, 2, HINT_BYTE, &v), HINT_SUCCESS);
    cr_assert_eq(hint_type_commit(&v), HINT_SUCCESS);
    cr_expect_eq(dt_nblocks(v), n);
    cr_expect_eq(dt_rep_choose(v, 1, DT_REP_MARS), DT_REP_LOOP);
    cr_expect_eq(dt_rep_choose(v, 1, DT_REP_IOVEC), DT_REP_LOOP);
    cr_assert_eq(dt_pack_range_rep(user, 1, v, 1000, out, n, &done, DT_REP_MARS), HINT_SUCCESS);
    cr_assert_eq(done, n - 1000);
    for (size_t i = 0; i < done; i++)
        cr_assert_eq(out[i], user[2 * (i + 1000)]);
    /* too many pieces to list: dt_copy_typed cannot take dt_copy_flat and goes by ranges, into
       bytes and (through its bounce buffer) into another layout of the same type */
    cr_assert_null(dt_iov(v, &done));
    unsigned char *copy = calloc(2 * n, 1);
    cr_assert_eq(dt_copy_typed(user, 1, v, out, n, HINT_BYTE, &done), HINT_SUCCESS);
    cr_assert_eq(dt_copy_typed(user, 1, v, copy, 1, v, &done), HINT_SUCCESS);
    cr_assert_eq(done, n);
    for (size_t i = 0; i < n; i++)
        cr_assert(out[i] == user[2 * i] && copy[2 * i] == user[2 * i] && copy[2 * i + 1] == 0, "element %zu", i);
    free(copy);
    hint_type_free(&v);
    free(user);
    free(out);
}

/* Typed-to-typed copy: every pairing of contiguous and derived sides equals unpack(pack()). */
Test(pack, copy_typed)
{
    hint_type col, rows, blk;
    double a[64], b[64], c[64];
    size_t n;
    for (int i = 0; i < 64; i++)
        a[i] = i;
    cr_assert_eq(hint_type_vector(8, 1, 8, HINT_DOUBLE, &col), HINT_SUCCESS); /* a column of 8x8 */
    cr_assert_eq(hint_type_commit(&col), HINT_SUCCESS);
    cr_assert_eq(hint_type_vector(2, 4, 8, HINT_DOUBLE, &rows), HINT_SUCCESS); /* a 2x4 block */
    cr_assert_eq(hint_type_resized(rows, 0, 32, &blk), HINT_SUCCESS);
    cr_assert_eq(hint_type_commit(&blk), HINT_SUCCESS);
    /* derived to contiguous: a transpose column by column */
    for (int j = 0; j < 8; j++)
        cr_assert_eq(dt_copy_typed(a + j, 1, col, b + 8 * j, 8, HINT_DOUBLE, &n), HINT_SUCCESS);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++)
            cr_assert_eq(b[8 * j + i], a[8 * i + j]);
    /* contiguous to derived and derived to derived */
    memset(c, 0, sizeof c);
    cr_assert_eq(dt_copy_typed(a, 8, HINT_DOUBLE, c + 1, 1, col, &n), HINT_SUCCESS);
    cr_assert(n == 64 && c[1] == 0 && c[9] == 1 && c[57] == 7 && c[0] == 0);
    memset(c, 0, sizeof c);
    cr_assert_eq(dt_copy_typed(a, 1, col, c, 2, blk, &n), HINT_SUCCESS);
    cr_assert(c[0] == 0 && c[1] == 8 && c[3] == 24 && c[8] == 32 && c[11] == 56 && c[4] == 0);
    /* a large derived-to-derived copy crosses many bounce slices */
    double *big = malloc(4096 * 8 * sizeof *big), *out = calloc(4096 * 8, sizeof *out);
    for (int i = 0; i < 4096 * 8; i++)
        big[i] = i;
    hint_type c8, col2; /* the columns of an 8 x 2048 matrix */
    cr_assert_eq(hint_type_vector(8, 1, 2048, HINT_DOUBLE, &c8), HINT_SUCCESS);
    cr_assert_eq(hint_type_resized(c8, 0, 8, &col2), HINT_SUCCESS);
    hint_type_free(&c8);
    cr_assert_eq(hint_type_commit(&col2), HINT_SUCCESS);
    cr_assert_eq(dt_copy_typed(big, 2048, blk, out, 2048, col2, &n), HINT_SUCCESS);
    cr_assert_eq(n, 2048 * 64);
    /* checked against pack + unpack */
    double *ref = calloc(4096 * 8, sizeof *ref), *tmp = malloc(2048 * 64);
    size_t pos = 0;
    cr_assert_eq(hint_pack(big, 2048, blk, tmp, 2048 * 64, &pos), HINT_SUCCESS);
    pos = 0;
    cr_assert_eq(hint_unpack(tmp, 2048 * 64, &pos, ref, 2048, col2), HINT_SUCCESS);
    cr_assert(memcmp(out, ref, 4096 * 8 * sizeof *out) == 0);
    /* errors */
    cr_expect_eq(dt_copy_typed(a, 9, HINT_DOUBLE, c, 1, col, &n), HINT_ERR_TRUNCATE);
    cr_expect_eq(dt_copy_typed(a, 2, HINT_INT, c, 1, col, &n), HINT_ERR_TYPE);
    cr_expect_eq(dt_copy_typed(a, 16, HINT_BYTE, c, 1, col, &n), HINT_SUCCESS);
    cr_expect_eq(dt_copy_typed(a, 1, col, c, 1, col, NULL), HINT_ERR_ARG);
    free(big);
    free(out);
    free(ref);
    free(tmp);
    hint_type_free(&col);
    hint_type_free(&col2);
    hint_type_free(&rows);
    hint_type_free(&blk);
}

/* The layouts the shared-heap collectives copy between, seen through their pieces alone. */
static struct dt_flat flat_of(hint_type t)
{
    size_t n;
    ptrdiff_t lb, ext;
    const struct dt_iov *v = dt_iov(t, &n);
    hint_type_extent(t, &lb, &ext);
    return (struct dt_flat){.iov = v, .niov = n, .extent = ext};
}

/* Pieces of 3 and 5 bytes, at different places and extents: lockstep pairs with other disps. */
static hint_type three_five(int which)
{
    hint_type h, t;
    ptrdiff_t d[2][2] = {{0, 10}, {4, 9}};
    cr_assert_eq(hint_type_hindexed(2, (size_t[]){3, 5}, d[which], HINT_BYTE, &h), HINT_SUCCESS);
    cr_assert_eq(hint_type_resized(h, 0, which ? 16 : 20, &t), HINT_SUCCESS);
    hint_type_free(&h);
    cr_assert_eq(hint_type_commit(&t), HINT_SUCCESS);
    return t;
}

static hint_type flat_sample(int i) { return i < 7 ? sample(i) : i < 9 ? three_five(i - 7) : HINT_BYTE; }

/* dt_copy_flat between every pair of sample layouts, two 3+5-byte layouts and plain bytes, a
   destination that ends in a partial element, and every fast path: bytes to bytes, bytes and
   pieces either way, the same pieces on both sides (lockstep), and the general merge. The
   whole destination buffer, holes included, must equal unpack(pack(source)). */
Test(pack, copy_flat_matches_pack_unpack)
{
    for (int i = 0; i < 10; i++)
        for (int j = 0; j < 10; j++) {
            hint_type s = flat_sample(i), d = flat_sample(j);
            size_t ssize, dsize, sb, db, done;
            hint_type_size(s, &ssize);
            hint_type_size(d, &dsize);
            size_t cs = 13, bytes = cs * ssize, cd = bytes / dsize + 1;
            char *sbase, *tbase, *rbase;
            char *sm = userbuf(s, cs, &sbase, &sb), *tm = userbuf(d, cd, &tbase, &db),
                 *rm = userbuf(d, cd, &rbase, &db);
            char *packed = malloc(bytes);
            cr_assert_eq(dt_pack_range_rep(sbase, cs, s, 0, packed, bytes, &done, DT_REP_AUTO), HINT_SUCCESS);
            cr_assert_eq(dt_unpack_range_rep(packed, bytes, 0, rbase, cd, d, &done, DT_REP_AUTO), HINT_SUCCESS);
            struct dt_flat fs = flat_of(s), fd = flat_of(d);
            cr_assert(i == 9 || fs.niov > 0, "sample %d has no piece list", i);
            dt_copy_flat(sbase, &fs, tbase, &fd, bytes);
            cr_expect(memcmp(tm, rm, db) == 0, "sample %d -> sample %d (%zu bytes) differs from unpack(pack())", i, j,
                      bytes);
            free(sm);
            free(tm);
            free(rm);
            free(packed);
            if (i < 9)
                hint_type_free(&s);
            if (j < 9)
                hint_type_free(&d);
        }
}

/* dt_flat_iovec, the address ranges process_vm_readv/writev take for a derived side: from any
   data offset, with room for 1, 2, 3 or 1024 ranges a call, the ranges asked again from where
   the last call stopped must hold exactly the packed bytes from that offset on, each call
   within its room and covering what it says. */
Test(pack, flat_iovec_walks_the_packed_order)
{
    for (int i = 0; i < 10; i++) {
        hint_type t = flat_sample(i);
        size_t size, sb, done;
        hint_type_size(t, &size);
        size_t cs = 13, bytes = cs * size;
        char *base, *mem = userbuf(t, cs, &base, &sb), *packed = malloc(bytes), *got = malloc(bytes);
        for (size_t k = 0; k < sb; k++)
            mem[k] = (char)(k * 7 + 3);
        cr_assert_eq(dt_pack_range_rep(base, cs, t, 0, packed, bytes, &done, DT_REP_AUTO), HINT_SUCCESS);
        struct dt_flat f = flat_of(t);
        size_t covered, rooms[] = {1, 2, 3, 1024}, starts[] = {0, 1, 7, bytes / 2, bytes - 1};
        cr_expect_eq(dt_flat_iovec(&f, base, 0, 0, (struct iovec[1]){0}, 1, &covered), 0);
        for (size_t r = 0; r < 4; r++)
            for (size_t s = 0; s < 5; s++) {
                struct iovec v[1024];
                size_t off = starts[s], at = 0;
                while (off + at < bytes) {
                    size_t n = dt_flat_iovec(&f, base, off + at, bytes - off - at, v, rooms[r], &covered), sum = 0;
                    cr_assert(n > 0 && n <= rooms[r] && covered > 0, "sample %d from %zu: %zu ranges, %zu bytes", i,
                              off + at, n, covered);
                    for (size_t k = 0; k < n; k++) {
                        memcpy(got + at + sum, v[k].iov_base, v[k].iov_len);
                        sum += v[k].iov_len;
                    }
                    cr_assert_eq(sum, covered, "sample %d: ranges hold %zu bytes, said %zu", i, sum, covered);
                    at += covered;
                }
                cr_expect(at == bytes - off && memcmp(got, packed + off, at) == 0,
                          "sample %d from byte %zu, %zu ranges a call: not the packed bytes", i, off, rooms[r]);
            }
        free(mem);
        free(packed);
        free(got);
        if (i < 9)
            hint_type_free(&t);
    }
}
