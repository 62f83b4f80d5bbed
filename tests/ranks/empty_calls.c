/*
 * tests/ranks/empty_calls.c — collectives that move 0 bytes (collectives/api.c's short path),
 * run as ranks under hintrun (tests/ranks/test_coll.c's coll/empty_calls):
 *   - every call whose size is equal on all ranks, blocking and nonblocking, returns success,
 *     says "trivial" and touches no buffer: buffers on a page that faults when touched, and a
 *     guarded buffer whose values must stay as they were;
 *   - bad arguments still return their codes at 0 bytes (group, type, op, root, in place, kinds);
 *   - neighbor_allgather / neighbor_alltoall of empty blocks on a ring and a graph likewise, and
 *     their codes (no topology, in place, bad type, freed group);
 *   - a group, type or user op freed after an empty call named it is refused by the next one
 *     (the short path remembers the last handles it found live: collectives/api.c);
 *   - ranks that reach the empty call by different paths (count 0, or a count of a 0-byte type)
 *     stay in step: a message-based bcast after many of them delivers the right data.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hint.h"
#include "tests/common/rankcheck.h"

int rc_rank;
static int P;

#define GUARD 0x5a5a5a5a
static int guard[64];

static void guard_intact(void)
{
    for (int i = 0; i < 64; i++)
        if (guard[i] != GUARD)
            RC_FAIL("guard[%d] = %#x: a 0-byte call wrote the buffer", i, guard[i]);
}

static void last_is_trivial(const char *op)
{
    const char *name = NULL;
    RC_OK(hint_coll_last(op, &name));
    if (name == NULL || strcmp(name, "trivial") != 0)
        RC_FAIL("%s of 0 bytes ran '%s', not 'trivial'", op, name ? name : "(none)");
}

/* Every empty call on g with buffers s and r (which must never be read or written). */
static void empty_blocking(void *s, void *r, hint_group g)
{
    int root = P - 1, me;
    RC_OK(hint_group_rank(g, &me));
    RC_OK(hint_bcast(r, 0, HINT_INT, root, g));
    last_is_trivial("bcast");
    RC_OK(hint_reduce(s, r, 0, HINT_DOUBLE, HINT_SUM, root, g));
    last_is_trivial("reduce");
    RC_OK(hint_reduce(me == root ? HINT_IN_PLACE : s, r, 0, HINT_INT, HINT_MAX, root, g));
    RC_OK(hint_allreduce(s, r, 0, HINT_DOUBLE, HINT_SUM, g));
    last_is_trivial("allreduce");
    RC_OK(hint_allreduce(HINT_IN_PLACE, r, 0, HINT_INT, HINT_BXOR, g));
    RC_OK(hint_reduce_scatter_block(s, r, 0, HINT_LONG, HINT_MIN, g));
    last_is_trivial("reduce_scatter_block");
    RC_OK(hint_reduce_scatter_block(HINT_IN_PLACE, r, 0, HINT_LONG, HINT_MIN, g));
    RC_OK(hint_scan(s, r, 0, HINT_INT, HINT_SUM, g));
    last_is_trivial("scan");
    RC_OK(hint_exscan(s, r, 0, HINT_INT, HINT_PROD, g));
    last_is_trivial("exscan");
    RC_OK(hint_gather(s, 0, HINT_INT, r, 0, HINT_INT, root, g));
    last_is_trivial("gather");
    RC_OK(hint_gather(me == root ? HINT_IN_PLACE : s, 0, HINT_INT, r, 0, HINT_INT, root, g));
    RC_OK(hint_scatter(s, 0, HINT_BYTE, r, 0, HINT_DOUBLE, root, g));
    last_is_trivial("scatter");
    RC_OK(hint_scatter(s, 0, HINT_INT, me == root ? HINT_IN_PLACE : r, 0, HINT_INT, root, g));
    RC_OK(hint_allgather(s, 0, HINT_INT, r, 0, HINT_INT, g));
    last_is_trivial("allgather");
    RC_OK(hint_allgather(HINT_IN_PLACE, 5, HINT_DOUBLE, r, 0, HINT_INT, g));
    RC_OK(hint_alltoall(s, 0, HINT_BYTE, r, 0, HINT_INT, g));
    last_is_trivial("alltoall");
    RC_OK(hint_alltoall(HINT_IN_PLACE, 0, HINT_INT, r, 0, HINT_INT, g));
    /* NULL buffers are fine when nothing is moved */
    RC_OK(hint_allreduce(NULL, NULL, 0, HINT_INT, HINT_SUM, g));
    RC_OK(hint_alltoall(NULL, 0, HINT_INT, NULL, 0, HINT_INT, g));
}

