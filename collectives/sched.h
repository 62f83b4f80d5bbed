/*
 * collectives/sched.h — schedules: a nonblocking collective as a list of steps in rounds, which
 * the progress engine advances while the caller computes (as libNBC's schedules, UCC's tasks).
 *
 * A step is a point-to-point send or receive on the group's collective context (ctx + 1) with
 * the call's own tag, or a local copy or reduction. The steps of a round run in the order they
 * were added: a local step runs when reached, a send or receive is posted when reached; the next
 * round starts once every request of the round has completed. So a local step that reads what a
 * receive brings, or writes what a send reads, belongs in the round after it.
 *
 * A builder (collectives/nbc_*.c) adds every step at the call, from the checked arguments of
 * struct coll_args, then sched_start posts the first round and hands the caller a request of
 * kind RQ_COLL. While any schedule is in flight, sched_progress_all is one of rt_progress's hooks,
 * so every wait and test of any request advances every schedule; it leaves the hook list when
 * the last one completes, so point to point pays nothing otherwise. A completed schedule frees
 * itself (its scratch, its steps, its holds on datatypes) and completes its request, whose
 * status error is the schedule's first error.
 *
 * Matching: each call takes its group's next collective tag when it starts (api.c), in the order
 * every member starts its collectives (MPI's rule), so two schedules in flight on one group, or a
 * schedule and a blocking collective, never match each other's messages; within one schedule,
 * messages between two ranks are matched in the order both post them.
 */
#ifndef HINT_COLL_SCHED_H
#define HINT_COLL_SCHED_H

#include <stdbool.h>
#include <stddef.h>

#include "collectives/coll.h"
#include "datatype/datatype.h"

struct sched;

/* A new empty schedule for the call a (its group, tag, op and kind); NULL when out of memory. */
struct sched *sched_new(const struct coll_args *a);
/* n bytes of scratch that the schedule frees when it completes (NULL for n == 0; on failure the
   schedule records HINT_ERR_NOMEM and sched_start returns it). */
void *sched_scratch(struct sched *s, size_t n);
/* Hand over a buffer (malloc'd) that the schedule frees when it completes; NULL is fine. */
void sched_adopt(struct sched *s, void *p);

/* count elements of t (NULL: count bytes) at buf to / from group rank peer. */
void sched_send(struct sched *s, const void *buf, size_t count, hint_type t, int peer);
void sched_recv(struct sched *s, void *buf, size_t count, hint_type t, int peer);
/* bytes to / from peer with a tag of the caller's instead of the call's (nbc_check.c). */
void sched_send_tag(struct sched *s, const void *buf, size_t bytes, int peer, int tag);
void sched_recv_tag(struct sched *s, void *buf, size_t bytes, int peer, int tag);
/* scount elements of st at src into dcount elements of dt at dst (NULL types: bytes). Skipped
   when source and destination are the same bytes in the same layout. */
void sched_copy(struct sched *s, const void *src, size_t scount, hint_type st, void *dst, size_t dcount,
                hint_type dt);
/* inout = in op inout over count elements of the call's kind (the op's own order: in is the
   left operand, as the ranks before inout's). */
void sched_reduce(struct sched *s, const void *in, void *inout, size_t count);
/* inout = inout op in, in holding the higher ranks' operand (`bytes` of scratch: an op that does
   not commute is computed there and copied back; one that commutes goes straight into inout). */
void sched_reduce_after(struct sched *s, void *in, void *inout, size_t count, size_t bytes);
/* Ends the current round: the steps added after it wait until the round's requests complete. */
void sched_round(struct sched *s);
/* A step that finishes when fn(s, state) returns true: called when reached, then on every
   progress pass until it does (the shared-heap schedules' copies and flags, nbc_heap.c). The
   round completes once its requests and its polls have; at most SCHED_POLLS per round. fn must
   not block, nor call rt_progress. */
