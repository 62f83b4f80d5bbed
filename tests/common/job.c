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

int job_run(const char *const opts[], int np, const char *const argv[], const char *const env[],
            struct job_result *out)
{
    const char *args[256];
    char npbuf[16];
    size_t a = 0;
    args[a++] = job_build_path("launcher/hintrun");
    bool nodes_given = false;
    for (size_t i = 0; opts && opts[i]; i++) {
        nodes_given |= strcmp(opts[i], "--nodes") == 0;
        args[a++] = opts[i];
    }
    /* HINT_TEST_NODES=K reruns a suite across K virtual nodes (fewer when the job has fewer ranks) */
    char nodesbuf[16];
    const char *k = getenv("HINT_TEST_NODES");
    if (k && atoi(k) > 1 && !nodes_given) {
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
    int err = posix_spawn(&pid, args[0], &fa, NULL, (char *const *)args, envp);
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