static void empty_nonblocking(void *s, void *r, hint_group g)
{
    hint_request q[6];
    RC_OK(hint_ibcast(r, 0, HINT_INT, 0, g, &q[0]));
    RC_OK(hint_iallreduce(s, r, 0, HINT_DOUBLE, HINT_SUM, g, &q[1]));
    RC_OK(hint_ireduce(s, r, 0, HINT_INT, HINT_SUM, 0, g, &q[2]));
    RC_OK(hint_iallgather(s, 0, HINT_INT, r, 0, HINT_INT, g, &q[3]));
    RC_OK(hint_ialltoall(s, 0, HINT_INT, r, 0, HINT_INT, g, &q[4]));
    RC_OK(hint_igather(s, 0, HINT_INT, r, 0, HINT_INT, 0, g, &q[5]));
    for (int i = 0; i < 6; i++)
        RC_OK(hint_wait(&q[i], HINT_STATUS_IGNORE));
    last_is_trivial("ibcast");
    last_is_trivial("iallreduce");
    last_is_trivial("ialltoall");
}

static void user_fn(const void *in, void *inout, size_t n, hint_type t)
{
    (void)in, (void)inout, (void)n, (void)t;
    RC_FAIL("a user op ran on 0 elements");
}

/* Bad arguments at 0 bytes, on a group of its own (a code some ranks get and others not would
   leave the group's calls out of step). */
