/*
 * runtime/nodes.c — which node each world rank is on. Ranks of a node are consecutive world
 * ranks (hintrun, and the other launchers' block mapping), so a node is a (first, size) pair:
 * each node's local rank 0 publishes its pair in the store and every rank reads the K pairs,
 * O(P·K) store reads for the job, none for one node.
 */
#include <stdio.h>
#include <stdlib.h>

#include "runtime/runtime.h"

static struct {
    int *first; /* first world rank of each node, plus the world size at [nnodes] */
    int *node;  /* node of each world rank */
} N;

static int publish_own_node(void)
{
    char key[32];
    int pair[2] = {rt.boot.rank - rt.boot.local_rank, rt.boot.local_size};
    snprintf(key, sizeof key, "node.%d", rt.boot.node_id);
    return rt.boot.local_rank == 0 ? boot_put(key, pair, sizeof pair) : HINT_SUCCESS;
}

/* Nodes must tile the world in order: node k starts where node k-1 ends. */
static int read_node(int k)
{
    char key[32];
    int pair[2];
    size_t len;
    snprintf(key, sizeof key, "node.%d", k);
    int st = boot_get(key, pair, sizeof pair, &len);
    if (st != HINT_SUCCESS)
        return st;
    if (len != sizeof pair || pair[0] != N.first[k] || pair[1] < 1 || pair[0] + pair[1] > rt.boot.size) {
        RT_ERR("init", "node %d says it holds ranks %d..%d, but the nodes before it end at rank %d: the "
               "launcher must give each node a block of consecutive ranks", k, pair[0], pair[0] + pair[1] - 1,
               N.first[k] - 1);
        return HINT_ERR_BOOTSTRAP;
    }
    N.first[k + 1] = pair[0] + pair[1];
    return HINT_SUCCESS;
}

int rt_nodes_init(void)
{
    int K = rt.boot.nnodes, P = rt.boot.size, st = HINT_SUCCESS;
    N.first = calloc((size_t)K + 1, sizeof *N.first);
    N.node = calloc((size_t)P, sizeof *N.node);
    if (!N.first || !N.node)
        return HINT_ERR_NOMEM;
    N.first[K] = P;
    if (K > 1) {
        CHECK_GOTO(publish_own_node(), out);
        /* a get sees the puts of the last fence (PMIx, PMI-1); hintrun's store would wait */
        CHECK_GOTO(boot_fence(), out);
        for (int k = 0; k < K; k++)
            CHECK_GOTO(read_node(k), out);
        if (N.first[K] != P) {
            RT_ERR("init", "the %d nodes hold %d ranks, but the job has %d", K, N.first[K], P);
            st = HINT_ERR_BOOTSTRAP;
            goto out;
        }
    }
    for (int k = 0; k < K; k++)
        for (int w = N.first[k]; w < N.first[k + 1]; w++)
            N.node[w] = k;
out:
    return st;
}

void rt_nodes_fini(void)
{
    free(N.first);
    free(N.node);
    N.first = N.node = NULL;
}

int rt_node_of(int world) { return N.node[world]; }
int rt_node_first(int node) { return N.first[node]; }
int rt_node_size(int node) { return N.first[node + 1] - N.first[node]; }
bool rt_same_node(int w1, int w2) { return N.node[w1] == N.node[w2]; }
