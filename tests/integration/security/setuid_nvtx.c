/* An NVTX range and nothing else: no CUDA library to load, so that a
 * set-user-ID copy of it runs where the loader ignores LD_LIBRARY_PATH (and
 * LD_PRELOAD). Such a program reaches libgputrace.so through NVTX's
 * injection variable alone (check_security.py, case secure_exec). */
#include <nvtx3/nvToolsExt.h>

int main(void)
{
    nvtxRangePushA("privileged work");
    nvtxRangePop();
    return 0;
}
