/*
 * tests/mpi/test_crash.c — the failure paths: a rank killed, crashing, exiting non-zero or
 * aborting mid-exchange ends the whole job quickly with the right status and a message naming
 * the rank, and leaves no process and no shared-memory object behind.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "tests/common/job.h"

/* Every "rankpid=N" the ranks printed must name a process that no longer exists. */
static void expect_no_survivors(const char *out)
{
    int found = 0;
    for (const char *p = strstr(out, "rankpid="); p; p = strstr(p + 1, "rankpid=")) {
        int pid = atoi(p + 8);
        found++;
        cr_expect(kill(pid, 0) != 0 && errno == ESRCH, "rank process %d survived the job", pid);
    }
    cr_expect(found > 0, "no rank printed its pid:\n%s", out);
}

static void crash_case(const char *mode, int np, int victim, int want_status, const char *want_msg)
{
    char v[16];
    snprintf(v, sizeof v, "%d", victim);
    const char *argv[] = {job_build_path("tests/mpi/crash"), mode, v, NULL};
    struct job_result res;
    cr_assert_eq(job_run(NULL, np, argv, NULL, &res), 0);
    cr_expect_eq(res.status, want_status, "status %d, expected %d:\n%s", res.status, want_status, res.output);
    char rankmsg[32];
    snprintf(rankmsg, sizeof rankmsg, "rank %d", victim);
    cr_expect(strstr(res.output, rankmsg) != NULL, "message does not name %s:\n%s", rankmsg, res.output);
    cr_expect(strstr(res.output, want_msg) != NULL, "message lacks '%s':\n%s", want_msg, res.output);
    cr_expect(strstr(res.output, "pid") != NULL, "message does not name the pid:\n%s", res.output);
    /* the ranks exchanged 50 rounds before the crash; the job must end well within seconds */
    cr_expect(res.seconds < 5.0, "job took %.2f s to end after the crash", res.seconds);
    cr_expect_eq(job_shm_left(&res), 0, "shared memory left behind:\n%s", res.output);
    expect_no_survivors(res.output);
    free(res.output);
}

Test(crash, sigkill_mid_exchange, .timeout = 60) { crash_case("kill", 4, 2, 128 + SIGKILL, "signal 9"); }
Test(crash, segv_mid_exchange, .timeout = 60) { crash_case("segv", 3, 1, 128 + SIGSEGV, "signal 11"); }
Test(crash, exit_status_mid_exchange, .timeout = 60) { crash_case("exit", 4, 3, 3, "status 3"); }
Test(crash, sigkill_before_init, .timeout = 60) { crash_case("preinit", 3, 1, 128 + SIGKILL, "signal 9"); }
Test(crash, sigkill_oversubscribed, .timeout = 60) { crash_case("kill", 16, 9, 128 + SIGKILL, "signal 9"); }
Test(crash, abort, .timeout = 60) { crash_case("abort", 4, 1, 7, "abort"); }
