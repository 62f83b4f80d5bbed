/*
 * runtime/heap.c — the node's shared heap object and the allocator over this rank's partition.
 *
 * Local rank 0 creates the object unnamed in /dev/shm (runtime/shmfile.h: mode 0600, sparse:
 * pages are taken only when touched; nothing a crash could leave behind) after checking that all
 * of it would fit in /dev/shm's free space, so a full /dev/shm is a clear message now rather than
 * a SIGBUS later; the others open it through /proc/<pid>/fd of rank 0, as for the node segment.
 * Every rank maps the whole object at a 64 MiB-aligned address (mimalloc's segment alignment;
 * unaligned, its first allocation crashes). Each rank's
 * partition is an exclusive mimalloc arena; each thread allocates through its own mimalloc heap
 * in that arena (a mimalloc heap belongs to one thread). Addresses differ between processes, so
 * pointers cross as offsets (heap_offset / heap_at).
 *
 * mimalloc may not decommit: on a shared tmpfs mapping a decommit would drop pages that other
 * ranks still see.
 *
 * Backing: a page of a tmpfs object that /dev/shm cannot supply when it is first touched kills
 * the process with SIGBUS, and /dev/shm may fill up after the start. So mimalloc only ever uses
 * memory that is reserved with fallocate. It takes memory from the arena one arena block
 * (32 MiB, its segment) at a time, lowest free block first; so every block not yet handed over
 * is held by a "plug", a huge block that fills it exactly (only what mimalloc writes of it, its
 * first 68 KiB, is reserved at start). When mimalloc finds no free block it returns NULL;
 * heap_alloc then has the lowest plugged block(s) unplugged (their first 1 MiB reserved, block
 * 0's first 2 MiB, then their plugs freed) and asks again. A huge block can
 * only be freed at once by the thread that made it, so the plugs belong to a keeper thread that
 * sleeps until asked to free some.
 *
 * Within the blocks handed over, the pages are reserved as mimalloc commits them: the arena is
 * given to mimalloc as not committed (and eager commit is off), so before it uses a range it
 * "commits" it with mprotect(PROT_READ | PROT_WRITE) (mimalloc 2.0's _mi_os_commit on Linux), in
 * 1 MiB pieces within a segment, whole blocks for a huge one. This file defines mprotect: for a
 * range of this rank's partition it reserves the range with fallocate first and fails the
 * commit (ENOMEM) when /dev/shm cannot back it; anything else goes to the kernel. A failed
 * commit makes mimalloc return NULL, except a huge block's, whose failure mimalloc ignores:
 * heap_alloc sees the refusal (a thread-local flag), frees the block (mimalloc has written only
 * its reserved first pages) and fails cleanly. mimalloc's decommit of a block freed to such an
 * arena (madvise MADV_DONTNEED) is made a no-op here too: the pages stay mapped, as they did
 * when the arena was committed. A rank therefore reserves about what it uses (after init and a
 * few collectives 6-8 MiB) rather than 32 MiB at its first allocation, and the last rank's exit
 * has that much less to free. Whether mimalloc's commits reach this mprotect (symbol
 * interposition, as for malloc) is checked at start on the plugs' own commits; where they do
 * not, every block is reserved whole when it is unplugged, as before (heap.lazy false).
 */
#include <errno.h>
#include <fcntl.h>
#include <mimalloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/heap.h"
#include "runtime/runtime.h"
#include "runtime/shmfile.h"
#include "runtime/thread.h"
#include "runtime/transport.h"
#include "topology/topology.h"

struct heap_state heap;
static mi_arena_id_t arena;
static __thread mi_heap_t *thread_heap;

/* mimalloc 2.0's segment, which is also its arena block: the unit the arena hands out. */
#define BLOCK_BYTES ((size_t)32 << 20)
/* A huge block whose segment (64 KiB header + the block) fills exactly one arena block. */
#define PLUG_BYTES ((size_t)31 << 20)
/* What mimalloc writes of a plug: the segment header (one 64 KiB slice; pages 0-5 and 9 of it in
   mimalloc 2.0.9) and the block's first word (at 64 KiB); reserved at start so that making a
   plug cannot fault. */
