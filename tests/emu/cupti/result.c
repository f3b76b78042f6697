/* cuptiGetResultString: the name of each CUptiResult of cupti_result.h. */
#include "cupti_emu.h"

#include "cupti_result_names.h"

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char **str)
{
    if (!str) return CUPTI_ERROR_INVALID_PARAMETER;
    for (size_t i = 0; i < sizeof result_names / sizeof result_names[0]; i++)
        if (result_names[i].result == result) {
            *str = result_names[i].name;
            return CUPTI_SUCCESS;
        }
    *str = NULL;
    return CUPTI_ERROR_INVALID_PARAMETER;
}
