/*
 * bench/order_replay/order-replay.c — replay one rank's alltoall (or allgather) copy schedule
 * in one process, to count cache misses with valgrind's cachegrind (deterministic, unlike
 * hardware counters on a shared 2-core box, which has none anyway). docs/CACHE.md has the
 * method, the commands and the results.
 *
 * It lays out P send and P receive buffers as the shared heap holds them (per rank: its send
 * buffer then its receive buffer, page-aligned, one mapping), and performs exactly the
 * memcpy calls of rank r under an order of collectives/order (the same tuples the library
 * uses): block (src, dst) goes from send[src] + dst*B to recv[dst] + src*B (allgather: from
 * send[src], a buffer of one block). Nothing touches the buffers before the copies, so the
 * simulated caches start cold for them (the ideal-cache model of the Morton paper, sec. 2.3);
 * --warm own first reads the rank's own two buffers, as the paper's Fig. 9 benchmark does.
 * Start-up misses are removed by subtracting a run with --reps 0 (same set-up, no copy); the
 * process leaves with _exit right after the copies, so the exit path adds next to nothing.
 * Link it with -z now (meson.build does): a lazily bound memcpy would run the dynamic linker's
 * symbol lookup inside the first measured copy.
 *
 * --predict prints, without copying, what the schedule must miss in an ideal cache (the
 * distinct cache lines it touches) and the Morton paper's formulas for this P, B and order.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "collectives/order/order.h"
#include "hint.h"

#define LINE 64
#define PAGE 4096

enum { OP_ALLTOALL, OP_ALLGATHER };
enum { LAYOUT_PACKED, LAYOUT_STAGGER, LAYOUT_PARTITION };
enum { COPY_MEMCPY, COPY_WORDS };
#define ORDER_NAIVE (-1)

struct opts {
    int order;    /* ORDER_* or ORDER_NAIVE */
    int P;
    size_t B;     /* block bytes of the current run */
    size_t blocks[32];
    int nblocks;  /* the block sizes to run, one after another, caches flushed in between */
    size_t flush; /* bytes read between runs to empty the simulated caches */
    int rank;     /* -1: all ranks */
    int interleave;
    long reps;
    int op, layout, copy, warm, predict, check;
    size_t Z1, Z2; /* cache sizes for the formulas (bytes) */
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: order-replay --order NAME --P N --block BYTES [options]\n"
            "Replays the block copies of one rank of a shared-heap alltoall in one process, for\n"
            "valgrind --tool=cachegrind --cache-sim=yes (docs/CACHE.md).\n"
            "  --order NAME     naive | row | column | hilbert | morton (naive = row: each rank\n"
            "                   copies into its own receive buffer, the Morton paper's SH-Naive)\n"
            "  --P N            ranks, 1..255\n"
            "  --block BYTES    block size B\n"
            "  --rank R         replay rank R's schedule (default 0): one core's private cache\n"
            "  --all-ranks      replay every rank's schedule one after another in one cache: the\n"
            "                   sequential algorithm of the paper's eqs. 1, 2, 4, 6, 8\n"
            "  --interleave     with --all-ranks: round-robin, block i of every rank in turn (what\n"
            "                   a cache shared by all ranks sees if they run in lock-step)\n"
            "  --reps N         run the schedule N times (default 1; 0 = the baseline run)\n"
            "  --op NAME        alltoall (default) | allgather (send buffers of one block)\n"
            "  --layout NAME    packed (default: rank r's send then receive buffer, each rounded up\n"
            "                   to 4 KiB, ranks one after another) | stagger (the same plus\n"
            "                   lines of padding, so that equal offsets in different ranks' buffers\n"
            "                   fall in different cache sets) | partition (rank r's pair at\n"
            "                   r * S, S = max(64 MiB, next power of two >= its pair), as hint's heap)\n"
            "  --copy NAME      memcpy (default, glibc's) | words (a plain 8-byte loop)\n"
            "  --warm NAME      none (default: caches cold) | own (read the rank's own send and\n"
            "                   receive buffers first, as the paper's Fig. 9)\n"
            "  --predict        print the ideal-cache count and the paper's formulas, copy nothing\n"
            "  --Z1 BYTES --Z2 BYTES  cache sizes the formulas use (default 32768 and 262144)\n"
            "  --check          verify the copied bytes afterwards (not under cachegrind: it adds\n"
            "                   misses)\n");
}

