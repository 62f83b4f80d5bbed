/*
 * datatype/commit.c — commit: flatten, normalise, build the three pack representations.
 *
 * Normalisation is what makes equal layouts get equal descriptions however they were built
 * (issue 9, the MARs paper's "indexed gap" vs "optimized indexed gap"): commit walks the
 * construction tree once and produces the merged block list (adjacent pieces joined), which
 * depends only on the layout. Everything else is a deterministic function of that list:
 *   (b) IOVEC: the list itself, with each piece's packed offset;
 *   (c) MARs: the same pieces, walked piece-major by the packer (pack.c);
 *   (a) loop description: runs of equal-length pieces at a constant stride become vector-like
 *       DATA items (count/blocklen/stride), then repeated item sequences at a constant shift
 *       become LOOP items, pass after pass until nothing repeats.
 * So the description can never depend on the constructor calls, only on the bytes.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datatype/type.h"
#include "runtime/heap.h"

#define DT_PMAX 32 /* longest repeated sequence looked for; longer periods stay unrolled */

/* A node of the description while it is being compressed. */
struct dt_node {
    ptrdiff_t disp, stride;
    size_t count, blocklen, size; /* size: packed bytes of one repetition */
    size_t nbody;
    struct dt_node *body; /* LOOP: nbody items, displacements relative to disp */
};

struct dt_seq {
    struct dt_node *v;
    size_t n, cap;
};

struct dt_sink {
    int st;
    bool pend;        /* a merged piece is waiting for its successor */
    ptrdiff_t pd;
    size_t pl;
    struct dt_iov *iov; /* NULL once past DT_IOV_MAX */
    size_t niov, iovcap;
    size_t nblocks, pos;
    bool pieces_only; /* dt_iov_fill: the pieces into iov[0..iovcap), no vectorizer */
    ptrdiff_t first_disp;
    bool vec;          /* `cur` holds an open DATA item */
    struct dt_node cur;
    struct dt_seq elems;
};

static void dt_nodes_free(struct dt_node *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dt_nodes_free(v[i].body, v[i].nbody);
    free(v);
}

static int dt_seq_push(struct dt_seq *s, const struct dt_node *x)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        struct dt_node *v = realloc(s->v, cap * sizeof *v);
        if (v == NULL)
            return HINT_ERR_NOMEM;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = *x;
    return HINT_SUCCESS;
}

/* ---- flattening ---- */

static void dt_sink_vector(struct dt_sink *s, ptrdiff_t d, size_t l)
{
    struct dt_node *c = &s->cur;
    if (s->vec && c->blocklen == l && (c->count == 1 || d == c->disp + (ptrdiff_t)c->count * c->stride)) {
        if (c->count == 1)
            c->stride = d - c->disp;
        c->count++;
        return;
    }
    if (s->vec && (s->st = dt_seq_push(&s->elems, c)) != HINT_SUCCESS)
        return;
    *c = (struct dt_node){.disp = d, .count = 1, .blocklen = l, .size = l};
    s->vec = true;
}

/* One merged piece, final: goes to the IOVEC list and to the vectorizer. */
static void dt_sink_piece(struct dt_sink *s, ptrdiff_t d, size_t l)
{
    if (s->nblocks++ == 0)
        s->first_disp = d;
    if (s->pieces_only) {
        if (s->niov < s->iovcap)
            s->iov[s->niov] = (struct dt_iov){.disp = d, .len = l, .pos = s->pos};
        s->niov++;
        s->pos += l;
        return;
    }
    if (s->iov != NULL && s->niov == s->iovcap) {
        size_t cap = 2 * s->iovcap;
        struct dt_iov *v = cap <= DT_IOV_MAX ? realloc(s->iov, cap * sizeof *v) : NULL;
        if (v == NULL) {
            free(s->iov); /* too many pieces for IOVEC/MARs: the loop description serves */
            s->iov = NULL;
        } else {
            s->iov = v;
            s->iovcap = cap;
        }
    }
    if (s->iov != NULL)
        s->iov[s->niov++] = (struct dt_iov){.disp = d, .len = l, .pos = s->pos};
    s->pos += l;
    dt_sink_vector(s, d, l);
}

static void dt_sink_put(struct dt_sink *s, ptrdiff_t d, size_t l)
{
    if (s->pend && s->pd + (ptrdiff_t)s->pl == d) {
        s->pl += l;
        return;
    }
    if (s->pend)
        dt_sink_piece(s, s->pd, s->pl);
    s->pend = true;
    s->pd = d;
    s->pl = l;
}

