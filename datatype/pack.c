/*
 * datatype/pack.c — pack and unpack by position, with the three representations of commit.c.
 *
 * Every entry point is a slice [offset, offset + len) of the packed stream of count elements, so
 * a pack can stop at any byte and resume later with identical results: nothing is kept between
 * calls, the slice start is found again from the offset (O(depth) for the loop description,
 * a binary search for IOVEC). hint_pack / hint_unpack are the slice [0, count * size).
 *
 *   loop  — interprets the nested-loop description; a DATA item copies all its blocks in one
 *           tight loop, so regular layouts cost little bookkeeping per block.
 *   iovec — walks the merged pieces element after element: one bookkeeping step per piece.
 *   mars  — piece-major (the MARs paper): each piece is copied for every element of a segment
 *           before moving to the next piece, so the description is parsed once per segment and
 *           the inner loop is a fixed-size copy at a fixed stride.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "datatype/type.h"
#include "runtime/runtime.h"

#define DT_SEG_BYTES 8192 /* default MARs segment: a quarter of a 32 KiB L1d of user buffer */

/* Where a slice copy stands: the packed cursor, bytes still to skip, bytes still to move. */
struct dt_mv {
    char *packed;
    size_t skip, left;
    bool unpack;
};

/* Small copies as at most four unaligned loads and stores (overlapping when n is not a power of
   two) instead of a call: per-block copies of a few bytes are what the MARs paper counts, and a
   libc memcpy call costs more instructions than the copy itself. Source and destination never
   overlap, and both loads happen before the stores anyway. */
struct dt_b16 {
    uint64_t a, b;
};
struct dt_b32 {
    struct dt_b16 a, b;
};

/* 16 <= n <= 32 and 32 < n <= 64: two overlapping halves. */
static inline void dt_copy_16_32(char *dst, const char *src, size_t n)
{
    struct dt_b16 x, y;
    memcpy(&x, src, 16);
    memcpy(&y, src + n - 16, 16);
    memcpy(dst, &x, 16);
    memcpy(dst + n - 16, &y, 16);
}

static inline void dt_copy_32_64(char *dst, const char *src, size_t n)
{
    struct dt_b32 x, y;
    memcpy(&x, src, 32);
    memcpy(&y, src + n - 32, 32);
    memcpy(dst, &x, 32);
    memcpy(dst + n - 32, &y, 32);
}

static inline void dt_copy(char *dst, const char *src, size_t n)
{
    if (n >= 16 && n <= 32) {
        dt_copy_16_32(dst, src, n);
    } else if (n > 32 && n <= 64) {
        dt_copy_32_64(dst, src, n);
    } else if (n >= 8 && n < 16) {
        uint64_t x, y;
        memcpy(&x, src, 8);
        memcpy(&y, src + n - 8, 8);
        memcpy(dst, &x, 8);
        memcpy(dst + n - 8, &y, 8);
    } else if (n >= 4 && n < 8) {
        uint32_t x, y;
        memcpy(&x, src, 4);
        memcpy(&y, src + n - 4, 4);
        memcpy(dst, &x, 4);
        memcpy(dst + n - 4, &y, 4);
    } else if (n < 4) {
        for (size_t i = 0; i < n; i++)
            dst[i] = src[i];
    } else {
        memcpy(dst, src, n);
    }
}

static inline void dt_move(struct dt_mv *m, char *user, size_t n)
{
    if (m->unpack)
        dt_copy(user, m->packed, n);
    else
        dt_copy(m->packed, user, n);
    m->packed += n;
    m->left -= n;
}

/* n whole blocks of bl bytes, stride apart; the common sizes get their own loops. */
#define DT_BLOCKS_LOOP(BL, USER_TO)                                                               \
    for (size_t i = 0; i < n; i++, u += stride, p += (BL)) {                                      \
        if (USER_TO)                                                                              \
            memcpy(u, p, (BL));                                                                   \
        else                                                                                      \
            memcpy(p, u, (BL));                                                                   \
    }
/* Other lengths: the size class is picked once per run of blocks, not once per block. */
#define DT_BLOCKS_WITH(COPY, USER_TO)                                                             \
    for (size_t i = 0; i < n; i++, u += stride, p += bl) {                                        \
        if (USER_TO)                                                                              \
            COPY(u, p, bl);                                                                       \
        else                                                                                      \
            COPY(p, u, bl);                                                                       \
    }
