/*
 * tests/ranks/first_faults.c — the page faults of a first 1 MiB alltoall (issue 18 item 3): the
 * order that writes the peers' receive blocks (column) may take no more faults than the one that
 * reads the peers' send blocks (row), each on buffers this process has never reached in the
 * peers' heaps. Reading a page of a shared file maps the pages around it (the kernel's
 * fault-around); writing maps one page a fault, so column used to take 259 faults a rank at P=2
 * where row took 19, until the copy read one byte per 64 KiB of a peer's block before writing it
 * (collectives/alltoall_order.c, map_peer_block). Where the kernel maps no pages around a fault,
 * both take one a page and the check still holds. Each result is checked too. Run under hintrun.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "hint.h"
#include "tests/common/rankcheck.h"

int rc_rank;
static int P;

#define BLOCK ((size_t)1 << 20)
/* Faults besides the peers' pages: this rank's own slot and bookkeeping, a few pages. */
#define SLACK 32

static long minor_faults(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt;
}

static unsigned char byte_of(int from, int to, size_t i) { return (unsigned char)(from * 31 + to * 7 + i / 4096); }

/* One alltoall of BLOCK bytes a pair by `order`, on fresh buffers each owner has written (so
   their pages exist, as a program's do); returns this rank's faults during the call. */
static long first_alltoall_faults(const char *order)
{
    /* hint_malloc: the shared heap also where malloc is not libhint's (the sanitizer build) */
    unsigned char *s = hint_malloc((size_t)P * BLOCK), *r = hint_malloc((size_t)P * BLOCK);
    RC_CHECK(s != NULL && r != NULL);
    for (int d = 0; d < P; d++)
        for (size_t i = 0; i < BLOCK; i += 4096)
            memset(s + (size_t)d * BLOCK + i, byte_of(rc_rank, d, i), 4096);
    memset(r, 0xee, (size_t)P * BLOCK);
    RC_OK(hint_coll_set("alltoall", order));
    RC_OK(hint_barrier(HINT_WORLD));
    long before = minor_faults();
    RC_OK(hint_alltoall(s, BLOCK, HINT_BYTE, r, BLOCK, HINT_BYTE, HINT_WORLD));
    long faults = minor_faults() - before;
    RC_OK(hint_barrier(HINT_WORLD));
    for (int from = 0; from < P; from++)
        for (size_t i = 0; i < BLOCK; i += 4096)
            if (r[(size_t)from * BLOCK + i] != byte_of(from, rc_rank, i) ||
                r[(size_t)from * BLOCK + i + 4095] != byte_of(from, rc_rank, i))
                RC_FAIL("%s: block from %d, byte %zu: %u, expected %u", order, from, i, r[(size_t)from * BLOCK + i],
                        byte_of(from, rc_rank, i));
    hint_free(s);
    hint_free(r);
    return faults;
}

int main(int argc, char **argv)
{
    RC_OK(hint_init(&argc, &argv));
    RC_OK(hint_group_rank(HINT_WORLD, &rc_rank));
    RC_OK(hint_group_size(HINT_WORLD, &P));
    long row = first_alltoall_faults("row"), column = first_alltoall_faults("column");
    printf("rank %d: first 1 MiB alltoall faults: row %ld, column %ld\n", rc_rank, row, column);
    if (P > 1 && column > row + SLACK)
        RC_FAIL("column took %ld faults where row took %ld: its writes to the peers' blocks are mapped a page "
                "a fault", column, row);
    RC_OK(hint_finalize());
    if (rc_rank == 0)
        printf("ok first_faults\n");
    return 0;
}
