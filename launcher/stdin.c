/*
 * launcher/stdin.c — hintrun's stdin, forwarded to the ranks --stdin names (default rank 0, as
 * mpirun and Hydra do; the others read /dev/null).
 *
 * Each receiving rank reads a pipe that hintrun's poll loop fills. A block read from stdin is
 * written to every receiver before the next is read, so --stdin all gives every rank the same
 * bytes; a receiver that exits (EPIPE) is dropped and the others go on. At EOF the pipes are
 * closed once written, so the ranks see EOF too. Ranks are in process groups of their own and
 * could not read hintrun's terminal themselves (SIGTTIN): the pipe is what makes that work.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launcher/launch.h"

#define STDIN_BLOCK 65536

struct launch_stdin {
    int src;          /* hintrun's fd 0; -1 after EOF or an error */
    size_t len;       /* bytes of buf read from src */
    int n;            /* receivers */
    int *rank;        /* their ranks */
    int *rd, *wr;     /* each receiver's pipe (rd: -1 once the rank got it) */
    size_t *off;      /* bytes of buf written to each receiver */
    char buf[STDIN_BLOCK];
};

static int stdin_receives(const struct launch_opts *o, int rank)
{
    return o->stdin_rank == LAUNCH_STDIN_ALL || o->stdin_rank == rank;
}

int launch_stdin_open(struct launch_job *job)
{
    const struct launch_opts *o = job->opts;
    job->in = NULL;
    if (o->stdin_rank == LAUNCH_STDIN_NONE || fcntl(0, F_GETFD) < 0)
        return 0; /* nothing asked, or hintrun has no stdin: the ranks get /dev/null */
    struct launch_stdin *in = calloc(1, sizeof *in);
    int n = o->stdin_rank == LAUNCH_STDIN_ALL ? job->np : 1;
    if (in) {
        in->rank = calloc((size_t)n, sizeof *in->rank);
        in->rd = calloc((size_t)n, sizeof *in->rd);
        in->wr = calloc((size_t)n, sizeof *in->wr);
        in->off = calloc((size_t)n, sizeof *in->off);
    }
    job->in = in;
    if (!in || !in->rank || !in->rd || !in->wr || !in->off) {
        fprintf(stderr, "hintrun: out of memory\n");
        return -1;
    }
    for (int r = 0; r < job->np; r++)
        if (stdin_receives(o, r)) {
            int p[2];
            if (pipe2(p, O_CLOEXEC) != 0) {
                fprintf(stderr, "hintrun: --stdin: pipe: %s\n", strerror(errno));
                return -1;
            }
            fcntl(p[1], F_SETFL, O_NONBLOCK);
            in->rank[in->n] = r;
            in->rd[in->n] = p[0];
            in->wr[in->n++] = p[1];
        }
    in->src = 0;
    return 0;
}

static int stdin_slot(const struct launch_stdin *in, int rank)
{
    for (int i = 0; in && i < in->n; i++)
        if (in->rank[i] == rank)
            return i;
    return -1;
}

int launch_stdin_child_fd(const struct launch_job *job, int rank)
{
    int i = stdin_slot(job->in, rank);
    return i < 0 ? -1 : job->in->rd[i];
}

void launch_stdin_started(struct launch_job *job, int rank)
{
    int i = stdin_slot(job->in, rank);
    if (i >= 0 && job->in->rd[i] >= 0) {
        close(job->in->rd[i]);
        job->in->rd[i] = -1;
    }
}

static void stdin_drop(struct launch_stdin *in, int i)
{
    if (in->wr[i] >= 0)
        close(in->wr[i]);
    in->wr[i] = -1;
}

/* 1 when every receiver still there has been written the whole block */
static int stdin_block_done(const struct launch_stdin *in)
{
    for (int i = 0; i < in->n; i++)
        if (in->wr[i] >= 0 && in->off[i] < in->len)
            return 0;
    return 1;
}

/* A terminal is read only while hintrun is in the foreground: a background read would stop
   hintrun with SIGTTIN. */
static int stdin_may_read(const struct launch_stdin *in)
{
    return !isatty(in->src) || tcgetpgrp(in->src) == getpgrp();
}

size_t launch_stdin_max_pollfds(const struct launch_job *job)
{
    return job->in ? 1 + (size_t)job->in->n : 0;
}

size_t launch_stdin_fill_poll(struct launch_job *job, struct pollfd *pfd)
{
    struct launch_stdin *in = job->in;
    size_t k = 0;
    if (!in)
        return 0;
    if (stdin_block_done(in)) {
        in->len = 0;
        memset(in->off, 0, (size_t)in->n * sizeof *in->off);
        if (in->src < 0)
            for (int i = 0; i < in->n; i++)
                stdin_drop(in, i); /* EOF and all written: the ranks see EOF */
    }
    if (in->src >= 0 && in->len == 0 && stdin_may_read(in))
        pfd[k++] = (struct pollfd){.fd = in->src, .events = POLLIN};
    for (int i = 0; i < in->n; i++)
        if (in->wr[i] >= 0 && in->off[i] < in->len)
            pfd[k++] = (struct pollfd){.fd = in->wr[i], .events = POLLOUT};
    return k;
}

static void stdin_read(struct launch_stdin *in)
{
    ssize_t r = read(in->src, in->buf, sizeof in->buf);
    if (r < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (r <= 0) {
        in->src = -1; /* EOF, or stdin cannot be read: either way the ranks get EOF */
        return;
    }
    in->len = (size_t)r;
}

static void stdin_write(struct launch_stdin *in, int i)
{
    ssize_t w = write(in->wr[i], in->buf + in->off[i], in->len - in->off[i]);
    if (w < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (w < 0) {
        stdin_drop(in, i); /* the rank has gone (EPIPE) */
        return;
    }
    in->off[i] += (size_t)w;
}

void launch_stdin_handle(struct launch_job *job, const struct pollfd *pfd, size_t n)
{
    struct launch_stdin *in = job->in;
    for (size_t k = 0; in && k < n; k++) {
        if (!pfd[k].revents)
            continue;
        if (pfd[k].fd == in->src) {
            stdin_read(in);
            continue;
        }
        for (int i = 0; i < in->n; i++)
            if (in->wr[i] == pfd[k].fd)
                stdin_write(in, i);
    }
}

void launch_stdin_close(struct launch_job *job)
{
    struct launch_stdin *in = job->in;
    if (!in)
        return;
    for (int i = 0; i < in->n && in->rd && in->wr; i++) {
        if (in->rd[i] >= 0)
            close(in->rd[i]);
        stdin_drop(in, i);
    }
    free(in->rank);
    free(in->rd);
    free(in->wr);
    free(in->off);
    free(in);
    job->in = NULL;
}
