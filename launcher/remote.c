/*
 * launcher/remote.c — the front of a job across hosts (--host, --hostfile).
 *
 * The front runs no rank itself. Its store also listens on TCP, and for each host it starts
 * `<launch agent> <host> <this hintrun> --agent` (ssh by default) with a pipe as the agent's
 * stdin. Everything the agent needs, the job's token included, goes down that pipe, never on a
 * command line (where `ps` on any host would show it): one header line, then the arguments of
 * the ranks' command line, each ending in a NUL (no quoting for a remote shell to undo), then
 * the front's working directory. The
 * pipe then stays open: EOF on it, because the front ended the job or died (ssh passes EOF on),
 * tells the agent to end its ranks and clean up its host.
 *
 * An agent connects to the store (AGENT frame) before it does anything else, so an agent that
 * exits before connecting is a launch agent that failed (ssh: 255; a command not found: 127),
 * and is reported as such. Each rank's exit comes as an EXITED frame on that connection: the
 * front decides as it does for its own ranks (a rank that joined the store and exits 0 without
 * BYE has failed too), names the host, and ends the job: SIGTERM to every agent's process group
 * and EOF on its stdin. Agents' stdout and stderr are forwarded as they come: the agents write
 * whole lines already prefixed as the options asked.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launcher/launch.h"
#include "runtime/boot_proto.h"


static char remote_self[PATH_MAX]; /* this hintrun, which every host must have at this path */

/* ---------------------------------------------------------------- the store's address */

static int remote_is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
    if (sa->sa_family == AF_INET6) {
        static const struct in6_addr lo = IN6ADDR_LOOPBACK_INIT;
        return memcmp(&((const struct sockaddr_in6 *)sa)->sin6_addr, &lo, sizeof lo) == 0;
    }
    return 0;
}

/* The address of this machine on the route to host: a UDP socket connect()ed to it sends
   nothing, but the kernel picks the source address it would use. 0, or a getaddrinfo or errno
   message in why. */
static int remote_route_to(const char *host, char *ip, size_t cap, int *loopback, char *why,
                           size_t wcap)
{
    struct addrinfo hints = {.ai_socktype = SOCK_DGRAM}, *ai = NULL;
    int rc = getaddrinfo(host, "9", &hints, &ai);
    if (rc != 0) {
        snprintf(why, wcap, "%s", gai_strerror(rc));
        return -1;
    }
    struct sockaddr_storage me;
    socklen_t len = sizeof me;
    int fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    rc = fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen) != 0 ||
         getsockname(fd, (struct sockaddr *)&me, &len) != 0;
    if (rc)
        snprintf(why, wcap, "%s", strerror(errno));
    if (fd >= 0)
        close(fd);
    freeaddrinfo(ai);
    if (rc || getnameinfo((struct sockaddr *)&me, len, ip, (socklen_t)cap, NULL, 0, NI_NUMERICHOST)) {
        if (!rc)
            snprintf(why, wcap, "no numeric address");
        return -1;
    }
    *loopback = remote_is_loopback((struct sockaddr *)&me);
    return 0;
}

/* --store-addr, HINT_STORE_ADDR, else this machine's address on the route to the first host
   that is not this machine (loopback only when every host is this machine). */
static int remote_store_ip(const struct launch_opts *o, char *ip, size_t cap)
{
    const char *given = o->store_addr ? o->store_addr : getenv("HINT_STORE_ADDR");
    if (given && *given) {
        snprintf(ip, cap, "%s", given);
        return 0;
    }
    char lo[NI_MAXHOST] = "", why[256];
    for (int k = 0; k < o->nhosts; k++) {
        int loopback = 0;
        if (remote_route_to(o->hosts[k].name, ip, cap, &loopback, why, sizeof why) != 0) {
            fprintf(stderr, "hintrun: cannot tell which address of this machine host %s reaches "
                    "(%s); give it with --store-addr ADDR or HINT_STORE_ADDR\n", o->hosts[k].name,
                    why);
            return -1;
        }
        if (!loopback)
            return 0;
        if (!lo[0])
            snprintf(lo, sizeof lo, "%s", ip);
    }
    snprintf(ip, cap, "%s", lo);
    return 0;
}

