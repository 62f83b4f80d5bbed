/*
 * runtime/wait.c — how a rank waits: spin (HINT_WAIT_SPIN_US: 50 us when the node's ranks fit its
 * cores, 0 when they outnumber them), then poll with sched_yield between polls, then sleep on
 * the futex of this rank's doorbell (waking a sleeper costs ~65 us here, so only after a long
 * quiet time).
 * Why spin first when ranks fit the cores: a sched_yield costs ~0.45 us here, and on a machine
 * where other processes run it gives the core away; an 8-byte allreduce at P=2 then took
 * 4.4-7.7 us instead of 0.2 (issue 18), and ping-pong latency 1.5-3.5 us instead of 0.3-0.4
 * (load 14, 2 cores). When ranks outnumber the cores the peer may be waiting for this very
 * core, so today's hand-off at once stays.
 * Polling with yields costs almost nothing when the peer has its own core (sched_yield returns
 * at once) and hands the core over at once when the peer shares it: measured with hint-bench
 * alltoall 8 B at P=2 on one core, spinning 50 us first made every call 53 us, yielding at once
 * 1.4 us; on two cores both took 0.65 us; at P=8 on 2 cores 235 us against 12.5 us.
 * Every wait that does not end at once is stamped in runtime/trace.h's record (one store when it
 * starts, two when it ends), and with HINT_HANG_TIMEOUT=S a wait longer than S seconds prints
 * what it waits in, once, from the clock reading the loop makes anyway.
 */
#include <sched.h>
#include <time.h>

#include "runtime/request.h"
#include "runtime/runtime.h"
#include "runtime/trace.h"
#include "runtime/transport.h"

static long spin_ns, yield_ns, cores;
static bool spin_given; /* HINT_WAIT_SPIN_US set: spin that long, whatever the transports */
/* rt_wait_spin_ns's answer, and the hook count it was computed for (-1: not yet). */
static long spin_effective;
/* Polls per sched_yield once the spin is over (a power of two): 1, or WAIT_POLLS_PER_YIELD where
   only unseen sharers of the cores (other "hosts") took the spin away (rt_wait_spin_ns). */
static unsigned polls_per_yield = 1;
static int spin_for_hooks = -1;
/* Spinning a fast path did before it handed over to rt_wait_until (rt_wait_spun). */
static long spun_ns;

void rt_wait_init(void)
{
    int over = rt.boot.oversubscribed;
    spin_ns = rt_cfg_long_or("HINT_WAIT_SPIN_US", over ? 0 : 50) * 1000;
    spin_given = rt_cfg_given("HINT_WAIT_SPIN_US");
    yield_ns = rt_cfg_long_or("HINT_WAIT_YIELD_US", over ? 200 : 1000) * 1000;
    spun_ns = 0;
    cores = rt_usable_cores(); /* once: rt_wait_spin_ns runs again whenever a progress hook comes or goes */
    spin_for_hooks = -1;
}

/* Spinning also keeps the core from a peer that shares it without this node knowing: network
   namespace "hosts" on one machine each count its cores as their own. Measured across two such
   hosts on this 2-core machine, one rank each: 8-byte latency 61 us with a 50 us spin, 2003 us
   with a 2000 us spin, 9.9 us without: the message is seen only once the spin ends. (First read
   as starving a receive thread of libfabric's net provider; it has none: strace shows no other
   thread's system call per message. Each host's agent had bound its rank to core 0, so both
   ranks shared one core; unbound on separate cores, a 50 us spin gives 7.1-7.3 us beside
   fi_pingpong's 6.9, and the same spin on a shared core 60.3: bench/netns/side_by_side.sh.) So
   while a transport that reaches other nodes has started, the ranks spin by default only when
   they and as many again still fit the cores they may use; a HINT_WAIT_SPIN_US given is kept (as
   it is when oversubscribed), for hosts known to have their cores to themselves.
   Where the spin was taken away only for such sharers, a waiting rank still yields, but once
   every WAIT_POLLS_PER_YIELD polls instead of after each: across two namespace hosts each pinned
   to its own core (bench/netns/side_by_side.sh --pin), as on real hosts with hintrun's binding,
   the rank has its core to itself, and a sched_yield per poll (160-250 ns here, about as long as
   the poll's own epoll_wait) made hint's polling loop take 390 ns against fi_pingpong's 160, so
   an arrival waited longer to be seen. The count weighs that against sharers that do exist: both
   ranks on one core, an 8-byte half round trip took 3.9 us with a yield per poll, 4.5 with one
   per 4 polls, 7.3 with one per 16 (call_times.c stamps); on cores of their own 4 gave most of
   16's gain (3.57-3.61 against 3.64-3.68 us, fi_pingpong 3.39-3.46). */