static void empty_errors(void *s, void *r)
{
    hint_group eg, gone;
    hint_type loose, freed, none;
    hint_op user, freed_op;
    int x[4];
    RC_OK(hint_group_dup(HINT_WORLD, &eg));
    RC_OK(hint_group_dup(HINT_WORLD, &gone));
    hint_group stale = gone;
    RC_OK(hint_group_free(&gone));
    RC_OK(hint_type_contiguous(2, HINT_INT, &loose)); /* never committed */
    RC_OK(hint_type_contiguous(2, HINT_INT, &freed));
    RC_OK(hint_type_commit(&freed));
    hint_type stale_type = freed;
    RC_OK(hint_type_free(&freed));
    RC_OK(hint_type_contiguous(0, HINT_INT, &none));
    RC_OK(hint_type_commit(&none));
    RC_OK(hint_op_create(user_fn, 1, &user));
    RC_OK(hint_op_create(user_fn, 1, &freed_op));
    hint_op stale_op = freed_op;
    RC_OK(hint_op_free(&freed_op));

    RC_EXPECT(hint_bcast(r, 0, HINT_INT, 0, HINT_GROUP_NULL), HINT_ERR_GROUP);
    RC_EXPECT(hint_bcast(r, 0, HINT_INT, 0, stale), HINT_ERR_GROUP);
    RC_EXPECT(hint_allreduce(s, r, 0, HINT_INT, HINT_SUM, stale), HINT_ERR_GROUP);
    RC_EXPECT(hint_alltoall(s, 0, HINT_INT, r, 0, HINT_INT, HINT_GROUP_NULL), HINT_ERR_GROUP);
    RC_EXPECT(hint_allgather(s, 0, HINT_INT, r, 0, HINT_INT, stale), HINT_ERR_GROUP);
    RC_EXPECT(hint_gather(s, 0, HINT_INT, r, 0, HINT_INT, 0, stale), HINT_ERR_GROUP);
    RC_EXPECT(hint_scan(s, r, 0, HINT_INT, HINT_SUM, HINT_GROUP_NULL), HINT_ERR_GROUP);

    RC_EXPECT(hint_bcast(r, 0, HINT_TYPE_NULL, 0, eg), HINT_ERR_TYPE);
    RC_EXPECT(hint_bcast(r, 0, loose, 0, eg), HINT_ERR_TYPE);
    RC_EXPECT(hint_bcast(r, 0, stale_type, 0, eg), HINT_ERR_TYPE);
    RC_EXPECT(hint_allreduce(s, r, 0, loose, HINT_SUM, eg), HINT_ERR_TYPE);
    RC_EXPECT(hint_allgather(s, 0, HINT_INT, r, 0, HINT_TYPE_NULL, eg), HINT_ERR_TYPE);
    RC_EXPECT(hint_alltoall(s, 0, stale_type, r, 0, HINT_INT, eg), HINT_ERR_TYPE);
    RC_EXPECT(hint_allgather(s, 0, HINT_INT, r, 0, HINT_DOUBLE, eg), HINT_ERR_TYPE); /* kinds differ */
    RC_EXPECT(hint_alltoall(s, 0, HINT_FLOAT, r, 0, HINT_INT, eg), HINT_ERR_TYPE);
    RC_EXPECT(hint_scatter(s, 0, HINT_TYPE_NULL, r, 0, HINT_TYPE_NULL, 0, eg), HINT_ERR_TYPE);

    RC_EXPECT(hint_allreduce(s, r, 0, HINT_BYTE, HINT_SUM, eg), HINT_ERR_OP);
    RC_EXPECT(hint_allreduce(s, r, 0, HINT_DOUBLE, HINT_BXOR, eg), HINT_ERR_OP);
    RC_EXPECT(hint_allreduce(s, r, 0, HINT_INT, HINT_OP_NULL, eg), HINT_ERR_OP);
    RC_EXPECT(hint_allreduce(s, r, 0, HINT_INT, (hint_op)x, eg), HINT_ERR_OP);
    RC_EXPECT(hint_reduce(s, r, 0, HINT_INT, stale_op, 0, eg), HINT_ERR_OP);
    RC_EXPECT(hint_scan(s, r, 0, HINT_DOUBLE, HINT_LAND, eg), HINT_ERR_OP);
    RC_EXPECT(hint_exscan(s, r, 0, HINT_INT, HINT_OP_NULL, eg), HINT_ERR_OP);
    RC_EXPECT(hint_reduce_scatter_block(s, r, 0, HINT_BYTE, HINT_MAX, eg), HINT_ERR_OP);
    RC_EXPECT(hint_allreduce(s, r, 0, none, HINT_SUM, eg), HINT_ERR_OP); /* no kind to reduce */

    RC_EXPECT(hint_bcast(r, 0, HINT_INT, P, eg), HINT_ERR_ROOT);
    RC_EXPECT(hint_bcast(r, 0, HINT_INT, -1, eg), HINT_ERR_ROOT);
    RC_EXPECT(hint_reduce(s, r, 0, HINT_INT, HINT_SUM, P + 3, eg), HINT_ERR_ROOT);
    RC_EXPECT(hint_gather(s, 0, HINT_INT, r, 0, HINT_INT, -2, eg), HINT_ERR_ROOT);
    RC_EXPECT(hint_scatter(s, 0, HINT_INT, r, 0, HINT_INT, P, eg), HINT_ERR_ROOT);

    RC_EXPECT(hint_bcast(HINT_IN_PLACE, 0, HINT_INT, 0, eg), HINT_ERR_BUFFER);
    RC_EXPECT(hint_allreduce(s, HINT_IN_PLACE, 0, HINT_INT, HINT_SUM, eg), HINT_ERR_BUFFER);
    RC_EXPECT(hint_scan(s, HINT_IN_PLACE, 0, HINT_INT, HINT_SUM, eg), HINT_ERR_BUFFER);
    RC_EXPECT(hint_reduce_scatter_block(s, HINT_IN_PLACE, 0, HINT_INT, HINT_SUM, eg), HINT_ERR_BUFFER);
    /* in place off the root: an error there only (the group is left behind, as an erroneous
       program would leave it) */
    if (P > 1) {
        int root = P - 1, want = rc_rank == root ? HINT_SUCCESS : HINT_ERR_BUFFER;
        RC_EXPECT(hint_reduce(HINT_IN_PLACE, r, 0, HINT_INT, HINT_SUM, root, eg), want);
        RC_EXPECT(hint_gather(HINT_IN_PLACE, 0, HINT_INT, r, 0, HINT_INT, root, eg), want);
        RC_EXPECT(hint_scatter(s, 0, HINT_INT, HINT_IN_PLACE, 0, HINT_INT, root, eg), want);
    }
    hint_request q = (hint_request)x;
    RC_EXPECT(hint_iallreduce(s, r, 0, HINT_BYTE, HINT_SUM, eg, &q), HINT_ERR_OP);
    RC_CHECK(q == HINT_REQUEST_NULL);
    RC_EXPECT(hint_ibcast(r, 0, HINT_INT, P, eg, &q), HINT_ERR_ROOT);

    /* a user op on 0 elements: fine, and never called */
    RC_OK(hint_allreduce(s, r, 0, HINT_INT, user, HINT_WORLD));
    RC_OK(hint_op_free(&user));
    RC_OK(hint_type_free(&loose));
    RC_OK(hint_type_free(&none));
    RC_OK(hint_group_free(&eg));
}

