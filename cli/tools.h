/* The subcommands that work on report files (SPEC §11): report, diff,
 * merge, and what they share: reading option values with the shim's own
 * parser, loading reports with one error line each, writing a report to
 * standard output or to files from a template. */
#ifndef GT_CLI_TOOLS_H
#define GT_CLI_TOOLS_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "report.h"
#include "settings.h"
#include "strtab.h"

#define GT_TOOL_OK 0
#define GT_TOOL_SLOWER 1 /* diff: something got slower than the threshold */
#define GT_TOOL_BAD_INPUT 2
#define GT_TOOL_DIVERGED 3     /* diff: a copy brought back other data (checksums) */
#define GT_TOOL_INCOMPARABLE 4 /* diff: the runs' checksums cannot be compared */

int gt_cli_report(int argc, char **argv);
int gt_cli_diff(int argc, char **argv);
int gt_cli_merge(int argc, char **argv);

/* Parses value as the variable var would be (option names it in the
 * error line); 0 with *cfg holding the result, or -1 after the error. */
int gt_cli_parse_setting(const char *option, enum gt_config_var var, const char *value,
                         gt_config *cfg);

/* -f for the subcommands: a comma list of text, json and csv (the trace
 * formats need events, which a report file does not hold). */
int gt_cli_parse_formats(const char *value, unsigned *formats);

/* The columns of the terminal standard output goes to (COLUMNS first),
 * for the text the subcommands print there; 0 when it is no terminal. */
unsigned gt_cli_columns(void);

/* A string table for the names of large reports (NULL when out of memory). */
gt_strtab *gt_cli_names(void);

/* Loads a report, interning its names in names; NULL after an error line. */
gt_report *gt_cli_load(const char *path, gt_strtab *names);

/* Loads n reports into out[] (zeroed by the caller), in order: 0, or -1
 * after the error line of the first that could not be read. */
int gt_cli_load_all(char *const *paths, size_t n, gt_strtab *names, gt_report **out);

/* Writes r in each format of `formats`: to <template expanded>.<ext>
 * (%p, %h from the report's process, %q{VAR} from the environment), or
 * with no template, the one format to standard output. Text is the
 * summary at verbosity v. 0, or -1 after an error line. */
int gt_cli_write_report(const gt_report *r, const char *tmpl, unsigned formats,
                        enum gt_verbosity v);

/* "gputrace: <message> (see gputrace <command> --help)" on stderr;
 * returns GT_TOOL_BAD_INPUT. */
int gt_cli_usage_error(const char *command, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The error for getopt's answer `opt` (':' a value is missing, else an
 * unknown option); returns GT_TOOL_BAD_INPUT. */
int gt_cli_option_error(const char *command, char **argv, int opt);

#endif
