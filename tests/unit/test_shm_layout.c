/*
 * tests/unit/test_shm_layout.c — the node segment's size promise (docs/RUNTIME.md): under
 * 64 MiB up to P = 64, payload cells between 256 B and 32 KiB, and what it is for a few P,
 * with the collectives' node area laid out as hint_init asks for it.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "collectives/coll_shm.h"
#include "runtime/transport.h"
#include "transport/shm/segment.h"

/* The areas hint_init asks for: the collectives' slots (the heap's 64 bytes aside). Each test
   runs in its own process, so each registers them once. */
static void with_areas(void)
{
    static int id = -1;
    if (id < 0)
        id = rt_node_area_add("collectives", coll_shm_bytes);
    cr_assert_geq(id, 0);
}

Test(shm_layout, size_bound_up_to_64_ranks)
{
    with_areas();
    for (int p = 1; p <= 64; p++) {
        uint32_t payload;
        size_t size = shm_segment_size(p, &payload);
        cr_expect_lt(size, (size_t)64 << 20, "P=%d needs %zu bytes", p, size);
        cr_expect(payload >= 256 && payload <= 32768 && (payload & (payload - 1)) == 0, "P=%d payload %u", p,
                  payload);
    }
}

Test(shm_layout, payload_shrinks_with_p)
{
    with_areas();
    uint32_t a, b, c;
    shm_segment_size(2, &a);
    shm_segment_size(16, &b);
    shm_segment_size(64, &c);
    cr_expect_eq(a, 32768);
    cr_expect_eq(b, 16384);
    cr_expect_eq(c, 1024);
    /* print the table the docs quote */
    for (int p = 2; p <= 128; p *= 2) {
        uint32_t pl;
        size_t s = shm_segment_size(p, &pl);
        cr_log_info("P=%3d payload %5u B segment %6.2f MiB", p, pl, (double)s / (1 << 20));
    }
}

Test(shm_layout, budget_variable_changes_cell_size)
{
    with_areas();
    setenv("HINT_SHM_BUDGET", "4194304", 1);
    uint32_t p;
    shm_segment_size(8, &p);
    unsetenv("HINT_SHM_BUDGET");
    /* 4 MiB over 8x8 pairs of 8 cells: 8 KiB a cell with its 64-byte header, so 4 KiB payload */
    cr_expect_eq(p, 4096, "4 MiB over 8x8 pairs of 8 cells gives %u", p);
}
