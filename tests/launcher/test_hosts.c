/*
 * tests/launcher/test_hosts.c — hintrun --host / --hostfile without other machines: the launch
 * agent is `env HINT_TEST_HOST={host}`, so each "host" is an agent on this machine, and the
 * store's TCP side listens on 127.0.0.1. Checks the command line, the dealing of ranks to hosts,
 * the environment each rank gets, -x and MPMD through agents, a crash and an exit without
 * finalize on a host (named, within a second, nothing left), and launch agents that fail.
 * The same across two network namespaces: check_hosts_netns.py.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lt_util.h"

#define END_WITHIN 1.0
#define LOCAL_AGENT "--launch-agent", "env HINT_TEST_HOST={host}", "--store-addr", "127.0.0.1"

static void expect_usage(const char *const args[], const char *msg)
{
    struct lt_run r;
    cr_assert_eq(lt_run(&r, args, NULL, NULL), 0);
    cr_expect_eq(r.status, 2, "status %d for %s; stderr: %s", r.status, args[1], r.err);
    cr_expect(strstr(r.err, msg), "expected '%s' in stderr:\n%s", msg, r.err);
    lt_run_free(&r);
}

Test(hosts, usage_errors)
{
    const char *p = "/bin/true";
    expect_usage((const char *const[]){"--host", "a:2,b:1", "-n", "4", p, NULL},
                 "-n 4: the 2 hosts have 3 slots in all");
    expect_usage((const char *const[]){"--host", "a,b", "--nodes", "2", p, NULL},
                 "each host is one node");
    expect_usage((const char *const[]){"--host", "a,b", "--stdin", "0", p, NULL},
                 "only --stdin none goes with --host");
    expect_usage((const char *const[]){"--launch-agent", "ssh", "-n", "1", p, NULL},
                 "need --host or --hostfile");
    expect_usage((const char *const[]){"--host", "a:0", p, NULL}, "slots must be an integer");
    expect_usage((const char *const[]){"--host", "a,,b", p, NULL}, "empty host");
    expect_usage((const char *const[]){"--host", "a;rm", p, NULL}, "is not a host name");
    expect_usage((const char *const[]){"--host", "", p, NULL}, "needs at least one host");
    expect_usage((const char *const[]){"--hostfile", "/nonexistent/hosts", p, NULL},
                 "/nonexistent/hosts: No such file");
    expect_usage((const char *const[]){"--host", "a", p, ":", "-n", "1", p, NULL},
                 "every program needs its -n");
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert(f, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

Test(hosts, hostfile_errors)
{
    char path[] = "/tmp/hint-test-hostsXXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    write_file(path, "# hosts\nx slots=2\ny slots=two\n");
    expect_usage((const char *const[]){"--hostfile", path, "/bin/true", NULL}, "line 3: slots must");
    write_file(path, "x junk\n");
    expect_usage((const char *const[]){"--hostfile", path, "/bin/true", NULL},
                 "expected 'host', 'host:N' or 'host slots=N'");
    write_file(path, "# only a comment\n\n");
    expect_usage((const char *const[]){"--hostfile", path, "/bin/true", NULL}, "names no host");
    unlink(path);
}

/* hintrun --agent started by hand: it refuses, saying what it is for. */
Test(hosts, agent_without_its_job)
{
    struct lt_run r;
    const char *const args[] = {"--agent", NULL};
    cr_assert_eq(lt_run_input(&r, args, ""), 0);
    cr_expect_eq(r.status, 2, "stderr: %s", r.err);
    cr_expect(strstr(r.err, "--agent is internal") && strstr(r.err, "stdin ended before"), "%s", r.err);
    lt_run_free(&r);
    const char *const more[] = {"--agent", "-n", "2", NULL};
    cr_assert_eq(lt_run_input(&r, more, "hint-agent 1 x\n"), 0);
    cr_expect_eq(r.status, 2, "stderr: %s", r.err);
    cr_expect(strstr(r.err, "takes no other argument"), "%s", r.err);
    lt_run_free(&r);
    cr_assert_eq(lt_run_input(&r, args, "hint-agent 1 not-a-token\n"), 0);
    cr_expect_eq(r.status, 2, "stderr: %s", r.err);
    cr_expect(strstr(r.err, "malformed header"), "%s", r.err);
    lt_run_free(&r);
}