#define PLUG_TOUCHED ((size_t)68 << 10)
/* Reserved when a block is unplugged, before its plug is freed: its header and the first piece
   mimalloc commits of a new segment (it commits in 1 MiB pieces). */
#define UNPLUG_RESERVE ((size_t)1 << 20)
/* The unit of the lazy reservation's bookkeeping: mimalloc's commit unit (one segment slice). */
#define CHUNK_BYTES ((size_t)64 << 10)
/* The start of block 0 that hint_init maps at once: the first calls' small buffers lie there
   (page faults of the first allreduce at 8 B were at offsets 1.0 to 1.7 MiB). */
#define HEAP_PREFAULT_BYTES ((size_t)2 << 20)

static struct {
    int fd;                /* the heap object, for fallocate; -1 when closed */
    size_t nblocks;        /* arena blocks in my partition */
    size_t next;           /* blocks [0, next) are reserved and mimalloc's; [next, nblocks) plugged */
    void **plug;           /* plug[k] holds block k */
    atomic_uint grown;     /* bumped by every reservation: a thread that failed before it asks again */
    pthread_mutex_t lock;  /* one reservation at a time; the keeper's hand-over */
    pthread_cond_t ask, done;
    size_t free_to;        /* the keeper frees plugs up to here */
    size_t freed_to;       /* ... and says how far it got */
    bool keeper_ready, keeper_ok, quit;
    pthread_t keeper;
} reserve = {.fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER, .ask = PTHREAD_COND_INITIALIZER,
             .done = PTHREAD_COND_INITIALIZER};

/* The reservation as mimalloc commits (the mprotect below). */
static struct {
    bool on;                 /* commits in my partition are reserved here, blocks unplugged unreserved */
    atomic_uint seen;        /* commits in my partition that reached this file's mprotect */
    uint64_t *done;          /* one bit per CHUNK_BYTES of my partition: reserved */
    size_t reserved;         /* bytes of my partition reserved so far */
    pthread_mutex_t lock;    /* the bits and the fallocate calls */
} lazy = {.lock = PTHREAD_MUTEX_INITIALIZER};
static __thread bool making_plugs;   /* the keeper making its plugs: their pages are reserved */
static __thread bool commit_refused; /* a commit in this thread could not be reserved */

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
    size_t asked = rt_cfg_size("HINT_HEAP_SIZE"); /* 0: unset */
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
    int fd, st = shmfile_create("shared heap", &fd);
    if (st != HINT_SUCCESS)
        return st;
    if (ftruncate(fd, (off_t)heap.size) != 0) {
        RT_ERR("heap", "sizing the %s to %zu MiB failed: %s", heap.name, heap.size >> 20, strerror(errno));
        st = HINT_ERR_NOMEM;
    } else if ((heap.base = map_aligned(fd, heap.size)) == NULL) {
        RT_ERR("heap", "mapping %zu MiB of the %s failed: %s", heap.size >> 20, heap.name, strerror(errno));
        st = HINT_ERR_NOMEM;
    }
    if (st != HINT_SUCCESS)
        close(fd);
    else
        reserve.fd = fd; /* kept for fallocate, and for the others to open through /proc */
    return st;
}

static int attach_object(struct shmfile_handle h)
{
    int fd, st = shmfile_open("shared heap", h, &fd);
    if (st != HINT_SUCCESS)
        return st;
    struct stat sb;
    if (fstat(fd, &sb) != 0 || (size_t)sb.st_size != heap.size)
        st = HINT_ERR_TRANSPORT;
    else if ((heap.base = map_aligned(fd, heap.size)) == NULL)
        st = HINT_ERR_NOMEM;
    if (st != HINT_SUCCESS) {
        close(fd);
        RT_ERR("heap", "attaching the %s failed", heap.name);
    } else
        reserve.fd = fd; /* kept for fallocate */
    return st;
}

