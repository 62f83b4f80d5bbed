/*
 * runtime/wait.c — how a rank waits: optionally spin (HINT_WAIT_SPIN_US, default 0), then poll
 * with sched_yield between polls, then sleep on the futex of this rank's doorbell (waking a
 * sleeper costs ~65 us here, so only after a long quiet time).
 * Polling with yields costs almost nothing when the peer has its own core (sched_yield returns
 * at once) and hands the core over at once when the peer shares it: measured with hint-bench
 * alltoall 8 B at P=2 on one core, spinning 50 us first made every call 53 us, yielding at once
 * 1.4 us; on two cores both took 0.65 us; at P=8 on 2 cores 235 us against 12.5 us.
 */
#include <sched.h>
#include <time.h>

#include "runtime/request.h"
#include "runtime/runtime.h"
#include "transport/shm/shm.h"

static long spin_ns, yield_ns;

void rt_wait_init(void)
{
    int over = rt.boot.oversubscribed;
    spin_ns = rt_env_long("HINT_WAIT_SPIN_US", 0, 0, 10000000) * 1000;
    yield_ns = rt_env_long("HINT_WAIT_YIELD_US", over ? 200 : 1000, 0, 10000000) * 1000;
}

static long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

void rt_wait_until(bool (*done)(void *), void *arg)
{
    rt_progress();
    if (done(arg))
        return;
    long start = now_ns();
    for (;;) {
        uint32_t seen = atomic_load_explicit(&shm_ctl(rt.shm, rt.shm->me)->bell, memory_order_acquire);
        rt_progress();
        if (done(arg))
            return;
        long waited = now_ns() - start;
        if (waited < spin_ns) {
            for (int i = 0; i < 16; i++)
                cpu_relax();
        } else if (waited < spin_ns + yield_ns) {
            sched_yield();
        } else {
            /* The timeout only bounds the cost of a missed wake-up; none is expected. */
            shm_sleep(rt.shm, seen, 100 * 1000 * 1000L, done, arg);
        }
    }
}
