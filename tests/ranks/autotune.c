/*
 * tests/ranks/autotune.c — HINT_AUTOTUNE=1: the shared-heap alltoall orders are each tried once
 * plus three times, then one is kept, the same on every rank, and every result along the way is
 * right; a second buffer pair gets its own trial.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "hint.h"
#include "tests/common/malloc_heap.h"
#include "tests/common/rankcheck.h"

int rc_rank;
/* The world spans virtual nodes (hintrun --nodes K, K > 1): autotuning must never try the
   shared-heap orders, which need one node; the defaults' message-based choice runs. */
static bool spans;

static int index_of(const char *name)
{
    static const char *const names[] = {"row", "column", "hilbert", "morton"};
    for (int i = 0; i < 4; i++)
        if (!strcmp(name, names[i]))
            return i;
    return -1;
}

static void run(size_t block, int P, int *kept)
{
    unsigned char *s = heap_buffer(block * (size_t)P), *r = heap_buffer(block * (size_t)P); /* malloc, or hint_malloc */
    const char *prev = NULL;
    int changes = 0;
    for (int it = 0; it < 30; it++) {
        for (int p = 0; p < P; p++)
            memset(s + (size_t)p * block, (rc_rank * 16 + p + it) & 0xff, block);
        RC_OK(hint_alltoall(s, block, HINT_BYTE, r, block, HINT_BYTE, HINT_WORLD));
        for (int p = 0; p < P; p++)
            RC_CHECK(r[(size_t)p * block] == ((p * 16 + rc_rank + it) & 0xff) &&
                     r[(size_t)p * block + block - 1] == ((p * 16 + rc_rank + it) & 0xff));
        const char *ran;
        RC_OK(hint_coll_last("alltoall", &ran));
        RC_CHECK(spans ? index_of(ran) < 0 && strcmp(ran, "staged") != 0 : index_of(ran) >= 0);
        if (it >= 20) { /* long after the trials: one choice, kept */
            if (prev && strcmp(prev, ran) != 0)
                changes++;
        }
        prev = ran;
    }
    RC_CHECK(changes == 0);
    *kept = index_of(prev);
    heap_buffer_free(s);
    heap_buffer_free(r);
}

/* allgather: the Morton algorithms against the message-based ones, one kept everywhere */
static int run_allgather(size_t b, int P)
{
    static const char *const names[] = {"ring", "recursive_doubling", "bruck", "morton", "morton_numa"};
    unsigned char *s = heap_buffer(b), *r = heap_buffer(b * (size_t)P);
    const char *prev = NULL;
    for (int it = 0; it < 40; it++) {
        memset(s, (rc_rank + it) & 0xff, b);
        RC_OK(hint_allgather(s, b, HINT_BYTE, r, b, HINT_BYTE, HINT_WORLD));
        for (int p = 0; p < P; p++)
            RC_CHECK(r[(size_t)p * b] == ((p + it) & 0xff) && r[(size_t)p * b + b - 1] == ((p + it) & 0xff));
        const char *ran;
        RC_OK(hint_coll_last("allgather", &ran));
        RC_CHECK(it < 30 || !prev || strcmp(prev, ran) == 0);
        RC_CHECK(!spans || strncmp(ran, "morton", 6) != 0);
        prev = ran;
    }
    heap_buffer_free(s);
    heap_buffer_free(r);
    for (int i = 0; i < 5; i++)
        if (!strcmp(prev, names[i]))
            return i;
    RC_FAIL("kept %s, which is no allgather candidate", prev);
}

int main(int argc, char **argv)
{
    RC_OK(hint_init(&argc, &argv));
    int P;
    RC_OK(hint_group_rank(HINT_WORLD, &rc_rank));
    RC_OK(hint_group_size(HINT_WORLD, &P));
    spans = getenv("HINT_NNODES") && atoi(getenv("HINT_NNODES")) > 1;
    int kept[3], all[3 * 64];
    run(4096, P, &kept[0]);
    run(300, P, &kept[1]);
    kept[2] = run_allgather(4096, P);
    RC_OK(hint_coll_set("allgather", "ring")); /* forced: the agreement check itself is not tuned */
    RC_OK(hint_allgather(kept, 3, HINT_INT, all, 3, HINT_INT, HINT_WORLD));
    for (int p = 0; p < P; p++) /* every rank kept the same */
        RC_CHECK(all[3 * p] == kept[0] && all[3 * p + 1] == kept[1] && all[3 * p + 2] == kept[2]);
    RC_OK(hint_finalize());
    if (rc_rank == 0)
        printf("ok autotune: kept %d and %d\n", kept[0], kept[1]);
    return 0;
}
