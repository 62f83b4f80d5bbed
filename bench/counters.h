/*
 * bench/counters.h — hint-bench --papi: hardware event counters around the timed calls, through
 * PAPI. Built with PAPI only into hint-bench itself (bench/meson.build defines HINT_BENCH_PAPI);
 * the MPI peers get the same interface, which reports the counters as not available.
 */
#ifndef HINT_BENCH_COUNTERS_H
#define HINT_BENCH_COUNTERS_H

#include <stddef.h>

enum { BC_MAX_EVENTS = 8, BC_NAME_LEN = 64, BC_WHY_LEN = 256 };

/* What bc_open found: counting, a name PAPI does not know (an error of the command line), or
   counters this machine cannot provide (not an error: the benchmark runs without them). */
enum bc_status { BC_COUNTING = 0, BC_UNAVAILABLE = 1, BC_BAD_NAME = 2 };

struct bc_set {
    int n;
    char names[BC_MAX_EVENTS][BC_NAME_LEN];
    long long totals[BC_MAX_EVENTS]; /* summed over every bc_begin/bc_end pair since bc_zero */
    int eventset;
    int started;
};

/* Split "A,B,..." into c->names; -1 with a message in why when the list is empty or too long. */
int bc_parse(const char *list, struct bc_set *c, char why[BC_WHY_LEN]);
/* Start counting c's events; why says what is wrong unless BC_COUNTING. */
enum bc_status bc_open(struct bc_set *c, char why[BC_WHY_LEN]);
void bc_zero(struct bc_set *c);
/* Count from bc_begin to bc_end (around the timed calls only), adding to c->totals. */
void bc_begin(struct bc_set *c);
void bc_end(struct bc_set *c);
void bc_close(struct bc_set *c);

#endif
