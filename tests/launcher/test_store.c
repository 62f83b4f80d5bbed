/*
 * tests/launcher/test_store.c — the bootstrap store through hintrun: put/get/fence among P
 * ranks (deferred gets, 1 MiB values, truncation, replacement), and hostile clients (wrong
 * token, malformed frames) that must be refused while hintrun keeps serving.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <string.h>

#include "lt_util.h"

ParameterizedTestParameters(store, put_get_fence)
{
    static int ps[] = {1, 2, 3, 4, 5, 8, 16};
    return cr_make_param_array(int, ps, sizeof ps / sizeof ps[0]);
}

ParameterizedTest(int *p, store, put_get_fence)
{
    struct lt_run r;
    char n[8];
    snprintf(n, sizeof n, "%d", *p);
    const char *const args[] = {"-n", n, "--timeout", "100", lt_rank(), "kv", "3", NULL};
    cr_assert_eq(lt_run(&r, args, NULL, NULL), 0);
    cr_expect_eq(r.status, 0, "P=%d: status %d\n%s", *p, r.status, r.err);
    for (int k = 0; k < *p; k++) {
        char want[64];
        snprintf(want, sizeof want, "kv ok rank %d size %d\n", k, *p);
        cr_expect(strstr(r.out, want), "P=%d: missing '%s'", *p, want);
    }
    lt_run_free(&r);
}

static void raw_case(const char *np)
{
    struct lt_run r;
    const char *const args[] = {"-n", np, "--timeout", "60", lt_rank(), "raw", NULL};
    cr_assert_eq(lt_run(&r, args, NULL, NULL), 0);
    cr_expect_eq(r.status, 0, "status %d\n%s\n%s", r.status, r.out, r.err);
    int p = np[0] - '0';
    cr_expect_eq(lt_count(r.out, "raw ok rank"), p, "%s\n%s", r.out, r.err);
    /* each refusal was seen by the client and logged by hintrun */
    cr_expect_eq(lt_count(r.out, "refused:"), 12 * p, "%s", r.out);
    cr_expect_eq(lt_count(r.err, "wrong job token"), p, "%s", r.err);
    cr_expect(strstr(r.err, "hintrun: store: refusing a connection"), "%s", r.err);
    lt_run_free(&r);
}

Test(store, hostile_clients_p1) { raw_case("1"); }
Test(store, hostile_clients_p2) { raw_case("2"); }

/* Random frames from every rank; hintrun logs and refuses, and still serves the real client. */
Test(store, fuzzed_frames)
{
    struct lt_run r;
    const char *const args[] = {"-n", "3", "--timeout", "100", lt_rank(), "fuzz", "300", NULL};
    cr_assert_eq(lt_run(&r, args, NULL, NULL), 0);
    cr_expect_eq(r.status, 0, "status %d\n%s", r.status, r.err);
    cr_expect_eq(lt_count(r.out, "fuzz ok rank"), 3, "%s", r.out);
    lt_run_free(&r);
}
