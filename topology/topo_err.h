/*
 * topology/topo_err.h — for topology/ sources only: record the message that
 * topo_last_error() returns. Set at the origin of an error, with the numbers in it.
 */
#ifndef HINT_TOPOLOGY_TOPO_ERR_H
#define HINT_TOPOLOGY_TOPO_ERR_H

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
/* Set this thread's message (printf-like) and return st, so an error reads
   `return topo_err(HINT_ERR_TOPOLOGY, "…", …);`. */
int topo_err(int st, const char *fmt, ...);

#endif
