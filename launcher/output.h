/*
 * launcher/output.h — forwarding of the ranks' stdout and stderr.
 *
 * Each rank stream is a pipe read by hintrun's poll loop. Output is written on whole lines only,
 * each batch in one write loop that finishes before any other stream is looked at, so lines of
 * different ranks never mix mid-line (lines longer than OUTPUT_LINE_MAX are the exception:
 * they go out in pieces). With --timestamp-output every line starts with the time hintrun read
 * it ("[2024-05-01 12:34:56.789] "), then with --tag-output "[rank] ". The destination is
 * hintrun's stdout or stderr, or a file of --output-filename.
 */
#ifndef HINT_LAUNCHER_OUTPUT_H
#define HINT_LAUNCHER_OUTPUT_H

#include <stddef.h>

#define OUTPUT_LINE_MAX 65536

/* what each line starts with */
enum { OUTPUT_TAG = 1, OUTPUT_TIMESTAMP = 2 };

struct output_stream {
    int fd;          /* read end of the rank's pipe; -1 once it reached EOF */
    int rank;
    int dest;        /* 1 (stdout) or 2 (stderr) of hintrun, or a file (--output-filename) */
    int own_dest;    /* dest is a file this stream opened and closes */
    int broken;      /* writing to a file dest failed: its output is dropped */
    char *buf;       /* bytes of the current, unfinished line */
    size_t len, cap;
    int midline;     /* part of the current line is out already (line over OUTPUT_LINE_MAX) */
    unsigned long state_lines; /* lines forwarded that start "hint: rank " (runtime/trace.c) */
};

void output_init(struct output_stream *o, int fd, int rank, int dest);
/* Reads what the pipe has (without blocking) and writes out the complete lines; at EOF writes
   the unfinished last line too and closes the pipe. */
void output_pump(struct output_stream *o, int flags);
/* Closes the pipe without reading further, writing out what is buffered (and the file of
   --output-filename). */
void output_close(struct output_stream *o, int flags);

#endif
