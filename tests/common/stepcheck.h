/*
 * tests/common/stepcheck.h — assertions for rank programs that say which step they are on: a
 * failed check prints the rank, the group size, the place and the step, then exits non-zero,
 * which fails the whole job. Before including it, a program defines T_RANK and T_SIZE (its rank
 * and world size) and T_WHERE (a char array naming the step, written with AT(...)).
 * tests/common/rankcheck.h is the same without the step.
 */
#ifndef HINT_TEST_STEPCHECK_H
#define HINT_TEST_STEPCHECK_H

#include <stdio.h>
#include <stdlib.h>

#include "hint.h"

#define T_FAIL(...)                                                                              \
    do {                                                                                         \
        fprintf(stderr, "rank %d of %d: %s:%d: [%s] ", T_RANK, T_SIZE, __FILE__, __LINE__,      \
                T_WHERE);                                                                        \
        fprintf(stderr, __VA_ARGS__);                                                            \
        fprintf(stderr, "\n");                                                                   \
        exit(1);                                                                                 \
    } while (0)

#define T_CHECK(cond)                                                                            \
    do {                                                                                         \
        if (!(cond))                                                                             \
            T_FAIL("check failed: %s", #cond);                                                   \
    } while (0)

/* A hint call that must return `want`. */
#define T_EXPECT(call, want)                                                                     \
    do {                                                                                         \
        int t_st_ = (call);                                                                      \
        if (t_st_ != (want))                                                                     \
            T_FAIL("%s returned %d (%s), expected %d (%s)", #call, t_st_, hint_strerror(t_st_),  \
                   (int)(want), hint_strerror(want));                                            \
    } while (0)

#define T_OK(call) T_EXPECT(call, HINT_SUCCESS)

/* Names the step that follows, for every failure message until the next AT. */
#define AT(...) snprintf(T_WHERE, sizeof T_WHERE, __VA_ARGS__)

#endif
