/*
 * tests/ranks/mismatch.c — collectives whose members disagree (issue 13, item 3), run as ranks
 * under hintrun:
 *   mismatch algorithms   each shared-heap and staged algorithm, forced on every rank, with one
 *                         rank passing another count (and, for rooted operations, another root):
 *                         HINT_ERR_MISMATCH on the ranks that can see it (every rank, but for the
 *                         staged rooted ones whose side leaves without reading), never a copy
 *                         past a peer's bytes; then the same call agreed runs right
 *   mismatch checked      HINT_COLL_CHECK=1, default algorithms: counts, roots, ops and the v
 *                         variants' per-peer counts differ: HINT_ERR_MISMATCH on every rank
 * After every mismatch the group still works: an agreed call of the same operation and an
 * allreduce give the right results.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hint.h"
#include "tests/common/rankcheck.h"

int rc_rank;
static int P;

/* Who must see a mismatch: every rank; the root (rank 0); rank 1, whose arguments differ;
   ranks 0 and 1 (both act as roots); nobody (the staged scatter's two roots read nothing). */
enum seen { SEEN_ALL, SEEN_ROOT, SEEN_DIFFERING, SEEN_ROOTS, SEEN_NONE };

static long *lbuf(size_t n, long v)
{
    long *p = hint_malloc(n * sizeof *p + 8);
    if (p == NULL)
        RC_FAIL("hint_malloc of %zu longs", n);
    for (size_t i = 0; i < n; i++)
        p[i] = v + (long)i;
    return p;
}

/* One call of op with `count` longs per block (or per message) and root `root`; the v variants
   take `count` from every rank except that rank 1 sends (and is expected to receive) `odd`
   where its count differs. */
static int call(const char *op, size_t count, int root, hint_op rop, size_t odd_pair)
{
    size_t n = count * (size_t)P + 16;
    long *s = lbuf(n, rc_rank * 1000), *r = lbuf(n, -1);
    size_t *cnt = malloc(4 * (size_t)P * sizeof *cnt), *dsp = cnt + P, *rcnt = dsp + P, *rdsp = rcnt + P;
    for (int p = 0; p < P; p++) {
        cnt[p] = rcnt[p] = count;
        dsp[p] = rdsp[p] = (size_t)p * (count + 1);
    }
    /* v variants: rank 1 thinks it sends odd_pair to rank 0 (allgatherv: to everyone, its own
       block included, so that its own arguments agree), the others expect count */
    if (odd_pair && rc_rank == 1) {
        cnt[0] = odd_pair;
        if (!strcmp(op, "allgatherv"))
            rcnt[1] = odd_pair;
    }
    int st;
    if (!strcmp(op, "allreduce"))
        st = hint_allreduce(s, r, count, HINT_LONG, rop, HINT_WORLD);
    else if (!strcmp(op, "reduce"))
        st = hint_reduce(s, r, count, HINT_LONG, rop, root, HINT_WORLD);
    else if (!strcmp(op, "bcast"))
        st = hint_bcast(r, count, HINT_LONG, root, HINT_WORLD);
    else if (!strcmp(op, "gather"))
        st = hint_gather(s, count, HINT_LONG, r, count, HINT_LONG, root, HINT_WORLD);
    else if (!strcmp(op, "scatter"))
        st = hint_scatter(s, count, HINT_LONG, r, count, HINT_LONG, root, HINT_WORLD);
    else if (!strcmp(op, "allgather"))
        st = hint_allgather(s, count, HINT_LONG, r, count, HINT_LONG, HINT_WORLD);
    else if (!strcmp(op, "alltoall"))
        st = hint_alltoall(s, count, HINT_LONG, r, count, HINT_LONG, HINT_WORLD);
    else if (!strcmp(op, "reduce_scatter_block"))
        st = hint_reduce_scatter_block(s, r, count, HINT_LONG, rop, HINT_WORLD);
    else if (!strcmp(op, "alltoallv"))
        st = hint_alltoallv(s, cnt, dsp, HINT_LONG, r, rcnt, rdsp, HINT_LONG, HINT_WORLD);
    else if (!strcmp(op, "allgatherv"))
        st = hint_allgatherv(s, rc_rank == 1 && odd_pair ? odd_pair : count, HINT_LONG, r, rcnt, rdsp, HINT_LONG,
                             HINT_WORLD);
    else if (!strcmp(op, "gatherv"))
        st = hint_gatherv(s, rc_rank == 1 && odd_pair ? odd_pair : count, HINT_LONG, r, rcnt, rdsp, HINT_LONG, root,
                          HINT_WORLD);
    else if (!strcmp(op, "scatterv"))
        st = hint_scatterv(s, cnt, dsp, HINT_LONG, r, rc_rank == 1 && odd_pair ? odd_pair : count, HINT_LONG, root,
                           HINT_WORLD);
    else
        RC_FAIL("no call for %s", op);
    /* nothing was written past the receive area this rank described */
    size_t described = !strcmp(op, "bcast") || !strcmp(op, "allreduce") || !strcmp(op, "reduce") ? count
                       : !strcmp(op, "scatter") || !strcmp(op, "reduce_scatter_block")        ? count
                                                                                               : count * (size_t)P + (size_t)P;
    if (strcmp(op, "bcast") != 0)
        for (size_t i = described; i < n; i++)
            if (r[i] != -1 + (long)i)
                RC_FAIL("%s wrote element %zu past the %zu this rank described", op, i, described);
    hint_free(s);
    hint_free(r);
    free(cnt);
    return st;
}

