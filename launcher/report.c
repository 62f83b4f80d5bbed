/*
 * launcher/report.c — when --timeout expires, what each rank is doing.
 *
 * A rank that called hint_init answers SIGURG by writing one line about what it waits in
 * (runtime/trace.h) to its stderr, which hintrun forwards. SIGURG is ignored by default, so a
 * rank that has not started hint, or a program that never does, is not harmed by it. The ranks
 * that cannot answer are reported here instead: a stopped rank (its handler cannot run), one
 * that has not reached hint_init, and one that has finalized. hintrun waits until every rank it
 * asked has forwarded a "hint: rank " line on its stderr, at most LAUNCH_REPORT_MAX seconds (a
 * rank that joined the store but installed no handler, e.g. a program using the bootstrap client
 * alone, never answers). Across hosts the front writes "s" on every agent's stdin and each
 * agent asks its ranks; the front then waits the whole LAUNCH_REPORT_MAX.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "launcher/launch.h"

/* The state letter of pid in /proc/pid/stat ('R', 'S', 'T', ...), '?' when unreadable. */
static char launch_proc_state(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return '?';
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return '?';
    buf[n] = '\0';
    const char *paren = strrchr(buf, ')'); /* the command name may hold spaces and parens */
    return paren && paren[1] == ' ' ? paren[2] : '?';
}

void launch_ask_states(struct launch_job *job)
{
    for (int r = 0; r < job->np; r++) {
        struct launch_rank *rk = &job->ranks[r];
        if (!rk->running)
            continue;
        char state = launch_proc_state(rk->pid);
        /* an agent (--host) has no store: it asks every rank, and the front waits its fixed
           time for the answers */
        int joined = job->store ? store_rank_joined(job->store, r) : 1;
        if (state == 'T' || state == 't')
            fprintf(stderr, "hintrun: rank %d (pid %d) is stopped (SIGSTOP or a debugger); it "
                    "cannot say what it waits in\n", job->rank_base + r, (int)rk->pid);
        else if (joined == 0)
            fprintf(stderr, "hintrun: rank %d (pid %d) has not called hint_init\n", r,
                    (int)rk->pid);
        else if (joined == 2)
            fprintf(stderr, "hintrun: rank %d (pid %d) has finished hint_finalize and is still running\n",
                    r, (int)rk->pid);
        else if (kill(rk->pid, SIGURG) == 0) { /* the rank itself, not what it forked */
            rk->asked = 1;
            rk->asked_at = rk->out[1].state_lines;
        }
    }
}

int launch_states_answered(const struct launch_job *job)
{
    if (job->nagents)
        return 0; /* the front cannot count the agents' answers: it waits LAUNCH_REPORT_MAX */
    for (int r = 0; r < job->np; r++) {
        const struct launch_rank *rk = &job->ranks[r];
        if (rk->asked && rk->running && rk->out[1].fd >= 0 && rk->out[1].state_lines == rk->asked_at)
            return 0;
    }
    return 1;
}
