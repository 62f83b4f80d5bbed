/*
 * runtime/shmfile.h — the node's shared-memory objects (the node segment, the shared heap) as
 * unnamed files: nothing a crash could leave behind in /dev/shm, under any launcher.
 *
 * Local rank 0 creates the object with O_TMPFILE in /dev/shm: it has no name (so no crash, not
 * even SIGKILL of every process of the job at any point of hint_init, leaves anything), yet it
 * still counts against /dev/shm's size, so a full or small /dev/shm is reported as before. The
 * other ranks of the node open it through /proc/<pid>/fd/<fd> of the creator, which keeps that
 * descriptor open until they have (the object then lives exactly as long as some rank maps or
 * holds it). That open needs what the ranks of a node have anyway: the same user, one PID
 * namespace, a dumpable creator. Where the kernel's /dev/shm has no O_TMPFILE, a memfd is used.
 */
#ifndef HINT_RUNTIME_SHMFILE_H
#define HINT_RUNTIME_SHMFILE_H

#include <stdint.h>

/* Where another rank of the node finds an object: the creator's pid and descriptor. pid 0 says
   that the creator could not make it (its own message says why). */
struct shmfile_handle {
    int32_t pid;
    int32_t fd;
};

/* A new unnamed, empty object for `what` (for messages: "node segment", "shared heap"); close-
   on-exec. HINT_SUCCESS with *fd, or an error code with a message. */
int shmfile_create(const char *what, int *fd);
/* The creator's object, opened read-write; HINT_ERR_TRANSPORT with a message when it cannot be. */
int shmfile_open(const char *what, struct shmfile_handle h, int *fd);

#endif