/* ---------------------------------------------------------------- what an agent runs */

/* The launch agent's words for host k: CMD split at blanks, {host} replaced in each word; the
   host appended when no word has {host}; then this hintrun and --agent. */
static char **remote_agent_argv(const struct launch_job *job, int k, const char *self)
{
    const char *cmd = job->opts->launch_agent ? job->opts->launch_agent : "ssh";
    const char *host = job->opts->hosts[k].name;
    size_t max = strlen(cmd) / 2 + 5, n = 0;
    char **argv = calloc(max, sizeof *argv);
    int replaced = 0;
    for (const char *p = cmd; argv && *p;) {
        p += strspn(p, " \t");
        size_t len = strcspn(p, " \t");
        if (!len)
            break;
        char *w = malloc(len * (strlen(host) + 1) + 1), *q = w;
        for (size_t i = 0; w && i < len;) {
            if (len - i >= 6 && memcmp(p + i, "{host}", 6) == 0) {
                q = stpcpy(q, host);
                i += 6;
                replaced = 1;
            } else {
                *q++ = p[i++];
            }
        }
        if (w)
            *q = '\0';
        argv[n++] = w;
        p += len;
    }
    if (argv) {
        if (!replaced)
            argv[n++] = strdup(host);
        argv[n++] = strdup(self);
        argv[n++] = strdup("--agent");
        for (size_t i = 0; i < n; i++)
            if (!argv[i]) {
                for (size_t j = 0; j < n; j++)
                    free(argv[j]);
                free(argv);
                return NULL;
            }
    }
    return argv;
}

static void remote_free_argv(char **argv)
{
    for (size_t i = 0; argv && argv[i]; i++)
        free(argv[i]);
    free(argv);
}

static void remote_add_arg(struct boot_buf *b, const char *arg, int *argc)
{
    boot_buf_add(b, arg, strlen(arg) + 1);
    (*argc)++;
}

/* The ranks' command line as an agent parses it: the options that apply on every host, -x with
   this hintrun's values, -n for the first program, then the programs. */
static int remote_rank_args(const struct launch_job *job, struct boot_buf *b)
{
    const struct launch_opts *o = job->opts;
    int argc = 0;
    char num[16];
    remote_add_arg(b, "hintrun", &argc);
    for (int i = 1; i < o->optend; i++)
        if (o->pass[i] && strcmp(o->argv[i], "--") != 0)
            remote_add_arg(b, o->argv[i], &argc);
    for (int i = 0; i < o->nx; i++) {
        const char *x = o->xvars[i], *v = strchr(x, '=') ? NULL : getenv(x);
        if (!strchr(x, '=') && !v)
            continue; /* unset here: launch_check_xvars warned */
        remote_add_arg(b, "-x", &argc);
        if (v) {
            boot_buf_add(b, x, strlen(x));
            boot_buf_add(b, "=", 1);
        }
        remote_add_arg(b, v ? v : x, &argc);
    }
    for (int k = 0; k < o->napps; k++) {
        if (k > 0)
            remote_add_arg(b, ":", &argc);
        snprintf(num, sizeof num, "%d", o->apps[k].np);
        remote_add_arg(b, "-n", &argc);
        remote_add_arg(b, num, &argc);
        if (k == 0)
            remote_add_arg(b, "--", &argc);
        for (char **a = o->apps[k].argv; *a; a++)
            remote_add_arg(b, *a, &argc);
    }
    return argc;
}

