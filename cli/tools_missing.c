/* report, diff and merge in a build made without cJSON (GPUTRACE_REPORT_TOOLS
 * OFF, or AUTO where cJSON was not found): the command still runs programs
 * under the library; these say what the build lacks and how to get it. */
#include "tools.h"

#include "cli.h"

static int missing(const char *command)
{
    gt_cli_error("%s: this gputrace was built without cJSON, which report, diff and merge read "
                 "reports with: install libcjson-dev (Debian, Ubuntu) and build again",
                 command);
    return GT_TOOL_BAD_INPUT;
}

int gt_cli_report(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return missing("report");
}

int gt_cli_diff(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return missing("diff");
}

int gt_cli_merge(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return missing("merge");
}