static int parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    if (*end == 'K' || *end == 'k')
        v <<= 10, end++;
    else if (*end == 'M' || *end == 'm')
        v <<= 20, end++;
    else if (*end == 'G' || *end == 'g')
        v <<= 30, end++;
    if (*end != '\0')
        return -1;
    *out = (size_t)v;
    return 0;
}

/* "4096", "8,64,4K" or "8:2M" (every power of two from 8 to 2 MiB) */
static int parse_blocks(const char *v, struct opts *o)
{
    char buf[256];
    if (strlen(v) >= sizeof buf)
        return -1;
    strcpy(buf, v);
    o->nblocks = 0;
    char *colon = strchr(buf, ':');
    if (colon) {
        size_t lo, hi;
        *colon = '\0';
        if (parse_size(buf, &lo) || parse_size(colon + 1, &hi) || lo == 0 || hi < lo)
            return -1;
        for (size_t b = lo; b <= hi; b *= 2) {
            if (o->nblocks == 32)
                return -1;
            o->blocks[o->nblocks++] = b;
        }
        return 0;
    }
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
        if (o->nblocks == 32 || parse_size(t, &o->blocks[o->nblocks]) || o->blocks[o->nblocks] == 0)
            return -1;
        o->nblocks++;
    }
    return o->nblocks ? 0 : -1;
}

static int parse(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){
        .order = ORDER_NAIVE, .rank = 0, .reps = 1, .Z1 = 32768, .Z2 = 262144, .flush = (size_t)64 << 20};
    int have_order = 0, have_b = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        size_t n;
#define NEED()                                                                                                         \
    do {                                                                                                               \
        if (v == NULL) {                                                                                               \
            fprintf(stderr, "order-replay: %s needs a value\n", a);                                                    \
            return -1;                                                                                                 \
        }                                                                                                              \
        i++;                                                                                                           \
    } while (0)
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(a, "--order")) {
            NEED();
            have_order = 1;
            if (!strcmp(v, "naive"))
                o->order = ORDER_NAIVE;
            else {
                o->order = -2;
                for (int k = 0; k < ORDER_NKINDS; k++)
                    if (!strcmp(v, order_name(k)))
                        o->order = k;
                if (o->order == -2) {
                    fprintf(stderr, "order-replay: unknown order '%s'\n", v);
                    return -1;
                }
            }
        } else if (!strcmp(a, "--P")) {
            NEED();
            o->P = atoi(v);
        } else if (!strcmp(a, "--block")) {
            NEED();
            if (parse_blocks(v, o) != 0) {
                fprintf(stderr, "order-replay: bad block sizes '%s' (BYTES, a list A,B,C or a range A:B)\n", v);
                return -1;
            }
            have_b = 1;
        } else if (!strcmp(a, "--rank")) {
            NEED();
            o->rank = atoi(v);
        } else if (!strcmp(a, "--all-ranks")) {
            o->rank = -1;
        } else if (!strcmp(a, "--interleave")) {
            o->interleave = 1;
        } else if (!strcmp(a, "--reps")) {
            NEED();
            o->reps = atol(v);
        } else if (!strcmp(a, "--op")) {
            NEED();
            if (!strcmp(v, "alltoall"))
                o->op = OP_ALLTOALL;
            else if (!strcmp(v, "allgather"))
                o->op = OP_ALLGATHER;
            else {
                fprintf(stderr, "order-replay: unknown op '%s'\n", v);
                return -1;
            }
        } else if (!strcmp(a, "--layout")) {
            NEED();
            if (!strcmp(v, "packed"))
                o->layout = LAYOUT_PACKED;
            else if (!strcmp(v, "stagger"))
                o->layout = LAYOUT_STAGGER;
            else if (!strcmp(v, "partition"))
                o->layout = LAYOUT_PARTITION;
            else {
                fprintf(stderr, "order-replay: unknown layout '%s'\n", v);
                return -1;
            }
        } else if (!strcmp(a, "--copy")) {
            NEED();
            if (strcmp(v, "memcpy") && strcmp(v, "words")) {
                fprintf(stderr, "order-replay: unknown copy '%s'\n", v);
                return -1;
            }
            o->copy = strcmp(v, "memcpy") ? COPY_WORDS : COPY_MEMCPY;
        } else if (!strcmp(a, "--warm")) {
            NEED();
            if (strcmp(v, "none") && strcmp(v, "own")) {
                fprintf(stderr, "order-replay: unknown warm-up '%s'\n", v);
                return -1;
            }
            o->warm = !strcmp(v, "own");
        } else if (!strcmp(a, "--flush")) {
            NEED();
            if (parse_size(v, &o->flush) != 0) {
                fprintf(stderr, "order-replay: bad flush size '%s'\n", v);
                return -1;
            }
        } else if (!strcmp(a, "--predict")) {
            o->predict = 1;
        } else if (!strcmp(a, "--check")) {
            o->check = 1;
        } else if (!strcmp(a, "--Z1") || !strcmp(a, "--Z2")) {
            NEED();
            if (parse_size(v, &n) != 0 || n == 0) {
                fprintf(stderr, "order-replay: bad cache size '%s'\n", v);
                return -1;
            }
            *(a[3] == '1' ? &o->Z1 : &o->Z2) = n;
        } else {
            fprintf(stderr, "order-replay: unknown argument '%s' (--help lists them)\n", a);
            return -1;
        }
