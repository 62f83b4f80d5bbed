/*
 * tests/unit/test_registry.c — the live-handle registry (runtime/registry.c) and the handle
 * checks built on it: a stale, double-freed, random or wrong-kind group, type or request handle is
 * an error code with a message, never a crash or a read of freed memory.
 *
 * "Never a read": the strongest stale handle is one whose memory is no longer mapped at all. Each
 * test makes such pointers (an mmap'ed page, unmapped again): a check that dereferenced the handle
 * would die of SIGSEGV, and Criterion would report the test as crashed.
 *
 * hint_init without hintrun gives a world of one, enough for groups and requests (to self).
 */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "datatype/datatype.h"
#include "hint.h"
#include "runtime/group.h"
#include "runtime/registry.h"
#include "runtime/request.h"

/* An address that certainly is not mapped (so reading it would crash). */
static void *unmapped(void)
{
    void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert_neq(p, MAP_FAILED);
    munmap(p, 4096);
    return (char *)p + 64;
}

/* ---- the set itself ---- */

static int cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

/* Random adds and removes against a sorted reference: growth, probe runs that wrap around and
   backward-shift removal must keep every answer right. */
Test(registry, set_matches_a_reference)
{
    enum { N = 20000 };
    static uintptr_t keys[N];
    static bool in[N];
    srand(7);
    for (int i = 0; i < N; i++)
        keys[i] = ((uintptr_t)rand() << 20 | (uintptr_t)rand()) << 4; /* 16-byte aligned, like malloc's */
    qsort(keys, N, sizeof *keys, cmp_ptr);
    size_t live = 0;
    for (int round = 0; round < 6; round++) {
        for (int i = 0; i < N; i++) {
            if (rand() % 3 == 0)
                continue;
            if (in[i]) {
                reg_remove(REG_REQUEST, (void *)keys[i]);
                live--;
            } else {
                cr_assert_eq(reg_add(REG_REQUEST, (void *)keys[i]), HINT_SUCCESS);
                live++;
            }
            in[i] = !in[i];
        }
        cr_assert_eq(reg_count(REG_REQUEST), live);
        for (int i = 0; i < N; i++)
            cr_assert_eq(reg_live(REG_REQUEST, (void *)keys[i]), in[i], "round %d key %d", round, i);
        cr_assert_not(reg_live(REG_GROUP, (void *)keys[0]), "kinds are separate sets");
    }
    for (int i = 0; i < N; i++)
        if (in[i])
            reg_remove(REG_REQUEST, (void *)keys[i]);
    cr_expect_eq(reg_count(REG_REQUEST), 0);
    cr_expect_not(reg_live(REG_REQUEST, NULL));
    reg_remove(REG_REQUEST, (void *)keys[0]); /* removing what is not there is harmless */
    cr_expect_eq(reg_add(REG_REQUEST, (void *)keys[0]), HINT_SUCCESS);
    cr_expect_eq(reg_add(REG_REQUEST, (void *)keys[0]), HINT_SUCCESS);
    cr_expect_eq(reg_count(REG_REQUEST), 1, "adding twice keeps one entry");
}

/* ---- handles ---- */

static void start(void)
{
    cr_redirect_stderr();
    cr_assert_eq(hint_init(NULL, NULL), HINT_SUCCESS);
}

static void stop(void) { hint_finalize(); }

TestSuite(handles, .init = start, .fini = stop);

Test(handles, stale_and_double_freed_group)
{
    hint_group a, copy;
    int n;
    cr_assert_eq(hint_group_dup(HINT_WORLD, &a), HINT_SUCCESS);
    cr_expect_eq(hint_group_size(a, &n), HINT_SUCCESS);
    copy = a;
    cr_assert_eq(hint_group_free(&a), HINT_SUCCESS);
    cr_expect_eq(a, HINT_GROUP_NULL);
    cr_expect_eq(hint_group_size(copy, &n), HINT_ERR_GROUP, "a freed group");
    cr_expect_eq(hint_group_free(&copy), HINT_ERR_GROUP, "freed twice");
    cr_expect_eq(hint_barrier(copy), HINT_ERR_GROUP);
    int x = 1;
    cr_expect_eq(hint_send(&x, 1, HINT_INT, 0, 0, copy), HINT_ERR_GROUP);
    /* the world and new groups still work */
    cr_expect_eq(hint_group_size(HINT_WORLD, &n), HINT_SUCCESS);
    cr_expect_eq(n, 1);
    cr_expect_eq(hint_group_free(&(hint_group){HINT_WORLD}), HINT_ERR_GROUP, "the world cannot be freed");
    cr_assert_eq(hint_group_split(HINT_WORLD, 0, 0, &a), HINT_SUCCESS);
    cr_expect_eq(hint_allreduce(&x, &n, 1, HINT_INT, HINT_SUM, a), HINT_SUCCESS);
    cr_expect_eq(hint_group_free(&a), HINT_SUCCESS);
}

