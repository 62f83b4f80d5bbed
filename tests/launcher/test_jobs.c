/*
 * tests/launcher/test_jobs.c — how a job ends: exit statuses, crashes, abort, timeout, signals
 * to hintrun; and that every path leaves no rank process, shm object or store socket, even a
 * SIGKILL of hintrun itself.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lt_util.h"

/* A failing rank must end the whole job within this long (issue 2, item 3). */
#define END_WITHIN 1.0

/* Everything the ranks announced ("... pid P ...", "grandchild G") is gone, and so are the
   job's shm objects and store socket. */
static void expect_clean(const struct lt_run *r)
{
    int seen = 0;
    for (const char *p = r->out; (p = strstr(p, " pid ")); p++) {
        long pid = strtol(p + 5, NULL, 10);
        seen++;
        cr_expect_not(lt_pid_alive((pid_t)pid), "rank pid %ld left behind", pid);
    }
    cr_expect_gt(seen, 0, "no rank announced its pid:\n%s", r->out);
    long g = lt_find_long(r->out, "grandchild", "grandchild");
    if (g > 0)
        cr_expect_not(lt_pid_alive((pid_t)g), "grandchild %ld left behind", g);
    char jobid[32], store[4096];
    lt_find_word(r->out, " jobid ", "jobid", jobid, sizeof jobid);
    lt_find_word(r->out, " store ", "store", store, sizeof store);
    cr_assert_eq(strlen(jobid), 16, "jobid not found in output:\n%s", r->out);
    cr_expect_eq(lt_shm_count(jobid), 0, "shm objects of job %s left in /dev/shm", jobid);
    cr_expect(strncmp(store, "unix:@", 6) == 0, "the store is not an abstract socket: %s", store);
    cr_expect_not(lt_store_left(store), "store socket %s left behind", store);
}

/* The failing rank's pid from its own announcement, and the message hintrun printed. */
static void expect_rank_message(const struct lt_run *r, int rank, const char *tail)
{
    char prefix[64], msg[128];
    snprintf(prefix, sizeof prefix, "started rank %d ", rank);
    long pid = lt_find_long(r->out, prefix, "pid");
    cr_assert_gt(pid, 0, "rank %d did not start:\n%s\n%s", rank, r->out, r->err);
    snprintf(msg, sizeof msg, "hintrun: rank %d (pid %ld) %s", rank, pid, tail);
    cr_expect(strstr(r->err, msg), "expected '%s' in stderr:\n%s", msg, r->err);
}

/* Seconds from the moment printed after `marker` in the output to hintrun's end. */
static double time_to_end(const struct lt_run *r, const char *marker)
{
    const char *p = strstr(r->out, marker);
    cr_assert(p, "no '%s' in output:\n%s", marker, r->out);
    return r->t_end - strtod(p + strlen(marker), NULL);
}

Test(jobs, all_ranks_succeed)
{
    struct lt_run r;
    const char *const args[] = {"-n", "3", lt_rank(), "shm", NULL};
    cr_assert_eq(lt_run(&r, args, NULL, NULL), 0);
    cr_expect_eq(r.status, 0, "stderr: %s", r.err);
    cr_expect_eq(lt_count(r.out, "made shm rank"), 3);
    expect_clean(&r); /* shm objects removed on the normal path too */
    lt_run_free(&r);
}

Test(jobs, rank_exit_status)
{
    struct lt_run r;
    const char *const args[] = {"-n", "3", lt_rank(), "exit", "3", "1", NULL};
    cr_assert_eq(lt_run(&r, args, NULL, NULL), 0);
    cr_expect_eq(r.status, 3);
    expect_rank_message(&r, 1, "exited with status 3");
    double dt = time_to_end(&r, "exit at ");
    cr_expect_lt(dt, END_WITHIN, "job ended %.3f s after rank 1 exited", dt);
    expect_clean(&r);
    lt_run_free(&r);
}

/* A rank that connected to the store (hint_init) and exits 0 without BYE (hint_finalize) left
   its peers waiting: that is a failure, reported at once. */
Test(jobs, rank_exit0_without_finalize)
{
    struct lt_run r;
    const char *const args[] = {"-n", "3", lt_rank(), "exit", "0", "1", NULL};
    cr_assert_eq(lt_run(&r, args, NULL, NULL), 0);
    cr_expect_eq(r.status, 1, "stderr: %s", r.err);
    expect_rank_message(&r, 1, "exited with status 0 without calling hint_finalize; ending the job");
    double dt = time_to_end(&r, "exit at ");
    cr_expect_lt(dt, END_WITHIN, "job ended %.3f s after rank 1 exited", dt);
    expect_clean(&r);
    lt_run_free(&r);
}

