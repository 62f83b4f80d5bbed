/*
 * tests/ranks/topo_misc.c — issue 20 item 4 and 5 calls, run under hintrun: cart_sub on 2-D and 3-D
 * carts (every choice of kept dimensions; the sub-group's cart_get / cart_coords / cart_shift /
 * cart_rank checked against the parent's coordinates, and a message along each sub-grid shift),
 * topo_test on every kind, dist-graph neighbours on an asymmetric graph, version, processor name,
 * thread levels with calls from two threads taking turns, and error handlers.
 *
 * Usage: topo_misc [all|fatal|fatal-wait|env-fatal]
 *   all          everything below that returns; rank 0 prints "ok topo_misc"
 *   fatal        a row group set to HINT_ERRORS_ARE_FATAL; rank 1 of it (world rank 1 at P >= 2)
 *                sends to an invalid rank: the job must end with that call's message, status 4
 *   fatal-wait   (P >= 2) a truncated receive on a FATAL dup of the world: hint_wait must end the
 *                job naming that group (status 8)
 *   env-fatal    under HINT_ERRORS=fatal: a bad tag on the world must end the job (status 15)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hint.h"
#include "tests/common/rankcheck.h"

int rc_rank;
static int P;

#define MAXD 4

/* A cart of ndims dims (from dims_create) over the world; every remain mask checked. */
static void check_cart_sub(int ndims, int periodic)
{
    int dims[MAXD] = {0}, periods[MAXD], coords[MAXD];
    RC_OK(hint_dims_create(P, ndims, dims));
    for (int d = 0; d < ndims; d++)
        periods[d] = periodic ? (d % 2 == 0) : 0;
    hint_group cart;
    RC_OK(hint_cart_create(HINT_WORLD, ndims, dims, periods, 0, &cart));
    RC_CHECK(cart != HINT_GROUP_NULL); /* dims_create covers every rank */
    int kind, nd, crank;
    RC_OK(hint_topo_test(cart, &kind));
    RC_CHECK(kind == HINT_CART);
    RC_OK(hint_cartdim_get(cart, &nd));
    RC_CHECK(nd == ndims);
    RC_OK(hint_group_rank(cart, &crank));
    int gd[MAXD], gp[MAXD], gc[MAXD], cc[MAXD];
    RC_OK(hint_cart_get(cart, MAXD, gd, gp, gc));
    RC_OK(hint_cart_coords(cart, crank, ndims, cc));
    for (int d = 0; d < ndims; d++)
        RC_CHECK(gd[d] == dims[d] && gp[d] == periods[d] && gc[d] == cc[d]);
    memcpy(coords, gc, sizeof coords);

    for (int mask = 0; mask < (1 << ndims); mask++) {
        int remain[MAXD], kept = 0, subsize = 1, kd[MAXD], kp[MAXD], kc[MAXD];
        for (int d = 0; d < ndims; d++) {
            remain[d] = (mask >> d) & 1;
            if (remain[d]) {
                kd[kept] = dims[d];
                kp[kept] = periods[d];
                kc[kept++] = coords[d];
                subsize *= dims[d];
            }
        }
        hint_group sub;
        RC_OK(hint_cart_sub(cart, remain, &sub));
        int size, rank, sd[MAXD], sp[MAXD], sc[MAXD];
        RC_OK(hint_group_size(sub, &size));
        RC_OK(hint_group_rank(sub, &rank));
        RC_CHECK(size == subsize);
        RC_OK(hint_topo_test(sub, &kind));
        RC_CHECK(kind == HINT_CART);
        RC_OK(hint_cartdim_get(sub, &nd));
        RC_CHECK(nd == kept);
        RC_OK(hint_cart_get(sub, MAXD, sd, sp, sc));
        int want_rank = 0;
        for (int k = 0; k < kept; k++) {
            if (sd[k] != kd[k] || sp[k] != kp[k] || sc[k] != kc[k])
                RC_FAIL("cart_sub ndims %d mask %d: dim %d got (%d,%d,%d) want (%d,%d,%d)", ndims, mask, k, sd[k],
                        sp[k], sc[k], kd[k], kp[k], kc[k]);
            want_rank = want_rank * kd[k] + kc[k];
        }
        RC_CHECK(rank == want_rank); /* row-major over the kept coordinates */
        int r2, c2[MAXD];
        RC_OK(hint_cart_coords(sub, rank, MAXD, c2));
        RC_OK(hint_cart_rank(sub, c2, &r2));
        RC_CHECK(r2 == rank);
        for (int k = 0; k < kept; k++)
            RC_CHECK(c2[k] == kc[k]);
        /* the sub-group's members are the world ranks sharing my dropped coordinates */
        int *world = malloc((size_t)size * sizeof *world), *ids = malloc((size_t)size * sizeof *ids);
        for (int i = 0; i < size; i++)
            ids[i] = i;
        RC_OK(hint_group_translate(sub, size, ids, cart, world));
        for (int i = 0; i < size; i++) {
            int wc[MAXD], sc2[MAXD];
            RC_OK(hint_cart_coords(cart, world[i], MAXD, wc));
            RC_OK(hint_cart_coords(sub, i, MAXD, sc2));
            for (int d = 0, k = 0; d < ndims; d++) {
                if (remain[d])
                    RC_CHECK(wc[d] == sc2[k++]);
                else
                    RC_CHECK(wc[d] == coords[d]);
            }
        }
        free(world);
        free(ids);
        /* each kept dimension: shift by +1, send my rank along it, receive the source's */
        for (int k = 0; k < kept; k++) {
            int src, dst, got = -1;
            RC_OK(hint_cart_shift(sub, k, 1, &src, &dst));
            int want_dst = HINT_PROC_NULL, want_src = HINT_PROC_NULL;
            int cd[MAXD];
            memcpy(cd, sc, sizeof cd);
            if (sp[k] || sc[k] + 1 < sd[k]) {
                cd[k] = (sc[k] + 1) % sd[k];
                RC_OK(hint_cart_rank(sub, cd, &want_dst));
            }
            memcpy(cd, sc, sizeof cd);
            if (sp[k] || sc[k] - 1 >= 0) {
                cd[k] = (sc[k] - 1 + sd[k]) % sd[k];
                RC_OK(hint_cart_rank(sub, cd, &want_src));
            }
            RC_CHECK(src == want_src && dst == want_dst);
            RC_OK(hint_sendrecv(&rank, 1, HINT_INT, dst, 7, &got, 1, HINT_INT, src, 7, sub, HINT_STATUS_IGNORE));
            RC_CHECK(got == (src == HINT_PROC_NULL ? -1 : src));
        }
        /* a cart_sub of a cart_sub keeps going: drop every dimension left */
        int none[MAXD] = {0};
        hint_group self;
        RC_OK(hint_cart_sub(sub, none, &self));
        RC_OK(hint_group_size(self, &size));
        RC_CHECK(size == 1);
        RC_OK(hint_cartdim_get(self, &nd));
        RC_CHECK(nd == 0);
        RC_OK(hint_group_free(&self));
        RC_OK(hint_group_free(&sub));
    }
    RC_EXPECT(hint_cart_sub(cart, NULL, &(hint_group){0}), ndims > 0 ? HINT_ERR_ARG : HINT_SUCCESS);
    RC_EXPECT(hint_cart_get(cart, ndims - 1, gd, gp, gc), ndims > 0 ? HINT_ERR_ARG : HINT_SUCCESS);
    RC_OK(hint_group_free(&cart));
}

