/* Reporting the runtime's work-submitting calls through the emulated
 * driver's tracing interface; with a driver that has none (a real one),
 * nothing is reported. */
#include "rt_trace.h"

#include <dlfcn.h>
#include <pthread.h>

static gtemu_trace_attached_fn attached;
static gtemu_trace_api_fn report_enter, report_exit;
static pthread_once_t lookup_once = PTHREAD_ONCE_INIT;

static void look_up(void)
{
    /* The runtime opens the same library on its first call that needs the
     * driver; the reference is kept for the life of the process. */
    void *libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (libcuda == NULL) return;
    gtemu_trace_attached_fn is_attached =
        (gtemu_trace_attached_fn)dlsym(libcuda, "gtemu_trace_is_attached");
    gtemu_trace_api_fn enter = (gtemu_trace_api_fn)dlsym(libcuda, "gtemu_trace_api_enter");
    gtemu_trace_api_fn exit_fn = (gtemu_trace_api_fn)dlsym(libcuda, "gtemu_trace_api_exit");
    if (is_attached && enter && exit_fn) {
        attached = is_attached;
        report_enter = enter;
        report_exit = exit_fn;
    }
}

void gt_rt_trace_enter(struct rt_api *api)
{
    pthread_once(&lookup_once, look_up);
    if (attached == NULL || !attached()) return;
    if (api->launched) {
        /* A registered stub is named here; a cudaKernel_t by the driver. */
        api->call.symbol = gt_rt_stub_name(api->launched);
        if (api->call.symbol == NULL) api->call.function_handle = api->launched;
    }
    api->entered = true;
    report_enter(&api->call);
}

cudaError_t gt_rt_trace_exit(struct rt_api *api, cudaError_t result)
{
    if (!api->entered) return result;
    api->call.result = (int)result;
    api->call.return_value = &result;
    report_exit(&api->call);
    return result;
}
