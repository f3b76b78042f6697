/* NVTX payloads into the report: a range's plain payload and the named
 * fields that follow its record (GT_EV_NVTX_FIELDS) add to the row of the
 * range the record opened or closed; a mark's to its mark row (named
 * fields of marks are not kept: nothing sums them per second).
 *
 * Fields records come right after their NVTX record on the same thread,
 * which says they follow (u.nvtx.fields): for those records only, the
 * thread's target is remembered: a row + 1, or a mark row with MARK_BIT
 * (0: the record went to no row, its fields go nowhere). */
#include "aggregate.h"
#include "event.h"
#include "idmap.h"
#include "nvtx_marks.h"
#include "nvtx_numbers.h"
#include "nvtx_payload.h"
#include "table.h"

#define MARK_BIT 0x80000000u

static void add_to_row(gt_report *r, int32_t row, uint32_t name, uint32_t unit, uint8_t kind,
                       uint64_t bits)
{
    gt_table *t = &r->tables[GT_CAT_NVTX];
    if (row < 0 || (uint32_t)row >= t->nrows) return;
    gt_nvtx_numbers *n = gt_row_numbers(&t->rows[row]);
    if (!n) return;
    if (!name) {
        gt_number_add(&n->payload, kind, bits);
        return;
    }
    gt_nvtx_field *f = gt_nvtx_numbers_field(n, name, unit);
    if (f) gt_number_add(&f->sum, kind, bits);
}

void gt_nvtx_payload_range(gt_report *r, const gt_event *ev, int32_t row)
{
    if (ev->u.nvtx.fields)
        gt_idmap_set(&r->nvtx_targets, ev->tid, row >= 0 ? (uint32_t)row + 1 : 0);
    if (ev->u.nvtx.payload_kind != GT_NUM_NONE)
        add_to_row(r, row, 0, 0, ev->u.nvtx.payload_kind, ev->u.nvtx.payload);
}

void gt_nvtx_payload_mark(gt_report *r, const gt_event *ev, int32_t mark)
{
    if (ev->u.nvtx.fields)
        gt_idmap_set(&r->nvtx_targets, ev->tid, mark >= 0 ? (uint32_t)mark | MARK_BIT : 0);
}

void gt_nvtx_payload_fields(gt_report *r, const gt_event *ev)
{
    uint32_t target;
    if (!gt_idmap_get(&r->nvtx_targets, ev->tid, &target) || !target) return;
    for (unsigned i = 0; i < 2; i++) {
        uint8_t kind = ev->u.fields.kind[i];
        if (kind == GT_NUM_NONE) continue;
        if (!(target & MARK_BIT)) {
            add_to_row(r, (int32_t)(target - 1), ev->u.fields.name[i], ev->u.fields.unit[i], kind,
                       ev->u.fields.value[i]);
        } else if (!ev->u.fields.name[i]) {
            uint32_t m = target & ~MARK_BIT;
            if (m < r->marks.n)
                gt_number_add(&r->marks.marks[m].payload, kind, ev->u.fields.value[i]);
        }
    }
}