/* Each line "R N L S H": rank, node, local rank, local size, host. */
static void expect_placement(const char *out, int np, const int *slots, const char *const *names,
                             int nhosts)
{
    int first = 0;
    for (int h = 0; h < nhosts && first < np; h++) {
        int n = np - first < slots[h] ? np - first : slots[h];
        for (int l = 0; l < n; l++) {
            char want[128];
            snprintf(want, sizeof want, "%d/%d %d ", first + l, np, h);
            cr_expect(strstr(out, want), "no line '%s' in:\n%s", want, out);
            snprintf(want, sizeof want, "%d/%d %d %d/%d %s ", first + l, np, h, l, n, names[h]);
            cr_expect(strstr(out, want), "no line '%s' in:\n%s", want, out);
        }
        first += n;
    }
    cr_expect_eq(lt_count(out, "tcp:127.0.0.1:"), np, "%s", out);
}

#define SHOW "echo $HINT_RANK/$HINT_SIZE $HINT_NODE_ID $HINT_LOCAL_RANK/$HINT_LOCAL_SIZE " \
             "$HINT_TEST_HOST $HINT_NNODES $HINT_STORE"

Test(hosts, placement)
{
    static const char *const names[] = {"a", "b", "c"};
    static const int slots[] = {2, 1, 3};
    const char *nps[] = {"1", "2", "3", "5", "6"};
    for (size_t i = 0; i < sizeof nps / sizeof nps[0]; i++) {
        struct lt_run r;
        const char *const args[] = {"--host", "a:2,b,c:3", LOCAL_AGENT, "-n", nps[i], "sh", "-c", SHOW, NULL};
        cr_assert_eq(lt_run(&r, args, NULL, NULL), 0);
        cr_expect_eq(r.status, 0, "stderr: %s", r.err);
        int np = atoi(nps[i]);
        expect_placement(r.out, np, slots, names, 3);
        /* hosts that get no rank are not nodes of the job */
        int used = np <= 2 ? 1 : np == 3 ? 2 : 3;
        char nn[32];
        snprintf(nn, sizeof nn, " %d tcp:", used);
        cr_expect_eq(lt_count(r.out, nn), np, "HINT_NNODES is not %d:\n%s", used, r.out);
        lt_run_free(&r);
    }
}

/* Without -n every slot runs a rank; a hostfile in all its forms. */
Test(hosts, hostfile_all_slots)
{
    char path[] = "/tmp/hint-test-hostsXXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    write_file(path, "# the hosts\n  a slots=2   # two\n\nb\nc:3\n");
    struct lt_run r;
    const char *const args[] = {"--hostfile", path, LOCAL_AGENT, "sh", "-c", SHOW, NULL};
    cr_assert_eq(lt_run(&r, args, NULL, NULL), 0);
    cr_expect_eq(r.status, 0, "stderr: %s", r.err);
    static const char *const names[] = {"a", "b", "c"};
    static const int slots[] = {2, 1, 3};
    expect_placement(r.out, 6, slots, names, 3);
    lt_run_free(&r);
    unlink(path);
}

/* -x reaches ranks on every host with the front's values; MPMD programs keep their ranks. */
Test(hosts, xvars_and_mpmd)
{
    struct lt_run r;
    const char *const env[] = {"HINT_TEST_FROM_FRONT=front value", NULL};
    const char *const args[] = {"--host", "a:2,b:2", LOCAL_AGENT, "-x", "HINT_TEST_FROM_FRONT",
                                "-x", "HINT_TEST_SET=x y", "--tag-output", "-n", "1", "sh", "-c",
                                "echo A $HINT_TEST_FROM_FRONT/$HINT_TEST_SET", ":", "-n", "3", "sh",
                                "-c", "echo B $HINT_RANK $HINT_TEST_HOST $HINT_TEST_FROM_FRONT", NULL};
    cr_assert_eq(lt_run(&r, args, env, NULL), 0);
    cr_expect_eq(r.status, 0, "stderr: %s", r.err);
    cr_expect(strstr(r.out, "[0] A front value/x y\n"), "%s", r.out);
    cr_expect(strstr(r.out, "[1] B 1 a front value\n"), "%s", r.out);
    cr_expect(strstr(r.out, "[2] B 2 b front value\n"), "%s", r.out);
    cr_expect(strstr(r.out, "[3] B 3 b front value\n"), "%s", r.out);
    lt_run_free(&r);
}