#undef NEED
    }
    if (!have_order || o->P < 1 || o->P > 255 || !have_b) {
        fprintf(stderr, "order-replay: --order, --P (1..255) and --block (> 0) are required\n");
        return -1;
    }
    if (o->rank >= o->P || o->rank < -1 || o->reps < 0) {
        fprintf(stderr, "order-replay: --rank must be below P and --reps >= 0\n");
        return -1;
    }
    if (o->interleave && o->rank != -1) {
        fprintf(stderr, "order-replay: --interleave goes with --all-ranks\n");
        return -1;
    }
    return 0;
}

/* The schedule, compact (two bytes a block) so that reading it costs few lines. */
struct step {
    uint8_t src, dst;
};

static int schedule_of(const struct opts *o, int rank, struct step *out)
{
    int P = o->P;
    if (o->order == ORDER_NAIVE) { /* rank fills its own receive buffer, senders in turn */
        for (int s = 0; s < P; s++)
            out[s] = (struct step){(uint8_t)s, (uint8_t)rank};
        return 0;
    }
    struct order_tuple *t = malloc((size_t)P * sizeof *t);
    if (t == NULL || order_tuples(o->order, P, rank, t) != HINT_SUCCESS) {
        free(t);
        return -1;
    }
    for (int i = 0; i < P; i++)
        out[i] = (struct step){(uint8_t)t[i].src, (uint8_t)t[i].dst};
    free(t);
    return 0;
}

static size_t round_up(size_t v, size_t to) { return (v + to - 1) / to * to; }

struct layout {
    char *base;
    size_t map_bytes;
    size_t send_bytes, recv_bytes; /* one rank's buffers */
    size_t stride;                 /* from rank r's pair to rank r+1's */
    size_t recv_off;               /* from a rank's send buffer to its receive buffer */
};

static void layout_of(const struct opts *o, struct layout *l)
{
    l->send_bytes = o->op == OP_ALLTOALL ? (size_t)o->P * o->B : o->B;
    l->recv_bytes = (size_t)o->P * o->B;
    l->recv_off = round_up(l->send_bytes, PAGE);
    size_t pair = l->recv_off + round_up(l->recv_bytes, PAGE);
    if (o->layout == LAYOUT_PACKED) {
        l->stride = pair;
    } else if (o->layout == LAYOUT_STAGGER) {
        l->recv_off += LINE * (size_t)o->P / 2; /* send and receive buffers apart too */
        l->stride = pair + LINE * (size_t)o->P / 2 + LINE;
    } else {
        size_t s = (size_t)64 << 20;
        while (s < pair)
            s *= 2;
        l->stride = s;
    }
    l->map_bytes = l->stride * (size_t)o->P;
}