static void dt_gen(hint_type t, ptrdiff_t base, struct dt_sink *s);

static void dt_gen_block(hint_type old, ptrdiff_t d, size_t bl, struct dt_sink *s)
{
    if (old->size == 0 || bl == 0)
        return;
    /* copies of a one-run type packed edge to edge are a single run: no per-copy walk */
    if (old->run && old->extent == (ptrdiff_t)old->size) {
        dt_sink_put(s, d + old->true_lb, bl * old->size);
        return;
    }
    for (size_t j = 0; j < bl && s->st == HINT_SUCCESS; j++)
        dt_gen(old, d + (ptrdiff_t)j * old->extent, s);
}

static void dt_gen(hint_type t, ptrdiff_t base, struct dt_sink *s)
{
    if (t->size == 0 || s->st != HINT_SUCCESS)
        return;
    if (t->run) {
        dt_sink_put(s, base + t->true_lb, t->size);
        return;
    }
    switch (t->kind) {
    case DT_K_HVECTOR:
        for (size_t i = 0; i < t->count && s->st == HINT_SUCCESS; i++)
            dt_gen_block(t->types[0], base + (ptrdiff_t)i * t->stride, t->blocklen, s);
        break;
    case DT_K_HINDEXED:
        for (size_t i = 0; i < t->count && s->st == HINT_SUCCESS; i++)
            dt_gen_block(t->types[t->ntypes == 1 ? 0 : i], base + t->displs[i], t->blocklens[i], s);
        break;
    case DT_K_RESIZED:
        dt_gen(t->types[0], base, s);
        break;
    default:
        s->st = HINT_ERR_INTERNAL;
    }
}

/* ---- compression of the DATA items into loops ---- */

static bool dt_shape_eq(const struct dt_node *a, const struct dt_node *b)
{
    if (a->count != b->count || a->stride != b->stride || a->blocklen != b->blocklen || a->nbody != b->nbody)
        return false;
    for (size_t k = 0; k < a->nbody; k++)
        if (a->body[k].disp != b->body[k].disp || !dt_shape_eq(&a->body[k], &b->body[k]))
            return false;
    return true;
}

/* seq[j..j+p) is seq[i..i+p) moved by shift bytes */
static bool dt_seq_match(const struct dt_node *seq, size_t i, size_t j, size_t p, ptrdiff_t shift)
{
    for (size_t k = 0; k < p; k++)
        if (seq[j + k].disp - seq[i + k].disp != shift || !dt_shape_eq(&seq[i + k], &seq[j + k]))
            return false;
    return true;
}

static int dt_compress(struct dt_node **v, size_t *n);

/* Drops the bodies of seq[i..i+n): they were moved into a new item or are repeats of one. */
static void dt_seq_disown(struct dt_node *seq, size_t i, size_t n, bool free_them)
{
    for (size_t k = i; k < i + n; k++) {
        if (free_them)
            dt_nodes_free(seq[k].body, seq[k].nbody);
        seq[k].body = NULL;
        seq[k].nbody = 0;
    }
}

/* Replaces r repetitions of seq[i..i+p) (shift bytes apart) with one item in *out. */
static int dt_make_loop(struct dt_node *seq, size_t i, size_t p, size_t r, ptrdiff_t shift, struct dt_node *out)
{
    struct dt_node *body;
    /* one item repeated at its own total length is that item with a larger count */
    if (p == 1 && (seq[i].count == 1 || shift == (ptrdiff_t)seq[i].count * seq[i].stride)) {
        *out = seq[i];
        out->stride = seq[i].count == 1 ? shift : seq[i].stride;
        out->count = seq[i].count * r;
        dt_seq_disown(seq, i, 1, false);
        dt_seq_disown(seq, i + 1, r - 1, true);
        return HINT_SUCCESS;
    }
    body = malloc(p * sizeof *body);
    if (body == NULL)
        return HINT_ERR_NOMEM;
    memcpy(body, &seq[i], p * sizeof *body);
    *out = (struct dt_node){.disp = seq[i].disp, .stride = shift, .count = r, .nbody = p, .body = body};
    for (size_t k = 0; k < p; k++) {
        body[k].disp -= out->disp;
        out->size += body[k].count * body[k].size;
    }
    dt_seq_disown(seq, i, p, false);
    dt_seq_disown(seq, i + p, (r - 1) * p, true);
    /* the body may repeat inside itself too (A B B A B B -> loop{A, loop{B}}) */
    return dt_compress(&out->body, &out->nbody);
}

