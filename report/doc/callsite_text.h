/* The summary's `call sites` section (callsite_text.c). */
#ifndef GT_CALLSITE_TEXT_H
#define GT_CALLSITE_TEXT_H

#include <stdint.h>

#include "summary.h"

/* Nothing when the report has no call sites. */
void gt_summary_callsites(gt_summary *s);

/* " from FILE:LINE in FUNCTION" after a leak the verbose summary lists:
 * the site of its allocation (a label's string id); nothing for 0. */
void gt_summary_leak_site(gt_summary *s, uint32_t label);

#endif