/* What host k's agent reads on its stdin (agent.c parses it). */
static int remote_message(const struct launch_job *job, int k, struct boot_buf *msg)
{
    const struct launch_host *h = &job->opts->hosts[k];
    struct boot_buf args = {0};
    char head[512];
    int argc = remote_rank_args(job, &args);
    int len = snprintf(head, sizeof head, "hint-agent 1 %s %s %s %d %d %d %d %d %d %s\n",
                       job->token, job->jobid, job->store_addr, h->first, h->n, job->world_np, k,
                       job->opts->nhosts, argc, h->name);
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        cwd[0] = '\0'; /* then the agent stays where the launch agent started it */
    boot_buf_add(msg, head, (size_t)len);
    boot_buf_add(msg, args.data, args.len);
    boot_buf_add(msg, cwd, strlen(cwd) + 1);
    int failed = args.failed || msg->failed || len >= (int)sizeof head;
    boot_buf_free(&args);
    return failed ? -1 : 0;
}

/* ---------------------------------------------------------------- starting agents */

static void remote_join_argv(char **argv, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    for (size_t i = 0; argv[i] && n < cap; i++)
        n += (size_t)snprintf(out + n, cap - n, "%s%s", i ? " " : "", argv[i]);
}

static int remote_write_all(int fd, const unsigned char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static void remote_child(char **argv, int in, int outw, int errw)
{
    setpgid(0, 0); /* one group per host: the launch agent and what it runs */
    /* a front killed by SIGKILL takes ssh along, which closes the agent's stdin on its host */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    if (dup2(in, 0) < 0 || dup2(outw, 1) < 0 || dup2(errw, 2) < 0)
        _exit(126);
    execvp(argv[0], argv);
    int e = errno;
    dprintf(2, "hintrun: cannot run the launch agent %s: %s\n", argv[0], strerror(e));
    _exit(e == ENOENT ? 127 : 126);
}

static int remote_spawn_agent(struct launch_job *job, int k, const char *self)
{
    struct launch_agent *a = &job->agents[k];
    int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1}, st = -1;
    struct boot_buf msg = {0};
    char **argv = remote_agent_argv(job, k, self);
    if (!argv || remote_message(job, k, &msg) != 0) {
        fprintf(stderr, "hintrun: out of memory\n");
        goto out;
    }
    if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) {
        fprintf(stderr, "hintrun: cannot start the agent of host %s: pipe: %s\n",
                job->opts->hosts[k].name, strerror(errno));
        goto out;
    }
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "hintrun: cannot start the agent of host %s: fork: %s\n",
                job->opts->hosts[k].name, strerror(errno));
        goto out;
    }
    if (pid == 0)
        remote_child(argv, in[0], out[1], err[1]);
    setpgid(pid, pid);
    a->pid = pid;
    a->running = 1;
    job->nrunning++;
    /* a launch agent that fails before reading leaves the pipe without a reader: EPIPE, and
       its exit is reported once it is reaped */
    (void)remote_write_all(in[1], msg.data, msg.len);
    a->in_fd = in[1];
    in[1] = -1;
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    fcntl(err[0], F_SETFL, O_NONBLOCK);
    a->out[0].fd = out[0];
    a->out[1].fd = err[0];
    out[0] = err[0] = -1;
    st = 0;
out:
    for (int i = 0; i < 2; i++) {
        int *fds[3] = {in, out, err};
        for (int j = 0; j < 3; j++)
            if (fds[j][i] >= 0)
                close(fds[j][i]);
    }
    boot_buf_free(&msg);
    remote_free_argv(argv);
    return st;
}

/* Seconds an agent has to reach the store: HINT_AGENT_START_TIMEOUT, default 60 (ssh asking for
   a password it cannot get, or a host that drops packets, would otherwise hang the job). */
static double remote_start_timeout(void)
{
    const char *s = getenv("HINT_AGENT_START_TIMEOUT");
    char *end;
    double v = s && *s ? strtod(s, &end) : 0;
    if (s && *s && (*end || !(v >= 1 && v <= 1e6))) {
        fprintf(stderr, "hintrun: HINT_AGENT_START_TIMEOUT=%s is not a number of seconds from 1 to "
                "1000000; using 60\n", s);
        v = 0;
    }
    return v > 0 ? v : 60;
}