/* Empty neighbourhood calls: every member passes the same (empty) block. */
static void empty_neighbors(void *s, void *r)
{
    hint_group ring, graph;
    int dims[1] = {P}, periods[1] = {1};
    RC_OK(hint_cart_create(HINT_WORLD, 1, dims, periods, 0, &ring));
    int nb[2] = {(rc_rank + P - 1) % P, (rc_rank + 1) % P};
    RC_OK(hint_graph_create_adjacent(HINT_WORLD, 2, nb, 2, nb, 0, &graph));
    for (int k = 0; k < 3; k++) {
        hint_group g = k == 1 ? graph : ring;
        RC_OK(hint_neighbor_allgather(s, 0, HINT_INT, r, 0, HINT_INT, g));
        last_is_trivial("neighbor_allgather");
        RC_OK(hint_neighbor_alltoall(s, 0, HINT_DOUBLE, r, 0, HINT_DOUBLE, g));
        last_is_trivial("neighbor_alltoall");
        RC_OK(hint_neighbor_alltoall(NULL, 0, HINT_BYTE, NULL, 0, HINT_INT, g));
        last_is_trivial("neighbor_alltoall");
    }
    hint_request q[2];
    RC_OK(hint_ineighbor_allgather(s, 0, HINT_INT, r, 0, HINT_INT, ring, &q[0]));
    RC_OK(hint_ineighbor_alltoall(s, 0, HINT_INT, r, 0, HINT_INT, graph, &q[1]));
    RC_OK(hint_wait(&q[0], HINT_STATUS_IGNORE));
    RC_OK(hint_wait(&q[1], HINT_STATUS_IGNORE));
    RC_EXPECT(hint_neighbor_allgather(s, 0, HINT_INT, r, 0, HINT_INT, HINT_WORLD), HINT_ERR_TOPOLOGY);
    RC_EXPECT(hint_neighbor_alltoall(s, 0, HINT_INT, r, 0, HINT_INT, HINT_WORLD), HINT_ERR_TOPOLOGY);
    RC_EXPECT(hint_neighbor_allgather(HINT_IN_PLACE, 0, HINT_INT, r, 0, HINT_INT, ring), HINT_ERR_BUFFER);
    RC_EXPECT(hint_neighbor_alltoall(s, 0, HINT_INT, HINT_IN_PLACE, 0, HINT_INT, graph), HINT_ERR_BUFFER);
    RC_EXPECT(hint_neighbor_alltoall(s, 0, HINT_TYPE_NULL, r, 0, HINT_INT, ring), HINT_ERR_TYPE);
    RC_EXPECT(hint_neighbor_allgather(s, 0, HINT_INT, r, 0, HINT_TYPE_NULL, ring), HINT_ERR_TYPE);
    RC_EXPECT(hint_neighbor_allgather(s, 0, HINT_INT, r, 0, HINT_INT, HINT_GROUP_NULL), HINT_ERR_GROUP);
    hint_group stale = graph;
    RC_OK(hint_neighbor_allgather(s, 0, HINT_INT, r, 0, HINT_INT, graph)); /* the last group named */
    RC_OK(hint_group_free(&graph));
    RC_EXPECT(hint_neighbor_allgather(s, 0, HINT_INT, r, 0, HINT_INT, stale), HINT_ERR_GROUP);
    RC_EXPECT(hint_neighbor_alltoall(s, 0, HINT_INT, r, 0, HINT_INT, stale), HINT_ERR_GROUP);
    RC_OK(hint_group_free(&ring));
}