/* The agreed call after a mismatch: the group's shared state is in step again. */
static void still_works(const char *op, size_t count)
{
    RC_OK(call(op, count, 0, HINT_SUM, 0));
    long x = rc_rank + 1, y = 0;
    RC_OK(hint_allreduce(&x, &y, 1, HINT_LONG, HINT_SUM, HINT_WORLD));
    RC_CHECK(y == (long)P * (P + 1) / 2);
}

static void expect_seen(int st, enum seen seen, int root, const char *what)
{
    bool must = seen == SEEN_ALL || (seen == SEEN_ROOT && rc_rank == root) ||
                (seen == SEEN_DIFFERING && rc_rank == 1) || (seen == SEEN_ROOTS && rc_rank <= 1);
    if (must && st != HINT_ERR_MISMATCH)
        RC_FAIL("%s: returned %d (%s), expected HINT_ERR_MISMATCH", what, st, hint_strerror(st));
    if (!must && st != HINT_SUCCESS && st != HINT_ERR_MISMATCH)
        RC_FAIL("%s: returned %d (%s)", what, st, hint_strerror(st));
}

struct forced {
    const char *op, *alg;
    size_t count;       /* longs per block: staged ones small, heap ones large */
    enum seen on_count; /* who sees rank 1's other count */
    bool rooted;
    enum seen on_root;  /* who sees rank 1 name itself the root */
};

static const struct forced forced[] = {
    {"allreduce", "staged", 8, SEEN_ALL, false, SEEN_NONE},
    {"allreduce", "heap", 4096, SEEN_ALL, false, SEEN_NONE},
    {"reduce", "staged", 8, SEEN_ROOT, true, SEEN_ROOTS},
    {"reduce", "heap", 4096, SEEN_ALL, true, SEEN_ALL},
    {"bcast", "heap", 4096, SEEN_ALL, true, SEEN_ALL},
    {"gather", "staged", 8, SEEN_ROOT, true, SEEN_ROOTS},
    {"gather", "heap", 4096, SEEN_ALL, true, SEEN_ALL},
    {"scatter", "staged", 8, SEEN_DIFFERING, true, SEEN_NONE},
    {"scatter", "heap", 4096, SEEN_ALL, true, SEEN_ALL},
    {"allgather", "staged", 8, SEEN_ALL, false, SEEN_NONE},
    {"allgather", "morton", 512, SEEN_ALL, false, SEEN_NONE},
    {"alltoall", "staged", 8, SEEN_ALL, false, SEEN_NONE},
    {"alltoall", "row", 512, SEEN_ALL, false, SEEN_NONE},
    {"alltoall", "column", 512, SEEN_ALL, false, SEEN_NONE},
    {"alltoall", "hilbert", 512, SEEN_ALL, false, SEEN_NONE},
    {"alltoall", "morton", 512, SEEN_ALL, false, SEEN_NONE},
    {"reduce_scatter_block", "staged", 8, SEEN_ALL, false, SEEN_NONE},
    {"reduce_scatter_block", "heap", 4096, SEEN_ALL, false, SEEN_NONE},
    {"alltoallv", "row", 512, SEEN_ALL, false, SEEN_NONE},
    {"alltoallv", "morton", 512, SEEN_ALL, false, SEEN_NONE},
    {"allgatherv", "morton", 512, SEEN_ALL, false, SEEN_NONE},
};

static bool is_v(const char *op)
{
    return !strcmp(op, "alltoallv") || !strcmp(op, "allgatherv") || !strcmp(op, "gatherv") || !strcmp(op, "scatterv");
}

