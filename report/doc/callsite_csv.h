/* The call sites' records of the CSV report (callsite_csv.c). */
#ifndef GT_CALLSITE_CSV_H
#define GT_CALLSITE_CSV_H

#include <stdio.h>

#include "report.h"

/* 0, or -1 when rows were left out for want of memory. */
int gt_callsites_write_csv(FILE *out, const gt_report *r);

#endif
