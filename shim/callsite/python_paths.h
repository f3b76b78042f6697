/* Whose Python code a file holds (python_paths.c): the user's, or a
 * library's that a call site passes over. Pure string work on the file
 * name a code object carries, so that the walker decides without calling
 * into Python. */
#ifndef GT_PYTHON_PATHS_H
#define GT_PYTHON_PATHS_H

#include <stddef.h>

/* Whether frames of `path` (len bytes) are passed over: the standard
 * library, code frozen into the interpreter, and the installed packages
 * of the Python CUDA stack; `extra` (a comma list of dotted package names,
 * GPUTRACE_CALLSITES_SKIP; may be NULL) adds packages, which match
 * wherever they are. When it is, and `package` is not NULL, the package's
 * name (or, for the standard library, "") goes into package (cut to fit
 * cap). */
int gt_python_path_skipped(const char *path, size_t len, const char *extra, char *package,
                           size_t cap);

#endif