static inline char *send_at(const struct layout *l, int r) { return l->base + (size_t)r * l->stride; }
static inline char *recv_at(const struct layout *l, int r) { return send_at(l, r) + l->recv_off; }

__attribute__((always_inline)) static inline void copy_words(char *to, const char *from, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, from + i, 8);
        memcpy(to + i, &w, 8);
        __asm__ volatile("" ::: "memory"); /* keep it a loop of words, not a call to memcpy */
    }
    for (; i < n; i++)
        to[i] = from[i];
}

/* The byte ranges one block copy touches: [a, a + B) read, [b, b + B) written. */
static inline void block_ptrs(const struct opts *o, const struct layout *l, struct step s, char **to,
                              const char **from)
{
    *from = send_at(l, s.src) + (o->op == OP_ALLTOALL ? (size_t)s.dst * o->B : 0);
    *to = recv_at(l, s.dst) + (size_t)s.src * o->B;
}

struct range {
    uintptr_t lo, hi; /* cache lines [lo, hi] */
};

static int by_lo(const void *a, const void *b)
{
    const struct range *x = a, *y = b;
    return (x->lo > y->lo) - (x->lo < y->lo);
}

/* Distinct cache lines touched by the steps: an ideal cache that holds them all misses each once. */
static size_t distinct_lines(const struct opts *o, const struct layout *l, const struct step *st, size_t n)
{
    struct range *r = malloc(2 * n * sizeof *r);
    if (r == NULL)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char *to;
        const char *from;
        block_ptrs(o, l, st[i], &to, &from);
        r[2 * i] = (struct range){(uintptr_t)from / LINE, ((uintptr_t)from + o->B - 1) / LINE};
        r[2 * i + 1] = (struct range){(uintptr_t)to / LINE, ((uintptr_t)to + o->B - 1) / LINE};
    }
    qsort(r, 2 * n, sizeof *r, by_lo);
    size_t total = 0;
    uintptr_t lo = r[0].lo, hi = r[0].hi;
    for (size_t i = 1; i < 2 * n; i++) {
        if (r[i].lo > hi) { /* disjoint from the run so far */
            total += hi - lo + 1;
            lo = r[i].lo;
            hi = r[i].hi;
        } else if (r[i].hi > hi) {
            hi = r[i].hi;
        }
    }
    total += hi - lo + 1;
    free(r);
    return total;
}

static double cdiv(double a, double b) { return ceil(a / b); }

/* The Morton paper's per-rank predictions (its totals divided by P), for a cache of Z bytes
   and lines of L = 64 bytes (cachegrind has no prefetcher, so L is one line exactly).
   Returns NAN where the paper has no formula for the order; *eq names the equation. */
static double formula(const struct opts *o, double Z, const char **eq)
{
    double P = o->P, B = (double)o->B, L = LINE;
    int co = o->order == ORDER_MORTON || o->order == ORDER_HILBERT;
    int naive = o->order == ORDER_NAIVE || o->order == ORDER_ROW;
    if (o->op == OP_ALLTOALL) {
        if (co) {
            *eq = "2";
            return 2 * cdiv(P * B, L); /* eq. 2 / P (the paper compares eq. 3 with it too) */
        }
        *eq = o->order == ORDER_COLUMN ? "1-mirror" : "1";
        return cdiv(P * B, L) + P * cdiv(B, L); /* eq. 1 / P; column order mirrors it */
    }
    if (naive) {
        *eq = "4";
        return cdiv(P * B, L) + P * cdiv(B, L);
    }
    if (!co) {
        *eq = "-";
        return NAN;
    }
    if (B > Z / 2) {
        *eq = "5=4";
        return cdiv(P * B, L) + P * cdiv(B, L);
    }
    if (P >= sqrt(Z / B)) {
        *eq = "6";
        return P * cdiv(B, L) / sqrt(Z / B) + cdiv(P * B, L);
    }
    *eq = "8";
    return cdiv(B, L) + cdiv(P * B, L);
}

