/*
 * tests/ranks/heap_numa.c — each rank's heap partition is bound to its NUMA domain (issue 23):
 * the kernel's own answer, get_mempolicy(MPOL_F_ADDR) on the first and last page of every local
 * rank's partition, must be MPOL_BIND to the node heap_partition_node() names for that rank
 * (gathered), and a page this rank touches in a hint_malloc'd buffer must sit on that node
 * (move_pages). With one domain (no HINT_VIRTUAL_SOCKETS, one real node) nothing is bound: the
 * policy is the default. Prints "# SKIP" and exits 77 where the kernel answers no NUMA query.
 *
 *   heap_numa DOMAINS    DOMAINS: how many the job was started with (1: expect no binding)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hint.h"
#include "runtime/heap.h"
#include "tests/common/rankcheck.h"

int rc_rank;

#define MPOL_DEFAULT_ 0
#define MPOL_BIND_ 2
#define MPOL_F_ADDR_ 2
#define MAXNODE 1024

static int policy_at(const void *addr, int *node)
{
    unsigned long mask[MAXNODE / (8 * sizeof(unsigned long))] = {0};
    int mode = -1;
    if (syscall(SYS_get_mempolicy, &mode, mask, (unsigned long)MAXNODE, addr, (unsigned long)MPOL_F_ADDR_) != 0)
        return -errno;
    *node = -1;
    for (int n = 0; n < MAXNODE; n++)
        if (mask[n / (8 * sizeof(unsigned long))] >> (n % (8 * sizeof(unsigned long))) & 1) {
            if (*node >= 0)
                RC_FAIL("policy at %p names more than one node (%d and %d)", addr, *node, n);
            *node = n;
        }
    return mode;
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help")) {
        printf("usage: hintrun -n P heap_numa DOMAINS\n");
        return argc < 2;
    }
    int domains = atoi(argv[1]), P;
    RC_OK(hint_init(&argc, &argv));
    RC_OK(hint_group_rank(HINT_WORLD, &rc_rank));
    RC_OK(hint_group_size(HINT_WORLD, &P));
    if (!heap.mapped) {
        if (rc_rank == 0)
            printf("# SKIP: no shared heap in this job (HINT_HEAP=private?)\n");
        hint_finalize();
        return 77;
    }
    int mine = heap_partition_node(), node = -1, *all = malloc((size_t)P * sizeof *all);
    RC_OK(hint_allgather(&mine, 1, HINT_INT, all, 1, HINT_INT, HINT_WORLD));
    int st = policy_at(heap.base, &node);
    if (st == -ENOSYS || st == -EPERM) {
        if (rc_rank == 0)
            printf("# SKIP: get_mempolicy refused (%s): the kernel gives no NUMA answer here\n", strerror(-st));
        hint_finalize();
        return 77;
    }
    RC_CHECK(heap.nlocal == P); /* one node */
    for (int r = 0; r < P; r++) {
        const char *part = heap.base + (size_t)r * heap.part;
        if (domains > 1)
            RC_CHECK(all[r] >= 0);
        else
            RC_CHECK(all[r] == -1);
        for (int end = 0; end < 2; end++) {
            const char *at = end ? part + heap.part - 4096 : part;
            int mode = policy_at(at, &node);
            if (all[r] >= 0 && (mode != MPOL_BIND_ || node != all[r]))
                RC_FAIL("rank %d's partition at +%zu: policy %d node %d, expected MPOL_BIND to node %d", r,
                        (size_t)(at - part), mode, node, all[r]);
            if (all[r] < 0 && mode != MPOL_DEFAULT_)
                RC_FAIL("rank %d's partition: policy %d, expected the default (one domain)", r, mode);
        }
    }
    /* a touched page of this rank's heap memory is on its node */
    char *buf = hint_malloc(1 << 20);
    memset(buf, 1, 1 << 20);
    void *page = buf + (1 << 19);
    int status = -1;
    if (syscall(SYS_move_pages, 0, 1ul, &page, NULL, &status, 0) != 0)
        RC_FAIL("move_pages: %s", strerror(errno));
    if (mine >= 0 && status != mine)
        RC_FAIL("a touched page of rank %d's partition is on node %d, expected %d", rc_rank, status, mine);
    hint_free(buf);
    free(all);
    RC_OK(hint_finalize());
    if (rc_rank == 0)
        printf("ok heap_numa: %d domain(s), rank 0's partition on node %d (page on %d)\n", domains, mine, status);
    return 0;
}
