/*
 * tests/ranks/order_buffers.c — the copy orders (row, column, hilbert, morton, morton_numa) of
 * alltoall, alltoallv, allgather and allgatherv with send and receive buffers of every kind:
 * the shared heap, the stack, static memory and a private mmap, all 16 pairs, and kinds mixed
 * between the ranks of one call (rank r shifts the pair by r). Every result is checked, and
 * hint_coll_last must name the forced order: off the heap the blocks go through CMA
 * (process_vm_readv/writev), not the pairwise fallback.
 *
 * Then the same with derived datatypes on either side (vector, indexed, struct, resized with
 * negative displacements, and plain bytes, mixed between the ranks of a call) at 0, 1, 7 and
 * 1365 elements of 3 bytes per block (the last more pieces than IOV_MAX), every kind pair:
 * off the heap their pieces go through CMA (small ones through a bounce buffer); then again with
 * large pieces (768 bytes on average: iovecs straight to the kernel) and a sparse layout of
 * 6-byte pieces (one remote iovec each), 0 to 3 elements of 1536 bytes a block. Each receive area is compared whole (the
 * holes keep their sentinel) with a reference built by hint_unpack; each rank prints how many
 * calls must have gone through CMA with derived types ("rank r: expect derived cma N"), which
 * the driver compares with the HINT_COLL_STATS lines.
 *
 * Piece lists off the heap (issue 23): the small layouts again with the vector committed before
 * hint_init, and alltoall/allgather of a type of 2^20 + 1 one-byte pieces (commit keeps no list
 * for it), one element a block, sides on the heap and in mmaps. Neither may fall back: the call
 * copies the list to the heap for the peers (under ASan, where malloc is not on the heap, every
 * derived call does). Each rank prints how many calls had such a copy ("rank r: expect lists
 * copied N"); the driver compares it with the stats' "piece lists: N calls with one copied".
 *
 *   order_buffers            the above
 *   HINT_HEAP=private order_buffers   no shared heap: every buffer off it (the heap kind is
 *                            malloc's), every piece list read by the peers through CMA
 *   order_buffers lists      alltoall morton with derived types on the stack, 20 calls of a type,
 *                            20 of another made after it was freed (maybe at its address), 20
 *                            alternating with a third: under HINT_HEAP=private a rank reads each
 *                            peer's list of each type through CMA once ("expect list reads N"),
 *                            not in every call, and every result is right
 *   order_buffers refused    first a seccomp filter makes process_vm_readv/writev fail with
 *                            EPERM (as ptrace_scope or a container would); then every call with a
 *                            buffer off the heap must run pairwise (ring for allgather), right.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hint.h"
#include "tests/common/malloc_heap.h"
#include "tests/common/rankcheck.h"

int rc_rank;
static int P;
static bool refused;

enum kind { HEAP, STACK, STATIC, MMAP, NKINDS };
static const char *const kind_names[] = {"heap", "stack", "static", "mmap"};

#define MAXP 8
#define BLOCK 1000                       /* bytes per block (alltoall, allgather) */
#define SIDE (MAXP * 3 * BLOCK + 256)   /* bytes of one side: room for the v layouts too */

static _Alignas(64) unsigned char static_s[SIDE], static_r[SIDE];