/* Ranks and processes announced are gone, and so are the job's shm objects. */
static void expect_clean(const struct lt_run *r)
{
    for (const char *p = r->out; (p = strstr(p, " pid ")); p++) {
        long pid = strtol(p + 5, NULL, 10);
        cr_expect_not(lt_pid_alive((pid_t)pid), "rank pid %ld left behind", pid);
    }
    long g = lt_find_long(r->out, "grandchild", "grandchild");
    if (g > 0)
        cr_expect_not(lt_pid_alive((pid_t)g), "grandchild %ld left behind", g);
    char jobid[32];
    lt_find_word(r->out, " jobid ", "jobid", jobid, sizeof jobid);
    cr_assert_eq(strlen(jobid), 16, "jobid not found in output:\n%s", r->out);
    cr_expect_eq(lt_shm_count(jobid), 0, "shm objects of job %s left in /dev/shm", jobid);
}

static void crash_on_host(const char *hosts, const char *rank, const char *host)
{
    struct lt_run r;
    const char *const args[] = {"--host", hosts, LOCAL_AGENT, lt_rank(), "crash", "9", rank, NULL};
    cr_assert_eq(lt_run(&r, args, NULL, NULL), 0);
    cr_expect_eq(r.status, 137, "status %d, stderr: %s", r.status, r.err);
    char msg[128];
    snprintf(msg, sizeof msg, "started rank %s ", rank);
    long pid = lt_find_long(r.out, msg, "pid");
    snprintf(msg, sizeof msg, "hintrun: rank %s (pid %ld) on host %s killed by signal 9 (Killed)\n",
             rank, pid, host);
    cr_expect(strstr(r.err, msg), "expected '%s' in:\n%s", msg, r.err);
    const char *at = strstr(r.out, "crash at ");
    cr_assert(at, "%s", r.out);
    double dt = r.t_end - strtod(at + 9, NULL);
    cr_expect_lt(dt, END_WITHIN, "job ended %.3f s after the crash", dt);
    expect_clean(&r);
    lt_run_free(&r);
}

Test(hosts, crash_ends_the_job)
{
    crash_on_host("a:1,b:2", "2", "b");
    crash_on_host("a:3,b:1,c:1", "0", "a");
    crash_on_host("a,b,c,d,e", "3", "d");
}

Test(hosts, exit0_without_finalize)
{
    struct lt_run r;
    const char *const args[] = {"--host", "a:2,b:2", LOCAL_AGENT, lt_rank(), "exit", "0", "3", NULL};
    cr_assert_eq(lt_run(&r, args, NULL, NULL), 0);
    cr_expect_eq(r.status, 1, "stderr: %s", r.err);
    cr_expect(strstr(r.err, "on host b exited with status 0 without calling hint_finalize"), "%s", r.err);
    const char *at = strstr(r.out, "exit at ");
    cr_assert(at, "%s", r.out);
    cr_expect_lt(r.t_end - strtod(at + 8, NULL), END_WITHIN);
    expect_clean(&r);
    lt_run_free(&r);
}

/* A rank's non-zero exit is its job's status; a program missing on a host is named there. */
Test(hosts, exit_status_and_missing_program)
{
    struct lt_run r;
    const char *const args[] = {"--host", "a,b:2", LOCAL_AGENT, lt_rank(), "exit", "5", "1", NULL};
    cr_assert_eq(lt_run(&r, args, NULL, NULL), 0);
    cr_expect_eq(r.status, 5, "stderr: %s", r.err);
    cr_expect(strstr(r.err, "on host b exited with status 5"), "%s", r.err);
    lt_run_free(&r);
    const char *const missing[] = {"--host", "a,b", LOCAL_AGENT, "/nonexistent/prog", NULL};
    cr_assert_eq(lt_run(&r, missing, NULL, NULL), 0);
    cr_expect_eq(r.status, 127, "stderr: %s", r.err);
    cr_expect(strstr(r.err, "/nonexistent/prog: no such file"), "%s", r.err);
    cr_expect(strstr(r.err, "the agent on host a (ranks 0 to 0) exited with status 127") ||
              strstr(r.err, "the agent on host b (ranks 1 to 1) exited with status 127"), "%s", r.err);
    lt_run_free(&r);
}

