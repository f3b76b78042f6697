/* Reading report files for report, diff and merge: the part of the
 * subcommands that needs cJSON (report/read/load.c). */
#include "tools.h"

#include "cli.h"
#include "load.h"

gt_report *gt_cli_load(const char *path, gt_strtab *names)
{
    char err[GT_LOAD_ERROR_MAX];
    gt_report *r = gt_report_load_file(path, names, err, sizeof err);
    if (!r) gt_cli_error("%s", err);
    return r;
}

int gt_cli_load_all(char *const *paths, size_t n, gt_strtab *names, gt_report **out)
{
    for (size_t i = 0; i < n; i++)
        if (!(out[i] = gt_cli_load(paths[i], names))) return -1;
    return 0;
}