/* A program that never starts hint (no HELLO) may exit 0 as before. */
Test(jobs, program_without_hint_exits_0)
{
    struct lt_run r;
    const char *const args[] = {"-n", "2", lt_rank(), "env", "HINT_RANK", NULL};
    cr_assert_eq(lt_run(&r, args, NULL, NULL), 0);
    cr_expect_eq(r.status, 0, "stderr: %s", r.err);
    cr_expect_eq(lt_count(r.out, "HINT_RANK="), 2, "%s", r.out);
    lt_run_free(&r);
}

static void crash_case(int np, int sig, int rank, const char *signame)
{
    struct lt_run r;
    char n[8], s[8], k[8], tail[96];
    snprintf(n, sizeof n, "%d", np);
    snprintf(s, sizeof s, "%d", sig);
    snprintf(k, sizeof k, "%d", rank);
    const char *const args[] = {"-n", n, lt_rank(), "crash", s, k, NULL};
    cr_assert_eq(lt_run(&r, args, NULL, NULL), 0);
    cr_expect_eq(r.status, 128 + sig, "status %d, stderr: %s", r.status, r.err);
    snprintf(tail, sizeof tail, "killed by signal %d (%s)", sig, signame);
    expect_rank_message(&r, rank, tail);
    double dt = time_to_end(&r, "crash at ");
    cr_expect_lt(dt, END_WITHIN, "job ended %.3f s after the crash", dt);
    expect_clean(&r);
    lt_run_free(&r);
}

Test(jobs, rank_sigkill) { crash_case(4, SIGKILL, 2, "Killed"); }
Test(jobs, rank_sigsegv) { crash_case(3, SIGSEGV, 0, "Segmentation fault"); }
Test(jobs, rank_sigabrt_p1) { crash_case(1, SIGABRT, 0, "Aborted"); }

Test(jobs, boot_abort)
{
    struct lt_run r;
    const char *const args[] = {"-n", "3", lt_rank(), "abort", "7", "1", "custom reason", NULL};
    cr_assert_eq(lt_run(&r, args, NULL, NULL), 0);
    cr_expect_eq(r.status, 7);
    expect_rank_message(&r, 1, "aborted the job with code 7: custom reason");
    cr_expect_eq(lt_count(r.err, "hintrun: rank"), 1, "one message only:\n%s", r.err);
    expect_clean(&r);
    lt_run_free(&r);
}

Test(jobs, timeout)
{
    struct lt_run r;
    const char *const args[] = {"-n", "2", "--timeout", "1", lt_rank(), "sleep", NULL};
    cr_assert_eq(lt_run(&r, args, NULL, NULL), 0);
    cr_expect_eq(r.status, 124);
    cr_expect(strstr(r.err, "timeout"), "%s", r.err);
    double dt = r.t_end - r.t_start;
    cr_expect(dt >= 1.0 && dt < 1.0 + END_WITHIN, "ran %.3f s with --timeout 1", dt);
    expect_clean(&r);
    lt_run_free(&r);
}

/* Ranks that ignore SIGTERM are killed anyway. */
Test(jobs, timeout_sigterm_ignored)
{
    struct lt_run r;
    const char *const args[] = {"-n", "2", "--timeout", "0.5", lt_rank(), "sleep", "ignore-term",
                                NULL};
    cr_assert_eq(lt_run(&r, args, NULL, NULL), 0);
    cr_expect_eq(r.status, 124);
    double dt = r.t_end - r.t_start;
    cr_expect(dt >= 0.5 && dt < 0.5 + END_WITHIN, "ran %.3f s with --timeout 0.5", dt);
    expect_clean(&r);
    lt_run_free(&r);
}

static void signal_case(int sig)
{
    struct lt_run r;
    const struct lt_signal when = {.marker = "ready rank", .count = 3, .sig = sig};
    const char *const args[] = {"-n", "3", lt_rank(), "sleep", NULL};
    cr_assert_eq(lt_run(&r, args, NULL, &when), 0);
    cr_expect_eq(r.status, 128 + sig, "status %d, stderr: %s", r.status, r.err);
    cr_expect(strstr(r.err, "passing it to the ranks"), "%s", r.err);
    expect_clean(&r);
    lt_run_free(&r);
}

Test(jobs, sigterm_forwarded) { signal_case(SIGTERM); }
Test(jobs, sigint_forwarded) { signal_case(SIGINT); }

