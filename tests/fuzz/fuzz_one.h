/* One input through everything that reads reports: the reader, every
 * writer at every verbosity, a merge of the report with itself (and that
 * merge read back and written), a comparison with itself. Shared by the
 * libFuzzer target and the corpus replay that ctest runs. */
#ifndef GT_FUZZ_ONE_H
#define GT_FUZZ_ONE_H

#include <stddef.h>
#include <stdint.h>

/* 1 when the input was read as a report, 0 when the reader refused it. */
int gt_fuzz_one(const uint8_t *data, size_t size);

#endif
