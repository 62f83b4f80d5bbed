/*
 * tests/unit/test_copy.c — the HINT paper's hybrid copy (Alg. 4) and its run-time threshold:
 * a block under the fixed T is copied wholly temporally whatever R is, a block of T or more is
 * split at R (a block of exactly T while R = T has no non-temporal part and never counts), and get_runtime_threshold's adjustment is driven with made-up timings, every step
 * checked: calls under T change nothing, the first timed call is ignored, R halves while calls
 * get faster, and the first call that is not faster steps R back to the value the best time was
 * measured with (also from 0) and freezes it.
 */
#include <criterion/criterion.h>
#include <hwloc.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/copy.h"
#include "runtime/request.h"

static void expect_state(const struct copy_thresh *t, size_t R, double best, int frozen, const char *step)
{
    cr_expect_eq(t->R, R, "%s: R = %zu, expected %zu", step, t->R, R);
    cr_expect_eq(t->best, best, "%s: best = %g, expected %g", step, t->best, best);
    cr_expect_eq(t->frozen, frozen, "%s: frozen = %d, expected %d", step, t->frozen, frozen);
}

Test(copy, hybrid_compares_with_T_and_splits_at_R)
{
    enum { N = 5000 };
    unsigned char *src = malloc(N), *dst = malloc(N);
    cr_assert(src && dst);
    for (int i = 0; i < N; i++)
        src[i] = (unsigned char)(i * 7 + 3);
    struct { size_t n, T, R; bool split; } cases[] = {
        {999, 1000, 0, false},    /* under T: memcpy even with R = 0 (the old code halved T itself) */
        {999, 1000, 500, false},
        {1000, 1000, 1000, false}, /* exactly T while R = T: all temporal, no non-temporal part */
        {1001, 1000, 1000, true}, /* n >= T: else branch, R temporal bytes, n - R non-temporal */
        {1000, 1000, 500, true},  /* exactly T once R has halved: 500 bytes non-temporal */
        {4096, 1000, 250, true},
        {4096, 1000, 0, true},
        {300, 200, 4000, false},  /* R beyond n: all temporal */
        {0, 0, 0, false},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        memset(dst, 0xAA, N);
        bool split = copy_hybrid(dst, src, cases[k].n, cases[k].T, cases[k].R);
        copy_fence();
        cr_expect_eq(split, cases[k].split, "n=%zu T=%zu R=%zu", cases[k].n, cases[k].T, cases[k].R);
        cr_expect(memcmp(dst, src, cases[k].n) == 0, "n=%zu T=%zu R=%zu: bytes differ", cases[k].n, cases[k].T,
                  cases[k].R);
        for (size_t i = cases[k].n; i < N; i++)
            cr_assert_eq(dst[i], 0xAA, "n=%zu: byte %zu past the end written", cases[k].n, i);
    }
    free(src);
    free(dst);
}

Test(copy, threshold_starts_at_T_and_halves_only_on_timed_calls)
{
    struct copy_thresh t;
    copy_thresh_init(&t, 1000);
    cr_expect_eq(t.T, 1000);
    expect_state(&t, 1000, 0, 0, "init: R = T");
    copy_thresh_record(&t, false, 5.0);
    expect_state(&t, 1000, 0, 0, "every block under T");
    cr_expect_eq(t.warm, 0, "a call under T is not the first timed call");
    copy_thresh_record(&t, true, 9.0);
    expect_state(&t, 1000, 0, 0, "first timed call (cold) ignored");
    copy_thresh_record(&t, true, 4.0);
    expect_state(&t, 500, 4.0, 0, "baseline at R = T, then halve");
    copy_thresh_record(&t, false, 0.1);
    expect_state(&t, 500, 4.0, 0, "fast call under T: no halving");
    copy_thresh_record(&t, true, 3.0);
    expect_state(&t, 250, 3.0, 0, "faster at 500: halve");
    copy_thresh_record(&t, true, 3.5);
    expect_state(&t, 500, 3.0, 1, "slower at 250: back to 500, frozen");
    copy_thresh_record(&t, true, 1.0);
    expect_state(&t, 500, 3.0, 1, "frozen: stays");
    cr_expect_eq(t.T, 1000, "T never moves");
}

