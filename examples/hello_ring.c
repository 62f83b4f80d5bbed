/*
 * examples/hello_ring.c — the smallest real hint job: every rank passes a token around the ring
 * (each adds its rank), then all ranks exchange one value with every other rank, and rank 0
 * prints what it got beside what it should have got.
 *
 *   hintrun -n 4 build/examples/hello_ring
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hint.h"

static int fail(const char *what, int st)
{
    fprintf(stderr, "hello_ring: %s: %s\n", what, hint_strerror(st));
    return 1;
}

int main(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: hintrun -n N hello_ring\n"
               "Passes a token around the ring of ranks and exchanges a value between every pair;\n"
               "rank 0 prints the results and whether they are right. Exit 0 when they are.\n");
        return 0;
    }
    int st = hint_init(&argc, &argv);
    if (st != HINT_SUCCESS)
        return fail("hint_init", st);
    int rank, size;
    hint_group_rank(HINT_WORLD, &rank);
    hint_group_size(HINT_WORLD, &size);

    /* 1. token around the ring: rank 0 starts it, everyone adds its rank */
    long token = 0;
    if (rank == 0) {
        if (size > 1) {
            hint_send(&token, 1, HINT_LONG, 1 % size, 0, HINT_WORLD);
            hint_recv(&token, 1, HINT_LONG, size - 1, 0, HINT_WORLD, HINT_STATUS_IGNORE);
        }
    } else {
        hint_recv(&token, 1, HINT_LONG, rank - 1, 0, HINT_WORLD, HINT_STATUS_IGNORE);
        token += rank;
        hint_send(&token, 1, HINT_LONG, (rank + 1) % size, 0, HINT_WORLD);
    }

    /* 2. all pairs: rank r sends 100*r + p to rank p */
    long *out = malloc((size_t)size * sizeof *out), *in = malloc((size_t)size * sizeof *in);
    hint_request *req = malloc(2 * (size_t)size * sizeof *req);
    for (int p = 0; p < size; p++) {
        out[p] = 100L * rank + p;
        hint_irecv(&in[p], 1, HINT_LONG, p, 1, HINT_WORLD, &req[p]);
        hint_isend(&out[p], 1, HINT_LONG, p, 1, HINT_WORLD, &req[size + p]);
    }
    st = hint_waitall(2 * (size_t)size, req, HINT_STATUSES_IGNORE);
    int bad = st != HINT_SUCCESS;
    for (int p = 0; p < size; p++)
        bad |= in[p] != 100L * p + rank;

    /* 3. rank 0 collects every rank's verdict */
    int verdicts = bad;
    if (rank == 0) {
        for (int p = 1; p < size; p++) {
            int v;
            hint_recv(&v, 1, HINT_INT, p, 2, HINT_WORLD, HINT_STATUS_IGNORE);
            verdicts += v;
        }
        long want = (long)size * (size - 1) / 2;
        int ok = token == want && verdicts == 0;
        printf("hint %s: %d ranks\n", HINT_VERSION_STRING, size);
        printf("  ring token sum      %ld (expected %ld)\n", token, want);
        printf("  all-pairs exchange  %d of %d ranks received every value right\n", size - verdicts, size);
        printf("%s\n", ok ? "OK" : "FAILED");
        bad = !ok;
    } else {
        hint_send(&verdicts, 1, HINT_INT, 0, 2, HINT_WORLD);
    }
    free(out);
    free(in);
    free(req);
    hint_finalize();
    return bad;
}
