/*
 * transport/shm/segment.c — creating, attaching and releasing the node segment.
 *
 * Local rank 0 creates the object unnamed (runtime/shmfile.h: O_TMPFILE in /dev/shm, mode 0600),
 * reserves its pages with posix_fallocate so a full /dev/shm is an error now rather than a SIGBUS
 * later, lays it out and puts where it is (its pid and descriptor) in the store. After a store
 * fence every other rank opens it through /proc and maps it. It never has a name, so no crash at
 * any point, under any launcher, not even SIGKILL of every rank and of hintrun, can leave it in
 * /dev/shm: it is gone when the last process mapping it is.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "runtime/boot.h"
#include "runtime/runtime.h"
#include "runtime/shmfile.h"
#include "runtime/transport.h"
#include "transport/shm/cells.h"
#include "transport/shm/segment.h"

static size_t align_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

static uint32_t choose_payload(int nlocal)
{
    size_t budget = rt_cfg_size("HINT_SHM_BUDGET");
    size_t cells = (size_t)nlocal * (size_t)nlocal * SHM_NCELLS;
    size_t per_cell = budget / cells;
    uint32_t payload = 32 * 1024;
    while (payload > 256 && payload + sizeof(struct shm_cell) > per_cell)
        payload /= 2;
    return payload;
}

size_t shm_segment_size(int nlocal, uint32_t *payload)
{
    uint32_t p = choose_payload(nlocal);
    size_t cell_stride = sizeof(struct shm_cell) + p;
    size_t chan_stride = SHM_CACHE_LINE + SHM_NCELLS * cell_stride;
    size_t size = align_up(sizeof(struct shm_seg_hdr), SHM_CACHE_LINE);
    size += (size_t)nlocal * sizeof(struct shm_rank_ctl);
    size += (size_t)nlocal * (size_t)nlocal * chan_stride;
    for (int id = 0; id < rt_node_area_count(); id++)
        size += rt_node_area_bytes(id, nlocal);
    if (payload)
        *payload = p;
    return size;
}

/* For messages: the object has no name. */
static void segment_name(char *buf, size_t len)
{
    snprintf(buf, len, "node segment of node %d", rt.boot.node_id);
}

/* The store key under which the node's local rank 0 (world rank world0) says where it is. */
static void handle_key(const struct shm_node *n, char *key, size_t len)
{
    snprintf(key, len, "shm.seg.%d", n->world0);
}

static int check_free_space(size_t need)
{
    struct statvfs vfs;
    if (statvfs("/dev/shm", &vfs) != 0)
        return HINT_SUCCESS; /* no /dev/shm to ask: let shm_open report what is wrong */
    size_t avail = (size_t)vfs.f_bavail * vfs.f_frsize;
    if (avail >= need)
        return HINT_SUCCESS;
    RT_ERR("shm", "the node segment needs %zu KiB in /dev/shm but only %zu KiB are free; free space "
           "there, enlarge it (docker: --shm-size=1g; mount -o remount,size=1G /dev/shm) or run fewer "
           "ranks per node; the job cannot start", need >> 10, avail >> 10);
    return HINT_ERR_NOMEM;
}

static void layout(struct shm_node *n, uint32_t payload)
{
    struct shm_seg_hdr *h = n->hdr;
    h->magic = SHM_MAGIC;
    h->total_size = n->size;
    h->nlocal = (uint32_t)n->nlocal;
    h->ncells = SHM_NCELLS;
    h->payload = payload;
    h->cell_stride = (uint32_t)(sizeof(struct shm_cell) + payload);
    h->chan_stride = SHM_CACHE_LINE + (uint64_t)SHM_NCELLS * h->cell_stride;
    h->ctl_off = align_up(sizeof(struct shm_seg_hdr), SHM_CACHE_LINE);
    h->chan_off = h->ctl_off + (uint64_t)n->nlocal * sizeof(struct shm_rank_ctl);
    uint64_t off = h->chan_off + (uint64_t)n->nlocal * (uint64_t)n->nlocal * h->chan_stride;
    h->nareas = (uint32_t)rt_node_area_count();
    for (int id = 0; id < (int)h->nareas; id++) {
        h->area_off[id] = off;
        off += rt_node_area_bytes(id, n->nlocal);
    }
    /* ftruncate/fallocate gave zeroed pages: every cell is FREE, every counter and area 0. */
    atomic_store_explicit(&h->ready, 1, memory_order_release);
}

