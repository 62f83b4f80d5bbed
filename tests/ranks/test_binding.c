/*
 * tests/ranks/test_binding.c — hintrun's placement seen from the ranks: by default each rank is
 * pinned to its own CPU when the ranks fit, not pinned when they do not; --bind-to none pins
 * nothing; --hierarchy/--order bind as the core list says; impossible requests fail up front.
 */
#include <criterion/criterion.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "tests/common/job.h"

static int allowed_cpus(void)
{
    cpu_set_t set;
    sched_getaffinity(0, sizeof set, &set);
    return CPU_COUNT(&set);
}

/* The CPU list rank r printed. */
static const char *cpus_of(const char *out, int r, char *buf, size_t len)
{
    char key[32];
    snprintf(key, sizeof key, "rank %d cpus ", r);
    const char *p = strstr(out, key);
    cr_assert(p, "rank %d printed nothing:\n%s", r, out);
    p += strlen(key);
    size_t n = strcspn(p, "\n");
    snprintf(buf, len, "%.*s", (int)(n < len ? n : len - 1), p);
    return buf;
}

static struct job_result run(const char *const opts[], int np)
{
    const char *argv[] = {job_build_path("tests/ranks/affinity"), NULL};
    struct job_result res;
    cr_assert_eq(job_run(opts, np, argv, NULL, &res), 0);
    return res;
}

Test(binding, default_pins_one_cpu_per_rank_when_they_fit)
{
    int n = allowed_cpus();
    int np = n < 2 ? n : 2;
    struct job_result res = run(NULL, np);
    cr_assert_eq(res.status, 0, "%s", res.output);
    char a[256], b[256];
    if (np == 2) {
        cpus_of(res.output, 0, a, sizeof a);
        cpus_of(res.output, 1, b, sizeof b);
        cr_expect(strchr(a, ',') == NULL && strchr(b, ',') == NULL, "not pinned to one CPU: '%s' '%s'", a, b);
        cr_expect(strcmp(a, b) != 0, "both ranks on CPU %s", a);
    }
    free(res.output);
}

Test(binding, oversubscribed_and_none_are_not_pinned)
{
    int n = allowed_cpus();
    const char *none[] = {"--bind-to", "none", "--report-bindings", NULL};
    struct job_result res = run(none, 2);
    cr_assert_eq(res.status, 0, "%s", res.output);
    char a[256];
    if (n > 1)
        cr_expect(strchr(cpus_of(res.output, 0, a, sizeof a), ',') || strchr(a, '-'), "--bind-to none pinned: %s", a);
    cr_expect(strstr(res.output, "not bound (--bind-to none)") != NULL, "%s", res.output);
    free(res.output);
    res = run(NULL, n + 1);
    cr_assert_eq(res.status, 0, "%s", res.output);
    if (n > 1)
        cr_expect(strchr(cpus_of(res.output, n, a, sizeof a), ',') != NULL, "oversubscribed rank pinned: %s", a);
    free(res.output);
}

Test(binding, hierarchy_binds_by_core_list)
{
    int n = allowed_cpus() >= 2 ? 2 : 1;
    const char *opts[] = {"--hierarchy", n == 2 ? "1,2" : "1,1", "--order", "1,0", "--report-bindings", NULL};
    struct job_result res = run(opts, n);
    cr_assert_eq(res.status, 0, "%s", res.output);
    cr_expect(strstr(res.output, "rank 0 (pid") && strstr(res.output, "bound to core 0"), "%s", res.output);
    char a[256], b[256];
    cr_expect(strchr(cpus_of(res.output, 0, a, sizeof a), ',') == NULL, "rank 0 not on one CPU: %s", a);
    if (n == 2) {
        cr_expect(strstr(res.output, "bound to core 1"), "%s", res.output);
        cr_expect(strcmp(a, cpus_of(res.output, 1, b, sizeof b)) != 0, "both ranks on CPU %s", a);
    }
    free(res.output);
}

Test(binding, impossible_requests_fail_with_numbers)
{
    int n = allowed_cpus();
    char want[128];
    const char *core[] = {"--bind-to", "core", NULL};
    struct job_result res = run(core, n + 1);
    cr_expect_eq(res.status, 2);
    snprintf(want, sizeof want, "%d ranks need %d cores but only %d", n + 1, n + 1, n);
    cr_expect(strstr(res.output, want) != NULL, "%s", res.output);
    free(res.output);
    const char *big[] = {"--hierarchy", "2,64", NULL};
    res = run(big, 128);
    cr_expect_eq(res.status, 2);
    cr_expect(strstr(res.output, "needs 128 cores per node but only") != NULL, "%s", res.output);
    free(res.output);
    const char *bad[] = {"--hierarchy", "1,2", "--order", "0,0", NULL};
    res = run(bad, 2);
    cr_expect_eq(res.status, 2, "%s", res.output);
    free(res.output);
}
