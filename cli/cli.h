/* The gputrace command (SPEC §9): options become the GPUTRACE_*
 * variables (gputrace.c), then the program runs as a child with the shim
 * preloaded (run.c). */
#ifndef GT_CLI_H
#define GT_CLI_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

#include "config.h"
#include "log.h"

#define GT_CLI_USAGE_ERROR 2 /* bad option, bad value, no program, no library */

/* Prints "gputrace: <message>\n" on stderr. */
void gt_cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A value the user gave, as an error line quotes it: escaped and cut as
 * the library's warnings cut it (gt_escape, GT_SHOWN_VALUE_MAX bytes). */
#define GT_CLI_SHOWN_SIZE (GT_SHOWN_VALUE_MAX * 4 + 8) /* escaped, "..." and the NUL */
const char *gt_cli_shown(char *buf, size_t size, const char *value);

/* The absolute path of libgputrace.so: next to this executable, else in
 * ../lib from it. NULL (after an error line) when it is in neither. */
char *gt_cli_find_library(void);

/* LD_PRELOAD with lib in front (once), after the sanitizer runtime when
 * there is one (runtime: NULL when none); NVTX_INJECTION64_PATH = lib
 * unless no_nvtx or already set. -1 (after an error line) when lib cannot
 * be preloaded. */
int gt_cli_set_preload(const char *lib, const char *runtime, int no_nvtx);

/* The file that running `program` runs (found through PATH when it has no
 * slash), when it is a regular, executable file (free it); else NULL after
 * an error line. */
char *gt_cli_find_program(const char *program);

/* The sanitizer runtime (AddressSanitizer's libasan and the like) that the
 * program at `path` needs as a shared library, as the program's own
 * loader finds it, for the front of LD_PRELOAD (free it); NULL when it
 * needs none. See sanitizer.c. */
char *gt_cli_sanitizer_runtime(const char *path);

/* Runs argv as a child, signals sent to gputrace passed on to it
 * (signal_relay.c), and returns its exit status, 128 + the signal when a
 * signal ended it (gputrace then ends by gt_cli_die_of), or
 * GT_CLI_USAGE_ERROR when it could not be started. *pid and *status get
 * the child's pid (-1: none) and its wait status. */
int gt_cli_run(char *const argv[], pid_t *pid, int *status);

/* signal_relay.c, what gt_cli_run does about signals. Before the fork:
 * handlers that pass signals on, for every signal that can be caught and
 * was not ignored (those go into *set). After it, the program's pid; in
 * the child, before the exec, the default dispositions back and the
 * parent-death signal (-1: the parent is gone already, so is the child).
 * Waiting for the program mirrors the stops gputrace was sent, and once
 * it ended, gives the signals their default actions back; -1 (after an
 * error line) when it cannot wait. */
void gt_cli_relay_install(sigset_t *set);
void gt_cli_relay_to(pid_t pid);
int gt_cli_relay_child(pid_t parent);
int gt_cli_relay_wait(pid_t pid, int *status);

/* Ends gputrace by signal sig, as the program ended, without a core dump
 * of its own; returns only when sig does not end a process. */
void gt_cli_die_of(int sig);

/* snapshot_finish.c: before the run a private directory for what the
 * child leaves the command, with GPUTRACE_INTERVAL the snapshots' summary
 * (named to the child); after it, when the child died of a signal after a
 * snapshot, its files marked final with the signal and its summary
 * printed, then the directory removed. */
void gt_cli_snapshots_begin(const gt_config *cfg);
void gt_cli_snapshots_end(const gt_config *cfg, pid_t pid, int status);
/* The private directory made by gt_cli_snapshots_begin, absolute; "" when
 * none could be made. */
const char *gt_cli_private_dir(void);

/* output_check.c: whether the directory of the report files' template
 * (absolute) can take them, before the program starts; -1, with a message
 * unless quiet, when it cannot. A directory named by %p or %n is checked
 * only when the files are written. */
int gt_cli_check_output_dir(const char *tmpl, int quiet);

/* child_summary.c: in the child before its exec, where the library leaves
 * the summary of this process (it keeps the pid through the exec); after
 * the run, that summary printed on the log, if the child left one. */
void gt_cli_child_summary_name(void);
void gt_cli_child_summary_print(pid_t pid);
/* After the run: one line when no process under the command made a CUDA
 * call (the library marks the private directory at the first), so that a
 * run with nothing to show is not silent; nothing without the directory. */
void gt_cli_say_if_no_cuda(const char *program, pid_t pid);

#endif