static int start_arena(void)
{
    mi_option_disable(mi_option_allow_decommit);
    mi_option_disable(mi_option_page_reset);
    mi_option_disable(mi_option_abandoned_page_decommit);
    mi_option_disable(mi_option_eager_commit); /* commit (and so reserve) as pages are used */
    char *mine = heap.base + (size_t)heap.me * heap.part;
    /* not committed: mimalloc commits what it uses first (see mprotect) */
    if (!mi_manage_os_memory_ex(mine, heap.part, false, false, true, -1, true, &arena)) {
        RT_ERR("heap", "mimalloc refused the %zu MiB partition", heap.part >> 20);
        return HINT_ERR_INTERNAL;
    }
    return HINT_SUCCESS;
}

/* ---- NUMA: each partition bound to its owner's domain (the Morton paper's sec. 2.4 assumes
   every receive buffer sits in its owner's memory) ---- */

#define HEAP_MPOL_BIND 2 /* <numaif.h>'s MPOL_BIND; the syscall, so libnuma is not needed */
#define HEAP_MAX_NODES 1024

static int bound_node = -1; /* the node this rank's partition is bound to, -1: not bound */

/* Real NUMA nodes: the highest number in /sys/devices/system/node/online, plus one (1 when the
   file is missing). */
static int real_nodes(void)
{
    FILE *f = fopen("/sys/devices/system/node/online", "r");
    int most = 0, n;
    char sep;
    if (f == NULL)
        return 1;
    while (fscanf(f, "%d", &n) == 1) {
        most = n > most ? n : most;
        if (fscanf(f, "%c", &sep) != 1 || sep == '\n')
            break;
    }
    fclose(f);
    return most + 1;
}

/* The node this rank's partition belongs on, or -1 when the node has one domain. Domains:
   HINT_VIRTUAL_SOCKETS=s cuts the node's ranks into s equal runs (s dividing the ranks, as the
   copy orders do), else HINT_TOPO_FILE's NUMA node, else the real node the rank runs on (only
   asked when there are several). Virtual domains land on real nodes modulo their number (all
   on node 0 of a one-node machine: the binding is then real but changes nothing). */
static int partition_node(void)
{
    int nreal = real_nodes(), numa = 0;
    long s = rt_cfg_long("HINT_VIRTUAL_SOCKETS");
    if (s > 1)
        return heap.nlocal % s == 0 ? (heap.me / (heap.nlocal / (int)s)) % nreal : -1;
    const char *file = rt_cfg_str("HINT_TOPO_FILE");
    bool from_file = file && *file;
    if (!from_file && nreal == 1)
        return -1;
    if (topo_numa_of_self(&numa) != HINT_SUCCESS || numa < 0)
        return -1; /* (hwloc's logical NUMA index: the OS number on the machines seen so far) */
    return numa % nreal;
}

/* mbind this rank's partition to its node before any of its pages exist (plug_all_blocks
   reserves the first); a refusal (no NUMA support, a seccomp filter) is said once and harmless. */
static void bind_partition(void)
{
    int node = partition_node();
    if (node < 0 || node >= HEAP_MAX_NODES)
        return;
    unsigned long mask[HEAP_MAX_NODES / (8 * sizeof(unsigned long))] = {0};
    mask[node / (8 * sizeof(unsigned long))] |= 1ul << (node % (8 * sizeof(unsigned long)));
    if (syscall(SYS_mbind, heap.base + (size_t)heap.me * heap.part, heap.part, HEAP_MPOL_BIND, mask,
                (unsigned long)HEAP_MAX_NODES, 0ul) != 0) {
        if (heap.me == 0)
            RT_ERR("heap", "mbind of the heap partitions to their NUMA nodes failed (%s); their pages go "
                   "where first touched", strerror(errno));
        return;
    }
    bound_node = node;
}

int heap_partition_node(void) { return bound_node; }

/* ---- backing ---- */

static char *my_partition(void) { return heap.base + (size_t)heap.me * heap.part; }

/* Reserve [off, off + len) of my partition in /dev/shm: afterwards touching it cannot SIGBUS. */
static int back(size_t off, size_t len)
{
    /* tmpfs gives up with EINTR when a signal arrives (profilers, SIGCHLD): that is no full
       /dev/shm, and it returns what it took, so ask again */
    while (fallocate(reserve.fd, 0, (off_t)((size_t)heap.me * heap.part + off), (off_t)len) != 0)
        if (errno != EINTR)
            return errno;
    return 0;
}

