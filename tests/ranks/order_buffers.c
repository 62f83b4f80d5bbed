/*
 * tests/ranks/order_buffers.c — the copy orders (row, column, hilbert, morton, morton_numa) of
 * alltoall, alltoallv, allgather and allgatherv with send and receive buffers of every kind:
 * the shared heap, the stack, static memory and a private mmap, all 16 pairs, and kinds mixed
 * between the ranks of one call (rank r shifts the pair by r). Every result is checked, and
 * hint_coll_last must name the forced order: off the heap the blocks go through CMA
 * (process_vm_readv/writev), not the pairwise fallback.
 *
 *   order_buffers            the above
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
    const char *want = refused && off_heap ? fallback : alg;
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

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--help")) {
        printf("usage: hintrun -n P order_buffers [refused]   (P <= %d)\n", MAXP);
        return 0;
    }
    refused = argc > 1 && !strcmp(argv[1], "refused");
    if (refused)
        refuse_cma();
    RC_OK(hint_init(&argc, &argv));
    RC_OK(hint_group_rank(HINT_WORLD, &rc_rank));
    RC_OK(hint_group_size(HINT_WORLD, &P));
    RC_CHECK(P <= MAXP);
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
    RC_OK(hint_finalize());
    if (rc_rank == 0)
        printf("ok order_buffers%s: %d calls, every kind pair\n", refused ? " (CMA refused)" : "", calls);
    return 0;
}
