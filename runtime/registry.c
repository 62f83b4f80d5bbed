/*
 * runtime/registry.c — the live-handle sets (see registry.h): growth, removal without
 * tombstones, and the message for a handle that is not live.
 */
#include <stdio.h>
#include <sys/mman.h>

#include "hint.h"
#include "runtime/registry.h"
#include "runtime/runtime.h"

/* Before the first add every set is this two-slot empty table, so reg_live needs no "is there a
   table yet" test; it is never written (the first add grows the set). */
static const void *reg_empty[REG_NKINDS][2];

struct reg_set reg_sets[REG_NKINDS] = {
    [REG_GROUP] = {reg_empty[REG_GROUP], 1, 63, 0},
    [REG_TYPE] = {reg_empty[REG_TYPE], 1, 63, 0},
    [REG_REQUEST] = {reg_empty[REG_REQUEST], 1, 63, 0},
};

static const char *const reg_names[REG_NKINDS] = {"group", "datatype", "request"};

#define REG_MIN_SLOTS 512 /* one page of pointers */

static bool reg_is_empty_table(const struct reg_set *s, enum reg_kind k)
{
    return s->slots == reg_empty[k];
}

static void reg_put(struct reg_set *s, const void *p)
{
    size_t i = reg_slot_of(s, p);
    while (s->slots[i] != NULL && s->slots[i] != p)
        i = (i + 1) & s->mask;
    if (s->slots[i] == NULL)
        s->count++;
    s->slots[i] = p;
}

/* Twice the slots (at least a page), every live entry moved over. */
static int reg_grow(enum reg_kind k)
{
    struct reg_set *s = &reg_sets[k], old = *s;
    size_t n = (old.mask + 1) * 2 < REG_MIN_SLOTS ? REG_MIN_SLOTS : (old.mask + 1) * 2;
    void *mem = mmap(NULL, n * sizeof *s->slots, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        return HINT_ERR_NOMEM;
    unsigned bits = 0;
    while (((size_t)1 << bits) < n)
        bits++;
    *s = (struct reg_set){mem, n - 1, 64 - bits, 0};
    for (size_t i = 0; i <= old.mask; i++)
        if (old.slots[i] != NULL)
            reg_put(s, old.slots[i]);
    if (!reg_is_empty_table(&old, k))
        munmap(old.slots, (old.mask + 1) * sizeof *old.slots);
    return HINT_SUCCESS;
}

int reg_add(enum reg_kind k, const void *p)
{
    struct reg_set *s = &reg_sets[k];
    if (p == NULL)
        return HINT_ERR_ARG;
    if ((s->count + 1) * 2 > s->mask + 1) {
        int st = reg_grow(k);
        if (st != HINT_SUCCESS)
            return st;
    }
    reg_put(s, p);
    return HINT_SUCCESS;
}

/* Is slot j's entry, which hashes to home, still reachable from home once slot i is emptied? Not
   when i lies on the cyclic way from home to j: then the entry must move into i. */
static bool reg_must_move(size_t i, size_t j, size_t home)
{
    return i <= j ? (home <= i || home > j) : (home <= i && home > j);
}

const void *reg_hot[REG_NKINDS] = {REG_HOT_NONE, REG_HOT_NONE, REG_HOT_NONE};

void reg_remove(enum reg_kind k, const void *p)
{
    struct reg_set *s = &reg_sets[k];
    if (p == reg_hot[k])
        reg_hot[k] = REG_HOT_NONE;
    if (p == NULL || s->count == 0)
        return;
    size_t i = reg_slot_of(s, p);
    while (s->slots[i] != p) {
        if (s->slots[i] == NULL)
            return;
        i = (i + 1) & s->mask;
    }
    /* backward shift: pull later entries of the same run into the hole so no probe stops early */
    for (size_t j = (i + 1) & s->mask; s->slots[j] != NULL; j = (j + 1) & s->mask) {
        if (reg_must_move(i, j, reg_slot_of(s, s->slots[j]))) {
            s->slots[i] = s->slots[j];
            i = j;
        }
    }
    s->slots[i] = NULL;
    s->count--;
}

size_t reg_count(enum reg_kind k) { return reg_sets[k].count; }

#define REG_MAX_REPORTS 32

int reg_reject(enum reg_kind k, const void *p, int code)
{
    static int reports;
    if (p == NULL || reports > REG_MAX_REPORTS)
        return code;
    if (++reports > REG_MAX_REPORTS) {
        rt_log("handle", "check", "more invalid handles follow; they are not reported");
        return code;
    }
    const char *other = NULL;
    for (int o = 0; o < REG_NKINDS; o++)
        if (o != (int)k && reg_live((enum reg_kind)o, p))
            other = reg_names[o];
    if (other)
        rt_log("handle", "check", "%p is not a %s handle but a %s handle; the call returns %s", p, reg_names[k], other,
               hint_strerror(code));
    else
        rt_log("handle", "check",
               "%p is not a live %s handle (freed already, never created, or not a handle at all); "
               "the call returns %s",
               p, reg_names[k], hint_strerror(code));
    return code;
}
