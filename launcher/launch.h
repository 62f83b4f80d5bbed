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
 *   stdin.c    forwarding of hintrun's stdin to the ranks (--stdin)
 *   hosts.c    --host / --hostfile: the host list and the ranks dealt to each host
 *   remote.c   the front of a job across hosts: TCP store, one agent per host, their exits
 *   agent.c    hintrun --agent: runs one host's ranks for the front, reports their exits
 */
#ifndef HINT_LAUNCHER_LAUNCH_H
#define HINT_LAUNCHER_LAUNCH_H

#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <signal.h>
#include <sys/types.h>

#include "launcher/output.h"
#include "launcher/store.h"

#define LAUNCH_MAX_RANKS 4096
/* Between SIGTERM and SIGKILL when the job is ended: short, so a failure ends the job in well
   under a second even when a rank ignores SIGTERM. */
#define LAUNCH_KILL_GRACE 0.3
/* The front of a job across hosts: how long an agent has, after SIGTERM and EOF, to end its
   ranks (its own LAUNCH_KILL_GRACE) and clean its host before its process group is killed */
#define LAUNCH_AGENT_GRACE 3.0

/* --bind-to: what a rank's cpuset is widened to. The order of the last four is coarsening. */
enum { LAUNCH_BIND_DEFAULT = 0, LAUNCH_BIND_CORE = 1, LAUNCH_BIND_NONE = 2, LAUNCH_BIND_L3 = 3,
       LAUNCH_BIND_NUMA = 4, LAUNCH_BIND_SOCKET = 5 };
/* --map-by: which kind of object consecutive ranks go round (core: none, they fill cores). */
enum { LAUNCH_MAP_CORE = 0, LAUNCH_MAP_L3 = 1, LAUNCH_MAP_NUMA = 2, LAUNCH_MAP_SOCKET = 3 };
/* --stdin: a rank (>= 0), or one of these */
enum { LAUNCH_STDIN_ALL = -1, LAUNCH_STDIN_NONE = -2 };

/* A host of --host / --hostfile: its slots, and the world ranks dealt to it (first .. first+n-1;
   hosts that get none are dropped, so every host in the list runs at least one rank). */
struct launch_host {
    char *name;
    int slots;
    int first, n;
};

/* One program of an MPMD command line (`-n 2 a : -n 3 b`): ranks first .. first+np-1. */
struct launch_app {
    int np;
    int first;
    char **argv;           /* PROGRAM ARGS..., NULL-terminated (a ':' in main's argv is
                              replaced by NULL) */
};

struct launch_opts {
    int np;                /* all ranks: the sum over apps */
    struct launch_app *apps;
    int napps;
    int bind;              /* LAUNCH_BIND_*: default = core when the ranks fit on the cores */
    int map_by;            /* LAUNCH_MAP_* */
    int cpus_per_rank;     /* cores in each rank's slot (--cpus-per-rank), >= 1 */
    int stdin_rank;        /* rank that gets hintrun's stdin, or LAUNCH_STDIN_* */
    const char *output_dir;/* --output-filename DIR, or NULL */
    int timestamp_output;
    const char *hierarchy; /* --hierarchy H, or NULL */
    const char *order;     /* --order S, or NULL (natural order) */
    int report_bindings;
    int shared_heap;       /* --shared-heap: preload libhint into the ranks */
    int nodes;
    int tag_output;
    double timeout;        /* seconds; 0 = none */
    char **xvars;          /* -x arguments, as given */
    int nx;
    int stdin_given;       /* --stdin was on the command line */
    struct launch_host *hosts; /* --host / --hostfile, after dealing: only hosts with ranks */
    int nhosts;            /* 0: every rank on this machine */
    const char *launch_agent; /* --launch-agent CMD (default "ssh") */
    const char *store_addr;   /* --store-addr ADDR, or NULL */
    /* What an agent is told to run (remote.c): argv[1..optend-1] marked in pass[] are the
       options that apply on every host; the rest (-n, -x, --host...) are rebuilt or stay here. */
    char **argv;
    int optend;
    unsigned char *pass;
};

struct launch_rank {
    pid_t pid;             /* 0 until started */
    int running;           /* started and not yet reaped */
    struct output_stream out[2]; /* its stdout and stderr */
    int asked;             /* asked for its state (report.c) and has not answered yet */
    unsigned long asked_at; /* out[1].state_lines when asked */
};

/* The agent of one host, as the front sees it (remote.c). */
struct launch_agent {
    pid_t pid;             /* the launch agent command (ssh ...) */
    int running;
    int in_fd;             /* its stdin: the job's description, then kept open; EOF ends it */
    struct output_stream out[2]; /* forwarded as they come: the agent tagged them already */
};

