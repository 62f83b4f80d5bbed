/*
 * launcher/cleanup.c — the store's name, the job's shm objects, and making sure no rank
 * process outlives hintrun. launch_cleanup runs on every exit path of a started job.
 *
 * Rank processes stay zombies (observed with WNOWAIT, see hintrun.c) until launch_cleanup reaps
 * them: a zombie keeps its pid and process group id from being reused, so signalling -pid can
 * only ever reach the rank's own process group, even after the rank itself has exited.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "launcher/launch.h"

double launch_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The store listens on an abstract Unix socket: no file, so nothing to remove on any exit path,
   SIGKILL included. Anyone on the machine could connect to it; the job's token keeps them out. */
void launch_make_store_name(struct launch_job *job)
{
    snprintf(job->sock, sizeof job->sock, "@hint-%u-%s", (unsigned)getuid(), job->jobid);
    snprintf(job->store_addr, sizeof job->store_addr, "unix:%s", job->sock);
}

void launch_signal_ranks(struct launch_job *job, int sig)
{
    for (int r = 0; job->ranks && r < job->np; r++)
        if (job->ranks[r].pid > 0)
            kill(-job->ranks[r].pid, sig); /* the whole group: the rank and what it forked */
    launch_remote_signal(job, sig);
}

int launch_remove_shm(const char *jobid)
{
    char prefix[64];
    int n = 0;
    snprintf(prefix, sizeof prefix, "hint-%u-%s", (unsigned)getuid(), jobid);
    DIR *d = opendir("/dev/shm");
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char name[300];
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
            continue;
        snprintf(name, sizeof name, "/%s", e->d_name);
        if (shm_unlink(name) == 0)
            n++;
        else if (errno != ENOENT)
            fprintf(stderr, "hintrun: cannot remove shared memory %s: %s\n", name,
                    strerror(errno));
    }
    closedir(d);
    return n;
}

/* Kills every rank's process group and reaps the ranks. */
static void launch_reap_all(struct launch_job *job)
{
    if (!job->ranks)
        return;
    launch_signal_ranks(job, SIGKILL);
    for (int r = 0; r < job->np; r++) {
        pid_t pid = job->ranks[r].pid;
        if (pid <= 0)
            continue;
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
        job->ranks[r].pid = 0;
        job->ranks[r].running = 0;
    }
    job->nrunning = 0;
}

void launch_cleanup(struct launch_job *job)
{
    launch_reap_all(job);
    launch_remote_cleanup(job);
    for (int r = 0; job->ranks && r < job->np; r++) {
        for (int k = 0; k < 2; k++) {
            struct output_stream *o = &job->ranks[r].out[k];
            output_close(o, launch_output_flags(job->opts));
            if (o->own_dest)
                close(o->dest);
            o->own_dest = 0;
        }
    }
    launch_stdin_close(job);
    free(job->ranks);
    job->ranks = NULL;
    launch_free_binding(job);
    free(job->progs);
    job->progs = NULL;
    store_close(job->store);
    job->store = NULL;
    job->sock[0] = '\0';
    if (job->jobid[0])
        launch_remove_shm(job->jobid);
    if (job->sigfd >= 0)
        close(job->sigfd);
    job->sigfd = -1;
    launch_watch_stop(job); /* last: until here, a SIGKILL leaves the cleanup to the watcher */
}