/* Blocks of exactly T bytes (issue 23 item 2's case): while R = T they are copied wholly
   temporally, so no call counts toward the halving, however fast; once R is below T (after calls
   of larger blocks) the same blocks have a non-temporal part and count. copy_hybrid's answer
   drives the adjustment, as in the copy orders. */
Test(copy, block_of_exactly_T_halves_only_when_a_non_temporal_part_ran)
{
    enum { T = 1024 };
    static unsigned char src[2 * T], dst[2 * T];
    for (int i = 0; i < 2 * T; i++)
        src[i] = (unsigned char)(i * 5 + 1);
    struct copy_thresh t;
    copy_thresh_init(&t, T);
    for (int k = 0; k < 4; k++) {
        bool nt = copy_hybrid(dst, src, T, t.T, t.R);
        cr_expect(!nt, "call %d: a block of exactly T with R = T ran a non-temporal part", k);
        copy_thresh_record(&t, nt, 4.0 - k); /* faster each time: must not matter */
        expect_state(&t, T, 0, 0, "exactly T, R = T: nothing recorded");
        cr_expect_eq(t.warm, 0, "call %d: an all-temporal call is not the first timed call", k);
    }
    bool nt = copy_hybrid(dst, src, T + 1, t.T, t.R);
    cr_expect(nt, "T + 1 bytes: one byte non-temporal");
    copy_thresh_record(&t, nt, 9.0);
    expect_state(&t, T, 0, 0, "first call with a non-temporal part: ignored (cold)");
    cr_expect_eq(t.warm, 1);
    nt = copy_hybrid(dst, src, T + 1, t.T, t.R);
    copy_thresh_record(&t, nt, 4.0);
    expect_state(&t, T / 2, 4.0, 0, "baseline at R = T, halve");
    nt = copy_hybrid(dst, src, T, t.T, t.R);
    cr_expect(nt, "exactly T with R = T/2: half non-temporal");
    copy_fence();
    cr_expect(memcmp(dst, src, T) == 0);
    copy_thresh_record(&t, nt, 3.0);
    expect_state(&t, T / 4, 3.0, 0, "exactly T, faster at T/2: counts, halve");
}

Test(copy, threshold_steps_back_from_zero_to_the_last_value)
{
    struct copy_thresh t;
    copy_thresh_init(&t, 2);
    copy_thresh_record(&t, true, 9.0);
    expect_state(&t, 2, 0, 0, "cold call ignored");
    copy_thresh_record(&t, true, 4.0);
    expect_state(&t, 1, 4.0, 0, "baseline at 2");
    copy_thresh_record(&t, true, 3.0);
    expect_state(&t, 0, 3.0, 0, "faster at 1: R = 0");
    copy_thresh_record(&t, true, 3.2);
    expect_state(&t, 1, 3.0, 1, "slower at 0: back to 1 (not 64)");

    copy_thresh_init(&t, 2);
    copy_thresh_record(&t, true, 9.0);
    copy_thresh_record(&t, true, 4.0);
    copy_thresh_record(&t, true, 3.0);
    copy_thresh_record(&t, true, 2.0);
    expect_state(&t, 0, 2.0, 1, "faster at 0: all non-temporal, frozen");
}

Test(copy, threshold_T_is_l2_over_ranks)
{
    size_t l2 = copy_l2_bytes();
    cr_assert_gt(l2, 0);
    cr_expect_eq(copy_threshold_T(8), l2 / 8);
    cr_expect_eq(copy_threshold_T(1), l2);
}

/* copy_l2_bytes reads sysfs instead of loading hwloc (a full load cost the first alltoall 10-20 ms):
   it must still give hwloc's answer wherever hwloc knows an L2. */
Test(copy, l2_bytes_agrees_with_hwloc)
{
    hwloc_topology_t topo;
    cr_assert_eq(hwloc_topology_init(&topo), 0);
    cr_assert_eq(hwloc_topology_load(topo), 0);
    hwloc_obj_t o = hwloc_get_obj_by_type(topo, HWLOC_OBJ_L2CACHE, 0);
    size_t want = o && o->attr ? (size_t)o->attr->cache.size : 0;
    hwloc_topology_destroy(topo);
    if (want == 0)
        cr_skip_test("hwloc reports no L2 cache here");
    cr_expect_eq(copy_l2_bytes(), want, "copy_l2_bytes %zu, hwloc's L2 %zu", copy_l2_bytes(), want);
}