/* The buffer of a kind for one side; stack buffers come from the caller's frame. */
static unsigned char *side_buf(enum kind k, unsigned char *stack, unsigned char *stat, unsigned char **heap,
                               unsigned char **map)
{
    switch (k) {
    case HEAP: return *heap = heap_buffer(SIDE);
    case STACK: return stack;
    case STATIC: return stat;
    default:
        *map = mmap(NULL, SIDE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (*map == MAP_FAILED)
            RC_FAIL("mmap: %s", strerror(errno));
        return *map;
    }
}

static void side_free(unsigned char *heap, unsigned char *map)
{
    if (heap)
        heap_buffer_free(heap);
    if (map)
        munmap(map, SIDE);
}

static unsigned char val(int from, int to, size_t i, int salt) { return (unsigned char)(from * 37 + to * 11 + i * 7 + salt); }

/* alltoallv: rank s sends (s + d) % 3 + 1 units of BLOCK / 4 bytes to d, with gaps */
static size_t vb(int s, int d) { return (size_t)((s + d) % 3 + 1) * (BLOCK / 4); }

static void expect_ran(const char *op, const char *alg, bool off_heap)
{
    const char *ran;
    RC_OK(hint_coll_last(op, &ran));
    const char *fallback = !strncmp(op, "allgather", 9) ? "ring" : "pairwise";
    const char *want = P == 1 ? "trivial" : refused && off_heap ? fallback : alg;
    if (strcmp(ran, want) != 0)
        RC_FAIL("%s forced to %s ran %s (expected %s)", op, alg, ran, want);
}

static void one_call(const char *op, const char *alg, enum kind ks, enum kind kr, int salt)
{
    unsigned char stack_s[SIDE], stack_r[SIDE], *hs = NULL, *hr = NULL, *ms = NULL, *mr = NULL;
    unsigned char *s = side_buf(ks, stack_s, static_s, &hs, &ms), *r = side_buf(kr, stack_r, static_r, &hr, &mr);
    int me = rc_rank;
    size_t sc[MAXP], sd[MAXP], rcn[MAXP], rd[MAXP], so = 0, ro = 0;
    RC_OK(hint_coll_set(op, alg));
    if (!strcmp(op, "alltoall")) {
        for (int d = 0; d < P; d++)
            for (size_t i = 0; i < BLOCK; i++)
                s[d * BLOCK + i] = val(me, d, i, salt);
        RC_OK(hint_alltoall(s, BLOCK, HINT_BYTE, r, BLOCK, HINT_BYTE, HINT_WORLD));
        for (int p = 0; p < P; p++)
            for (size_t i = 0; i < BLOCK; i++)
                if (r[p * BLOCK + i] != val(p, me, i, salt))
                    RC_FAIL("%s %s %s->%s: byte %zu from %d wrong", op, alg, kind_names[ks], kind_names[kr], i, p);
    } else if (!strcmp(op, "alltoallv")) {
        for (int p = 0; p < P; p++) {
            sc[p] = vb(me, p), sd[p] = so + 8, so += sc[p] + 8;
            rcn[p] = vb(p, me), rd[p] = ro + 24, ro += rcn[p] + 24;
            for (size_t i = 0; i < sc[p]; i++)
                s[sd[p] + i] = val(me, p, i, salt);
        }
        RC_OK(hint_alltoallv(s, sc, sd, HINT_BYTE, r, rcn, rd, HINT_BYTE, HINT_WORLD));
        for (int p = 0; p < P; p++)
            for (size_t i = 0; i < rcn[p]; i++)
                if (r[rd[p] + i] != val(p, me, i, salt))
                    RC_FAIL("%s %s %s->%s: byte %zu from %d wrong", op, alg, kind_names[ks], kind_names[kr], i, p);
    } else if (!strcmp(op, "allgather")) {
        for (size_t i = 0; i < BLOCK; i++)
            s[i] = val(me, 0, i, salt);
        RC_OK(hint_allgather(s, BLOCK, HINT_BYTE, r, BLOCK, HINT_BYTE, HINT_WORLD));
        for (int p = 0; p < P; p++)
            for (size_t i = 0; i < BLOCK; i++)
                if (r[p * BLOCK + i] != val(p, 0, i, salt))
                    RC_FAIL("%s %s %s->%s: byte %zu from %d wrong", op, alg, kind_names[ks], kind_names[kr], i, p);
    } else {
        for (int p = 0; p < P; p++)
            rcn[p] = (size_t)(p % 3 + 1) * (BLOCK / 2), rd[p] = ro + 40, ro += rcn[p] + 40;
        for (size_t i = 0; i < rcn[me]; i++)
            s[i] = val(me, 0, i, salt);
        RC_OK(hint_allgatherv(s, rcn[me], HINT_BYTE, r, rcn, rd, HINT_BYTE, HINT_WORLD));
        for (int p = 0; p < P; p++)
            for (size_t i = 0; i < rcn[p]; i++)
                if (r[rd[p] + i] != val(p, 0, i, salt))
                    RC_FAIL("%s %s %s->%s: byte %zu from %d wrong", op, alg, kind_names[ks], kind_names[kr], i, p);
    }
    /* off the heap on any rank: the ranks agree (allreduce) before judging the path */
    int off = (hint_mem_shared(s) && hint_mem_shared(r)) ? 0 : 1, any;
    RC_OK(hint_coll_set("allreduce", "recursive_doubling"));
    RC_OK(hint_allreduce(&off, &any, 1, HINT_INT, HINT_MAX, HINT_WORLD));
    expect_ran(op, alg, any != 0);
    side_free(hs, ms);
    side_free(hr, mr);
}

/* process_vm_readv/writev fail with EPERM from here on (a real kernel refusal: seccomp). */
static void refuse_cma(void)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_writev, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
    };
    struct sock_fprog prog = {.len = sizeof f / sizeof f[0], .filter = f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
        printf("# SKIP: cannot install a seccomp filter (%s)\n", strerror(errno));
        exit(77);
    }
}

