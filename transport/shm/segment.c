/*
 * transport/shm/segment.c — creating, attaching and removing the node segment.
 *
 * Local rank 0 creates the object (O_EXCL, mode 0600, name carrying uid and job id), reserves
 * its pages with posix_fallocate so a full /dev/shm is an error now rather than a SIGBUS later,
 * and lays it out. After a store fence every other rank attaches; the last rank to attach
 * unlinks the name, so from then on no crash (not even SIGKILL of hintrun) can leave it behind.
 * hintrun also unlinks every object of the job on its exit paths, for crashes before that point.
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

#include "runtime/runtime.h"
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

static void segment_name(char *buf, size_t len)
{
    snprintf(buf, len, "/hint-%u-%s-n%d", (unsigned)getuid(), rt.boot.jobid, rt.boot.node_id);
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
    int fd = shm_open(n->name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0) {
        RT_ERR("shm", "shm_open(%s) failed: %s", n->name, strerror(errno));
        return rt_from_errno(errno);
    }
    int err = posix_fallocate(fd, 0, (off_t)n->size);
    if (err != 0) {
        RT_ERR("shm", "reserving %zu KiB for %s failed: %s (is /dev/shm full?)", n->size >> 10, n->name,
               strerror(err));
        st = HINT_ERR_NOMEM;
        close(fd);
        shm_unlink(n->name);
        goto out;
    }
    n->base = mmap(NULL, n->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (n->base == MAP_FAILED) {
        RT_ERR("shm", "mmap of %s failed: %s", n->name, strerror(errno));
        n->base = NULL;
        shm_unlink(n->name);
        st = HINT_ERR_NOMEM;
        goto out;
    }
    n->hdr = n->base;
    layout(n, payload);
out:
    return st;
}

static int attach_segment(struct shm_node *n)
{
    int fd = shm_open(n->name, O_RDWR, 0);
    if (fd < 0) {
        if (errno == ENOENT)
            RT_ERR("shm", "the node segment %s does not exist: local rank 0 could not create it (its "
                   "message says why)", n->name);
        else
            RT_ERR("shm", "shm_open(%s) failed: %s", n->name, strerror(errno));
        return HINT_ERR_TRANSPORT;
    }
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

int shm_node_open(struct shm_node **out)
{
    int st = HINT_SUCCESS;
    struct shm_node *n = calloc(1, sizeof *n);
    if (n == NULL)
        return HINT_ERR_NOMEM;
    n->nlocal = rt.boot.local_size;
    n->me = rt.boot.local_rank;
    n->world0 = rt.boot.rank - rt.boot.local_rank;
    segment_name(n->name, sizeof n->name);

    int create_st = HINT_SUCCESS;
    if (n->me == 0)
        create_st = create_segment(n);
    /* Every rank enters the fence even when creation failed, so nobody waits forever; the
       failure reaches the others as a missing object. */
    if (!rt.boot.singleton)
        CHECK_GOTO(boot_fence(), fail);
    CHECK_GOTO(create_st, fail);
    if (n->me != 0)
        CHECK_GOTO(attach_segment(n), fail);
    shm_ctl(n, n->me)->pid = (int32_t)getpid();
    if (atomic_fetch_add(&n->hdr->attached, 1) + 1 == (uint32_t)n->nlocal)
        shm_unlink(n->name);
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
    struct shm_rank_ctl *c = shm_ctl(n, local);
    /* Dekker with shm_sleep: the caller's store of the waited-for word must be visible before we
       read `sleeping`, and the sleeper re-checks that word after setting `sleeping`. */
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&c->sleeping, memory_order_relaxed))
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
