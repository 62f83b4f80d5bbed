/* launcher/outdir.c — --output-filename DIR: each rank's stdout and stderr in files of its own,
   DIR/rank.N/stdout and DIR/rank.N/stderr (written by hintrun through the same line-whole
   streams as the terminal, so --tag-output and --timestamp-output apply to them too). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launcher/launch.h"

int launch_output_flags(const struct launch_opts *o)
{
    return (o->tag_output ? OUTPUT_TAG : 0) | (o->timestamp_output ? OUTPUT_TIMESTAMP : 0);
}

/* mkdir -p: every missing directory of path; 0 or -1 with errno */
static int outdir_make_dirs(const char *path)
{
    char p[PATH_MAX];
    if (snprintf(p, sizeof p, "%s", path) >= (int)sizeof p) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST)
            return -1;
        *s = '/';
    }
    if (mkdir(p, 0755) != 0 && errno != EEXIST)
        return -1;
    struct stat sb;
    if (stat(p, &sb) != 0)
        return -1;
    if (!S_ISDIR(sb.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

static int outdir_open_rank(struct launch_job *job, int rank)
{
    static const char *const names[2] = {"stdout", "stderr"};
    char dir[PATH_MAX], file[PATH_MAX + 16];
    snprintf(dir, sizeof dir, "%s/rank.%d", job->opts->output_dir, job->rank_base + rank);
    if (outdir_make_dirs(dir) != 0) {
        fprintf(stderr, "hintrun: --output-filename: cannot create %s: %s\n", dir, strerror(errno));
        return 1;
    }
    for (int k = 0; k < 2; k++) {
        snprintf(file, sizeof file, "%s/%s", dir, names[k]);
        int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) {
            fprintf(stderr, "hintrun: --output-filename: cannot open %s: %s\n", file, strerror(errno));
            return 1;
        }
        job->ranks[rank].out[k].dest = fd;
        job->ranks[rank].out[k].own_dest = 1;
    }
    return 0;
}

int launch_open_output_files(struct launch_job *job)
{
    if (!job->opts->output_dir)
        return 0;
    for (int r = 0; r < job->np; r++)
        if (outdir_open_rank(job, r))
            return 1;
    return 0;
}
