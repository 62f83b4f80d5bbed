/*
 * tests/launcher/lt_util.h — running hintrun from a test: spawn it, capture its output, time
 * it, and check what it left behind (processes, shm objects, the store's socket).
 */
#ifndef HINT_TESTS_LAUNCHER_LT_UTIL_H
#define HINT_TESTS_LAUNCHER_LT_UTIL_H

#include <stddef.h>
#include <sys/types.h>

struct lt_run {
    int status;        /* exit code, 128+signal if hintrun itself was killed, -1 on failure */
    pid_t pid;         /* hintrun's pid */
    char *out, *err;   /* captured stdout and stderr, NUL-terminated */
    double t_start, t_end; /* CLOCK_MONOTONIC around the run (t_end: hintrun reaped) */
};

struct lt_signal {
    const char *marker;  /* once stdout holds this many times ... */
    int count;
    int sig;             /* ... send this signal to hintrun */
    /* then, if set, call this with hintrun's pid and the output so far */
    void (*then)(pid_t hintrun, const char *out);
};

/* Path of build/launcher/hintrun and build/tests/launcher/lt_rank (static buffers). */
const char *lt_hintrun(void);
const char *lt_rank(void);
/* Runs hintrun with args (NULL-terminated, without argv[0]); extra_env entries "NAME=VALUE"
   are added to the environment (NULL for none). Kills it after 60 s. */
int lt_run(struct lt_run *r, const char *const args[], const char *const extra_env[],
           const struct lt_signal *sig);
/* lt_run with input as hintrun's stdin (a memfd). */
int lt_run_input(struct lt_run *r, const char *const args[], const char *input);
void lt_run_free(struct lt_run *r);

double lt_now(void);
int lt_count(const char *hay, const char *needle);
/* Value after "key " (e.g. "pid 123" -> 123) in the first line of text containing prefix;
   -1 when absent. */
long lt_find_long(const char *text, const char *prefix, const char *key);
/* Copies the word after key in the first line containing prefix; "" when absent. */
void lt_find_word(const char *text, const char *prefix, const char *key, char *out, size_t cap);
/* The state letter of pid in /proc (R, S, T, Z, ...), '?' when it does not exist. */
char lt_pid_state(pid_t pid);
/* 1 while pid exists and is not a zombie; waits up to 2 s for it to go. */
int lt_pid_alive(pid_t pid);
/* Number of /dev/shm entries starting with hint-<uid>-<jobid>. */
int lt_shm_count(const char *jobid);
/* 1 if the store is still there: its abstract socket (HINT_STORE=unix:@NAME) is bound, or the
   directory of its socket file (unix:DIR/store) exists. */
int lt_store_left(const char *store);

#endif
