/* libFuzzer target for the report reader (GPUTRACE_FUZZ=ON, clang):
 *   build/fuzz/tests/fuzz/gt_fuzz_report -dict=tests/fuzz/report.dict tests/fuzz/corpus */
#include "fuzz_one.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gt_fuzz_one(data, size);
    return 0;
}
