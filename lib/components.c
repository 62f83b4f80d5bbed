/*
 * lib/components.c — what libhint is made of: the transports and the components above the
 * runtime, in the order hint_init starts them (runtime/transport.h). The one file that names
 * them all, so the runtime names none: a new transport adds its ops table to hint_transports[]
 * (before shm if it should win for ranks both reach; shm is first today, so on-node ranks stay
 * on shared memory), a new component its hooks to hint_components[].
 */
#include "collectives/coll.h"
#include "runtime/transport.h"
#include "topology/topology.h"
#include "topology/vtopo.h"
#include "transport/ofi/ofi.h"
#include "transport/shm/shm.h"

const struct rt_transport *const hint_transports[] = {&shm_transport, &ofi_transport, NULL};

static const struct rt_component collectives = {"collectives", coll_setup, coll_fini};
static const struct rt_component topology = {"topology", vtopo_setup, topo_release};

const struct rt_component *const hint_components[] = {&topology, &collectives, NULL};
