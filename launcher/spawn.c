/* launcher/spawn.c — finding PROGRAM, the ranks' environment, and starting ranks. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launcher/launch.h"

extern char **environ;

/* The variables hintrun owns in every rank (runtime/boot.h); -x cannot override them. */
static const char *const launch_reserved[] = {
    "HINT_RANK", "HINT_SIZE", "HINT_LOCAL_RANK", "HINT_LOCAL_SIZE", "HINT_NODE_ID",
    "HINT_NNODES", "HINT_JOBID", "HINT_STORE", "HINT_TOKEN", "HINT_OVERSUBSCRIBED",
    "HINT_LAUNCHER_PID",
};
#define LAUNCH_NRESERVED (sizeof launch_reserved / sizeof launch_reserved[0])

/* ---------------------------------------------------------------- PROGRAM */

/* 0 if path is an executable regular file, else the errno that execve would give. */
static int launch_exec_errno(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return errno;
    if (S_ISDIR(sb.st_mode))
        return EISDIR;
    if (!S_ISREG(sb.st_mode) || access(path, X_OK) != 0)
        return EACCES;
    return 0;
}

static int launch_program_error(const char *prog, int err)
{
    if (err == ENOENT || err == ENOTDIR) {
        fprintf(stderr, "hintrun: %s: no such file%s\n", prog,
                strchr(prog, '/') ? "" : " found in any directory of PATH");
        return 127;
    }
    fprintf(stderr, "hintrun: %s: cannot execute: %s\n", prog,
            err == EACCES ? "permission denied (not an executable file)" : strerror(err));
    return 126;
}

/* Resolves prog like execvp: taken as is when it has a '/', else searched in PATH. Checked
   before any rank starts so a typo costs one clear message instead of N failing ranks. */
int launch_find_program(const char *prog, char *path, size_t cap)
{
    if (!*prog)
        return launch_program_error("''", ENOENT);
    if (strchr(prog, '/')) {
        int err = launch_exec_errno(prog);
        if (err)
            return launch_program_error(prog, err);
        snprintf(path, cap, "%s", prog);
        return 0;
    }
    const char *p = getenv("PATH");
    if (!p)
        p = "/usr/local/bin:/usr/bin:/bin";
    int seen_eacces = 0;
    for (;;) {
        const char *colon = strchr(p, ':');
        size_t n = colon ? (size_t)(colon - p) : strlen(p);
        /* an empty PATH entry means the current directory */
        int len = snprintf(path, cap, "%.*s/%s", (int)(n ? n : 1), n ? p : ".", prog);
        if (len > 0 && (size_t)len < cap) {
            int err = launch_exec_errno(path);
            if (err == 0)
                return 0;
            seen_eacces |= err == EACCES || err == EISDIR;
        }
        if (!colon)
            break;
        p = colon + 1;
    }
    return launch_program_error(prog, seen_eacces ? EACCES : ENOENT);
}

/* ---------------------------------------------------------------- ids and -x */

static int launch_random_hex(char *out, size_t nbytes)
{
    unsigned char raw[32];
    size_t got = 0;
    while (got < nbytes) {
        ssize_t r = getrandom(raw + got, nbytes - got, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            fprintf(stderr, "hintrun: getrandom: %s\n", strerror(errno));
            return -1;
        }
        got += (size_t)r;
    }
    for (size_t i = 0; i < nbytes; i++)
        snprintf(out + 2 * i, 3, "%02x", raw[i]);
    return 0;
}

int launch_make_ids(struct launch_job *job)
{
    if (launch_random_hex(job->jobid, 8) || launch_random_hex(job->token, 16))
        return -1;
    return 0;
}

static size_t launch_name_len(const char *s)
{
    const char *eq = strchr(s, '=');
    return eq ? (size_t)(eq - s) : strlen(s);
}

static int launch_name_valid(const char *s, size_t n)
{
    if (n == 0 || (s[0] >= '0' && s[0] <= '9'))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!(s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
              (s[i] >= '0' && s[i] <= '9')))
            return 0;
    return 1;
}

static int launch_is_reserved(const char *s, size_t n)
{
    for (size_t k = 0; k < LAUNCH_NRESERVED; k++)
        if (strlen(launch_reserved[k]) == n && strncmp(launch_reserved[k], s, n) == 0)
            return 1;
    return 0;
}

int launch_check_xvars(const struct launch_opts *o)
{
    for (int i = 0; i < o->nx; i++) {
        const char *x = o->xvars[i];
        size_t n = launch_name_len(x);
        if (!launch_name_valid(x, n)) {
            fprintf(stderr, "hintrun: -x %s: not a valid variable name\n", x);
            return 2;
        }
        if (launch_is_reserved(x, n)) {
            fprintf(stderr, "hintrun: -x %.*s: hintrun sets this variable itself\n", (int)n, x);
            return 2;
        }
        if (!x[n] && !getenv(x))
            fprintf(stderr, "hintrun: warning: -x %s: not set in hintrun's environment; "
                    "not passed\n", x);
    }
    return 0;
}

