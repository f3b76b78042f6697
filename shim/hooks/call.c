/* The shared body of every wrapper (hook.h): before the real call, after
 * it, and the runtime/driver pairing that records a call seen at both
 * levels once (DESIGN §3).
 *
 * A runtime wrapper points gt_rt_current at a detail on its stack for the
 * length of the real call. A driver wrapper reached under it times its GPU
 * work as usual, and writes the description and the event pair into the
 * detail instead of recording, when it is the first operation of the kind
 * the runtime call is (the copy of a cudaMemcpy, the launch of a
 * cudaLaunchKernel, the synchronize of a cudaStreamSynchronize). A further
 * GPU operation under the same runtime call is recorded by the driver
 * wrapper as its own event, and so is a module load (the runtime loading
 * the program's code lazily, under its first launch); anything else the
 * runtime does on the way (initialisation, an internal synchronize)
 * belongs to the runtime call and is not recorded again. */
#include "hook.h"

#include "checksum.h"
#include "callsite.h"

__thread gt_rt_detail *gt_rt_current __attribute__((tls_model("initial-exec")));

/* The device of the calling thread's current context, remembered per
 * thread for the last context seen, in the era it was seen. A context's
 * end starts a new era (and another when it is over): the driver may give
 * a later context, of another device, the same address. Release by the
 * context's end, acquire by readers. */
static _Atomic uint32_t context_era;
static __thread CUcontext device_ctx __attribute__((tls_model("initial-exec")));
static __thread uint32_t device_era __attribute__((tls_model("initial-exec")));
static __thread uint16_t device_ordinal __attribute__((tls_model("initial-exec")));
static gt_real_cache ctx_get_current, ctx_get_device, stream_get_id;
/* The driver's numbers of the streams this thread used last, by handle,
 * kept for the context era and the stream era they were asked in: a stream
 * ends with its context or when destroyed, and its handle may come back as
 * another stream. */
static _Atomic uint32_t stream_era;
#define STREAM_NUMBERS 16u
static __thread struct {
    uint64_t handle;
    uint64_t number;
} stream_numbers[STREAM_NUMBERS] __attribute__((tls_model("initial-exec")));
static __thread uint32_t stream_numbers_era __attribute__((tls_model("initial-exec")));
static __thread uint32_t stream_numbers_streams __attribute__((tls_model("initial-exec")));

void gt_context_ending(void)
{
    atomic_fetch_add_explicit(&context_era, 1, memory_order_release);
}

void gt_stream_ending(void)
{
    atomic_fetch_add_explicit(&stream_era, 1, memory_order_release);
}

void gt_context_ended(int ended)
{
    int saved = errno;
    gt_context_ending();
    /* Its modules went with it: their functions' handles may be reused;
     * and its page-locked memory: its addresses may come back pageable. */
    if (ended) {
        gt_kernel_names_invalidate();
        gt_host_mem_context_ended();
    }
    errno = saved;
}

/* The device of the current context, which goes into *ctx (NULL: none). */
static GT_NO_STACK_PROTECTOR uint16_t current_device_ctx(CUcontext *current)
{
    typedef CUresult (*get_current_fn)(CUcontext *);
    typedef CUresult (*get_device_fn)(CUdevice *);
    get_current_fn get_current =
        (get_current_fn)gt_cuda_real_once(&ctx_get_current, "cuCtxGetCurrent");
    CUcontext ctx = NULL;
    *current = NULL;
    if (!get_current || get_current(&ctx) != CUDA_SUCCESS || !ctx) return GT_NO_DEVICE;
    *current = ctx;
    /* After the driver named the context: an era begun before the context
     * was made is seen. */
    uint32_t era = atomic_load_explicit(&context_era, memory_order_acquire);
    if (ctx == device_ctx && era == device_era) return device_ordinal;
    get_device_fn get_device = (get_device_fn)gt_cuda_real_once(&ctx_get_device, "cuCtxGetDevice");
    CUdevice dev = 0;
    if (!get_device || get_device(&dev) != CUDA_SUCCESS || dev < 0 || dev >= (CUdevice)GT_NO_DEVICE)
        return GT_NO_DEVICE;
    device_ctx = ctx;
    device_era = era;
    device_ordinal = (uint16_t)dev;
    return device_ordinal;
}

uint64_t gt_current_context_id(void)
{
    typedef CUresult (*get_current_fn)(CUcontext *);
    get_current_fn get_current =
        (get_current_fn)gt_cuda_real_once(&ctx_get_current, "cuCtxGetCurrent");
    CUcontext ctx = NULL;
    if (!get_current || get_current(&ctx) != CUDA_SUCCESS) return 0;
    return (uint64_t)(uintptr_t)ctx;
}

