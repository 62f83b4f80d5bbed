/*
 * runtime/trace.h — what this rank is waiting in, so that a hang can say so.
 *
 * One small record per process: the collective in progress (operation, group context id, the
 * group's call number, the algorithm), the wait in progress (since when, and the point-to-point
 * requests it waits for, when it waits for requests), and the bootstrap step (hint_finalize's
 * fence). The hot paths only store into it (a few plain stores per collective call and per wait
 * that does not end at once: no syscall, no formatting); it is formatted only when printed:
 *   - HINT_HANG_TIMEOUT=S: a wait longer than S seconds prints one line (rt_wait_until, and the
 *     bootstrap client's blocking fence and get);
 *   - SIGURG, which hintrun sends when --timeout expires: the handler hint_init installs writes
 *     the line with write(2). Formatting is async-signal-safe (no stdio, no malloc, no locale).
 * hint is FUNNELED, so one record is enough; the signal handler runs on the thread it reads.
 */
#ifndef HINT_RUNTIME_TRACE_H
#define HINT_RUNTIME_TRACE_H

#include <stddef.h>
#include <stdint.h>

struct hint_request_s;

struct trace_rec {
    /* the collective in progress (collectives/select.c's coll_run), op NULL when none */
    const char *op;                /* "scatter" */
    const char *const *alg;        /* the slot that holds the name of the algorithm running */
    uint32_t ctx;                  /* the group's context id */
    uint32_t call;                 /* the group's collective calls so far, this one included */
    int root;                      /* world rank of the root (meaningful for rooted ops only) */
    /* the wait in progress (rt_wait_until), start_ns 0 when none */
    long start_ns;                 /* CLOCK_MONOTONIC when it began */
    struct hint_request_s *const *reqs; /* the requests it waits for, or NULL (a shared flag) */
    size_t nreqs;
    /* the bootstrap store step in progress ("fence", "get"), or NULL */
    const char *store_step;
    const char *phase;             /* "hint_finalize" while it runs, else NULL */
    int rank;                      /* world rank (HINT_RANK), known before boot_init ends */
};

extern struct trace_rec trace;

static inline void trace_coll_begin(const char *op, uint32_t ctx, uint32_t call, int root,
                                    const char *const *alg)
{
    trace.op = op;
    trace.ctx = ctx;
    trace.call = call;
    trace.root = root;
    trace.alg = alg;
}

static inline void trace_coll_end(void) { trace.op = NULL; }

/* The next rt_wait_until waits for these requests (it forgets them when it returns). */
static inline void trace_wait_requests(struct hint_request_s *const *r, size_t n)
{
    trace.reqs = r;
    trace.nreqs = n;
}

/* HINT_HANG_TIMEOUT in nanoseconds, 0 when off (read by trace_init). */
extern long trace_hang_ns;

/* Reads HINT_HANG_TIMEOUT and installs the SIGURG handler (not over a handler the program has
   installed itself). Called by hint_init once the bootstrap is up; before that SIGURG keeps its
   default action, which is to ignore it. */
void trace_init(void);
/* Prints "hint: rank R waiting S s in ..." once, from a wait that passed HINT_HANG_TIMEOUT. */
void trace_report_hang(long now_ns);
/* CLOCK_MONOTONIC in nanoseconds (async-signal-safe). */
long trace_now_ns(void);
/* Formats this rank's state line into buf (async-signal-safe); returns its length. */
size_t trace_format(char *buf, size_t cap, long now_ns);

#endif