/* ---------------------------------------------------------------- environment */

/* 1 if environment entry e is replaced by hintrun or by an -x option. */
static int launch_env_replaced(const struct launch_opts *o, const char *e)
{
    size_t n = launch_name_len(e);
    if (launch_is_reserved(e, n))
        return 1;
    for (int i = 0; i < o->nx; i++)
        if (launch_name_len(o->xvars[i]) == n && strncmp(o->xvars[i], e, n) == 0)
            return 1;
    if (o->shared_heap && n == 10 && strncmp(e, "LD_PRELOAD", 10) == 0)
        return 1; /* rebuilt with libhint first, see launch_rank_env */
    return 0;
}

static char *launch_env_fmt(const char *name, const char *fmt, long v)
{
    char val[64];
    snprintf(val, sizeof val, fmt, v);
    size_t n = strlen(name) + strlen(val) + 2;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s=%s", name, val);
    return s;
}

static char *launch_env_str(const char *name, const char *prefix, const char *val)
{
    size_t n = strlen(name) + strlen(prefix) + strlen(val) + 2;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s=%s%s", name, prefix, val);
    return s;
}

/* Frees env and its entries from..to-1 (to = SIZE_MAX: up to the terminating NULL). */
static void launch_env_free(char **env, size_t from, size_t to)
{
    if (!env)
        return;
    for (size_t i = from; i < to && (to != SIZE_MAX || env[i]); i++)
        free(env[i]);
    free(env);
}

/* Virtual nodes are blocks of consecutive ranks; the first np % nodes blocks hold one more. */
struct launch_node launch_node_of(int np, int nodes, int rank)
{
    int base = np / nodes, extra = np % nodes;
    int big = extra * (base + 1); /* ranks in the larger blocks */
    int id = rank < big ? rank / (base + 1) : extra + (rank - big) / base;
    int first = id < extra ? id * (base + 1) : big + (id - extra) * base;
    return (struct launch_node){.id = id, .first = first, .size = base + (id < extra)};
}

/* hintrun's environment, minus what is replaced, plus -x variables and the HINT_* of rank.
   Entries before *nborrowed point into environ and are not freed. */
static char **launch_rank_env(const struct launch_job *job, int rank, size_t *nborrowed)
{
    const struct launch_opts *o = job->opts;
    size_t n = 0, k = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + (size_t)o->nx + LAUNCH_NRESERVED + 2, sizeof *env);
    if (!env)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (!launch_env_replaced(o, environ[i]))
            env[k++] = environ[i];
    *nborrowed = k;
    for (int i = 0; i < o->nx; i++) {
        const char *x = o->xvars[i];
        const char *v = x[launch_name_len(x)] ? NULL : getenv(x);
        if (x[launch_name_len(x)] || v)
            env[k++] = v ? launch_env_str(x, "", v) : strdup(x);
    }
    env[k++] = launch_env_fmt("HINT_RANK", "%ld", job->rank_base + rank);
    env[k++] = launch_env_fmt("HINT_SIZE", "%ld", job->world_np);
    /* an agent's ranks are its host's node; else --nodes deals this machine's ranks */
    struct launch_node nd = job->agent ? (struct launch_node){job->node_id, 0, job->np}
                                       : launch_node_of(job->np, o->nodes, rank);
    env[k++] = launch_env_fmt("HINT_LOCAL_RANK", "%ld", rank - nd.first);
    env[k++] = launch_env_fmt("HINT_LOCAL_SIZE", "%ld", nd.size);
    env[k++] = launch_env_fmt("HINT_NODE_ID", "%ld", nd.id);
    env[k++] = launch_env_fmt("HINT_NNODES", "%ld", job->nnodes);
    env[k++] = launch_env_str("HINT_JOBID", "", job->jobid);
    env[k++] = launch_env_str("HINT_STORE", "", job->store_addr);
    env[k++] = launch_env_str("HINT_TOKEN", "", job->token);
    env[k++] = launch_env_fmt("HINT_OVERSUBSCRIBED", "%ld", job->oversubscribed);
    env[k++] = launch_env_fmt("HINT_LAUNCHER_PID", "%ld", (long)getpid());
    if (o->shared_heap) {
        /* libhint first, so its malloc serves unmodified programs too; whatever was preloaded
           already stays after it */
        const char *old = getenv("LD_PRELOAD");
        char *val = launch_env_str("LD_PRELOAD", "", job->libhint);
        if (val && old && *old) {
            char *both = launch_env_str(val, ":", old);
            free(val);
            val = both;
        }
        env[k++] = val;
    }
    for (size_t i = *nborrowed; i < k; i++) {
        if (!env[i]) {
            launch_env_free(env, *nborrowed, k);
            return NULL;
        }
    }
    return env;
}