int launch_remote_setup(struct launch_job *job)
{
    const struct launch_opts *o = job->opts;
    char ip[NI_MAXHOST], *self = remote_self;
    ssize_t n = readlink("/proc/self/exe", self, sizeof remote_self - 1);
    if (n <= 0) {
        fprintf(stderr, "hintrun: cannot read /proc/self/exe: %s\n", strerror(errno));
        return 1;
    }
    self[n] = '\0';
    job->agents = calloc((size_t)o->nhosts, sizeof *job->agents);
    if (!job->agents) {
        fprintf(stderr, "hintrun: out of memory\n");
        return 1;
    }
    job->nagents = o->nhosts;
    for (int k = 0; k < o->nhosts; k++) {
        job->agents[k].in_fd = -1;
        output_init(&job->agents[k].out[0], -1, -1, 1);
        output_init(&job->agents[k].out[1], -1, -1, 2);
    }
    if (remote_store_ip(o, ip, sizeof ip) != 0 ||
        store_listen_tcp(job->store, ip, o->nhosts, job->store_addr, sizeof job->store_addr) != 0)
        return 1;
    job->agents_due = launch_now() + remote_start_timeout();
    for (int k = 0; k < o->nhosts; k++)
        if (remote_spawn_agent(job, k, self) != 0) {
            launch_end_job(job, 1, SIGTERM, LAUNCH_AGENT_GRACE);
            break;
        }
    return 0;
}

/* ---------------------------------------------------------------- agents' and ranks' exits */

static void remote_agent_failed_to_start(struct launch_job *job, int k, int how, int status)
{
    char cmd[1024];
    char **argv = remote_agent_argv(job, k, remote_self);
    if (argv)
        remote_join_argv(argv, cmd, sizeof cmd);
    else
        snprintf(cmd, sizeof cmd, "%s", job->opts->launch_agent ? job->opts->launch_agent : "ssh");
    remote_free_argv(argv);
    const char *hint = how != BOOT_EXIT_STATUS ? ""
                       : status == 127 ? " (command not found)"
                       : status == 255 ? " (ssh's status when it cannot reach or log in to the host)"
                       : status == 0   ? " before the agent reached hintrun's store"
                                       : "";
    if (how == BOOT_EXIT_STATUS)
        fprintf(stderr, "hintrun: cannot start the agent on host %s: '%s' exited with status %d%s\n",
                job->opts->hosts[k].name, cmd, status, hint);
    else
        fprintf(stderr, "hintrun: cannot start the agent on host %s: '%s' was killed by signal %d (%s)\n",
                job->opts->hosts[k].name, cmd, status, strsignal(status));
}

static void remote_agent_exited(struct launch_job *job, int k, const siginfo_t *si)
{
    struct launch_agent *a = &job->agents[k];
    const struct launch_host *h = &job->opts->hosts[k];
    int how, status;
    launch_exit_how(si, &how, &status);
    a->running = 0;
    job->nrunning--;
    if (job->ending)
        return;
    if (!store_agent_joined(job->store, k)) {
        remote_agent_failed_to_start(job, k, how, status);
        launch_end_job(job, 1, SIGTERM, LAUNCH_AGENT_GRACE);
        return;
    }
    if (how == BOOT_EXIT_STATUS && status == 0)
        return; /* its ranks' exits came as EXITED, each judged there */
    if (how == BOOT_EXIT_STATUS)
        fprintf(stderr, "hintrun: the agent on host %s (ranks %d to %d) exited with status %d\n",
                h->name, h->first, h->first + h->n - 1, status);
    else
        fprintf(stderr, "hintrun: the agent on host %s (ranks %d to %d) was killed by signal %d (%s)\n",
                h->name, h->first, h->first + h->n - 1, status, strsignal(status));
    launch_end_job(job, launch_failure_status(how, status), SIGTERM, LAUNCH_AGENT_GRACE);
}

