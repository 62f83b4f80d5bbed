/*
 * runtime/malloc.c — malloc and friends for programs linked with libhint: after hint_init they
 * serve from this rank's partition of the shared heap, so ordinary buffers can be read and
 * written by every rank of the node; before init, after finalize, with HINT_HEAP=private, and in
 * a forked child they are glibc's. free/realloc/malloc_usable_size route every pointer by
 * address to the allocator that made it.
 *
 * Interposition: these definitions come before libc's in the process's symbol scope and win for
 * the whole process. glibc's own allocator is looked up in libc itself (dlsym on libc's handle):
 * a plain reference to __libc_malloc could bind to libmimalloc, which defines that name too and
 * comes before libc when libhint is linked statically. dlopen/dlsym may allocate while we look
 * them up: those few early calls are served from a static buffer that is never freed.
 *
 * A full partition never crashes: allocation falls back to glibc with a one-time warning, or
 * returns NULL with HINT_HEAP_STRICT=1.
 *
 * Built with -Dmalloc_override=disabled, or under AddressSanitizer (whose allocator must stay:
 * ours would crash it before main()), none of this is compiled: malloc stays the C library's
 * (or ASan's), and the heap serves hint_malloc and the collectives' staging only.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hint.h"
#include "hint_config.h"
#include "runtime/heap.h"
#include "runtime/runtime.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HINT_UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define HINT_UNDER_ASAN 1
#endif
#if HINT_MALLOC_OVERRIDE && !defined(HINT_UNDER_ASAN)
#define OVERRIDE 1
#else
#define OVERRIDE 0
#endif

static int strict = -1;

bool heap_strict(void)
{
    if (strict < 0)
        strict = rt_cfg_long("HINT_HEAP_STRICT") == 1;
    return strict;
}

/* A forked child shares the mapping but must not allocate in the parent's partition. */
static void child_after_fork(void) { heap.active = false; }

#if OVERRIDE
/* ---- glibc's allocator ---- */
static struct {
    void *(*malloc)(size_t);
    void (*free)(void *);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    void *(*memalign)(size_t, size_t);
    size_t (*usable_size)(void *);
} glibc;

static _Alignas(64) char boot_buf[64 << 10];
static atomic_size_t boot_used;
static atomic_int resolving;

static bool in_boot_buf(const void *p) { return (const char *)p >= boot_buf && (const char *)p < boot_buf + sizeof boot_buf; }

static void *boot_alloc(size_t n, size_t align)
{
    if (align < 16)
        align = 16;
    size_t at = atomic_fetch_add(&boot_used, n + align);
    if (at + n + align > sizeof boot_buf)
        return NULL;
    return (void *)(((uintptr_t)(boot_buf + at) + align - 1) & ~(uintptr_t)(align - 1));
}

static bool resolve_glibc(void)
{
    if (glibc.malloc)
        return true;
    if (atomic_exchange(&resolving, 1))
        return false; /* a call from inside dlopen/dlsym: the caller uses boot_buf */
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    if (libc) {
        glibc.free = (void (*)(void *))dlsym(libc, "__libc_free");
        glibc.calloc = (void *(*)(size_t, size_t))dlsym(libc, "__libc_calloc");
        glibc.realloc = (void *(*)(void *, size_t))dlsym(libc, "__libc_realloc");
        glibc.memalign = (void *(*)(size_t, size_t))dlsym(libc, "__libc_memalign");
        glibc.usable_size = (size_t(*)(void *))dlsym(libc, "malloc_usable_size");
        glibc.malloc = (void *(*)(size_t))dlsym(libc, "__libc_malloc"); /* last: it marks completion */
    }
    atomic_store(&resolving, 0);
    if (!glibc.malloc) {
        static const char msg[] = "hint: cannot find glibc's allocator in libc.so.6; aborting\n";
        ssize_t unused = write(2, msg, sizeof msg - 1);
        (void)unused;
        abort();
    }
    return true;
}

static void *g_malloc(size_t n) { return resolve_glibc() ? glibc.malloc(n) : boot_alloc(n, 16); }
static void *g_calloc(size_t n, size_t s) { return resolve_glibc() ? glibc.calloc(n, s) : boot_alloc(n * s, 16); }
static void *g_memalign(size_t a, size_t n) { return resolve_glibc() ? glibc.memalign(a, n) : boot_alloc(n, a); }
static void *g_realloc(void *p, size_t n)
{
    if (in_boot_buf(p)) { /* only during start-up lookups; copy out of the static buffer */
        void *q = g_malloc(n);
        if (q)
            memcpy(q, p, n < 256 ? n : 256);
        return q;
    }
    resolve_glibc();
    return glibc.realloc(p, n);
}
static void g_free(void *p)
{
    if (!in_boot_buf(p) && resolve_glibc())
        glibc.free(p);
}

#define EXPORT __attribute__((visibility("default")))

