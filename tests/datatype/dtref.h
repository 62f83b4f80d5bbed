/*
 * tests/datatype/dtref.h — a naive reference for the datatype tests: the MPI typemap written
 * out entry by entry, with lb/ub computed from the MPI definitions, and a packer that copies
 * one entry at a time. Deliberately nothing clever, so it shares no logic with datatype/.
 */
#ifndef HINT_TESTS_DTREF_H
#define HINT_TESTS_DTREF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hint.h"

struct ref {
    size_t n, cap;
    ptrdiff_t *disp; /* one entry per predefined element */
    size_t *len;
    ptrdiff_t lb, ub; /* MPI lb and ub (lb + extent) */
    size_t size;
};

static inline void ref_init(struct ref *r)
{
    memset(r, 0, sizeof *r);
}

static inline void ref_free(struct ref *r)
{
    free(r->disp);
    free(r->len);
    memset(r, 0, sizeof *r);
}

static inline void ref_push(struct ref *r, ptrdiff_t d, size_t l)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 16;
        r->disp = realloc(r->disp, r->cap * sizeof *r->disp);
        r->len = realloc(r->len, r->cap * sizeof *r->len);
    }
    r->disp[r->n] = d;
    r->len[r->n++] = l;
    r->size += l;
}

static inline ptrdiff_t ref_extent(const struct ref *r) { return r->ub - r->lb; }

static inline void ref_basic(struct ref *r, size_t size)
{
    ref_init(r);
    ref_push(r, 0, size);
    r->lb = 0;
    r->ub = (ptrdiff_t)size;
}

/* Builder for derived typemaps: add copies of old at displacements, bounds as MPI defines. */
struct ref_builder {
    struct ref r;
    bool any;
};

static inline void refb_init(struct ref_builder *b)
{
    ref_init(&b->r);
    b->any = false;
}

static inline void refb_copy(struct ref_builder *b, const struct ref *old, ptrdiff_t at)
{
    for (size_t i = 0; i < old->n; i++)
        ref_push(&b->r, at + old->disp[i], old->len[i]);
    if (!b->any || at + old->lb < b->r.lb)
        b->r.lb = at + old->lb;
    if (!b->any || at + old->ub > b->r.ub)
        b->r.ub = at + old->ub;
    b->any = true;
}

static inline void refb_done(struct ref_builder *b, struct ref *out)
{
    if (!b->any)
        b->r.lb = b->r.ub = 0;
    *out = b->r;
}

static inline void ref_true(const struct ref *r, ptrdiff_t *tlb, ptrdiff_t *text)
{
    ptrdiff_t lo = 0, hi = 0;
    for (size_t i = 0; i < r->n; i++) {
        ptrdiff_t a = r->disp[i], e = a + (ptrdiff_t)r->len[i];
        lo = i == 0 || a < lo ? a : lo;
        hi = i == 0 || e > hi ? e : hi;
    }
    *tlb = lo;
    *text = hi - lo;
}

/* The bytes [lo, hi) relative to the buffer address that count elements touch. */
static inline void ref_span(const struct ref *r, size_t count, ptrdiff_t *lo, ptrdiff_t *hi)
{
    ptrdiff_t tlb, text, ext = ref_extent(r);
    ref_true(r, &tlb, &text);
    *lo = 0;
    *hi = 0;
    if (count == 0 || r->n == 0)
        return;
    ptrdiff_t last = (ptrdiff_t)(count - 1) * ext;
    *lo = tlb + (last < 0 ? last : 0);
    *hi = tlb + text + (last > 0 ? last : 0);
}

static inline void ref_pack(const struct ref *r, const char *buf, size_t count, char *out)
{
    for (size_t k = 0; k < count; k++)
        for (size_t i = 0; i < r->n; i++) {
            memcpy(out, buf + (ptrdiff_t)k * ref_extent(r) + r->disp[i], r->len[i]);
            out += r->len[i];
        }
}

static inline void ref_unpack(const struct ref *r, const char *in, char *buf, size_t count)
{
    for (size_t k = 0; k < count; k++)
        for (size_t i = 0; i < r->n; i++) {
            memcpy(buf + (ptrdiff_t)k * ref_extent(r) + r->disp[i], in, r->len[i]);
            in += r->len[i];
        }
}

/* A user buffer able to hold count elements of r: base is the buffer address to pass. */
struct ref_buf {
    char *mem, *base;
    size_t bytes;
};

static inline void ref_buf_alloc(struct ref_buf *b, const struct ref *r, size_t count, unsigned seed)
{
    ptrdiff_t lo, hi;
    ref_span(r, count, &lo, &hi);
    b->bytes = (size_t)(hi - lo) + 64;
    b->mem = malloc(b->bytes);
    b->base = b->mem + 32 - lo;
    for (size_t i = 0; i < b->bytes; i++)
        b->mem[i] = (char)((i * 131u + seed * 7u + 17u) & 0xff);
}

#endif
