/*
 * runtime/trace.c — printing what this rank waits in (the record is in trace.h).
 *
 * Everything here may run inside a signal handler, so the line is built by hand: strings,
 * decimal integers and seconds with one decimal into a stack buffer, then one write(2).
 *
 * "For whom": when the wait is for point-to-point requests (hint_wait, hint_recv, and every
 * message-based algorithm), the sources or destinations of the requests still open. When it is
 * a wait on shared memory (staged, shared-heap and shm algorithms), the record does not know;
 * then a non-root of a rooted operation (bcast, scatter, gather, reduce and their v variants)
 * waits for the root, as in every algorithm hint has, and anyone else is shown waiting for
 * "any" rank of the group.
 */
#include "runtime/trace.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runtime/group.h"
#include "runtime/request.h"
#include "runtime/runtime.h"

struct trace_rec trace;
long trace_hang_ns;

/* ---------------------------------------------------------------- formatting */

struct trace_out {
    char *p;
    size_t len, cap;
};

static void out_str(struct trace_out *o, const char *s)
{
    while (s && *s && o->len < o->cap)
        o->p[o->len++] = *s++;
}

static void out_uint(struct trace_out *o, unsigned long v)
{
    char d[24];
    int n = 0;
    do
        d[n++] = (char)('0' + v % 10);
    while ((v /= 10) && n < (int)sizeof d);
    while (n > 0 && o->len < o->cap)
        o->p[o->len++] = d[--n];
}

static void out_int(struct trace_out *o, long v)
{
    if (v < 0) {
        out_str(o, "-");
        out_uint(o, (unsigned long)-v);
    } else {
        out_uint(o, (unsigned long)v);
    }
}

/* Seconds with one decimal, rounded down: "2.0". */
static void out_secs(struct trace_out *o, long ns)
{
    long tenths = ns > 0 ? ns / 100000000L : 0;
    out_uint(o, (unsigned long)(tenths / 10));
    out_str(o, ".");
    out_uint(o, (unsigned long)(tenths % 10));
}

static void out_rank(struct trace_out *o, int world)
{
    if (world < 0)
        out_str(o, "any");
    else
        out_int(o, world);
}

/* ---------------------------------------------------------------- the parts of a line */

static int rooted(const char *op)
{
    static const char *const names[] = {"bcast", "reduce", "gather", "gatherv", "scatter", "scatterv"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(op, names[i]) == 0)
            return 1;
    return 0;
}

/* The ranks of the requests still open, at most 8 of them: "1, 3"; 0 when none is open. */
static int out_request_peers(struct trace_out *o)
{
    int shown = 0;
    for (size_t i = 0; trace.reqs && i < trace.nreqs; i++) {
        const struct hint_request_s *r = trace.reqs[i];
        if (r == NULL || r->complete)
            continue;
        if (shown == 8) {
            out_str(o, ", ...");
            break;
        }
        out_str(o, shown++ ? ", " : "");
        out_rank(o, r->peer);
    }
    return shown;
}

static void out_collective(struct trace_out *o)
{
    const char *alg = trace.alg ? *trace.alg : NULL;
    out_str(o, trace.op);
    out_str(o, " on group ");
    out_uint(o, trace.ctx);
    out_str(o, " call #");
    out_uint(o, trace.call);
    out_str(o, " (algorithm ");
    out_str(o, alg ? alg : "?");
    out_str(o, ")");
}

/* "recv from rank 1 tag 5 on group 0", or "waitall of 3 requests for rank(s) 1, 2" */
static void out_p2p(struct trace_out *o)
{
    const struct hint_request_s *r = NULL;
    for (size_t i = 0; i < trace.nreqs && !r; i++)
        if (trace.reqs[i] && !trace.reqs[i]->complete)
            r = trace.reqs[i];
    if (r == NULL) {
        out_str(o, "a wait for requests that just completed");
        return;
    }
    if (trace.nreqs > 1) {
        out_str(o, "waitall of ");
        out_uint(o, trace.nreqs);
        out_str(o, " requests for rank(s) ");
        out_request_peers(o);
        return;
    }
    out_str(o, r->kind == RQ_SEND ? "send to rank " : "recv from rank ");
    out_rank(o, r->peer);
    out_str(o, " tag ");
    if (r->tag < 0)
        out_str(o, "any");
    else
        out_int(o, r->tag);
    out_str(o, " on group ");
    out_uint(o, r->group ? r->group->ctx : r->ctx);
}

static void out_waiting(struct trace_out *o, long now_ns)
{
    out_str(o, "waiting ");
    out_secs(o, now_ns - trace.start_ns);
    out_str(o, " s in ");
    if (trace.store_step) {
        out_str(o, trace.phase ? trace.phase : "hint_init");
        out_str(o, " (the bootstrap store's ");
        out_str(o, trace.store_step);
        out_str(o, ") for every rank");
        return;
    }
    if (!trace.op) {
        if (trace.reqs)
            out_p2p(o);
        else
            out_str(o, trace.phase ? trace.phase : "a runtime wait");
        return;
    }
    out_collective(o);
    out_str(o, " for rank(s) ");
    if (out_request_peers(o) == 0)
        out_rank(o, rooted(trace.op) && trace.root != trace.rank ? trace.root : -1);
}

size_t trace_format(char *buf, size_t cap, long now_ns)
{
    struct trace_out o = {buf, 0, cap};
    out_str(&o, "hint: rank ");
    out_int(&o, trace.rank);
    out_str(&o, " ");
    if (trace.start_ns) {
        out_waiting(&o, now_ns);
    } else if (trace.op) {
        out_str(&o, "in ");
        out_collective(&o);
        out_str(&o, ", not waiting (computing)");
    } else {
        out_str(&o, "not waiting (computing");
        out_str(&o, trace.phase ? ", in " : "");
        out_str(&o, trace.phase);
        out_str(&o, ")");
    }
    return o.len;
}

/* ---------------------------------------------------------------- printing */

long trace_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* async-signal-safe */
    return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static void trace_write_line(long now_ns)
{
    char line[512];
    size_t n = trace_format(line, sizeof line - 1, now_ns);
    line[n++] = '\n';
    for (size_t off = 0; off < n;) {
        ssize_t w = write(2, line + off, n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        off += (size_t)w;
    }
}

void trace_report_hang(long now_ns) { trace_write_line(now_ns); }

static void trace_on_signal(int sig)
{
    (void)sig;
    int saved = errno;
    trace_write_line(trace_now_ns());
    errno = saved;
}

void trace_init(void)
{
    const char *rank = getenv("HINT_RANK");
    trace.rank = rank ? atoi(rank) : 0; /* boot_init checks it; this is only for messages */
    /* seconds, decimals allowed (its row in runtime/envdoc.c); 0: off */
    trace_hang_ns = (long)(rt_cfg_seconds("HINT_HANG_TIMEOUT") * 1e9);
    struct sigaction old;
    /* a program that handles SIGURG itself keeps its handler (and loses the state report) */
    if (sigaction(SIGURG, NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) ||
        old.sa_handler != SIG_DFL)
        return;
    struct sigaction sa = {.sa_handler = trace_on_signal, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGURG, &sa, NULL);
}
