/*
 * collectives/check.c — HINT_COLL_CHECK=1: before each collective runs, its members compare what
 * MPI requires them to agree on (as MPICH's collective checking does), so a mismatched call
 * returns HINT_ERR_MISMATCH on every rank instead of moving wrong bytes or hanging.
 *
 * Round 1 gathers every member's signature (operation, root, reduction op and element kind, the
 * bytes of its block) on every member, through the runtime's own exchange, so every member judges
 * the common fields alike. The v variants' per-peer counts are judged by the members that hold
 * them: gatherv's and scatterv's root against each member's block, allgatherv's members against
 * each sender's block, and for alltoallv every pair swaps the count it sends the other. Round 2
 * makes the verdict common. Cost: two rounds of the linear exchange (2(P-1) messages at group
 * rank 0 each) plus, for alltoallv, P-1 pairs of messages per rank; docs/COLLECTIVES.md has the
 * measured price.
 *
 * Without HINT_COLL_CHECK the shared-heap and staged algorithms still compare signatures where
 * they meet anyway (coll_heap_meet, staging.c); the message-based ones rely on the transport's
 * truncation check.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>

#include "collectives/algs.h"
#include "collectives/sched.h"
#include "runtime/p2p.h"
#include "runtime/runtime.h"

enum { SIG_OP, SIG_ROOT, SIG_REDUCE, SIG_KIND, SIG_BYTES_LO, SIG_BYTES_HI, SIG_INTS };
static_assert(SIG_INTS == COLL_SIG_INTS, "sched.h's count of a signature's ints");

int coll_check_state = -1;

int coll_check_read(void)
{
    coll_check_state = (int)rt_cfg_long("HINT_COLL_CHECK");
    return coll_check_state;
}

void coll_signature_ints(const struct coll_args *a, int *sig)
{
    sig[SIG_OP] = a->op_id;
    sig[SIG_ROOT] = a->root;
    sig[SIG_REDUCE] = a->op ? a->op->id : -1;
    sig[SIG_KIND] = a->basic;
    sig[SIG_BYTES_LO] = (int)(uint32_t)a->block;
    sig[SIG_BYTES_HI] = (int)(uint32_t)((uint64_t)a->block >> 32);
}

static size_t sig_bytes(const int *sig)
{
    return (size_t)(uint32_t)sig[SIG_BYTES_LO] | (size_t)(uint32_t)sig[SIG_BYTES_HI] << 32;
}

static int refuse_if_null(const void *p) { return p ? HINT_SUCCESS : HINT_ERR_NOMEM; }

static bool per_peer_counts(int op_id)
{
    return op_id == COLL_GATHERV || op_id == COLL_SCATTERV || op_id == COLL_ALLGATHERV || op_id == COLL_ALLTOALLV;
}

/* What this member can tell from everyone's signatures; NULL when it sees no mismatch. *common
   is set when every member tells the same (then only group rank 0 says it). */
const char *coll_judge_signatures(const struct coll_args *a, const int *all, bool *common)
{
    *common = true;
    const int *first = all;
    for (int p = 1; p < a->size; p++) {
        const int *s = all + (size_t)p * SIG_INTS;
        if (s[SIG_OP] != first[SIG_OP])
            return "members called different collectives";
        if (s[SIG_ROOT] != first[SIG_ROOT])
            return "members passed different roots";
        if (s[SIG_REDUCE] != first[SIG_REDUCE] || s[SIG_KIND] != first[SIG_KIND])
            return "members passed different reduction ops or element kinds";
        if (!per_peer_counts(a->op_id) && sig_bytes(s) != sig_bytes(first))
            return "members passed different counts (count times type size)";
    }
    *common = false;
    bool root = a->rank == a->root;
    for (int p = 0; p < a->size; p++) {
        size_t theirs = sig_bytes(all + (size_t)p * SIG_INTS);
        if (a->op_id == COLL_GATHERV && root && a->rcounts[p] != theirs)
            return "a member's send count differs from the root's receive count for it";
        if (a->op_id == COLL_SCATTERV && root && a->scounts[p] != theirs)
            return "a member's receive count differs from the root's send count for it";
        if (a->op_id == COLL_ALLGATHERV && a->rcounts[p] != theirs)
            return "a member's send count differs from this rank's receive count for it";
    }
    return NULL;
}

/* alltoallv: every pair swaps the bytes each sends the other. */
static int judge_pairs(const struct coll_args *a, int tag, const char **why)
{
    int st = HINT_SUCCESS;
    for (int k = 1; k < a->size; k++) {
        int to = (a->rank + k) % a->size, from = (a->rank - k + a->size) % a->size;
        uint64_t sent = a->scounts[to], got = 0;
        CHECK_GOTO(p2p_sendrecv_bytes(&sent, sizeof sent, to, &got, sizeof got, from, tag, a->g), out);
        if (got != a->rcounts[from] && *why == NULL)
            *why = "a member's send count differs from its receiver's count";
    }
out:
    return st;
}

int coll_check_call(const struct coll_args *a)
{
    int mine[SIG_INTS], *all = malloc((size_t)a->size * SIG_INTS * sizeof *all);
    const char *why = NULL;
    bool common = false, any = false;
    int st;
    CHECK_GOTO(refuse_if_null(all), out);
    coll_signature_ints(a, mine);
    CHECK_GOTO(grp_allgather_ints(a->g, mine, SIG_INTS, all, GRP_TAG_CHECK), out);
    why = coll_judge_signatures(a, all, &common);
    /* the common fields judged alike everywhere: all members are in alltoallv, or none pairs */
    if (why == NULL && a->op_id == COLL_ALLTOALLV)
        CHECK_GOTO(judge_pairs(a, GRP_TAG_CHECK, &why), out);
    int bad = why != NULL;
    CHECK_GOTO(grp_allgather_ints(a->g, &bad, 1, all, GRP_TAG_CHECK), out);
    for (int p = 0; p < a->size; p++)
        any = any || all[p];
    if (why && (!common || a->rank == 0))
        st = coll_mismatch(a, why);
    else
        st = any ? HINT_ERR_MISMATCH : HINT_SUCCESS;
out:
    free(all);
    return st;
}
