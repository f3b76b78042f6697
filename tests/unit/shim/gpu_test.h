/* What the GPU-timing tests share: the emulated driver set up with known
 * kernel and copy durations, operations bracketed as a hook brackets
 * them, and a consumer that keeps the resolved records.
 *
 * The tests run against the emulated libcuda.so.1 (tests/emu): every
 * stream has a virtual clock in CLOCK_MONOTONIC ns, so a kernel's GPU time
 * is exactly its configured duration (GPU_TEST_KERNEL_NS). */
#ifndef GT_GPU_TEST_H
#define GT_GPU_TEST_H

#include <cuda.h>
#include <stdint.h>

#include "gpu_time.h"
#include "event.h"

/* Configured durations (GPUTRACE_EMU_KERNEL_NS, set by gpu_test_init). */
#define K_SHORT_NS 50000u     /* k_short */
#define K_TINY_NS 2000u       /* k_tiny */
#define K_LONG_NS 100000000u  /* k_long: holds a stream while more is queued */
#define COPY_GBPS_PINNED 10.0 /* GB/s */

/* Durations from events are float milliseconds: 1 us covers their
 * rounding. */
#define DURATION_TOLERANCE_NS 1000u

enum gpu_test_kernel { K_ZERO, K_TINY, K_SHORT, K_LONG, K_COUNT };

/* Sets the emulator's configuration, cuInit, the real-driver table. */
void gpu_test_init(void);

/* A new context, current on the calling thread, with the test module
 * loaded into it. */
CUcontext gpu_test_context(void);
CUfunction gpu_test_kernel(enum gpu_test_kernel k);

/* Launches kernel k on s (with the _ptsz entry point when per_thread). */
void gpu_test_launch(enum gpu_test_kernel k, CUstream s, int per_thread);

/* The real driver's export (the shim's gt_cuda_real). */
void *gpu_test_sym(const char *name);

/* Starts a pipeline with no drain thread (gpu_test_drain runs it) or with
 * one; records are kept by the test consumer. */
void gpu_test_pipeline(int drain_thread);
/* Publishes this thread's records and runs one drain pass here. */
void gpu_test_drain(void);

/* Brackets work(s, per_thread, arg) as a hook does: begin, the work, end,
 * record, attach. `tag` goes into the record (u.kernel.func); host_start
 * and host_end are CLOCK_MONOTONIC ns around the whole. Returns whether a
 * pair was used. */
typedef CUresult (*gpu_test_work)(CUstream s, int per_thread, void *arg);
int gpu_test_timed(CUstream s, int per_thread, uint64_t tag, gpu_test_work work, void *arg);

/* The same around kernel k. */
int gpu_test_timed_kernel(enum gpu_test_kernel k, CUstream s, int per_thread, uint64_t tag);

/* Drains until n records were consumed since gpu_test_keep (fails after
 * a few seconds). */
void gpu_test_drain_until(uint64_t n);

/* Records the consumer kept (in consumption order), and how many. */
typedef struct gpu_test_records {
    gt_event *ev;
    uint64_t n, timed, untimed;
} gpu_test_records;
const gpu_test_records *gpu_test_kept(void);
void gpu_test_keep(uint64_t capacity); /* forget all, keep up to capacity from now */

/* The record with `tag`, or NULL. */
const gt_event *gpu_test_find(uint64_t tag);

/* Fails unless ev is timed and its GPU duration is want_ns (+- 1 us). */
void gpu_test_assert_duration(const gt_event *ev, uint64_t want_ns);

/* The tolerance when comparing GPU times with host times: the widest
 * epoch uncertainty so far plus float rounding. */
uint64_t gpu_test_host_tolerance(void);

/* gtemu introspection counters. */
uint64_t gpu_test_event_records(void);
uint64_t gpu_test_capture_event_records(void);
uint64_t gpu_test_events_created(void);

/* Calls of the test stand-in for gt_exit_cut. */
extern int gpu_test_shutdown_calls;
extern void (*gpu_test_on_shutdown)(void);

#endif