/* Finds the shortest sequence starting at i that repeats right after itself; 0 if none. */
static size_t dt_find_period(const struct dt_node *seq, size_t n, size_t i, size_t *reps, ptrdiff_t *shift)
{
    for (size_t p = 1; p <= DT_PMAX && i + 2 * p <= n; p++) {
        ptrdiff_t s = seq[i + p].disp - seq[i].disp;
        if (!dt_shape_eq(&seq[i], &seq[i + p]) || !dt_seq_match(seq, i, i + p, p, s))
            continue;
        size_t r = 2;
        while (i + (r + 1) * p <= n && dt_seq_match(seq, i, i + r * p, p, (ptrdiff_t)r * s))
            r++;
        *reps = r;
        *shift = s;
        return p;
    }
    return 0;
}

/* One left-to-right pass; *changed when some loop was made. */
static int dt_compress_pass(struct dt_node **v, size_t *n, bool *changed)
{
    int st = HINT_SUCCESS;
    struct dt_node *seq = *v;
    struct dt_seq out = {0};
    size_t i = 0;
    *changed = false;
    while (i < *n) {
        size_t r = 0, p;
        ptrdiff_t shift = 0;
        struct dt_node x = seq[i];
        if ((p = dt_find_period(seq, *n, i, &r, &shift)) > 0) {
            if ((st = dt_make_loop(seq, i, p, r, shift, &x)) != HINT_SUCCESS)
                goto out;
            *changed = true;
        } else {
            p = r = 1;
        }
        if ((st = dt_seq_push(&out, &x)) != HINT_SUCCESS) {
            dt_nodes_free(x.body, x.nbody);
            goto out;
        }
        i += p * r;
    }
out:
    if (st != HINT_SUCCESS) {
        /* the items not yet moved to out still belong to seq */
        for (; i < *n; i++)
            dt_nodes_free(seq[i].body, seq[i].nbody);
        dt_nodes_free(out.v, out.n);
        free(seq);
        *v = NULL;
        *n = 0;
        return st;
    }
    free(seq);
    *v = out.v;
    *n = out.n;
    return HINT_SUCCESS;
}

static int dt_compress(struct dt_node **v, size_t *n)
{
    bool changed = true;
    int st = HINT_SUCCESS;
    while (changed && *n > 1 && st == HINT_SUCCESS)
        st = dt_compress_pass(v, n, &changed);
    return st;
}

/* ---- serialisation into the plan ---- */

static size_t dt_node_span(const struct dt_node *x)
{
    size_t s = 1;
    for (size_t k = 0; k < x->nbody; k++)
        s += dt_node_span(&x->body[k]);
    return s;
}

static size_t dt_sat_mul(size_t a, size_t b)
{
    size_t r;
    return __builtin_mul_overflow(a, b, &r) ? SIZE_MAX : r;
}

static size_t dt_sat_add(size_t a, size_t b)
{
    size_t r;
    return __builtin_add_overflow(a, b, &r) ? SIZE_MAX : r;
}

/* Writes x and its body in pre-order at items[*at]; returns the DATA entries per repetition. */
static size_t dt_emit(const struct dt_node *x, struct dt_item *items, size_t *at)
{
    struct dt_item *it = &items[(*at)++];
    size_t visits = 0;
    *it = (struct dt_item){.disp = x->disp, .stride = x->count > 1 ? x->stride : 0, .count = x->count,
                           .blocklen = x->nbody ? 0 : x->blocklen, .nbody = x->nbody,
                           .span = dt_node_span(x), .size = x->size};
    if (x->nbody == 0)
        return 1;
    for (size_t k = 0; k < x->nbody; k++)
        visits = dt_sat_add(visits, dt_sat_mul(x->body[k].count > 1 && x->body[k].nbody ? x->body[k].count : 1,
                                               dt_emit(&x->body[k], items, at)));
    return visits;
}

static int dt_plan_items(hint_type t, struct dt_plan *p, const struct dt_seq *top)
{
    struct dt_node root = {.disp = 0, .stride = t->extent, .count = 1, .size = t->size, .nbody = top->n,
                           .body = top->v};
    size_t at = 0;
    p->nitems = dt_node_span(&root);
    p->items = malloc(p->nitems * sizeof *p->items);
    if (p->items == NULL)
        return HINT_ERR_NOMEM;
    p->loop_visits = dt_emit(&root, p->items, &at);
    p->items[0].stride = t->extent; /* the root repeats once per element of the user's count */
    /* a single DATA item whose repetitions tile the extent continues into the next element */
    if (top->n == 1 && top->v[0].nbody == 0) {
        const struct dt_node *d = &top->v[0];
        if (d->count == 1 || (ptrdiff_t)d->count * d->stride == t->extent) {
            p->fusable = true;
            p->fused = (struct dt_item){.disp = d->disp, .stride = d->count == 1 ? t->extent : d->stride,
                                        .count = d->count, .blocklen = d->blocklen, .span = 1,
                                        .size = d->blocklen};
        }
    }
    return HINT_SUCCESS;
}

