/*
 * runtime/transport.c — starting and stopping the transports of hint_transports[], which one
 * reaches which rank, progress over all of them, the node areas the layers above lay out.
 */
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include "runtime/request.h"
#include "runtime/runtime.h"
#include "runtime/transport.h"

const struct rt_transport **rt_of_world; /* per world rank: the transport that reaches it */

static struct {
    const struct rt_transport *active[sizeof rt_progress_list.hook / sizeof rt_progress_list.hook[0]]; /* started, in hint_transports[] order */
    int nactive;
    int nprogress; /* the first hooks of rt_progress_list: the transports' own */
    const struct rt_transport *sleeper;   /* the one that can put this rank to sleep */
    const struct rt_transport *area_owner; /* the one that maps the node areas */
    struct {
        const char *name;
        size_t (*bytes)(int nlocal);
    } areas[RT_NODE_AREAS];
    int nareas;
} T;

int rt_node_area_add(const char *name, size_t (*bytes)(int nlocal))
{
    if (T.nareas == RT_NODE_AREAS)
        return -1;
    T.areas[T.nareas].name = name;
    T.areas[T.nareas].bytes = bytes;
    return T.nareas++;
}

int rt_node_area_count(void) { return T.nareas; }

size_t rt_node_area_bytes(int id, int nlocal) { return (T.areas[id].bytes(nlocal) + 63) / 64 * 64; }

void *rt_node_area(int id) { return T.area_owner && id >= 0 ? T.area_owner->node_area(id) : NULL; }

/* Each world rank goes to the first transport that reaches it; a rank none reaches is an error. */
static int assign_peers(void)
{
    int n = rt.boot.size;
    rt_of_world = calloc((size_t)n, sizeof *rt_of_world);
    if (rt_of_world == NULL)
        return HINT_ERR_NOMEM;
    for (int w = 0; w < n; w++) {
        for (int i = 0; i < T.nactive && !rt_of_world[w]; i++)
            if (T.active[i]->reaches(w))
                rt_of_world[w] = T.active[i];
        if (rt_of_world[w] == NULL) {
            RT_ERR("transport", "no transport reaches rank %d (started: %d; ranks on another node need the libfabric transport); the job cannot start", w, T.nactive);
            return HINT_ERR_TRANSPORT;
        }
    }
    return HINT_SUCCESS;
}

static bool reaches_anyone(const struct rt_transport *tp)
{
    for (int w = 0; w < rt.boot.size; w++)
        if (tp->reaches(w))
            return true;
    return false;
}

int rt_transports_start(void)
{
    int st = HINT_SUCCESS;
    for (int i = 0; hint_transports[i]; i++) {
        const struct rt_transport *tp = hint_transports[i];
        if (T.nactive == (int)(sizeof T.active / sizeof T.active[0]))
            break;
        T.active[T.nactive++] = tp; /* before init: a failed init still gets its fini */
        CHECK_GOTO(tp->init(), out);
        if (reaches_anyone(tp)) { /* a transport with no peer costs the progress loop nothing */
            rt_progress_list.hook[rt_progress_list.n++] = tp->progress;
            T.nprogress++;
        }
        if ((tp->caps & RT_TP_SLEEP) && !T.sleeper)
            T.sleeper = tp;
        if ((tp->caps & RT_TP_NODE_AREA) && !T.area_owner)
            T.area_owner = tp;
    }
    if (T.sleeper == NULL) {
        RT_ERR("transport", "no transport can put a waiting rank to sleep; the job cannot start");
        st = HINT_ERR_TRANSPORT;
        goto out;
    }
    st = assign_peers();
out:
    return st;
}

void rt_transports_stop(void)
{
    for (int i = T.nactive - 1; i >= 0; i--)
        T.active[i]->fini();
    free(rt_of_world);
    rt_match_fini();
    T.nactive = T.nprogress = 0;
    rt_progress_list.n = 0;
    rt_of_world = NULL;
    T.sleeper = T.area_owner = NULL;
}


const struct rt_transport *rt_sleeper(void) { return T.sleeper; }

int rt_progress_hook_add(void (*hook)(void))
{
    if (rt_progress_list.n == (int)(sizeof rt_progress_list.hook / sizeof rt_progress_list.hook[0]))
        return HINT_ERR_INTERNAL;
    rt_progress_list.hook[rt_progress_list.n++] = hook;
    return HINT_SUCCESS;
}

/* Safe from inside rt_progress's loop when the hook is the last one (added after the transports). */
void rt_progress_hook_remove(void (*hook)(void))
{
    for (int i = 0; i < rt_progress_list.n; i++) {
        if (rt_progress_list.hook[i] != hook)
            continue;
        for (int j = i + 1; j < rt_progress_list.n; j++)
            rt_progress_list.hook[j - 1] = rt_progress_list.hook[j];
        rt_progress_list.n--;
        return;
    }
}

int rt_pending(void)
{
    int n = rt_match_posted();
    for (int i = 0; i < T.nactive; i++)
        n += T.active[i]->pending();
    return n;
}

bool rt_net_threads(void)
{
    for (int i = 0; i < T.nactive; i++)
        if (!(T.active[i]->caps & RT_TP_SAME_NODE))
            for (int k = 0; k < T.nprogress; k++)
                if (rt_progress_list.hook[k] == T.active[i]->progress)
                    return true;
    return false;
}

long rt_usable_cores(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? n : 1;
}

bool rt_idle(void)
{
    if (rt_progress_list.n != T.nprogress || rt_match_posted() != 0 || rt_match_peek_any())
        return false;
    for (int i = 0; i < T.nactive; i++)
        if (T.active[i]->pending() != 0)
            return false;
    return true;
}

void rt_wake(int w) { T.sleeper->wake(w); }

void rt_wake_others(const int *world, int n, int skip)
{
    if (T.sleeper->wake_others) {
        T.sleeper->wake_others(world, n, skip);
        return;
    }
    for (int i = 0; i < n; i++)
        if (i != skip)
            T.sleeper->wake(world[i]);
}

long rt_sleep_arm(void)
{
    long bound = 0;
    for (int i = 0; i < T.nactive; i++) {
        const struct rt_transport *tp = T.active[i];
        if (tp == T.sleeper || !tp->sleep_arm)
            continue;
        long b = tp->sleep_arm();
        if (b < 0)
            return -1;
        if (b > 0 && (bound == 0 || b < bound))
            bound = b;
    }
    return bound;
}

/* The other transports' parts of a HINT_P2P_STATS line: their messages, or their bytes. */
static void other_stats(char *buf, size_t len, bool bytes)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < T.nactive && used < len; i++) {
        const struct rt_transport *t = T.active[i];
        int (*part)(char *, size_t) = bytes ? t->stats_bytes : t->stats;
        if (t != T.sleeper && part)
            used += (size_t)part(buf + used, len - used);
    }
}

void rt_transport_stats(char *buf, size_t len) { other_stats(buf, len, false); }
void rt_transport_stats_bytes(char *buf, size_t len) { other_stats(buf, len, true); }

struct rt_progress_list rt_progress_list;
