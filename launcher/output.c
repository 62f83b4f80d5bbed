/* launcher/output.c — line-whole forwarding of rank output (see output.h). */
#include "launcher/output.h"

#include <errno.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A destination that failed (e.g. a closed pipe after `hintrun ... | head`) is dropped so the
   job can still finish; ranks keep running. */
static int output_dest_broken[3];

static void output_write_all(struct output_stream *o, const char *p, size_t n)
{
    int *broken = o->dest <= 2 ? &output_dest_broken[o->dest] : &o->broken;
    while (n > 0 && !*broken) {
        ssize_t w = write(o->dest, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            *broken = 1;
            return;
        }
        p += w;
        n -= (size_t)w;
    }
}

/* The prefix of a line written now: "[2024-05-01 12:34:56.789] " and/or "[rank] ". */
static int output_prefix(const struct output_stream *o, int flags, char *buf, size_t cap)
{
    int len = 0;
    if (flags & OUTPUT_TIMESTAMP) {
        struct timeval tv;
        struct tm tm;
        gettimeofday(&tv, NULL);
        localtime_r(&tv.tv_sec, &tm);
        len += (int)strftime(buf, cap, "[%Y-%m-%d %H:%M:%S", &tm);
        len += snprintf(buf + len, cap - (size_t)len, ".%03d] ", (int)(tv.tv_usec / 1000));
    }
    if (flags & OUTPUT_TAG)
        len += snprintf(buf + len, cap - (size_t)len, "[%d] ", o->rank);
    return len;
}

/* Writes n bytes of o's output (whole lines, or a piece of an over-long line), prefixing each
   line start as flags say. One buffer, one write loop: atomic with respect to every other
   stream hintrun forwards. */
static void output_emit(struct output_stream *o, const char *p, size_t n, int flags)
{
    static const char state[] = "hint: rank ";
    for (size_t i = 0; i < n; i++) /* hintrun waits for these after asking (report.c) */
        if ((i == 0 ? !o->midline : p[i - 1] == '\n') && n - i >= sizeof state - 1 &&
            memcmp(p + i, state, sizeof state - 1) == 0)
            o->state_lines++;
    if (!flags) {
        output_write_all(o, p, n);
        o->midline = n > 0 && p[n - 1] != '\n';
        return;
    }
    char prefix[64];
    int plen = output_prefix(o, flags, prefix, sizeof prefix);
    size_t lines = 1;
    for (size_t i = 0; i < n; i++)
        lines += p[i] == '\n';
    char *out = malloc(n + lines * (size_t)plen);
    if (!out) {
        output_write_all(o, p, n); /* unprefixed beats lost */
        return;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!o->midline) {
            memcpy(out + k, prefix, (size_t)plen);
            k += (size_t)plen;
        }
        out[k++] = p[i];
        o->midline = p[i] != '\n';
    }
    output_write_all(o, out, k);
    free(out);
}

void output_init(struct output_stream *o, int fd, int rank, int dest)
{
    *o = (struct output_stream){.fd = fd, .rank = rank, .dest = dest};
}

/* Writes out every complete line in the buffer, or all of it when it is full of one line. */
static void output_drain_lines(struct output_stream *o, int tag)
{
    size_t end = o->len;
    while (end > 0 && o->buf[end - 1] != '\n')
        end--;
    if (end == 0 && o->len == OUTPUT_LINE_MAX)
        end = o->len;
    if (end == 0)
        return;
    output_emit(o, o->buf, end, tag);
    memmove(o->buf, o->buf + end, o->len - end);
    o->len -= end;
}

static int output_reserve(struct output_stream *o)
{
    if (o->len < o->cap)
        return 1;
    size_t cap = o->cap ? 2 * o->cap : 4096;
    if (cap > OUTPUT_LINE_MAX)
        cap = OUTPUT_LINE_MAX;
    if (cap <= o->len)
        return 0;
    char *b = realloc(o->buf, cap);
    if (!b)
        return 0;
    o->buf = b;
    o->cap = cap;
    return 1;
}

void output_close(struct output_stream *o, int tag)
{
    if (o->fd < 0)
        return;
    if (o->len > 0) {
        output_emit(o, o->buf, o->len, tag);
        /* a prefixed stream must not leave a line open for the next rank to continue */
        if (tag && o->midline)
            output_emit(o, "\n", 1, tag);
    }
    close(o->fd);
    free(o->buf);
    int dest = o->dest, own = o->own_dest;
    output_init(o, -1, o->rank, dest);
    o->own_dest = own;
}

void output_pump(struct output_stream *o, int tag)
{
    /* a bounded amount per call so one chatty rank cannot starve the store or the others */
    for (size_t budget = 4 * OUTPUT_LINE_MAX; o->fd >= 0 && budget > 0;) {
        if (!output_reserve(o)) {
            output_drain_lines(o, tag);
            if (!output_reserve(o))
                return;
        }
        ssize_t r = read(o->fd, o->buf + o->len, o->cap - o->len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (r <= 0) {
            output_close(o, tag);
            return;
        }
        o->len += (size_t)r;
        budget -= (size_t)r < budget ? (size_t)r : budget;
    }
    if (o->fd >= 0)
        output_drain_lines(o, tag);
}
