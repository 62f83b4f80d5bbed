/*
 * tests/ranks/typed_coll.c — alltoall, allgather, their v variants and bcast on derived datatypes,
 * every algorithm, run under hintrun: `typed_coll [mmap]`.
 *
 * Each rank picks its send and receive layouts from four (bytes; doubles with 8-byte holes;
 * pieces of 3, 1 and 2 bytes with holes; two 3-byte pieces at a negative stride), changing with
 * the round, so ranks of one call pass different types. Block sizes 0 to 63 KiB (v variants:
 * irregular, some empty, in reverse rank order with gaps), on the shared
 * heap or (argument `mmap`) in private mappings. A receive buffer is checked whole: data where
 * the type puts it, the holes' sentinel untouched. One layout is committed before hint_init, so
 * its piece list is off the heap: the copy order copies it to the heap and runs all the same.
 * At the end each rank prints how many of its calls with a derived side ran an algorithm that
 * copies straight from the layouts ("typed", per the tables) and how many were packed; the
 * driver compares that with HINT_COLL_STATS. Under HINT_COLL_TYPED=0 every such call must be packed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "collectives/coll.h"
#include "hint.h"
#include "tests/common/malloc_heap.h"
#include "tests/common/rankcheck.h"

int rc_rank;
static int P;
static bool use_mmap;
static bool typed_on = true; /* HINT_COLL_TYPED=0: every derived call is packed */
static unsigned long want_direct, want_packed;

#define NLAYOUTS 4
#define SENTINEL 0xA5

struct layout {
    const char *name;
    hint_type t;
    size_t size;      /* data bytes of one element */
    ptrdiff_t extent; /* bytes between elements */
    ptrdiff_t lo;     /* first byte touched, from the buffer address */
};
static struct layout L[NLAYOUTS];
static hint_type early; /* committed before hint_init: its pieces are off the heap */

static void make_layout(struct layout *l, const char *name, hint_type t)
{
    ptrdiff_t lb, ext, tlb, text;
    RC_OK(hint_type_commit(&t));
    RC_OK(hint_type_size(t, &l->size));
    RC_OK(hint_type_extent(t, &lb, &ext));
    RC_OK(hint_type_true_extent(t, &tlb, &text));
    *l = (struct layout){.name = name, .t = t, .size = l->size, .extent = ext, .lo = tlb < 0 ? tlb : 0};
}

static void make_layouts(void)
{
    hint_type t;
    L[0] = (struct layout){.name = "bytes", .t = HINT_BYTE, .size = 1, .extent = 1};
    RC_OK(hint_type_resized(HINT_DOUBLE, 0, 16, &t));
    make_layout(&L[1], "double+hole", t);
    size_t bl[] = {3, 1, 2};
    ptrdiff_t dp[] = {0, 5, 9};
    hint_type h;
    RC_OK(hint_type_hindexed(3, bl, dp, HINT_BYTE, &h));
    RC_OK(hint_type_resized(h, 0, 12, &t));
    RC_OK(hint_type_free(&h));
    make_layout(&L[2], "3-1-2 of 12", t);
    /* pieces at 0..2 and -5..-3: the second element sits 8 bytes on, the buffer reaches back */
    RC_OK(hint_type_hvector(2, 3, -5, HINT_BYTE, &t));
    make_layout(&L[3], "negative stride", t);
}

/* Byte j of the block from rank `from` to rank `to` in round k. */
static unsigned char val(int from, int to, int k, size_t j)
{
    return (unsigned char)(from * 37 + to * 11 + k * 5 + j * 3 + 1);
}

struct buf {
    unsigned char *mem, *at; /* allocation; buffer address (mem - lo) */
    size_t bytes;
};

static void buf_get(struct buf *b, const struct layout *l, size_t elems)
{
    size_t span = elems ? (elems - 1) * (size_t)l->extent + (size_t)(l->extent - l->lo) + 16 : 16;
    b->bytes = span;
    if (use_mmap) {
        b->mem = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        RC_CHECK(b->mem != MAP_FAILED);
    } else {
        RC_CHECK((b->mem = malloc(span)) != NULL);
    }
    memset(b->mem, SENTINEL, span);
    b->at = b->mem - l->lo;
}

static void buf_put(struct buf *b)
{
    if (use_mmap)
        munmap(b->mem, b->bytes);
    else
        free(b->mem);
}

/* Writes `bytes` of stream into layout l from element `elem` of the buffer at `at` on. */
static void put_at(const struct layout *l, unsigned char *at, size_t elem, const unsigned char *stream, size_t bytes)
{
    size_t n = bytes / l->size, pos = 0;
    RC_OK(hint_unpack(stream, bytes, &pos, at + (ptrdiff_t)elem * l->extent, n, l->t));
}

