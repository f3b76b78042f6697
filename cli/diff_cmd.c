/* gputrace diff BASE.json NEW.json [--threshold PCT] [--min-ns NS] [-f text|json|csv]
 *
 * Compares two reports row by row (diff.h) for people and for CI: exit 0
 * when nothing got slower than the threshold, 1 when something did, 2 on
 * bad input; with checksums (GPUTRACE_CHECKSUM) in both, 3 when a copy
 * brought back other data, 4 when the runs' copies cannot be compared. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "diff.h"
#include "tools.h"

static const char usage[] =
    "usage: gputrace diff BASE.json NEW.json [options]\n"
    "\n"
    "Compares two gputrace JSON reports: rows matched by kernel name, copy kind,\n"
    "NVTX range, entry point..., with calls, total and average time before and\n"
    "after, the change of the total and a verdict: slower, faster (changed by\n"
    "more than the threshold), same, new, gone, or moved (grew while other rows\n"
    "of its table shrank and the table's total did not grow). The headline is\n"
    "the change of the GPU busy time; the header also compares wall time.\n"
    "\n"
    "options:\n"
    "      --threshold PCT     a total within +-PCT % is the same (default 5)\n"
    "      --min-ns NS         rows whose new total is under NS ns never fail, nor does a\n"
    "                          GPU busy time grown by less (default 1% of the base's GPU\n"
    "                          busy time, at least 20 us)\n"
    "  -c, --categories LIST   compare these categories (default kernel,memcpy,memset:\n"
    "                          GPU-timed; all for every table)\n"
    "  -f, --format FORMAT     text (the rows that changed), json or csv (every row)\n"
    "      --all               text: list the rows that stayed the same too\n"
    "      --help              print this help\n"
    "\n"
    "examples:\n"
    "  gputrace diff yesterday.json today.json\n"
    "  gputrace diff base.json new.json -c kernel,memcpy --threshold 10 --min-ns 100000\n"
    "  gputrace diff base.json new.json -c all     # host-timed tables too\n"
    "\n"
    "Checksums: when both runs hashed what their device-to-host copies brought back\n"
    "(GPUTRACE_CHECKSUM, --checksum), the copies are matched by thread and order and\n"
    "the first one whose data differs is named.\n"
    "\n"
    "Exit status: 0 when no row got slower than the threshold (and no new row\n"
    "appeared) above --min-ns and the GPU busy time did not grow past it, 1 when\n"
    "one did, 2 when an input or an option is wrong, 3 when a copy brought back\n"
    "other data than in BASE, 4 when the copies cannot be compared (other counts\n"
    "or sizes, another checksum mode). 3 and 4 come before 1.\n";

enum { OPT_THRESHOLD = 256, OPT_MIN_NS, OPT_ALL };

static const struct option options[] = {
    {"threshold", required_argument, NULL, OPT_THRESHOLD},
    {"min-ns", required_argument, NULL, OPT_MIN_NS},
    {"categories", required_argument, NULL, 'c'},
    {"format", required_argument, NULL, 'f'},
    {"all", no_argument, NULL, OPT_ALL},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static int parse_threshold(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(v) || v < 0)
        return gt_cli_usage_error("diff", "invalid --threshold '%s': expected a percentage >= 0",
                                  s);
    *out = v;
    return 0;
}

static int parse_min_ns(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || *end || errno || s[0] == '-')
        return gt_cli_usage_error("diff", "invalid --min-ns '%s': expected a number of ns", s);
    *out = v;
    return 0;
}

static int write_diff(const gt_diff *d, unsigned formats, bool all)
{
    int rc = -1;
    if (formats == GT_FMT_BIT(GT_OUTPUT_TEXT))
        rc = gt_diff_write_text(d, all, gt_cli_columns(), stdout);
    else if (formats == GT_FMT_BIT(GT_OUTPUT_JSON))
        rc = gt_diff_write_json(d, stdout);
    else if (formats == GT_FMT_BIT(GT_OUTPUT_CSV))
        rc = gt_diff_write_csv(d, stdout);
    if (fflush(stdout) != 0) rc = -1;
    if (rc != 0) gt_cli_error("cannot write the comparison to standard output");
    return rc;
}

int gt_cli_diff(int argc, char **argv)
{
    static gt_config cfg; /* large (paths): not on the stack */
    gt_diff_options o = {GT_DIFF_DEFAULT_THRESHOLD_PCT, GT_DIFF_MIN_AUTO,
                         GT_DIFF_DEFAULT_CATEGORIES};
    unsigned formats = GT_FMT_BIT(GT_OUTPUT_TEXT);
    bool all = false;
    int opt;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":c:f:", options, NULL)) != -1) {
        switch (opt) {
        case OPT_THRESHOLD:
            if (parse_threshold(optarg, &o.threshold_pct) != 0) return GT_TOOL_BAD_INPUT;
            break;
        case OPT_MIN_NS:
            if (parse_min_ns(optarg, &o.min_ns) != 0) return GT_TOOL_BAD_INPUT;
            break;
        case 'c':
            if (gt_cli_parse_setting("--categories", GT_VAR_CATEGORIES, optarg, &cfg) != 0)
                return GT_TOOL_BAD_INPUT;
            o.categories = cfg.categories;
            break;
        case 'f':
            if (gt_cli_parse_formats(optarg, &formats) != 0) return GT_TOOL_BAD_INPUT;
            if (formats & (formats - 1))
                return gt_cli_usage_error("diff", "--format takes one of text, json, csv");
            break;
        case OPT_ALL:
            all = true;
            break;
        case 'h':
            fputs(usage, stdout);
            return GT_TOOL_OK;
        default:
            return gt_cli_option_error("diff", argv, opt);
        }
    }
    if (argc - optind != 2)
        return gt_cli_usage_error("diff", "expected two report files, BASE and NEW (got %d)",
                                  argc - optind);
    const char *base_file = argv[optind], *new_file = argv[optind + 1];
    gt_strtab *names = gt_cli_names();
    gt_report *in[2] = {NULL, NULL};
    int rc = GT_TOOL_BAD_INPUT;
    if (!names) gt_cli_error("out of memory");
    bool loaded = names && gt_cli_load_all(argv + optind, 2, names, in) == 0;
    gt_report *base = in[0], *next = in[1];
    if (loaded) {
        gt_diff d;
        if (gt_diff_reports(base, next, base_file, new_file, &o, &d) != 0)
            gt_cli_error("out of memory");
        else if (write_diff(&d, formats, all) == 0)
            rc = d.checksums.verdict == GT_DIFF_CK_DIVERGED       ? GT_TOOL_DIVERGED
                 : d.checksums.verdict == GT_DIFF_CK_INCOMPARABLE ? GT_TOOL_INCOMPARABLE
                 : gt_diff_fails(&d)                              ? GT_TOOL_SLOWER
                                                                  : GT_TOOL_OK;
        gt_diff_free(&d);
    }
    gt_report_destroy(next);
    gt_report_destroy(base);
    gt_strtab_destroy(names);
    return rc;
}
