/* Two runs whose records are known, for the merge and diff tests
 * (include after cmocka.h): A, the sample run (report_sample.h), and B,
 * the same run with more work: EXTRA_RK4 more rk4 launches of about
 * EXTRA_RK4_NS, a kernel of its own (only_in_b, ONLY_B_NS) and a peer
 * copy. Both are read back from their JSON into one string table; every
 * record of both also goes into one report C, aggregated as a single
 * process would; and the merge of A and B is made. */
#ifndef TEST_REPORT_RUNS_H
#define TEST_REPORT_RUNS_H

#include "event.h"
#include "load.h"
#include "merge.h"
#include "report.h"
#include "report_round_trip.h"
#include "report_sample.h"
#include "strtab.h"

#define EXTRA_RK4 5u
#define EXTRA_RK4_NS 3000000ull
#define ONLY_B_NS 123456ull

/* Feeds every record of a sample run to the combined report as well. */
static inline void also_combined(void *ctx, const gt_report *r, const gt_event *ev)
{
    (void)r;
    gt_report_add(ctx, ev);
}

typedef struct runs {
    gt_strtab *names;    /* of the inputs read back and the merge */
    gt_strtab *c_names;  /* of the combined report */
    gt_report *in[2];    /* A and B, read back from their JSON */
    gt_report *combined; /* C */
    gt_report *merged;
} runs;

static inline gt_report *read_back(const gt_report *r, const gt_process_info *p, gt_strtab *names)
{
    char *json = render(gt_report_write_json, r, p);
    char err[GT_LOAD_ERROR_MAX] = "";
    gt_report *back = gt_report_load_buffer(json, strlen(json), "in.json", names, err, sizeof err);
    if (!back) fail_msg("%s", err);
    free(json);
    return back;
}

/* Run A (extra = false) or B into names, feeding C too. */
static inline gt_report *run(runs *w, bool extra)
{
    sample s;
    sample_init(&s, NULL);
    gt_strtab_destroy(s.names);
    s.names = w->c_names; /* one string table, so that C's names are the runs' */
    gt_report_destroy(s.r);
    s.r = gt_report_create(NULL, s.names);
    s.also = also_combined;
    s.ctx = w->combined;
    sample_setup(&s);
    sample_chunks(&s);
    if (extra) {
        for (unsigned i = 0; i < EXTRA_RK4; i++)
            sample_kernel(&s, SAMPLE_RK4_NAME, EXTRA_RK4_NS + i, 0);
        sample_kernel(&s, "only_in_b(float*)", ONLY_B_NS, 0);
        sample_copy(&s, "cuMemcpyPeerAsync", GT_DIR_PTOP, GT_HOST_NONE, true, 1 << 20, 90000);
    }
    sample_teardown(&s);
    gt_report_finish(s.r, SAMPLE_END);
    gt_report *back = read_back(s.r, &s.p, w->names);
    gt_report_destroy(s.r);
    return back;
}

static inline void runs_build(runs *w)
{
    memset(w, 0, sizeof(*w));
    w->names = gt_strtab_create();
    w->c_names = gt_strtab_create();
    w->combined = gt_report_create(NULL, w->c_names);
    w->in[0] = run(w, false);
    w->in[1] = run(w, true);
    gt_report_finish(w->combined, SAMPLE_END);
    const char *files[] = {"a.json", "b.json"};
    char err[256];
    w->merged = gt_report_merge(w->in, files, 2, w->names, err, sizeof err);
    if (!w->merged) fail_msg("%s", err);
}

static inline void runs_free(runs *w)
{
    gt_report_destroy(w->merged);
    gt_report_destroy(w->in[0]);
    gt_report_destroy(w->in[1]);
    gt_report_destroy(w->combined);
    gt_strtab_destroy(w->names);
    gt_strtab_destroy(w->c_names);
}

#endif
