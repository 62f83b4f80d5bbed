/* bench/netns/tcp_congestion.c — an LD_PRELOAD shim for side_by_side.sh --congestion NAME: every
 * TCP socket a process makes gets the congestion control named by NETNS_TCP_CONGESTION (e.g.
 * cubic), so fi_pingpong, hint, MPICH and Open MPI are compared under the same one. Network
 * namespaces cannot change net.ipv4.tcp_congestion_control here (EPERM), and this machine's
 * default, bbr, lands some connections in a paced state that costs 3-4x at 256 KiB-1 MiB for
 * whichever tool it hits (docs/BENCHMARKS.md). Built by side_by_side.sh when asked for; nothing of
 * hint links it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

int socket(int domain, int type, int protocol)
{
    static int (*real_socket)(int, int, int);
    if (real_socket == NULL)
        real_socket = (int (*)(int, int, int))dlsym(RTLD_NEXT, "socket");
    int fd = real_socket(domain, type, protocol);
    const char *cc = getenv("NETNS_TCP_CONGESTION");
    if (fd >= 0 && cc != NULL && *cc != '\0' && (domain == AF_INET || domain == AF_INET6) &&
        (type & 0xf) == SOCK_STREAM &&
        setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, (socklen_t)strlen(cc)) != 0)
        perror("tcp_congestion shim: TCP_CONGESTION");
    return fd;
}