static bool chunk_done(size_t c) { return lazy.done[c / 64] >> (c % 64) & 1; }

/* The runs of chunks this thread reserved during its current heap_alloc (fresh.on). Nothing has
   touched such a chunk since the object was made (mimalloc touches only reserved memory, and a
   chunk is reserved once), so it reads zero and a huge calloc need not clear it. */
#define FRESH_RUNS 32
static __thread struct {
    bool on;
    int n;
    size_t lo[FRESH_RUNS], hi[FRESH_RUNS]; /* chunks [lo, hi) */
} fresh;

static void note_fresh(size_t lo, size_t hi)
{
    if (!fresh.on)
        return;
    if (fresh.n > 0 && fresh.hi[fresh.n - 1] == lo)
        fresh.hi[fresh.n - 1] = hi;
    else if (fresh.n < FRESH_RUNS) { /* more runs: the rest is cleared by hand, as before */
        fresh.lo[fresh.n] = lo;
        fresh.hi[fresh.n++] = hi;
    }
}

/* Reserve [off, off + len) of my partition, rounded out to whole chunks, skipping the chunks
   already reserved, and mark them. With lazy.lock held; 0 or the errno (ENOSPC when /dev/shm
   reports less free space than a run needs: fallocate would fail anyway, after taking and
   returning pages). */
static int back_chunks(size_t off, size_t len)
{
    size_t c = off / CHUNK_BYTES, end = (off + len + CHUNK_BYTES - 1) / CHUNK_BYTES;
    if (end > heap.part / CHUNK_BYTES)
        end = heap.part / CHUNK_BYTES;
    while (c < end) {
        if (chunk_done(c)) {
            c++;
            continue;
        }
        size_t run = c;
        while (run < end && !chunk_done(run))
            run++;
        size_t bytes = (run - c) * CHUNK_BYTES;
        if (shm_free_bytes() < bytes)
            return ENOSPC;
        int e = back(c * CHUNK_BYTES, bytes);
        if (e != 0)
            return e;
        note_fresh(c, run);
        for (; c < run; c++)
            lazy.done[c / 64] |= (uint64_t)1 << (c % 64);
        lazy.reserved += bytes;
    }
    return 0;
}

/* Whether every chunk of [off, off + len) of my partition is reserved. With lazy.lock held. */
static bool chunks_done(size_t off, size_t len)
{
    for (size_t c = off / CHUNK_BYTES; c < (off + len + CHUNK_BYTES - 1) / CHUNK_BYTES && c < heap.part / CHUNK_BYTES; c++)
        if (!chunk_done(c))
            return false;
    return true;
}

static __thread size_t refused_bytes; /* the refused commit's size, for the warning */
static __thread int refused_err;      /* why: ENOSPC (or fallocate's errno), EBADF after heap_stop */

/* mimalloc's commit (see the header comment): a range of my partition is reserved first, and
   the commit fails when /dev/shm cannot back it; then the kernel's mprotect runs as for any
   other call (for mimalloc a no-op: the mapping is read-write already). */
__attribute__((visibility("default"))) int mprotect(void *addr, size_t len, int prot)
{
    char *a = addr, *mine = lazy.done != NULL ? my_partition() : NULL;
    if (mine != NULL && prot == (PROT_READ | PROT_WRITE) && a >= mine && a < mine + heap.part) {
        atomic_fetch_add(&lazy.seen, 1);
        if (!lazy.on || making_plugs)
            return (int)syscall(SYS_mprotect, addr, len, prot);
        size_t off = (size_t)(a - mine), in = len > heap.part - off ? heap.part - off : len;
        pthread_mutex_lock(&lazy.lock);
        /* after heap_stop (fd closed) only what is reserved already may be committed */
        int e = reserve.fd >= 0 ? back_chunks(off, in) : chunks_done(off, in) ? 0 : EBADF;
        pthread_mutex_unlock(&lazy.lock);
        if (e == 0) /* still the kernel's call: a program may be undoing its own PROT_READ */
            return (int)syscall(SYS_mprotect, addr, len, prot);
        commit_refused = true;
        refused_bytes = in;
        refused_err = e;
        errno = ENOMEM;
        return -1;
    }
    return (int)syscall(SYS_mprotect, addr, len, prot);
}