/* ---------------------------------------------------------------- fork/exec */

/* In the child: its own process group (so a signal to -pid reaches what it forks), death with
   hintrun, default signal state, stdin from hintrun's stdin pipe (--stdin) or /dev/null,
   stdout/stderr into hintrun's pipes. */
static void launch_child(const struct launch_job *job, int rank, int outw, int errw, char **env,
                         pid_t launcher)
{
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != launcher)
        _exit(1); /* hintrun died before prctl took effect */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    launch_bind_child(job, rank);
    int in = launch_stdin_child_fd(job, rank);
    if (in < 0)
        in = open("/dev/null", O_RDONLY);
    if (in < 0 || dup2(in, 0) < 0 || dup2(outw, 1) < 0 || dup2(errw, 2) < 0)
        _exit(126);
    const struct launch_app *app = launch_app_of(job->opts, job->rank_base + rank);
    const char *prog = job->progs[app - job->opts->apps];
    execve(prog, app->argv, env);
    int e = errno;
    dprintf(2, "hintrun: rank %d: cannot execute %s: %s\n", job->rank_base + rank, prog, strerror(e));
    _exit(e == ENOENT || e == ENOTDIR ? 127 : 126);
}

static void launch_close_pair(int p[2])
{
    for (int i = 0; i < 2; i++)
        if (p[i] >= 0)
            close(p[i]);
    p[0] = p[1] = -1;
}

int launch_spawn_rank(struct launch_job *job, int rank)
{
    int st = -1, outp[2] = {-1, -1}, errp[2] = {-1, -1};
    size_t nborrowed = 0;
    char **env = NULL;
    struct launch_rank *r = &job->ranks[rank];
    pid_t self = getpid();
    if (pipe2(outp, O_CLOEXEC) || pipe2(errp, O_CLOEXEC)) {
        fprintf(stderr, "hintrun: cannot start rank %d: pipe: %s\n", rank, strerror(errno));
        goto out;
    }
    if (!(env = launch_rank_env(job, rank, &nborrowed))) {
        fprintf(stderr, "hintrun: cannot start rank %d: out of memory\n", rank);
        goto out;
    }
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "hintrun: cannot start rank %d: fork: %s\n", rank, strerror(errno));
        goto out;
    }
    if (pid == 0)
        launch_child(job, rank, outp[1], errp[1], env, self);
    setpgid(pid, pid); /* also in the child: whichever runs first, no signal can miss it */
    r->pid = pid;
    r->running = 1;
    launch_watch_rank(job, pid);
    launch_stdin_started(job, rank);
    job->nrunning++;
    fcntl(outp[0], F_SETFL, O_NONBLOCK);
    fcntl(errp[0], F_SETFL, O_NONBLOCK);
    r->out[0].fd = outp[0]; /* the destinations were set up before (outdir.c) */
    r->out[1].fd = errp[0];
    outp[0] = errp[0] = -1; /* now owned by the rank's streams */
    st = 0;
out:
    launch_close_pair(outp);
    launch_close_pair(errp);
    launch_env_free(env, nborrowed, SIZE_MAX);
    return st;
}

/* The libhint.so beside this hintrun, found relative to hintrun itself so that an install can
   be moved (and a build tree's hintrun never preloads an installed libhint, nor the reverse):
   <bindir>/../<libdir>/libhint.so.0 when installed, <build>/launcher/../libhint.so in the
   build tree. No absolute path is compiled in. */
int launch_find_libhint(struct launch_job *job)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        fprintf(stderr, "hintrun: --shared-heap: cannot read /proc/self/exe: %s\n", strerror(errno));
        return 2;
    }
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    *slash = '\0'; /* the directory of hintrun */
    const char *rel[2] = {HINT_LIBDIR_FROM_BINDIR "/libhint.so.0", "../libhint.so"};
    for (int i = 0; i < 2; i++) {
        /* an absolute libdir (not relocatable) is taken as it is */
        int len = rel[i][0] == '/' ? snprintf(job->libhint, sizeof job->libhint, "%s", rel[i])
                                   : snprintf(job->libhint, sizeof job->libhint, "%s/%s", self, rel[i]);
        if (len > 0 && (size_t)len < sizeof job->libhint && access(job->libhint, R_OK) == 0) {
            char real[PATH_MAX];
            if (realpath(job->libhint, real))
                snprintf(job->libhint, sizeof job->libhint, "%s", real);
            return 0;
        }
    }
    fprintf(stderr, "hintrun: --shared-heap: no libhint.so beside this hintrun (looked for %s/%s and "
            "%s/%s)\n", self, rel[0], self, rel[1]);
    job->libhint[0] = '\0';
    return 2;
}
