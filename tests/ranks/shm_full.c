/*
 * tests/ranks/shm_full.c — /dev/shm fills up after the start (run by check_shm_full.sh in a small
 * private tmpfs): rank 0 takes all but a little of /dev/shm with a file, then every rank
 * allocates 200 MiB in blocks of mixed sizes and writes every byte. No rank may die of SIGBUS;
 * past what /dev/shm can back, allocations come from glibc (HINT_HEAP_STRICT=1: NULL, ENOMEM)
 * long before the partition itself is full; hint_malloc gives NULL; collectives on old and new
 * groups still work; every byte reads back. Prints one summary line per rank. Without the
 * malloc override (sanitizer builds) the program allocates with hint_malloc and falls back to
 * malloc itself, as malloc would.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "hint.h"
#include "tests/common/malloc_heap.h"
#include "tests/common/rankcheck.h"

int rc_rank;

#define MAX_BLOCKS 4096
#define WANT ((size_t)200 << 20)
#define LEAVE ((size_t)40 << 20) /* what rank 0 leaves free in /dev/shm: room for one more block */

static const char *fill_path = "/dev/shm/hint-test-shm-full";

static size_t shm_free(void)
{
    struct statvfs v;
    RC_CHECK(statvfs("/dev/shm", &v) == 0);
    return (size_t)v.f_bavail * v.f_frsize;
}

static void fill_shm(void)
{
    size_t avail = shm_free();
    RC_CHECK(avail > LEAVE);
    int fd = open(fill_path, O_CREAT | O_EXCL | O_RDWR, 0600);
    RC_CHECK(fd >= 0);
    RC_CHECK(posix_fallocate(fd, 0, (off_t)(avail - LEAVE)) == 0);
    close(fd);
}

/* 1 MiB, 24 KiB, 20 MiB (a huge block), 3 MiB, in turn */
static size_t size_of(int i)
{
    static const size_t sizes[] = {1 << 20, 24 << 10, 20 << 20, 3 << 20};
    return sizes[i % 4];
}

/* malloc, or without the override what it does: the heap, else (unless strict) glibc's */
static void *allocate(size_t n, int strict)
{
    if (MALLOC_ON_HEAP)
        return malloc(n);
    void *p = hint_malloc(n);
    if (p == NULL && !strict)
        p = malloc(n);
    if (p == NULL)
        errno = ENOMEM;
    return p;
}

static void release(void *p)
{
    if (!MALLOC_ON_HEAP && hint_mem_shared(p))
        hint_free(p);
    else
        free(p);
}

static unsigned char pattern(int i) { return (unsigned char)(rc_rank * 31 + i * 7 + 1); }

int main(int argc, char **argv)
{
    int strict = getenv("HINT_HEAP_STRICT") && atoi(getenv("HINT_HEAP_STRICT")) == 1;
    size_t part = (size_t)128 << 20; /* HINT_HEAP_SIZE in check_shm_full.sh */
    RC_OK(hint_init(&argc, &argv));
    RC_OK(hint_group_rank(HINT_WORLD, &rc_rank));
    int P;
    RC_OK(hint_group_size(HINT_WORLD, &P));
    void *first = heap_buffer(1 << 20); /* the heap's first block is reserved before /dev/shm fills */
    RC_CHECK(first && hint_mem_shared(first));
    long mine = rc_rank + 1, sum = 0, want = (long)P * (P + 1) / 2;
    RC_OK(hint_allreduce(&mine, &sum, 1, HINT_LONG, HINT_SUM, HINT_WORLD)); /* the world's staging area */
    RC_CHECK(sum == want);
    if (rc_rank == 0)
        fill_shm();
    RC_OK(hint_barrier(HINT_WORLD));

    static unsigned char *blk[MAX_BLOCKS];
    size_t total = 0, on_heap = 0, off_heap = 0;
    int n = 0, nulls = 0;
    while (total < WANT && n < MAX_BLOCKS) {
        size_t sz = size_of(n);
        errno = 0;
        blk[n] = allocate(sz, strict);
        if (blk[n] == NULL) {
            RC_CHECK(strict && errno == ENOMEM);
            nulls++;
            break;
        }
        memset(blk[n], pattern(n), sz); /* every byte: a SIGBUS here is the failure */
        if (hint_mem_shared(blk[n]))
            on_heap += sz;
        else
            off_heap += sz;
        total += sz;
        n++;
    }
    /* /dev/shm, not the partition, was the limit: the heap stopped well short of 128 MiB */
    RC_CHECK(on_heap > 0 && on_heap < part - ((size_t)32 << 20));
    if (strict)
        RC_CHECK(nulls == 1 && off_heap == 0);
    else
        RC_CHECK(nulls == 0 && off_heap > 0 && total >= WANT);
    RC_CHECK(hint_malloc((size_t)40 << 20) == NULL);

    /* collectives on the world (staging made before), with a buffer on the heap and one off it */
    long *src = first;
    src[0] = mine;
    sum = 0;
    RC_OK(hint_allreduce(src, &sum, 1, HINT_LONG, HINT_SUM, HINT_WORLD));
    RC_CHECK(sum == want);
    if (n > 0 && !hint_mem_shared(blk[n - 1])) {
        long *off = (long *)blk[n - 1];
        off[0] = mine;
        sum = 0;
        RC_OK(hint_allreduce(off, &sum, 1, HINT_LONG, HINT_SUM, HINT_WORLD));
        RC_CHECK(sum == want);
        memset(off, pattern(n - 1), sizeof *off); /* restore for the check below */
    }
    /* a new group needs a staging area on the heap: right, or out of memory on every rank alike */
    hint_group g;
    RC_OK(hint_group_dup(HINT_WORLD, &g));
    sum = 0;
    int st = hint_allreduce(&mine, &sum, 1, HINT_LONG, HINT_SUM, g), all[64];
    RC_CHECK(st == HINT_SUCCESS ? sum == want : st == HINT_ERR_NOMEM);
    RC_CHECK(P <= 64);
    RC_OK(hint_allgather(&st, 1, HINT_INT, all, 1, HINT_INT, HINT_WORLD));
    for (int r = 0; r < P; r++)
        RC_CHECK(all[r] == st);
    RC_OK(hint_group_free(&g));

    size_t bad = 0;
    for (int i = 0; i < n; i++) {
        for (size_t j = 0; j < size_of(i); j++)
            bad += blk[i][j] != pattern(i);
        release(blk[i]);
    }
    RC_CHECK(bad == 0);
    heap_buffer_free(first);
    RC_OK(hint_barrier(HINT_WORLD));
    if (rc_rank == 0)
        unlink(fill_path);
    printf("rank %d: %zu MiB on the shared heap, %zu MiB from glibc, %d NULL, new group's allreduce: %s, "
           "every byte right\n", rc_rank, on_heap >> 20, off_heap >> 20, nulls, hint_strerror(st));
    RC_OK(hint_finalize());
    return 0;
}