/* The measured part. One function per block size (replay_0, replay_1, ...), so that
   cachegrind's per-function counts (cachegrind.out, cg_annotate) give each size's misses alone:
   the schedule, the address arithmetic and, with --copy words, the copy itself are inlined in
   it. (With --copy memcpy the misses land in glibc's memcpy: use a run per size and subtract a
   --reps 0 baseline instead.) The marker store keeps the compiler from folding them into one. */
static volatile int replay_marker;

__attribute__((always_inline)) static inline void replay_body(const struct opts *o, const struct layout *l,
                                                              const struct step *st, size_t n)
{
    for (long rep = 0; rep < o->reps; rep++)
        for (size_t i = 0; i < n; i++) {
            char *to;
            const char *from;
            block_ptrs(o, l, st[i], &to, &from);
            if (o->copy == COPY_MEMCPY)
                memcpy(to, from, o->B);
            else
                copy_words(to, from, o->B);
        }
}

typedef void (*replay_fn)(const struct opts *, const struct layout *, const struct step *, size_t);
#define REPLAY(k)                                                                                                      \
    __attribute__((noinline)) static void replay_##k(const struct opts *o, const struct layout *l,                     \
                                                     const struct step *st, size_t n)                                  \
    {                                                                                                                  \
        replay_marker = k;                                                                                             \
        replay_body(o, l, st, n);                                                                                      \
    }
REPLAY(0) REPLAY(1) REPLAY(2) REPLAY(3) REPLAY(4) REPLAY(5) REPLAY(6) REPLAY(7)
REPLAY(8) REPLAY(9) REPLAY(10) REPLAY(11) REPLAY(12) REPLAY(13) REPLAY(14) REPLAY(15)
REPLAY(16) REPLAY(17) REPLAY(18) REPLAY(19) REPLAY(20) REPLAY(21) REPLAY(22) REPLAY(23)
REPLAY(24) REPLAY(25) REPLAY(26) REPLAY(27) REPLAY(28) REPLAY(29) REPLAY(30) REPLAY(31)
static const replay_fn replays[32] = {
    replay_0,  replay_1,  replay_2,  replay_3,  replay_4,  replay_5,  replay_6,  replay_7,
    replay_8,  replay_9,  replay_10, replay_11, replay_12, replay_13, replay_14, replay_15,
    replay_16, replay_17, replay_18, replay_19, replay_20, replay_21, replay_22, replay_23,
    replay_24, replay_25, replay_26, replay_27, replay_28, replay_29, replay_30, replay_31,
};

/* Read one byte of every line of a region larger than the simulated caches: with LRU
   replacement (cachegrind's) every earlier line is evicted. */
__attribute__((noinline)) static void flush_caches(const char *f, size_t bytes)
{
    volatile unsigned char sink = 0;
    for (size_t k = 0; k < bytes; k += LINE)
        sink ^= (unsigned char)f[k];
    (void)sink;
}

/* Read every line of an object, whatever its alignment. */
__attribute__((noinline)) static void touch(const void *p, size_t bytes)
{
    volatile unsigned char sink = 0;
    for (size_t k = 0; k < bytes; k++)
        sink ^= ((const unsigned char *)p)[k];
    (void)sink;
}

/* Bring the stack lines the replay function's frame will use into the cache. */
__attribute__((noinline)) static void touch_stack(void)
{
    volatile char frame[1024];
    for (size_t k = 0; k < sizeof frame; k += 8) /* every line, whatever the array's alignment */
        frame[k] = 0;
}

