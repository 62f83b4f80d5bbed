/*
 * collectives/algs.h — every algorithm (one file each) and its applicability predicate.
 */
#ifndef HINT_COLL_ALGS_H
#define HINT_COLL_ALGS_H

#include <stdlib.h>

#include "collectives/coll.h"
#include "runtime/runtime.h" /* CHECK_GOTO, the one error-path shape */

int barrier_dissemination(struct coll_args *a);
int barrier_shm(struct coll_args *a);
int barrier_staged(struct coll_args *a);
bool coll_shm_ok(const struct coll_args *a);
/* ... and the shared heap is on: the staged and `heap` algorithms can run. */
bool coll_heap_ok(const struct coll_args *a);
void coll_ring_members(hint_group g);
/* Poll done(arg) tightly while the ranks fit the cores and nothing else is in flight (yield per
   look when oversubscribed), for the spin (yield) budget, counted against rt_wait_until's:
   collectives/staging.c stage_spin. false: not done, go on with rt_wait_until. */
bool coll_spin(bool (*done)(void *), void *arg);
int bcast_binomial(struct coll_args *a);
int bcast_shm(struct coll_args *a);
int bcast_heap(struct coll_args *a);
bool bcast_staged_ok(const struct coll_args *a);
int bcast_staged(struct coll_args *a);
int reduce_binomial(struct coll_args *a);
bool reduce_staged_ok(const struct coll_args *a);
int reduce_staged(struct coll_args *a);
int reduce_heap(struct coll_args *a);
bool gather_staged_ok(const struct coll_args *a);
int gather_staged(struct coll_args *a);
bool scatter_staged_ok(const struct coll_args *a);
int scatter_staged(struct coll_args *a);
int gather_heap(struct coll_args *a);
int scatter_heap(struct coll_args *a);
bool reduce_scatter_block_staged_ok(const struct coll_args *a);
int reduce_scatter_block_staged(struct coll_args *a);
int reduce_scatter_block_heap(struct coll_args *a);
int allreduce_reduce_bcast(struct coll_args *a);
int allreduce_recursive_doubling(struct coll_args *a);
int allreduce_ring(struct coll_args *a);
bool allreduce_staged_ok(const struct coll_args *a);
int allreduce_staged(struct coll_args *a);
/* Elements [off, off + n * esize) of every member's staged input (every member's input published
   as soff on the heap) combined in rank order, the last rank's first, into dst: the same result on
   every rank whatever the op. The heap one goes through a local chunk, so dst may be an input. */
void coll_stage_reduce(struct coll_args *a, size_t off, size_t n, char *dst);
void coll_heap_reduce(const struct coll_args *a, size_t off, size_t n, char *dst);
/* ---- mismatched calls (HINT_ERR_MISMATCH) ---- */
/* What the members of one call must agree on, as a hash: the operation, the root, the bytes of a
   block (the v variants' counts are checked pair by pair instead) and a reduction's op and kind. */
uint64_t coll_signature(const struct coll_args *a);
/* Says why this call is a mismatch (once per rank that found it) and returns HINT_ERR_MISMATCH. */
int coll_mismatch(const struct coll_args *a, const char *what);
/* HINT_COLL_CHECK=1: compare the call's signature across the group before running it
   (collectives/check.c): HINT_ERR_MISMATCH on every member when they disagree. */
extern int coll_check_state; /* HINT_COLL_CHECK, read on first use (-1: not yet) */
int coll_check_read(void);
static inline bool coll_check_enabled(void) { return (coll_check_state < 0 ? coll_check_read() : coll_check_state) == 1; }
int coll_check_call(const struct coll_args *a);
/* The first barrier of a shared-heap algorithm, with its publication of the call's signature:
   HINT_ERR_MISMATCH on every rank, after a second barrier, when the members' signatures differ,
   so that nobody copies with sizes a peer does not have. */
int coll_heap_meet(struct coll_args *a);

/* A shared-heap algorithm that found a buffer off the heap: a barrier (so no rank publishes again
   before all have read), then the message-based `run`, recorded as `name`. */
