/* One empty report per test, with its string table: the setup and teardown
 * of the tests that feed a report records by hand (report_events.h). */
#ifndef TEST_REPORT_FIXTURE_H
#define TEST_REPORT_FIXTURE_H

#include "event.h"
#include "report.h"
#include "strtab.h"

static gt_strtab *names;
static gt_report *r;

static int setup(void **unused)
{
    (void)unused;
    names = gt_strtab_create();
    r = gt_report_create(NULL, names);
    return r ? 0 : -1;
}

static int teardown(void **unused)
{
    (void)unused;
    gt_report_destroy(r);
    gt_strtab_destroy(names);
    return 0;
}

static void add(gt_event ev)
{
    gt_report_add(r, &ev);
}

#endif