void launch_remote_check_exits(struct launch_job *job)
{
    for (int k = 0; k < job->nagents; k++) {
        struct launch_agent *a = &job->agents[k];
        if (!a->running)
            continue;
        siginfo_t si = {0};
        /* WNOWAIT: a zombie keeps the process group id from being reused until cleanup */
        if (waitid(P_PID, (id_t)a->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid != 0)
            remote_agent_exited(job, k, &si);
    }
}

void launch_remote_take_exits(struct launch_job *job)
{
    struct store_exit e;
    while (job->nagents && store_take_exit(job->store, &e)) {
        const struct launch_host *h = &job->opts->hosts[e.node];
        if (e.rank < h->first || e.rank >= h->first + h->n) {
            fprintf(stderr, "hintrun: the agent on host %s reported rank %d, which is not one of "
                    "its ranks (%d to %d); ignored\n", h->name, e.rank, h->first, h->first + h->n - 1);
            continue;
        }
        int unfinished = store_rank_left_unfinished(job->store, e.rank);
        store_rank_exited(job->store, e.rank);
        int failed = e.how != BOOT_EXIT_STATUS || e.status != 0 || unfinished;
        if (!failed || job->ending)
            continue;
        launch_report_failure(e.rank, e.pid, e.how, e.status, unfinished, h->name);
        launch_end_job(job, launch_failure_status(e.how, e.status), SIGTERM, LAUNCH_AGENT_GRACE);
    }
}

void launch_remote_signal(struct launch_job *job, int sig)
{
    for (int k = 0; k < job->nagents; k++) {
        struct launch_agent *a = &job->agents[k];
        /* one that has exited is left alone until cleanup: what it wrapped (a shell that forked
           the agent) may still be cleaning its host */
        if (a->pid <= 0 || !a->running)
            continue;
        kill(-a->pid, sig);
        /* EOF ends the agent also where no signal reaches it (ssh) */
        if (sig != SIGSTOP && sig != SIGCONT && a->in_fd >= 0) {
            close(a->in_fd);
            a->in_fd = -1;
        }
    }
}

void launch_remote_check_started(struct launch_job *job)
{
    if (job->agents_due <= 0 || job->ending)
        return;
    int waiting = 0;
    for (int k = 0; k < job->nagents; k++)
        waiting += !store_agent_joined(job->store, k);
    if (!waiting) {
        job->agents_due = 0;
        return;
    }
    if (launch_now() < job->agents_due)
        return;
    for (int k = 0; k < job->nagents; k++) {
        if (store_agent_joined(job->store, k) || !job->agents[k].running)
            continue;
        char cmd[1024] = "?";
        char **argv = remote_agent_argv(job, k, remote_self);
        if (argv)
            remote_join_argv(argv, cmd, sizeof cmd);
        remote_free_argv(argv);
        fprintf(stderr, "hintrun: the agent on host %s has not reached hintrun's store within %g s "
                "('%s' still runs); ending the job (HINT_AGENT_START_TIMEOUT sets the limit)\n",
                job->opts->hosts[k].name, remote_start_timeout(), cmd);
    }
    launch_end_job(job, 1, SIGTERM, LAUNCH_AGENT_GRACE);
}

void launch_remote_ask_states(struct launch_job *job)
{
    for (int k = 0; k < job->nagents; k++)
        if (job->agents[k].in_fd >= 0 && write(job->agents[k].in_fd, "s", 1) != 1) {
            /* the agent is gone or stuck: its ranks cannot answer; the job ends anyway */
        }
}

void launch_remote_cleanup(struct launch_job *job)
{
    for (int k = 0; k < job->nagents; k++) {
        struct launch_agent *a = &job->agents[k];
        for (int i = 0; i < 2; i++)
            output_close(&a->out[i], 0);
        if (a->in_fd >= 0)
            close(a->in_fd);
        a->in_fd = -1;
        if (a->pid > 0) {
            kill(-a->pid, SIGKILL);
            while (waitpid(a->pid, NULL, 0) < 0 && errno == EINTR)
                ;
        }
        a->pid = 0;
    }
    free(job->agents);
    job->agents = NULL;
    job->nagents = 0;
}