#define DT_BLOCKS_ANY(USER_TO)                                                                    \
    if (bl > 32 && bl <= 64)                                                                      \
        DT_BLOCKS_WITH(dt_copy_32_64, USER_TO)                                                    \
    else if (bl >= 16 && bl <= 32)                                                                \
        DT_BLOCKS_WITH(dt_copy_16_32, USER_TO)                                                    \
    else                                                                                          \
        DT_BLOCKS_WITH(dt_copy, USER_TO)

static void dt_blocks_at(char *u, ptrdiff_t stride, size_t bl, size_t n, char *p, bool unpack)
{
    if (stride == (ptrdiff_t)bl || n == 1) {
        if (unpack)
            dt_copy(u, p, bl * n);
        else
            dt_copy(p, u, bl * n);
    } else if (unpack) {
        switch (bl) {
        case 8: DT_BLOCKS_LOOP(8, 1) break;
        case 16: DT_BLOCKS_LOOP(16, 1) break;
        case 4: DT_BLOCKS_LOOP(4, 1) break;
        default: DT_BLOCKS_ANY(1)
        }
    } else {
        switch (bl) {
        case 8: DT_BLOCKS_LOOP(8, 0) break;
        case 16: DT_BLOCKS_LOOP(16, 0) break;
        case 4: DT_BLOCKS_LOOP(4, 0) break;
        default: DT_BLOCKS_ANY(0)
        }
    }
}

static void dt_blocks(char *u, ptrdiff_t stride, size_t bl, size_t n, struct dt_mv *m)
{
    dt_blocks_at(u, stride, bl, n, m->packed, m->unpack);
    m->packed += bl * n;
    m->left -= bl * n;
}

/* ---- loop description ---- */

static void dt_loop_data(const struct dt_item *it, char *base, size_t count, struct dt_mv *m)
{
    char *p = base + it->disp;
    size_t bl = it->blocklen, k = 0, nfull;
    if (m->skip > 0) {
        if (m->skip >= count * bl) {
            m->skip -= count * bl;
            return;
        }
        k = m->skip / bl;
        size_t off = m->skip % bl;
        m->skip = 0;
        if (off > 0) {
            size_t n = bl - off < m->left ? bl - off : m->left;
            dt_move(m, p + (ptrdiff_t)k * it->stride + off, n);
            k++;
        }
    }
    nfull = count - k < m->left / bl ? count - k : m->left / bl;
    if (nfull > 0)
        dt_blocks(p + (ptrdiff_t)k * it->stride, it->stride, bl, nfull, m);
    k += nfull;
    if (k < count && m->left > 0)
        dt_move(m, p + (ptrdiff_t)k * it->stride, m->left);
}

static void dt_loop_item(const struct dt_item *items, size_t idx, char *base, size_t count, struct dt_mv *m)
{
    const struct dt_item *it = &items[idx];
    size_t k = 0;
    if (it->nbody == 0) {
        dt_loop_data(it, base, count, m);
        return;
    }
    if (m->skip > 0 && it->size > 0) {
        if (m->skip >= count * it->size) {
            m->skip -= count * it->size;
            return;
        }
        k = m->skip / it->size;
        m->skip %= it->size;
    }
    for (; k < count && m->left > 0; k++) {
        char *b = base + it->disp + (ptrdiff_t)k * it->stride;
        for (size_t j = idx + 1, c = 0; c < it->nbody && m->left > 0; c++, j += items[j].span)
            dt_loop_item(items, j, b, items[j].count, m);
    }
}

/* The body of one element through the general (skipping, bounded) walk. */
static void dt_loop_elem(const struct dt_item *items, char *base, struct dt_mv *m)
{
    for (size_t j = 1, c = 0; c < items[0].nbody && m->left > 0; c++, j += items[j].span)
        dt_loop_item(items, j, base, items[j].count, m);
}

/* Whole repetitions only: no skip or bound to test per item, which is most of a pack. DATA items
   are handled in the caller's loop, so only LOOP items cost a call. */
