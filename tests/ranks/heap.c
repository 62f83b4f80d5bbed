/*
 * tests/ranks/heap.c — the shared heap and the malloc override, run as ranks under hintrun:
 *   heap basics     buffers on the heap after init (not before), every allocation function,
 *                   realloc across the boundary, memory from before init freed after it,
 *                   frees after finalize, a peer reading my buffer through its own mapping
 *   heap threads    8 threads allocating and freeing at once
 *   heap exhaust    a partition filled up: the fallback (HINT_HEAP_STRICT=1: NULL); a piece list
 *                   the heap had no room to copy is not tried again in every call
 *   heap reserve    after a few collectives the node's heap object holds a few MiB per rank in
 *                   /dev/shm, not a 32 MiB block each (pages reserved as mimalloc commits them)
 *   heap calloc     a huge calloc (64 MiB; 12 MiB) on fresh memory reads zero without being
 *                   cleared by hand (few page faults), and again after a dirtied block is freed
 * In a build without the malloc override (AddressSanitizer, -Dmalloc_override=disabled) basics
 * checks that malloc & co. stay off the heap instead, and the others take their heap buffers
 * from hint_malloc (tests/common/malloc_heap.h).
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hint.h"
#include "datatype/datatype.h"
#include "runtime/heap.h"
#include "tests/common/malloc_heap.h"
#include "tests/common/rankcheck.h"

int rc_rank;
static int P;
static hint_type early; /* committed before hint_init: its piece list (7 MiB) is in glibc's memory */
#define EARLY_PIECES 300000

/* Without the override every allocation function stays the C library's (or the sanitizer's). */
static void allocs_stay_private(void *before)
{
    void *m = malloc(100), *c = calloc(10, 10), *a = aligned_alloc(4096, 8192), *pm = NULL;
    RC_CHECK(posix_memalign(&pm, 256, 1000) == 0);
    void *all[] = {m, c, a, pm};
    for (int i = 0; i < 4; i++)
        RC_CHECK(all[i] != NULL && !hint_mem_shared(all[i]));
    before = realloc(before, 100000);
    RC_CHECK(before && !hint_mem_shared(before));
    for (int i = 0; i < 4; i++)
        free(all[i]);
    free(before);
    if (rc_rank == 0)
        printf("heap basics: malloc is not overridden in this build (sanitizer or -Dmalloc_override=disabled); "
               "malloc & co. checked off the heap, hint_malloc on it\n");
}

/* Every allocation function serves from the heap after init; glibc's memory stays glibc's. */
static void allocs_on_heap(void *before)
{
    void *m = malloc(100), *c = calloc(10, 10), *a = aligned_alloc(4096, 8192), *v = valloc(10), *mm = memalign(64, 100);
    void *pm = NULL;
    RC_CHECK(posix_memalign(&pm, 256, 1000) == 0);
    void *all[] = {m, c, a, v, mm, pm};
    for (int i = 0; i < 6; i++)
        RC_CHECK(all[i] != NULL && hint_mem_shared(all[i]));
    RC_CHECK(((uintptr_t)a & 4095) == 0 && ((uintptr_t)pm & 255) == 0 && ((uintptr_t)mm & 63) == 0);
    for (int i = 0; i < 100; i++)
        RC_CHECK(((unsigned char *)c)[i] == 0);
    RC_CHECK(malloc_usable_size(m) >= 100 && malloc_usable_size(before) >= 50);
    RC_CHECK(posix_memalign(&pm, 3, 10) == EINVAL);
    /* realloc across the boundary: glibc memory stays usable and keeps its bytes */
    memset(before, 7, 50);
    before = realloc(before, 100000);
    RC_CHECK(before && ((unsigned char *)before)[49] == 7);
    memset(m, 9, 100);
    m = realloc(m, 3 << 20);
    RC_CHECK(m && hint_mem_shared(m) && ((unsigned char *)m)[99] == 9);
    for (int i = 0; i < 6; i++)
        if (all[i] != all[0])
            free(all[i]);
    free(before);
    free(m);
}

static void basics(void *before)
{
    RC_CHECK(!hint_mem_shared(before));
    if (MALLOC_ON_HEAP)
        allocs_on_heap(before);
    else
        allocs_stay_private(before);
    void *h = hint_malloc(1 << 20);
    RC_CHECK(h && hint_mem_shared(h));
    int on_stack;
    RC_CHECK(!hint_mem_shared(&on_stack) && !hint_mem_shared(NULL));

    /* a peer reads my heap buffer through its own mapping, given only the offset */
    unsigned char *mine = heap_buffer(4096);
    memset(mine, 0x40 + rc_rank, 4096);
    uint64_t off = heap_offset(mine), peer_off;
    RC_CHECK(off != UINT64_MAX);
    int right = (rc_rank + 1) % P, left = (rc_rank + P - 1) % P;
    RC_OK(hint_sendrecv(&off, 1, HINT_UINT64, right, 0, &peer_off, 1, HINT_UINT64, left, 0, HINT_WORLD, NULL));
    const unsigned char *theirs = heap_at(peer_off);
    for (int i = 0; i < 4096; i++)
        RC_CHECK(theirs[i] == 0x40 + left);
    RC_OK(hint_barrier(HINT_WORLD));
    heap_buffer_free(mine);
    hint_free(h);
}