Test(handles, random_and_wrong_kind_groups)
{
    int n;
    hint_group bad = unmapped();
    cr_expect_eq(hint_group_size(bad, &n), HINT_ERR_GROUP);
    cr_expect_eq(hint_group_free(&bad), HINT_ERR_GROUP);
    cr_expect_eq(hint_group_rank((hint_group)(uintptr_t)0x10, &n), HINT_ERR_GROUP);
    cr_expect_eq(hint_group_size((hint_group)HINT_INT, &n), HINT_ERR_GROUP, "a type is no group");
    cr_expect_eq(hint_group_size((hint_group)((char *)HINT_WORLD + 8), &n), HINT_ERR_GROUP, "inside a group");
    cr_expect_eq(hint_group_size(HINT_GROUP_NULL, &n), HINT_ERR_GROUP);
}

Test(handles, stale_and_double_freed_type)
{
    hint_type v, w, copy;
    size_t s;
    int buf[8] = {0}, out[8];
    cr_assert_eq(hint_type_vector(2, 1, 2, HINT_INT, &v), HINT_SUCCESS);
    cr_assert_eq(hint_type_contiguous(2, v, &w), HINT_SUCCESS); /* w holds v */
    cr_assert_eq(hint_type_commit(&w), HINT_SUCCESS);
    copy = v;
    cr_assert_eq(hint_type_free(&v), HINT_SUCCESS);
    cr_expect_eq(hint_type_size(copy, &s), HINT_ERR_TYPE, "freed by the user, though w still holds it");
    cr_expect_eq(hint_type_free(&copy), HINT_ERR_TYPE, "freed twice");
    cr_expect_eq(hint_type_contiguous(2, copy, &v), HINT_ERR_TYPE, "no building on a freed type");
    /* w, built on it, still works */
    cr_expect_eq(hint_type_size(w, &s), HINT_SUCCESS);
    cr_expect_eq(s, 4 * sizeof(int));
    cr_expect_eq(hint_sendrecv(buf, 1, w, 0, 0, out, 1, w, 0, 0, HINT_WORLD, HINT_STATUS_IGNORE), HINT_SUCCESS);
    copy = w;
    cr_assert_eq(hint_type_free(&w), HINT_SUCCESS); /* now both are gone, memory and all */
    cr_expect_eq(hint_type_size(copy, &s), HINT_ERR_TYPE);
    cr_expect_eq(hint_send(buf, 1, copy, 0, 0, HINT_WORLD), HINT_ERR_TYPE);
    cr_expect_eq(hint_bcast(buf, 1, copy, 0, HINT_WORLD), HINT_ERR_TYPE);
    cr_expect_eq(hint_type_free(&copy), HINT_ERR_TYPE);
}

