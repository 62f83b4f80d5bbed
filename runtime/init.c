/*
 * runtime/init.c — hint_init / hint_finalize and the other life-cycle calls.
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "runtime/boot_proto.h"
#include "runtime/group.h"
#include "runtime/heap.h"
#include "runtime/request.h"
#include "runtime/runtime.h"
#include "runtime/thread.h"
#include "runtime/trace.h"
#include "runtime/transport.h"

struct rt_state rt;

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14; older kernels refuse it (EINVAL) and nothing happens */
#endif

void rt_prefault(void *addr, size_t len)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t first = (uintptr_t)addr & ~(page - 1), end = ((uintptr_t)addr + len + page - 1) & ~(page - 1);
    if (len > 0)
        (void)madvise((void *)first, end - first, MADV_POPULATE_WRITE); /* an optimisation: failure is harmless */
}

/* The components' setup (node areas, group parts), then the transports, then the heap, whose
   handshake lives in a node area. */
static int start_parts(void)
{
    int st = HINT_SUCCESS;
    CHECK_GOTO(heap_setup(), out);
    for (int i = 0; hint_components[i]; i++)
        if (hint_components[i]->setup)
            CHECK_GOTO(hint_components[i]->setup(), out);
    CHECK_GOTO(rt_transports_start(), out);
    /* the heap's set-up is collective over the node: every rank enters it */
    if (heap_check_glibc() == HINT_SUCCESS)
        CHECK_GOTO(heap_init(), out);
out:
    return st;
}

static void stop_components(void)
{
    int n = 0;
    while (hint_components[n])
        n++;
    for (int i = n - 1; i >= 0; i--)
        if (hint_components[i]->fini)
            hint_components[i]->fini();
}

int hint_init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    if (rt.state == RT_RUNNING)
        return HINT_SUCCESS; /* a second init is harmless */
    if (rt.state == RT_FINALIZED)
        return HINT_ERR_NOT_INITIALIZED; /* as MPI: no restart after finalize */
    int st = HINT_SUCCESS;
    CHECK_GOTO(boot_init(&rt.boot), fail);
    CHECK_GOTO(rt_cfg_check_all(), fail); /* a malformed HINT_* value stops the job here, named */
    trace_init(); /* hang reports; until here hintrun's SIGURG is ignored, as by default */
    CHECK_GOTO(rt_nodes_init(), fail);
    CHECK_GOTO(start_parts(), fail);
    CHECK_GOTO(grp_world_create(&rt.world), fail);
    rt_wait_init();
    rt_thread_note_main();
    rt.state = RT_RUNNING;
    return HINT_SUCCESS;
fail:
    rt_transports_stop();
    rt_nodes_fini();
    boot_fini();
    return st;
}

int hint_finalize(void)
{
    RT_CHECK_INIT();
    trace.phase = "hint_finalize";
    rq_settle_detached(); /* requests freed by hint_request_free while in flight */
    int pending = rt_pending();
    if (pending > 0)
        RT_ERR("finalize", "%d point-to-point requests were never completed; their data is lost", pending);
    /* Finalize is collective: no rank leaves while a peer may still read its messages. */
    int st = rt.boot.singleton ? HINT_SUCCESS : boot_fence();
    grp_destroy(rt.world);
    rt.world = HINT_GROUP_NULL;
    stop_components(); /* after the fence: no peer reads their shared state any more */
    rt_transports_stop();
    rq_pool_fini();
    heap_stop(); /* buffers on the heap stay valid; new ones come from glibc */
    rt_nodes_fini();
    boot_fini();
    rt.state = RT_FINALIZED;
    return st;
}

int hint_initialized(int *flag)
{
    if (flag == NULL)
        return HINT_ERR_ARG;
    *flag = rt.state == RT_RUNNING;
    return HINT_SUCCESS;
}

int hint_finalized(int *flag)
{
    if (flag == NULL)
        return HINT_ERR_ARG;
    *flag = rt.state == RT_FINALIZED;
    return HINT_SUCCESS;
}

void hint_abort(int code)
{
    if (rt.state == RT_RUNNING && !rt.boot.singleton)
        boot_abort(code, NULL);
    _exit(boot_abort_status(code)); /* as under hintrun: an abort is never a success */
}

double hint_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double hint_wtick(void)
{
    struct timespec ts;
    clock_getres(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
