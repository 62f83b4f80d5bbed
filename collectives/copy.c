/*
 * collectives/copy.c — copy kernels (see copy.h). The non-temporal loops align the destination
 * with ordinary stores, stream whole vectors with unaligned loads (the source may have any
 * alignment), and copy the tail plainly. A C reference (memcpy) is what the tests compare with.
 */
#include <hwloc.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "collectives/copy.h"
#include "runtime/copy_kernel.h"
#include "runtime/memcopy.h"
#include "runtime/runtime.h"

typedef void (*nt_fn)(void *dst, const void *src, size_t n);

#ifdef COPY_X86 /* runtime/copy_kernel.h: the loop rt_memcpy's temporal kernels use too */
COPY_KERNEL(nt_sse2, , __m128i, 16, _mm_loadu_si128, _mm_stream_si128)
COPY_KERNEL(nt_avx2, __attribute__((target("avx2"))), __m256i, 32, _mm256_loadu_si256, _mm256_stream_si256)
COPY_KERNEL(nt_avx512, __attribute__((target("avx512f"))), __m512i, 64, _mm512_loadu_si512, _mm512_stream_si512)
#endif

static void nt_plain(void *dst, const void *src, size_t n) { memcpy(dst, src, n); }

static nt_fn chosen;
static const char *chosen_name = "memcpy";

static void choose(void)
{
    chosen = nt_plain;
#ifdef COPY_X86
    __builtin_cpu_init();
    const char *force = rt_cfg_str("HINT_COPY_KERNEL");
    if (__builtin_cpu_supports("avx512f") && (!strcmp(force, "auto") || !strcmp(force, "avx512"))) {
        chosen = nt_avx512;
        chosen_name = "avx512";
    } else if (__builtin_cpu_supports("avx2") && (!strcmp(force, "auto") || !strcmp(force, "avx2"))) {
        chosen = nt_avx2;
        chosen_name = "avx2";
    } else if (strcmp(force, "memcpy") != 0) {
        chosen = nt_sse2; /* every x86-64 has SSE2 */
        chosen_name = "sse2";
    }
#endif
}

void copy_nt(void *dst, const void *src, size_t n)
{
    if (chosen == NULL)
        choose();
    chosen(dst, src, n);
}

const char *copy_nt_kernel(void)
{
    if (chosen == NULL)
        choose();
    return chosen_name;
}

void copy_fence(void)
{
#ifdef COPY_X86
    _mm_sfence();
#else
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

bool copy_hybrid(void *dst, const void *src, size_t n, size_t T, size_t R)
{
    if (n < T || n <= R) {
        rt_memcpy(dst, src, n); /* under T; or R covers the block (a block of exactly T while R = T):
                                no non-temporal part, so the call's time says nothing about R */
        return false;
    }
    rt_memcpy(dst, src, R);
    copy_nt((char *)dst + R, (const char *)src + R, n - R);
    return true;
}

void copy_thresh_init(struct copy_thresh *t, size_t T)
{
    *t = (struct copy_thresh){.T = T, .R = T, .last = T};
}

void copy_thresh_record(struct copy_thresh *t, bool hybrid_ran, double seconds)
{
    if (t->frozen || !hybrid_ran)
        return;
    if (!t->warm) {
        t->warm = 1; /* the cold first call would make any next one look like an improvement */
        return;
    }
    if (t->best == 0 || seconds < t->best) {
        t->best = seconds;
        t->last = t->R;
        if (t->R == 0)
            t->frozen = 1; /* all non-temporal already: nothing left to halve */
        else
            t->R /= 2; /* try more non-temporal */
        return;
    }
    t->R = t->last; /* the halving did not pay: back to the value the best time was measured with */
    t->frozen = 1;
}

int copy_mode_from_env(void)
{
    const char *m = rt_cfg_str("HINT_COPY");
    if (!strcmp(m, "temporal"))
        return COPY_TEMPORAL;
    if (!strcmp(m, "nt"))
        return COPY_NT;
    if (strcmp(m, "hybrid") != 0)
        RT_ERR("coll", "HINT_COPY=%s is not temporal, nt or hybrid; using hybrid", m);
    return COPY_HYBRID;
}

/* Bytes of cache index `idx` of CPU 0 when it is a level-2 data or unified cache, else 0: sysfs,
   where hwloc reads it too, in a few microseconds. */
static size_t l2_from_sysfs_index(int idx)
{
    char path[96], buf[32];
    size_t bytes = 0;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", idx);
    FILE *f = fopen(path, "r");
    int level = 0;
    if (!f)
        return 0;
    if (fscanf(f, "%d", &level) != 1)
        level = 0;
    fclose(f);
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", idx);
    if (level != 2 || !(f = fopen(path, "r")))
        return 0;
    int data = fgets(buf, sizeof buf, f) && (!strncmp(buf, "Unified", 7) || !strncmp(buf, "Data", 4));
    fclose(f);
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", idx);
    if (!data || !(f = fopen(path, "r")))
        return 0;
    unsigned long v = 0;
    char unit = 0;
    if (fscanf(f, "%lu%c", &v, &unit) >= 1)
        bytes = (size_t)v * (unit == 'K' ? 1024 : unit == 'M' ? 1024 * 1024 : 1);
    fclose(f);
    return bytes;
}

/* The L2 size without hwloc when possible: a full hwloc load in the first alltoall or allgather
   (its plugins pull in libxml2, ICU, libstdc++) took 10-20 ms, 500x the call itself (issue 18). */
static size_t l2_quick(void)
{
    for (int idx = 0; idx < 10; idx++) {
        size_t b = l2_from_sysfs_index(idx);
        if (b)
            return b;
    }
    long s = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return s > 0 ? (size_t)s : 0;
}

size_t copy_l2_bytes(void)
{
    static size_t l2;
    if (l2)
        return l2;
    l2 = l2_quick();
    if (l2)
        return l2;
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) == 0 && hwloc_topology_load(topo) == 0) {
        hwloc_obj_t o = hwloc_get_obj_by_type(topo, HWLOC_OBJ_L2CACHE, 0);
        if (o && o->attr)
            l2 = (size_t)o->attr->cache.size;
        hwloc_topology_destroy(topo);
    }
    if (l2 == 0)
        l2 = (size_t)1 << 20;
    return l2;
}

size_t copy_threshold_T(int P) { return copy_l2_bytes() / (size_t)(P > 0 ? P : 1); }