/* mimalloc's decommit of a block freed to the arena (an arena it did not get committed):
   MADV_DONTNEED, which on this shared mapping would only unmap the pages for them to be faulted
   in again at the next use; they stay reserved and mapped instead. Every other call is the
   kernel's. */
__attribute__((visibility("default"))) int madvise(void *addr, size_t len, int advice)
{
    char *a = addr, *mine = lazy.done != NULL ? my_partition() : NULL;
    if (mine != NULL && advice == MADV_DONTNEED && a >= mine && a < mine + heap.part)
        return 0;
    return (int)syscall(SYS_madvise, addr, len, advice);
}

/* The keeper owns the plugs: it makes one per arena block at start, then frees the lowest ones
   when asked (a huge block is freed at once only by the thread that made it). */
static void *keeper_main(void *unused)
{
    (void)unused;
    rt_thread_own_files(reserve.fd, -1); /* the heap object, for fallocate */
    mi_heap_t *h = mi_heap_new_in_arena(arena);
    bool ok = h != NULL;
    char *mine = my_partition();
    making_plugs = true; /* their commits (whole blocks) are not reserved: only what they write is */
    for (size_t k = 0; ok && k < reserve.nblocks; k++) {
        char *p = reserve.plug[k] = mi_heap_malloc(h, PLUG_BYTES);
        /* first fit: plug k must hold block k, within the reserved start of it */
        ok = p != NULL && (size_t)(p - mine) / BLOCK_BYTES == k && (size_t)(p - mine) % BLOCK_BYTES < PLUG_TOUCHED;
    }
    making_plugs = false;
    pthread_mutex_lock(&reserve.lock);
    reserve.keeper_ok = ok;
    reserve.keeper_ready = true;
    pthread_cond_broadcast(&reserve.done);
    while (ok && !reserve.quit) {
        while (reserve.freed_to < reserve.free_to) {
            mi_free(reserve.plug[reserve.freed_to]);
            reserve.plug[reserve.freed_to++] = NULL;
        }
        pthread_cond_broadcast(&reserve.done);
        pthread_cond_wait(&reserve.ask, &reserve.lock);
    }
    pthread_mutex_unlock(&reserve.lock);
    return NULL;
}

/* Reserve the start of every block (what making its plug writes) and plug them all; then see
   whether mimalloc's commits reach this file's mprotect (the plugs' own did). */
static int plug_all_blocks(void)
{
    reserve.nblocks = heap.part / BLOCK_BYTES;
    reserve.plug = calloc(reserve.nblocks, sizeof *reserve.plug);
    lazy.done = calloc(heap.part / CHUNK_BYTES / 64 + 1, sizeof *lazy.done);
    if (reserve.plug == NULL || lazy.done == NULL)
        return HINT_ERR_NOMEM;
    for (size_t k = 0; k < reserve.nblocks; k++) {
        pthread_mutex_lock(&lazy.lock);
        int e = back_chunks(k * BLOCK_BYTES, PLUG_TOUCHED);
        pthread_mutex_unlock(&lazy.lock);
        if (e != 0) {
            RT_ERR("heap", "reserving the shared heap's first pages in /dev/shm failed: %s; free space in /dev/shm "
                   "(docker: --shm-size) or run with HINT_HEAP=private", strerror(e));
            return HINT_ERR_NOMEM;
        }
    }
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the keeper takes no signals */
    int e = pthread_create(&reserve.keeper, NULL, keeper_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e != 0) {
        RT_ERR("heap", "starting the shared heap's keeper thread failed: %s", strerror(e));
        return HINT_ERR_NOMEM;
    }
    pthread_setname_np(reserve.keeper, "hint-heap");
    pthread_mutex_lock(&reserve.lock);
    while (!reserve.keeper_ready)
        pthread_cond_wait(&reserve.done, &reserve.lock);
    pthread_mutex_unlock(&reserve.lock);
    if (!reserve.keeper_ok) {
        pthread_join(reserve.keeper, NULL);
        RT_ERR("heap", "mimalloc did not place the shared heap's reservations block by block (not mimalloc 2.0?); "
               "run with HINT_HEAP=private");
        return HINT_ERR_INTERNAL;
    }
    lazy.on = heap.lazy = atomic_load(&lazy.seen) > 0; /* else every block is reserved whole when unplugged */
    return HINT_SUCCESS;
}