/* ---- derived datatypes ---- */

#define NLAY 5
#define DSENT 0xA5
#define EMAX 1365                          /* elements per alltoall block: 4095 one-byte pieces */
#define VMAX 683                           /* elements per unit of a v block (up to 2 units) */
#define BIG 1536                           /* data bytes of an element of the large layouts */
#define SPARSE_EXT 7656                    /* extent of the sparse one */
#define DSIDE (MAXP * 3 * SPARSE_EXT + 2048) /* 3 elements a rank at most; room for lb < 0 in front */
#define DLEAD 1024                         /* buffer address = area + DLEAD */

struct lay {
    const char *name;
    hint_type t;
    size_t size;
    ptrdiff_t extent;
    bool copied; /* its piece list is not on the heap: the call copies it there for the peers */
};
static struct lay SMALL[NLAY], LARGE[NLAY], EARLY[NLAY], *LY = SMALL;
static size_t unit = 3; /* data bytes of an element of the derived layouts in use */
static unsigned long want_derived_cma, want_lists_copied, want_lists_cma;
static bool no_heap; /* HINT_HEAP=private: no shared heap, every piece list is read through CMA */
static hint_type early; /* committed before hint_init: its piece list is in glibc's memory */
static _Alignas(64) unsigned char dstatic_s[DSIDE], dstatic_r[DSIDE];

static void lay_make(struct lay *l, const char *name, hint_type t)
{
    ptrdiff_t lb;
    if (t != HINT_BYTE)
        RC_OK(hint_type_commit(&t));
    RC_OK(hint_type_size(t, &l->size));
    RC_OK(hint_type_extent(t, &lb, &l->extent));
    l->name = name;
    l->t = t;
    /* without the malloc override (ASan) no type's pieces are on the heap */
    l->copied = t != HINT_BYTE && !MALLOC_ON_HEAP;
}

/* Large pieces (the iovecs go to the kernel as they are) and a sparse layout of small ones (its
   pieces go one by one): every type holds 1536 bytes of data. */
static void make_large(void)
{
    hint_type t, h;
    struct lay *L = LARGE;
    lay_make(&L[0], "bytes", HINT_BYTE);
    RC_OK(hint_type_vector(2, 768, 1000, HINT_BYTE, &t));
    lay_make(&L[1], "large vector", t);
    RC_OK(hint_type_indexed(2, (size_t[]){1024, 512}, (ptrdiff_t[]){0, 2048}, HINT_BYTE, &t));
    lay_make(&L[2], "large indexed", t);
    RC_OK(hint_type_hvector(256, 6, 30, HINT_BYTE, &t)); /* a fifth of its extent is data */
    lay_make(&L[3], "sparse", t);
    RC_OK(hint_type_hvector(2, 768, -1000, HINT_BYTE, &h));
    RC_OK(hint_type_resized(h, -1000, 2000, &t));
    RC_OK(hint_type_free(&h));
    lay_make(&L[4], "large resized", t);
    RC_CHECK(L[3].extent == SPARSE_EXT);
}

