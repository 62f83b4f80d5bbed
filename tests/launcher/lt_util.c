/* tests/launcher/lt_util.c — see lt_util.h. */
#include "lt_util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

double lt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const char *lt_build_path(char *buf, size_t cap, const char *rel)
{
    const char *root = getenv("HINT_TEST_BUILD_ROOT");
    snprintf(buf, cap, "%s/%s", root ? root : ".", rel);
    return buf;
}

const char *lt_hintrun(void)
{
    static char p[4096];
    return lt_build_path(p, sizeof p, "launcher/hintrun");
}

const char *lt_rank(void)
{
    static char p[4096];
    return lt_build_path(p, sizeof p, "tests/launcher/lt_rank");
}

struct lt_buf {
    char *p;
    size_t len, cap;
};

static void lt_append(struct lt_buf *b, const char *p, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1)
            cap *= 2;
        b->p = realloc(b->p, cap);
        b->cap = cap;
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static char **lt_env(const char *const extra[])
{
    size_t n = 0, m = 0;
    while (environ[n])
        n++;
    while (extra && extra[m])
        m++;
    char **env = calloc(n + m + 1, sizeof *env);
    memcpy(env, environ, n * sizeof *env);
    for (size_t i = 0; i < m; i++)
        env[n + i] = (char *)extra[i];
    return env;
}

/* Reads both pipes to EOF, sending sig->sig when the marker count is reached. */
static void lt_collect(struct lt_run *r, int fds[2], const struct lt_signal *sig)
{
    struct lt_buf b[2] = {{0}};
    int open_fds = 2, signalled = 0;
    double give_up = lt_now() + 60;
    lt_append(&b[0], "", 0);
    lt_append(&b[1], "", 0);
    while (open_fds > 0 && lt_now() < give_up) {
        struct pollfd pfd[2] = {{.fd = fds[0], .events = POLLIN}, {.fd = fds[1], .events = POLLIN}};
        if (poll(pfd, 2, 500) < 0 && errno != EINTR)
            break;
        for (int i = 0; i < 2; i++) {
            if (fds[i] < 0 || !pfd[i].revents)
                continue;
            char tmp[65536];
            ssize_t k = read(fds[i], tmp, sizeof tmp);
            if (k > 0) {
                lt_append(&b[i], tmp, (size_t)k);
            } else if (k == 0 || errno != EINTR) {
                close(fds[i]);
                fds[i] = -1;
                open_fds--;
            }
        }
        if (sig && !signalled && lt_count(b[0].p, sig->marker) >= sig->count) {
            kill(r->pid, sig->sig);
            signalled = 1;
            if (sig->then)
                sig->then(r->pid, b[0].p);
        }
    }
    if (open_fds > 0) {
        fprintf(stderr, "lt_run: hintrun did not finish in 60 s; killing it\n");
        kill(r->pid, SIGKILL);
    }
    for (int i = 0; i < 2; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    r->out = b[0].p;
    r->err = b[1].p;
}

/* HINT_TEST_NODES=K reruns a suite across K virtual nodes, as tests/common/job.c does: a job of
   one program with "-n N" (N > 1) and no --nodes or --host of its own gets --nodes min(K, N). */
static bool lt_nodes_for(const char *const args[], char *buf, size_t len)
{
    const char *k = getenv("HINT_TEST_NODES");
    int np = 0, programs = 0;
    if (k == NULL || atoi(k) < 2)
        return false;
    for (size_t i = 0; args[i]; i++) {
        if (strcmp(args[i], "--nodes") == 0 || strcmp(args[i], "--host") == 0 ||
            strcmp(args[i], "--hostfile") == 0 || strcmp(args[i], ":") == 0)
            return false;
        if (strcmp(args[i], "-n") == 0 && args[i + 1] && programs++ == 0)
            np = atoi(args[i + 1]);
    }
    if (np < 2 || programs != 1)
        return false;
    snprintf(buf, len, "%d", atoi(k) < np ? atoi(k) : np);
    return true;
}

/* in_fd: hintrun's stdin, or -1 for /dev/null */
static int lt_run_fd(struct lt_run *r, const char *const args[], const char *const extra_env[],
                     const struct lt_signal *sig, int in_fd)
{
    int po[2], pe[2], fds[2];
    size_t n = 0;
    *r = (struct lt_run){.status = -1};
    while (args[n])
        n++;
    const char **argv = calloc(n + 4, sizeof *argv);
    char nodes[16];
    size_t a = 0;
    argv[a++] = lt_hintrun();
    if (lt_nodes_for(args, nodes, sizeof nodes)) {
        argv[a++] = "--nodes";
        argv[a++] = nodes;
    }
    memcpy(argv + a, args, n * sizeof *argv);
    if (pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC))
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (in_fd >= 0)
        posix_spawn_file_actions_adddup2(&fa, in_fd, 0);
    else
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, po[1], 1);
    posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
    char **env = lt_env(extra_env);
    r->t_start = lt_now();
    int rc = posix_spawn(&r->pid, argv[0], &fa, NULL, (char *const *)argv, env);
    posix_spawn_file_actions_destroy(&fa);
    free(env);
    free(argv);
    close(po[1]);
    close(pe[1]);
    fds[0] = po[0];
    fds[1] = pe[0];
    if (rc != 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    lt_collect(r, fds, sig);
    int ws;
    while (waitpid(r->pid, &ws, 0) < 0 && errno == EINTR)
        ;
    r->t_end = lt_now();
    r->status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
    return 0;
}

