/*
 * runtime/heap.c — the node's shared heap object and the allocator over this rank's partition.
 *
 * Local rank 0 creates /hint-<uid>-<jobid>-heap<node> (mode 0600, sparse: pages are taken only
 * when touched) after checking that all of it would fit in /dev/shm's free space, so a full
 * /dev/shm is a clear message now rather than a SIGBUS later. Every rank maps the whole object
 * at a 64 MiB-aligned address (mimalloc's segment alignment; unaligned, its first allocation
 * crashes) and the last rank to map it unlinks the name, as for the node segment. Each rank's
 * partition is an exclusive mimalloc arena; each thread allocates through its own mimalloc heap
 * in that arena (a mimalloc heap belongs to one thread). Addresses differ between processes, so
 * pointers cross as offsets (heap_offset / heap_at).
 *
 * mimalloc may not decommit: on a shared tmpfs mapping a decommit would drop pages that other
 * ranks still see.
 */
#include <errno.h>
#include <fcntl.h>
#include <mimalloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "runtime/heap.h"
#include "runtime/runtime.h"
#include "transport/shm/shm.h"

struct heap_state heap;
static mi_arena_id_t arena;
static __thread mi_heap_t *thread_heap;

static size_t round_down(size_t x, size_t a) { return x / a * a; }

static size_t shm_free_bytes(void)
{
    struct statvfs vfs;
    if (statvfs("/dev/shm", &vfs) != 0)
        return SIZE_MAX;
    return (size_t)vfs.f_bavail * vfs.f_frsize;
}

/* Bytes per rank: HINT_HEAP_SIZE (rounded up), else half of /dev/shm's free space shared by the node's ranks,
   at most 1 GiB; whole multiples of 64 MiB. */
static int choose_partition(int nlocal, size_t *part)
{
    size_t avail = shm_free_bytes();
    size_t asked = rt_env_size("HINT_HEAP_SIZE", 0);
    size_t want;
    if (asked > 0)
        want = asked + HEAP_ALIGN - 1;
    else {
        want = avail == SIZE_MAX ? (1UL << 30) : avail / 2 / (size_t)nlocal;
        if (want > (1UL << 30))
            want = 1UL << 30;
    }
    *part = round_down(want, HEAP_ALIGN);
    size_t total = *part * (size_t)nlocal;
    if (*part == 0 || (avail != SIZE_MAX && total > avail)) {
        RT_ERR("heap", "the shared heap needs at least %zu MiB per rank x %d ranks = %zu MiB in /dev/shm but "
               "only %zu MiB are free; enlarge /dev/shm (docker: --shm-size), set HINT_HEAP_SIZE smaller, "
               "or run with HINT_HEAP=private (no shared heap: slower collectives); the job cannot start",
               (*part ? *part : HEAP_ALIGN) >> 20, nlocal, ((*part ? *part : HEAP_ALIGN) * (size_t)nlocal) >> 20,
               avail >> 20);
        return HINT_ERR_NOMEM;
    }
    return HINT_SUCCESS;
}

/* Map fd's whole object at a HEAP_ALIGN-aligned address. */
static char *map_aligned(int fd, size_t size)
{
    size_t span = size + HEAP_ALIGN;
    char *r = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED)
        return NULL;
    char *a = (char *)(((uintptr_t)r + HEAP_ALIGN - 1) & ~(uintptr_t)(HEAP_ALIGN - 1));
    if (a > r)
        munmap(r, (size_t)(a - r));
    if (a + size < r + span)
        munmap(a + size, (size_t)(r + span - (a + size)));
    char *m = mmap(a, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED | MAP_NORESERVE, fd, 0);
    if (m == MAP_FAILED) {
        munmap(a, size);
        return NULL;
    }
    return m;
}

static int create_object(void)
{
    int fd = shm_open(heap.name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0) {
        RT_ERR("heap", "shm_open(%s) failed: %s", heap.name, strerror(errno));
        return rt_from_errno(errno);
    }
    int st = HINT_SUCCESS;
    if (ftruncate(fd, (off_t)heap.size) != 0) {
        RT_ERR("heap", "sizing %s to %zu MiB failed: %s", heap.name, heap.size >> 20, strerror(errno));
        st = HINT_ERR_NOMEM;
    } else if ((heap.base = map_aligned(fd, heap.size)) == NULL) {
        RT_ERR("heap", "mapping %zu MiB of %s failed: %s", heap.size >> 20, heap.name, strerror(errno));
        st = HINT_ERR_NOMEM;
    }
    close(fd);
    if (st != HINT_SUCCESS)
        shm_unlink(heap.name);
    return st;
}

