/*
 * tests/common/job.c — spawning hintrun jobs for the end-to-end tests.
 */
#include "job.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

const char *job_build_path(const char *rel)
{
    static char buf[4][4096];
    static int slot;
    const char *root = getenv("HINT_TEST_BUILD_ROOT");
    char *b = buf[slot++ % 4];
    snprintf(b, sizeof buf[0], "%s/%s", root ? root : ".", rel);
    return b;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static char **build_env(const char *const extra[])
{
    size_t n = 0, k = 0;
    while (environ[n])
        n++;
    while (extra && extra[k])
        k++;
    char **env = calloc(n + k + 1, sizeof *env);
    memcpy(env, environ, n * sizeof *env);
    if (k > 0) /* extra may be NULL: memcpy from NULL is undefined even for 0 bytes */
        memcpy(env + n, extra, k * sizeof *env);
    return env;
}

/* ---- host mode: HINT_TEST_HOSTS=a,b,... reruns a suite across hosts ----
   Every job that does not choose its nodes itself (--nodes) runs as `hintrun --host a:N0,b:N1
   --launch-agent "$HINT_TEST_LAUNCH_AGENT"` over min(hosts, np) hosts, its ranks dealt in blocks
   whose sizes differ by at most one (the first hosts take the larger: P=5 is 3+2). Every job's
   front, hintrun, runs under HINT_TEST_FRONT_PREFIX (words split at spaces, e.g. `ip netns exec
   NS`: where the hosts are reachable). The job's extra environment and this process's
   FI_PROVIDER and FI_TCP_IFACE reach the remote ranks through -x, as through ssh they must.
   tests/launcher/check_suites_netns.py makes such hosts out of network namespaces. */
struct host_mode {
    char prefix[512];
    char hosts[1024];
};

static bool host_mode_on(void)
{
    const char *h = getenv("HINT_TEST_HOSTS");
    return h != NULL && *h != '\0';
}

static size_t add_front_prefix(struct host_mode *hm, const char **args, size_t a)
{
    const char *p = getenv("HINT_TEST_FRONT_PREFIX");
    if (p == NULL)
        return a;
    snprintf(hm->prefix, sizeof hm->prefix, "%s", p);
    char *save = NULL;
    for (char *w = strtok_r(hm->prefix, " ", &save); w && a < 16; w = strtok_r(NULL, " ", &save))
        args[a++] = w;
    return a;
}

static size_t add_hosts(struct host_mode *hm, int np, const char *const env[], const char **args, size_t a)
{
    char list[1024], *names[64], *save = NULL;
    int n = 0;
    snprintf(list, sizeof list, "%s", getenv("HINT_TEST_HOSTS"));
    for (char *w = strtok_r(list, ",", &save); w && n < 64; w = strtok_r(NULL, ",", &save))
        names[n++] = w;
    if (n > np)
        n = np;
    size_t len = 0;
    for (int i = 0; i < n && len < sizeof hm->hosts; i++)
        len += (size_t)snprintf(hm->hosts + len, sizeof hm->hosts - len, "%s%s:%d", i ? "," : "", names[i],
                                np / n + (i < np % n));
    args[a++] = "--host";
    args[a++] = hm->hosts;
    const char *agent = getenv("HINT_TEST_LAUNCH_AGENT");
    if (agent && *agent) {
        args[a++] = "--launch-agent";
        args[a++] = agent;
    }
    static const char *const fabric[] = {"FI_PROVIDER", "FI_TCP_IFACE"};
    for (size_t i = 0; i < 2; i++)
        if (getenv(fabric[i])) {
            args[a++] = "-x";
            args[a++] = fabric[i];
        }
    for (size_t i = 0; env && env[i] && a < 200; i++) {
        args[a++] = "-x";
        args[a++] = env[i];
    }
    return a;
}

int job_run(const char *const opts[], int np, const char *const argv[], const char *const env[],
            struct job_result *out)
{
    const char *args[256];
    char npbuf[16];
    size_t a = 0;
    struct host_mode hm;
    bool hosts = host_mode_on();
    if (hosts)
        a = add_front_prefix(&hm, args, a);
    args[a++] = job_build_path("launcher/hintrun");
    bool nodes_given = false;
    for (size_t i = 0; opts && opts[i]; i++) {
        nodes_given |= strcmp(opts[i], "--nodes") == 0;
        args[a++] = opts[i];
    }
    if (hosts && !nodes_given && np > 0)
        a = add_hosts(&hm, np, env, args, a);
    /* HINT_TEST_NODES=K reruns a suite across K virtual nodes (fewer when the job has fewer ranks) */
    char nodesbuf[16];
    const char *k = getenv("HINT_TEST_NODES");
    if (k && atoi(k) > 1 && !nodes_given && !hosts) {
        snprintf(nodesbuf, sizeof nodesbuf, "%d", atoi(k) < np ? atoi(k) : np);
        args[a++] = "--nodes";
        args[a++] = nodesbuf;
    }
    snprintf(npbuf, sizeof npbuf, "%d", np);
    args[a++] = "-n";
    args[a++] = npbuf;
    for (size_t i = 0; argv[i] && a < 255; i++)
        args[a++] = argv[i];
    args[a] = NULL;

    int pipefd[2];
    if (pipe(pipefd) != 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], 2);
    posix_spawn_file_actions_addclose(&fa, pipefd[0]);
    char **envp = build_env(env);
    pid_t pid;
    double t0 = now();
    int err = posix_spawnp(&pid, args[0], &fa, NULL, (char *const *)args, envp);
    posix_spawn_file_actions_destroy(&fa);
    free(envp);
    close(pipefd[1]);
    if (err != 0) {
        close(pipefd[0]);
        return -1;
    }
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (len + 1024 > cap)
            buf = realloc(buf, cap *= 2);
        ssize_t r = read(pipefd[0], buf + len, cap - len - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        len += (size_t)r;
    }
    buf[len] = '\0';
    close(pipefd[0]);
    int ws;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
        ;
    out->ended = now();
    out->seconds = out->ended - t0;
    out->status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
    out->output = buf;
    return 0;
}

int job_shm_left(const struct job_result *res)
{
    const char *j = strstr(res->output, "jobid=");
    if (j == NULL)
        return -1;
    char prefix[64];
    snprintf(prefix, sizeof prefix, "hint-%u-%.16s", (unsigned)getuid(), j + 6);
    DIR *d = opendir("/dev/shm");
    if (d == NULL)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
            n++;
    closedir(d);
    return n;
}