static atomic_bool warned_full;

/* The partition is full (or this thread cannot get a heap): glibc's, unless strict. */
static void *fallback(size_t size, size_t align, bool zero)
{
    if (heap_strict()) {
        errno = ENOMEM;
        return NULL;
    }
    if (!atomic_load(&heap.shm_full) && !atomic_exchange(&warned_full, true)) { /* heap.c said why already */
        /* write(2) directly: we are inside malloc */
        static const char msg[] = "hint: the shared heap partition is full; further buffers come from the private "
                                  "heap (slower collectives). Set HINT_HEAP_SIZE larger, or HINT_HEAP_STRICT=1 to "
                                  "get NULL instead.\n";
        ssize_t unused = write(2, msg, sizeof msg - 1);
        (void)unused;
    }
    if (align > 16)
        return g_memalign(align, size);
    return zero ? g_calloc(1, size) : g_malloc(size);
}

static void *alloc(size_t size, size_t align, bool zero)
{
    if (!heap.active)
        return align > 16 ? g_memalign(align, size) : zero ? g_calloc(1, size) : g_malloc(size);
    void *p = heap_alloc(size ? size : 1, align, zero);
    return p ? p : fallback(size, align, zero);
}

EXPORT void *malloc(size_t size) { return alloc(size, 0, false); }

EXPORT void free(void *p)
{
    if (p == NULL)
        return;
    if (heap_contains(p))
        heap_release(p);
    else
        g_free(p);
}

EXPORT void *calloc(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size) {
        errno = ENOMEM;
        return NULL;
    }
    return alloc(n * size, 0, true);
}

EXPORT void *realloc(void *p, size_t size)
{
    if (p == NULL)
        return malloc(size);
    if (size == 0) {
        free(p);
        return NULL;
    }
    if (!heap_contains(p))
        return g_realloc(p, size); /* made by glibc: stays with glibc */
    void *q = heap_realloc(p, size);
    if (q)
        return q;
    /* heap inactive (after finalize) or partition full: move it out */
    q = heap.active ? fallback(size, 0, false) : g_malloc(size);
    if (q) {
        size_t old = heap_usable_size(p);
        memcpy(q, p, old < size ? old : size);
        heap_release(p);
    }
    return q;
}

static bool valid_alignment(size_t a) { return a >= sizeof(void *) && (a & (a - 1)) == 0; }

EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
    if (!valid_alignment(align))
        return EINVAL;
    void *p = alloc(size, align, false);
    if (p == NULL)
        return ENOMEM;
    *out = p;
    return 0;
}

EXPORT void *aligned_alloc(size_t align, size_t size)
{
    if (align == 0 || (align & (align - 1)) != 0) {
        errno = EINVAL;
        return NULL;
    }
    return alloc(size, align < sizeof(void *) ? sizeof(void *) : align, false);
}

EXPORT void *memalign(size_t align, size_t size) { return aligned_alloc(align, size); }

EXPORT void *valloc(size_t size) { return alloc(size, (size_t)sysconf(_SC_PAGESIZE), false); }

EXPORT void *pvalloc(size_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return alloc((size + page - 1) / page * page, page, false);
}

static size_t glibc_usable_size(void *p)
{
    if (in_boot_buf(p) || !resolve_glibc() || !glibc.usable_size)
        return 0;
    return glibc.usable_size(p);
}

EXPORT size_t malloc_usable_size(void *p)
{
    if (p == NULL)
        return 0;
    return heap_contains(p) ? heap_usable_size(p) : glibc_usable_size(p);
}

int heap_check_glibc(void)
{
    static bool registered;
    if (!registered) {
        pthread_atfork(NULL, NULL, child_after_fork);
        registered = true;
    }
    Dl_info info;
    if (!resolve_glibc() || dladdr((void *)glibc.malloc, &info) == 0 || info.dli_fname == NULL ||
        strstr(info.dli_fname, "libc.so") == NULL) {
        RT_ERR("heap", "glibc's allocator was not found in libc (%s); the shared heap stays off",
               glibc.malloc && info.dli_fname ? info.dli_fname : "?");
        return HINT_ERR_UNSUPPORTED;
    }
    return HINT_SUCCESS;
}
#else
/* No override: nothing to look up; malloc is never served from the heap. */
int heap_check_glibc(void)
{
    static bool registered;
    if (!registered) {
        pthread_atfork(NULL, NULL, child_after_fork);
        registered = true;
    }
    return HINT_SUCCESS;
}
#endif

/* ---- public ---- */

void *hint_malloc(size_t bytes)
{
    if (!heap.active)
        return NULL;
    return heap_alloc(bytes ? bytes : 1, 0, false);
}

void hint_free(void *p)
{
    if (p != NULL && heap_contains(p))
        heap_release(p);
}

int hint_mem_shared(const void *p) { return p != NULL && heap_contains(p); }
