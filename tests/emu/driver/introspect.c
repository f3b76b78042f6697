/* gtemu_* introspection for tests and the GPUTRACE_EMU_STATS file. */
#include "emu.h"

#include "gtemu.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct gt_counters gt_counters;

static uint64_t read_counter(_Atomic uint64_t *c)
{
    return atomic_load_explicit(c, memory_order_relaxed);
}

GT_EXPORT uint64_t gtemu_launches(void)
{
    return read_counter(&gt_counters.launches);
}

GT_EXPORT uint64_t gtemu_graph_launches(void)
{
    return read_counter(&gt_counters.graph_launches);
}

GT_EXPORT uint64_t gtemu_event_records(void)
{
    return read_counter(&gt_counters.event_records);
}

GT_EXPORT uint64_t gtemu_capture_event_records(void)
{
    return read_counter(&gt_counters.capture_event_records);
}

GT_EXPORT uint64_t gtemu_events_created(void)
{
    return read_counter(&gt_counters.events_created);
}

GT_EXPORT uint64_t gtemu_proc_address_requests(void)
{
    return read_counter(&gt_counters.proc_address_requests);
}

GT_EXPORT void gtemu_reset(void)
{
    _Atomic uint64_t *all[] = {&gt_counters.launches,       &gt_counters.graph_launches,
                               &gt_counters.event_records,  &gt_counters.capture_event_records,
                               &gt_counters.events_created, &gt_counters.proc_address_requests};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        atomic_store_explicit(all[i], 0, memory_order_relaxed);
}

GT_EXPORT uint64_t gtemu_kernel_ns(const char *name)
{
    return gt_kernel_duration(name);
}

GT_EXPORT uint64_t gtemu_transfer_ns(size_t bytes, const char *kind)
{
    const struct gt_config *c = gt_config_get();
    const struct {
        const char *name;
        double gbps;
    } rates[] = {{"pageable", c->gbps_pageable},
                 {"pinned", c->gbps_pinned},
                 {"dtod", c->gbps_dtod},
                 {"memset", c->gbps_memset},
                 {"peer", c->gbps_peer}};
    for (size_t i = 0; kind && i < sizeof rates / sizeof rates[0]; i++)
        if (!strcmp(kind, rates[i].name)) return gt_bytes_duration(bytes, rates[i].gbps);
    return 0;
}

/* The process that loaded the library writes the file; forked children
 * inherit the destructor but not the right to overwrite it. */
static pid_t owner_pid;

__attribute__((constructor)) static void remember_owner(void)
{
    owner_pid = getpid();
}

void gt_stats_write(void)
{
    const char *path = gt_config_get()->stats_path;
    if (!path || getpid() != owner_pid) return;
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "gputrace-emu: warning: cannot write GPUTRACE_EMU_STATS='%s'\n", path);
        return;
    }
    fprintf(f,
            "{\"launches\": %llu, \"graph_launches\": %llu, \"event_records\": %llu, "
            "\"capture_event_records\": %llu, \"events_created\": %llu, "
            "\"proc_address_requests\": %llu}\n",
            (unsigned long long)gtemu_launches(), (unsigned long long)gtemu_graph_launches(),
            (unsigned long long)gtemu_event_records(),
            (unsigned long long)gtemu_capture_event_records(),
            (unsigned long long)gtemu_events_created(),
            (unsigned long long)gtemu_proc_address_requests());
    fclose(f);
}

/* Runs at exit (and dlclose). Only writes a file: never waits for workers. */
__attribute__((destructor)) static void write_stats_at_exit(void)
{
    gt_stats_write();
}