Test(hosts, failing_launch_agent)
{
    struct lt_run r;
    const char *const nf[] = {"--host", "a,b", "--launch-agent", "/nonexistent/launcher",
                              "--store-addr", "127.0.0.1", lt_rank(), "sleep", NULL};
    cr_assert_eq(lt_run(&r, nf, NULL, NULL), 0);
    cr_expect_eq(r.status, 1, "stderr: %s", r.err);
    /* whichever host's launch agent is reaped first is the one named */
    cr_expect(strstr(r.err, "cannot start the agent on host a: '/nonexistent/launcher a ") ||
              strstr(r.err, "cannot start the agent on host b: '/nonexistent/launcher b "), "%s", r.err);
    cr_expect(strstr(r.err, "exited with status 127 (command not found)"), "%s", r.err);
    lt_run_free(&r);
    /* a launch agent that runs and fails without starting the agent */
    const char *const fails[] = {"--host", "a,b", "--launch-agent", "false {host}",
                                 "--store-addr", "127.0.0.1", lt_rank(), "sleep", NULL};
    cr_assert_eq(lt_run(&r, fails, NULL, NULL), 0);
    cr_expect_eq(r.status, 1, "stderr: %s", r.err);
    /* whichever host's launch agent is reaped first is the one named */
    cr_expect((strstr(r.err, "cannot start the agent on host a: 'false a ") ||
               strstr(r.err, "cannot start the agent on host b: 'false b ")) &&
              strstr(r.err, "hintrun --agent' exited with status 1"), "%s", r.err);
    lt_run_free(&r);
}

/* Agents run in the front's directory (when the host has it), so relative paths mean the same;
   ranks read /dev/null, never the front's pipe to their agent. */
Test(hosts, directory_and_stdin)
{
    struct lt_run r;
    char here[4096], want[4200];
    cr_assert(getcwd(here, sizeof here));
    const char *const args[] = {"--host", "a,b", "--launch-agent", "env -C / HINT_TEST_HOST={host}",
                                "--store-addr", "127.0.0.1", "--tag-output", lt_rank(), "env",
                                "PWD", NULL};
    cr_assert_eq(lt_run_input(&r, args, "front's stdin\n"), 0);
    cr_expect_eq(r.status, 0, "stderr: %s", r.err);
    cr_expect_eq(lt_count(r.out, "stdin eof"), 2, "%s", r.out);
    lt_run_free(&r);
    const char *const pwd[] = {"--host", "a,b", "--launch-agent", "env -C / HINT_TEST_HOST={host}",
                               "--store-addr", "127.0.0.1", "--tag-output", "pwd", NULL};
    cr_assert_eq(lt_run(&r, pwd, NULL, NULL), 0);
    cr_expect_eq(r.status, 0, "stderr: %s", r.err);
    snprintf(want, sizeof want, "[1] %s\n", here);
    cr_expect(strstr(r.out, want), "agents did not run in %s:\n%s", here, r.out);
    lt_run_free(&r);
}

/* --timeout across hosts: status 124, every agent ends its ranks and cleans up itself (its
   watcher would say so if the front had cut that short). */
Test(hosts, timeout)
{
    struct lt_run r;
    const char *const args[] = {"--host", "a:2,b:1", LOCAL_AGENT, "--timeout", "1", lt_rank(),
                                "sleep", "leave-things", NULL};
    cr_assert_eq(lt_run(&r, args, NULL, NULL), 0);
    cr_expect_eq(r.status, 124, "stderr: %s", r.err);
    cr_expect(strstr(r.err, "timeout: the job ran longer than 1 seconds"), "%s", r.err);
    cr_expect_not(strstr(r.err, "watcher"), "an agent was killed before it cleaned up:\n%s", r.err);
    cr_expect_lt(r.t_end - r.t_start, 3.0, "took %.2f s", r.t_end - r.t_start);
    expect_clean(&r);
    lt_run_free(&r);
}

/* A launch agent that hangs (ssh waiting for a password it cannot get) ends the job after
   HINT_AGENT_START_TIMEOUT, named, and the ranks another host already started are ended. */
