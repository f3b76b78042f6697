/* gputrace report FILE.json [-v LEVEL] [-c LIST] [-f text|csv|json] [-o TEMPLATE]
 *
 * Renders a JSON report again through the shim's own writers: by default
 * the summary at the verbosity the run used (at least default), which is
 * what its .txt file holds. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tools.h"

static const char usage[] =
    "usage: gputrace report FILE.json [options]\n"
    "\n"
    "Prints the summary of a JSON report written by gputrace (-o ... -f json), as\n"
    "the run printed it, or writes it again as text, JSON or CSV. FILE may be -\n"
    "for standard input.\n"
    "\n"
    "options:\n"
    "  -v, --verbosity LEVEL   none, default, verbose, debug (or 0-3); default: the\n"
    "                          run's own, at least default\n"
    "  -c, --categories LIST   only these categories (same words as for a run)\n"
    "  -f, --format LIST       text, json, csv (default text); several need -o\n"
    "  -o, --output TEMPLATE   write TEMPLATE.txt etc. instead of standard output;\n"
    "                          %p, %h are the report's pid and host, %q{VAR} = $VAR\n"
    "      --help              print this help\n"
    "\n"
    "examples:\n"
    "  gputrace report run.json -v verbose\n"
    "  gputrace report run.json -c kernel,memcpy -f csv > kernels.csv\n"
    "\n"
    "Exit status: 0, or 2 when the file is not a gputrace report or an option is wrong.\n";

static const struct option options[] = {
    {"verbosity", required_argument, NULL, 'v'},
    {"categories", required_argument, NULL, 'c'},
    {"format", required_argument, NULL, 'f'},
    {"output", required_argument, NULL, 'o'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

int gt_cli_report(int argc, char **argv)
{
    static gt_config cfg; /* large (paths): not on the stack */
    const char *verbosity = NULL, *categories = NULL, *tmpl = NULL;
    unsigned formats = GT_FMT_BIT(GT_OUTPUT_TEXT);
    int opt;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":v:c:f:o:", options, NULL)) != -1) {
        switch (opt) {
        case 'v':
            verbosity = optarg;
            break;
        case 'c':
            categories = optarg;
            break;
        case 'f':
            if (gt_cli_parse_formats(optarg, &formats) != 0) return GT_TOOL_BAD_INPUT;
            break;
        case 'o':
            tmpl = optarg;
            break;
        case 'h':
            fputs(usage, stdout);
            return GT_TOOL_OK;
        default:
            return gt_cli_option_error("report", argv, opt);
        }
    }
    if (optind >= argc) return gt_cli_usage_error("report", "no report file given");
    if (optind + 1 < argc)
        return gt_cli_usage_error("report", "one report file at a time ('%s' is a second)",
                                  argv[optind + 1]);
    if (verbosity && gt_cli_parse_setting("--verbosity", GT_VAR_VERBOSITY, verbosity, &cfg) != 0)
        return GT_TOOL_BAD_INPUT;
    enum gt_verbosity v = verbosity ? cfg.verbosity : GT_VERB_DEFAULT;
    unsigned shown = GT_CAT_ALL;
    if (categories &&
        gt_cli_parse_setting("--categories", GT_VAR_CATEGORIES, categories, &cfg) != 0)
        return GT_TOOL_BAD_INPUT;
    if (categories) shown = cfg.categories;

    gt_strtab *names = gt_cli_names();
    gt_report *r = names ? gt_cli_load(argv[optind], names) : NULL;
    int rc = GT_TOOL_BAD_INPUT;
    if (r) {
        gt_report_options o = gt_report_get_options(r);
        if (!verbosity && o.verbosity > v) v = o.verbosity;
        o.categories &= shown;
        gt_report_set_options(r, &o);
        rc = gt_cli_write_report(r, tmpl, formats, v) == 0 ? GT_TOOL_OK : GT_TOOL_BAD_INPUT;
    } else if (!names) {
        gt_cli_error("out of memory");
    }
    gt_report_destroy(r);
    gt_strtab_destroy(names);
    return rc;
}
