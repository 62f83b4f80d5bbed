/*
 * runtime/init.c — hint_init / hint_finalize and the other life-cycle calls.
 */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "collectives/coll.h"
#include "runtime/boot_proto.h"
#include "runtime/group.h"
#include "runtime/heap.h"
#include "runtime/request.h"
#include "runtime/runtime.h"
#include "runtime/trace.h"
#include "topology/topology.h"
#include "transport/shm/shm.h"

struct rt_state rt;

static int start_transports(void)
{
    int st = shm_node_open(&rt.shm);
    if (st != HINT_SUCCESS)
        return st;
    /* the heap's set-up is collective over the node: every rank enters it */
    st = heap_check_glibc() == HINT_SUCCESS ? heap_init() : HINT_SUCCESS;
    if (st != HINT_SUCCESS)
        return st;
    return shm_p2p_init(rt.shm);
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
    if (rt.boot.nnodes != 1) {
        RT_ERR("init", "%d nodes requested but only one node is supported yet", rt.boot.nnodes);
        st = HINT_ERR_UNSUPPORTED;
        goto fail;
    }
    CHECK_GOTO(start_transports(), fail);
    CHECK_GOTO(grp_world_create(&rt.world), fail);
    rt_wait_init();
    rt.state = RT_RUNNING;
    return HINT_SUCCESS;
fail:
    shm_p2p_fini();
    shm_node_close(rt.shm);
    rt.shm = NULL;
    boot_fini();
    return st;
}

int hint_finalize(void)
{
    RT_CHECK_INIT();
    trace.phase = "hint_finalize";
    if (shm_pending() > 0)
        RT_ERR("finalize", "%d point-to-point requests were never completed; their data is lost",
               shm_pending());
    /* Finalize is collective: no rank leaves while a peer may still read its messages. */
    int st = rt.boot.singleton ? HINT_SUCCESS : boot_fence();
    grp_destroy(rt.world);
    rt.world = HINT_GROUP_NULL;
    coll_stats_report();
    coll_staging_release_all(); /* after the fence: no peer reads them any more */
    shm_p2p_fini();
    shm_node_close(rt.shm);
    rt.shm = NULL;
    rq_pool_fini();
    heap_stop(); /* buffers on the heap stay valid; new ones come from glibc */
    topo_release();
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
