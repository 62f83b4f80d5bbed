/*
 * collectives/tune.h — selection beyond the built-in defaults: a JSON tuning file
 * (HINT_TUNING_FILE, written by tools/hint-tune) and online autotuning (HINT_AUTOTUNE=1).
 *
 * The file holds selection rules in the format of the built-in ones (collectives/rules.h):
 * version 2, rules per operation bounded by ranks, ranks per node, nodes and sizes, with an
 * algorithm (or a list, first applicable wins) and a copy mode; version 1 (per rank count, what
 * hint-tune writes) is read too. An unknown operation, algorithm, key or copy mode, or a
 * malformed file, is reported once with the JSON path and the whole file is ignored; a call that
 * no rule of the file covers falls to autotuning or the built-in rules.
 */
#ifndef HINT_COLL_TUNE_H
#define HINT_COLL_TUNE_H

#include <stdbool.h>
#include <stddef.h>

struct coll_args;

/* The algorithm (index in the op's table) and copy mode (-1: default) the tuning file gives for
   these arguments, one its rules name that can run them; false when it says nothing. */
bool tune_lookup(const struct coll_args *a, int *alg, int *copy);
/* Neither a tuning file nor online autotuning can choose for any operation: selection may go
   straight to the defaults (and their memo). tune_state caches the answer: -1 not known yet (or a
   file was loaded or unloaded since), 0 idle, 1 not. */
extern int tune_state;
int tune_state_read(void);
static inline bool tune_idle(void) { return (tune_state < 0 ? tune_state_read() : tune_state) == 0; }
/* Load and check a tuning file; HINT_SUCCESS or HINT_ERR_ARG with the problem in msg. */
int tune_load_file(const char *path, char *msg, size_t len);
void tune_unload(void);

/* Online autotuning: the candidate to run for this call (index), or -1 when not tuning this op.
   After the call, tune_record() with the call's duration. The pick is agreed by all ranks. */
int autotune_pick(struct coll_args *a);
void autotune_record(struct coll_args *a, int alg, double seconds);

#endif
