/*
 * transport/shm/transport.c — the shared-memory transport's ops table (runtime/transport.h):
 * it reaches the ranks of this node, maps the node segment with the node areas the layers above
 * asked for, and sleeps and wakes through the ranks' doorbells (futexes).
 */
#include "runtime/runtime.h"
#include "runtime/transport.h"
#include "transport/shm/segment.h"
#include "transport/shm/shm.h"

static struct shm_node *node;

static int shm_init(void)
{
    int st = shm_node_open(&node);
    return st != HINT_SUCCESS ? st : shm_p2p_init(node);
}

static void shm_fini(void)
{
    shm_p2p_fini();
    shm_node_close(node);
    node = NULL;
}

static bool shm_reaches(int world) { return world >= node->world0 && world < node->world0 + node->nlocal; }

static uint32_t shm_wait_seq(void)
{
    return atomic_load_explicit(&shm_ctl(node, node->me)->bell, memory_order_acquire);
}

/* What the waiter waits for, and the events the transport does not ring the bell for: messages
   in the cells their receiver polls, cells freed for waiting sends (p2p.c rings only sleepers). */
struct sleep_until {
    bool (*done)(void *);
    void *arg;
};

static bool done_or_work(void *a)
{
    struct sleep_until *u = a;
    return shm_p2p_has_work() || u->done(u->arg);
}

static void shm_sleep_hook(uint32_t seen, long timeout_ns, bool (*done)(void *), void *arg)
{
    struct sleep_until u = {done, arg};
    shm_sleep(node, seen, timeout_ns, done_or_work, &u);
}

/* Peers ring only a sleeper; this rank's own bell (another transport's watcher thread) always
   rings, since the rank may be between arming that transport and announcing its sleep. */
static void shm_wake_hook(int world)
{
    int local = world - node->world0;
    if (local == node->me)
        shm_ring(node, local);
    else
        shm_wake(node, local);
}

/* A group's members but world[skip], all on this node (the callers' algorithms need one node):
   one fence, then each one's `sleeping` (shm_wake_after_fence). */
static void shm_wake_others_hook(const int *world, int n, int skip)
{
    atomic_thread_fence(memory_order_seq_cst); /* shm_wake's, once for all */
    const struct shm_rank_ctl *ctl = shm_ctl(node, 0);
    int world0 = node->world0, me = node->me;
    for (int i = 0; i < n; i++) {
        int local = world[i] - world0;
        if (i != skip && (local == me || atomic_load_explicit(&ctl[local].sleeping, memory_order_relaxed)))
            shm_ring(node, local); /* this rank itself (shm_wake_hook), or a sleeper */
    }
}

static void *shm_node_area(int id) { return node ? shm_area(node, id) : NULL; }

const struct rt_transport shm_transport = {
    .name = "shm",
    .caps = RT_TP_SAME_NODE | RT_TP_SINGLE_COPY | RT_TP_NODE_AREA | RT_TP_SLEEP,
    .init = shm_init,
    .fini = shm_fini,
    .reaches = shm_reaches,
    .isend = shm_isend,
    .deliver = shm_deliver,
    .progress = shm_progress,
    .pending = shm_pending,
    .msg_bytes = shm_msg_bytes,
    .wait_seq = shm_wait_seq,
    .sleep = shm_sleep_hook,
    .wake = shm_wake_hook,
    .wake_others = shm_wake_others_hook,
    .node_area = shm_node_area,
    .send_now = shm_send_now,
    .recv_now = shm_recv_now,
};
