/*
 * tests/ranks/affinity.c — prints "rank R cpus LIST" with the CPUs this process may run on, read
 * with sched_getaffinity (what hintrun's binding did, seen from the rank).
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return 1;
    char buf[4096];
    int n = 0;
    for (int c = 0; c < CPU_SETSIZE && n < (int)sizeof buf - 8; c++)
        if (CPU_ISSET(c, &set))
            n += snprintf(buf + n, sizeof buf - (size_t)n, "%s%d", n ? "," : "", c);
    printf("rank %s cpus %s\n", getenv("HINT_RANK") ? getenv("HINT_RANK") : "?", buf);
    return 0;
}
