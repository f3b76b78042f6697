/* The checksum list (checksum_list.h) in the documents: the JSON report's
 * `checksums` member and the summary's checksum line. */
#ifndef GT_CHECKSUM_DOC_H
#define GT_CHECKSUM_DOC_H

#include <stdio.h>

#include "json_writer.h"
#include "report.h"

/* Hashes are written as 16 lowercase hex digits: a JSON number cannot
 * hold 64 bits in every reader. */
#define GT_CHECKSUM_HEX_MAX 17u
void gt_checksum_hex(uint64_t hash, char buf[GT_CHECKSUM_HEX_MAX]);

/* "checksums": {"mode", "hash", "hashed", "hashed_bytes", "unhashed",
 * "unhashed_by", "cost_ns", "listed_max", "unlisted", "copies": [{"thread",
 * "index", "bytes", "hash", "status", "site"}], "threads": [{"thread",
 * "copies", "bytes", "digest"}]}, copies and threads by thread and index;
 * a merged report's copies and threads begin with "rank" (the input they
 * come from). Nothing when the run had no checksums. Returns 0, or -1 when
 * the copies could not be sorted for want of memory (then none are
 * listed). */
int gt_checksums_write_json(gt_json *w, const gt_report *r);

/* One line: how many copies were hashed, what it cost, how many could
 * not be and why. Nothing when the run had no checksums. */
void gt_checksums_write_summary(const gt_report *r, FILE *out);

#endif
