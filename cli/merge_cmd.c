/* gputrace merge FILE.json... -o TEMPLATE [-f LIST] [-v LEVEL]
 *
 * One report for many processes (merge.h says what is exact). Without
 * -o, the merged summary goes to standard output. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "merge.h"
#include "tools.h"

static const char usage[] =
    "usage: gputrace merge FILE.json... -o TEMPLATE [-f LIST]\n"
    "\n"
    "Merges reports of several processes (MPI ranks, fork children, repeated runs)\n"
    "into one: rows with the same key summed, and for each row the least, median\n"
    "and most of one input's total and the input with the most, so that an\n"
    "imbalanced rank stands out. The merged JSON is itself a report for report,\n"
    "diff and merge.\n"
    "\n"
    "options:\n"
    "  -o, --output TEMPLATE   write TEMPLATE.json etc. (%h = the inputs' common host,\n"
    "                          %q{VAR} = $VAR); without it the summary is printed\n"
    "  -f, --format LIST       text, json, csv (default json with -o, text without)\n"
    "  -v, --verbosity LEVEL   of the text summary (default: default)\n"
    "      --help              print this help\n"
    "\n"
    "examples:\n"
    "  mpirun -np 64 gputrace -o 'out/rank%q{OMPI_COMM_WORLD_RANK}' ./solver\n"
    "  gputrace merge out/rank*.json -o out/all -f json,text\n"
    "  srun gputrace -o 'out/rank%q{SLURM_PROCID}' ./solver\n"
    "\n"
    "Exit status: 0, or 2 when an input is not a gputrace report or an option is wrong.\n";

static const struct option options[] = {
    {"output", required_argument, NULL, 'o'},
    {"format", required_argument, NULL, 'f'},
    {"verbosity", required_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

int gt_cli_merge(int argc, char **argv)
{
    static gt_config cfg; /* large (paths): not on the stack */
    const char *tmpl = NULL;
    unsigned formats = 0;
    enum gt_verbosity v = GT_VERB_DEFAULT;
    int opt;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":o:f:v:", options, NULL)) != -1) {
        switch (opt) {
        case 'o':
            tmpl = optarg;
            break;
        case 'f':
            if (gt_cli_parse_formats(optarg, &formats) != 0) return GT_TOOL_BAD_INPUT;
            break;
        case 'v':
            if (gt_cli_parse_setting("--verbosity", GT_VAR_VERBOSITY, optarg, &cfg) != 0)
                return GT_TOOL_BAD_INPUT;
            v = cfg.verbosity;
            break;
        case 'h':
            fputs(usage, stdout);
            return GT_TOOL_OK;
        default:
            return gt_cli_option_error("merge", argv, opt);
        }
    }
    if (optind >= argc) return gt_cli_usage_error("merge", "no report files given");
    if (!formats) formats = GT_FMT_BIT(tmpl ? GT_OUTPUT_JSON : GT_OUTPUT_TEXT);
    size_t n = (size_t)(argc - optind);
    gt_strtab *names = gt_cli_names();
    gt_report **in = calloc(n, sizeof(*in));
    int rc = GT_TOOL_BAD_INPUT;
    bool loaded = names && in;
    if (!loaded) gt_cli_error("out of memory");
    loaded = loaded && gt_cli_load_all(argv + optind, n, names, in) == 0;
    if (loaded) {
        char err[256];
        gt_report *merged =
            gt_report_merge(in, (const char *const *)argv + optind, n, names, err, sizeof err);
        if (!merged)
            gt_cli_error("%s", err);
        else if (gt_cli_write_report(merged, tmpl, formats, v) == 0)
            rc = GT_TOOL_OK;
        gt_report_destroy(merged);
    }
    for (size_t i = 0; in && i < n; i++)
        gt_report_destroy(in[i]);
    free(in);
    gt_strtab_destroy(names);
    return rc;
}
