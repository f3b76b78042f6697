/* The records the trace emitters (test_report_chrome.c and
 * test_report_pftrace.c `--emit`) add after the sample run, for their
 * checkers (report_chrome_check.py, report_pftrace_check.py). */
#ifndef TEST_TRACE_EMIT_H
#define TEST_TRACE_EMIT_H

#include "event.h"
#include "hex_names.h"
#include "report_sample.h"

#define BULK_LAUNCHES 60000u

/* Per hex-encoded name from names[0..n): a kernel of that name launched
 * (GPU time 5 us on stream 0x7f0000009000), launched again captured into
 * a graph (no GPU time: its host slice names it), a mark of that name,
 * and thread 100 + 3 + i named by it. Returns the host clock after. */
static inline uint64_t emit_hostile(sample *s, uint64_t t, char **names, int n)
{
    uint32_t launch = intern(s->names, "cuLaunchKernel");
    for (int i = 0; i < n; i++, t += 10000) {
        gt_event ev = kernel_event(intern_hex(s->names, names[i]), 100, t, t + 200, t + 5200);
        ev.api = launch;
        ev.stream = 0x7f0000009000ull;
        sample_add(s, ev);
        ev.flags |= GT_EVF_CAPTURED;
        sample_add(s, ev);
        ev = nvtx_event(GT_EV_NVTX_MARK, 100, t, 0, ev.name, 0);
        sample_add(s, ev);
        ev = host_event(GT_EV_THREAD_NAME, 100 + 3 + (uint32_t)i, 0, 0);
        ev.name = intern_hex(s->names, names[i]);
        sample_add(s, ev);
    }
    return t;
}

/* BULK_LAUNCHES launches of bulk_kernel(float*) on 2 devices x 3 streams
 * (i % 2, 0x7f000000a000 + 0x100 * (i % 3)), GPU durations 1000 + i % 1000
 * ns: several MiB of trace, many times a writer's buffer. Returns the
 * host clock after. */
static inline uint64_t emit_bulk(sample *s, uint64_t t)
{
    uint32_t launch = intern(s->names, "cuLaunchKernel"),
             bulk = intern(s->names, "bulk_kernel(float*)");
    for (uint32_t i = 0; i < BULK_LAUNCHES; i++, t += 3000) {
        gt_event ev = kernel_event(bulk, 200 + i % 2, t, t + 500, t + 500 + 1000 + i % 1000);
        ev.api = launch;
        ev.device = (uint16_t)(i % 2);
        ev.stream = 0x7f000000a000ull + 0x100 * (i % 3);
        sample_add(s, ev);
    }
    return t;
}

#endif
