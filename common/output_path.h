/* Report files (SPEC §3): file names from the GPUTRACE_OUTPUT template,
 * and writing a file so that a reader sees either the old file or the
 * complete new one. */
#ifndef GT_OUTPUT_PATH_H
#define GT_OUTPUT_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

enum gt_output_format {
    GT_OUTPUT_TEXT,
    GT_OUTPUT_JSON,
    GT_OUTPUT_CSV,
    GT_OUTPUT_CHROME,
    GT_OUTPUT_PERFETTO,
    GT_OUTPUT_FORMAT_COUNT
};

/* "text", "json", "csv", "chrome", "perfetto" (the GPUTRACE_FORMAT words). */
const char *gt_output_format_name(enum gt_output_format f);
/* ".txt", ".json", ".csv", ".trace.json", ".pftrace". */
const char *gt_output_extension(enum gt_output_format f);

/* Expands a path template into out: %p the pid, %h the host name, %q{VAR}
 * get(VAR) (empty when get is NULL or returns NULL), %% a percent sign. A
 * trailing %, an unknown %x and a %q without a well-formed {VAR} (non-empty,
 * closed on the same template) are kept as written. The host name and the
 * variables' values are names, never ways elsewhere: each '/' and control
 * byte in them becomes '_', and so does a leading '.' (no ".." comes of
 * them). Returns 0, or -1 when the result does not fit in cap or in
 * PATH_MAX (out is then empty: a path is never truncated). */
int gt_output_expand(const char *tmpl, int pid, const char *host, const char *(*get)(const char *),
                     char *out, size_t cap);

/* The same with %n (SPEC §12) expanded to number (0: kept as written, as
 * gt_output_expand keeps it); whether tmpl has a %n at all. */
int gt_output_expand_numbered(const char *tmpl, int pid, const char *host,
                              const char *(*get)(const char *), unsigned number, char *out,
                              size_t cap);
bool gt_output_numbered(const char *tmpl);

/* The template with each well-formed %q{VAR} replaced by get(VAR), made
 * safe as gt_output_expand makes it and with its '%' doubled, everything
 * else kept as written: a template again, which expands to what tmpl
 * would with these values (the library takes them once, at load). 0, or
 * -1 as gt_output_expand. */
int gt_output_expand_vars(const char *tmpl, const char *(*get)(const char *), char *out,
                          size_t cap);

/* Whether the template expands (as gt_output_expand does) to a relative
 * path; false too when it does not fit in PATH_MAX. */
bool gt_output_relative(const char *tmpl, int pid, const char *host,
                        const char *(*get)(const char *));

/* out = the template made absolute against the directory dir (absolute
 * itself): dir with each % doubled (so that it stays itself through the
 * expansion), a slash, then tmpl. 0, or -1 when it does not fit in cap or
 * PATH_MAX (out is then empty). */
int gt_output_anchor(const char *tmpl, const char *dir, char *out, size_t cap);

/* out = base + the format's extension; 0, or -1 when too long for cap or
 * PATH_MAX (out is then empty). */
int gt_output_file_name(const char *base, enum gt_output_format f, char *out, size_t cap);

/* Writes the file through write_fn (which returns 0, or -1 on failure)
 * into a new temporary file beside it, then renames it over path
 * (safe_file.h: a planted link is never followed), with GT_FILE_MODE. On
 * any failure the temporary file is removed, err gets a one-line reason
 * ("<path>: <why>") and -1 is returned. errno is left as it was. */
int gt_output_write(const char *path, int (*write_fn)(FILE *out, void *arg), void *arg, char *err,
                    size_t errcap);

/* The same with path relative to the directory dirfd (AT_FDCWD: the
 * working directory) and the file created with mode. */
int gt_output_write_at(int dirfd, const char *path, mode_t mode,
                       int (*write_fn)(FILE *out, void *arg), void *arg, char *err, size_t errcap);

#endif