static void *churn(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    void *slot[64] = {0};
    for (int i = 0; i < 20000; i++) {
        int k = rand_r(&seed) % 64;
        if (slot[k]) {
            RC_CHECK(((unsigned char *)slot[k])[0] == (unsigned char)k);
            heap_buffer_free(slot[k]);
            slot[k] = NULL;
        } else {
            size_t n = 1 + (size_t)(rand_r(&seed) % 5000);
            slot[k] = heap_buffer(n);
            RC_CHECK(slot[k] && hint_mem_shared(slot[k]));
            memset(slot[k], k, n);
        }
    }
    for (int k = 0; k < 64; k++)
        heap_buffer_free(slot[k]);
    return NULL;
}

static void threads(void)
{
    pthread_t t[8];
    for (int i = 0; i < 8; i++)
        RC_CHECK(pthread_create(&t[i], NULL, churn, (void *)(uintptr_t)(i + 1 + rc_rank * 100)) == 0);
    for (int i = 0; i < 8; i++)
        pthread_join(t[i], NULL);
}

/* Fill the partition (HINT_HEAP_SIZE=64M) with 4 MiB blocks until one is not on the heap (without
   the override: until hint_malloc gives NULL, and the program falls back to malloc itself). */
static void exhaust(void)
{
    int strict = getenv("HINT_HEAP_STRICT") && atoi(getenv("HINT_HEAP_STRICT")) == 1;
    void *blocks[64];
    int n = 0;
    for (; n < 64; n++) {
        blocks[n] = heap_buffer(4 << 20);
        if (blocks[n] == NULL || !hint_mem_shared(blocks[n]))
            break;
        memset(blocks[n], 1, 4 << 20);
    }
    RC_CHECK(n > 4 && n < 64); /* some fitted, then the partition was full */
    /* the list of a type committed before init, larger than the block that did not fit: the full
       heap refuses its copy once, and it is not tried again while the heap cannot grow (before:
       a heap_alloc in every call) */
    unsigned long tries = dt_iov_heap_tries;
    for (int k = 0; k < 5; k++) {
        size_t npieces;
        uint64_t id;
        enum dt_iov_where where;
        RC_CHECK(dt_iov_shared(early, &npieces, &where, &id) != NULL && where == DT_IOV_PRIVATE && npieces == EARLY_PIECES);
    }
    RC_CHECK(dt_iov_heap_tries - tries == 1);
    if (!MALLOC_ON_HEAP) {
        RC_CHECK(blocks[n] == NULL); /* hint_malloc: NULL, strict or not */
        if (!strict)
            blocks[n] = malloc(4 << 20);
    }
    if (strict) {
        RC_CHECK(blocks[n] == NULL && errno == ENOMEM);
    } else {
        RC_CHECK(blocks[n] != NULL); /* glibc's, with a warning */
        memset(blocks[n], 2, 4 << 20);
        /* collectives still work with a buffer off the heap */
        int *x = blocks[n], y = 0;
        x[0] = 1;
        RC_OK(hint_allreduce(x, &y, 1, HINT_INT, HINT_SUM, HINT_WORLD));
        RC_CHECK(y == P);
        free(blocks[n]);
    }
    for (int i = 0; i < n; i++)
        heap_buffer_free(blocks[i]);
    /* room again */
    void *again = heap_buffer(4 << 20);
    RC_CHECK(again && hint_mem_shared(again));
    heap_buffer_free(again);
}

/* The bytes /dev/shm holds for the node's heap object (found among my descriptors by its size),
   -1 when not found. */
static long long heap_object_bytes(void)
{
    for (int fd = 0; fd < 1024; fd++) {
        struct stat sb;
        if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && (size_t)sb.st_size == heap.size)
            return (long long)sb.st_blocks * 512;
    }
    return -1;
}

/* What the first calls reserve: 8 B and 64 KiB collectives and a 1 MiB buffer, then per rank
   less than half a block (seen: 7.9 MiB at 4 ranks, the plugs' starts 2.1 MiB, block 0's first
   2 MiB, and what mimalloc committed), where a rank reserved its whole first block (32 MiB) and
   the plugs' starts before. */
static void reserve(void)
{
    static char small[8], big[64 << 10];
    char *in = heap_buffer(64 << 10), *out = heap_buffer(64 << 10), *m = heap_buffer(1 << 20);
    RC_CHECK(in && out && m);
    memset(in, 0, 64 << 10);
    memset(m, 1, 1 << 20);
    RC_OK(hint_allreduce(small, small + 4, 1, HINT_INT, HINT_SUM, HINT_WORLD));
    RC_OK(hint_allreduce(in, out, (64 << 10) / 4, HINT_INT, HINT_SUM, HINT_WORLD));
    RC_OK(hint_bcast(big, sizeof big, HINT_BYTE, 0, HINT_WORLD));
    RC_OK(hint_barrier(HINT_WORLD));
    if (rc_rank == 0 && heap.mapped) {
        long long b = heap_object_bytes();
        RC_CHECK(b > 0);
        printf("heap reserve: %d ranks hold %.1f MiB of /dev/shm for the heap (%.1f MiB per rank, %s)\n",
               heap.nlocal, b / 1048576.0, b / 1048576.0 / heap.nlocal,
               heap.lazy ? "reserved as committed" : "a block at a time");
        if (heap.lazy)
            RC_CHECK(b < (long long)heap.nlocal * (16 << 20));
    }
    RC_OK(hint_barrier(HINT_WORLD));
    heap_buffer_free(in);
    heap_buffer_free(out);
    heap_buffer_free(m);
}

