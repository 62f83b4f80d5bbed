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
void launch_end_job(struct launch_job *job, int status, int sig, double grace)
{
    if (job->exit_code < 0)
        job->exit_code = status;
    if (job->ending)
        return;
    job->ending = 1;
    launch_signal_ranks(job, sig);
    /* agents kill their ranks after their own grace, then clean up: never cut that short */
    job->kill_at = launch_now() + (job->nagents && grace < LAUNCH_AGENT_GRACE ? LAUNCH_AGENT_GRACE : grace);
}

/* ---------------------------------------------------------------- rank exits */

void launch_exit_how(const siginfo_t *si, int *how, int *status)
{
    *how = si->si_code == CLD_EXITED ? BOOT_EXIT_STATUS
           : si->si_code == CLD_DUMPED ? BOOT_EXIT_CORE : BOOT_EXIT_SIGNAL;
    *status = si->si_status;
}

void launch_report_failure(int rank, pid_t pid, int how, int status, int unfinished,
                           const char *host)
{
    char where[300] = "";
    if (host)
        snprintf(where, sizeof where, " on host %s", host);
    if (how == BOOT_EXIT_STATUS && status == 0 && unfinished)
        fprintf(stderr, "hintrun: rank %d (pid %d)%s exited with status 0 without calling "
                "hint_finalize; ending the job\n", rank, (int)pid, where);
    else if (how == BOOT_EXIT_STATUS)
        fprintf(stderr, "hintrun: rank %d (pid %d)%s exited with status %d\n", rank, (int)pid,
                where, status);
    else
        fprintf(stderr, "hintrun: rank %d (pid %d)%s killed by signal %d (%s)%s\n", rank, (int)pid,
                where, status, strsignal(status), how == BOOT_EXIT_CORE ? " (core dumped)" : "");
}

int launch_failure_status(int how, int status)
{
    return how != BOOT_EXIT_STATUS ? 128 + status : status != 0 ? status : LAUNCH_UNFINISHED_STATUS;
}

/* A rank has exited: a failure ends the job (unless it is already ending). Exiting 0 is a
   failure too when the rank called hint_init but not hint_finalize: its peers may be waiting
   for it in a collective, and would hang until --timeout. An agent tells the front instead,
   which knows from its store whether the rank finalized, and prints the failure. */
static void launch_rank_exited(struct launch_job *job, int rank, const siginfo_t *si)
{
    int how, status;
    launch_exit_how(si, &how, &status);
    job->ranks[rank].running = 0;
    job->nrunning--;
    if (job->agent) {
        launch_agent_report_exit(job, rank, how, status);
        if ((how != BOOT_EXIT_STATUS || status != 0) && !job->ending)
            launch_end_job(job, launch_failure_status(how, status), SIGTERM, LAUNCH_KILL_GRACE);
        return;
    }
    int unfinished = store_rank_left_unfinished(job->store, rank);
    store_rank_exited(job->store, rank);
    int failed = how != BOOT_EXIT_STATUS || status != 0 || unfinished;
    if (!failed || job->ending)
        return;
    launch_report_failure(rank, job->ranks[rank].pid, how, status, unfinished, NULL);
    launch_end_job(job, launch_failure_status(how, status), SIGTERM, LAUNCH_KILL_GRACE);
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
        launch_remote_check_exits(job);
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
    if (!job->agent) /* an agent is told by the front, which has said it */
        fprintf(stderr, "hintrun: got signal %d (%s); passing it to the ranks and ending the job\n",
                sig, strsignal(sig));
    if (job->ending) {
        launch_signal_ranks(job, sig);
        return;
    }
    /* an agent's grace is short: the front waits for it, and a job across hosts must end
       within a second too */
    launch_end_job(job, 128 + sig, sig, job->agent ? LAUNCH_KILL_GRACE : LAUNCH_SIGNAL_GRACE);
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
    job->oversubscribed = job->np > launch_count_cpus();
    job->ranks = calloc((size_t)job->np, sizeof *job->ranks);
    if (!job->ranks) {
        fprintf(stderr, "hintrun: out of memory\n");
        return -1;
    }
    for (int r = 0; r < job->np; r++) {
        output_init(&job->ranks[r].out[0], -1, job->rank_base + r, 1);
        output_init(&job->ranks[r].out[1], -1, job->rank_base + r, 2);
    }
    if (launch_raise_fd_limit(job->np))
        return 1;
    int rc = launch_plan_binding(job);
    if (rc != 0)
        return rc;
    if (launch_open_output_files(job) || launch_stdin_open(job))
        return 1;
    if (job->agent) /* the job's ids and store are the front's */
        return launch_setup_signals(job) || launch_watch_start(job) ? 1 : 0;
    if (launch_setup_signals(job) || launch_make_ids(job) || launch_watch_start(job))
        return 1;
    launch_make_store_name(job);
    return store_open(&job->store, job->sock, job->np, job->token) ? 1 : 0;
}

/* ---------------------------------------------------------------- the loop */

struct launch_poll {
    struct pollfd *pfd;
    struct output_stream **streams; /* streams[i] belongs to pfd[first_stream + i] */
    size_t n, nstore, first_stream, first_stdin, nstdin, first_ctl, nctl;
};

static void launch_poll_stream(struct launch_poll *p, struct output_stream *o)
{
    if (o->fd < 0)
        return;
    p->streams[p->n - p->first_stream] = o;
    p->pfd[p->n++] = (struct pollfd){.fd = o->fd, .events = POLLIN};
}

