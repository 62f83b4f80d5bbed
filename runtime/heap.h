/*
 * runtime/heap.h — the shared heap: a per-node POSIX shm object cut into one partition per
 * rank, every rank mapping all of it, so any rank can read and write any rank's heap buffers
 * (after translating the address into its own mapping). malloc and friends are served from the
 * rank's partition after hint_init (runtime/malloc.c).
 */
#ifndef HINT_RUNTIME_HEAP_H
#define HINT_RUNTIME_HEAP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Mimalloc's segments must start 64 MiB-aligned: partitions are whole multiples of it. */
#define HEAP_ALIGN ((size_t)64 << 20)

struct heap_state {
    char *base;            /* this process's mapping of the whole heap object */
    size_t size;           /* nlocal * part */
    size_t part;           /* bytes per rank */
    int nlocal, me;
    bool active;           /* malloc serves from the partition */
    bool mapped;           /* the mapping exists (stays after finalize: buffers outlive it) */
    atomic_bool shm_full;  /* /dev/shm could not back more of the partition (warned once) */
    bool lazy;             /* pages are reserved as mimalloc commits them, not a block at a time */
    char name[64];
};

extern struct heap_state heap;

/* Ask for the node area of the heap's handshake (hint_init, before the transports start). */
int heap_setup(void);
/* Create/attach the node's heap (collective over the node; after the transports, whose node
   area holds the handshake). With HINT_HEAP=private, or no transport mapping node memory, it
   does nothing and malloc stays glibc's. */
int heap_init(void);
/* Stop serving new allocations from the heap (finalize); existing buffers stay valid. */
void heap_stop(void);
/* HINT_SUCCESS when glibc's allocator is reachable as __libc_malloc (runtime/malloc.c). */
int heap_check_glibc(void);
/* HINT_HEAP_STRICT=1: a full heap gives NULL instead of glibc's memory (runtime/malloc.c). */
bool heap_strict(void);

/* The NUMA node this rank's partition is bound to (mbind, when the node has several domains,
   real or from HINT_VIRTUAL_SOCKETS / HINT_TOPO_FILE), -1 when it is not bound. */
int heap_partition_node(void);

/* True when p lies in this process's mapping of the shared heap (any rank's partition). */
static inline bool heap_contains(const void *p)
{
    return heap.mapped && (const char *)p >= heap.base && (const char *)p < heap.base + heap.size;
}
/* Pointer p, if on the heap, as an offset every rank of the node can turn back into an address
   of its own mapping with heap_at(); UINT64_MAX otherwise. Offsets are what cross processes. */
static inline uint64_t heap_offset(const void *p)
{
    return heap_contains(p) ? (uint64_t)((const char *)p - heap.base) : UINT64_MAX;
}

static inline void *heap_at(uint64_t offset) { return heap.base + offset; }

/* The heap offset of [p, p + bytes) when all of it lies on the heap (0 for no bytes), else
   UINT64_MAX: what the shared-heap collectives publish for a buffer. */
static inline uint64_t heap_span(const void *p, size_t bytes)
{
    if (bytes == 0)
        return 0;
    uint64_t lo = heap_offset(p), hi = heap_offset((const char *)p + bytes - 1);
    return lo == UINT64_MAX || hi == UINT64_MAX ? UINT64_MAX : lo;
}

/* Allocation in the partition (NULL when full, when /dev/shm cannot back more of it, when
   inactive: before init, after heap_stop, or for an alignment above 16 MiB); used by malloc.c,
   hint_malloc and the collectives' staging. Memory it returns is reserved in /dev/shm: touching
   it never raises SIGBUS. zero: cleared (a huge block only where it was used before). */
void *heap_alloc(size_t size, size_t align, bool zero);
void *heap_realloc(void *p, size_t size);
void heap_release(void *p);
size_t heap_usable_size(const void *p);
/* Bumped whenever the partition grows (a block unplugged): memory the heap refused before may
   fit now; unchanged, it will not (short of frees). */
unsigned heap_growth(void);

#endif
