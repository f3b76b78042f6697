/* What a report says about its capture windows (report.h,
 * gt_capture_info): kept with the report, told in the summary's header
 * and the JSON's `capture`. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "aggregate.h"
#include "event.h"
#include "format.h"
#include "gpu_busy.h"
#include "memory_table.h"
#include "report.h"
#include "settings.h"

void gt_report_set_capture(gt_report *r, const gt_capture_info *c)
{
    r->capture = *c;
    r->capture.mode[sizeof r->capture.mode - 1] = '\0';
    r->capture_set = true;
}

void gt_report_window_open(gt_report *r, uint64_t time_ns)
{
    if (gt_report_enabled(r, GT_CAT_MEMORY)) gt_memory_window_open(&r->memory, time_ns);
    gt_gpu_busy_fence(&r->busy, time_ns);
}

int gt_capture_limited(const gt_capture_info *c)
{
    return c->kind != GT_CAPTURE_ALL || c->delay_ns || c->duration_ns;
}

void gt_report_capture(const gt_report *r, uint64_t wall_ns, gt_capture_info *out)
{
    if (r->capture_set) {
        *out = r->capture;
        return;
    }
    memset(out, 0, sizeof *out);
    snprintf(out->mode, sizeof out->mode, "all");
    out->windows = 1;
    out->mode_opens = 1;
    out->captured_ns = wall_ns;
}

uint64_t gt_report_observed_ns(const gt_report *r, uint64_t wall_ns, int *captured)
{
    gt_capture_info c;
    gt_report_capture(r, wall_ns, &c);
    *captured = gt_capture_limited(&c);
    return *captured ? c.captured_ns : wall_ns;
}

/* ", after 2.00 s, for 1.00 s" */
static size_t limits(const gt_capture_info *c, char *buf, size_t cap)
{
    char t[GT_FORMAT_CAP];
    size_t n = 0;
    if (c->delay_ns && n < cap)
        n += (size_t)snprintf(buf + n, cap - n, ", after %s",
                              gt_format_ns(c->delay_ns, t, sizeof t));
    if (c->duration_ns && n < cap)
        n += (size_t)snprintf(buf + n, cap - n, ", for %s",
                              gt_format_ns(c->duration_ns, t, sizeof t));
    return n < cap ? n : cap - 1;
}

/* Why no window opened: what the mode waited for never came, or came
 * only outside the time limits, or the process ended first. */
static void why_none(const gt_capture_info *c, uint64_t wall_ns, char *buf, size_t cap)
{
    char t[GT_FORMAT_CAP];
    if (c->delay_ns && wall_ns <= c->delay_ns) {
        snprintf(buf, cap, "the process ended before the delay of %s was over",
                 gt_format_ns(c->delay_ns, t, sizeof t));
        return;
    }
    if (c->mode_opens && c->kind != GT_CAPTURE_ALL) {
        snprintf(buf, cap, "%s only outside the delay and duration",
                 c->kind == GT_CAPTURE_PROFILER ? "the profiler was started"
                                                : "the NVTX range was open");
        return;
    }
    if (c->kind == GT_CAPTURE_PROFILER) {
        snprintf(buf, cap, "the program never called cuProfilerStart or cudaProfilerStart");
        return;
    }
    if (c->kind == GT_CAPTURE_NVTX) {
        /* "nvtx:NAME[@DOMAIN]", the last @ starting the domain. */
        const char *range = c->mode + (strncmp(c->mode, "nvtx:", 5) == 0 ? 5 : 0);
        const char *at = strrchr(range, '@');
        int len = (int)(at ? (size_t)(at - range) : strlen(range));
        if (!at)
            snprintf(buf, cap, "no NVTX range '%.*s' was opened in the default domain", len, range);
        else if (strcmp(at + 1, "*") == 0)
            snprintf(buf, cap, "no NVTX range '%.*s' was opened in any domain", len, range);
        else
            snprintf(buf, cap, "no NVTX range '%.*s' was opened in domain '%s'", len, range,
                     at + 1);
        return;
    }
    snprintf(buf, cap, "recording never started");
}

void gt_capture_describe(const gt_capture_info *c, uint64_t wall_ns, char *buf, size_t cap)
{
    if (!cap) return;
    size_t n = (size_t)snprintf(buf, cap, "%s", c->mode);
    if (n >= cap) return;
    n += limits(c, buf + n, cap - n);
    if (n + 1 >= cap) return;
    if (!c->windows) {
        n += (size_t)snprintf(buf + n, cap - n, ", nothing recorded: ");
        if (n < cap) why_none(c, wall_ns, buf + n, cap - n);
        return;
    }
    char got[GT_FORMAT_CAP], of[GT_FORMAT_CAP];
    snprintf(buf + n, cap - n, ", %" PRIu64 " %s, %s of %s", c->windows,
             c->windows == 1 ? "window" : "windows", gt_format_ns(c->captured_ns, got, sizeof got),
             gt_format_ns(wall_ns, of, sizeof of));
}
