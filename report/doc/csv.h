/* CSV fields shared by the report's CSV (csv.c) and the comparison's
 * (diff_write.c). */
#ifndef GT_CSV_H
#define GT_CSV_H

#include <stdio.h>

/* A name as one RFC 4180 field: always quoted, quotes doubled, ill-formed
 * UTF-8 replaced by U+FFFD, control characters by '?', and a ' in front of
 * a leading = + - or @ (a formula to a spreadsheet). */
void gt_csv_write_name(FILE *out, const char *s);

#endif