GT_NO_STACK_PROTECTOR uint16_t gt_current_device(void)
{
    CUcontext ctx;
    return current_device_ctx(&ctx);
}

/* Recorded by a driver wrapper even under a runtime call of another kind;
 * a context's end too (the memory in it goes with it), unless the runtime
 * call is itself one (cudaDeviceReset: its record names the context). */
static inline int is_own_work(unsigned kind)
{
    if (kind == GT_EV_CTX_END) return gt_rt_current->expect != GT_EV_CTX_END;
    return gt_kind_is_gpu_work(kind) || kind == GT_EV_MODULE;
}

static inline uint64_t stream_id(const gt_call *c)
{
    return gt_stream_id(c->stream, c->per_thread);
}

/* A stream handle's record id with the driver's number of the stream
 * (gt_stream_number), asked once per handle on each thread while no
 * context and no stream ends: a stream made at a destroyed one's address
 * gets a number, and a track, of its own. */
static GT_NO_STACK_PROTECTOR uint64_t numbered_stream(uint64_t handle)
{
    typedef CUresult (*get_id_fn)(CUstream, unsigned long long *);
    if (handle == 0 || handle == (uint64_t)(uintptr_t)CU_STREAM_PER_THREAD ||
        gt_stream_number(handle))
        return handle;
    uint32_t era = atomic_load_explicit(&context_era, memory_order_acquire);
    uint32_t streams = atomic_load_explicit(&stream_era, memory_order_acquire);
    if (era != stream_numbers_era || streams != stream_numbers_streams) {
        memset(stream_numbers, 0, sizeof stream_numbers);
        stream_numbers_era = era;
        stream_numbers_streams = streams;
    }
    unsigned slot = (unsigned)(handle >> 4) % STREAM_NUMBERS;
    if (stream_numbers[slot].handle != handle) {
        get_id_fn get_id = (get_id_fn)gt_cuda_real_once(&stream_get_id, "cuStreamGetId");
        unsigned long long id = 0;
        if (!get_id || get_id((CUstream)(uintptr_t)handle, &id) != CUDA_SUCCESS ||
            id >= 1ull << (64 - GT_STREAM_NUMBER_SHIFT))
            id = 0;
        stream_numbers[slot].handle = handle;
        stream_numbers[slot].number = id;
    }
    return handle | stream_numbers[slot].number << GT_STREAM_NUMBER_SHIFT;
}

/* Work the GPU will not run now: it is being captured into a graph. Asked
 * only for untimed work while timing is on (gt_gpu_begin refused it). */
static int captured(const gt_call *c)
{
    return gt_gpu_stream_capturing(c->stream, c->per_thread);
}

/* The host side's kind, or GT_HOST_NONE for device memory. */
static enum gt_host_mem side_kind(const void *ptr, unsigned side)
{
    if (side == GT_SIDE_DEVICE) return GT_HOST_NONE;
    enum gt_host_mem kind = gt_host_mem_kind(ptr);
    /* The API says host: device memory passed as such is still the host side. */
    return side == GT_SIDE_HOST && kind == GT_HOST_NONE ? GT_HOST_PAGEABLE : kind;
}

static void describe_copy(const gt_call *c, gt_event *ev)
{
    ev->u.copy.dims = c->copy.dims;
    if (c->copy.peer) {
        ev->u.copy.dir = GT_DIR_PTOP;
        ev->u.copy.host_mem = GT_HOST_NONE;
        return;
    }
    enum gt_host_mem src = side_kind(c->copy.src, c->copy.src_side);
    enum gt_host_mem dst = side_kind(c->copy.dst, c->copy.dst_side);
    if (src != GT_HOST_NONE) {
        ev->u.copy.dir = dst != GT_HOST_NONE ? GT_DIR_HTOH : GT_DIR_HTOD;
        ev->u.copy.host_mem = (uint8_t)src;
    } else {
        ev->u.copy.dir = dst != GT_HOST_NONE ? GT_DIR_DTOH : GT_DIR_DTOD;
        ev->u.copy.host_mem = (uint8_t)dst;
    }
}

/* What the call did, into a zeroed record (or a runtime call's detail,
 * whose name alone is cleared: see gt_runtime_before). The driver queries (names,
 * host memory kinds, device, capture state) are made only when the hook's
 * category is on and the call succeeded: a failed call counts in `api`
 * alone. The record's slot is open meanwhile, so the thread's guard is
 * held and the queries are never recorded. */
