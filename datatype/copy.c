/*
 * datatype/copy.c — typed-to-typed copy in one address space: what a send to self, the local
 * block of an alltoall or a single copy over the shared heap needs, without packing the whole
 * message first. dt_copy_flat walks two layouts given by their pieces alone (which is all a rank
 * knows of a peer's datatype over the shared heap), whole elements in tight loops; dt_copy_typed
 * uses it whenever both types can be listed, and otherwise packs into or unpacks from a
 * contiguous side directly, or goes slice by slice through a small bounce buffer (the range
 * calls resume at any byte).
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "datatype/type.h"
#include "runtime/heap.h"

#define DT_BOUNCE 8192 /* small enough for the stack, large enough to amortise a slice's seek */

/* Signatures that cannot match (datatype.h's dt_kinds_match). */
static bool dt_sig_clash(hint_type a, hint_type b) { return !dt_kinds_match(dt_sig_basic(a), dt_sig_basic(b)); }

/* t as pieces for dt_copy_flat: contiguous bytes, or its flattened list when it has one. */
static bool flat_view(hint_type t, struct dt_flat *f)
{
    *f = (struct dt_flat){.extent = t->extent};
    if (t->contig)
        return true;
    f->iov = dt_iov(t, &f->niov);
    return f->iov != NULL;
}

int dt_copy_typed(const void *src, size_t scount, hint_type st, void *dst, size_t rcount, hint_type rt,
                  size_t *bytes)
{
    int s;
    size_t n, room, done, d2;
    if (bytes == NULL)
        return HINT_ERR_ARG;
    *bytes = 0;
    if ((s = dt_check(st)) != HINT_SUCCESS || (s = dt_check(rt)) != HINT_SUCCESS)
        return s;
    if (__builtin_mul_overflow(scount, st->size, &n) || __builtin_mul_overflow(rcount, rt->size, &room))
        return HINT_ERR_COUNT;
    if (n > 0 && dt_sig_clash(st, rt))
        return HINT_ERR_TYPE;
    if (n > room)
        return HINT_ERR_TRUNCATE;
    if (n == 0)
        return HINT_SUCCESS;
    struct dt_flat fs, fd;
    if (flat_view(st, &fs) && flat_view(rt, &fd)) {
        /* piece against piece, the tight loops of dt_copy_flat; the range calls below only
           for a type too irregular to list */
        dt_copy_flat(src, &fs, dst, &fd, n);
        *bytes = n;
        return HINT_SUCCESS;
    }
    if (st->contig)
        s = dt_unpack_range_rep(src, n, 0, dst, rcount, rt, &done, DT_REP_AUTO);
    else if (rt->contig)
        s = dt_pack_range_rep(src, scount, st, 0, dst, n, &done, DT_REP_AUTO);
    else {
        char bounce[DT_BOUNCE];
        for (size_t off = 0; off < n && s == HINT_SUCCESS; off += done) {
            size_t len = n - off < DT_BOUNCE ? n - off : DT_BOUNCE;
            s = dt_pack_range_rep(src, scount, st, off, bounce, len, &done, DT_REP_AUTO);
            if (s == HINT_SUCCESS)
                s = dt_unpack_range_rep(bounce, done, off, dst, rcount, rt, &d2, DT_REP_AUTO);
        }
    }
    if (s == HINT_SUCCESS)
        *bytes = n;
    return s;
}

const struct dt_iov *dt_iov(hint_type t, size_t *n)
{
    *n = 0;
    if (dt_check(t) != HINT_SUCCESS || t->plan == NULL || t->plan->iov == NULL)
        return NULL;
    *n = t->plan->niov;
    return t->plan->iov;
}

unsigned long dt_iov_heap_tries;

