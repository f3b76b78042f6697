/* The reader's part for what a report says about its capture windows and
 * whether it is a snapshot (report.h, gt_capture_info, gt_snapshot_info):
 * both optional, so that reports of versions without them read back as
 * they were made (everything captured, final). */
#include <stdio.h>
#include <string.h>

#include "load_internal.h"
#include "report.h"
#include "settings.h"

static enum gt_capture_mode mode_kind(const char *mode)
{
    if (strcmp(mode, "profiler-api") == 0) return GT_CAPTURE_PROFILER;
    if (strncmp(mode, "nvtx:", 5) == 0) return GT_CAPTURE_NVTX;
    return GT_CAPTURE_ALL;
}

static bool load_capture(gt_loader *ld, const cJSON *doc)
{
    const cJSON *c = gt_load_object(ld, doc, "capture", NULL, true);
    if (!c) return !ld->failed;
    ld->table = "capture";
    gt_capture_info info;
    memset(&info, 0, sizeof info);
    const cJSON *h = NULL;
    const char *mode = gt_load_string(ld, c, "mode", &h, NULL);
    if (!mode || !gt_load_u64(ld, c, "windows", &h, &info.windows) ||
        !gt_load_u64(ld, c, "captured_ns", &h, &info.captured_ns) ||
        !gt_load_u64_or(ld, c, "delay_ns", &h, 0, &info.delay_ns) ||
        !gt_load_u64_or(ld, c, "duration_ns", &h, 0, &info.duration_ns) ||
        !gt_load_u64_or(ld, c, "mode_opens", &h, info.windows, &info.mode_opens))
        return false;
    info.kind = mode_kind(mode);
    snprintf(info.mode, sizeof info.mode, "%s", mode);
    gt_report_set_capture(ld->r, &info);
    return true;
}

static bool load_snapshot(gt_loader *ld, const cJSON *doc)
{
    const cJSON *s = gt_load_object(ld, doc, "snapshot", NULL, true);
    if (!s) return !ld->failed;
    ld->table = "snapshot";
    uint64_t at = 0;
    bool final = true;
    int64_t sig = 0;
    const cJSON *h = NULL;
    if (!gt_load_u64(ld, s, "at_ns", &h, &at) || !gt_load_bool_or(ld, s, "final", &h, 1, &final) ||
        !gt_load_i64_or(ld, s, "signal", &h, 0, 255, 0, &sig))
        return false;
    gt_report_set_snapshot(ld->r, at, final, (int)sig);
    return true;
}

bool gt_load_capture(gt_loader *ld, const cJSON *doc)
{
    return load_capture(ld, doc) && load_snapshot(ld, doc);
}
