/*
 * runtime/shmfile.c — unnamed shared-memory objects handed over through /proc (runtime/shmfile.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime/runtime.h"
#include "runtime/shmfile.h"

int shmfile_create(const char *what, int *fd)
{
    *fd = open("/dev/shm", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    /* a /dev/shm without O_TMPFILE (EOPNOTSUPP; EISDIR on kernels before 3.11) or none at all:
       a memfd is just as unnamed, only outside /dev/shm's size limit */
    if (*fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == ENOENT))
        *fd = memfd_create("hint", MFD_CLOEXEC);
    if (*fd >= 0)
        return HINT_SUCCESS;
    RT_ERR("shm", "creating the %s in /dev/shm failed: %s", what, strerror(errno));
    return rt_from_errno(errno);
}

int shmfile_open(const char *what, struct shmfile_handle h, int *fd)
{
    if (h.pid <= 0 || h.fd < 0) {
        RT_ERR("shm", "the %s does not exist: local rank 0 could not create it (its message says why)",
               what);
        return HINT_ERR_TRANSPORT;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)h.pid, (int)h.fd);
    *fd = open(path, O_RDWR | O_CLOEXEC);
    if (*fd >= 0)
        return HINT_SUCCESS;
    RT_ERR("shm", "opening the %s of local rank 0 through %s failed: %s; the ranks of a node share "
           "their memory through /proc, so they must run as one user in one PID namespace (and the "
           "program must not make itself non-dumpable)", what, path, strerror(errno));
    return HINT_ERR_TRANSPORT;
}