const struct dt_iov *dt_iov_shared(hint_type t, size_t *n, enum dt_iov_where *where, uint64_t *id)
{
    static _Atomic uint64_t last_id;
    *n = 0;
    if (dt_check(t) != HINT_SUCCESS || t->plan == NULL)
        return NULL;
    struct dt_plan *p = t->plan;
    if (p->list_id == 0)
        p->list_id = atomic_fetch_add(&last_id, 1) + 1;
    *id = p->list_id; /* whichever list it is: a heap copy replaces a private one with the same pieces */
    size_t bytes = p->nblocks * sizeof *p->iov;
    if (p->iov && heap_span(p->iov, bytes) != UINT64_MAX) {
        *n = p->niov;
        *where = DT_IOV_HEAP;
        return p->iov;
    }
    /* the heap, unless it refused and has not grown since (a full partition stays full) */
    bool try_heap = heap.active && !(p->heap_refused && p->refused_growth == heap_growth());
    if ((p->shared == NULL && p->iov == NULL) || (!p->heap_shared && try_heap)) {
        /* first use, or a private list made while the heap had no room: try the heap (again) */
        struct dt_iov *v = try_heap ? heap_alloc(bytes, 64, false) : NULL;
        bool on_heap = v != NULL;
        dt_iov_heap_tries += try_heap;
        if (try_heap && v == NULL) {
            p->heap_refused = true;
            p->refused_growth = heap_growth();
        }
        if (v == NULL && p->iov == NULL && p->shared == NULL)
            v = malloc(bytes);
        if (v != NULL) {
            if (p->iov)
                memcpy(v, p->iov, bytes);
            else if (dt_iov_fill(t, v, p->nblocks) != HINT_SUCCESS) {
                on_heap ? heap_release(v) : free(v);
                v = NULL;
            }
        }
        if (v != NULL) {
            if (p->heap_shared)
                heap_release(p->shared);
            else
                free(p->shared);
            p->shared = v;
            p->heap_shared = on_heap;
        }
    }
    const struct dt_iov *list = p->shared ? p->shared : p->iov;
    if (list == NULL)
        return NULL;
    *n = p->nblocks;
    *where = p->heap_shared && p->shared ? DT_IOV_HEAP_COPY : DT_IOV_PRIVATE;
    return list;
}

/* A piece: the common small lengths as single moves, the rest through memcpy. */
static inline void copy_piece(char *d, const char *s, size_t n)
{
    switch (n) {
    case 4: memcpy(d, s, 4); return;
    case 8: memcpy(d, s, 8); return;
    case 16: memcpy(d, s, 16); return;
    default: memcpy(d, s, n);
    }
}

/* n runs of len bytes, sstep and dstep bytes apart: one loop per common length so that each
   compiles to plain moves. */
static void copy_runs(char *d, ptrdiff_t dstep, const char *s, ptrdiff_t sstep, size_t len, size_t n)
{
    if (len == 8)
        for (size_t i = 0; i < n; i++, d += dstep, s += sstep)
            memcpy(d, s, 8);
    else if (len == 16)
        for (size_t i = 0; i < n; i++, d += dstep, s += sstep)
            memcpy(d, s, 16);
    else
        for (size_t i = 0; i < n; i++, d += dstep, s += sstep)
            memcpy(d, s, len);
}

/* Data bytes of one element of a layout given by pieces (niov > 0). */
static size_t flat_elem_size(const struct dt_flat *f) { return f->iov[f->niov - 1].pos + f->iov[f->niov - 1].len; }

static bool same_pieces(const struct dt_flat *a, const struct dt_flat *b)
{
    if (a->niov != b->niov)
        return false;
    for (size_t i = 0; i < a->niov; i++)
        if (a->iov[i].len != b->iov[i].len)
            return false;
    return true;
}

/* Where a walk through a layout stands: the address it has reached and the bytes left in the
   current piece, kept up to date step by step (no multiply per piece). A contiguous layout is one
   piece without end. */
struct flat_cursor {
    const struct dt_flat *f;
    char *elem;   /* start of the current element */
    size_t piece;
    char *at;
    size_t left;
};

/* A cursor at element e of the layout f at base (e whole elements in). */
static void cursor_start(struct flat_cursor *c, const struct dt_flat *f, char *base, size_t e, size_t skip)
{
    c->f = f;
    c->piece = 0;
    c->elem = base;
    if (f->niov == 0) {
        c->at = base + skip;
        c->left = SIZE_MAX;
        return;
    }
    c->elem = base + (ptrdiff_t)e * f->extent;
    c->at = c->elem + f->iov[0].disp;
    c->left = f->iov[0].len;
}

static inline void cursor_step(struct flat_cursor *c, size_t k)
{
    c->at += k;
    if ((c->left -= k) != 0 || c->f->niov == 0)
        return;
    if (++c->piece == c->f->niov) {
        c->piece = 0;
        c->elem += c->f->extent;
    }
    c->at = c->elem + c->f->iov[c->piece].disp;
    c->left = c->f->iov[c->piece].len;
}

/* Piece against piece from wherever the two cursors stand; any pair of layouts. */
static void merge_copy(struct flat_cursor *src, struct flat_cursor *dst, size_t bytes)
{
    while (bytes > 0) {
        size_t k = src->left < dst->left ? src->left : dst->left;
        if (bytes < k)
            k = bytes;
        copy_piece(dst->at, src->at, k);
        cursor_step(src, k);
        cursor_step(dst, k);
        bytes -= k;
    }
}