/* Every derived type holds 3 bytes of data: any two of them (and bytes) match. */
static void make_lays(void)
{
    hint_type t, h;
    lay_make(&LY[0], "bytes", HINT_BYTE);
    RC_OK(hint_type_vector(3, 1, 2, HINT_BYTE, &t)); /* bytes 0, 2, 4 */
    lay_make(&LY[1], "vector", t);
    RC_OK(hint_type_indexed(2, (size_t[]){1, 2}, (ptrdiff_t[]){0, 3}, HINT_BYTE, &t)); /* 0, 3-4 */
    lay_make(&LY[2], "indexed", t);
    RC_OK(hint_type_struct(2, (size_t[]){2, 1}, (ptrdiff_t[]){0, 6}, (hint_type[]){HINT_BYTE, HINT_BYTE}, &t));
    lay_make(&LY[3], "struct", t); /* 0-1, 6: extent 7 */
    RC_OK(hint_type_hvector(3, 1, -2, HINT_BYTE, &h)); /* bytes 0, -2, -4 in that packed order */
    RC_OK(hint_type_resized(h, -4, 8, &t));
    RC_OK(hint_type_free(&h));
    lay_make(&LY[4], "resized", t);
}

/* The small layouts with the vector committed before hint_init (same layout, list off the heap). */
static void make_early(void)
{
    memcpy(EARLY, SMALL, sizeof EARLY);
    lay_make(&EARLY[1], "vector committed before hint_init", early);
    EARLY[1].copied = true;
}

static void free_lays(void)
{
    for (int i = 1; i < NLAY; i++) {
        RC_OK(hint_type_free(&SMALL[i].t));
        RC_OK(hint_type_free(&LARGE[i].t));
    }
}

/* Byte j of the data rank `from` sends rank `to` (-1: allgather) in call `salt`. */
static unsigned char dval(int from, int to, size_t j, int salt)
{
    return (unsigned char)(from * 29 + to * 13 + j * 5 + salt * 3 + 1);
}

/* `bytes` of data from (from, to) into layout l at element `elem` of the buffer at `at`. */
static void put_data(const struct lay *l, unsigned char *at, size_t elem, int from, int to, size_t bytes, int salt)
{
    unsigned char stream[6 * BIG + 1]; /* the largest v block */
    RC_CHECK(bytes <= sizeof stream);
    for (size_t j = 0; j < bytes; j++)
        stream[j] = dval(from, to, j, salt);
    size_t pos = 0;
    RC_OK(hint_unpack(stream, bytes, &pos, at + (ptrdiff_t)elem * l->extent, bytes / l->size, l->t));
}

/* Elements of l in v block (s, d): 0, 1 or 2 units of e elements of 3 bytes (bytes: 3 each). */
static size_t v_elems(const struct lay *l, int s, int d, size_t e) { return e * (size_t)((s + 2 * d + 1) % 3) * unit / l->size; }
static size_t gv_elems(const struct lay *l, int p, size_t e) { return e * (size_t)((p + 1) % 3) * unit / l->size; }

/* Element displacements: the blocks in reverse rank order, one element of gap after each. */
static void reverse_displs(const size_t *counts, size_t *displs)
{
    size_t off = 0;
    for (int p = P - 1; p >= 0; p--) {
        displs[p] = off;
        off += counts[p] + 1;
    }
}

/* The path this call must take, from what every rank passes: the order, or its fallback. */
static void derived_expect(const char *op, const char *alg, bool off_touched, bool derived_used,
                           bool derived_touched, bool copied_touched, size_t bytes_any)
{
    int mine[4] = {off_touched, derived_used, derived_touched, copied_touched}, all[4];
    RC_OK(hint_coll_set("allreduce", "recursive_doubling"));
    RC_OK(hint_allreduce(mine, all, 4, HINT_INT, HINT_MAX, HINT_WORLD));
    const char *fallback = !strncmp(op, "allgather", 9) ? "ring" : "pairwise", *want = alg, *ran;
    if (P == 1 || bytes_any == 0)
        want = "trivial";
    else if (all[0] && refused)
        want = fallback;
    else {
        /* a piece list off the heap (a type committed before hint_init, any type under ASan, more
           than 2^20 pieces) no longer sends the call to the fallback: copied to the heap */
        want_derived_cma += all[0] && all[2];
        want_lists_copied += !no_heap && all[3];
        want_lists_cma += no_heap && all[2];
    }
    RC_OK(hint_coll_last(op, &ran));
    if (strcmp(ran, want) != 0)
        RC_FAIL("%s forced to %s ran %s (expected %s)", op, alg, ran, want);
}