static void launch_fill_poll(struct launch_job *job, struct launch_poll *p)
{
    p->n = 0;
    p->pfd[p->n++] = (struct pollfd){.fd = job->sigfd, .events = POLLIN};
    p->nstore = job->store ? store_fill_pollfds(job->store, p->pfd + p->n) : 0;
    p->n += p->nstore;
    p->first_stream = p->n;
    for (int r = 0; r < job->np; r++)
        for (int k = 0; k < 2; k++)
            launch_poll_stream(p, &job->ranks[r].out[k]);
    for (int a = 0; a < job->nagents; a++)
        for (int k = 0; k < 2; k++)
            launch_poll_stream(p, &job->agents[a].out[k]);
    p->first_stdin = p->n;
    p->nstdin = launch_stdin_fill_poll(job, p->pfd + p->n);
    p->n += p->nstdin;
    p->first_ctl = p->n;
    p->nctl = launch_agent_fill_poll(job, p->pfd + p->n);
    p->n += p->nctl;
}

static int launch_streams_open(const struct launch_job *job)
{
    for (int r = 0; r < job->np; r++)
        if (job->ranks[r].out[0].fd >= 0 || job->ranks[r].out[1].fd >= 0)
            return 1;
    for (int a = 0; a < job->nagents; a++)
        if (job->agents[a].out[0].fd >= 0 || job->agents[a].out[1].fd >= 0)
            return 1;
    return 0;
}

static void launch_close_streams(struct launch_job *job)
{
    for (int r = 0; r < job->np; r++)
        for (int k = 0; k < 2; k++)
            output_close(&job->ranks[r].out[k], launch_output_flags(job->opts));
    for (int a = 0; a < job->nagents; a++)
        for (int k = 0; k < 2; k++)
            output_close(&job->agents[a].out[k], 0);
}

/* Milliseconds until the earliest of the pending deadlines (-1: none). */
static int launch_poll_timeout(const struct launch_job *job, double drain_until)
{
    double t[5] = {job->ending || job->report_until ? 0 : job->deadline, job->kill_at, drain_until,
                   job->ending ? 0 : job->report_until, job->ending ? 0 : job->agents_due}, first = 0;
    for (int i = 0; i < 5; i++)
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
        launch_remote_ask_states(job);
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
    if (!job->store || !store_take_abort(job->store, &a) || job->ending)
        return;
    char where[300] = "";
    for (int k = 0; k < job->opts->nhosts; k++) {
        const struct launch_host *h = &job->opts->hosts[k];
        if (a.rank >= h->first && a.rank < h->first + h->n)
            snprintf(where, sizeof where, " on host %s", h->name);
    }
    fprintf(stderr, "hintrun: rank %d (pid %d)%s aborted the job with code %d%s%s\n", a.rank,
            (int)a.pid, where, a.code, a.msg[0] ? ": " : "", a.msg);
    launch_end_job(job, boot_abort_status(a.code), SIGTERM, LAUNCH_KILL_GRACE);
}

static int launch_loop(struct launch_job *job)
{
    struct launch_poll p = {0};
    size_t nstreams = 2 * (size_t)job->np + 2 * (size_t)job->nagents;
    size_t max = 1 + (job->store ? store_max_pollfds(job->store) : 0) + nstreams +
                 launch_stdin_max_pollfds(job) + 2;
    double drain_until = 0;
    p.pfd = calloc(max, sizeof *p.pfd);
    p.streams = calloc(nstreams + 1, sizeof *p.streams);
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
        if (rc > 0 && job->store)
            store_handle(job->store, p.pfd + 1, p.nstore);
        launch_remote_take_exits(job);
        launch_check_abort(job);
        if (rc > 0)
            launch_stdin_handle(job, p.pfd + p.first_stdin, p.nstdin);
        if (rc > 0)
            launch_agent_handle(job, p.pfd + p.first_ctl, p.nctl);
        for (size_t i = p.first_stream; rc > 0 && i < p.first_stdin; i++) {
            struct output_stream *o = p.streams[i - p.first_stream];
            /* an agent's streams are forwarded as they are: it prefixed its ranks' lines */
            int agent_stream = job->nagents && o >= &job->agents[0].out[0] &&
                               o <= &job->agents[job->nagents - 1].out[1];
            if (p.pfd[i].revents)
                output_pump(o, agent_stream ? 0 : launch_output_flags(job->opts));
        }
        launch_check_deadlines(job);
        launch_remote_check_started(job);
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

int launch_run(struct launch_job *job, const struct launch_opts *o)
{
    int rc;
    job->opts = o;
    if (o->nhosts) {
        /* the front: PROGRAM is looked for on each host, by its agent */
        job->world_np = o->np;
        job->nnodes = o->nhosts;
        if ((rc = launch_check_xvars(o)))
            return rc;
        if (launch_raise_fd_limit(o->np + 2 * o->nhosts) || launch_setup_signals(job) ||
            launch_make_ids(job))
            return 1;
        launch_make_store_name(job);
        if (store_open(&job->store, job->sock, job->world_np, job->token) ||
            (rc = launch_remote_setup(job)) != 0)
            return rc ? rc : 1;
        if (o->timeout > 0)
            job->deadline = launch_now() + o->timeout;
        return launch_loop(job);
    }
    if (!job->agent) {
        job->np = job->world_np = o->np;
        job->nnodes = o->nodes;
    }
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
    if (argc >= 2 && strcmp(argv[1], "--agent") == 0)
        return launch_agent_main(argc, argv);
    struct launch_opts opts;
    struct launch_job job = {.sigfd = -1, .exit_code = -1, .watch_fd = -1, .ctl_in = -1,
                             .ctl_fd = -1};
    int rc = launch_parse_options(argc, argv, &opts);
    if (rc < 0) {
        rc = launch_run(&job, &opts);
        if (job.opts)
            launch_cleanup(&job);
    }
    launch_free_hosts(&opts);
    free(opts.pass);
    free(opts.xvars);
    free(opts.apps);
    return rc;
}
