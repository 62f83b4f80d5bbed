/*
 * launcher/bind.c — where each rank runs: --bind-to core|none, --hierarchy H --order S (the
 * mixed-radix core list of topology/, Alg. 3), --report-bindings.
 *
 * The default binds rank r to core r when the ranks fit on the cores hintrun may use (hwloc's
 * allowed set), and binds nothing when they do not: pinned oversubscribed ranks could not move
 * to an idle core. The plan is made before any rank starts, so a bad request fails up front
 * with the numbers in the message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/launch.h"
#include "topology/topology.h"

static int plan_mixed_radix(const struct launch_opts *o, int np, int ncores, int *core_of)
{
    struct topo_hier hier;
    int order[TOPO_MAX_LEVELS];
    if (topo_parse_hierarchy(o->hierarchy, &hier) != HINT_SUCCESS) {
        fprintf(stderr, "hintrun: --hierarchy %s: %s\n", o->hierarchy, topo_last_error());
        return 2;
    }
    if (o->order && topo_parse_order(o->order, hier.nlevels, order) != HINT_SUCCESS) {
        fprintf(stderr, "hintrun: --order %s: %s\n", o->order, topo_last_error());
        return 2;
    }
    if (topo_core_list(hier.nlevels, hier.h, o->order ? order : NULL, np, o->nodes, ncores, NULL, core_of) !=
        HINT_SUCCESS) {
        fprintf(stderr, "hintrun: --hierarchy %s%s%s: %s\n", o->hierarchy, o->order ? " --order " : "",
                o->order ? o->order : "", topo_last_error());
        return 2;
    }
    return 0;
}

int launch_plan_binding(struct launch_job *job)
{
    const struct launch_opts *o = job->opts;
    int ncores = 0;
    job->core_of = NULL;
    if (o->bind == LAUNCH_BIND_NONE && !o->hierarchy)
        return 0;
    if (topo_ncores(&ncores) != HINT_SUCCESS || ncores < 1) {
        if (o->bind == LAUNCH_BIND_DEFAULT && !o->hierarchy)
            return 0; /* cannot tell the cores: do not pin */
        fprintf(stderr, "hintrun: cannot read this machine's cores (%s)\n", topo_last_error());
        return 2;
    }
    if (!o->hierarchy && job->np > ncores) {
        if (o->bind == LAUNCH_BIND_DEFAULT)
            return 0;
        fprintf(stderr, "hintrun: --bind-to core: %d ranks need %d cores but only %d %s available; "
                "run fewer ranks or use --bind-to none\n", job->np, job->np, ncores, ncores == 1 ? "is" : "are");
        return 2;
    }
    job->core_of = calloc((size_t)job->np, sizeof *job->core_of);
    if (!job->core_of) {
        fprintf(stderr, "hintrun: out of memory\n");
        return 1;
    }
    if (o->hierarchy)
        return plan_mixed_radix(o, job->np, ncores, job->core_of);
    for (int r = 0; r < job->np; r++)
        job->core_of[r] = r;
    return 0;
}

/* In the child, before exec: the binding is inherited across exec. */
void launch_bind_child(const struct launch_job *job, int rank)
{
    if (job->core_of && topo_bind_self(job->core_of[rank]) != HINT_SUCCESS)
        dprintf(2, "hintrun: rank %d: could not bind to core %d: %s\n", rank, job->core_of[rank],
                topo_last_error());
}

void launch_report_bindings(const struct launch_job *job)
{
    if (!job->opts->report_bindings)
        return;
    for (int r = 0; r < job->np; r++) {
        if (job->core_of)
            fprintf(stderr, "hintrun: rank %d (pid %d) bound to core %d\n", r, (int)job->ranks[r].pid,
                    job->core_of[r]);
        else
            fprintf(stderr, "hintrun: rank %d (pid %d) not bound (%s)\n", r, (int)job->ranks[r].pid,
                    job->opts->bind == LAUNCH_BIND_NONE ? "--bind-to none" : "more ranks than cores");
    }
}