/* Whole elements of a layout p to or from contiguous bytes at c (to_pieces: c is the source). */
static void pieces_contig(char *pbase, const struct dt_flat *p, char *c, size_t nel, bool to_pieces)
{
    if (p->niov == 1) {
        char *at = pbase + p->iov[0].disp;
        size_t len = p->iov[0].len;
        if (to_pieces)
            copy_runs(at, p->extent, c, (ptrdiff_t)len, len, nel);
        else
            copy_runs(c, (ptrdiff_t)len, at, p->extent, len, nel);
        return;
    }
    for (size_t e = 0; e < nel; e++, pbase += p->extent)
        for (size_t i = 0; i < p->niov; c += p->iov[i].len, i++)
            if (to_pieces)
                copy_piece(pbase + p->iov[i].disp, c, p->iov[i].len);
            else
                copy_piece(c, pbase + p->iov[i].disp, p->iov[i].len);
}

/* Whole elements of two layouts made of the same piece lengths, element against element. */
static void pieces_lockstep(const char *sbase, const struct dt_flat *s, char *dbase, const struct dt_flat *d, size_t nel)
{
    if (s->niov == 1) {
        copy_runs(dbase + d->iov[0].disp, d->extent, sbase + s->iov[0].disp, s->extent, s->iov[0].len, nel);
        return;
    }
    for (size_t e = 0; e < nel; e++, sbase += s->extent, dbase += d->extent)
        for (size_t i = 0; i < s->niov; i++)
            copy_piece(dbase + d->iov[i].disp, sbase + s->iov[i].disp, s->iov[i].len);
}

void dt_copy_flat(const char *sbase, const struct dt_flat *s, char *dbase, const struct dt_flat *d, size_t bytes)
{
    struct flat_cursor src, dst;
    size_t nel = 0, esz = 0;
    /* the bulk as whole elements in the tight loops, what is left (a partial element) by merging */
    if (s->niov == 0 && d->niov == 0) {
        memcpy(dbase, sbase, bytes);
        return;
    }
    if (s->niov == 0 || d->niov == 0) {
        const struct dt_flat *p = s->niov ? s : d;
        esz = flat_elem_size(p);
        nel = bytes / esz;
        pieces_contig(s->niov ? (char *)sbase : dbase, p, s->niov ? dbase : (char *)sbase, nel, d->niov != 0);
    } else if (same_pieces(s, d)) {
        esz = flat_elem_size(s);
        nel = bytes / esz;
        pieces_lockstep(sbase, s, dbase, d, nel);
    }
    if (bytes == nel * esz)
        return;
    cursor_start(&src, s, (char *)sbase, nel, nel * esz);
    cursor_start(&dst, d, dbase, nel, nel * esz);
    merge_copy(&src, &dst, bytes - nel * esz);
}

/* The piece of one element holding its packed byte rem (pos increases along the list). */
static size_t piece_holding(const struct dt_flat *f, size_t rem)
{
    size_t lo = 0, hi = f->niov;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (f->iov[mid].pos <= rem)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Appends [at, at + len) to out[*n], or extends the last range when it ends where this begins
   (pieces of consecutive elements often do). False when out is full. */
static bool iovec_put(struct iovec *out, size_t *n, size_t max, char *at, size_t len)
{
    if (*n > 0 && (char *)out[*n - 1].iov_base + out[*n - 1].iov_len == at) {
        out[*n - 1].iov_len += len;
        return true;
    }
    if (*n == max)
        return false;
    out[(*n)++] = (struct iovec){at, len};
    return true;
}

size_t dt_flat_iovec(const struct dt_flat *f, char *base, size_t offset, size_t bytes, struct iovec *out,
                     size_t max, size_t *covered)
{
    size_t n = 0;
    *covered = 0;
    if (bytes == 0 || max == 0)
        return 0;
    if (f->niov == 0) {
        out[0] = (struct iovec){base + offset, bytes};
        *covered = bytes;
        return 1;
    }
    size_t esz = flat_elem_size(f), e = offset / esz, rem = offset % esz, i = piece_holding(f, rem);
    char *elem = base + (ptrdiff_t)e * f->extent;
    size_t skip = rem - f->iov[i].pos;
    while (*covered < bytes) {
        size_t len = f->iov[i].len - skip;
        if (len > bytes - *covered)
            len = bytes - *covered;
        if (!iovec_put(out, &n, max, elem + f->iov[i].disp + skip, len))
            break;
        *covered += len;
        skip = 0;
        if (++i == f->niov) {
            i = 0;
            elem += f->extent;
        }
    }
    return n;
}
