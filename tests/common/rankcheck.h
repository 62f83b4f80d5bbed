/*
 * tests/common/rankcheck.h — assertions for programs that run as ranks under hintrun: a failed
 * check prints the rank and place and exits non-zero, which fails the whole job (and the test).
 */
#ifndef HINT_TEST_RANKCHECK_H
#define HINT_TEST_RANKCHECK_H

#include <stdio.h>
#include <stdlib.h>

#include "hint.h"

extern int rc_rank;

#define RC_FAIL(...)                                                                             \
    do {                                                                                         \
        fprintf(stderr, "rank %d: %s:%d: ", rc_rank, __FILE__, __LINE__);                       \
        fprintf(stderr, __VA_ARGS__);                                                            \
        fprintf(stderr, "\n");                                                                   \
        exit(1);                                                                                 \
    } while (0)

#define RC_CHECK(cond)                                                                           \
    do {                                                                                         \
        if (!(cond))                                                                             \
            RC_FAIL("check failed: %s", #cond);                                                  \
    } while (0)

/* A hint call that must return `want`. */
#define RC_EXPECT(call, want)                                                                    \
    do {                                                                                         \
        int rc_st_ = (call);                                                                     \
        if (rc_st_ != (want))                                                                    \
            RC_FAIL("%s returned %d (%s), expected %d (%s)", #call, rc_st_, hint_strerror(rc_st_),  \
                    (int)(want), hint_strerror(want));                                           \
    } while (0)

#define RC_OK(call) RC_EXPECT(call, HINT_SUCCESS)

#endif