#define WAIT_POLLS_PER_YIELD 4 /* a power of two */

long rt_wait_spin_ns(void)
{
    if (rt_progress_list.n != spin_for_hooks) { /* a transport started (or a hook came or went) */
        spin_for_hooks = rt_progress_list.n;
        bool unseen = !spin_given && rt_net_threads() && 2L * rt.boot.local_size > cores;
        spin_effective = unseen ? 0 : spin_ns;
        polls_per_yield = unseen && !rt.boot.oversubscribed ? WAIT_POLLS_PER_YIELD : 1;
    }
    return spin_effective;
}

void rt_wait_spun(long ns) { spun_ns = ns; }

long rt_wait_yield_ns(void) { return yield_ns; }

static long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* How long one futex sleep may last: 100 ms, or less when a HINT_HANG_TIMEOUT report is due
   sooner. */
static long sleep_ns(long waited)
{
    long t = 100 * 1000 * 1000L;
    if (trace_hang_ns > 0 && waited < trace_hang_ns && trace_hang_ns - waited + 1000000L < t)
        t = trace_hang_ns - waited + 1000000L;
    return t;
}

/* Leaving a wait: the record says "not waiting" again. Also on the fast path, so a request
   list set for this wait does not show in the next one. */
static inline void wait_end(void)
{
    trace.start_ns = 0;
    trace.reqs = NULL;
    spun_ns = 0;
}

void rt_wait_until(bool (*done)(void *), void *arg)
{
    /* Done already (an eager send completes when posted): no progress pass, which a sender's
       next blocking call makes anyway. Saves a pass per blocking small send. */
    if (done(arg) || (rt_progress(), done(arg))) {
        wait_end();
        return;
    }
    long start = now_ns() - spun_ns, spin = rt_wait_spin_ns();
    unsigned polls = 0;
    bool reported = false;
    const struct rt_transport *sleeper = rt_sleeper();
    trace.start_ns = start;
    for (;;) {
        uint32_t seen = sleeper->wait_seq();
        rt_progress();
        if (done(arg))
            break;
        long now = now_ns(), waited = now - start;
        if (trace_hang_ns > 0 && waited > trace_hang_ns && !reported) {
            trace_report_hang(now); /* once per wait; then it keeps waiting */
            reported = true;
        }
        if (waited < spin) {
            /* One pause per poll: a pause takes 25 ns on this machine's EPYC (a VM), so the 16
               between polls before made an arrival wait up to 0.4 us to be seen. */
            rt_cpu_relax();
        } else if (waited < spin + yield_ns) {
            if ((++polls & (polls_per_yield - 1)) == 0)
                sched_yield();
            else
                rt_cpu_relax();
        } else {
            /* The timeout only bounds the cost of a missed wake-up; none is expected. With
               HINT_HANG_TIMEOUT it also bounds how late the report comes. A transport that
               cannot ring the doorbell (the network without a wait object) bounds it too. */
            long bound = rt_sleep_arm(), t = sleep_ns(waited);
            if (bound < 0) { /* poll again, but let the ranks sharing this core run */
                if ((++polls & (polls_per_yield - 1)) == 0)
                    sched_yield();
                continue;
            }
            sleeper->sleep(seen, bound > 0 && bound < t ? bound : t, done, arg);
        }
    }
    wait_end();
}
