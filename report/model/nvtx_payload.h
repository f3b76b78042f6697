/* NVTX payloads into the rows they describe (nvtx_payload.c). */
#ifndef GT_NVTX_PAYLOAD_H
#define GT_NVTX_PAYLOAD_H

#include <stdint.h>

#include "event.h"
#include "report.h"

/* After an NVTX push, pop, start or end record went into the table: its
 * payload to `row`, the row of the range it opened or closed (-1: none). */
void gt_nvtx_payload_range(gt_report *r, const gt_event *ev, int32_t row);

/* After a mark went into mark row `mark` (-1: none). */
void gt_nvtx_payload_mark(gt_report *r, const gt_event *ev, int32_t mark);

/* A GT_EV_NVTX_FIELDS record: to the target of its thread's last NVTX
 * record. */
void gt_nvtx_payload_fields(gt_report *r, const gt_event *ev);

#endif