static void t_algorithms(void)
{
    for (size_t i = 0; i < sizeof forced / sizeof forced[0]; i++) {
        const struct forced *f = &forced[i];
        RC_OK(hint_coll_set(f->op, f->alg));
        char what[128];
        /* rank 1 passes one more element per block (v variants: to rank 0 only) */
        snprintf(what, sizeof what, "%s %s, rank 1's count differs", f->op, f->alg);
        int st = is_v(f->op) ? call(f->op, f->count, 0, HINT_SUM, f->count + 1)
                             : call(f->op, rc_rank == 1 ? f->count + 1 : f->count, 0, HINT_SUM, 0);
        expect_seen(st, f->on_count, 0, what);
        still_works(f->op, f->count);
        if (f->rooted) {
            /* rank 1 names itself the root: it and the true root both act as roots */
            snprintf(what, sizeof what, "%s %s, rank 1's root differs", f->op, f->alg);
            st = call(f->op, f->count, rc_rank == 1 ? 1 : 0, HINT_SUM, 0);
            expect_seen(st, f->on_root, 0, what);
            still_works(f->op, f->count);
        }
        if (!strcmp(f->op, "allreduce")) {
            snprintf(what, sizeof what, "%s %s, rank 1's op differs", f->op, f->alg);
            st = call(f->op, f->count, 0, rc_rank == 1 ? HINT_MAX : HINT_SUM, 0);
            expect_seen(st, SEEN_ALL, 0, what);
            still_works(f->op, f->count);
        }
        RC_OK(hint_coll_set(f->op, "auto"));
    }
}

/* HINT_COLL_CHECK=1: every operation under its default algorithm, every kind of mismatch. */
static void t_checked(void)
{
    static const char *const ops[] = {"allreduce", "reduce", "bcast", "gather", "scatter", "allgather", "alltoall",
                                      "reduce_scatter_block", "alltoallv", "allgatherv", "gatherv", "scatterv"};
    static const size_t counts[] = {1, 300, 20000};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        const char *op = ops[i];
        for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
            size_t c = counts[k];
            char what[128];
            snprintf(what, sizeof what, "checked %s of %zu, rank 1's count differs", op, c);
            int st = is_v(op) ? call(op, c, 0, HINT_SUM, c + 3) : call(op, rc_rank == 1 ? c + 3 : c, 0, HINT_SUM, 0);
            expect_seen(st, SEEN_ALL, 0, what);
            still_works(op, c);
            bool rooted = !strcmp(op, "reduce") || !strcmp(op, "bcast") || !strcmp(op, "gather") ||
                          !strcmp(op, "scatter") || !strcmp(op, "gatherv") || !strcmp(op, "scatterv");
            if (rooted) {
                snprintf(what, sizeof what, "checked %s of %zu, rank 1's root differs", op, c);
                expect_seen(call(op, c, rc_rank == 1 ? 1 : 0, HINT_SUM, 0), SEEN_ALL, 0, what);
                still_works(op, c);
            }
            if (!strcmp(op, "allreduce") || !strcmp(op, "reduce")) {
                snprintf(what, sizeof what, "checked %s of %zu, rank 1's op differs", op, c);
                expect_seen(call(op, c, 0, rc_rank == 1 ? HINT_MIN : HINT_SUM, 0), SEEN_ALL, 0, what);
                still_works(op, c);
            }
        }
    }
    /* different operations on different ranks */
    long x = 1, y[64];
    int st = rc_rank == 1 ? hint_bcast(&x, 1, HINT_LONG, 0, HINT_WORLD)
                          : hint_allreduce(&x, y, 1, HINT_LONG, HINT_SUM, HINT_WORLD);
    expect_seen(st, SEEN_ALL, 0, "checked bcast against allreduce");
    still_works("allreduce", 1);
}

int main(int argc, char **argv)
{
    RC_OK(hint_init(&argc, &argv));
    RC_OK(hint_group_rank(HINT_WORLD, &rc_rank));
    RC_OK(hint_group_size(HINT_WORLD, &P));
    if (argc < 2 || !strcmp(argv[1], "--help")) {
        printf("usage: mismatch algorithms|checked   (run under hintrun with at least 2 ranks)\n");
        RC_OK(hint_finalize());
        return argc < 2;
    }
    if (P < 2)
        RC_FAIL("needs at least 2 ranks");
    if (!strcmp(argv[1], "algorithms"))
        t_algorithms();
    else if (!strcmp(argv[1], "checked"))
        t_checked();
    else
        RC_FAIL("unknown mode %s", argv[1]);
    RC_OK(hint_finalize());
    if (rc_rank == 0)
        printf("ok mismatch %s\n", argv[1]);
    return 0;
}
