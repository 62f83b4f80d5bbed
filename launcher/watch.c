/*
 * launcher/watch.c — the watcher: cleanup after a hintrun that could not clean up itself.
 *
 * launch_cleanup runs on every path hintrun lives through, but a SIGKILL ends hintrun with no
 * code running at all. The ranks die with it (PR_SET_PDEATHSIG), yet what they forked lives on,
 * and so do shm objects that a program named after its job (hint's own node segment and heap
 * have no name: runtime/shmfile.h). The store needs nothing: it is an abstract socket, gone
 * with hintrun's descriptors.
 *
 * So before any rank starts, hintrun forks this small process. It reads the ranks' pids from a
 * pipe as they start; EOF without the "done" record hintrun writes at the end of its own cleanup
 * means hintrun died: the watcher SIGKILLs every rank's process group, waits for the ranks to be
 * gone (so none is still creating an object), removes the job's shm objects and exits. It sits
 * in its own process group so that a Ctrl-C at the terminal, or a signal to hintrun's group,
 * does not take it along; it holds no descriptor of the job but its pipe.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launcher/launch.h"

/* The record hintrun writes last: every rank is reaped and every object removed. */
#define WATCH_DONE ((pid_t)0)

/* 1 while pid exists and is not a zombie (a zombie cannot create anything any more). */
static int watch_alive(pid_t pid)
{
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    const char *paren = strrchr(buf, ')'); /* the command name may hold spaces and parens */
    return paren && paren[1] == ' ' && paren[2] != 'Z' && paren[2] != 'X';
}

static void watch_clean_up(const char *jobid, const pid_t *pids, int n)
{
    for (int i = 0; i < n; i++)
        kill(-pids[i], SIGKILL);
    for (int tries = 0; tries < 200; tries++) { /* at most 2 s; normally one round */
        int left = 0;
        for (int i = 0; i < n; i++)
            left += watch_alive(pids[i]);
        if (!left)
            break;
        usleep(10000);
    }
    int removed = launch_remove_shm(jobid);
    fprintf(stderr, "hintrun: watcher: hintrun (job %s) ended without cleaning up; killed its "
            "%d rank%s and removed %d shared-memory object%s\n", jobid, n, n == 1 ? "" : "s",
            removed, removed == 1 ? "" : "s");
}

/* The watcher process; never returns. */
static void watch_run(int rfd, const char *jobid, int np)
{
    setpgid(0, 0);
    prctl(PR_SET_NAME, "hintrun-watch"); /* in ps and top, apart from hintrun */
    signal(SIGPIPE, SIG_IGN);
    int devnull = open("/dev/null", O_RDWR);
    if (devnull >= 0) {
        dup2(devnull, 0);
        dup2(devnull, 1); /* hintrun's stdout must reach EOF when hintrun is gone */
        close(devnull);
    }
    for (int fd = 3; fd < 1024; fd++) /* nothing of the job but the pipe */
        if (fd != rfd)
            close(fd);
    pid_t *pids = calloc((size_t)np, sizeof *pids);
    int n = 0;
    for (;;) {
        pid_t pid;
        ssize_t k = read(rfd, &pid, sizeof pid);
        if (k < 0 && errno == EINTR)
            continue;
        if (k == (ssize_t)sizeof pid && pid == WATCH_DONE)
            _exit(0);
        if (k == (ssize_t)sizeof pid) {
            if (pids && n < np)
                pids[n++] = pid;
            continue;
        }
        break; /* EOF (or a torn record): hintrun is gone */
    }
    watch_clean_up(jobid, pids ? pids : &(pid_t){0}, pids ? n : 0);
    _exit(0);
}

int launch_watch_start(struct launch_job *job)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
        fprintf(stderr, "hintrun: cannot start the watcher: pipe: %s\n", strerror(errno));
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "hintrun: cannot start the watcher: fork: %s\n", strerror(errno));
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        close(p[1]);
        watch_run(p[0], job->jobid, job->np);
    }
    close(p[0]);
    job->watch_fd = p[1];
    job->watch_pid = pid;
    return 0;
}

static void watch_send(struct launch_job *job, pid_t pid)
{
    const char *p = (const char *)&pid;
    size_t left = sizeof pid;
    while (job->watch_fd >= 0 && left > 0) {
        ssize_t w = write(job->watch_fd, p, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            /* the watcher is gone: hintrun still cleans up on every path it lives through */
            close(job->watch_fd);
            job->watch_fd = -1;
            return;
        }
        p += w;
        left -= (size_t)w;
    }
}

void launch_watch_rank(struct launch_job *job, pid_t pid)
{
    watch_send(job, pid);
}

void launch_watch_stop(struct launch_job *job)
{
    if (job->watch_pid <= 0)
        return;
    watch_send(job, WATCH_DONE);
    if (job->watch_fd >= 0)
        close(job->watch_fd);
    job->watch_fd = -1;
    while (waitpid(job->watch_pid, NULL, 0) < 0 && errno == EINTR)
        ;
    job->watch_pid = 0;
}
