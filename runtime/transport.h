/*
 * runtime/transport.h — the seam between the runtime and the transports that move bytes, and
 * between the runtime and the components above it (as libfabric's core and its providers, UCC's
 * core and its tl components). Nothing in runtime/ knows a transport by name: it sees the ops
 * tables listed in hint_transports[] (lib/components.c) and calls them. A transport includes this
 * header and runtime/request.h, never a header of collectives/ or of another transport.
 *
 * What the runtime keeps for every transport, once:
 *   - matching: posted receives and unexpected messages (runtime/match.c), so HINT_ANY_SOURCE
 *     sees the first message from any source over any transport, in arrival order;
 *   - which transport reaches which world rank (the first in hint_transports[] that reaches it);
 *   - waiting: spin, yield, then sleep through the transport that can sleep (runtime/wait.c).
 * What a transport does: moves a message's bytes between the two requests once matched, reports
 * each message's first arrival to rt_match_arrival, and says when a request completes.
 */
#ifndef HINT_RUNTIME_TRANSPORT_H
#define HINT_RUNTIME_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hint_request_s;

/* What a transport can do; the runtime and the layers above ask these, never its name. */
enum rt_tp_cap {
    RT_TP_SAME_NODE = 1u << 0,   /* reaches only ranks on this node */
    RT_TP_SINGLE_COPY = 1u << 1, /* moves large messages with one copy (shared heap, CMA) */
    RT_TP_NODE_AREA = 1u << 2,   /* maps node-shared memory that holds the areas of rt_node_area_add */
    RT_TP_SLEEP = 1u << 3,       /* can put this rank to sleep until any event for it (sleep/wake) */
};

/* One transport. Every hook but the optional ones (marked) must be set. Requests reach a
   transport with r->peer a world rank the transport reaches (reaches() was true for it). */
struct rt_transport {
    const char *name;
    unsigned caps; /* enum rt_tp_cap */
    /* Collective over the ranks it reaches; the bootstrap (runtime/boot.h) is up. Fails with a
       HINT_ERR_* after a message saying what is missing. fini: also after a failed init. */
    int (*init)(void);
    void (*fini)(void);
    bool (*reaches)(int world);
    /* Post a send; may complete it at once (rq_complete). Keeps per-peer order: the first parts
       of two messages to one peer arrive in the order they were posted. */
    void (*isend)(struct hint_request_s *r);
    /* Move a message that matching paired with receive r (r came from rt_match_post; msg is the
       handle the transport gave rt_match_arrival, src the sender's world rank). */
    void (*deliver)(struct hint_request_s *r, int src, void *msg);
    /* Look for arrivals and move in-flight messages on; cheap when nothing happened. */
    void (*progress)(void);
    /* Requests it holds that have not completed (finalize's leak report). */
    int (*pending)(void);
    /* Optional: packed bytes of the message whose handle it gave rt_match_arrival (the status of
       hint_probe and hint_mprobe); without it a probe reports 0 bytes. */
    size_t (*msg_bytes)(const void *msg);
    /* RT_TP_SLEEP only. wait_seq: a number that changes with events for this rank, read
       before the last progress pass; sleep: return once it differs from seen, done(arg) holds,
       an event it does not count arrived (the transport checks those itself after announcing
       that it sleeps) or timeout_ns passed; wake: make world rank `world` re-check its wait if it sleeps (after the
       caller stored what that rank waits for). */
    uint32_t (*wait_seq)(void);
    void (*sleep)(uint32_t seen, long timeout_ns, bool (*done)(void *), void *arg);
    void (*wake)(int world);
    /* Optional: wake, for each of the n world ranks in world[] but world[skip], at the cost of
       one fence for all of them (a collective's post rings every member; rt_wake_others). */
    void (*wake_others)(const int *world, int n, int skip);
    /* RT_TP_NODE_AREA only: the address of node area `id` (rt_node_area_add) in this rank's
       mapping; the same bytes for every rank of the node, zeroed at creation. */
    void *(*node_area)(int id);
    /* Optional, for a transport that is not the sleeper: called just before this rank sleeps.
       -1: events are pending, poll again instead; 0: sleep, the transport will call
       rt_wake(rt.boot.rank) at its next event (which rings this rank's bell even if it is not
       asleep yet); N > 0: sleep at most N ns, the transport cannot wake this rank. */
    long (*sleep_arm)(void);
    /* Optional: append ", name N" style counts to the HINT_P2P_STATS line; returns chars written. */
    int (*stats)(char *buf, size_t len);
    /* Optional: append ", name N" with the data bytes of the messages it sent (HINT_P2P_STATS's
       "bytes sent across nodes" line); returns chars written. */
    int (*stats_bytes)(char *buf, size_t len);
    /* Optional fast paths for one small contiguous message with no request, which blocking sends
       and receives (the public ones and the collectives') take when they can; sig is
       dt_sig_basic's kind.
       send_now: put the message to world rank `world` out at once and complete (true), or do
       nothing (false: the caller posts it as usual). Never ahead of an earlier send to `world`
       that still waits, so per-peer order holds.
       recv_now: 1 when the next message from world rank `world` is on ctx with tag (-1: any),
       fits `bytes` and its kind matches: copied into buf, *got and *got_tag set; 0 when nothing
       from `world` has come yet; -1 when what came needs the general path. The runtime calls it
       only while no receive is posted and no message is unexpected (rt_idle), so that message is
       the oldest any receive could match. */
    bool (*send_now)(int world, const void *buf, size_t bytes, int tag, uint32_t ctx, int sig);
    int (*recv_now)(int world, void *buf, size_t bytes, int tag, uint32_t ctx, int sig, size_t *got,
                    int *got_tag);
};