/* rt_memcpy and its vector loop (which rt_memcpy runs for blocks over 2 KiB whose two addresses
   differ modulo 64, where memcpy is slow there): memcpy's bytes at every relative alignment of
   destination and source, sizes around the switch, nothing written past either end. */
/* No byte of p[0, n) changed from the fill 0xAA. */
static bool untouched(const unsigned char *p, size_t n)
{
    size_t i = 0;
    while (i < n && p[i] == 0xAA)
        i++;
    return i == n;
}

static void check_every_offset(void (*copy)(void *, const void *, size_t), const char *name)
{
    enum { N = 70000 };
    unsigned char *src = malloc(N + 128), *dst = malloc(N + 128);
    cr_assert(src && dst);
    for (int i = 0; i < N + 128; i++)
        src[i] = (unsigned char)(i * 13 + 5);
    size_t sizes[] = {0, 1, 63, 2047, 2048, 2049, 2113, 4096, 24577, 65536 + 17};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
        for (int so = 0; so < 64; so += 3)
            for (int dof = 0; dof < 64; dof++) {
                size_t n = sizes[k];
                memset(dst, 0xAA, N + 128);
                copy(dst + dof, src + so, n);
                cr_assert(memcmp(dst + dof, src + so, n) == 0, "%s n=%zu src+%d dst+%d: bytes differ", name, n, so, dof);
                cr_assert(untouched(dst, dof), "%s n=%zu dst+%d: a byte before it written", name, n, dof);
                cr_assert(untouched(dst + dof + n, N + 128 - dof - n), "%s n=%zu dst+%d: a byte past the end written",
                          name, n, dof);
            }
    free(src);
    free(dst);
}

static void copy_with_rt_memcpy(void *d, const void *s, size_t n) { rt_memcpy(d, s, n); }

Test(copy, rt_memcpy_copies_at_every_offset) { check_every_offset(copy_with_rt_memcpy, "rt_memcpy"); }
Test(copy, vector_loop_copies_at_every_offset) { check_every_offset(rt_memcpy_loop, "the loop"); }

/* How fast each copy is at each offset is bench/hint-copy-offsets' to say (docs/BENCHMARKS.md): a
   timed test would pass or fail with the machine's load. What can be checked here is the rule the
   measured choice follows and that a choice was made: the loop only where memcpy took more than
   twice its time (glibc 2.36's rep movsb on AMD EPYC: 27x; an Intel Xeon: 0.65x). */
Test(copy, rt_memcpy_takes_the_loop_only_where_memcpy_is_over_twice_slower)
{
    cr_expect(rt_memcpy_loop_wins(2700, 100), "27x slower memcpy (the EPYC): the loop");
    cr_expect(rt_memcpy_loop_wins(201, 100), "just over 2x: the loop");
    cr_expect(!rt_memcpy_loop_wins(200, 100), "exactly 2x: memcpy");
    cr_expect(!rt_memcpy_loop_wins(65, 100), "memcpy faster (the Xeon): memcpy");
    cr_expect(!rt_memcpy_loop_wins(0, 0), "no time measured: memcpy");
    const char *k = rt_memcpy_kernel();
    cr_expect(!strcmp(k, "avx2") || !strcmp(k, "sse2") || !strcmp(k, "memcpy"), "kernel \"%s\"", k);
    cr_expect_str_eq(rt_memcpy_kernel(), k, "the choice is made once per process");
}

/* The point-to-point copies take the same path (runtime/request.h): a contiguous receive into a
   buffer 1-63 bytes off the cell modulo 64 (linear gather's blocks at rbuf + p * 24577) and a send
   from such a buffer, at sizes on both sides of rt_memcpy's 2 KiB switch: the bytes, and nothing
   written past either end. */
static struct hint_request_s copy_rq;
static void copy_with_rq_unpack(void *d, const void *s, size_t n)
{
    copy_rq.buf = d;
    rq_unpack(&copy_rq, 0, s, n);
}
static void copy_with_rq_pack(void *d, const void *s, size_t n)
{
    copy_rq.buf = (void *)s;
    rq_pack(&copy_rq, 0, d, n);
}

Test(copy, p2p_pack_and_unpack_copy_at_every_offset)
{
    copy_rq.contig = true;
    check_every_offset(copy_with_rq_unpack, "rq_unpack");
    check_every_offset(copy_with_rq_pack, "rq_pack");
}