static void check_whole(const unsigned char *got, const unsigned char *want, const char *op, const char *alg,
                        enum kind ks, enum kind kr, const struct lay *sl, const struct lay *rl, size_t e)
{
    if (memcmp(got, want, DSIDE) == 0)
        return;
    size_t at = 0;
    while (got[at] == want[at])
        at++;
    RC_FAIL("%s %s %s/%s -> %s/%s, %zu elements: byte %zu of the receive area is %u, expected %u", op, alg,
            kind_names[ks], sl->name, kind_names[kr], rl->name, e, at, got[at], want[at]);
}

/* One call of op with layout sl from a buffer of kind ks to rl in kind kr, e elements a unit. */
static void derived_call(const char *op, const char *alg, enum kind ks, enum kind kr, const struct lay *sl,
                         const struct lay *rl, size_t e, int salt)
{
    unsigned char stack_s[DSIDE], stack_r[DSIDE], *hs = NULL, *hr = NULL, *ms = NULL, *mr = NULL;
    unsigned char *s = ks == STATIC ? dstatic_s : ks == STACK ? stack_s : NULL;
    unsigned char *r = kr == STATIC ? dstatic_r : kr == STACK ? stack_r : NULL;
    if (ks == HEAP)
        s = hs = heap_buffer(DSIDE);
    if (kr == HEAP)
        r = hr = heap_buffer(DSIDE);
    if (ks == MMAP && (s = ms = mmap(NULL, DSIDE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) == MAP_FAILED)
        RC_FAIL("mmap: %s", strerror(errno));
    if (kr == MMAP && (r = mr = mmap(NULL, DSIDE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) == MAP_FAILED)
        RC_FAIL("mmap: %s", strerror(errno));
    static unsigned char want[DSIDE];
    memset(s, DSENT, DSIDE);
    memset(r, DSENT, DSIDE);
    memset(want, DSENT, DSIDE);
    unsigned char *sa = s + DLEAD, *ra = r + DLEAD, *wa = want + DLEAD;
    int me = rc_rank;
    size_t sc[MAXP], sd[MAXP], rc[MAXP], rd[MAXP], sbytes = 0, rbytes = 0, bytes_any = 0;
    if (!strcmp(op, "alltoall") || !strcmp(op, "allgather")) {
        bool a2a = op[3] == 't';
        size_t B = unit * e;
        for (int d = 0; d < (a2a ? P : 1); d++)
            put_data(sl, sa, (size_t)d * (B / sl->size), me, a2a ? d : -1, B, salt);
        for (int p = 0; p < P; p++)
            put_data(rl, wa, (size_t)p * (B / rl->size), p, a2a ? me : -1, B, salt);
        RC_OK(a2a ? hint_alltoall(sa, B / sl->size, sl->t, ra, B / rl->size, rl->t, HINT_WORLD)
                  : hint_allgather(sa, B / sl->size, sl->t, ra, B / rl->size, rl->t, HINT_WORLD));
        sbytes = rbytes = bytes_any = B;
    } else if (!strcmp(op, "alltoallv")) {
        for (int p = 0; p < P; p++) {
            sc[p] = v_elems(sl, me, p, e), rc[p] = v_elems(rl, p, me, e);
            sbytes += sc[p] * sl->size, rbytes += rc[p] * rl->size;
        }
        reverse_displs(sc, sd);
        reverse_displs(rc, rd);
        for (int p = 0; p < P; p++) {
            put_data(sl, sa, sd[p], me, p, sc[p] * sl->size, salt);
            put_data(rl, wa, rd[p], p, me, rc[p] * rl->size, salt);
        }
        RC_OK(hint_alltoallv(sa, sc, sd, sl->t, ra, rc, rd, rl->t, HINT_WORLD));
        bytes_any = 1; /* alltoallv is never trivial for P > 1 */
    } else {
        for (int p = 0; p < P; p++)
            rc[p] = gv_elems(rl, p, e), rbytes += rc[p] * rl->size;
        reverse_displs(rc, rd);
        sc[0] = gv_elems(sl, me, e), sbytes = sc[0] * sl->size;
        put_data(sl, sa, 0, me, -1, sbytes, salt);
        for (int p = 0; p < P; p++)
            put_data(rl, wa, rd[p], p, -1, rc[p] * rl->size, salt);
        RC_OK(hint_allgatherv(sa, sc[0], sl->t, ra, rc, rd, rl->t, HINT_WORLD));
        bytes_any = 1;
    }
    check_whole(r, want, op, alg, ks, kr, sl, rl, e);
    bool off = ((ks != HEAP || no_heap) && sbytes) || ((kr != HEAP || no_heap) && rbytes);
    bool used = sl->t != HINT_BYTE || rl->t != HINT_BYTE;
    bool touched = (sl->t != HINT_BYTE && sbytes) || (rl->t != HINT_BYTE && rbytes);
    bool copied = (sl->copied && sbytes) || (rl->copied && rbytes);
    derived_expect(op, alg, off, used, touched, copied, bytes_any);
    if (hs)
        heap_buffer_free(hs);
    if (hr)
        heap_buffer_free(hr);
    if (ms)
        munmap(ms, DSIDE);
    if (mr)
        munmap(mr, DSIDE);
}

/* Every op and order x every kind pair (mixed between ranks, and the same on all), the layouts
   and the sizes turning with the call. */
static int derived_calls(const char *const *ops, const char *const *algs, const size_t elems[4], const size_t velems[4])
{
    int calls = 0;
    for (int o = 0; o < 4; o++)
        for (int a = 0; a < 5; a++) {
            if (!strncmp(ops[o], "allgather", 9) && a < 3)
                continue;
            for (int k = 0; k < NKINDS * NKINDS; k++)
                for (int same = 0; same < 2; same++) {
                    int kk = same ? k : (k + rc_rank) % (NKINDS * NKINDS);
                    const struct lay *sl = &LY[(k + rc_rank + o) % NLAY], *rl = &LY[(k + 2 * rc_rank + a + 1) % NLAY];
                    size_t e = (o % 2 ? velems : elems)[(k + a + same) % 4];
                    RC_OK(hint_coll_set(ops[o], algs[a]));
                    derived_call(ops[o], algs[a], (enum kind)(kk / NKINDS), (enum kind)(kk % NKINDS), sl, rl, e,
                                 k + 7 * a + same);
                    calls++;
                }
        }
    return calls;
}

/* ---- a type of more than 2^20 pieces: commit keeps no list, the call builds one on the heap ---- */

#define HUGE_PIECES (((size_t)1 << 20) + 1)    /* one-byte pieces, a byte apart */
#define HUGE_EXT (2 * (ptrdiff_t)HUGE_PIECES - 1)

static unsigned char hval(int from, int to, size_t j, int salt) { return (unsigned char)(from * 31 + to * 17 + j * 3 + salt); }

/* Block bytes j of (from, to) at element `el` of side `at`: the huge layout or plain bytes. */
static unsigned char *hbyte(unsigned char *at, bool huge, size_t el, size_t j)
{
    return huge ? at + (ptrdiff_t)el * HUGE_EXT + 2 * (ptrdiff_t)j : at + el * HUGE_PIECES + j;
}

/* alltoall or allgather of one element of the huge type (or as many bytes) a block, sides on the
   heap or in a private mmap; the receive side checked whole (holes keep their sentinel). */
static void huge_call(const char *op, const char *alg, hint_type huge, bool shuge, enum kind ks, bool rhuge,
                      enum kind kr, int salt)
{
    bool a2a = op[3] == 't';
    size_t nsend = a2a ? (size_t)P : 1, sz = nsend * (size_t)HUGE_EXT, rz = (size_t)P * (size_t)HUGE_EXT;
    unsigned char *s = ks == HEAP ? heap_buffer(sz) : mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    unsigned char *r = kr == HEAP ? heap_buffer(rz) : mmap(NULL, rz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    RC_CHECK(s != NULL && s != MAP_FAILED && r != NULL && r != MAP_FAILED);
    memset(s, DSENT, sz);
    memset(r, DSENT, rz);
    int me = rc_rank;
    for (size_t d = 0; d < nsend; d++)
        for (size_t j = 0; j < HUGE_PIECES; j++)
            *hbyte(s, shuge, d, j) = hval(me, a2a ? (int)d : -1, j, salt);
    RC_OK(hint_coll_set(op, alg));
    hint_type st = shuge ? huge : HINT_BYTE, rt = rhuge ? huge : HINT_BYTE;
    size_t sc = shuge ? 1 : HUGE_PIECES, rc = rhuge ? 1 : HUGE_PIECES;
    RC_OK(a2a ? hint_alltoall(s, sc, st, r, rc, rt, HINT_WORLD) : hint_allgather(s, sc, st, r, rc, rt, HINT_WORLD));
    for (int p = 0; p < P; p++)
        for (size_t j = 0; j < HUGE_PIECES; j++) {
            unsigned char want = hval(p, a2a ? me : -1, j, salt), *at = hbyte(r, rhuge, (size_t)p, j);
            if (*at != want || (rhuge && j + 1 < HUGE_PIECES && at[1] != DSENT))
                RC_FAIL("%s %s huge %s %s -> %s %s: block from %d, byte %zu wrong", op, alg, shuge ? "type" : "bytes",
                        kind_names[ks], rhuge ? "type" : "bytes", kind_names[kr], p, j);
        }
    derived_expect(op, alg, ks != HEAP || kr != HEAP || no_heap, true, true, true, 1);
    if (ks == HEAP)
        heap_buffer_free(s);
    else
        munmap(s, sz);
    if (kr == HEAP)
        heap_buffer_free(r);
    else
        munmap(r, rz);
}

static int huge_calls(void)
{
    hint_type huge;
    RC_OK(hint_type_vector(HUGE_PIECES, 1, 2, HINT_BYTE, &huge));
    RC_OK(hint_type_commit(&huge));
    ptrdiff_t lb, ext;
    RC_OK(hint_type_extent(huge, &lb, &ext));
    RC_CHECK(ext == HUGE_EXT);
    huge_call("alltoall", "row", huge, true, MMAP, false, HEAP, 1);       /* remote send side read */
    huge_call("alltoall", "morton", huge, false, HEAP, true, MMAP, 2);    /* receiver reads into its pieces */
    huge_call("allgather", "morton", huge, true, HEAP, true, HEAP, 3);    /* heap: piece against piece */
    huge_call("allgather", "morton_numa", huge, true, MMAP, true, MMAP, 4);
    RC_OK(hint_type_free(&huge));
    return 4;
}

/* order_buffers lists (above). */
static int lists_kept(void)
{
    struct lay A, B, C;
    hint_type t;
    RC_OK(hint_coll_set("alltoall", "morton"));
    RC_OK(hint_type_vector(3, 1, 2, HINT_BYTE, &t)); /* bytes 0, 2, 4 */
    lay_make(&A, "vector", t);
    for (int k = 0; k < 20; k++)
        derived_call("alltoall", "morton", STACK, STACK, &A, &A, 7, k);
    RC_OK(hint_type_free(&A.t));
    RC_OK(hint_type_vector(3, 1, 3, HINT_BYTE, &t)); /* as many pieces, elsewhere: 0, 3, 6 */
    lay_make(&B, "wider vector", t);
    for (int k = 0; k < 20; k++)
        derived_call("alltoall", "morton", STACK, STACK, &B, &B, 7, 20 + k);
    RC_OK(hint_type_indexed(2, (size_t[]){1, 2}, (ptrdiff_t[]){0, 3}, HINT_BYTE, &t)); /* 0, 3-4 */
    lay_make(&C, "indexed", t);
    for (int k = 0; k < 20; k++)
        derived_call("alltoall", "morton", STACK, STACK, k % 2 ? &C : &B, k % 2 ? &C : &B, 7, 40 + k);
    RC_OK(hint_type_free(&B.t));
    RC_OK(hint_type_free(&C.t));
    /* Off the heap, each peer's list of A, B and C once (both sides of a call share it). With
       HINT_TEST_LISTS_KEPT_MAX below one list, a list this call does not use is dropped before
       another is read: A and B once each, then from the second alternating call on (B, C, B, ...)
       every call reads each peer's list again. */
    const char *cap = getenv("HINT_TEST_LISTS_KEPT_MAX");
    int per_peer = cap && atol(cap) < 16 ? 2 + 19 : 3;
    printf("rank %d: expect list reads %d\n", rc_rank, no_heap ? per_peer * (P - 1) : 0);
    fflush(stdout);
    return 60;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--help")) {
        printf("usage: hintrun -n P order_buffers [refused]   (P <= %d)\n", MAXP);
        return 0;
    }
    refused = argc > 1 && !strcmp(argv[1], "refused");
    if (refused)
        refuse_cma();
    RC_OK(hint_type_vector(3, 1, 2, HINT_BYTE, &early)); /* SMALL's vector, before hint_init */
    RC_OK(hint_type_commit(&early));
    RC_OK(hint_init(&argc, &argv));
    RC_OK(hint_group_rank(HINT_WORLD, &rc_rank));
    RC_OK(hint_group_size(HINT_WORLD, &P));
    RC_CHECK(P <= MAXP);
    void *probe = hint_malloc(1);
    no_heap = probe == NULL || !hint_mem_shared(probe);
    hint_free(probe);
    if (argc > 1 && !strcmp(argv[1], "lists")) {
        int n = lists_kept();
        RC_OK(hint_type_free(&early));
        RC_OK(hint_finalize());
        if (rc_rank == 0)
            printf("ok order_buffers lists: %d derived calls\n", n);
        return 0;
    }
    if (no_heap && !MALLOC_ON_HEAP) {
        printf("# SKIP: no shared heap and no malloc override: the heap kind has no buffer\n");
        hint_finalize();
        return 77;
    }
    static const char *const a2a[] = {"row", "column", "hilbert", "morton", "morton_numa"};
    static const char *const ops[] = {"alltoall", "alltoallv", "allgather", "allgatherv"};
    int calls = 0;
    for (int o = 0; o < 4; o++)
        for (int a = 0; a < 5; a++) {
            if (!strncmp(ops[o], "allgather", 9) && a < 3)
                continue; /* allgather's orders: morton, morton_numa */
            for (int k = 0; k < NKINDS * NKINDS; k++) {
                /* rank r takes pair k + r: in one call the ranks' kinds differ */
                int kk = (k + rc_rank) % (NKINDS * NKINDS);
                one_call(ops[o], a2a[a], (enum kind)(kk / NKINDS), (enum kind)(kk % NKINDS), k + 3 * a);
                /* and the same pair on every rank */
                one_call(ops[o], a2a[a], (enum kind)(k / NKINDS), (enum kind)(k % NKINDS), k + 5 * a + 1);
                calls += 2;
            }
        }
    make_lays();
    make_large();
    int dcalls = derived_calls(ops, a2a, (const size_t[]){0, 1, 7, EMAX}, (const size_t[]){0, 1, 7, VMAX});
    LY = LARGE, unit = BIG;
    dcalls += derived_calls(ops, a2a, (const size_t[]){0, 1, 2, 1}, (const size_t[]){0, 1, 1, 1});
    make_early();
    LY = EARLY, unit = 3;
    dcalls += derived_calls(ops, a2a, (const size_t[]){1, 7, 0, 1}, (const size_t[]){1, 7, 0, 1});
    dcalls += huge_calls();
    RC_OK(hint_type_free(&early));
    free_lays();
    /* the derived calls with a side off the heap must have gone through CMA, whatever the
       build: the piece lists the malloc override did not put on the heap are copied there */
    RC_CHECK(refused || P == 1 || want_derived_cma > 0);
    RC_CHECK(refused || P == 1 || want_lists_copied + want_lists_cma > 0);
    printf("rank %d: expect derived cma %lu\n", rc_rank, want_derived_cma);
    printf("rank %d: expect lists copied %lu\n", rc_rank, want_lists_copied);
    printf("rank %d: expect lists cma %lu\n", rc_rank, want_lists_cma);
    fflush(stdout);
    RC_OK(hint_finalize());
    if (rc_rank == 0)
        printf("ok order_buffers%s: %d contiguous calls, %d derived, every kind pair\n", refused ? " (CMA refused)" : "",
               calls, dcalls);
    return 0;
}