void dt_plan_free(struct dt_plan *p)
{
    if (p == NULL)
        return;
    free(p->items);
    free(p->iov);
    if (p->heap_shared)
        heap_release(p->shared);
    else
        free(p->shared);
    free(p);
}

int dt_iov_fill(hint_type t, struct dt_iov *out, size_t n)
{
    struct dt_sink s = {.pieces_only = true, .iov = out, .iovcap = n};
    dt_gen(t, 0, &s);
    if (s.pend)
        dt_sink_piece(&s, s.pd, s.pl);
    if (s.st != HINT_SUCCESS)
        return s.st;
    return s.niov == n ? HINT_SUCCESS : HINT_ERR_INTERNAL;
}

int dt_plan_build(hint_type t)
{
    int st = HINT_SUCCESS;
    struct dt_sink s = {0};
    struct dt_plan *p = calloc(1, sizeof *p);
    if (p == NULL)
        return HINT_ERR_NOMEM;
    s.iovcap = 16;
    if ((s.iov = malloc(s.iovcap * sizeof *s.iov)) == NULL) {
        st = HINT_ERR_NOMEM;
        goto out;
    }
    dt_gen(t, 0, &s);
    if (s.pend)
        dt_sink_piece(&s, s.pd, s.pl);
    if (s.vec && s.st == HINT_SUCCESS)
        s.st = dt_seq_push(&s.elems, &s.cur);
    if ((st = s.st) != HINT_SUCCESS)
        goto out;
    if ((st = dt_compress(&s.elems.v, &s.elems.n)) != HINT_SUCCESS)
        goto out;
    if ((st = dt_plan_items(t, p, &s.elems)) != HINT_SUCCESS)
        goto out;
    p->iov = s.iov;
    p->niov = s.iov ? s.niov : 0;
    p->nblocks = s.nblocks;
    s.iov = NULL;
    t->contig = s.nblocks == 1 && s.first_disp == 0 && t->lb == 0 && t->extent == (ptrdiff_t)t->size;
    t->basic = t->contig && t->sig >= 0 ? t->sig : DT_NONE;
    t->plan = p;
    p = NULL;
out:
    free(s.iov);
    dt_nodes_free(s.elems.v, s.elems.n);
    dt_plan_free(p);
    return st;
}

/* ---- introspection ---- */

static void dt_put(char *buf, size_t n, size_t *len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void dt_put(char *buf, size_t n, size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(*len < n ? buf + *len : NULL, *len < n ? n - *len : 0, fmt, ap);
    va_end(ap);
    if (k > 0)
        *len += (size_t)k;
}

size_t dt_describe(hint_type t, char *buf, size_t n)
{
    size_t len = 0, depth[64], nd = 0;
    if (n > 0)
        buf[0] = '\0';
    if (dt_check(t) != HINT_SUCCESS)
        return 0;
    dt_put(buf, n, &len, "size %zu lb %td extent %td true_lb %td true_extent %td\n", t->size, t->lb,
           t->extent, t->true_lb, t->true_extent);
    if (t->plan == NULL) {
        dt_put(buf, n, &len, "DATA disp 0 count 1 blocklen %zu stride 0\n", t->size);
        return len;
    }
    /* depth[] holds how many items each open LOOP still has to print */
    for (size_t i = 1; i < t->plan->nitems; i++) {
        const struct dt_item *it = &t->plan->items[i];
        dt_put(buf, n, &len, "%*s", (int)(2 * nd), "");
        if (it->nbody)
            dt_put(buf, n, &len, "LOOP disp %td count %zu stride %td size %zu\n", it->disp, it->count, it->stride,
                   it->size);
        else
            dt_put(buf, n, &len, "DATA disp %td count %zu blocklen %zu stride %td\n", it->disp, it->count,
                   it->blocklen, it->stride);
        if (nd > 0)
            depth[nd - 1]--;
        if (it->nbody && nd < 64)
            depth[nd++] = it->nbody;
        else
            while (nd > 0 && depth[nd - 1] == 0)
                nd--;
    }
    return len;
}

size_t dt_nblocks(hint_type t) { return t->plan ? t->plan->nblocks : 1; }
size_t dt_loop_visits(hint_type t) { return t->plan ? t->plan->loop_visits : 1; }