static long minor_faults(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt;
}

/* The heap's calloc: calloc with the override, else heap_alloc's zeroing path itself. */
static char *heap_calloc(size_t n) { return MALLOC_ON_HEAP ? calloc(1, n) : heap_alloc(n, 0, true); }

static void all_zero(const char *p, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i += 8)
        if (*(const uint64_t *)(p + i) != 0)
            RC_FAIL("%s: byte %zu of %zu is not zero", what, i, n);
}

/* A huge calloc on memory nobody touched (blocks reserved by this very call) takes few page
   faults: the heap knows those pages read zero and leaves them; before, it cleared all of them
   by hand (64 MiB: 16384 faults and 64 MiB written). The same size again after the block was
   dirtied and freed reuses that memory, which must be cleared: it reads zero. Then 12 MiB (a
   large block inside a segment, below mimalloc's huge size) the same way. */
static void calloc_zero(void)
{
    size_t sizes[] = {(size_t)64 << 20, (size_t)12 << 20};
    if (!heap.active || heap.part < ((size_t)256 << 20)) { /* a small /dev/shm: nothing to test */
        if (rc_rank == 0)
            printf("heap calloc: partition of %zu MiB, too small for the test\n", heap.part >> 20);
        return;
    }
    for (int k = 0; k < 2; k++) {
        size_t n = sizes[k];
        long f0 = minor_faults();
        char *a = heap_calloc(n);
        long fresh_faults = minor_faults() - f0;
        RC_CHECK(a != NULL && hint_mem_shared(a));
        all_zero(a, n, "fresh calloc");
        memset(a, 0xab, n);
        uintptr_t was = (uintptr_t)a; /* compared, never used, after the free */
        heap_buffer_free(a);
        f0 = minor_faults();
        char *b = heap_calloc(n);
        long reused_faults = minor_faults() - f0;
        RC_CHECK(b != NULL);
        all_zero(b, n, "calloc after a dirtied block was freed");
        bool reused = (uintptr_t)b < was + n && was < (uintptr_t)b + n;
        if (rc_rank == 0)
            printf("heap calloc %zu MiB: %ld minor faults fresh, %ld reused (%s)\n", n >> 20, fresh_faults,
                   reused_faults, reused ? "the freed memory" : "elsewhere");
        RC_CHECK(reused); /* the dirtied memory came back: the case to check */
        if (k == 0) /* a new huge block: only the chunks reserved before (the plugs' starts) are cleared */
            RC_CHECK(fresh_faults < 1024);
        heap_buffer_free(b);
    }
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "basics";
    void *before = malloc(50);
    RC_OK(hint_type_vector(EARLY_PIECES, 1, 2, HINT_BYTE, &early));
    RC_OK(hint_type_commit(&early));
    RC_OK(hint_init(&argc, &argv));
    RC_OK(hint_group_rank(HINT_WORLD, &rc_rank));
    RC_OK(hint_group_size(HINT_WORLD, &P));
    void *kept = heap_buffer(1000);
    RC_CHECK(hint_mem_shared(kept));
    if (!strcmp(what, "basics")) {
        basics(before); /* frees it */
    } else {
        free(before); /* glibc's memory from before init, freed after it */
        if (!strcmp(what, "threads"))
            threads();
        else if (!strcmp(what, "exhaust"))
            exhaust();
        else if (!strcmp(what, "reserve"))
            reserve();
        else if (!strcmp(what, "calloc"))
            calloc_zero();
        else
            RC_FAIL("unknown mode %s", what);
    }
    RC_OK(hint_type_free(&early));
    RC_OK(hint_finalize());
    /* after finalize: heap buffers are still valid and freeable (and a program may protect and
       unprotect their pages: libhint's mprotect reserves mimalloc's commits, and must still
       hand these to the kernel); new ones are glibc's */
    long pg = sysconf(_SC_PAGESIZE);
    char *page = (char *)((uintptr_t)kept & ~(uintptr_t)(pg - 1));
    RC_CHECK(mprotect(page, (size_t)pg, PROT_READ) == 0);
    RC_CHECK(mprotect(page, (size_t)pg, PROT_READ | PROT_WRITE) == 0);
    memset(kept, 3, 1000);
    heap_buffer_free(kept);
    void *after = malloc(100);
    RC_CHECK(after && !hint_mem_shared(after));
    free(after);
    RC_CHECK(hint_malloc(10) == NULL);
    if (rc_rank == 0)
        printf("ok heap %s\n", what);
    return 0;
}