/* One warning per process when /dev/shm has filled up since the start. */
static void warn_shm_full(size_t wanted)
{
    if (atomic_exchange(&heap.shm_full, true))
        return;
    char msg[640];
    int n = snprintf(msg, sizeof msg,
                     "hint: rank %d: the shared heap needs %zu MiB more in /dev/shm but only %zu MiB are free (it "
                     "filled up after the start); %s. Free space in /dev/shm or enlarge it (docker: --shm-size).\n",
                     rt.boot.rank, wanted >> 20, shm_free_bytes() >> 20,
                     heap_strict() ? "allocations that need more return NULL (HINT_HEAP_STRICT=1)"
                                   : "further buffers come from the private heap (slower collectives; "
                                     "HINT_HEAP_STRICT=1 gives NULL instead)");
    ssize_t unused = write(2, msg, n < (int)sizeof msg ? (size_t)n : sizeof msg - 1); /* we may be inside malloc */
    (void)unused;
}

/* Reserve the lowest plugged blocks (enough for a request of `bytes`) and have the keeper free
   their plugs. Called with the lock held; false when nothing could be added. */
static bool unplug(size_t bytes)
{
    size_t left = reserve.nblocks - reserve.next;
    /* a huge block needs its size rounded up (mimalloc rounds to 4 MiB) plus a 64 KiB header */
    size_t n = (bytes + ((size_t)4 << 20) + ((size_t)64 << 10) + BLOCK_BYTES - 1) / BLOCK_BYTES;
    if (n > left)
        n = left;
    if (n == 0 || reserve.fd < 0)
        return false;
    /* Lazily, only the block's start (block 0: what is prefaulted below); mimalloc's commits
       reserve the rest. Else the whole blocks. */
    size_t len = n * BLOCK_BYTES, first = reserve.next == 0 ? HEAP_PREFAULT_BYTES : UNPLUG_RESERVE;
    int e = 0;
    pthread_mutex_lock(&lazy.lock);
    for (size_t k = reserve.next; e == 0 && k < reserve.next + n; k++)
        e = back_chunks(k * BLOCK_BYTES, lazy.on ? first : BLOCK_BYTES);
    pthread_mutex_unlock(&lazy.lock);
    if (e != 0) {
        if (e == ENOSPC)
            warn_shm_full(lazy.on ? first : len);
        return false;
    }
    reserve.free_to = reserve.next + n;
    pthread_cond_signal(&reserve.ask);
    while (reserve.freed_to < reserve.free_to)
        pthread_cond_wait(&reserve.done, &reserve.lock);
    /* Block 0 is unplugged by the first allocation (with the malloc override, one in hint_init):
       the first small buffers the collectives make (staging areas, temporaries) come from its
       start, so map that now rather than page by page in the first calls (after its plug is
       freed, whose decommit would unmap them if it reached the kernel: see madvise). */
    if (reserve.next == 0)
        rt_prefault(my_partition(), HEAP_PREFAULT_BYTES);
    reserve.next += n;
    atomic_fetch_add(&reserve.grown, 1);
    return true;
}

/* mimalloc found no room: reserve more unless another thread did since `seen`. */
static bool grow(unsigned seen, size_t bytes)
{
    if (bytes > heap.part)
        return false; /* can never fit */
    pthread_mutex_lock(&reserve.lock);
    bool ok = atomic_load(&reserve.grown) != seen || unplug(bytes);
    pthread_mutex_unlock(&reserve.lock);
    return ok;
}