/* Writes `bytes` of stream into element block i of layout l at buffer address at. */
static void put_block(const struct layout *l, unsigned char *at, size_t i, const unsigned char *stream, size_t bytes)
{
    put_at(l, at, i * (bytes / l->size), stream, bytes);
}

static bool typed_alg(int op_id, const char *name)
{
    const struct coll_table *t = &coll_tables[op_id];
    for (int i = 0; i < t->nalgs; i++)
        if (strcmp(t->algs[i].name, name) == 0)
            return t->algs[i].typed;
    RC_FAIL("%s is not an algorithm of %s", name, t->op);
    return false;
}

/* The data a receive area must hold: the sentinel everywhere, then each block where the type
   puts it; compared whole, so the holes are checked too. */
static void check_area(const struct buf *r, const struct buf *want, const char *what, const char *alg,
                       const struct layout *sl, const struct layout *rl, int k)
{
    if (memcmp(r->mem, want->mem, r->bytes) == 0)
        return;
    size_t at = 0;
    while (r->mem[at] == want->mem[at])
        at++;
    RC_FAIL("%s %s round %d, %s -> %s: byte %zu of the receive area is %u, expected %u", what, alg, k, sl->name,
            rl->name, at, r->mem[at], want->mem[at]);
}

static void count_call(int op_id, const struct layout *sl, const struct layout *rl)
{
    const char *ran;
    RC_OK(hint_coll_last(coll_tables[op_id].op, &ran));
    if ((sl->t != HINT_BYTE || rl->t != HINT_BYTE) && P > 1)
        ++*(typed_on && typed_alg(op_id, ran) ? &want_direct : &want_packed);
}

/* One call: alltoall (P blocks out) or allgather (1 block out), layouts sl and rl, block bytes. */
static void one_call(int op_id, const char *alg, const struct layout *sl, const struct layout *rl, size_t block,
                     int k)
{
    bool a2a = op_id == COLL_ALLTOALL;
    size_t nsend = a2a ? (size_t)P : 1, sc = block / sl->size, rc = block / rl->size;
    struct buf s, r, want;
    buf_get(&s, sl, sc * nsend);
    buf_get(&r, rl, rc * (size_t)P);
    buf_get(&want, rl, rc * (size_t)P);
    unsigned char *stream = malloc(block + 1);
    for (size_t d = 0; d < nsend; d++) {
        for (size_t j = 0; j < block; j++)
            stream[j] = val(rc_rank, a2a ? (int)d : -1, k, j);
        put_block(sl, s.at, d, stream, block);
    }
    for (int src = 0; src < P; src++) {
        for (size_t j = 0; j < block; j++)
            stream[j] = val(src, a2a ? rc_rank : -1, k, j);
        put_block(rl, want.at, (size_t)src, stream, block);
    }
    int st = a2a ? hint_alltoall(s.at, sc, sl->t, r.at, rc, rl->t, HINT_WORLD)
                 : hint_allgather(s.at, sc, sl->t, r.at, rc, rl->t, HINT_WORLD);
    if (st != HINT_SUCCESS)
        RC_FAIL("%s %s %zu B, %s -> %s: %s", coll_tables[op_id].op, alg, block, sl->name, rl->name,
                hint_strerror(st));
    check_area(&r, &want, coll_tables[op_id].op, alg, sl, rl, k);
    if (block > 0)
        count_call(op_id, sl, rl);
    free(stream);
    buf_put(&s);
    buf_put(&r);
    buf_put(&want);
}

/* v variants: bytes of the block from rank `from` to rank `to` (0 for allgatherv) in round k, a
   multiple of every layout's element size (24), zero for some pairs. */
static size_t vbytes(int from, int to, int k, size_t unit) { return 24 * (size_t)((from * 3 + to * 5 + k) % 4) * unit; }

/* Element displacements of P blocks of counts[p] elements laid out in reverse rank order with a
   one-element gap after each; returns the elements spanned. */
static size_t reverse_displs(const size_t *counts, size_t *displs)
{
    size_t off = 0;
    for (int p = P - 1; p >= 0; p--) {
        displs[p] = off;
        off += counts[p] + 1;
    }
    return off;
}

