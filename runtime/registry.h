/*
 * runtime/registry.h — which handles are live, answered without touching the handle.
 *
 * A group, type or request handle is a pointer to its object, and the objects go back to malloc
 * when freed; a check that reads a magic word through a stale handle reads freed memory (and a
 * random pointer may not be readable at all). So each kind keeps a set of the addresses of its
 * live objects, and a check asks the set: a freed, never created or foreign pointer is simply not
 * there. The set is an open-addressing hash table with linear probing kept at most half full, so
 * a live handle is found at its first probe almost always: one multiply, one shift, one load, one
 * compare — cheap enough for every call, an 8-byte send included.
 *
 * Handles stay plain pointers (include/hint.h does not change); an address that malloc hands to a
 * new object of the same kind after the old one was freed is that new object's handle again,
 * which no pointer-valued handle can tell apart (MPI's cannot either).
 *
 * The tables live in their own mmap'ed pages, never in malloc's heap, so they work before
 * hint_init, after hint_finalize, and whatever the malloc override does.
 */
#ifndef HINT_RUNTIME_REGISTRY_H
#define HINT_RUNTIME_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum reg_kind { REG_GROUP = 0, REG_TYPE = 1, REG_REQUEST = 2, REG_NKINDS };

struct reg_set {
    const void **slots; /* NULL marks an empty slot */
    size_t mask;        /* slots - 1; the table size is a power of two */
    unsigned shift;     /* 64 - log2(slots): the hash keeps the top bits of the product */
    size_t count;
};

extern struct reg_set reg_sets[REG_NKINDS];

static inline size_t reg_slot_of(const struct reg_set *s, const void *p)
{
    /* Fibonacci hashing: allocations are 16-byte aligned, the multiply spreads the upper bits */
    return (size_t)(((uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ull) >> s->shift);
}

/* True when p is a live object of kind k; NULL never is. Never dereferences p. */
static inline bool reg_live(enum reg_kind k, const void *p)
{
    const struct reg_set *s = &reg_sets[k];
    for (size_t i = reg_slot_of(s, p);; i = (i + 1) & s->mask) {
        const void *q = s->slots[i];
        if (q == p)
            return p != NULL;
        if (q == NULL)
            return false;
    }
}

/* One live handle per kind that a call's short path (collectives/api.c's empty calls) found live
   before: that handle is checked with one compare instead of a probe. reg_remove of that handle
   puts back REG_HOT_NONE (an address no handle has), so the slot only ever holds a live handle. */
extern const void *reg_hot[REG_NKINDS];
#define REG_HOT_NONE ((const void *)reg_hot)

static inline bool reg_live_hot(enum reg_kind k, const void *p)
{
    if (p == reg_hot[k])
        return true;
    if (!reg_live(k, p))
        return false;
    reg_hot[k] = p;
    return true;
}

/* Mark p live (HINT_ERR_NOMEM when the table cannot grow). Adding a live p again is harmless. */
int reg_add(enum reg_kind k, const void *p);
/* Mark p no longer live; a p that is not live is left alone. */
void reg_remove(enum reg_kind k, const void *p);
/* Live objects of kind k (for tests and leak reports). */
size_t reg_count(enum reg_kind k);

/* The error path of a handle check: reports (to stderr, at most a few dozen times per process)
   that p is not a live handle of kind k and what it is instead when it is a live handle of another
   kind; returns code. HINT_*_NULL handles are not reported: a NULL is an ordinary bad argument. */
int reg_reject(enum reg_kind k, const void *p, int code);

#endif