int coll_heap_fallback(struct coll_args *a, const char *name, int (*run)(struct coll_args *));
int allreduce_heap(struct coll_args *a);
int gather_linear(struct coll_args *a);
int gather_binomial(struct coll_args *a);
int scatter_linear(struct coll_args *a);
int scatter_binomial(struct coll_args *a);
int gatherv_linear(struct coll_args *a);
int scatterv_linear(struct coll_args *a);
int allgather_ring(struct coll_args *a);
bool allgather_recursive_doubling_ok(const struct coll_args *a);
int allgather_recursive_doubling(struct coll_args *a);
int allgather_bruck(struct coll_args *a);
int allgatherv_ring(struct coll_args *a);
int allgatherv_linear(struct coll_args *a);
int alltoall_pairwise(struct coll_args *a);
int alltoall_linear(struct coll_args *a);
int alltoall_bruck(struct coll_args *a);
/* Staging areas for the one-synchronisation small-message algorithms (collectives/staging.c). */
/* Bytes per rank and block a staging area holds (an area holds P of them): 8 KiB up to 8 ranks,
   then 64 KiB / P, at least 1 KiB, so an area stays within 64 KiB + P KiB per rank and call, and
   the staged algorithms can reach the sizes where the copy orders take over without a cliff. */
static inline size_t coll_stage_block(int P)
{
    size_t b = P <= 8 ? 8192 : (size_t)65536 / (size_t)P;
    return b < 1024 ? 1024 : b & ~(size_t)63;
}
/* Bytes one rank stages for one call at most: an area, P blocks (P * 8 KiB up to 8 ranks, about
   64 KiB beyond). allgather and gather stage one block per rank, so that block may fill the whole
   area (issue 18 item 4: staged then reaches past 8 KiB, where the upper algorithms' extra
   barrier made a step), with no memory beyond the area's. */
static inline size_t coll_stage_area(int P) { return (size_t)P * coll_stage_block(P); }
/* This rank's half for a new call, which will hold `bytes` bytes (at most P * coll_stage_block;
   every member passes the same for the same call); NULL when out of memory. */
char *coll_stage_begin(struct coll_args *a, size_t bytes);
/* Bytes from one block to the next in a half of P blocks: the block rounded to 8 when all P
   fit the call's head beside its number (a compact call), else rounded to lines. */
size_t coll_stage_stride(const struct coll_args *a);
/* Publish what this rank staged for the call (its flag = the call's number). */
void coll_stage_post(struct coll_args *a);
/* The same, waking only the members listed (world ranks of group members, this rank and negative
   entries not allowed; one fence for all of them): the ones that wait for this call's post (a
   neighbourhood call's out-neighbours). Every member is woken when one waits in coll_stage_begin
   for a call this post may end. */
void coll_stage_post_to(struct coll_args *a, const int *world, int n);
/* Instead of begin and post: this rank cannot take part in the call (its own set-up ran out of
   memory), and the members that wait for its post return HINT_ERR_NOMEM. */
void coll_stage_fail(struct coll_args *a);
/* A RANK[:N] test hook (HINT_TEST_STAGE_NOMEM, HINT_TEST_NEIGHBOR_NOMEM): true while world rank
   RANK is the caller and *tries (a per-group count it increments) is under N (1 when not given). */
struct coll_test_hook {
    const char *var;
    int rank; /* -2: not read yet; -1: unset */
    unsigned tries;
};
bool coll_test_hook_fires(struct coll_test_hook *h, const struct coll_args *a, unsigned *tries);
/* Wait until member p (every member) has posted the call: HINT_ERR_MISMATCH when a member
   staged a call with another signature (then its blocks must not be read). */
int coll_stage_wait(struct coll_args *a, int p);
int coll_stage_wait_all(struct coll_args *a);
/* ... every member listed (group ranks; negative entries such as HINT_PROC_NULL skipped, repeats
   allowed), in one wait: what a neighbourhood call reads. */
