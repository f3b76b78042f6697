/* The gputrace command (SPEC §9): options become the GPUTRACE_*
 * variables (gputrace.c), then the program runs as a child with the shim
 * preloaded (run.c). */
#ifndef GT_CLI_H
#define GT_CLI_H

#define GT_CLI_USAGE_ERROR 2 /* bad option, bad value, no program, no library */

/* Prints "gputrace: <message>\n" on stderr. */
void gt_cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The absolute path of libgputrace.so: next to this executable, else in
 * ../lib from it. NULL (after an error line) when it is in neither. */
char *gt_cli_find_library(void);

/* LD_PRELOAD with lib in front (once), NVTX_INJECTION64_PATH = lib unless
 * no_nvtx or already set. -1 (after an error line) when lib cannot be
 * preloaded. */
int gt_cli_set_preload(const char *lib, int no_nvtx);

/* 0 when program can be run (found through PATH when it has no slash, a
 * regular file, executable); else -1 after an error line. */
int gt_cli_check_program(const char *program);

/* Runs argv as a child, forwarding SIGINT, SIGTERM, SIGHUP and SIGQUIT
 * sent to gputrace itself, and returns its exit status, 128 + the signal
 * when a signal ended it, or GT_CLI_USAGE_ERROR when it could not be
 * started. */
int gt_cli_run(char *const argv[]);

#endif
