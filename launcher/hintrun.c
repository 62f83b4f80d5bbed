/*
 * launcher/hintrun.c — hintrun: start N ranks, serve their bootstrap store, forward their
 * output, and end the whole job as soon as one rank fails (see docs/LAUNCHER.md).
 *
 * One thread, one poll loop over: a signalfd (SIGCHLD, SIGTSTP/SIGCONT, and the signals that
 * end the job), the store's sockets, and every rank's stdout/stderr pipe. Everything that can
 * end the job — a rank failing, an ABORT, the timeout, a signal — goes through launch_end_job,
 * and the first one decides the exit status. main calls launch_cleanup on every path once anything was created.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launcher/launch.h"
#include "runtime/boot_proto.h"

/* After a forwarded SIGINT/SIGTERM the ranks get longer to clean up than after a failure. */
#define LAUNCH_SIGNAL_GRACE 2.0
/* Once every rank has exited, how long output still held open by stray grandchildren is read. */
#define LAUNCH_DRAIN_GRACE 1.0
/* When --timeout expires, how long the ranks have at most to print their state before the job
   ends (it ends as soon as every rank asked has answered, normally within milliseconds). */
#define LAUNCH_REPORT_MAX 0.5
/* Exit status of a job whose rank exited 0 without hint_finalize. */
#define LAUNCH_UNFINISHED_STATUS 1

static const int launch_forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

/* Stops the job: sig to every rank's process group now, SIGKILL after grace seconds. The first
   caller's status is the job's exit status. */
static void launch_end_job(struct launch_job *job, int status, int sig, double grace)
{
    if (job->exit_code < 0)
        job->exit_code = status;
    if (job->ending)
        return;
    job->ending = 1;
    launch_signal_ranks(job, sig);
    job->kill_at = launch_now() + grace;
}

/* ---------------------------------------------------------------- rank exits */

static void launch_report_exit(const struct launch_job *job, int rank, const siginfo_t *si,
                               int unfinished)
{
    pid_t pid = job->ranks[rank].pid;
    if (si->si_code == CLD_EXITED && si->si_status == 0 && unfinished)
        fprintf(stderr, "hintrun: rank %d (pid %d) exited with status 0 without calling "
                "hint_finalize; ending the job\n", rank, (int)pid);
    else if (si->si_code == CLD_EXITED)
        fprintf(stderr, "hintrun: rank %d (pid %d) exited with status %d\n", rank, (int)pid,
                si->si_status);
    else
        fprintf(stderr, "hintrun: rank %d (pid %d) killed by signal %d (%s)%s\n", rank, (int)pid,
                si->si_status, strsignal(si->si_status),
                si->si_code == CLD_DUMPED ? " (core dumped)" : "");
}

/* A rank has exited: a failure ends the job (unless it is already ending). Exiting 0 is a
   failure too when the rank called hint_init but not hint_finalize: its peers may be waiting
   for it in a collective, and would hang until --timeout. */
static void launch_rank_exited(struct launch_job *job, int rank, const siginfo_t *si)
{
    job->ranks[rank].running = 0;
    job->nrunning--;
    int unfinished = store_rank_left_unfinished(job->store, rank);
    store_rank_exited(job->store, rank);
    int failed = si->si_code != CLD_EXITED || si->si_status != 0 || unfinished;
    if (!failed || job->ending)
        return;
    launch_report_exit(job, rank, si, unfinished);
    int status = si->si_code != CLD_EXITED ? 128 + si->si_status
                 : si->si_status != 0     ? si->si_status
                                          : LAUNCH_UNFINISHED_STATUS;
    launch_end_job(job, status, SIGTERM, LAUNCH_KILL_GRACE);
}

/* Looks for ranks that exited. WNOWAIT leaves them zombies until launch_cleanup reaps them (see
   cleanup.c for why). */
