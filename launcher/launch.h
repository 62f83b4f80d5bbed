/*
 * launcher/launch.h — what the parts of hintrun share: the parsed command line and the job.
 *
 *   hintrun.c  main and the poll loop (signals, rank exits, timeout, ending the job)
 *   options.c  command line
 *   spawn.c    finding PROGRAM, rank environments, fork/exec
 *   cleanup.c  the store's name, shm objects, killing and reaping
 *   watch.c    the watcher: cleanup after a hintrun killed by SIGKILL
 *   report.c   what each rank is doing, asked for when --timeout expires
 *   store.c    the bootstrap store server;  output.c  forwarding of rank output
 */
#ifndef HINT_LAUNCHER_LAUNCH_H
#define HINT_LAUNCHER_LAUNCH_H

#include <limits.h>
#include <stdio.h>
#include <sys/types.h>

#include "launcher/output.h"
#include "launcher/store.h"

#define LAUNCH_MAX_RANKS 4096
/* Between SIGTERM and SIGKILL when the job is ended: short, so a failure ends the job in well
   under a second even when a rank ignores SIGTERM. */
#define LAUNCH_KILL_GRACE 0.3

enum { LAUNCH_BIND_DEFAULT = 0, LAUNCH_BIND_CORE = 1, LAUNCH_BIND_NONE = 2 };

struct launch_opts {
    int np;
    int bind;              /* LAUNCH_BIND_*: default = core when the ranks fit on the cores */
    const char *hierarchy; /* --hierarchy H, or NULL */
    const char *order;     /* --order S, or NULL (natural order) */
    int report_bindings;
    int shared_heap;       /* --shared-heap: preload libhint into the ranks */
    int nodes;
    int tag_output;
    double timeout;        /* seconds; 0 = none */
    char **xvars;          /* -x arguments, as given */
    int nx;
    char **prog_argv;      /* PROGRAM ARGS..., NULL-terminated, inside main's argv */
};

struct launch_rank {
    pid_t pid;             /* 0 until started */
    int running;           /* started and not yet reaped */
    struct output_stream out[2]; /* its stdout and stderr */
    int asked;             /* asked for its state (report.c) and has not answered yet */
    unsigned long asked_at; /* out[1].state_lines when asked */
};

struct launch_job {
    const struct launch_opts *opts;
    int np;
    char jobid[17];
    char token[33];
    char sock[64];         /* store address: "@hint-<uid>-<jobid>", an abstract socket */
    char prog[PATH_MAX];   /* PROGRAM resolved through PATH */
    char libhint[PATH_MAX];/* --shared-heap: the libhint.so to preload */
    int oversubscribed;
    int *core_of;          /* core of each rank, or NULL when ranks are not bound (bind.c) */
    struct store *store;
    struct launch_rank *ranks;
    int nrunning;
    int sigfd;
    int exit_code;         /* -1 until the first event that decides the job's status */
    int ending;            /* ranks have been told to stop */
    int first_sig_forwarded; /* a signal hintrun got was passed on; a second one kills */
    double kill_at;        /* when to SIGKILL what is left; 0 = not scheduled */
    double deadline;       /* --timeout; 0 = none */
    double report_until;   /* --timeout expired: the ranks print their state until then */
    int watch_fd;          /* pipe to the watcher (watch.c); -1 when none */
    pid_t watch_pid;       /* 0 when none */
};

/* options.c: returns -1 to run the job, else the exit status hintrun should end with
   (0 after --help/--version, 2 for a usage error). */
int launch_parse_options(int argc, char **argv, struct launch_opts *o);
void launch_usage(FILE *to);

/* spawn.c */
int launch_find_program(const char *prog, char *path, size_t cap); /* 0, 126 or 127 */
int launch_make_ids(struct launch_job *job);                       /* jobid and token */
int launch_check_xvars(const struct launch_opts *o);                /* 0 or 2 */
int launch_spawn_rank(struct launch_job *job, int rank);            /* 0 or -1 */
int launch_find_libhint(struct launch_job *job);                    /* 0 or 2 */

/* bind.c: 0, or the exit status for a placement request that cannot be met */
int launch_plan_binding(struct launch_job *job);
void launch_bind_child(const struct launch_job *job, int rank);
void launch_report_bindings(const struct launch_job *job);

/* cleanup.c */
void launch_make_store_name(struct launch_job *job);
void launch_signal_ranks(struct launch_job *job, int sig);
void launch_cleanup(struct launch_job *job);   /* every exit path ends here */
int launch_remove_shm(const char *jobid);      /* number of objects removed */

/* watch.c */
int launch_watch_start(struct launch_job *job);          /* 0 or -1 */
void launch_watch_rank(struct launch_job *job, pid_t pid); /* a rank has started */
void launch_watch_stop(struct launch_job *job);          /* hintrun cleaned up: watcher exits */

/* report.c: asks every running rank for its state (SIGURG, runtime/trace.h) and reports the
   ranks that cannot answer (stopped, or not started hint) itself. */
void launch_ask_states(struct launch_job *job);
/* 1 once every rank asked has answered (or exited). */
int launch_states_answered(const struct launch_job *job);

double launch_now(void);

#endif
