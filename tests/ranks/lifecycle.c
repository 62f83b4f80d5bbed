/*
 * tests/ranks/lifecycle.c — calls before init and after finalize return HINT_ERR_NOT_INITIALIZED;
 * init twice is harmless; wtime moves; strerror knows every code. Runs under hintrun or alone
 * (a singleton world of one).
 */
#include <string.h>

#include "hint.h"
#include "tests/common/rankcheck.h"

int rc_rank;

static void check_not_initialized(void)
{
    int x = 0, flag = -1;
    hint_group g;
    RC_EXPECT(hint_send(&x, 1, HINT_INT, 0, 0, HINT_WORLD), HINT_ERR_NOT_INITIALIZED);
    RC_EXPECT(hint_recv(&x, 1, HINT_INT, 0, 0, HINT_WORLD, NULL), HINT_ERR_NOT_INITIALIZED);
    RC_EXPECT(hint_group_rank(HINT_WORLD, &x), HINT_ERR_NOT_INITIALIZED);
    RC_EXPECT(hint_group_split(HINT_WORLD, 0, 0, &g), HINT_ERR_NOT_INITIALIZED);
    RC_EXPECT(hint_finalize(), HINT_ERR_NOT_INITIALIZED);
    RC_OK(hint_initialized(&flag));
    RC_CHECK(flag == 0);
    RC_CHECK(hint_world() == HINT_GROUP_NULL);
}

int main(int argc, char **argv)
{
    check_not_initialized();
    RC_EXPECT(hint_initialized(NULL), HINT_ERR_ARG);
    RC_OK(hint_init(&argc, &argv));
    RC_OK(hint_init(&argc, &argv));
    int flag = 0, size;
    RC_OK(hint_initialized(&flag));
    RC_CHECK(flag == 1);
    RC_OK(hint_group_rank(HINT_WORLD, &rc_rank));
    RC_OK(hint_group_size(HINT_WORLD, &size));
    double t0 = hint_wtime();
    while (hint_wtime() - t0 < 1e-3)
        ;
    RC_CHECK(hint_wtime() > t0 && hint_wtick() > 0 && hint_wtick() < 1e-3);
    for (int c = 0; c < HINT_ERR_LASTCODE; c++)
        RC_CHECK(strcmp(hint_strerror(c), "unknown status code") != 0);
    RC_CHECK(strcmp(hint_strerror(-4), "unknown status code") == 0);
    RC_OK(hint_finalize());
    check_not_initialized();
    RC_OK(hint_finalized(&flag));
    RC_CHECK(flag == 1);
    RC_EXPECT(hint_init(&argc, &argv), HINT_ERR_NOT_INITIALIZED);
    printf("ok lifecycle rank %d of %d\n", rc_rank, size);
    return 0;
}