static inline __attribute__((always_inline)) void describe(const gt_call *c, CUresult r,
                                                           gt_event *ev)
{
    ev->kind = c->kind;
    ev->flags = c->flags;
    ev->device = GT_NO_DEVICE;
    ev->bytes = c->bytes;
    ev->stream = stream_id(c);
    memcpy(&ev->u, &c->u, sizeof ev->u);
    if (r != CUDA_SUCCESS || !(gt_hook_mode(c->hook) & GT_HOOK_WORK)) return;
    if (gt_kind_is_gpu_work(c->kind)) ev->stream = numbered_stream(ev->stream);
    if (c->kind == GT_EV_MEMCPY) describe_copy(c, ev);
    /* An allocation or free belongs to a device row of the memory table;
     * an allocation also to its context, which may take it along when it
     * ends (not VMM memory, which names its device: it outlives contexts). */
    if (c->kind == GT_EV_ALLOC || c->kind == GT_EV_FREE) {
        CUcontext ctx = NULL;
        ev->device = c->device != GT_NO_DEVICE ? c->device : current_device_ctx(&ctx);
        if (c->kind == GT_EV_ALLOC) ev->u.mem.ctx = (uint64_t)(uintptr_t)ctx;
    }
    if (c->kind == GT_EV_KERNEL)
        ev->name = c->func_is_stub ? gt_kernel_stub_name(c->u.kernel.func)
                                   : gt_kernel_name(c->u.kernel.func);
    /* The device places GPU times. A timed call gets it from its pair's
     * pool (gt_gpu_attach), asked once per context, or from its CUPTI
     * record; only untimed work while event pairs time (captured, or
     * refused a pair) asks the driver. */
    if (gt_kind_is_gpu_work(c->kind) && gt_gpu_src() != GT_SRC_OFF && !c->pair) {
        if (!c->cupti) ev->device = gt_current_device();
        if (captured(c)) ev->flags |= GT_EVF_CAPTURED;
    }
}

/* The record of a call: the call's own part, and where it was made from
 * (callsite.h). Only the KEEP wrappers (hook.h) make records outside a
 * capture window, and a call whose window closed while it ran ends
 * outside it too. */
static inline void finish(gt_event *ev, const gt_call *c, int32_t result, uint64_t t1)
{
    ev->api = gt_hook_api(c->hook);
    ev->result = result;
    ev->host_start = c->t0;
    ev->host_end = t1;
    if (GT_UNLIKELY(!gt_capture_open())) ev->flags |= GT_EVF_UNCAPTURED;
    gt_callsite_note(ev);
}

/* Hands the pair to the record (or lets it go), or with CUPTI the
 * correlation id to the record of work that ran (it succeeded and was not
 * captured into a graph), and commits. */
static inline void commit(gt_event *ev, gt_gpu_pair *pair, const gt_call *c)
{
    if (pair) gt_gpu_attach(ev, pair);
    if (!ev) return;
    if (c->cupti && ev->result == 0 && gt_kind_is_gpu_work(ev->kind) &&
        !(ev->flags & GT_EVF_CAPTURED)) {
        /* As for pairs: the exit's cut must come before the runtime's
         * teardown, while CUPTI can still flush the contexts' records. */
        gt_gpu_note_work();
        gt_cupti_attach(ev, c->cupti_mark);
    }
    gt_ev_commit(ev);
}

/* A call with no category of its own is recorded for `api` only; one
 * entered for the checksums alone is not recorded. */
static inline gt_event *begin(const gt_call *c)
{
    unsigned mode = gt_hook_mode(c->hook);
    if (!(mode & (GT_HOOK_WORK | GT_HOOK_API))) return NULL;
    if (c->kind == GT_EV_API && !(mode & GT_HOOK_API)) return NULL;
    return gt_ev_begin();
}

/* ------------------------------------------------------------ checksums
 * What a copy or a synchronize that succeeded means for the checksums
 * (shim/checksum/checksum.h), once its record is made. A runtime call
 * speaks for the driver calls under it. */

static void checksum_copy(const gt_call *c, uint32_t site)
{
    if (c->copy.batch || c->copy.peer) return;
    gt_event side;
    describe_copy(c, &side);
    if (side.u.copy.dir == GT_DIR_HTOH) {
        gt_checksum_host_written(c->copy.dst, c->bytes);
        return;
    }
    if (side.u.copy.dir != GT_DIR_DTOH || side.u.copy.host_mem == GT_HOST_MANAGED) return;
    gt_checksum_copy k = {
        .dst = c->copy.dst, .bytes = c->bytes, .stream = stream_id(c), .strided = c->copy.dims > 1};
    /* Its site: its record's, else taken now (the sampling passed the
     * record over, or no record was made): every checksum names its site. */
    k.site = site && site != GT_SITE_SKIPPED ? GT_SITE_ID(site) : gt_callsite_stack_now();
    if (c->flags & GT_EVF_ASYNC) {
        /* Captured into a graph: it runs when the graph does. */
        if (gt_gpu_stream_capturing(c->stream, c->per_thread)) return;
        /* Into pageable memory CUDA completes it before returning. */
        k.pending = side.u.copy.host_mem == GT_HOST_PINNED;
        if (k.pending) k.context = gt_current_context_id();
    }
    gt_checksum_copied(&k);
}