static void launch_check_exits(struct launch_job *job)
{
    for (int r = 0; r < job->np; r++) {
        if (!job->ranks[r].running)
            continue;
        siginfo_t si = {0};
        if (waitid(P_PID, (id_t)job->ranks[r].pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
            si.si_pid != 0)
            launch_rank_exited(job, r, &si);
    }
}

/* ---------------------------------------------------------------- signals */

static void launch_on_signal(struct launch_job *job, int sig)
{
    if (sig == SIGCHLD) {
        launch_check_exits(job);
        return;
    }
    if (sig == SIGTSTP) {
        /* Ctrl-Z reaches hintrun's process group only: stop the ranks, then ourselves */
        launch_signal_ranks(job, SIGSTOP);
        raise(SIGSTOP);
        return;
    }
    if (sig == SIGCONT) {
        launch_signal_ranks(job, SIGCONT); /* fg / bg */
        return;
    }
    if (job->first_sig_forwarded) {
        /* a second Ctrl-C: the user does not want to wait */
        launch_signal_ranks(job, SIGKILL);
        return;
    }
    job->first_sig_forwarded = 1;
    fprintf(stderr, "hintrun: got signal %d (%s); passing it to the ranks and ending the job\n",
            sig, strsignal(sig));
    if (job->ending) {
        launch_signal_ranks(job, sig);
        return;
    }
    launch_end_job(job, 128 + sig, sig, LAUNCH_SIGNAL_GRACE);
}

static void launch_read_signals(struct launch_job *job)
{
    struct signalfd_siginfo si[16];
    ssize_t n;
    while ((n = read(job->sigfd, si, sizeof si)) > 0)
        for (size_t i = 0; i < (size_t)n / sizeof si[0]; i++)
            launch_on_signal(job, (int)si[i].ssi_signo);
}

/* Signals arrive through a signalfd, so the loop handles them like any other event and no
   handler runs between fork and exec. Blocked before anything is created: a Ctrl-C during
   set-up still goes through cleanup. */
static int launch_setup_signals(struct launch_job *job)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGTSTP);
    sigaddset(&set, SIGCONT);
    for (size_t i = 0; i < sizeof launch_forwarded / sizeof launch_forwarded[0]; i++)
        sigaddset(&set, launch_forwarded[i]);
    sigprocmask(SIG_BLOCK, &set, NULL);
    /* an ignored SIGCHLD (inherited from our parent) would reap ranks behind our back */
    signal(SIGCHLD, SIG_DFL);
    /* writes to a store connection or output pipe whose reader left must not kill hintrun */
    signal(SIGPIPE, SIG_IGN);
    job->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (job->sigfd < 0) {
        fprintf(stderr, "hintrun: signalfd: %s\n", strerror(errno));
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- set-up */

static int launch_count_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return 1;
    int n = CPU_COUNT(&set);
    return n > 0 ? n : 1;
}

/* Each rank costs hintrun two pipes and a store connection: raise the soft limit as far as
   allowed, and refuse a job that cannot fit rather than let it stall half-connected. */
static int launch_raise_fd_limit(int np)
{
    struct rlimit rl;
    rlim_t need = 3 * (rlim_t)np + 32;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 0;
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
        fprintf(stderr, "hintrun: %d ranks need about %llu file descriptors in hintrun, but the "
                "limit is %llu; raise it (ulimit -n) or start fewer ranks\n", np,
                (unsigned long long)need, (unsigned long long)rl.rlim_cur);
        return -1;
    }
    return 0;
}

static int launch_setup(struct launch_job *job)
{
    job->np = job->opts->np;
    job->oversubscribed = job->np > launch_count_cpus();
    job->ranks = calloc((size_t)job->np, sizeof *job->ranks);
    if (!job->ranks) {
        fprintf(stderr, "hintrun: out of memory\n");
        return -1;
    }
    for (int r = 0; r < job->np; r++) {
        output_init(&job->ranks[r].out[0], -1, r, 1);
        output_init(&job->ranks[r].out[1], -1, r, 2);
    }
    if (launch_raise_fd_limit(job->np))
        return 1;
    int rc = launch_plan_binding(job);
    if (rc != 0)
        return rc;
    if (launch_open_output_files(job) || launch_stdin_open(job))
        return 1;
    if (launch_setup_signals(job) || launch_make_ids(job) || launch_watch_start(job))
        return 1;
    launch_make_store_name(job);
    return store_open(&job->store, job->sock, job->np, job->token) ? 1 : 0;
}