/* Asymmetric dist graph: rank r sends to r+1 and r+2 (mod P), and receives from r-1 only
   when r is even (in-lists need not mirror out-lists in hint's graphs; the neighbour
   collectives need them to, but the queries do not). */
static void check_graph(void)
{
    int dests[2] = {(rc_rank + 1) % P, (rc_rank + 2) % P};
    int src[1] = {(rc_rank - 1 + P) % P};
    int indeg = rc_rank % 2 == 0 ? 1 : 0;
    hint_group gr;
    RC_OK(hint_graph_create_adjacent(HINT_WORLD, indeg, src, 2, dests, 0, &gr));
    int kind, in, out, s[4] = {-9, -9, -9, -9}, d[4] = {-9, -9, -9, -9};
    RC_OK(hint_topo_test(gr, &kind));
    RC_CHECK(kind == HINT_DIST_GRAPH);
    RC_OK(hint_graph_neighbors_count(gr, &in, &out));
    RC_CHECK(in == indeg && out == 2);
    RC_OK(hint_graph_neighbors(gr, 4, s, 4, d));
    RC_CHECK(d[0] == dests[0] && d[1] == dests[1] && d[2] == -9);
    RC_CHECK(indeg == 0 ? s[0] == -9 : (s[0] == src[0] && s[1] == -9));
    RC_EXPECT(hint_graph_neighbors(gr, 4, s, 1, d), HINT_ERR_ARG);
    RC_EXPECT(hint_graph_neighbors_count(gr, NULL, &out), HINT_ERR_ARG);
    hint_group dup;
    RC_OK(hint_group_dup(gr, &dup));
    RC_OK(hint_topo_test(dup, &kind));
    RC_CHECK(kind == HINT_DIST_GRAPH);
    RC_OK(hint_group_free(&dup));
    RC_OK(hint_group_free(&gr));
    /* a cart is not a dist graph; a plain group has no topology */
    int dims[1] = {P}, per[1] = {1};
    hint_group c;
    RC_OK(hint_cart_create(HINT_WORLD, 1, dims, per, 0, &c));
    RC_EXPECT(hint_graph_neighbors_count(c, &in, &out), HINT_ERR_TOPOLOGY);
    RC_EXPECT(hint_graph_neighbors(c, 4, s, 4, d), HINT_ERR_TOPOLOGY);
    RC_OK(hint_group_free(&c));
    RC_OK(hint_topo_test(HINT_WORLD, &kind));
    RC_CHECK(kind == HINT_UNDEFINED);
    RC_EXPECT(hint_graph_neighbors_count(HINT_WORLD, &in, &out), HINT_ERR_TOPOLOGY);
    RC_EXPECT(hint_cart_get(HINT_WORLD, 4, dims, per, s), HINT_ERR_TOPOLOGY);
    RC_EXPECT(hint_cart_sub(HINT_WORLD, per, &c), HINT_ERR_TOPOLOGY);
    RC_EXPECT(hint_topo_test(HINT_WORLD, NULL), HINT_ERR_ARG);
    RC_EXPECT(hint_topo_test(HINT_GROUP_NULL, &kind), HINT_ERR_GROUP);
    hint_group sp;
    RC_OK(hint_group_split(HINT_WORLD, 0, 0, &sp));
    RC_OK(hint_topo_test(sp, &kind));
    RC_CHECK(kind == HINT_UNDEFINED);
    RC_OK(hint_group_free(&sp));
}