static int attach_object(void)
{
    int fd = shm_open(heap.name, O_RDWR, 0);
    if (fd < 0) {
        RT_ERR("heap", "the shared heap %s is missing: local rank 0 could not create it (its message says why)",
               heap.name);
        return HINT_ERR_TRANSPORT;
    }
    struct stat sb;
    int st = HINT_SUCCESS;
    if (fstat(fd, &sb) != 0 || (size_t)sb.st_size != heap.size)
        st = HINT_ERR_TRANSPORT;
    else if ((heap.base = map_aligned(fd, heap.size)) == NULL)
        st = HINT_ERR_NOMEM;
    close(fd);
    if (st != HINT_SUCCESS)
        RT_ERR("heap", "attaching the shared heap %s failed", heap.name);
    return st;
}

static int start_arena(void)
{
    mi_option_disable(mi_option_allow_decommit);
    mi_option_disable(mi_option_page_reset);
    mi_option_disable(mi_option_abandoned_page_decommit);
    char *mine = heap.base + (size_t)heap.me * heap.part;
    if (!mi_manage_os_memory_ex(mine, heap.part, true, false, true, -1, true, &arena)) {
        RT_ERR("heap", "mimalloc refused the %zu MiB partition", heap.part >> 20);
        return HINT_ERR_INTERNAL;
    }
    return HINT_SUCCESS;
}

int heap_init(void)
{
    const char *mode = rt_env_str("HINT_HEAP", "shared");
    if (strcmp(mode, "private") == 0)
        return HINT_SUCCESS;
    if (strcmp(mode, "shared") != 0)
        RT_ERR("heap", "HINT_HEAP=%s is neither shared nor private; using shared", mode);
    int st = HINT_SUCCESS;
    heap.nlocal = rt.boot.local_size;
    heap.me = rt.boot.local_rank;
    snprintf(heap.name, sizeof heap.name, "/hint-%u-%s-heap%d", (unsigned)getuid(), rt.boot.jobid, rt.boot.node_id);
    /* Every rank computes the same size only if they see the same free space: rank 0 decides. */
    int create_st = HINT_SUCCESS;
    if (heap.me == 0) {
        create_st = choose_partition(heap.nlocal, &heap.part);
        heap.size = heap.part * (size_t)heap.nlocal;
        if (create_st == HINT_SUCCESS)
            create_st = create_object();
        rt.shm->hdr->heap_part = create_st == HINT_SUCCESS ? heap.part : 0;
    }
    if (!rt.boot.singleton)
        CHECK_GOTO(boot_fence(), out);
    CHECK_GOTO(create_st, out);
    if (heap.me != 0) {
        heap.part = rt.shm->hdr->heap_part;
        heap.size = heap.part * (size_t)heap.nlocal;
        if (heap.part == 0) {
            st = HINT_ERR_NOMEM; /* rank 0 said why */
            goto out;
        }
        CHECK_GOTO(attach_object(), out);
    }
    heap.mapped = true;
    if (atomic_fetch_add(&rt.shm->hdr->heap_attached, 1) + 1 == (uint32_t)heap.nlocal)
        shm_unlink(heap.name);
    CHECK_GOTO(start_arena(), out);
    heap.active = true;
out:
    return st;
}

void heap_stop(void) { heap.active = false; }

static mi_heap_t *my_heap(void)
{
    if (thread_heap == NULL)
        thread_heap = mi_heap_new_in_arena(arena);
    return thread_heap;
}

void *heap_alloc(size_t size, size_t align, bool zero)
{
    if (!heap.active)
        return NULL;
    mi_heap_t *h = my_heap();
    if (h == NULL)
        return NULL;
    if (align > sizeof(void *) * 2)
        return zero ? mi_heap_zalloc_aligned(h, size, align) : mi_heap_malloc_aligned(h, size, align);
    return zero ? mi_heap_zalloc(h, size) : mi_heap_malloc(h, size);
}

void *heap_realloc(void *p, size_t size)
{
    mi_heap_t *h = heap.active ? my_heap() : NULL;
    return h ? mi_heap_realloc(h, p, size) : NULL;
}

void heap_release(void *p) { mi_free(p); }

size_t heap_usable_size(const void *p) { return mi_usable_size(p); }