struct launch_job {
    const struct launch_opts *opts;
    int np;                /* ranks this hintrun starts (an agent: its host's) */
    int world_np;          /* ranks of the whole job */
    int rank_base;         /* world rank of local rank 0 (an agent's first rank) */
    int agent;             /* hintrun --agent (agent.c) */
    int node_id, nnodes;   /* an agent's host index and the hosts of the job */
    char host[256];        /* an agent: its host's name in the front's list */
    int ctl_in;            /* an agent: stdin from the front (EOF: end the job); else -1 */
    int ctl_fd;            /* an agent: its store connection (rank exits go there); else -1 */
    int ctl_unacked;       /* an agent: EXITED reports not yet acknowledged */
    struct launch_agent *agents; /* the front of a job across hosts: one per host */
    int nagents;
    double agents_due;     /* when every agent must have reached the store; 0 once they have */
    char store_addr[128];  /* HINT_STORE of the ranks: "unix:@..." or "tcp:IP:PORT" */
    char jobid[17];
    char token[33];
    char sock[64];         /* store address: "@hint-<uid>-<jobid>", an abstract socket */
    char (*progs)[PATH_MAX]; /* each app's PROGRAM resolved through PATH */
    char libhint[PATH_MAX];/* --shared-heap: the libhint.so to preload */
    int oversubscribed;
    int *core_of;          /* first core of each rank's slot, or NULL when ranks are not bound
                              (bind.c) */
    void *cpuset_of;       /* bind.c: each rank's hwloc cpuset when core_of is set */
    struct launch_stdin *in; /* stdin.c: NULL when no rank gets stdin */
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
/* The virtual node (--nodes) that holds rank: its index, first rank and rank count. */
struct launch_node {
    int id, first, size;
};
struct launch_node launch_node_of(int np, int nodes, int rank);
int launch_find_libhint(struct launch_job *job);                    /* 0 or 2 */

/* bind.c: 0, or the exit status for a placement request that cannot be met */
int launch_plan_binding(struct launch_job *job);
void launch_bind_child(const struct launch_job *job, int rank);
void launch_report_bindings(const struct launch_job *job);
void launch_free_binding(struct launch_job *job);

/* The app rank belongs to. */
const struct launch_app *launch_app_of(const struct launch_opts *o, int rank);

/* output.c flags of this job (OUTPUT_TAG, OUTPUT_TIMESTAMP) */
int launch_output_flags(const struct launch_opts *o);
/* --output-filename: opens DIR/rank.N/stdout and stderr for every rank into the streams'
   destinations; 0 or 1 (with a message) */
int launch_open_output_files(struct launch_job *job);

/* hintrun.c: runs a parsed job (also an agent's); the exit status */
int launch_run(struct launch_job *job, const struct launch_opts *o);
/* How a rank or agent ended, from waitid: BOOT_EXIT_* and the status or signal. */
void launch_exit_how(const siginfo_t *si, int *how, int *status);
/* Prints why a rank failed; host is NULL on this machine. */
void launch_report_failure(int rank, pid_t pid, int how, int status, int unfinished,
                           const char *host);
/* hintrun's exit status for a failed rank */
int launch_failure_status(int how, int status);
void launch_end_job(struct launch_job *job, int status, int sig, double grace);

/* hosts.c: --host LIST and --hostfile FILE add hosts (0 or a usage status); launch_deal_hosts
   gives N ranks (all slots when N is 0) to the hosts as blocks of consecutive ranks. */
int launch_add_hosts(struct launch_opts *o, const char *list);
int launch_read_hostfile(struct launch_opts *o, const char *path);
int launch_deal_hosts(struct launch_opts *o);
void launch_free_hosts(struct launch_opts *o);

/* remote.c: the front of a job across hosts */
int launch_remote_setup(struct launch_job *job);  /* 0 or an exit status */
void launch_remote_check_exits(struct launch_job *job);  /* after SIGCHLD */
void launch_remote_take_exits(struct launch_job *job);   /* after the store ran */
void launch_remote_signal(struct launch_job *job, int sig);
void launch_remote_ask_states(struct launch_job *job);   /* --timeout: each agent asks its ranks */
void launch_remote_check_started(struct launch_job *job); /* HINT_AGENT_START_TIMEOUT */
void launch_remote_cleanup(struct launch_job *job);

/* agent.c: hintrun --agent; returns the exit status */
int launch_agent_main(int argc, char **argv);
void launch_agent_report_exit(struct launch_job *job, int rank, int how, int status);
/* its descriptors for the poll loop (stdin from the front, store connection), and their events */
size_t launch_agent_fill_poll(struct launch_job *job, struct pollfd *pfd);
void launch_agent_handle(struct launch_job *job, const struct pollfd *pfd, size_t n);

/* stdin.c: forwarding of hintrun's stdin into the pipes of the ranks --stdin names. */
int launch_stdin_open(struct launch_job *job);  /* 0 or -1; before the ranks start */
/* In the child: the read end for rank, or -1 (then stdin is /dev/null). */
int launch_stdin_child_fd(const struct launch_job *job, int rank);
void launch_stdin_started(struct launch_job *job, int rank); /* parent: after the fork */
size_t launch_stdin_fill_poll(struct launch_job *job, struct pollfd *pfd);
void launch_stdin_handle(struct launch_job *job, const struct pollfd *pfd, size_t n);
size_t launch_stdin_max_pollfds(const struct launch_job *job);
void launch_stdin_close(struct launch_job *job);

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
