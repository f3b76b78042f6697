/* A report file written as it goes and named only once complete (SPEC
 * §3: a reader sees the old file or the whole new one). The file is
 * created beside its final path, unnamed where the file system allows
 * (O_TMPFILE: a process killed on the way leaves nothing behind), else
 * under a new random name (safe_file.h); committing gives it such a name
 * if it had none, then renames it over the final path.
 *
 * The descriptor is kept high and remembers its file (fd_guard.h), which a
 * mapping keeps alive (so its inode number is not reused): once
 * the program has closed it or reused its number, the file is never
 * linked, closed or renamed through it (the write side, gt_outbuf, stops
 * too). */
#ifndef GT_STREAM_FILE_H
#define GT_STREAM_FILE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "fd_guard.h"

/* What a commit's reason says when the descriptor is no longer the file. */
#define GT_STREAM_FILE_TAKEN "the program closed its descriptor or put a file of its own on it"

typedef struct gt_stream_file {
    int fd;         /* -1 when closed */
    bool anonymous; /* opened with O_TMPFILE: no name yet */
    gt_fd_identity file;
    void *pin; /* a page of the file mapped: keeps its inode this file's */
    char tmp[PATH_MAX]; /* its name while named and not committed; "" when none */
} gt_stream_file;

/* Opens the temporary file for the final path `path`: 0, or -1 with a
 * one-line reason ("<path>: <why>") in err. errno is kept. */
int gt_stream_file_open(gt_stream_file *f, const char *path, char *err, size_t errcap);

/* Closes the file and puts it at `path` (which may differ from the one
 * it was opened for, in the same file system): 0, or -1 with a reason,
 * the temporary file then removed. errno is kept. */
int gt_stream_file_commit(gt_stream_file *f, const char *path, char *err, size_t errcap);

/* Closes and removes the temporary file. */
void gt_stream_file_discard(gt_stream_file *f);

/* Closes this process's descriptor of the file and leaves the file alone
 * (a forked child, whose parent goes on writing it). */
void gt_stream_file_forget(gt_stream_file *f);

#endif
