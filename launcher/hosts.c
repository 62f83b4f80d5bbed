/* launcher/hosts.c — --host A[:SLOTS],B[:SLOTS] and --hostfile FILE: the hosts of a job and the
   ranks dealt to each. Ranks go to the hosts in list order as blocks of consecutive world ranks
   (host k gets up to its slots), because the runtime's node map (runtime/nodes.c) takes each
   node to be one such block. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/launch.h"

static int hosts_error(const char *where, const char *fmt, const char *what)
{
    fprintf(stderr, "hintrun: %s: ", where);
    fprintf(stderr, fmt, what);
    fprintf(stderr, "\nTry 'hintrun --help' for more information.\n");
    return 2;
}

static int hosts_parse_slots(const char *where, const char *s, int *slots)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 1 || v > LAUNCH_MAX_RANKS)
        return hosts_error(where, "slots must be an integer from 1 to 4096, not '%s'", s);
    *slots = (int)v;
    return 0;
}

/* A host name: no blanks, no ':' or ',' (those separate), nothing a shell would expand. */
static int hosts_name_ok(const char *name, size_t n)
{
    if (n == 0 || n > 255)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!(name[i] == '.' || name[i] == '-' || name[i] == '_' || (name[i] >= '0' && name[i] <= '9') ||
              (name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z')))
            return 0;
    return 1;
}

static int hosts_add(struct launch_opts *o, const char *where, const char *name, size_t n, int slots)
{
    if (!hosts_name_ok(name, n)) {
        char shown[300];
        snprintf(shown, sizeof shown, "%.*s", (int)(n < 256 ? n : 256), name);
        return hosts_error(where, "'%s' is not a host name (letters, digits, '.', '-', '_')", shown);
    }
    if (o->nhosts >= LAUNCH_MAX_RANKS)
        return hosts_error(where, "more than %s hosts", "4096");
    struct launch_host *h = realloc(o->hosts, ((size_t)o->nhosts + 1) * sizeof *h);
    char *copy = strndup(name, n);
    if (h)
        o->hosts = h;
    if (!h || !copy) {
        free(copy);
        fprintf(stderr, "hintrun: out of memory\n");
        return 1;
    }
    o->hosts[o->nhosts++] = (struct launch_host){.name = copy, .slots = slots};
    return 0;
}

/* "name" or "name:slots" (n bytes of item) */
static int hosts_add_item(struct launch_opts *o, const char *where, const char *item, size_t n)
{
    char buf[300];
    if (n >= sizeof buf)
        return hosts_error(where, "'%s...' is too long for a host", "");
    memcpy(buf, item, n);
    buf[n] = '\0';
    int slots = 1;
    char *colon = strchr(buf, ':');
    if (colon) {
        *colon = '\0';
        if (hosts_parse_slots(where, colon + 1, &slots))
            return 2;
    }
    return hosts_add(o, where, buf, strlen(buf), slots);
}

int launch_add_hosts(struct launch_opts *o, const char *list)
{
    if (!*list)
        return hosts_error("--host", "%sneeds at least one host", "");
    for (const char *p = list;;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        if (n == 0)
            return hosts_error("--host", "empty host in '%s'", list);
        int rc = hosts_add_item(o, "--host", p, n);
        if (rc)
            return rc;
        if (!comma)
            return 0;
        p = comma + 1;
    }
}

/* One line of a hostfile, comments and blanks already gone: "host", "host:N" or "host slots=N". */
static int hosts_file_line(struct launch_opts *o, const char *where, char *line)
{
    char *sp = line + strcspn(line, " \t");
    if (!*sp)
        return hosts_add_item(o, where, line, strlen(line));
    *sp++ = '\0';
    sp += strspn(sp, " \t");
    if (strchr(line, ':'))
        return hosts_error(where, "give the slots once: '%s' has both host:N and more", line);
    if (strncmp(sp, "slots=", 6) != 0 || sp[6 + strcspn(sp + 6, " \t")] != '\0')
        return hosts_error(where, "expected 'host', 'host:N' or 'host slots=N', not '... %s'", sp);
    int slots;
    if (hosts_parse_slots(where, sp + 6, &slots))
        return 2;
    return hosts_add(o, where, line, strlen(line), slots);
}

int launch_read_hostfile(struct launch_opts *o, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "hintrun: --hostfile %s: %s\n", path, strerror(errno));
        return 2;
    }
    char line[1024], where[PATH_MAX + 64];
    int lineno = 0, rc = 0, before = o->nhosts;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        snprintf(where, sizeof where, "--hostfile %s line %d", path, lineno);
        line[strcspn(line, "#\r\n")] = '\0';
        char *s = line + strspn(line, " \t");
        size_t n = strlen(s);
        while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
            s[--n] = '\0';
        if (n > 0)
            rc = hosts_file_line(o, where, s);
    }
    fclose(f);
    if (rc == 0 && o->nhosts == before)
        rc = hosts_error("--hostfile", "%s names no host", path);
    return rc;
}

int launch_deal_hosts(struct launch_opts *o)
{
    long slots = 0;
    for (int k = 0; k < o->nhosts; k++)
        slots += o->hosts[k].slots;
    if (o->np == 0)
        o->np = slots > LAUNCH_MAX_RANKS ? LAUNCH_MAX_RANKS : (int)slots;
    if (o->np > slots) {
        fprintf(stderr, "hintrun: -n %d: the %d host%s have %ld slot%s in all; give more slots "
                "(host:N) or fewer ranks\nTry 'hintrun --help' for more information.\n", o->np,
                o->nhosts, o->nhosts == 1 ? "" : "s", slots, slots == 1 ? "" : "s");
        return 2;
    }
    int next = 0, used = 0;
    for (int k = 0; k < o->nhosts; k++) {
        struct launch_host h = o->hosts[k];
        h.first = next;
        h.n = o->np - next < h.slots ? o->np - next : h.slots;
        next += h.n;
        if (h.n > 0)
            o->hosts[used++] = h;
        else
            free(h.name);
    }
    o->nhosts = used;
    return 0;
}

void launch_free_hosts(struct launch_opts *o)
{
    for (int k = 0; k < o->nhosts; k++)
        free(o->hosts[k].name);
    free(o->hosts);
    o->hosts = NULL;
    o->nhosts = 0;
}
