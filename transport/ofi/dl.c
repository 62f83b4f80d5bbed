/*
 * transport/ofi/dl.c — open libfabric only when a job spans nodes.
 * Debian's libfabric links the libraries of every provider it was built with (verbs, efa, psm,
 * psm2, ...); loading it costs about 0.2 s in libinfinipath's constructor alone, and that
 * constructor installs signal handlers. A job on one node needs none of it, so libhint does not
 * link libfabric: the functions it calls are looked up here on first use, with the ABI versions
 * of the headers hint was built with, and the process's signal handlers are put back as they
 * were around the load and the first fi_getinfo (where providers initialise).
 */
#include "transport/ofi/ofi_dl.h"

#include <dlfcn.h>
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <stddef.h>

#include "runtime/runtime.h"

#define STR_(x) #x
#define STR(x) STR_(x)
#define FABRIC_SONAME "libfabric.so." STR(FI_MAJOR_VERSION)

/* The ABI each was declared with in the headers hint builds against (FABRIC_1.3 for the fi_info
   calls since libfabric 1.9, whose struct fi_info hint uses; see `nm -D libfabric.so.1`). */
static struct {
    int state; /* 0 not tried, 1 open, -1 failed */
    void *lib;
    int (*getinfo)(uint32_t, const char *, const char *, uint64_t, const struct fi_info *,
                   struct fi_info **);
    void (*freeinfo)(struct fi_info *);
    struct fi_info *(*dupinfo)(const struct fi_info *);
    int (*fabric)(struct fi_fabric_attr *, struct fid_fabric **, void *);
    const char *(*strerror)(int);
    int initialised; /* the first fi_getinfo has run */
} fab;

static void *lookup(const char *name, const char *version)
{
    void *fn = dlvsym(fab.lib, name, version);
    return fn ? fn : dlsym(fab.lib, name);
}

static int open_library(void)
{
    struct ofi_saved_signals saved;
    ofi_signals_save(&saved);
    fab.lib = dlopen(FABRIC_SONAME, RTLD_NOW | RTLD_LOCAL);
    ofi_signals_restore(&saved);
    if (!fab.lib) {
        RT_ERR("ofi", "this job spans nodes, which needs libfabric (%s): %s; install it "
               "(Debian: libfabric1)", FABRIC_SONAME, dlerror());
        return -1;
    }
    fab.getinfo = lookup("fi_getinfo", "FABRIC_1.3");
    fab.freeinfo = lookup("fi_freeinfo", "FABRIC_1.3");
    fab.dupinfo = lookup("fi_dupinfo", "FABRIC_1.3");
    fab.fabric = lookup("fi_fabric", "FABRIC_1.1");
    fab.strerror = lookup("fi_strerror", "FABRIC_1.0");
    if (!fab.getinfo || !fab.freeinfo || !fab.dupinfo || !fab.fabric || !fab.strerror) {
        RT_ERR("ofi", "%s lacks fi_getinfo, fi_freeinfo, fi_dupinfo, fi_fabric or fi_strerror; "
               "is it libfabric %d.x?", FABRIC_SONAME, FI_MAJOR_VERSION);
        dlclose(fab.lib);
        fab.lib = NULL;
        return -1;
    }
    return 0;
}

int ofi_dl_open(void)
{
    if (fab.state == 0)
        fab.state = open_library() == 0 ? 1 : -1;
    return fab.state == 1 ? 0 : -1;
}

int ofi_dl_is_open(void) { return fab.state == 1; }

int ofi_dl_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
                   const struct fi_info *hints, struct fi_info **info)
{
    if (ofi_dl_open())
        return -FI_ENOSYS;
    if (fab.initialised)
        return fab.getinfo(version, node, service, flags, hints, info);
    struct ofi_saved_signals saved;
    ofi_signals_save(&saved);
    int rc = fab.getinfo(version, node, service, flags, hints, info);
    ofi_signals_restore(&saved);
    fab.initialised = 1;
    return rc;
}

void ofi_dl_freeinfo(struct fi_info *info)
{
    if (info && ofi_dl_open() == 0)
        fab.freeinfo(info);
}

struct fi_info *ofi_dl_dupinfo(const struct fi_info *info)
{
    return ofi_dl_open() ? NULL : fab.dupinfo(info);
}

int ofi_dl_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context)
{
    return ofi_dl_open() ? -FI_ENOSYS : fab.fabric(attr, fabric, context);
}

const char *ofi_dl_strerror(int errnum)
{
    return fab.state == 1 ? fab.strerror(errnum) : "libfabric is not open";
}
