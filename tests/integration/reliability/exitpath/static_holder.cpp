// A C++ static object that frees device memory in its destructor: it is
// constructed before main, so its destructor runs among the atexit
// handlers after the tracer's exit work (registered later, run earlier).
#include <cuda.h>

namespace {
struct Holder {
    CUdeviceptr p = 0;
    ~Holder()
    {
        if (p) cuMemFree(p);
    }
};
Holder held;
} // namespace

extern "C" void hold_in_static(CUdeviceptr p)
{
    held.p = p;
}
