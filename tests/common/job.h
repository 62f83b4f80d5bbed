/*
 * tests/common/job.h — run a program under the built hintrun from a Criterion test and capture
 * what it printed and how it ended.
 */
#ifndef HINT_TEST_JOB_H
#define HINT_TEST_JOB_H

#include <stddef.h>

struct job_result {
    int status;        /* hintrun's exit status, or 128 + signal */
    double seconds;    /* wall time of the whole job */
    double ended;      /* CLOCK_MONOTONIC when hintrun was reaped (hint_wtime's clock) */
    char *output;      /* stdout and stderr together, NUL-terminated (free it) */
};

/* Path of a file in the build tree (HINT_TEST_BUILD_ROOT / rel); static buffer per call slot. */
const char *job_build_path(const char *rel);
/* hintrun [opts...] -n np prog args...; argv ends with NULL. env: extra NAME=VALUE or NULL. */
int job_run(const char *const hintrun_opts[], int np, const char *const argv[], const char *const env[],
            struct job_result *out);
/* Objects in /dev/shm of the job whose id a rank printed as "jobid=<16 hex>" in out->output
   (leak check); -1 when the output names no job id. */
int job_shm_left(const struct job_result *out);

#endif
