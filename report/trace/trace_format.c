/* The table of streamed timeline formats (trace_format.h). */
#include "trace_format.h"

#include "chrome.h"
#include "pftrace.h"

static void *chrome_create(int fd, const gt_strtab *names, int pid, uint64_t origin_ns,
                           unsigned categories)
{
    return gt_timeline_create(fd, names, pid, origin_ns, categories);
}

static void chrome_follow_memory(void *w, gt_memory *m)
{
    gt_timeline_follow_memory(w, m);
}

static void chrome_add(void *w, const gt_event *ev)
{
    gt_timeline_add(w, ev);
}

static int chrome_finish(void *w, const gt_process_info *p)
{
    return gt_timeline_finish(w, p);
}

static void chrome_destroy(void *w)
{
    gt_timeline_destroy(w);
}

/* Perfetto's times are CLOCK_MONOTONIC itself: no origin. */
static void *perfetto_create(int fd, const gt_strtab *names, int pid, uint64_t origin_ns,
                             unsigned categories)
{
    (void)origin_ns;
    return gt_pftrace_create(fd, names, pid, categories);
}

static void perfetto_follow_memory(void *w, gt_memory *m)
{
    gt_pftrace_follow_memory(w, m);
}

static void perfetto_add(void *w, const gt_event *ev)
{
    gt_pftrace_add(w, ev);
}

static int perfetto_finish(void *w, const gt_process_info *p)
{
    return gt_pftrace_finish(w, p);
}

static void perfetto_destroy(void *w)
{
    gt_pftrace_destroy(w);
}

const gt_trace_format gt_trace_formats[GT_TRACE_FORMAT_COUNT] = {
    [GT_TRACE_CHROME] = {GT_OUTPUT_CHROME, "the trace", "thread names", chrome_create,
                         chrome_follow_memory, chrome_add, chrome_finish, chrome_destroy},
    [GT_TRACE_PERFETTO] = {GT_OUTPUT_PERFETTO, "the Perfetto trace", "events of threads",
                           perfetto_create, perfetto_follow_memory, perfetto_add, perfetto_finish,
                           perfetto_destroy},
};