/* ---------------------------------------------------------------- the loop */

struct launch_poll {
    struct pollfd *pfd;
    struct output_stream **streams; /* streams[i] belongs to pfd[first_stream + i] */
    size_t n, nstore, first_stream, first_stdin, nstdin;
};

static void launch_fill_poll(struct launch_job *job, struct launch_poll *p)
{
    p->n = 0;
    p->pfd[p->n++] = (struct pollfd){.fd = job->sigfd, .events = POLLIN};
    p->nstore = store_fill_pollfds(job->store, p->pfd + p->n);
    p->n += p->nstore;
    p->first_stream = p->n;
    for (int r = 0; r < job->np; r++) {
        for (int k = 0; k < 2; k++) {
            struct output_stream *o = &job->ranks[r].out[k];
            if (o->fd < 0)
                continue;
            p->streams[p->n - p->first_stream] = o;
            p->pfd[p->n++] = (struct pollfd){.fd = o->fd, .events = POLLIN};
        }
    }
    p->first_stdin = p->n;
    p->nstdin = launch_stdin_fill_poll(job, p->pfd + p->n);
    p->n += p->nstdin;
}

static int launch_streams_open(const struct launch_job *job)
{
    for (int r = 0; r < job->np; r++)
        if (job->ranks[r].out[0].fd >= 0 || job->ranks[r].out[1].fd >= 0)
            return 1;
    return 0;
}

static void launch_close_streams(struct launch_job *job)
{
    for (int r = 0; r < job->np; r++)
        for (int k = 0; k < 2; k++)
            output_close(&job->ranks[r].out[k], launch_output_flags(job->opts));
}

/* Milliseconds until the earliest of the pending deadlines (-1: none). */
static int launch_poll_timeout(const struct launch_job *job, double drain_until)
{
    double t[4] = {job->ending || job->report_until ? 0 : job->deadline, job->kill_at, drain_until,
                   job->ending ? 0 : job->report_until}, first = 0;
    for (int i = 0; i < 4; i++)
        if (t[i] > 0 && (first == 0 || t[i] < first))
            first = t[i];
    if (first == 0)
        return -1;
    double ms = (first - launch_now()) * 1e3;
    /* capped: a --timeout of days must not overflow poll's int */
    return ms <= 0 ? 0 : ms > 60000 ? 60000 : (int)ms + 1;
}

static void launch_check_deadlines(struct launch_job *job)
{
    double now = launch_now();
    if (job->deadline > 0 && !job->ending && !job->report_until && now >= job->deadline) {
        /* first each rank's state, while the ranks still run (report.c) */
        launch_ask_states(job);
        job->report_until = now + LAUNCH_REPORT_MAX;
    }
    if (job->report_until > 0 && !job->ending &&
        (now >= job->report_until || launch_states_answered(job))) {
        fprintf(stderr, "hintrun: timeout: the job ran longer than %g seconds; ending it\n",
                job->opts->timeout);
        launch_end_job(job, 124, SIGTERM, LAUNCH_KILL_GRACE);
    }
    if (job->kill_at > 0 && now >= job->kill_at) {
        launch_signal_ranks(job, SIGKILL);
        job->kill_at = 0;
    }
}

static void launch_check_abort(struct launch_job *job)
{
    struct store_abort a;
    if (!store_take_abort(job->store, &a) || job->ending)
        return;
    fprintf(stderr, "hintrun: rank %d (pid %d) aborted the job with code %d%s%s\n", a.rank,
            (int)a.pid, a.code, a.msg[0] ? ": " : "", a.msg);
    launch_end_job(job, boot_abort_status(a.code), SIGTERM, LAUNCH_KILL_GRACE);
}

