/* GPUTRACE_LOG: where warnings, debug lines and the summary go. Every
 * function keeps errno and never fails the program. */
#ifndef GT_LOG_H
#define GT_LOG_H

#include <stddef.h>

#include "settings.h"

enum gt_log_dest { GT_LOG_STDERR, GT_LOG_STDOUT, GT_LOG_FILE };

void gt_log_init(enum gt_log_dest dest, const char *path, enum gt_verbosity v);

/* Writes bytes as they are (one write(2) per call where the kernel allows;
 * a file destination is opened for each call, see log.c). */
void gt_log_write(const char *buf, size_t len);

/* The columns of the terminal the log goes to (terminal_width.h): COLUMNS
 * as the environment had it at gt_log_init, else the window of stdout or
 * stderr while it is still the process's stream and a terminal; 0 for a
 * log file (a file is as wide as a file written directly) or when nothing
 * says. */
unsigned gt_log_columns(void);

/* "gputrace: warning: ...\n" unless the verbosity is none. */
void gt_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "gputrace: debug: ...\n" at debug verbosity only. */
void gt_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int gt_log_debug_enabled(void);

/* Copies at most `max_src` bytes of s[0..len) into out (always terminated)
 * so that any bytes are safe on a terminal: printable ASCII and well-formed
 * UTF-8 pass, \ and ' are escaped, everything else becomes \xNN; "..." is
 * appended when s was cut. Returns the length written. */
size_t gt_escape(char *out, size_t out_size, const char *s, size_t len, size_t max_src);

#endif