int coll_stage_wait_list(struct coll_args *a, const int *members, int n);
/* Post and wait for every member. */
int coll_stage_publish(struct coll_args *a);
/* Member p's half of the current call, readable once coll_stage_publish returned. */
const char *coll_stage_half(const struct coll_args *a, int p);
/* The same for many members in one call: member p's half is peers[p] + *off (the offset is the
   same in every member's areas), for the members a wait of this call has included. */
char *const *coll_stage_peers(const struct coll_args *a, size_t *off);
bool alltoall_staged_ok(const struct coll_args *a);
int alltoall_staged(struct coll_args *a);
bool allgather_staged_ok(const struct coll_args *a);
int allgather_staged(struct coll_args *a);
int alltoall_row(struct coll_args *a);
int alltoall_column(struct coll_args *a);
int alltoall_hilbert(struct coll_args *a);
int alltoall_morton(struct coll_args *a);
int alltoall_morton_numa(struct coll_args *a);
int allgather_morton(struct coll_args *a);
int allgather_morton_numa(struct coll_args *a);
int allgatherv_morton(struct coll_args *a);
int allgatherv_morton_numa(struct coll_args *a);
int alltoallv_morton_numa(struct coll_args *a);
int alltoallv_linear(struct coll_args *a);
int alltoallv_pairwise(struct coll_args *a);
int alltoallv_row(struct coll_args *a);
int alltoallv_column(struct coll_args *a);
int alltoallv_hilbert(struct coll_args *a);
int alltoallv_morton(struct coll_args *a);
int reduce_scatter_block_reduce_scatter(struct coll_args *a);
int reduce_scatter_block_ring(struct coll_args *a);
int neighbor_naive(struct coll_args *a);
/* neighbor_allgather: paper 002's distance halving (pattern built on first use, kept per group) */
bool neighbor_distance_halving_ok(const struct coll_args *a);
int neighbor_distance_halving(struct coll_args *a);
/* neighbor_allgather(v) and neighbor_alltoall(v): paper 004 §3's compact Morton curve over the shared heap */
bool neighbor_morton_ok(const struct coll_args *a);
int neighbor_morton(struct coll_args *a);
/* neighbor_allgather: through the staging areas, each rank waiting for its in-neighbours only */
bool neighbor_staged_ok(const struct coll_args *a);
int neighbor_staged(struct coll_args *a);
/* ---- scan, exscan, reduce_scatter, alltoallw; ops that do not commute ---- */
int scan_linear(struct coll_args *a);
int scan_recursive_doubling(struct coll_args *a);
int exscan_linear(struct coll_args *a);
int exscan_recursive_doubling(struct coll_args *a);
/* reduce_scatter: a->block and a->count are the whole vector's, a->rcounts and a->rdispls each
   rank's part in bytes */
int reduce_scatter_reduce_scatterv(struct coll_args *a);
int alltoallw_pairwise(struct coll_args *a);
int alltoallw_linear(struct coll_args *a);
/* reduce binomial for an op that does not commute (reduce_rank_order.c): rooted at rank 0,
   combined in rank order, then handed to the root */
int reduce_binomial_in_order(struct coll_args *a);
/* An algorithm whose combining order is not rank order, called with an op that does not
   commute: records `name` and runs that order-keeping algorithm instead. */
int coll_noncommutative_fallback(struct coll_args *a, const char *name, int (*run)(struct coll_args *));
/* ---- hierarchical (hier.h): node phases with the one-node algorithms, one phase between nodes ---- */
int barrier_hier(struct coll_args *a);
int bcast_hier(struct coll_args *a);
int reduce_hier(struct coll_args *a);
int allreduce_hier(struct coll_args *a);
int allgather_hier(struct coll_args *a);
int allgatherv_hier(struct coll_args *a);
int alltoall_hier_hint(struct coll_args *a);
int alltoallv_hier_hint(struct coll_args *a);
int alltoall_hier_hint_overlap(struct coll_args *a);
int alltoallv_hier_hint_overlap(struct coll_args *a);
int alltoall_hier_morton(struct coll_args *a);
int alltoallv_hier_morton(struct coll_args *a);

#endif
