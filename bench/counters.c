/*
 * bench/counters.c — hint-bench --papi through PAPI (see counters.h).
 *
 * An event name PAPI does not know is refused, on any machine, so a typo never passes as "no
 * counters here". A known event that cannot be added or started means the machine does not
 * expose it (a virtual machine without a PMU, perf_event_paranoid, a CPU without that event):
 * the caller says so in one line and measures without counters.
 */
#include "bench/counters.h"

#include <stdio.h>
#include <string.h>

#ifdef HINT_BENCH_PAPI
#include <papi.h>
#include <unistd.h>
#endif

int bc_parse(const char *list, struct bc_set *c, char why[BC_WHY_LEN])
{
    memset(c, 0, sizeof *c);
    const char *p = list;
    while (*p) {
        size_t len = strcspn(p, ",");
        if (len == 0 || len >= BC_NAME_LEN || c->n == BC_MAX_EVENTS) {
            snprintf(why, BC_WHY_LEN, "bad --papi '%s' (want up to %d event names, comma-separated, e.g. "
                     "PAPI_TOT_INS,PAPI_L1_DCM)", list, BC_MAX_EVENTS);
            return -1;
        }
        memcpy(c->names[c->n++], p, len);
        p += len + (p[len] == ',');
    }
    if (c->n == 0) {
        snprintf(why, BC_WHY_LEN, "--papi wants event names, e.g. PAPI_TOT_INS,PAPI_L1_DCM");
        return -1;
    }
    return 0;
}

void bc_zero(struct bc_set *c) { memset(c->totals, 0, sizeof c->totals); }

#ifdef HINT_BENCH_PAPI

/* The kernel lists a CPU's PMU under this folder; a virtual machine without counters has none. */
static int kernel_has_cpu_pmu(void)
{
    return access("/sys/bus/event_source/devices/cpu", F_OK) == 0 ||
           access("/sys/bus/event_source/devices/cpu_core", F_OK) == 0 ||
           access("/sys/bus/event_source/devices/armv8_pmuv3_0", F_OK) == 0;
}

static enum bc_status unavailable(struct bc_set *c, char why[BC_WHY_LEN], const char *event, int err)
{
    snprintf(why, BC_WHY_LEN, "%s%s%s%s", event ? event : "", event ? ": " : "", PAPI_strerror(err),
             kernel_has_cpu_pmu() ? "" : "; the kernel exposes no CPU PMU: /sys/bus/event_source/devices/cpu is missing");
    bc_close(c);
    return BC_UNAVAILABLE;
}

enum bc_status bc_open(struct bc_set *c, char why[BC_WHY_LEN])
{
    c->eventset = PAPI_NULL;
    int v = PAPI_library_init(PAPI_VER_CURRENT);
    if (v != PAPI_VER_CURRENT) {
        snprintf(why, BC_WHY_LEN, "PAPI_library_init: %s", v < 0 ? PAPI_strerror(v) : "library version mismatch");
        return BC_UNAVAILABLE;
    }
    /* every name first: a typo is an error even where nothing could be counted */
    for (int k = 0; k < c->n; k++) {
        int code;
        if (PAPI_event_name_to_code(c->names[k], &code) != PAPI_OK) {
            snprintf(why, BC_WHY_LEN, "unknown PAPI event '%s' (papi_avail and papi_native_avail list the names)",
                     c->names[k]);
            PAPI_shutdown();
            return BC_BAD_NAME;
        }
    }
    const PAPI_component_info_t *cpu = PAPI_get_component_info(0);
    if (cpu && cpu->disabled) {
        snprintf(why, BC_WHY_LEN, "PAPI's %.32s component is disabled: %.160s", cpu->name, cpu->disabled_reason);
        PAPI_shutdown();
        return BC_UNAVAILABLE;
    }
    int st = PAPI_create_eventset(&c->eventset);
    if (st != PAPI_OK)
        return unavailable(c, why, NULL, st);
    for (int k = 0; k < c->n; k++)
        if ((st = PAPI_add_named_event(c->eventset, c->names[k])) != PAPI_OK)
            return unavailable(c, why, c->names[k], st);
    if ((st = PAPI_start(c->eventset)) != PAPI_OK)
        return unavailable(c, why, NULL, st);
    c->started = 1;
    return BC_COUNTING;
}

void bc_begin(struct bc_set *c) { PAPI_reset(c->eventset); }

/* PAPI_accum adds the counts to totals and resets the counters. */
void bc_end(struct bc_set *c) { PAPI_accum(c->eventset, c->totals); }

void bc_close(struct bc_set *c)
{
    long long ignored[BC_MAX_EVENTS];
    if (c->started)
        PAPI_stop(c->eventset, ignored);
    if (c->eventset != PAPI_NULL) {
        PAPI_cleanup_eventset(c->eventset);
        PAPI_destroy_eventset(&c->eventset);
    }
    c->started = 0;
    PAPI_shutdown();
}

#else /* built without PAPI: the MPI peers, or a build where Meson found no PAPI */

enum bc_status bc_open(struct bc_set *c, char why[BC_WHY_LEN])
{
    (void)c;
    snprintf(why, BC_WHY_LEN, "this hint-bench was built without PAPI");
    return BC_UNAVAILABLE;
}

void bc_begin(struct bc_set *c) { (void)c; }
void bc_end(struct bc_set *c) { (void)c; }
void bc_close(struct bc_set *c) { (void)c; }

#endif