static void checksum_sync(const gt_call *c)
{
    switch ((enum gt_sync_target)c->sync_target) {
    case GT_SYNC_STREAM:
        gt_checksum_stream_synced(stream_id(c), gt_current_context_id());
        break;
    case GT_SYNC_CONTEXT:
        gt_checksum_context_synced(c->sync_handle ? c->sync_handle : gt_current_context_id());
        break;
    case GT_SYNC_EVENT:
        gt_checksum_event_synced(c->sync_handle);
        break;
    case GT_SYNC_NONE:
        break;
    }
}

/* site: the record's `site`, 0 when no record was made. */
static void checksum_after(const gt_call *c, uint32_t site)
{
    int saved = errno;
    if (c->kind == GT_EV_MEMCPY)
        checksum_copy(c, site);
    else if (c->kind == GT_EV_SYNC)
        checksum_sync(c);
    errno = saved;
}

void gt_call_before_work(gt_call *c, int timed)
{
    int saved = errno;
    if (gt_call_pairs(c, timed)) {
        GT_SHIM_WORK({
            gt_gpu_note_work();
            c->pair = gt_gpu_begin(c->stream, c->per_thread);
        });
    }
    if (gt_call_flushes(c)) gt_ev_flush();
    errno = saved;
}

GT_NO_STACK_PROTECTOR void gt_driver_after(gt_call *c, CUresult r)
{
    gt_rt_detail *d = gt_call_detail(c);
    uint64_t t1 = d ? 0 : gt_clock_ticks();
    int saved = errno;
    uint32_t site = 0;
    if (c->pair) GT_SHIM_WORK(gt_gpu_end(c->pair, r == CUDA_SUCCESS));
    if (d) {
        GT_SHIM_WORK(describe(c, r, &d->work));
        d->pair = c->pair;
        d->filled = 1;
    } else if (!gt_rt_current || is_own_work(c->kind)) {
        gt_event *ev = begin(c);
        if (ev) {
            describe(c, r, ev);
            /* Untimed at the start (it looked like a runtime call's detail,
             * then another call under the same runtime call took that role):
             * no host time rather than a wrong one. */
            if (!c->t0) c->t0 = t1;
            finish(ev, c, r, t1);
            site = ev->site;
        }
        commit(ev, c->pair, c);
    }
    if (GT_UNLIKELY(gt_checksum_on()) && r == CUDA_SUCCESS && !gt_rt_current)
        checksum_after(c, site);
    errno = saved;
}

GT_NO_STACK_PROTECTOR void gt_runtime_after(gt_call *c, gt_rt_detail *d, cudaError_t r)
{
    uint64_t t1 = gt_clock_ticks();
    int saved = errno;
    gt_rt_current = NULL;
    uint32_t site = 0;
    gt_event *ev = begin(c);
    if (ev && d->filled) {
        /* The driver's description; the flags (async, blocking) are the
         * runtime call's own: what the program asked for, whatever driver
         * call the runtime chose. */
        const gt_event *w = &d->work;
        ev->kind = w->kind;
        ev->flags = (uint8_t)(c->flags | (w->flags & GT_EVF_CAPTURED));
        ev->device = w->device;
        ev->name = w->name;
        ev->bytes = w->bytes;
        ev->stream = w->stream;
        memcpy(&ev->u, &w->u, sizeof ev->u);
        /* Memory is named by the runtime call's own arguments and result:
         * the runtime may allocate for itself under it (initialising)
         * before the driver call that serves the program. */
        if (c->kind == GT_EV_ALLOC || c->kind == GT_EV_FREE) {
            ev->bytes = c->bytes;
            memcpy(&ev->u, &c->u, sizeof ev->u);
            ev->u.mem.ctx = w->u.mem.ctx; /* the context the driver call saw */
        }
    } else if (ev) {
        describe(c, r == cudaSuccess ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN, ev);
    }
    if (ev) {
        finish(ev, c, r, t1);
        ev->flags |= GT_EVF_RUNTIME;
        site = ev->site;
    }
    commit(ev, d->pair, c);
    if (GT_UNLIKELY(gt_checksum_on()) && r == cudaSuccess) checksum_after(c, site);
    errno = saved;
}