static void stop_keeper(void)
{
    if (!reserve.keeper_ok)
        return;
    pthread_mutex_lock(&reserve.lock);
    reserve.quit = true;
    pthread_cond_signal(&reserve.ask);
    pthread_mutex_unlock(&reserve.lock);
    pthread_join(reserve.keeper, NULL);
    reserve.keeper_ok = false;
}

/* The heap's handshake, in a node area (runtime/transport.h) of the node's shared memory. */
struct heap_node_words {
    uint64_t part;              /* bytes per rank, set by local rank 0 (0: none) */
    _Atomic uint32_t attached;  /* unused since the object has no name to unlink */
    struct shmfile_handle where; /* local rank 0's pid and descriptor of the object */
};
static int words_area = -1;

static size_t words_bytes(int nlocal)
{
    (void)nlocal;
    return sizeof(struct heap_node_words);
}

int heap_setup(void)
{
    words_area = rt_node_area_add("heap", words_bytes);
    return words_area < 0 ? HINT_ERR_INTERNAL : HINT_SUCCESS;
}

int heap_init(void)
{
    const char *mode = rt_cfg_str("HINT_HEAP");
    if (strcmp(mode, "private") == 0)
        return HINT_SUCCESS;
    if (strcmp(mode, "shared") != 0)
        RT_ERR("heap", "HINT_HEAP=%s is neither shared nor private; using shared", mode);
    struct heap_node_words *words = rt_node_area(words_area);
    if (words == NULL)
        return HINT_SUCCESS; /* no node memory to share: every buffer is private */
    int st = HINT_SUCCESS;
    heap.nlocal = rt.boot.local_size;
    heap.me = rt.boot.local_rank;
    snprintf(heap.name, sizeof heap.name, "shared heap of node %d", rt.boot.node_id); /* for messages */
    /* Every rank computes the same size only if they see the same free space: rank 0 decides. */
    int create_st = HINT_SUCCESS;
    if (heap.me == 0) {
        create_st = choose_partition(heap.nlocal, &heap.part);
        heap.size = heap.part * (size_t)heap.nlocal;
        if (create_st == HINT_SUCCESS)
            create_st = create_object();
        words->part = create_st == HINT_SUCCESS ? heap.part : 0;
        words->where = (struct shmfile_handle){.pid = (int32_t)getpid(), .fd = reserve.fd};
    }
    boot_test_die("heap");
    if (!rt.boot.singleton)
        CHECK_GOTO(boot_fence(), out);
    CHECK_GOTO(create_st, out);
    if (heap.me != 0) {
        heap.part = words->part;
        heap.size = heap.part * (size_t)heap.nlocal;
        if (heap.part == 0) {
            st = HINT_ERR_NOMEM; /* rank 0 said why */
            goto out;
        }
        CHECK_GOTO(attach_object(words->where), out);
    }
    heap.mapped = true;
    boot_test_die("heap-attach");
    bind_partition();
    CHECK_GOTO(start_arena(), out);
    CHECK_GOTO(plug_all_blocks(), out);
    heap.active = true;
out:
    return st;
}

void heap_stop(void)
{
    heap.active = false;
    stop_keeper(); /* the plugs stay: the heap no longer grows */
    pthread_mutex_lock(&reserve.lock);
    pthread_mutex_lock(&lazy.lock); /* mprotect reads the fd under this one (order: as unplug) */
    if (reserve.fd >= 0)
        close(reserve.fd);
    reserve.fd = -1;
    pthread_mutex_unlock(&lazy.lock);
    pthread_mutex_unlock(&reserve.lock);
}

static mi_heap_t *my_heap(void)
{
    if (thread_heap == NULL)
        thread_heap = mi_heap_new_in_arena(arena);
    return thread_heap;
}

static void *mi_alloc(mi_heap_t *h, size_t size, size_t align, bool zero)
{
    if (align > sizeof(void *) * 2)
        return zero ? mi_heap_zalloc_aligned(h, size, align) : mi_heap_malloc_aligned(h, size, align);
    return zero ? mi_heap_zalloc(h, size) : mi_heap_malloc(h, size);
}