static inline char *dt_data_full(const struct dt_item *it, char *base, size_t count, char *p, bool unpack)
{
    char *u = base + it->disp;
    if (count == 1) {
        if (unpack)
            dt_copy(u, p, it->blocklen);
        else
            dt_copy(p, u, it->blocklen);
    } else if (it->blocklen == 8) { /* vectors of doubles and longs: inline, no call */
        char *q = p;
        for (size_t i = 0; i < count; i++, u += it->stride, q += 8) {
            if (unpack)
                memcpy(u, q, 8);
            else
                memcpy(q, u, 8);
        }
    } else {
        dt_blocks_at(u, it->stride, it->blocklen, count, p, unpack);
    }
    return p + count * it->blocklen;
}

/* One copy per direction, so the direction test leaves the inner loops. */
#define DT_DEFINE_LOOP_FULL(NAME, UNPACK)                                                         \
    static char *NAME(const struct dt_item *items, size_t idx, char *base, size_t count, char *p)  \
    {                                                                                             \
        const struct dt_item *it = &items[idx];                                                   \
        for (size_t k = 0; k < count; k++) {                                                      \
            char *b = base + it->disp + (ptrdiff_t)k * it->stride;                                \
            for (size_t j = idx + 1, c = 0; c < it->nbody; c++, j += items[j].span)               \
                p = items[j].nbody ? NAME(items, j, b, items[j].count, p)                         \
                                   : dt_data_full(&items[j], b, items[j].count, p, UNPACK);       \
        }                                                                                         \
        return p;                                                                                 \
    }
DT_DEFINE_LOOP_FULL(dt_loop_full_pack, false)
DT_DEFINE_LOOP_FULL(dt_loop_full_unpack, true)

static char *dt_loop_full(const struct dt_item *items, size_t idx, char *base, size_t count, char *p, bool unpack)
{
    return unpack ? dt_loop_full_unpack(items, idx, base, count, p) : dt_loop_full_pack(items, idx, base, count, p);
}

/* nel whole elements of a description without LOOP items (most user types): the items are
   consecutive, so the walk is a plain array loop like IOVEC's, with vector items inside. */
static void dt_loop_flat(const struct dt_item *it, size_t n, char *user, ptrdiff_t ext, size_t nel, char *p,
                         bool unpack)
{
    for (size_t k = 0; k < nel; k++, user += ext) {
        if (unpack)
            for (size_t i = 0; i < n; i++)
                p = dt_data_full(&it[i], user, it[i].count, p, true);
        else
            for (size_t i = 0; i < n; i++)
                p = dt_data_full(&it[i], user, it[i].count, p, false);
    }
}

static void dt_run_loop(hint_type t, char *user, size_t count, struct dt_mv *m)
{
    const struct dt_plan *p = t->plan;
    const struct dt_item *items = p->items;
    size_t size = t->size, k = m->skip / size, nfull;
    if (p->fusable) {
        struct dt_item f = p->fused;
        dt_loop_data(&f, user, f.count * count, m);
        return;
    }
    if (m->skip % size > 0) { /* finish the element the slice starts in */
        size_t left = m->left, n = size - m->skip % size < left ? size - m->skip % size : left;
        m->skip %= size;
        m->left = n;
        dt_loop_elem(items, user + (ptrdiff_t)k * t->extent, m);
        m->left = left - n;
        k++;
    }
    m->skip = 0;
    nfull = m->left / size < count - k ? m->left / size : count - k;
    if (nfull > 0 && items[0].span == items[0].nbody + 1)
        dt_loop_flat(items + 1, items[0].nbody, user + (ptrdiff_t)k * t->extent, t->extent, nfull, m->packed,
                     m->unpack);
    else if (nfull > 0)
        dt_loop_full(items, 0, user + (ptrdiff_t)k * t->extent, nfull, m->packed, m->unpack);
    m->packed += nfull * size;
    k += nfull;
    m->left -= nfull * size;
    if (m->left > 0)
        dt_loop_elem(items, user + (ptrdiff_t)k * t->extent, m);
}

/* ---- IOVEC ---- */

