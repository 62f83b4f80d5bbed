/*
 * tests/ranks/groups.c — groups under hintrun: split (even/odd, undefined, keys reversing the
 * order), split_type node, create from a list, dup, translate, and that traffic of different
 * groups never matches even with equal tags and sources.
 */
#include <stdlib.h>
#include <string.h>

#include "hint.h"
#include "tests/common/rankcheck.h"

int rc_rank;
static int P;

/* Sum of ranks of g over a ring of sendrecvs, checking every step's source. */
static int ring_sum(hint_group g)
{
    int r, n;
    RC_OK(hint_group_rank(g, &r));
    RC_OK(hint_group_size(g, &n));
    int sum = r, token = r;
    for (int i = 1; i < n; i++) {
        int in;
        hint_status st;
        RC_OK(hint_sendrecv(&token, 1, HINT_INT, (r + 1) % n, 0, &in, 1, HINT_INT, (r + n - 1) % n, 0, g, &st));
        RC_CHECK(st.source == (r + n - 1) % n);
        sum += in;
        token = in;
    }
    return sum;
}

static void check_split(void)
{
    hint_group g;
    /* odd/even, key reversing the order */
    RC_OK(hint_group_split(HINT_WORLD, rc_rank % 2, -rc_rank, &g));
    int r, n;
    RC_OK(hint_group_rank(g, &r));
    RC_OK(hint_group_size(g, &n));
    int expect_n = (P - rc_rank % 2 + 1) / 2;
    RC_CHECK(n == expect_n);
    /* members with the same color sorted by key = -rank: highest world rank first */
    int higher = 0;
    for (int w = rc_rank + 2; w < P; w += 2)
        higher++;
    RC_CHECK(r == higher);
    RC_CHECK(ring_sum(g) == n * (n - 1) / 2);
    int w0 = r, wb;
    RC_OK(hint_group_translate(g, 1, &w0, HINT_WORLD, &wb));
    RC_CHECK(wb == rc_rank);
    RC_OK(hint_group_free(&g));
    RC_CHECK(g == HINT_GROUP_NULL);

    /* undefined color gives no group */
    RC_OK(hint_group_split(HINT_WORLD, rc_rank == 0 ? HINT_UNDEFINED : 1, 0, &g));
    if (rc_rank == 0)
        RC_CHECK(g == HINT_GROUP_NULL);
    else {
        RC_OK(hint_group_size(g, &n));
        RC_CHECK(n == P - 1);
        int t = 0, out;
        RC_OK(hint_group_translate(HINT_WORLD, 1, &t, g, &out));
        RC_CHECK(out == HINT_UNDEFINED);
        RC_OK(hint_group_free(&g));
    }
    /* a bad color is an error on that rank, and nobody hangs */
    RC_EXPECT(hint_group_split(HINT_WORLD, rc_rank == 0 ? -3 : 0, 0, &g), rc_rank == 0 ? HINT_ERR_ARG : HINT_SUCCESS);
    if (g != HINT_GROUP_NULL)
        RC_OK(hint_group_free(&g));
}

static void check_node_dup_create(void)
{
    hint_group node, dup, sub;
    RC_OK(hint_group_split_type(HINT_WORLD, HINT_SPLIT_NODE, 0, &node));
    int n;
    RC_OK(hint_group_size(node, &n));
    /* the node's ranks as hintrun placed them (--nodes K: a block of the world) */
    const char *local = getenv("HINT_LOCAL_SIZE");
    RC_CHECK(n == (local ? atoi(local) : P));
    RC_OK(hint_group_dup(HINT_WORLD, &dup));
    /* same tag, same source, three groups: each receive gets its own group's value; a ring in
       each group (the node group is a block of the world, in world order) */
    int nrank;
    RC_OK(hint_group_rank(node, &nrank));
    int size[3] = {P, P, n}, me[3] = {rc_rank, rc_rank, nrank}, first[3] = {0, 0, rc_rank - nrank};
    int vals[3] = {100 + rc_rank, 200 + rc_rank, 300 + rc_rank}, got[3] = {0};
    hint_request req[6];
    hint_group gs[3] = {HINT_WORLD, dup, node};
    for (int i = 2; i >= 0; i--)
        RC_OK(hint_irecv(&got[i], 1, HINT_INT, (me[i] + size[i] - 1) % size[i], 7, gs[i], &req[i]));
    for (int i = 0; i < 3; i++)
        RC_OK(hint_isend(&vals[i], 1, HINT_INT, (me[i] + 1) % size[i], 7, gs[i], &req[3 + i]));
    RC_OK(hint_waitall(6, req, NULL));
    for (int i = 0; i < 3; i++)
        RC_CHECK(got[i] == (i + 1) * 100 + first[i] + (me[i] + size[i] - 1) % size[i]);

    /* create: the ranks from 1 up, in reverse order, called by those ranks only */
    if (rc_rank >= 1) {
        int *list = malloc((size_t)P * sizeof *list);
        for (int i = 0; i < P - 1; i++)
            list[i] = P - 1 - i;
        RC_OK(hint_group_create(HINT_WORLD, P - 1, list, &sub));
        int r;
        RC_OK(hint_group_rank(sub, &r));
        RC_CHECK(r == P - 1 - rc_rank);
        RC_CHECK(ring_sum(sub) == (P - 1) * (P - 2) / 2);
        RC_OK(hint_group_free(&sub));
        free(list);
    }
    int bad[2] = {0, 0};
    RC_EXPECT(hint_group_create(HINT_WORLD, 2, bad, &sub), HINT_ERR_RANK);
    bad[1] = P;
    RC_EXPECT(hint_group_create(HINT_WORLD, 2, bad, &sub), HINT_ERR_RANK);
    RC_EXPECT(hint_group_split_type(HINT_WORLD, 99, 0, &sub), HINT_ERR_ARG);
    RC_OK(hint_group_free(&dup));
    RC_OK(hint_group_free(&node));
    RC_EXPECT(hint_group_free(&node), HINT_ERR_GROUP);
}

