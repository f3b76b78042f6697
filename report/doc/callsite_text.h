/* The summary's `call sites` section (callsite_text.c). */
#ifndef GT_CALLSITE_TEXT_H
#define GT_CALLSITE_TEXT_H

#include "summary.h"

/* Nothing when the report has no call sites. */
void gt_summary_callsites(gt_summary *s);

#endif