Test(handles, random_wrong_kind_and_predefined_types)
{
    size_t s;
    hint_type bad = unmapped();
    cr_expect_eq(hint_type_size(bad, &s), HINT_ERR_TYPE);
    cr_expect_eq(hint_type_free(&bad), HINT_ERR_TYPE);
    cr_expect_eq(hint_type_commit(&bad), HINT_ERR_TYPE);
    int x = 0;
    cr_expect_eq(hint_send(&x, 1, bad, 0, 0, HINT_WORLD), HINT_ERR_TYPE);
    cr_expect_eq(hint_type_size((hint_type)HINT_WORLD, &s), HINT_ERR_TYPE, "a group is no type");
    cr_expect_eq(hint_type_size((hint_type)HINT_SUM, &s), HINT_ERR_TYPE, "an op is no type");
    hint_type predefined = HINT_DOUBLE;
    cr_expect_eq(hint_type_free(&predefined), HINT_ERR_TYPE, "predefined types cannot be freed");
    cr_expect_eq(predefined, HINT_DOUBLE);
    const hint_type all[] = {HINT_BYTE,   HINT_CHAR,   HINT_INT,    HINT_LONG,
                             HINT_INT32,  HINT_INT64,  HINT_UINT32, HINT_UINT64,
                             HINT_FLOAT,  HINT_DOUBLE, HINT_COMPLEX_FLOAT, HINT_COMPLEX_DOUBLE};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
        cr_expect_eq(hint_type_size(all[i], &s), HINT_SUCCESS);
        cr_expect_eq(dt_check(all[i]), HINT_SUCCESS);
    }
}

Test(handles, stale_double_waited_and_random_requests)
{
    int x = 5, y = 0;
    hint_request r[2], copy;
    cr_assert_eq(hint_irecv(&y, 1, HINT_INT, 0, 3, HINT_WORLD, &r[0]), HINT_SUCCESS);
    cr_assert_eq(hint_isend(&x, 1, HINT_INT, 0, 3, HINT_WORLD, &r[1]), HINT_SUCCESS);
    copy = r[0];
    cr_expect_eq(hint_waitall(2, r, HINT_STATUSES_IGNORE), HINT_SUCCESS);
    cr_expect_eq(y, 5);
    cr_expect_eq(r[0], HINT_REQUEST_NULL);
    cr_expect_eq(hint_wait(&copy, HINT_STATUS_IGNORE), HINT_ERR_REQUEST, "completed and waited already");
    int done;
    cr_expect_eq(hint_test(&copy, &done, HINT_STATUS_IGNORE), HINT_ERR_REQUEST);
    hint_request bad[2] = {HINT_REQUEST_NULL, unmapped()};
    cr_expect_eq(hint_waitall(2, bad, HINT_STATUSES_IGNORE), HINT_ERR_REQUEST);
    hint_request kind = (hint_request)HINT_WORLD;
    cr_expect_eq(hint_wait(&kind, HINT_STATUS_IGNORE), HINT_ERR_REQUEST, "a group is no request");
    kind = (hint_request)HINT_INT;
    cr_expect_eq(hint_wait(&kind, HINT_STATUS_IGNORE), HINT_ERR_REQUEST, "a type is no request");
}

/* The message says what is wrong, including the kind a wrong-kind handle really is. */
Test(handles, message_names_the_handle)
{
    int n;
    hint_group g = (hint_group)HINT_INT;
    cr_expect_eq(hint_group_size(g, &n), HINT_ERR_GROUP);
    hint_type t = unmapped();
    cr_expect_eq(hint_type_size(t, &(size_t){0}), HINT_ERR_TYPE);
    fflush(stderr);
    char want[512];
    snprintf(want, sizeof want,
             "hint[rank 0] handle: check: %p is not a group handle but a datatype handle; the call returns invalid "
             "group\n"
             "hint[rank 0] handle: check: %p is not a live datatype handle (freed already, never created, or not a "
             "handle at all); the call returns invalid datatype or datatype mismatch\n",
             (void *)g, (void *)t);
    cr_expect_stderr_eq_str(want);
}

/* What a check costs: a live group and a predefined type, the checks every send makes. The
   numbers go to the log (the machine is shared; no bound asserted beyond "cheap"). */
Test(handles, check_cost)
{
    enum { N = 20000000 };
    hint_group w = HINT_WORLD;
    hint_type t = HINT_DOUBLE;
    struct timespec a, b;
    int bad = 0;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < N; i++) {
        bad |= grp_check(w) | dt_check(t);
        __asm__ volatile("" : "+r"(w), "+r"(t)); /* keep the compiler from hoisting the checks */
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double ns = ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / N;
    cr_log_info("grp_check + dt_check: %.2f ns per pair", ns);
    printf("# grp_check + dt_check: %.2f ns per pair\n", ns);
    cr_expect_eq(bad, 0);
    cr_expect_lt(ns, 200.0, "a pair of handle checks should cost a few ns, took %.1f", ns);
}
