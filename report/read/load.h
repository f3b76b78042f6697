/* Reading a JSON report (SPEC §6, schema 1) back into a gt_report that
 * the writers take as they take the shim's: `gputrace report`, `diff`
 * and `merge` render through the same code as the shim.
 *
 * The reader checks what it reads: a file that is not a gputrace report,
 * another schema version, a file cut short, a directory, a value of the
 * wrong type or out of range each give one line of error, never a crash,
 * whatever the bytes (nesting is limited to cJSON's 1000 levels, numbers
 * must be integers within 64 bits, strings may hold any bytes: the writers
 * make them safe). Keys it does not know are accepted: unknown totals are
 * kept (and summed by a merge), unknown top-level members are written back
 * as they were by the JSON writer.
 *
 * The parser is cJSON, whose allocation hooks and error record are
 * process-wide: one load at a time, and no other use of cJSON during a
 * load. Its allocations come from an arena that the next load reuses (it
 * stays mapped until the process ends). */
#ifndef GT_LOAD_H
#define GT_LOAD_H

#include <stddef.h>

#include "report.h"
#include "strtab.h"

#define GT_LOAD_ERROR_MAX 512u

/* Loads the report at path ("-" is standard input) with its names
 * interned in names (which must outlive the report). NULL on failure,
 * with err = "<path>: <what is wrong>". */
gt_report *gt_report_load_file(const char *path, gt_strtab *names, char *err, size_t errcap);

/* The same from len bytes in memory; `name` stands for the file in errors. */
gt_report *gt_report_load_buffer(const char *data, size_t len, const char *name, gt_strtab *names,
                                 char *err, size_t errcap);

#endif