/* alltoallv or allgatherv with irregular counts and reversed, gapped displacements. */
static void one_vcall(int op_id, const char *alg, const struct layout *sl, const struct layout *rl, size_t unit,
                      int k)
{
    bool a2a = op_id == COLL_ALLTOALLV;
    size_t sc[P], sd[P], rc[P], rd[P];
    for (int p = 0; p < P; p++) {
        sc[p] = vbytes(rc_rank, a2a ? p : 0, k, unit) / sl->size;
        rc[p] = vbytes(p, a2a ? rc_rank : 0, k, unit) / rl->size;
    }
    size_t sspan = a2a ? reverse_displs(sc, sd) : sc[0], rspan = reverse_displs(rc, rd);
    struct buf s, r, want;
    buf_get(&s, sl, sspan);
    buf_get(&r, rl, rspan);
    buf_get(&want, rl, rspan);
    unsigned char *stream = malloc(3 * 24 * unit + 1);
    for (int d = 0; d < (a2a ? P : 1); d++) {
        size_t n = sc[d] * sl->size;
        for (size_t j = 0; j < n; j++)
            stream[j] = val(rc_rank, a2a ? d : -1, k, j);
        put_at(sl, s.at, a2a ? sd[d] : 0, stream, n);
    }
    for (int src = 0; src < P; src++) {
        size_t n = rc[src] * rl->size;
        for (size_t j = 0; j < n; j++)
            stream[j] = val(src, a2a ? rc_rank : -1, k, j);
        put_at(rl, want.at, rd[src], stream, n);
    }
    int st = a2a ? hint_alltoallv(s.at, sc, sd, sl->t, r.at, rc, rd, rl->t, HINT_WORLD)
                 : hint_allgatherv(s.at, sc[0], sl->t, r.at, rc, rd, rl->t, HINT_WORLD);
    if (st != HINT_SUCCESS)
        RC_FAIL("%s %s unit %zu, %s -> %s: %s", coll_tables[op_id].op, alg, unit, sl->name, rl->name, hint_strerror(st));
    check_area(&r, &want, coll_tables[op_id].op, alg, sl, rl, k);
    count_call(op_id, sl, rl);
    free(stream);
    buf_put(&s);
    buf_put(&r);
    buf_put(&want);
}

/* bcast from root, each rank with its own layout; bytes past 32 KiB cross the shm chunks, and a
   6-byte element is cut by a chunk boundary. */
static void one_bcast(const char *alg, const struct layout *l, size_t bytes, int root, int k)
{
    size_t n = bytes / l->size;
    struct buf b, want;
    buf_get(&b, l, n);
    buf_get(&want, l, n);
    unsigned char *stream = malloc(bytes + 1);
    for (size_t j = 0; j < bytes; j++)
        stream[j] = val(root, -2, k, j);
    put_at(l, want.at, 0, stream, bytes);
    if (rc_rank == root)
        put_at(l, b.at, 0, stream, bytes);
    int st = hint_bcast(b.at, n, l->t, root, HINT_WORLD);
    if (st != HINT_SUCCESS)
        RC_FAIL("bcast %s %zu B from %d, %s: %s", alg, bytes, root, l->name, hint_strerror(st));
    check_area(&b, &want, "bcast", alg, l, l, k);
    if (bytes > 0)
        count_call(COLL_BCAST, l, l);
    free(stream);
    buf_put(&b);
    buf_put(&want);
}

/* Block sizes that every layout's element size (1, 8, 6, 6) divides: 0 up to 63 KiB; 1008 is
   the largest under the staged algorithms' 1 KiB. */
static const size_t sizes[] = {0, 24, 48, 1008, 4800, 65520};

/* Whether bcast staged takes bytes on this world: the library's own rule (at most P staging
   blocks), asked as selection asks it. */
static bool staged_bcast_fits(size_t bytes)
{
    const struct coll_table *t = &coll_tables[COLL_BCAST];
    struct coll_args probe = {.op_id = COLL_BCAST, .g = HINT_WORLD, .size = P, .rank = rc_rank, .block = bytes};
    for (int i = 0; i < t->nalgs; i++)
        if (strcmp(t->algs[i].name, "staged") == 0)
            return coll_alg_usable(i, &probe);
    return false;
}

static void run_alg(int op_id, const char *alg)
{
    RC_OK(hint_coll_set(coll_tables[op_id].op, alg));
    if (op_id == COLL_BCAST) {
        static const size_t bsizes[] = {0, 48, 4800, 65520, 131088};
        for (size_t i = 0; i < sizeof bsizes / sizeof bsizes[0]; i++) {
            if (strcmp(alg, "staged") == 0 && !staged_bcast_fits(bsizes[i]))
                continue; /* over the staging areas (P blocks): a forced choice would be an error */
            for (int k = 0; k < NLAYOUTS; k++)
                one_bcast(alg, &L[(rc_rank + k) % NLAYOUTS], bsizes[i], k % 2 ? P - 1 : 0, k);
        }
        return;
    }
    if (op_id == COLL_ALLTOALLV || op_id == COLL_ALLGATHERV) {
        for (size_t unit = 1; unit <= 50; unit += 49)
            for (int k = 0; k < NLAYOUTS; k++)
                one_vcall(op_id, alg, &L[(rc_rank + k) % NLAYOUTS], &L[(3 * rc_rank + k + 1) % NLAYOUTS], unit, k);
        return;
    }
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        if (strcmp(alg, "staged") == 0 && sizes[i] > 1024)
            continue; /* not applicable: a forced choice would be an error */
        for (int k = 0; k < NLAYOUTS; k++)
            one_call(op_id, alg, &L[(rc_rank + k) % NLAYOUTS], &L[(3 * rc_rank + k + 1) % NLAYOUTS], sizes[i], k);
    }
}