static void check_about(void)
{
    int ma, mi, pa, len;
    RC_OK(hint_get_version(&ma, &mi, &pa));
    RC_CHECK(ma == HINT_VERSION_MAJOR && mi == HINT_VERSION_MINOR && pa == HINT_VERSION_PATCH);
    char s[32];
    snprintf(s, sizeof s, "%d.%d.%d", ma, mi, pa);
    RC_CHECK(strcmp(s, HINT_VERSION_STRING) == 0);
    RC_EXPECT(hint_get_version(NULL, &mi, &pa), HINT_ERR_ARG);
    char name[HINT_MAX_PROCESSOR_NAME];
    memset(name, 'x', sizeof name);
    RC_OK(hint_get_processor_name(name, &len));
    RC_CHECK(len > 0 && len < HINT_MAX_PROCESSOR_NAME && (int)strlen(name) == len);
    RC_EXPECT(hint_get_processor_name(NULL, &len), HINT_ERR_ARG);
    int lv, flag;
    RC_OK(hint_query_thread(&lv));
    RC_CHECK(lv == HINT_THREAD_SERIALIZED);
    RC_OK(hint_is_thread_main(&flag));
    RC_CHECK(flag == 1);
}

/* HINT_THREAD_SERIALIZED: a second thread makes calls while the main one waits for it, then
   the other way round, rounds of p2p and collectives in turn. */
