/* hint-cacheline: the floor under every small-message number, the round trip of one cache line
 * between two cores. Two threads, each bound to its core, pass a counter back and forth in one
 * 64-byte line: each waits (spinning) until the line holds its turn and writes the next value, so
 * every step is one transfer of the line and a round trip is two. Nothing of hint is used: this is
 * what the hardware allows, the number the 8-byte latency and barrier are measured against
 * (docs/BENCHMARKS.md). bench/compare runs it and prints the result beside its tables.
 *
 * usage: hint-cacheline [--cores A,B] [--trips N] [--rounds R] [--csv] [--help]
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct shared {
    _Alignas(64) _Atomic unsigned long turn; /* the one line that travels */
    char pad[64 - sizeof(unsigned long)];
    _Alignas(64) _Atomic int ready;          /* start line, away from `turn` */
    _Atomic int unbound;                     /* a side could not bind: neither plays */
};

struct side {
    struct shared *s;
    int core;
    unsigned long trips;
    int first;    /* 0: the side that starts each round trip */
    int bound;    /* set by the thread: its affinity call succeeded */
};

static int bind_to(int core)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(core, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

/* Side 0 writes odd values and waits for the even one after it; side 1 the other way round. */
static void *play(void *arg)
{
    struct side *me = arg;
    me->bound = bind_to(me->core);
    if (!me->bound)
        atomic_store(&me->s->unbound, 1);
    atomic_fetch_add(&me->s->ready, 1);
    while (atomic_load(&me->s->ready) < 2)
        ;
    /* Unbound, both threads may share one core, where each hand-off waits for a preemption
       (milliseconds): the round would take minutes to measure nothing. */
    if (atomic_load(&me->s->unbound))
        return NULL;
    unsigned long v = (unsigned long)me->first;
    for (unsigned long i = 0; i < me->trips; i++) {
        while (atomic_load_explicit(&me->s->turn, memory_order_acquire) != v)
            ;
        atomic_store_explicit(&me->s->turn, v + 1, memory_order_release);
        v += 2;
    }
    return NULL;
}

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

/* One timed round: `trips` round trips, ns per round trip; -1 when a thread cannot start or
   either side could not be bound to its core. */
static double one_round(int a, int b, unsigned long trips)
{
    static struct shared s;
    atomic_store(&s.turn, 0);
    atomic_store(&s.ready, 0);
    atomic_store(&s.unbound, 0);
    struct side sa = {&s, a, trips, 0, 0}, sb = {&s, b, trips, 1, 0};
    pthread_t ta, tb;
    double t0 = now_ns();
    if (pthread_create(&ta, NULL, play, &sa) != 0)
        return -1;
    if (pthread_create(&tb, NULL, play, &sb) != 0) {
        /* the first thread waits for a partner that will not come: end the process */
        fprintf(stderr, "hint-cacheline: cannot start a second thread\n");
        exit(1);
    }
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    double t1 = now_ns();
    if (!sa.bound || !sb.bound)
        return -1;
    return (t1 - t0) / (double)trips;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: hint-cacheline [--cores A,B] [--trips N] [--rounds R] [--csv]\n"
               "  One cache line's round trip between cores A and B (default 0,1), two threads each\n"
               "  bound to its core passing a counter: the median of R rounds (default 9) of N round\n"
               "  trips each (default 200000), in ns. --csv: one line 'cacheline,A,B,median_ns,min_ns,max_ns'.\n");
}

int main(int argc, char **argv)
{
    int a = 0, b = 1, rounds = 9, csv = 0;
    unsigned long trips = 200000;
    for (int i = 1; i < argc; i++) {
        char *end = NULL;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--cores") && i + 1 < argc) {
            if (sscanf(argv[++i], "%d,%d", &a, &b) != 2 || a < 0 || b < 0 || a == b || a >= CPU_SETSIZE ||
                b >= CPU_SETSIZE) {
                fprintf(stderr, "hint-cacheline: --cores wants two different core numbers A,B, got '%s'\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(argv[i], "--trips") && i + 1 < argc) {
            errno = 0;
            trips = strtoul(argv[++i], &end, 10);
            if (errno || *end || trips == 0 || trips > 1000000000ul) {
                fprintf(stderr, "hint-cacheline: --trips wants 1 to 1e9, got '%s'\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
            rounds = (int)strtol(argv[++i], &end, 10);
            if (*end || rounds < 1 || rounds > 1000) {
                fprintf(stderr, "hint-cacheline: --rounds wants 1 to 1000, got '%s'\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(argv[i], "--csv")) {
            csv = 1;
        } else {
            fprintf(stderr, "hint-cacheline: unknown argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    double *ns = malloc((size_t)rounds * sizeof *ns);
    if (ns == NULL)
        return 1;
    for (int r = 0; r < rounds; r++) {
        ns[r] = one_round(a, b, trips);
        if (ns[r] < 0) {
            fprintf(stderr, "hint-cacheline: cannot run a thread on each of cores %d and %d (are both in this "
                            "process's affinity mask?)\n", a, b);
            free(ns);
            return 1;
        }
    }
    qsort(ns, (size_t)rounds, sizeof *ns, cmp_double);
    double med = rounds % 2 ? ns[rounds / 2] : (ns[rounds / 2 - 1] + ns[rounds / 2]) / 2;
    if (csv)
        printf("cacheline,%d,%d,%.1f,%.1f,%.1f\n", a, b, med, ns[0], ns[rounds - 1]);
    else
        printf("one cache line's round trip, cores %d and %d: %.1f ns median of %d rounds of %lu (min %.1f, max "
               "%.1f)\n", a, b, med, rounds, trips, ns[0], ns[rounds - 1]);
    free(ns);
    return 0;
}