/* Mixed-radix reordering: rank r of [2, P/2] under order [0, 1] (level 0 fastest) gets the
   rank Alg. 2 gives; the reordered group still passes messages. */
static void check_reorder(void)
{
    hint_group g;
    if (P % 2 != 0 || P < 4) {
        int h[1] = {P}, order[1] = {0};
        RC_OK(hint_group_reorder(HINT_WORLD, 1, h, order, &g));
        int r;
        RC_OK(hint_group_rank(g, &r));
        RC_CHECK(r == rc_rank);
        RC_OK(hint_group_free(&g));
        return;
    }
    int h[2] = {2, P / 2}, order[2] = {0, 1}, coords[2], want;
    RC_OK(hint_mr_coords(2, h, rc_rank, coords));
    RC_OK(hint_mr_rank(2, h, coords, order, &want));
    RC_OK(hint_group_reorder(HINT_WORLD, 2, h, order, &g));
    int r, n;
    RC_OK(hint_group_rank(g, &r));
    RC_OK(hint_group_size(g, &n));
    RC_CHECK(n == P && r == want);
    RC_CHECK(ring_sum(g) == P * (P - 1) / 2);
    RC_OK(hint_group_free(&g));
    int bad[2] = {3, P};
    RC_EXPECT(hint_group_reorder(HINT_WORLD, 2, bad, order, &g), HINT_ERR_TOPOLOGY);
    int twice[2] = {0, 0};
    RC_EXPECT(hint_group_reorder(HINT_WORLD, 2, h, twice, &g), HINT_ERR_TOPOLOGY);
}

/* Split by socket and NUMA node: with HINT_TOPO_FILE the test decides where ranks are
   (tests/ranks/topo4.txt: 4 ranks, 2 sockets, 2 NUMA nodes each socket); else the real machine. */
static void check_split_socket(void)
{
    hint_group s, n;
    RC_OK(hint_group_split_type(HINT_WORLD, HINT_SPLIT_SOCKET, 0, &s));
    RC_OK(hint_group_split_type(HINT_WORLD, HINT_SPLIT_NUMA, 0, &n));
    int ss, ns;
    RC_OK(hint_group_size(s, &ss));
    RC_OK(hint_group_size(n, &ns));
    if (getenv("HINT_TOPO_FILE")) {
        RC_CHECK(ss == 2 && ns == 1);
        int w[1] = {0}, in_s[1];
        RC_OK(hint_group_translate(s, 1, w, HINT_WORLD, in_s));
        RC_CHECK(in_s[0] == (rc_rank / 2) * 2); /* ranks 0,1 on socket 0; 2,3 on socket 1 */
    } else {
        RC_CHECK(ss >= 1 && ss <= P && ns >= 1 && ns <= ss);
    }
    RC_CHECK(ring_sum(s) == ss * (ss - 1) / 2);
    RC_OK(hint_group_free(&s));
    RC_OK(hint_group_free(&n));
}

int main(int argc, char **argv)
{
    RC_OK(hint_init(&argc, &argv));
    RC_OK(hint_group_rank(HINT_WORLD, &rc_rank));
    RC_OK(hint_group_size(HINT_WORLD, &P));
    if (rc_rank == 0 && getenv("HINT_JOBID"))
        printf("jobid=%s\n", getenv("HINT_JOBID"));
    check_split();
    check_node_dup_create();
    check_reorder();
    check_split_socket();
    RC_OK(hint_finalize());
    if (rc_rank == 0)
        printf("ok groups\n");
    return 0;
}