static int launch_loop(struct launch_job *job)
{
    struct launch_poll p = {0};
    size_t max = 1 + store_max_pollfds(job->store) + 2 * (size_t)job->np +
                 launch_stdin_max_pollfds(job);
    double drain_until = 0;
    p.pfd = calloc(max, sizeof *p.pfd);
    p.streams = calloc(2 * (size_t)job->np + 1, sizeof *p.streams);
    if (!p.pfd || !p.streams) {
        fprintf(stderr, "hintrun: out of memory\n");
        launch_end_job(job, 1, SIGKILL, 0);
    }
    while (p.pfd && p.streams && (job->nrunning > 0 || launch_streams_open(job))) {
        if (job->nrunning == 0 && drain_until == 0) {
            /* every rank is gone: stop what they left behind, then read what they wrote */
            launch_signal_ranks(job, SIGKILL);
            drain_until = launch_now() + LAUNCH_DRAIN_GRACE;
        }
        launch_fill_poll(job, &p);
        int rc = poll(p.pfd, p.n, launch_poll_timeout(job, drain_until));
        if (rc < 0 && errno != EINTR) {
            fprintf(stderr, "hintrun: poll: %s\n", strerror(errno));
            launch_end_job(job, 1, SIGKILL, 0);
            break;
        }
        if (rc > 0 && p.pfd[0].revents)
            launch_read_signals(job);
        if (rc > 0)
            store_handle(job->store, p.pfd + 1, p.nstore);
        launch_check_abort(job);
        if (rc > 0)
            launch_stdin_handle(job, p.pfd + p.first_stdin, p.nstdin);
        for (size_t i = p.first_stream; rc > 0 && i < p.first_stdin; i++)
            if (p.pfd[i].revents)
                output_pump(p.streams[i - p.first_stream], launch_output_flags(job->opts));
        launch_check_deadlines(job);
        if (drain_until > 0 && launch_now() >= drain_until)
            launch_close_streams(job);
    }
    free(p.pfd);
    free(p.streams);
    return job->exit_code < 0 ? 0 : job->exit_code;
}

/* Every PROGRAM of the command line, checked before anything starts. */
static int launch_find_programs(struct launch_job *job, const struct launch_opts *o)
{
    job->progs = calloc((size_t)o->napps, sizeof *job->progs);
    if (!job->progs) {
        fprintf(stderr, "hintrun: out of memory\n");
        return 1;
    }
    for (int k = 0; k < o->napps; k++) {
        int rc = launch_find_program(o->apps[k].argv[0], job->progs[k], sizeof job->progs[k]);
        if (rc)
            return rc;
    }
    return 0;
}

static int launch_run(struct launch_job *job, const struct launch_opts *o)
{
    int rc;
    job->opts = o;
    if ((rc = launch_find_programs(job, o)) || (rc = launch_check_xvars(o)) ||
        (o->shared_heap && (rc = launch_find_libhint(job))))
        return rc;
    if ((rc = launch_setup(job)) != 0)
        return rc;
    if (o->timeout > 0)
        job->deadline = launch_now() + o->timeout;
    for (int r = 0; r < job->np; r++) {
        if (launch_spawn_rank(job, r) != 0) {
            launch_end_job(job, 1, SIGTERM, LAUNCH_KILL_GRACE);
            break;
        }
    }
    launch_report_bindings(job);
    return launch_loop(job);
}

int main(int argc, char **argv)
{
    struct launch_opts opts;
    struct launch_job job = {.sigfd = -1, .exit_code = -1, .watch_fd = -1};
    int rc = launch_parse_options(argc, argv, &opts);
    if (rc < 0) {
        rc = launch_run(&job, &opts);
        if (job.opts)
            launch_cleanup(&job);
    }
    free(opts.xvars);
    free(opts.apps);
    return rc;
}
