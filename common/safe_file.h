/* Files the library and the command create or write, by one set of rules
 * (docs/security.md), so that nobody else on the machine can redirect them:
 *
 * - A file is written under a new name beside its final one, created with
 *   O_CREAT | O_EXCL | O_NOFOLLOW: a name that exists (a symbolic link
 *   planted there among them) is never opened, another random name is
 *   tried. It is then renamed over the final name, which replaces whatever
 *   is there (a link too) and never writes through it.
 * - Modes: GT_FILE_MODE for what the user asked for (reports, traces, the
 *   log), GT_FILE_PRIVATE_MODE for the command's own files; the umask
 *   applies to both.
 * - The log, appended to by every process of a run, is opened without
 *   following a link, and written only when it is the user's own regular
 *   file with no other hard link, a FIFO of the user's, or a character
 *   device (a terminal, /dev/null).
 * - A private directory (the command's, for its snapshots) is used only
 *   through a descriptor of it taken without following a link and checked
 *   to be the user's own with no access for anyone else. */
#ifndef GT_SAFE_FILE_H
#define GT_SAFE_FILE_H

#include <stddef.h>
#include <sys/types.h>

#define GT_FILE_MODE 0644         /* less the umask: others read at most, never write */
#define GT_FILE_PRIVATE_MODE 0600 /* the owner only */
#define GT_DIR_PRIVATE_MODE 0700

/* Creates a new file beside `path` (relative to the directory dirfd, or
 * to the working directory with AT_FDCWD), named "<path>.<16 random hex
 * digits>.tmp" (written into tmp), opened with access (O_WRONLY or
 * O_RDWR), close-on-exec, with mode. Returns its descriptor, or -1 with
 * errno (ENAMETOOLONG when the name does not fit in cap or PATH_MAX). */
int gt_file_create_temp(int dirfd, const char *path, int access, mode_t mode, char *tmp,
                        size_t cap);

/* A fresh "<path>.<16 random hex digits>.tmp" into tmp; 0, or -1 when it
 * does not fit in cap or PATH_MAX. */
int gt_file_temp_name(const char *path, char *tmp, size_t cap);

/* Opens path for appending (write-only, close-on-exec, non-blocking, no
 * controlling terminal), creating it with GT_FILE_MODE, under the log's
 * rule above. Returns the descriptor, or -1 with errno and *why saying
 * what was refused in words ("a symbolic link, not followed") or the
 * system's reason. */
int gt_file_open_append(const char *path, const char **why);

/* Opens the directory at path for use with the *at() calls, under the
 * private directory's rule above. Returns the descriptor, or -1 with
 * errno and *why as gt_file_open_append. */
int gt_file_open_private_dir(const char *path, const char **why);

#endif