/* A request this large may be a huge block, whose refused commit mimalloc ignores: it is then
   zeroed here, after the check, rather than by mimalloc. */
#define MAYBE_HUGE ((size_t)8 << 20)
#define ZERO_EDGE ((size_t)64)

/* Whether chunk c was reserved during this call (fresh); then *run_end is the end of its run. */
static bool fresh_chunk(size_t c, size_t *run_end)
{
    for (int r = 0; r < fresh.n; r++)
        if (c >= fresh.lo[r] && c < fresh.hi[r]) {
            *run_end = fresh.hi[r];
            return true;
        }
    return false;
}

/* Zero [p, p + size) of a huge calloc but for the chunks this call reserved (zero already), so a
   new block costs no page faults and no writes; reused memory is cleared. The first and last
   bytes are cleared anyway: mimalloc writes a block's free-list link (and, in its debug builds,
   padding) when it hands the block out. */
static void zero_stale(char *p, size_t size)
{
    char *mine = my_partition(), *end = p + size;
    for (char *at = p; at < end;) {
        size_t c = (size_t)(at - mine) / CHUNK_BYTES, run_end = c + 1;
        bool is_fresh = fresh_chunk(c, &run_end);
        char *next = mine + run_end * CHUNK_BYTES;
        if (next > end)
            next = end;
        if (!is_fresh)
            memset(at, 0, (size_t)(next - at));
        at = next;
    }
    size_t edge = size < ZERO_EDGE ? size : ZERO_EDGE;
    memset(p, 0, edge);
    memset(end - edge, 0, edge);
}

void *heap_alloc(size_t size, size_t align, bool zero)
{
    /* stopped (hint_finalize: nothing more is served), or an alignment mimalloc serves only
       outside its arenas */
    if (!heap.active || align > BLOCK_BYTES / 2)
        return NULL;
    mi_heap_t *h = my_heap();
    if (h == NULL)
        return NULL;
    int saved = errno;
    bool big = size + align > MAYBE_HUGE;
    fresh.on = zero && big && lazy.done != NULL;
    fresh.n = 0;
    for (;;) {
        unsigned seen = atomic_load(&reserve.grown);
        commit_refused = false;
        void *p = mi_alloc(h, size, align, zero && !big);
        /* A commit of this call was refused (mprotect above): /dev/shm could not back it, or
           heap_stop closed the object meanwhile (another thread in hint_finalize) and the
           range was not reserved yet. Only the first is a full /dev/shm to warn about. */
        if (commit_refused) {
            commit_refused = false;
            fresh.on = false;
            if (p != NULL)
                mi_free(p); /* a huge block: mimalloc wrote only its reserved first pages */
            if (refused_err != EBADF)
                warn_shm_full(refused_bytes);
            errno = ENOMEM;
            return NULL;
        }
        if (p != NULL) {
            errno = saved; /* mimalloc set ENOMEM before the reservation grew */
            fresh.on = false;
            if (zero && big)
                zero_stale(p, size);
        }
        /* NULL: the partition's reserved blocks are full; grow unplugs more, and fails when
           none is left (the partition is used up, or the request exceeds it), when /dev/shm
           cannot back a block's start (warned), or after heap_stop (the object closed) */
        if (p != NULL || !grow(seen, size + align)) {
            fresh.on = false;
            return p;
        }
    }
}

/* In place when mimalloc would (the size shrinks by at most half), else a new block through
   heap_alloc (so its reservation is checked) and a copy; NULL leaves p as it was. */
void *heap_realloc(void *p, size_t size)
{
    if (!heap.active)
        return NULL;
    size_t old = mi_usable_size(p);
    if (size <= old && size >= old / 2)
        return p;
    void *q = heap_alloc(size, 0, false);
    if (q != NULL) {
        memcpy(q, p, old < size ? old : size);
        mi_free(p);
    }
    return q;
}

void heap_release(void *p) { mi_free(p); }

unsigned heap_growth(void) { return atomic_load(&reserve.grown); }

size_t heap_usable_size(const void *p) { return mi_usable_size(p); }