int lt_run(struct lt_run *r, const char *const args[], const char *const extra_env[],
           const struct lt_signal *sig)
{
    return lt_run_fd(r, args, extra_env, sig, -1);
}

int lt_run_input(struct lt_run *r, const char *const args[], const char *input)
{
    int fd = memfd_create("lt_stdin", MFD_CLOEXEC);
    size_t n = strlen(input);
    if (fd < 0 || write(fd, input, n) != (ssize_t)n || lseek(fd, 0, SEEK_SET) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    int rc = lt_run_fd(r, args, NULL, NULL, fd);
    close(fd);
    return rc;
}

void lt_run_free(struct lt_run *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

int lt_count(const char *hay, const char *needle)
{
    int n = 0;
    size_t k = strlen(needle);
    for (const char *p = hay; k && (p = strstr(p, needle)); p += k)
        n++;
    return n;
}

static const char *lt_line_with(const char *text, const char *prefix, size_t *len)
{
    const char *p = strstr(text, prefix);
    if (!p)
        return NULL;
    while (p > text && p[-1] != '\n')
        p--;
    const char *e = strchr(p, '\n');
    *len = e ? (size_t)(e - p) : strlen(p);
    return p;
}

void lt_find_word(const char *text, const char *prefix, const char *key, char *out, size_t cap)
{
    size_t len;
    char line[4096], pat[128];
    out[0] = '\0';
    const char *l = lt_line_with(text, prefix, &len);
    if (!l || len >= sizeof line)
        return;
    memcpy(line, l, len);
    line[len] = '\0';
    snprintf(pat, sizeof pat, "%s ", key);
    const char *v = strstr(line, pat);
    if (!v)
        return;
    v += strlen(pat);
    size_t n = strcspn(v, " ,)\t");
    if (n >= cap)
        n = cap - 1;
    memcpy(out, v, n);
    out[n] = '\0';
}

long lt_find_long(const char *text, const char *prefix, const char *key)
{
    char w[64];
    lt_find_word(text, prefix, key, w, sizeof w);
    char *end;
    long v = strtol(w, &end, 10);
    return w[0] && !*end ? v : -1;
}

char lt_pid_state(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return '?';
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *rp = strrchr(buf, ')'); /* the state follows the command name */
    return rp && rp[1] == ' ' ? rp[2] : '?';
}

static int lt_pid_running(pid_t pid)
{
    char st = lt_pid_state(pid);
    return st != '?' && st != 'Z' && st != 'X';
}

int lt_pid_alive(pid_t pid)
{
    if (pid <= 0)
        return 0;
    for (double until = lt_now() + 2; lt_now() < until; usleep(10000))
        if (!lt_pid_running(pid))
            return 0;
    return 1;
}

int lt_shm_count(const char *jobid)
{
    char prefix[64];
    int n = 0;
    snprintf(prefix, sizeof prefix, "hint-%u-%s", (unsigned)getuid(), jobid);
    DIR *d = opendir("/dev/shm");
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return n;
}

/* 1 if a socket named @name (abstract) is bound: /proc/net/unix lists it by that name. */
static int lt_abstract_bound(const char *name)
{
    FILE *f = fopen("/proc/net/unix", "r");
    char line[1024];
    size_t n = strlen(name);
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f)) {
        size_t len = strcspn(line, "\n");
        found = len >= n + 1 && line[len - n - 1] == ' ' && strncmp(line + len - n, name, n) == 0;
    }
    if (f)
        fclose(f);
    return found;
}

int lt_store_left(const char *store)
{
    char dir[4096];
    struct stat sb;
    if (strncmp(store, "unix:", 5) != 0)
        return 0;
    if (store[5] == '@')
        return lt_abstract_bound(store + 5);
    snprintf(dir, sizeof dir, "%s", store + 5);
    char *slash = strrchr(dir, '/');
    if (!slash)
        return 0;
    *slash = '\0';
    return stat(dir, &sb) == 0;
}