/* The piece holding packed offset rem of one element (pos is increasing). */
static size_t dt_iov_find(const struct dt_iov *iov, size_t n, size_t rem)
{
    size_t lo = 0, hi = n;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (iov[mid].pos <= rem)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* nel whole elements, piece after piece; locals only, so nothing is reloaded between copies. */
static void dt_iov_elems(const struct dt_iov *iov, size_t n, char *user, ptrdiff_t ext, size_t nel, char *p,
                         size_t size, bool unpack)
{
    for (size_t k = 0; k < nel; k++, user += ext, p += size) {
        if (unpack)
            for (size_t i = 0; i < n; i++)
                dt_copy(user + iov[i].disp, p + iov[i].pos, iov[i].len);
        else
            for (size_t i = 0; i < n; i++)
                dt_copy(p + iov[i].pos, user + iov[i].disp, iov[i].len);
    }
}

/* Part of one element: from packed offset rem inside it, while the slice lasts. */
static void dt_iov_part(const struct dt_iov *iov, size_t n, char *base, size_t rem, struct dt_mv *m)
{
    size_t e = dt_iov_find(iov, n, rem), off = rem - iov[e].pos;
    for (; e < n && m->left > 0; e++, off = 0) {
        size_t c = iov[e].len - off < m->left ? iov[e].len - off : m->left;
        dt_move(m, base + iov[e].disp + off, c);
    }
}

/* Elements from k on, starting rem bytes into element k. */
static void dt_run_iovec_from(hint_type t, char *user, size_t k, size_t rem, struct dt_mv *m)
{
    const struct dt_iov *iov = t->plan->iov;
    size_t n = t->plan->niov, nfull;
    if (rem > 0) {
        dt_iov_part(iov, n, user + (ptrdiff_t)k * t->extent, rem, m);
        k++;
    }
    nfull = m->left / t->size;
    dt_iov_elems(iov, n, user + (ptrdiff_t)k * t->extent, t->extent, nfull, m->packed, t->size, m->unpack);
    m->packed += nfull * t->size;
    m->left -= nfull * t->size;
    if (m->left > 0)
        dt_iov_part(iov, n, user + (ptrdiff_t)(k + nfull) * t->extent, 0, m);
}

static void dt_run_iovec(hint_type t, char *user, struct dt_mv *m)
{
    size_t k = m->skip / t->size, rem = m->skip % t->size;
    m->skip = 0;
    dt_run_iovec_from(t, user, k, rem, m);
}

/* ---- MARs ---- */

#define DT_MARS_LOOP(LEN, USER_TO)                                                                \
    for (size_t j = 0; j < n; j++, u += ext, p += size) {                                         \
        if (USER_TO)                                                                              \
            memcpy(u, p, (LEN));                                                                  \
        else                                                                                      \
            memcpy(p, u, (LEN));                                                                  \
    }

#define DT_MARS_WITH(COPY, USER_TO)                                                               \
    for (size_t j = 0; j < n; j++, u += ext, p += size) {                                         \
        if (USER_TO)                                                                              \
            COPY(u, p, len);                                                                      \
        else                                                                                      \
            COPY(p, u, len);                                                                      \
    }
#define DT_MARS_ANY(USER_TO)                                                                      \
    if (len > 32 && len <= 64)                                                                    \
        DT_MARS_WITH(dt_copy_32_64, USER_TO)                                                      \
    else if (len >= 16 && len <= 32)                                                              \
        DT_MARS_WITH(dt_copy_16_32, USER_TO)                                                      \
    else                                                                                          \
        DT_MARS_WITH(dt_copy, USER_TO)

/* One piece for n elements: fixed length, fixed strides on both sides. */
static void dt_mars_piece(char *u, ptrdiff_t ext, char *p, size_t size, size_t len, size_t n, bool unpack)
{
    if (unpack) {
        switch (len) {
        case 8: DT_MARS_LOOP(8, 1) break;
        case 16: DT_MARS_LOOP(16, 1) break;
        case 4: DT_MARS_LOOP(4, 1) break;
        default: DT_MARS_ANY(1)
        }
    } else {
        switch (len) {
        case 8: DT_MARS_LOOP(8, 0) break;
        case 16: DT_MARS_LOOP(16, 0) break;
        case 4: DT_MARS_LOOP(4, 0) break;
        default: DT_MARS_ANY(0)
        }
    }
}

static size_t dt_segment(hint_type t);

static void dt_run_mars(hint_type t, char *user, size_t count, struct dt_mv *m)
{
    const struct dt_iov *iov = t->plan->iov;
    size_t niov = t->plan->niov, size = t->size, k = m->skip / size, rem = m->skip % size, seg = dt_segment(t);
    m->skip = 0;
    if (rem > 0) { /* the partial first element, as IOVEC does it */
        size_t left = m->left, n = size - rem < left ? size - rem : left;
        m->left = n;
        dt_run_iovec_from(t, user, k, rem, m);
        m->left = left - n;
        k++;
    }
    size_t nfull = m->left / size < count - k ? m->left / size : count - k;
    for (size_t done = 0; done < nfull;) {
        size_t n = nfull - done < seg ? nfull - done : seg;
        char *base = user + (ptrdiff_t)(k + done) * t->extent;
        for (size_t e = 0; e < niov; e++)
            dt_mars_piece(base + iov[e].disp, t->extent, m->packed + iov[e].pos, size, iov[e].len, n, m->unpack);
        m->packed += n * size;
        m->left -= n * size;
        done += n;
    }
    if (m->left > 0)
        dt_run_iovec_from(t, user, k + nfull, 0, m);
}

/* ---- settings: HINT_PACK, HINT_PACK_SEGMENT, read once ---- */

static pthread_once_t dt_env_once = PTHREAD_ONCE_INIT;
static int dt_env_rep = DT_REP_AUTO;
static size_t dt_env_seg;

static const char *const dt_rep_names[DT_NREP] = {"auto", "loop", "iovec", "mars"};

const char *dt_rep_name(int rep) { return rep >= 0 && rep < DT_NREP ? dt_rep_names[rep] : "?"; }

static void dt_env_read(void)
{
    const char *v = rt_cfg_str("HINT_PACK");
    for (int r = 0; v != NULL && r < DT_NREP; r++)
        if (strcasecmp(v, dt_rep_names[r]) == 0)
            dt_env_rep = r;
    if (v != NULL && *v != '\0' && strcasecmp(v, dt_rep_names[dt_env_rep]) != 0)
        fprintf(stderr, "hint: datatype: HINT_PACK=%s is not loop|iovec|mars|auto; using auto\n", v);
    dt_env_seg = (size_t)rt_cfg_long("HINT_PACK_SEGMENT"); /* 0: unset */
}

int dt_rep_default(void)
{
    pthread_once(&dt_env_once, dt_env_read);
    return dt_env_rep;
}

static size_t dt_segment(hint_type t)
{
    size_t span;
    if (t->mars_seg > 0)
        return t->mars_seg;
    pthread_once(&dt_env_once, dt_env_read);
    if (dt_env_seg > 0)
        return dt_env_seg;
    span = (size_t)(t->extent < 0 ? -t->extent : t->extent);
    span = span > t->size ? span : t->size;
    return span >= DT_SEG_BYTES ? 1 : DT_SEG_BYTES / (span ? span : 1);
}

/* ---- cost model ---- */

/* ns per unit: [0] loop item entered, [1] block inside a DATA item, [2] IOVEC piece, [3] MARs piece */
static double dt_cost[4];
static pthread_once_t dt_cost_once = PTHREAD_ONCE_INIT;

static double dt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void dt_run(hint_type t, char *user, size_t count, struct dt_mv *m, int rep);

/* Best of a few packs of count elements of t with rep, in ns. */
static double dt_time(hint_type t, int rep, size_t count, char *user, char *packed)
{
    double best = 1e30;
    for (int r = 0; r < 15; r++) { /* the first run warms the caches; the minimum drops noise */
        struct dt_mv m = {.packed = packed, .left = count * t->size};
        double t0 = dt_now();
        dt_run(t, user, count, &m, rep);
        double dt = dt_now() - t0;
        best = dt < best ? dt : best;
    }
    return best;
}

/* Two probes of 16 pieces of 8 bytes in a 512-byte extent, 64 elements (32 KiB of user buffer, so
   it stays in cache): one regular (a single DATA item), one whose gaps never repeat (a DATA item
   per piece). That separates the per-item and per-block costs of the loop interpreter. */
static void dt_calibrate(void)
{
    enum { NP = 16, NE = 64, EXT = 512 };
    size_t bl[NP];
    ptrdiff_t disp[NP], at = 0;
    hint_type reg = NULL, irr = NULL, regr = NULL, irrr = NULL;
    char *user = calloc(NE, EXT), *packed = malloc(NE * NP * 8);
    static const int gaps[NP] = {0, 1, 3, 2, 5, 1, 4, 2, 6, 3, 1, 5, 2, 4, 1, 3};
    dt_cost[0] = 5, dt_cost[1] = 1, dt_cost[2] = 3, dt_cost[3] = 1; /* fallback guesses */
    for (int i = 0; i < NP; i++) {
        bl[i] = 1;
        at += 8 * gaps[i];
        disp[i] = at;
        at += 8;
    }
    if (user == NULL || packed == NULL || hint_type_vector(NP, 1, 2, HINT_DOUBLE, &reg) ||
        hint_type_hindexed(NP, bl, disp, HINT_DOUBLE, &irr) || hint_type_resized(reg, 0, EXT, &regr) ||
        hint_type_resized(irr, 0, EXT, &irrr) || hint_type_commit(&regr) || hint_type_commit(&irrr))
        goto out;
    double n = NE * NP;
    double lr = dt_time(regr, DT_REP_LOOP, NE, user, packed), li = dt_time(irrr, DT_REP_LOOP, NE, user, packed);
    dt_cost[1] = lr / n;
    double visits = (double)irrr->plan->loop_visits * NE;
    dt_cost[0] = li > lr ? (li - lr) / visits : dt_cost[1] / 4;
    dt_cost[2] = dt_time(irrr, DT_REP_IOVEC, NE, user, packed) / n;
    dt_cost[3] = dt_time(irrr, DT_REP_MARS, NE, user, packed) / n;
out:
    hint_type_free(&reg);
    hint_type_free(&irr);
    hint_type_free(&regr);
    hint_type_free(&irrr);
    free(user);
    free(packed);
}

void dt_cost_model(double ns[4])
{
    pthread_once(&dt_cost_once, dt_calibrate);
    memcpy(ns, dt_cost, sizeof dt_cost);
}

/* Bookkeeping estimate per representation; the bytes copied are the same for all three, so they
   drop out of the comparison. */
static int dt_auto(hint_type t, size_t count)
{
    const struct dt_plan *p = t->plan;
    double c[4], n = (double)count, b = (double)p->nblocks, best;
    int rep = DT_REP_LOOP;
    dt_cost_model(c);
    double seg = (double)dt_segment(t), nseg = (n + seg - 1) / seg;
    double visits = p->fusable ? 1.0 / n : (double)p->loop_visits;
    best = n * (visits * c[0] + b * c[1]);
    if (p->iov == NULL)
        return rep;
    if (n * b * c[2] < best) {
        best = n * b * c[2];
        rep = DT_REP_IOVEC;
    }
    if (n * b * c[3] + nseg * b * c[0] < best)
        rep = DT_REP_MARS;
    return rep;
}

int dt_rep_choose(hint_type t, size_t count, int rep)
{
    if (rep == DT_REP_AUTO)
        rep = dt_rep_default();
    if (t->plan == NULL)
        return DT_REP_LOOP;
    if ((rep == DT_REP_IOVEC || rep == DT_REP_MARS) && t->plan->iov == NULL)
        return DT_REP_LOOP;
    return rep == DT_REP_AUTO ? dt_auto(t, count) : rep;
}

/* ---- entry points ---- */

static void dt_run(hint_type t, char *user, size_t count, struct dt_mv *m, int rep)
{
    if (t->contig || t->plan == NULL) {
        char *u = user + m->skip;
        if (m->unpack)
            memcpy(u, m->packed, m->left);
        else
            memcpy(m->packed, u, m->left);
        m->packed += m->left;
        m->left = 0;
        return;
    }
    switch (dt_rep_choose(t, count, rep)) {
    case DT_REP_IOVEC: dt_run_iovec(t, user, m); break;
    case DT_REP_MARS: dt_run_mars(t, user, count, m); break;
    default: dt_run_loop(t, user, count, m);
    }
}

/* Validates a slice of the stream of count elements; *n = bytes the slice really has. */
static int dt_slice(hint_type t, size_t count, size_t offset, size_t len, const void *user, const void *packed,
                    size_t *n)
{
    size_t total;
    ptrdiff_t span, ext;
    /* a type the user freed while an operation still holds it (dt_retain) packs on */
    if (t == NULL || t->magic != DT_MAGIC || !t->committed)
        return HINT_ERR_TYPE;
    ext = t->extent < 0 ? -t->extent : t->extent;
    if (__builtin_mul_overflow(count, t->size, &total))
        return HINT_ERR_COUNT;
    /* every address the copies touch must be representable */
    if (count > 0 && t->size > 0 &&
        (count - 1 > (size_t)PTRDIFF_MAX || __builtin_mul_overflow((ptrdiff_t)(count - 1), ext, &span) ||
         __builtin_add_overflow(span, t->true_extent, &span)))
        return HINT_ERR_COUNT;
    *n = offset >= total ? 0 : (total - offset < len ? total - offset : len);
    if (*n > 0 && (user == NULL || packed == NULL))
        return HINT_ERR_BUFFER;
    return HINT_SUCCESS;
}

int dt_pack_range_rep(const void *in, size_t count, hint_type t, size_t offset, void *out, size_t len,
                      size_t *done, int rep)
{
    size_t n = 0;
    int st;
    if (done == NULL)
        return HINT_ERR_ARG;
    *done = 0;
    if ((st = dt_slice(t, count, offset, len, in, out, &n)) != HINT_SUCCESS || n == 0)
        return st;
    struct dt_mv m = {.packed = out, .skip = offset, .left = n, .unpack = false};
    dt_run(t, (char *)(uintptr_t)in, count, &m, rep);
    *done = n;
    return HINT_SUCCESS;
}

int dt_unpack_range_rep(const void *in, size_t len, size_t offset, void *out, size_t count, hint_type t,
                        size_t *done, int rep)
{
    size_t n = 0;
    int st;
    if (done == NULL)
        return HINT_ERR_ARG;
    *done = 0;
    if ((st = dt_slice(t, count, offset, len, out, in, &n)) != HINT_SUCCESS || n == 0)
        return st;
    struct dt_mv m = {.packed = (char *)(uintptr_t)in, .skip = offset, .left = n, .unpack = true};
    dt_run(t, out, count, &m, rep);
    *done = n;
    return HINT_SUCCESS;
}

HINT_API int hint_pack_range(const void *in, size_t count, hint_type t, size_t offset, void *out, size_t len,
                             size_t *done)
{
    int st = dt_check(t);
    if (st != HINT_SUCCESS)
        return done == NULL ? HINT_ERR_ARG : st;
    return dt_pack_range_rep(in, count, t, offset, out, len, done, DT_REP_AUTO);
}

HINT_API int hint_unpack_range(const void *in, size_t len, size_t offset, void *out, size_t count, hint_type t,
                               size_t *done)
{
    int st = dt_check(t);
    if (st != HINT_SUCCESS)
        return done == NULL ? HINT_ERR_ARG : st;
    return dt_unpack_range_rep(in, len, offset, out, count, t, done, DT_REP_AUTO);
}

HINT_API int hint_pack_size(size_t count, hint_type t, size_t *size)
{
    int st = dt_valid(t);
    if (st != HINT_SUCCESS)
        return st;
    if (size == NULL)
        return HINT_ERR_ARG;
    if (__builtin_mul_overflow(count, t->size, size))
        return HINT_ERR_COUNT;
    return HINT_SUCCESS;
}

/* The whole count must fit after *position, else nothing moves (MPI_Pack's contract). */
static int dt_room(size_t count, hint_type t, size_t bufsize, const size_t *position, size_t *bytes)
{
    int st;
    if (position == NULL)
        return HINT_ERR_ARG;
    if ((st = dt_check(t)) != HINT_SUCCESS)
        return st;
    if (__builtin_mul_overflow(count, t->size, bytes))
        return HINT_ERR_COUNT;
    if (*position > bufsize || *bytes > bufsize - *position)
        return HINT_ERR_TRUNCATE;
    return HINT_SUCCESS;
}

HINT_API int hint_pack(const void *in, size_t count, hint_type t, void *out, size_t outsize, size_t *position)
{
    size_t bytes, done;
    int st = dt_room(count, t, outsize, position, &bytes);
    if (st != HINT_SUCCESS || bytes == 0)
        return st;
    if (out == NULL)
        return HINT_ERR_BUFFER;
    st = dt_pack_range_rep(in, count, t, 0, (char *)out + *position, bytes, &done, DT_REP_AUTO);
    if (st == HINT_SUCCESS)
        *position += done;
    return st;
}

HINT_API int hint_unpack(const void *in, size_t insize, size_t *position, void *out, size_t count, hint_type t)
{
    size_t bytes, done;
    int st = dt_room(count, t, insize, position, &bytes);
    if (st != HINT_SUCCESS || bytes == 0)
        return st;
    if (in == NULL)
        return HINT_ERR_BUFFER;
    st = dt_unpack_range_rep((const char *)in + *position, bytes, 0, out, count, t, &done, DT_REP_AUTO);
    if (st == HINT_SUCCESS)
        *position += done;
    return st;
}