static int create_segment(struct shm_node *n)
{
    int st = HINT_SUCCESS;
    uint32_t payload;
    n->size = shm_segment_size(n->nlocal, &payload);
    CHECK_GOTO(check_free_space(n->size), out);
    int fd;
    CHECK_GOTO(shmfile_create("node segment", &fd), out);
    int err = posix_fallocate(fd, 0, (off_t)n->size);
    if (err != 0) {
        RT_ERR("shm", "reserving %zu KiB for the %s failed: %s (is /dev/shm full?)", n->size >> 10,
               n->name, strerror(err));
        close(fd);
        return HINT_ERR_NOMEM;
    }
    n->base = mmap(NULL, n->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (n->base == MAP_FAILED) {
        RT_ERR("shm", "mmap of the %s failed: %s", n->name, strerror(errno));
        n->base = NULL;
        close(fd);
        return HINT_ERR_NOMEM;
    }
    n->fd = fd; /* kept open: the other ranks open it through /proc/<pid>/fd */
    n->hdr = n->base;
    layout(n, payload);
out:
    return st;
}

/* Local rank 0 tells the others where the segment is (pid 0: it could not make it). */
static int publish_segment(const struct shm_node *n, int created)
{
    struct shmfile_handle h = {.pid = created ? (int32_t)getpid() : 0, .fd = created ? n->fd : -1};
    char key[32];
    handle_key(n, key, sizeof key);
    return boot_put(key, &h, sizeof h);
}

static int attach_segment(struct shm_node *n)
{
    struct shmfile_handle h = {0};
    size_t len = 0;
    char key[32];
    handle_key(n, key, sizeof key);
    int fd, st = boot_get(key, &h, sizeof h, &len);
    if (st == HINT_SUCCESS && len != sizeof h)
        h.pid = 0;
    if (st != HINT_SUCCESS || (st = shmfile_open("node segment", h, &fd)) != HINT_SUCCESS)
        return st;
    struct stat sb;
    if (fstat(fd, &sb) != 0 || sb.st_size <= 0) {
        close(fd);
        return HINT_ERR_TRANSPORT;
    }
    n->size = (size_t)sb.st_size;
    n->base = mmap(NULL, n->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (n->base == MAP_FAILED) {
        n->base = NULL;
        return HINT_ERR_NOMEM;
    }
    n->hdr = n->base;
    if (n->hdr->magic != SHM_MAGIC || !atomic_load_explicit(&n->hdr->ready, memory_order_acquire) ||
        n->hdr->nlocal != (uint32_t)n->nlocal) {
        RT_ERR("shm", "%s is not this job's node segment", n->name);
        return HINT_ERR_TRANSPORT;
    }
    return HINT_SUCCESS;
}

/* What the first calls touch, mapped now (rt_prefault): the header and the control blocks, and the
   first page of every channel to or from this rank (its head line and its first cell). The
   segment is fallocated whole, so this maps pages that exist already. */
static void prefault_first_touched(const struct shm_node *n)
{
    const struct shm_seg_hdr *h = n->hdr;
    char *chans = (char *)n->base + h->chan_off;
    rt_prefault(n->base, h->chan_off);
    for (int p = 0; p < n->nlocal; p++) {
        rt_prefault(chans + ((uint64_t)n->me * (uint64_t)n->nlocal + (uint64_t)p) * h->chan_stride, 1);
        rt_prefault(chans + ((uint64_t)p * (uint64_t)n->nlocal + (uint64_t)n->me) * h->chan_stride, 1);
    }
}

int shm_node_open(struct shm_node **out)
{
    int st = HINT_SUCCESS;
    struct shm_node *n = calloc(1, sizeof *n);
    if (n == NULL)
        return HINT_ERR_NOMEM;
    n->nlocal = rt.boot.local_size;
    n->me = rt.boot.local_rank;
    n->world0 = rt.boot.rank - rt.boot.local_rank;
    n->fd = -1;
    segment_name(n->name, sizeof n->name);

    int create_st = HINT_SUCCESS, st_put = HINT_SUCCESS;
    if (n->me == 0) {
        create_st = create_segment(n);
        if (n->nlocal > 1)
            st_put = publish_segment(n, create_st == HINT_SUCCESS);
    }
    boot_test_die("segment");
    /* Every rank enters the fence even when creation failed, so nobody waits forever; the
       failure reaches the others as a handle with pid 0. */
    if (!rt.boot.singleton)
        CHECK_GOTO(boot_fence(), fail);
    CHECK_GOTO(create_st, fail);
    CHECK_GOTO(st_put, fail);
    if (n->me != 0)
        CHECK_GOTO(attach_segment(n), fail);
    boot_test_die("attach");
    shm_ctl(n, n->me)->pid = (int32_t)getpid();
    prefault_first_touched(n);
    *out = n;
    return HINT_SUCCESS;
fail:
    shm_node_close(n);
    return st;
}

void shm_node_close(struct shm_node *n)
{
    if (n == NULL)
        return;
    if (n->base != NULL)
        munmap(n->base, n->size);
    if (n->fd >= 0)
        close(n->fd);
    free(n);
}

static long futex(_Atomic uint32_t *addr, int op, uint32_t val, const struct timespec *ts)
{
    return syscall(SYS_futex, (uint32_t *)addr, op, val, ts, NULL, 0);
}

void shm_ring(const struct shm_node *n, int local)
{
    struct shm_rank_ctl *c = shm_ctl(n, local);
    atomic_fetch_add_explicit(&c->bell, 1, memory_order_seq_cst);
    /* Dekker with shm_sleep: bell is bumped before sleeping is read, sleeping is set before the
       bell is re-read, both seq_cst, so either we see the sleeper or it sees the new bell. */
    if (atomic_load_explicit(&c->sleeping, memory_order_seq_cst))
        futex(&c->bell, FUTEX_WAKE, 1, NULL);
}

void shm_wake(const struct shm_node *n, int local)
{
    /* Dekker with shm_sleep: the caller's store of the waited-for word must be visible before we
       read `sleeping`, and the sleeper re-checks that word after setting `sleeping`. */
    atomic_thread_fence(memory_order_seq_cst);
    shm_wake_after_fence(n, local);
}

void shm_wake_after_fence(const struct shm_node *n, int local)
{
    if (atomic_load_explicit(&shm_ctl(n, local)->sleeping, memory_order_relaxed))
        shm_ring(n, local);
}

void shm_sleep(const struct shm_node *n, uint32_t seen, long timeout_ns, bool (*done)(void *), void *arg)
{
    struct shm_rank_ctl *c = shm_ctl(n, n->me);
    struct timespec ts = {.tv_sec = timeout_ns / 1000000000L, .tv_nsec = timeout_ns % 1000000000L};
    atomic_store_explicit(&c->sleeping, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&c->bell, memory_order_seq_cst) == seen && !done(arg))
        futex(&c->bell, FUTEX_WAIT, seen, &ts);
    atomic_store_explicit(&c->sleeping, 0, memory_order_relaxed);
}