int main(int argc, char **argv)
{
    struct opts o;
    if (parse(argc, argv, &o) != 0)
        return 2;
    int P = o.P;
    int first = o.rank < 0 ? 0 : o.rank, nranks = o.rank < 0 ? P : 1;
    size_t nsteps = (size_t)nranks * (size_t)P;
    struct step *sched = malloc(nsteps * sizeof *sched);
    if (sched == NULL) {
        fprintf(stderr, "order-replay: out of memory for the schedule\n");
        return 1;
    }
    for (int r = 0; r < nranks; r++)
        if (schedule_of(&o, first + r, sched + (size_t)r * P) != 0) {
            fprintf(stderr, "order-replay: no schedule for order %d, P=%d\n", o.order, P);
            return 1;
        }
    if (o.interleave) { /* step i of every rank in turn */
        struct step *t = malloc(nsteps * sizeof *t);
        if (t == NULL)
            return 1;
        for (int i = 0; i < P; i++)
            for (int r = 0; r < P; r++)
                t[(size_t)i * P + r] = sched[(size_t)r * P + i];
        free(sched);
        sched = t;
    }

    /* Reserve room for the largest size; only the pages the schedule touches get memory. */
    struct layout l;
    size_t map_bytes = 0;
    for (int k = 0; k < o.nblocks; k++) {
        o.B = o.blocks[k];
        layout_of(&o, &l);
        if (l.map_bytes > map_bytes)
            map_bytes = l.map_bytes;
    }
    int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
    void *m = mmap(NULL, map_bytes, PROT_READ | PROT_WRITE, flags, -1, 0);
    void *f = o.flush && !o.predict ? mmap(NULL, o.flush, PROT_READ, flags, -1, 0) : NULL;
    if (m == MAP_FAILED || f == MAP_FAILED) {
        fprintf(stderr, "order-replay: cannot map %zu bytes for the buffers: %s\n", map_bytes, strerror(errno));
        return 1;
    }

    int bad = 0;
    for (int k = 0; k < o.nblocks; k++) {
        o.B = o.blocks[k];
        layout_of(&o, &l);
        l.base = m;
        if (o.predict) {
            size_t lines = distinct_lines(&o, &l, sched, nsteps);
            const char *eq1 = "-", *eq2 = "-";
            double f1 = formula(&o, (double)o.Z1, &eq1), f2 = formula(&o, (double)o.Z2, &eq2);
            printf("block=%zu ideal=%.1f eq_D1=%s pred_D1=%.1f eq_LL=%s pred_LL=%.1f bytes=%zu\n", o.B,
                   (double)lines / nranks, eq1, f1, eq2, f2, l.map_bytes);
            continue;
        }
        if (o.check) { /* give every send byte a value that names its block */
            for (int r = 0; r < P; r++)
                for (size_t j = 0; j < l.send_bytes; j++)
                    send_at(&l, r)[j] = (char)(r * 31 + (int)(j / o.B) * 7 + (int)(j % 251));
        }
        if (f)
            flush_caches(f, o.flush);
        /* the schedule itself (2 bytes a block) is read in first, so that the counts are the
           buffers' lines alone: a real rank keeps its tuple list warm across calls */
        touch(sched, nsteps * sizeof *sched);
        touch(&o, sizeof o); /* and the few variables the replay reads */
        touch(&l, sizeof l);
        replay_marker = -1;
        touch_stack();
        if (o.warm) { /* Fig. 9 lines 6-7: the rank's own send and receive buffers, sequentially */
            volatile unsigned char sink = 0;
            for (int r = first; r < first + nranks; r++) {
                for (size_t j = 0; j < l.send_bytes; j += LINE)
                    sink ^= (unsigned char)send_at(&l, r)[j];
                for (size_t j = 0; j < l.recv_bytes; j += LINE)
                    sink ^= (unsigned char)recv_at(&l, r)[j];
            }
            (void)sink;
        }
        replays[k](&o, &l, sched, nsteps);
        if (o.check && o.reps > 0) {
            size_t differ = 0;
            for (size_t i = 0; i < nsteps; i++) {
                char *to;
                const char *from;
                block_ptrs(&o, &l, sched[i], &to, &from);
                differ += memcmp(to, from, o.B) != 0;
            }
            printf("order-replay: block %zu: %zu of %zu blocks differ\n", o.B, differ, nsteps);
            bad |= differ != 0;
        }
    }
    fflush(stdout);
    /* straight out: no exit handlers, so a --reps 0 baseline differs only by the copies */
    _exit(bad);
}