/* A rank that leaves early makes the others' fence and get fail instead of hanging. */
Test(jobs, orphaned_fence_and_get)
{
    struct lt_run r;
    const char *const args[] = {"-n", "2", "--timeout", "20", lt_rank(), "orphan", NULL};
    cr_assert_eq(lt_run(&r, args, NULL, NULL), 0);
    cr_expect_eq(r.status, 0, "stderr: %s", r.err);
    cr_expect(strstr(r.out, "fence failed as expected"), "%s\n%s", r.out, r.err);
    cr_expect(strstr(r.out, "get failed as expected"), "%s\n%s", r.out, r.err);
    lt_run_free(&r);
}

/* A SIGKILLed hintrun runs no code, yet leaves nothing behind: the ranks die with it
   (PR_SET_PDEATHSIG), the watcher kills what they forked and removes the job's shm objects, and
   the store was an abstract socket, gone with hintrun. */
Test(jobs, hintrun_sigkilled)
{
    struct lt_run r;
    const struct lt_signal when = {.marker = "ready rank", .count = 3, .sig = SIGKILL};
    const char *const args[] = {"-n", "3", lt_rank(), "sleep", "leave-things", NULL};
    cr_assert_eq(lt_run(&r, args, NULL, &when), 0);
    cr_expect_eq(r.status, 128 + SIGKILL);
    int seen = 0;
    for (const char *p = r.out; (p = strstr(p, " pid ")); p++, seen++)
        cr_expect_not(lt_pid_alive((pid_t)strtol(p + 5, NULL, 10)), "rank outlived hintrun");
    cr_expect_eq(seen, 3);
    char jobid[32], store[4096];
    lt_find_word(r.out, " jobid ", "jobid", jobid, sizeof jobid);
    lt_find_word(r.out, " store ", "store", store, sizeof store);
    cr_assert_eq(strlen(jobid), 16, "%s", r.out);
    long g = lt_find_long(r.out, "grandchild", "grandchild");
    cr_assert_gt(g, 0, "%s", r.out);
    /* lt_run returns once hintrun's output pipe closes: the watcher holds it until it is done */
    cr_expect_not(lt_pid_alive((pid_t)g), "a rank's child outlived hintrun");
    cr_expect_eq(lt_shm_count(jobid), 0, "shm objects of job %s left in /dev/shm", jobid);
    cr_expect(strncmp(store, "unix:@", 6) == 0, "the store is not an abstract socket: %s", store);
    cr_expect_not(lt_store_left(store), "store socket %s left behind", store);
    cr_expect(strstr(r.err, "hintrun: watcher: hintrun (job "), "%s", r.err);
    cr_expect(r.t_end - r.t_start < 10, "took %.2f s", r.t_end - r.t_start);
    lt_run_free(&r);
}

/* Waits up to 2 s for pid to reach (want = 1) or leave (want = 0) the stopped state. */
static int wait_stopped(pid_t pid, int want)
{
    for (double until = lt_now() + 2; lt_now() < until; usleep(5000))
        if ((lt_pid_state(pid) == 'T') == want)
            return 1;
    return 0;
}

static void stop_then_continue(pid_t hintrun, const char *out)
{
    cr_expect(wait_stopped(hintrun, 1), "hintrun did not stop on SIGTSTP");
    for (const char *p = out; (p = strstr(p, " pid ")); p++)
        cr_expect(wait_stopped((pid_t)strtol(p + 5, NULL, 10), 1), "a rank did not stop");
    kill(hintrun, SIGCONT);
    for (const char *p = out; (p = strstr(p, " pid ")); p++)
        cr_expect(wait_stopped((pid_t)strtol(p + 5, NULL, 10), 0), "a rank did not continue");
    cr_expect(wait_stopped(hintrun, 0), "hintrun did not continue");
    kill(hintrun, SIGTERM);
}

/* Ctrl-Z stops the ranks with hintrun, fg/bg (SIGCONT) continues them. */
Test(jobs, sigtstp_and_sigcont)
{
    struct lt_run r;
    const struct lt_signal when = {.marker = "ready rank", .count = 2, .sig = SIGTSTP,
                                   .then = stop_then_continue};
    const char *const args[] = {"-n", "2", lt_rank(), "sleep", NULL};
    cr_assert_eq(lt_run(&r, args, NULL, &when), 0);
    cr_expect_eq(r.status, 128 + SIGTERM, "%s", r.err);
    expect_clean(&r);
    lt_run_free(&r);
}
