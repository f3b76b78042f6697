/* The JSON report's `callsites` array (callsite_json.c). */
#ifndef GT_CALLSITE_JSON_H
#define GT_CALLSITE_JSON_H

#include <stddef.h>

#include "callsite_table.h"
#include "json_writer.h"
#include "report.h"
#include "strtab.h"

/* Writes the key and the array: 0, or -1 when rows were left out for want
 * of memory. */
int gt_callsites_write_json(gt_json *w, const gt_report *r);

/* One site as the array writes it: {"language", "file", "line",
 * "function", "module", "via"}. */
void gt_site_write_json(gt_json *w, const gt_strtab *names, const gt_site *s);

/* The same object as compact JSON text, as a parser prints it ("tight"),
 * NUL-terminated in buf: the text's length, or 0 when it did not fit. */
size_t gt_site_json_text(const gt_strtab *names, const gt_site *s, char *buf, size_t cap);

#endif