Test(hosts, agent_start_timeout)
{
    char script[] = "/tmp/hint-test-agentXXXXXX";
    int fd = mkstemp(script);
    cr_assert_geq(fd, 0);
    dprintf(fd, "#!/bin/sh\ncase \"$1\" in hang) exec sleep 60;; esac\nshift\nexec \"$@\"\n");
    close(fd);
    chmod(script, 0700);
    char agent[64];
    snprintf(agent, sizeof agent, "%s {host}", script);
    struct lt_run r;
    const char *const env[] = {"HINT_AGENT_START_TIMEOUT=1", NULL};
    const char *const args[] = {"--host", "ok:2,hang", "--launch-agent", agent, "--store-addr",
                                "127.0.0.1", lt_rank(), "sleep", NULL};
    cr_assert_eq(lt_run(&r, args, env, NULL), 0);
    cr_expect_eq(r.status, 1, "stderr: %s", r.err);
    cr_expect(strstr(r.err, "the agent on host hang has not reached hintrun's store within 1 s"), "%s", r.err);
    cr_expect_not(strstr(r.err, "on host ok has not"), "%s", r.err);
    cr_expect_lt(r.t_end - r.t_start, 3.0, "took %.2f s", r.t_end - r.t_start);
    for (const char *p = r.out; (p = strstr(p, " pid ")); p++)
        cr_expect_not(lt_pid_alive((pid_t)strtol(p + 5, NULL, 10)), "a rank was left:\n%s", r.out);
    cr_expect_eq(lt_count(r.out, "ready rank"), 2, "%s", r.out);
    lt_run_free(&r);
    unlink(script);
}

/* A rank whose TCP store cannot be reached fails hint's bootstrap at once, naming the address. */
static void expect_store_unreachable(const char *store, const char *msg)
{
    int p[2];
    cr_assert_eq(pipe(p), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        dup2(p[1], 2);
        setenv("HINT_RANK", "0", 1);
        setenv("HINT_SIZE", "1", 1);
        setenv("HINT_LOCAL_RANK", "0", 1);
        setenv("HINT_LOCAL_SIZE", "1", 1);
        setenv("HINT_NODE_ID", "0", 1);
        setenv("HINT_NNODES", "1", 1);
        setenv("HINT_JOBID", "0123456789abcdef", 1);
        setenv("HINT_TOKEN", "00112233445566778899aabbccddeeff", 1);
        setenv("HINT_OVERSUBSCRIBED", "0", 1);
        setenv("HINT_LAUNCHER_PID", "1", 1);
        setenv("HINT_STORE", store, 1);
        execl(lt_rank(), lt_rank(), "kv", "1", (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    char err[4096] = "";
    size_t n = 0;
    ssize_t k;
    while (n < sizeof err - 1 && (k = read(p[0], err + n, sizeof err - 1 - n)) > 0)
        n += (size_t)k;
    err[n] = '\0';
    close(p[0]);
    int st;
    waitpid(pid, &st, 0);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) != 0, "lt_rank with HINT_STORE=%s succeeded", store);
    cr_expect(strstr(err, msg), "expected '%s' in:\n%s", msg, err);
}

Test(hosts, store_unreachable)
{
    /* port 1 of this machine: nobody listens, refused at once */
    expect_store_unreachable("tcp:127.0.0.1:1",
                             "cannot reach hintrun's store at tcp:127.0.0.1:1: Connection refused");
    expect_store_unreachable("tcp:[::1]:1", "cannot reach hintrun's store at tcp:[::1]:1:");
    expect_store_unreachable("tcp:no-such-host.invalid:1",
                             "cannot reach hintrun's store at tcp:no-such-host.invalid:1: cannot resolve");
}

/* The TCP side of the store refuses what the Unix side refuses: a wrong token, garbage, other
   versions, frames out of order (lt_rank raw, from ranks on two "hosts"). */
Test(hosts, tcp_store_refuses_strangers)
{
    struct lt_run r;
    const char *const args[] = {"--host", "a,b", LOCAL_AGENT, lt_rank(), "raw", NULL};
    cr_assert_eq(lt_run(&r, args, NULL, NULL), 0);
    cr_expect_eq(r.status, 0, "stderr: %s", r.err);
    cr_expect_eq(lt_count(r.out, "raw: wrong token refused: wrong job token"), 2, "%s", r.out);
    cr_expect_eq(lt_count(r.out, "raw ok rank"), 2, "%s\n%s", r.out, r.err);
    lt_run_free(&r);
}
