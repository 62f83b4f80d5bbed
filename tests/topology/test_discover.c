/*
 * tests/topology/test_discover.c — hwloc discovery on this machine and on synthetic ones
 * (HWLOC_SYNTHETIC), binding and "where am I". Each Criterion test runs in its own process, so
 * the environment and the binding set here do not leak into other tests.
 */
#include <criterion/criterion.h>
#include <hwloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hint.h"
#include "topology/topology.h"

static int hwloc_count(hwloc_obj_type_t type)
{
    hwloc_topology_t t;
    hwloc_topology_init(&t);
    hwloc_topology_load(t);
    int n = hwloc_get_nbobjs_by_type(t, type);
    hwloc_topology_destroy(t);
    return n;
}

Test(discover, this_machine)
{
    struct topo_hier h;
    int ncores = 0;
    unsetenv("HINT_TOPO_FILE");
    cr_assert_eq(topo_discover(1, &h), HINT_SUCCESS, "%s", topo_last_error());
    cr_assert_eq(topo_ncores(&ncores), HINT_SUCCESS);
    cr_expect_eq(ncores, hwloc_count(HWLOC_OBJ_CORE));
    long long prod = 1;
    for (int l = 0; l < h.nlevels; l++) {
        prod *= h.h[l];
        cr_expect(l == 0 || h.h[l] > 1, "level %d of size 1 kept", l);
    }
    cr_expect_eq(prod, ncores, "product %lld, %d cores", prod, ncores);
    cr_expect_eq(h.size, ncores);
    cr_expect_eq(h.h[0], 1);
    cr_expect(h.kind[0] & TOPO_KIND_NODE);
    cr_expect_eq(h.source, TOPO_SRC_HWLOC);
    /* the node count is prepended */
    cr_assert_eq(topo_discover_hwloc(3, &h), HINT_SUCCESS);
    cr_expect(h.h[0] == 3 && h.size == 3 * ncores);
    cr_expect_eq(topo_discover_hwloc(0, &h), HINT_ERR_ARG);
    topo_release();
}

Test(discover, synthetic_machine)
{
    struct topo_hier h;
    char d[256];
    setenv("HWLOC_SYNTHETIC", "pack:2 numa:2 l3:1 l2:4 core:1 pu:2", 1);
    cr_assert_eq(topo_discover_hwloc(1, &h), HINT_SUCCESS, "%s", topo_last_error());
    cr_assert_eq(h.nlevels, 4, "%s", topo_hier_describe(&h, d, sizeof d));
    cr_expect(h.h[0] == 1 && h.h[1] == 2 && h.h[2] == 2 && h.h[3] == 4);
    cr_expect_str_eq(topo_hier_describe(&h, d, sizeof d), "1 node x 2 package x 2 numa+L3 x 4 L2+core");
    /* the Slurm view of a discovered hierarchy uses its kinds */
    char buf[64];
    cr_expect_eq(topo_slurm_distribution(&h, (int[]){1, 3, 2, 0}, buf, sizeof buf), HINT_SUCCESS);
    cr_expect_str_eq(buf, "block:cyclic");
    cr_expect_eq(topo_slurm_distribution(&h, (int[]){3, 2, 1, 0}, buf, sizeof buf), HINT_SUCCESS);
    cr_expect_str_eq(buf, "block:block");
    cr_expect_eq(topo_slurm_distribution(&h, (int[]){2, 1, 3, 0}, buf, sizeof buf), HINT_ERR_UNSUPPORTED);
    topo_release();
}

Test(discover, synthetic_shared_l3_and_fake_levels)
{
    struct topo_hier h, u;
    setenv("HWLOC_SYNTHETIC", "pack:2 l3:2 core:4 pu:1", 1);
    cr_assert_eq(topo_discover(1, &h), HINT_SUCCESS, "%s", topo_last_error());
    cr_expect(h.nlevels == 4 && h.h[1] == 2 && h.h[2] == 2 && h.h[3] == 4);
    /* a user hierarchy that splits the 4 cores of an L3 into 2 x 2 refines it */
    topo_parse_hierarchy("1,2,2,2,2", &u);
    cr_expect_eq(topo_hier_refines(&u, &h), HINT_SUCCESS, "%s", topo_last_error());
    topo_parse_hierarchy("1,4,4", &u);
    cr_expect_eq(topo_hier_refines(&u, &h), HINT_ERR_TOPOLOGY);
    int ncores;
    cr_assert_eq(topo_ncores(&ncores), HINT_SUCCESS);
    cr_expect_eq(ncores, 16);
    topo_release();
}

/* A real hwloc topology with one core missing (exported to XML and loaded through
   HWLOC_XMLFILE): package 0 keeps 4 cores, package 1 has 3. */
Test(discover, inhomogeneous_machine)
{
    hwloc_topology_t t;
    char path[] = "/tmp/hint-topo-inhomo-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    cr_assert_eq(hwloc_topology_init(&t), 0);
    cr_assert_eq(hwloc_topology_set_synthetic(t, "pack:2 core:4 pu:1"), 0);
    cr_assert_eq(hwloc_topology_load(t), 0);
    hwloc_bitmap_t keep = hwloc_bitmap_dup(hwloc_topology_get_topology_cpuset(t));
    hwloc_bitmap_clr(keep, 7);
    cr_assert_eq(hwloc_topology_restrict(t, keep, 0), 0);
    cr_assert_eq(hwloc_topology_export_xml(t, path, 0), 0);
    hwloc_bitmap_free(keep);
    hwloc_topology_destroy(t);

    struct topo_hier h;
    setenv("HWLOC_XMLFILE", path, 1);
    cr_expect_eq(topo_discover_hwloc(1, &h), HINT_ERR_TOPOLOGY);
    cr_expect(strstr(topo_last_error(), "inhomogeneous machine: package 0 has 4 core(s) but package 1 has 3") != NULL,
              "%s", topo_last_error());
    topo_release();
    unlink(path);
}

Test(binding, bind_and_read_back)
{
    int ncores, core = -2, s = -1, n = -1;
    char pus[64];
    unsetenv("HINT_TOPO_FILE");
    cr_assert_eq(topo_ncores(&ncores), HINT_SUCCESS);
    for (int c = ncores - 1; c >= 0; c--) {
        cr_assert_eq(topo_bind_self(c), HINT_SUCCESS, "%s", topo_last_error());
        cr_assert_eq(topo_read_binding(&core, pus, sizeof pus), HINT_SUCCESS);
        cr_expect_eq(core, c, "bound to %d, read %d (PUs %s)", c, core, pus);
    }
    cr_expect_eq(topo_socket_of_self(&s), HINT_SUCCESS);
    cr_expect_eq(topo_numa_of_self(&n), HINT_SUCCESS);
    cr_expect(s >= 0 && n >= 0);
    struct topo_loc loc;
    cr_assert_eq(topo_self_location(&loc), HINT_SUCCESS);
    cr_expect_eq(loc.core, 0);
    cr_expect_eq(topo_bind_self(ncores), HINT_ERR_TOPOLOGY);
    cr_expect(strstr(topo_last_error(), "this node has") != NULL, "%s", topo_last_error());
    cr_expect_eq(topo_bind_self(-1), HINT_ERR_TOPOLOGY);
    topo_release();
}