static pthread_mutex_t turn_lock = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg)
{
    int *round = arg;
    pthread_mutex_lock(&turn_lock);
    int flag = -1, v = rc_rank + *round, sum = 0;
    RC_OK(hint_is_thread_main(&flag));
    RC_CHECK(flag == 0);
    RC_OK(hint_allreduce(&v, &sum, 1, HINT_INT, HINT_SUM, HINT_WORLD));
    RC_CHECK(sum == P * (P - 1) / 2 + P * *round);
    int got = -1, next = (rc_rank + 1) % P, prev = (rc_rank - 1 + P) % P;
    double *big = malloc(100000 * sizeof *big), *in = malloc(100000 * sizeof *in);
    for (int i = 0; i < 100000; i++)
        big[i] = rc_rank * 1e6 + i;
    RC_OK(hint_sendrecv(&rc_rank, 1, HINT_INT, next, 3, &got, 1, HINT_INT, prev, 3, HINT_WORLD, HINT_STATUS_IGNORE));
    RC_CHECK(got == prev);
    RC_OK(hint_sendrecv(big, 100000, HINT_DOUBLE, next, 4, in, 100000, HINT_DOUBLE, prev, 4, HINT_WORLD,
                        HINT_STATUS_IGNORE));
    RC_CHECK(in[0] == prev * 1e6 && in[99999] == prev * 1e6 + 99999);
    free(big);
    free(in);
    pthread_mutex_unlock(&turn_lock);
    return NULL;
}

static void check_threads(void)
{
    for (int round = 0; round < 6; round++) {
        pthread_t t;
        int r = round;
        RC_CHECK(pthread_create(&t, NULL, worker, &r) == 0);
        RC_CHECK(pthread_join(t, NULL) == 0);
        RC_OK(hint_barrier(HINT_WORLD)); /* main thread's turn */
    }
}

static void check_errhandler_return(void)
{
    int h;
    RC_OK(hint_group_get_errhandler(HINT_WORLD, &h));
    RC_CHECK(h == HINT_ERRORS_RETURN);
    RC_EXPECT(hint_group_set_errhandler(HINT_WORLD, 0), HINT_ERR_ARG);
    RC_EXPECT(hint_group_set_errhandler(HINT_GROUP_NULL, HINT_ERRORS_RETURN), HINT_ERR_GROUP);
    RC_EXPECT(hint_group_get_errhandler(HINT_WORLD, NULL), HINT_ERR_ARG);
    /* a RETURN group: bad calls return their codes */
    int v = 0;
    RC_EXPECT(hint_send(&v, 1, HINT_INT, P, 0, HINT_WORLD), HINT_ERR_RANK);
    RC_EXPECT(hint_send(&v, 1, HINT_INT, 0, -5, HINT_WORLD), HINT_ERR_TAG);
    RC_EXPECT(hint_bcast(&v, 1, HINT_INT, P, HINT_WORLD), HINT_ERR_ROOT);
    /* inheritance: a FATAL parent gives its children FATAL, a dup too; setting back works */
    hint_group a, b, c;
    RC_OK(hint_group_dup(HINT_WORLD, &a));
    RC_OK(hint_group_set_errhandler(a, HINT_ERRORS_ARE_FATAL));
    RC_OK(hint_group_get_errhandler(a, &h));
    RC_CHECK(h == HINT_ERRORS_ARE_FATAL);
    RC_OK(hint_group_get_errhandler(HINT_WORLD, &h));
    RC_CHECK(h == HINT_ERRORS_RETURN);
    RC_OK(hint_group_split(a, rc_rank % 2, 0, &b));
    RC_OK(hint_group_get_errhandler(b, &h));
    RC_CHECK(h == HINT_ERRORS_ARE_FATAL);
    RC_OK(hint_group_dup(b, &c));
    RC_OK(hint_group_get_errhandler(c, &h));
    RC_CHECK(h == HINT_ERRORS_ARE_FATAL);
    RC_OK(hint_group_set_errhandler(c, HINT_ERRORS_RETURN));
    RC_EXPECT(hint_send(&v, 1, HINT_INT, 0, -5, c), HINT_ERR_TAG);
    RC_OK(hint_group_free(&c));
    RC_OK(hint_group_free(&b));
    RC_OK(hint_group_free(&a));
    /* many groups with a handler made and freed: the table does not keep dead ones */
    RC_OK(hint_group_set_errhandler(HINT_WORLD, HINT_ERRORS_ARE_FATAL));
    for (int i = 0; i < 200; i++) {
        RC_OK(hint_group_dup(HINT_WORLD, &a));
        RC_OK(hint_group_get_errhandler(a, &h));
        RC_CHECK(h == HINT_ERRORS_ARE_FATAL);
        RC_OK(hint_group_set_errhandler(a, HINT_ERRORS_RETURN));
        RC_EXPECT(hint_send(&v, 1, HINT_INT, P, 0, a), HINT_ERR_RANK);
        RC_OK(hint_group_free(&a));
    }
    RC_OK(hint_group_set_errhandler(HINT_WORLD, HINT_ERRORS_RETURN));
}

