/*
 * tests/unit/env_rank.c — a rank that only starts and stops hint, for check_env_reject.py:
 * prints what hint_init returned; exit status 0 when it succeeded, 3 when it failed.
 */
#include <stdio.h>

#include "hint.h"

int main(int argc, char **argv)
{
    int st = hint_init(&argc, &argv);
    printf("hint_init: %s\n", hint_strerror(st));
    if (st != HINT_SUCCESS)
        return 3;
    int x = 1, sum = 0;
    st = hint_allreduce(&x, &sum, 1, HINT_INT, HINT_SUM, HINT_WORLD);
    printf("allreduce: %s, %d\n", hint_strerror(st), sum);
    return hint_finalize() == HINT_SUCCESS && st == HINT_SUCCESS ? 0 : 1;
}