/* The world spans virtual nodes (hintrun --nodes K, K > 1): the node-only algorithms cannot run. */
static bool world_spans;

static void every_alg(int op_id)
{
    const struct coll_table *t = &coll_tables[op_id];
    for (int i = 0; i < t->nalgs; i++) {
        if (strcmp(t->algs[i].name, "recursive_doubling") == 0 && (P & (P - 1)) != 0)
            continue; /* powers of two only */
        if (world_spans && t->algs[i].node_only) {
            struct coll_args probe = {.op_id = op_id, .g = HINT_WORLD, .size = P, .rank = rc_rank, .block = 8};
            RC_CHECK(!coll_alg_usable(i, &probe)); /* coll_check asserts what forcing it returns */
            continue;
        }
        run_alg(op_id, t->algs[i].name);
    }
    run_alg(op_id, "auto");
}

/* A bcast whose derived root sends it to bcast shm, straight followed by collectives that publish
   buffer offsets in the slot: a root that raced ahead into them used to change the offset a slow
   rank was about to read, and the ranks' barriers fell out of step. */
static void fallback_then_publish(void)
{
    RC_OK(hint_coll_set("bcast", "heap"));
    RC_OK(hint_coll_set("alltoall", "column"));
    for (int k = 0; k < 100; k++) {
        one_bcast("heap", &L[rc_rank == 0 ? 1 : 0], 4800, 0, k);
        one_call(COLL_ALLTOALL, "column", &L[0], &L[0], 1008, k);
    }
}

/* The early type's pieces are off the heap: the copy order copies them to the heap for the peers
   and runs (issue 23), with the right result. */
static void off_heap_pieces(void)
{
    struct layout e;
    make_layout(&e, "committed before init", early);
    RC_OK(hint_coll_set("alltoall", "column"));
    one_call(COLL_ALLTOALL, "column", &e, &L[0], 48, 1);
    const char *ran;
    RC_OK(hint_coll_last("alltoall", &ran));
    /* sides off the heap (an mmap'd receive side, packing scratch without the malloc override)
       go through CMA, or pairwise where the kernel refuses CMA (tests/ranks/order_buffers.c
       checks which) */
    const char *want = "column";
    bool cma_or_refused = (use_mmap || !MALLOC_ON_HEAP) && !strcmp(ran, "pairwise");
    if (P > 1 && strcmp(ran, want) != 0 && !cma_or_refused)
        RC_FAIL("a type committed before hint_init ran %s, expected %s", ran, want);
    RC_OK(hint_type_free(&e.t));
}

int main(int argc, char **argv)
{
    use_mmap = argc > 1 && strcmp(argv[1], "mmap") == 0;
    const char *typed = getenv("HINT_COLL_TYPED");
    typed_on = typed == NULL || strcmp(typed, "0") != 0;
    size_t bl[] = {2, 2};
    ptrdiff_t dp[] = {0, 4};
    hint_type h;
    RC_OK(hint_type_hindexed(2, bl, dp, HINT_BYTE, &h));
    RC_OK(hint_type_resized(h, 0, 8, &early));
    RC_OK(hint_type_free(&h));
    RC_OK(hint_type_commit(&early));
    RC_OK(hint_init(&argc, &argv));
    RC_OK(hint_group_rank(HINT_WORLD, &rc_rank));
    RC_OK(hint_group_size(HINT_WORLD, &P));
    world_spans = getenv("HINT_NNODES") && atoi(getenv("HINT_NNODES")) > 1;
    make_layouts();
    every_alg(COLL_ALLTOALL);
    every_alg(COLL_ALLGATHER);
    every_alg(COLL_ALLTOALLV);
    every_alg(COLL_ALLGATHERV);
    every_alg(COLL_BCAST);
    if (!world_spans) { /* both force node-only algorithms */
        off_heap_pieces();
        fallback_then_publish();
    }
    printf("rank %d: expect direct %lu, packed %lu\n", rc_rank, want_direct, want_packed);
    for (int i = 1; i < NLAYOUTS; i++)
        RC_OK(hint_type_free(&L[i].t));
    RC_OK(hint_finalize());
    if (rc_rank == 0)
        printf("ok typed_coll\n");
    return 0;
}