/* A row group made FATAL; its member 1 sends to a rank past its size. */
static void fatal_in_row(void)
{
    hint_group row;
    RC_OK(hint_group_split(HINT_WORLD, 0, 0, &row));
    RC_OK(hint_group_set_errhandler(row, HINT_ERRORS_ARE_FATAL));
    int v = 1, target = rc_rank == 1 || P == 1 ? P + 3 : 0;
    RC_OK(hint_barrier(row));
    if (rc_rank == 1 || P == 1) {
        printf("jobid=%s\n", getenv("HINT_JOBID") ? getenv("HINT_JOBID") : "none");
        fflush(stdout);
        hint_send(&v, 1, HINT_INT, target, 0, row);
        RC_FAIL("hint_send to rank %d returned on a fatal group", target);
    }
    hint_recv(&v, 1, HINT_INT, 1, 0, row, HINT_STATUS_IGNORE); /* the others wait: the abort ends them */
    RC_FAIL("the receive returned although rank 1 failed");
}

/* A FATAL dup of the world (the world stays RETURN): rank 1's receive is too small for what rank
   0 sends, so its hint_wait fails (HINT_ERR_TRUNCATE, 8) and the error is raised on the
   request's group, not the world's. */
static void fatal_in_wait(void)
{
    hint_group g;
    RC_OK(hint_group_dup(HINT_WORLD, &g));
    RC_OK(hint_group_set_errhandler(g, HINT_ERRORS_ARE_FATAL));
    int v[8] = {0};
    if (rc_rank == 0)
        RC_OK(hint_send(v, 8, HINT_INT, 1, 5, g));
    if (rc_rank == 1) {
        printf("jobid=%s\n", getenv("HINT_JOBID") ? getenv("HINT_JOBID") : "none");
        fflush(stdout);
        hint_request r;
        RC_OK(hint_irecv(v, 1, HINT_INT, 0, 5, g, &r));
        hint_wait(&r, HINT_STATUS_IGNORE);
        RC_FAIL("a truncated receive's wait returned on a fatal group");
    }
    hint_barrier(g); /* the others wait here until the abort ends them */
    RC_FAIL("the barrier returned although rank 1 failed");
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "all";
    int provided = -1;
    if (strcmp(what, "env-fatal") != 0) { /* there, these would end the job */
        RC_EXPECT(hint_init_thread(NULL, NULL, 7, &provided), HINT_ERR_ARG);
        RC_EXPECT(hint_init_thread(NULL, NULL, HINT_THREAD_MULTIPLE, NULL), HINT_ERR_ARG);
    }
    RC_OK(hint_init_thread(NULL, NULL, HINT_THREAD_MULTIPLE, &provided));
    RC_CHECK(provided == HINT_THREAD_SERIALIZED);
    RC_OK(hint_group_rank(HINT_WORLD, &rc_rank));
    RC_OK(hint_group_size(HINT_WORLD, &P));
    if (strcmp(what, "fatal") == 0)
        fatal_in_row();
    if (strcmp(what, "fatal-wait") == 0)
        fatal_in_wait();
    if (strcmp(what, "env-fatal") == 0) {
        int v = 0, h;
        RC_OK(hint_group_get_errhandler(HINT_WORLD, &h));
        RC_CHECK(h == HINT_ERRORS_ARE_FATAL);
        printf("jobid=%s\n", getenv("HINT_JOBID") ? getenv("HINT_JOBID") : "none");
        fflush(stdout);
        hint_send(&v, 1, HINT_INT, 0, -5, HINT_WORLD);
        RC_FAIL("a bad tag returned under HINT_ERRORS=fatal");
    }
    check_about();
    check_errhandler_return();
    check_graph();
    for (int nd = 1; nd <= 3; nd++) {
        check_cart_sub(nd, 0);
        check_cart_sub(nd, 1);
    }
    check_threads();
    RC_OK(hint_finalize());
    if (rc_rank == 0)
        printf("ok topo_misc\n");
    return 0;
}
