/*
 * runtime/boot_pmix.c — the PMIx back end (runtime/boot_backend.h): a rank started by a PMIx
 * server (Open MPI's mpirun, srun --mpi=pmix; PMIX_NAMESPACE and PMIX_RANK in its environment)
 * joins that job through libpmix: PMIx_Init gives its rank, PMIX_JOB_SIZE the world size, and
 * the values the transports exchange travel by PMIx_Put / Commit / Fence (collecting the data) /
 * Get. Compiled in only when meson finds libpmix (HINT_HAVE_PMIX).
 *
 * PMIx keys belong to the rank that put them, while hint's keys are the job's ("ofi.5",
 * "node.1"). A get therefore asks the rank the key names first (the number after the last '.':
 * ofi.5 was put by rank 5) and otherwise every rank in turn, each time only in the data the last
 * fence collected (PMIX_OPTIONAL), so a miss costs local look-ups, never a wait on the server.
 */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hint.h"
#include "runtime/boot_backend.h"
#include "runtime/boot_proto.h"

static struct {
    pmix_proc_t me;
    int size;
    int dirty; /* puts since the last fence: commit before fencing */
    int up;
} px;

#define PMIX_WHO "PMIx"

static int pmix_failed(const char *what, pmix_status_t rc)
{
    boot_say(PMIX_WHO, "rank %u: %s failed: %s", px.me.rank, what, PMIx_Error_string(rc));
    return HINT_ERR_BOOTSTRAP;
}

static int pmix_put(const char *key, const void *val, size_t len)
{
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = (char *)val;
    v.data.bo.size = len;
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key, &v);
    if (rc != PMIX_SUCCESS)
        return pmix_failed("PMIx_Put", rc);
    px.dirty = 1;
    return HINT_SUCCESS;
}

static int pmix_fence(void)
{
    pmix_status_t rc;
    if (px.dirty && (rc = PMIx_Commit()) != PMIX_SUCCESS)
        return pmix_failed("PMIx_Commit", rc);
    px.dirty = 0;
    pmix_info_t info;
    bool collect = true;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    rc = PMIx_Fence(NULL, 0, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    return rc == PMIX_SUCCESS ? HINT_SUCCESS : pmix_failed("PMIx_Fence", rc);
}

/* Looks key up among rank's collected data; 1 when found (value copied), 0 when not there. */
static int get_from(int rank, const char *key, void *val, size_t cap, size_t *len)
{
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, px.me.nspace, (pmix_rank_t)rank);
    pmix_info_t info;
    bool optional = true;
    PMIX_INFO_LOAD(&info, PMIX_OPTIONAL, &optional, PMIX_BOOL);
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(&p, key, &info, 1, &v);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS || !v)
        return 0;
    int found = v->type == PMIX_BYTE_OBJECT;
    if (found) {
        *len = v->data.bo.size;
        if (*len)
            memcpy(val, v->data.bo.bytes, *len < cap ? *len : cap);
    }
    PMIX_VALUE_RELEASE(v);
    return found;
}

/* The rank a key names: the number after its last '.', -1 when none or out of range. */
static int named_rank(const char *key)
{
    const char *dot = strrchr(key, '.');
    if (!dot || !dot[1])
        return -1;
    char *end;
    long r = strtol(dot + 1, &end, 10);
    return *end == '\0' && r >= 0 && r < px.size ? (int)r : -1;
}

static int pmix_get(const char *key, void *val, size_t cap, size_t *len)
{
    int guess = named_rank(key), found = guess >= 0 && get_from(guess, key, val, cap, len);
    for (int r = 0; !found && r < px.size; r++)
        if (r != guess)
            found = get_from(r, key, val, cap, len);
    if (!found) {
        boot_say(PMIX_WHO, "rank %u: get '%s': no rank put it before the last fence", px.me.rank,
                 key);
        return HINT_ERR_BOOTSTRAP;
    }
    return *len > cap ? HINT_ERR_TRUNCATE : HINT_SUCCESS;
}

static void pmix_abort(int code, const char *msg)
{
    if (px.up)
        (void)PMIx_Abort(boot_abort_status(code), msg ? msg : "hint_abort", NULL, 0);
}

static void pmix_fini(void)
{
    if (px.up)
        (void)PMIx_Finalize(NULL, 0);
    px.up = 0;
}

static const struct boot_backend pmix_backend = {
    .name = PMIX_WHO,
    .put = pmix_put,
    .get = pmix_get,
    .fence = pmix_fence,
    .abort = pmix_abort,
    .fini = pmix_fini,
};

static int job_size(int *size)
{
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, px.me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v);
    if (rc != PMIX_SUCCESS || !v)
        return pmix_failed("PMIx_Get(PMIX_JOB_SIZE)", rc);
    long n = v->type == PMIX_UINT32 ? (long)v->data.uint32 : -1;
    PMIX_VALUE_RELEASE(v);
    if (n < 1 || (long)px.me.rank >= n) {
        boot_say(PMIX_WHO, "rank %u: PMIX_JOB_SIZE is %ld, not a size that holds this rank",
                 px.me.rank, n);
        return HINT_ERR_BOOTSTRAP;
    }
    *size = (int)n;
    return HINT_SUCCESS;
}

int boot_pmix_init(struct boot_info *info, const struct boot_backend **be)
{
    *info = (struct boot_info){0};
    pmix_status_t rc = PMIx_Init(&px.me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        boot_say(PMIX_WHO, "this process was started by a PMIx server (PMIX_NAMESPACE=%s, "
                 "PMIX_RANK=%s) but cannot join it: PMIx_Init: %s; the job cannot start (is the "
                 "launcher's PMIx server still running, and of a version libpmix %s talks to?)",
                 getenv("PMIX_NAMESPACE"), getenv("PMIX_RANK"), PMIx_Error_string(rc),
                 PMIx_Get_version());
        return HINT_ERR_BOOTSTRAP;
    }
    px.up = 1;
    int st;
    if ((st = job_size(&px.size))) {
        pmix_fini();
        return st;
    }
    info->rank = (int)px.me.rank;
    info->size = px.size;
    if ((st = boot_geometry_from_hosts(info, &pmix_backend))) {
        pmix_fini();
        return st;
    }
    char name[PMIX_MAX_NSLEN + 16];
    snprintf(name, sizeof name, "pmix:%s", px.me.nspace);
    boot_jobid_from_name(name, info->jobid);
    *be = &pmix_backend;
    return HINT_SUCCESS;
}