/* A layer above the runtime (collectives, topology) as hint_init and hint_finalize see it. */
struct rt_component {
    const char *name;
    /* In hint_init before the transports start: register node areas and group parts here. */
    int (*setup)(void);
    /* In hint_finalize after the closing fence and the world group's destruction. */
    void (*fini)(void);
};

/* The library's parts, in start order (lib/components.c); NULL-terminated. */
extern const struct rt_transport *const hint_transports[];
extern const struct rt_component *const hint_components[];

/* ---- for the runtime (runtime/transport.c) ---- */
int rt_transports_start(void);
void rt_transports_stop(void);
/* The transport that reaches world rank w (a table filled at start, read on every send). */
extern const struct rt_transport **rt_of_world;
static inline const struct rt_transport *rt_transport_of(int w) { return rt_of_world[w]; }
/* Requests in flight in every transport and receives still waiting to be matched. */
int rt_pending(void);
/* Nothing in flight on this rank: no request in any transport, no posted receive, no unexpected
   message, no progress hook beyond the transports' own. Then a blocking call may poll one
   source's next message alone (recv_now) without holding anything else up. */
bool rt_idle(void);
/* A transport that reaches other nodes has started: its progress may run in threads (the
   provider's, hint's fd watcher) that a spinning rank would starve (runtime/wait.c). */
bool rt_net_threads(void);
/* Cores this process may run on (its affinity mask). */
long rt_usable_cores(void);
const struct rt_transport *rt_sleeper(void);
/* A layer above adds a progress hook to rt_progress while it has work in flight (the collectives'
   nonblocking schedules) and removes it when idle, so waits pay for it only then. Add:
   HINT_ERR_INTERNAL when every slot is taken. */
int rt_progress_hook_add(void (*hook)(void));
void rt_progress_hook_remove(void (*hook)(void));
/* Ask the started transports that are not the sleeper whether this rank may sleep, and how long
   (sleep_arm's answer, the most restrictive of them): -1 poll again (after a yield), 0 no
   bound, N > 0 ns. */
long rt_sleep_arm(void);
/* The HINT_P2P_STATS counts of the transports after the sleeper's (", ofi N"), into buf. */
void rt_transport_stats(char *buf, size_t len);
/* Their data bytes likewise (", ofi N"; empty when none reports any). */
void rt_transport_stats_bytes(char *buf, size_t len);

/* Wake world rank w if it sleeps in a wait whose condition is a shared word the caller has just
   stored (barrier release, bcast counters). */
void rt_wake(int w);
/* rt_wake for each of the n world ranks in world[] but world[skip] (a group's members, this rank
   at skip), with one fence where the transport can. */
void rt_wake_others(const int *world, int n, int skip);

/* ---- node areas: node-shared memory laid out by the layers that use it ---- */
/* Ask for an area of bytes(nlocal) bytes (a multiple of 64) in the node's shared memory; before
   the transports start (a component's setup). Returns its id, or -1 when too many were asked. */
#define RT_NODE_AREAS 4
int rt_node_area_add(const char *name, size_t (*bytes)(int nlocal));
/* The areas asked for, for the transport that lays them out. */
int rt_node_area_count(void);
size_t rt_node_area_bytes(int id, int nlocal);
/* Area id in this rank's mapping; NULL when no transport maps node memory (then the layers that
   need it do not run). */
void *rt_node_area(int id);
/* Map [addr, addr + len) into this process now, writable, so the first calls do not take its page
   faults (about 1 us each; runtime/init.c). Only for shared memory already backed (fallocated):
   it never allocates pages the caller did not reserve. */
void rt_prefault(void *addr, size_t len);

/* ---- matching (runtime/match.c), the one place for every transport ---- */
/* A transport saw the first part of a message from world rank src: the oldest posted receive it
   matches, taken off the posted list (the transport delivers into it now), or NULL after the
   message was queued as unexpected under `msg` (later handed back through deliver()). */
struct hint_request_s *rt_match_arrival(const struct rt_transport *tp, int src, int tag, uint32_t ctx, void *msg);
/* Room for n more unexpected messages (a transport's bound: its init calls this, so a message
   arriving never needs memory). HINT_ERR_NOMEM when it cannot be had. */
int rt_match_reserve(size_t n);
/* A receive was posted: matched against the unexpected messages (oldest first) or queued. */
void rt_match_post(struct hint_request_s *r);
/* Receives posted and not matched yet. */
int rt_match_posted(void);
/* Whether any message waits unexpected (arrived, not matched yet). */
bool rt_match_peek_any(void);
void rt_match_fini(void);

#endif