/* A handle that an empty call named last, then freed: the next empty call refuses it. */
static void freed_after_use(void *s, void *r)
{
    hint_group g;
    hint_type t;
    hint_op op;
    RC_OK(hint_group_dup(HINT_WORLD, &g));
    RC_OK(hint_type_contiguous(2, HINT_INT, &t));
    RC_OK(hint_type_commit(&t));
    RC_OK(hint_op_create(user_fn, 1, &op));
    for (int k = 0; k < 2; k++) {
        RC_OK(hint_bcast(r, 0, t, 0, g));
        RC_OK(hint_allreduce(s, r, 0, t, op, g));
        RC_OK(hint_alltoall(s, 0, t, r, 0, t, g));
    }
    hint_op stale_op = op;
    RC_OK(hint_op_free(&op));
    RC_EXPECT(hint_allreduce(s, r, 0, t, stale_op, g), HINT_ERR_OP);
    RC_EXPECT(hint_reduce(s, r, 0, t, stale_op, 0, g), HINT_ERR_OP);
    RC_OK(hint_allreduce(s, r, 0, t, HINT_SUM, g));
    RC_OK(hint_bcast(r, 0, t, 0, g));
    hint_type stale_type = t;
    RC_OK(hint_type_free(&t));
    RC_EXPECT(hint_bcast(r, 0, stale_type, 0, g), HINT_ERR_TYPE);
    RC_EXPECT(hint_allgather(s, 0, stale_type, r, 0, stale_type, g), HINT_ERR_TYPE);
    RC_OK(hint_bcast(r, 0, HINT_INT, 0, g));
    hint_group stale = g;
    RC_OK(hint_group_free(&g));
    RC_EXPECT(hint_bcast(r, 0, HINT_INT, 0, stale), HINT_ERR_GROUP);
    RC_EXPECT(hint_alltoall(s, 0, HINT_INT, r, 0, HINT_INT, stale), HINT_ERR_GROUP);
    RC_OK(hint_bcast(r, 0, HINT_INT, 0, HINT_WORLD));
}

/* Even ranks call with count 0, odd ones with 3 elements of a 0-byte type (the general path's
   trivial call): both take the call's tag, so a message-based bcast afterwards still matches. */
static void mixed_paths(void *s, void *r)
{
    hint_type none;
    RC_OK(hint_type_contiguous(0, HINT_INT, &none));
    RC_OK(hint_type_commit(&none));
    bool odd = rc_rank % 2;
    size_t n = odd ? 3 : 0;
    hint_type t = odd ? none : HINT_INT;
    for (int k = 0; k < 20; k++) {
        RC_OK(hint_bcast(r, n, t, k % P, HINT_WORLD));
        RC_OK(hint_gather(s, n, t, r, n, t, k % P, HINT_WORLD));
        RC_OK(hint_scatter(s, n, t, r, n, t, k % P, HINT_WORLD));
        RC_OK(hint_allgather(s, n, t, r, n, t, HINT_WORLD));
        RC_OK(hint_alltoall(s, n, t, r, n, t, HINT_WORLD));
    }
    RC_OK(hint_type_free(&none));
    RC_OK(hint_coll_set("bcast", "binomial"));
    int v[4] = {0};
    if (rc_rank == P - 1)
        for (int i = 0; i < 4; i++)
            v[i] = 1000 + i;
    RC_OK(hint_bcast(v, 4, HINT_INT, P - 1, HINT_WORLD));
    for (int i = 0; i < 4; i++)
        RC_CHECK(v[i] == 1000 + i);
    RC_OK(hint_coll_set("bcast", "auto"));
}

int main(int argc, char **argv)
{
    RC_OK(hint_init(&argc, &argv));
    RC_OK(hint_group_rank(HINT_WORLD, &rc_rank));
    RC_OK(hint_group_size(HINT_WORLD, &P));
    long page = sysconf(_SC_PAGESIZE);
    void *fault = mmap(NULL, (size_t)page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    RC_CHECK(fault != MAP_FAILED);
    for (int i = 0; i < 64; i++)
        guard[i] = GUARD;
    for (int round = 0; round < 3; round++) { /* the first call of each, and later ones */
        empty_blocking(fault, fault, HINT_WORLD);
        empty_blocking(guard, guard, HINT_WORLD);
        guard_intact();
        empty_nonblocking(fault, fault, HINT_WORLD);
        empty_nonblocking(guard, guard, HINT_WORLD);
        guard_intact();
    }
    hint_group sub;
    RC_OK(hint_group_split(HINT_WORLD, rc_rank % 2, P - rc_rank, &sub));
    int subsize;
    RC_OK(hint_group_size(sub, &subsize));
    int saved = P;
    P = subsize; /* the roots above are P - 1 of the group */
    empty_blocking(fault, guard, sub);
    guard_intact();
    P = saved;
    RC_OK(hint_group_free(&sub));
    empty_errors(guard, guard);
    guard_intact();
    empty_neighbors(fault, fault);
    freed_after_use(fault, fault);
    guard_intact();
    mixed_paths(guard, guard + 32);
    RC_OK(hint_barrier(HINT_WORLD));
    munmap(fault, (size_t)page);
    RC_OK(hint_finalize());
    if (rc_rank == 0)
        printf("ok empty_calls P=%d\n", P);
    return 0;
}
