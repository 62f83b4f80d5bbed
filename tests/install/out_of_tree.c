/* tests/install/out_of_tree.c — the out-of-tree program the install tests build against an
   installed hint, as a user would: an allreduce over the world, "sum N of N" on rank 0. */
#include <hint.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    if (hint_init(&argc, &argv) != HINT_SUCCESS)
        return 1;
    int r, n, sum = 0, one = 1;
    hint_group_rank(HINT_WORLD, &r);
    hint_group_size(HINT_WORLD, &n);
    hint_allreduce(&one, &sum, 1, HINT_INT, HINT_SUM, HINT_WORLD);
    if (r == 0)
        printf("sum %d of %d\n", sum, n);
    hint_finalize();
    return sum != n;
}