#define SCHED_POLLS 4
typedef bool (*sched_poll_fn)(struct sched *s, void *state);
void sched_poll(struct sched *s, sched_poll_fn fn, void *state);
/* fn(arg) when the schedule is freed, run or not (one per schedule). */
void sched_on_free(struct sched *s, void (*fn)(void *), void *arg);
/* Records st as the schedule's error (the first one stays); its request ends with it. */
void sched_fail(struct sched *s, int st);
int sched_error(const struct sched *s);

/* Frees a schedule that will not be started. */
void sched_discard(struct sched *s);
/* Posts the first round and gives *out the request (already complete when the schedule needed
   no messages). On failure nothing is in flight, the schedule is freed and *out is untouched. */
int sched_start(struct sched *s, hint_request *out);
/* rt_progress's hook while schedules are in flight: advances each as far as it can go. */
void sched_progress_all(void);
/* Schedules in flight (finalize's leak report). */
int sched_pending(void);

/* ---- the builders: one per operation, from the arguments api.c checked (nbc_*.c) ---- */
/* Elements of layout l in `bytes` of data (l without a type: the bytes themselves). */
static inline size_t nbc_elems(size_t bytes, const struct coll_layout *l)
{
    size_t es = l->type ? dt_size(l->type) : 1;
    return es ? bytes / es : 0;
}
/* bytes of data at buf in layout l to / from peer, and from one layout into another. */
static inline void nbc_send(struct sched *s, const void *buf, size_t bytes, const struct coll_layout *l, int peer)
{
    sched_send(s, buf, nbc_elems(bytes, l), l->type, peer);
}
static inline void nbc_recv(struct sched *s, void *buf, size_t bytes, const struct coll_layout *l, int peer)
{
    sched_recv(s, buf, nbc_elems(bytes, l), l->type, peer);
}
static inline void nbc_copy(struct sched *s, const void *src, const struct coll_layout *sl, void *dst,
                            const struct coll_layout *dl, size_t bytes)
{
    sched_copy(s, src, nbc_elems(bytes, sl), sl->type, dst, nbc_elems(bytes, dl), dl->type);
}
/* A nonblocking call: its schedule built (nothing to do when `trivial`) and started; `scratch` is
   a buffer the call's arguments point into (an in-place copy), owned by the schedule from here. */
int nbc_start(const struct coll_args *a, bool trivial, void *scratch, hint_request *out);
void nbc_barrier(struct sched *s, const struct coll_args *a);
void nbc_bcast(struct sched *s, const struct coll_args *a);
void nbc_reduce(struct sched *s, const struct coll_args *a);
void nbc_allreduce(struct sched *s, const struct coll_args *a);
void nbc_allreduce_ring(struct sched *s, const struct coll_args *a);
/* HINT_I<OP>'s choice for op (NULL: auto); 0 when op has no nonblocking form. */
int nbc_forced_alg(int op_id, const char **name);
/* The names of op's nonblocking algorithms, ", "-separated into buf (empty: none), and what
   this rank's last i-call of op ran (NULL before any). */
size_t nbc_alg_list(int op_id, char *buf, size_t n);
const char *nbc_last_ran(int op_id);
void nbc_reduce_scatter_block(struct sched *s, const struct coll_args *a);
void nbc_gather(struct sched *s, const struct coll_args *a);
void nbc_scatter(struct sched *s, const struct coll_args *a);
void nbc_allgather(struct sched *s, const struct coll_args *a);
void nbc_alltoall(struct sched *s, const struct coll_args *a);
void nbc_neighbor(struct sched *s, const struct coll_args *a);
/* HINT_COLL_CHECK for an i-call (nbc_check.c): rounds that come first in its schedule, after
   which every member's schedule ends with HINT_ERR_MISMATCH when any member saw one. */
void nbc_check(struct sched *s, const struct coll_args *a);
/* collectives/check.c's signature of a call and its judgement of all P of them (NULL: none). */
#define COLL_SIG_INTS 6
void coll_signature_ints(const struct coll_args *a, int *sig);
const char *coll_judge_signatures(const struct coll_args *a, const int *all, bool *common);

#endif
