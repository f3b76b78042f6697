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

static const char *const load_apis[GT_LOAD_APIS] = {
    [GT_LOAD_MODULE] = "cuModuleLoad",
    [GT_LOAD_MODULE_DATA] = "cuModuleLoadData",
    [GT_LOAD_MODULE_DATA_EX] = "cuModuleLoadDataEx",
    [GT_LOAD_MODULE_FATBIN] = "cuModuleLoadFatBinary",
    [GT_LOAD_LIBRARY_DATA] = "cuLibraryLoadData",
    [GT_LOAD_LIBRARY_FILE] = "cuLibraryLoadFromFile",
};
static const char *const load_kinds[GT_LOAD_KINDS] = {"ptx", "cubin", "fatbin"};

void gt_count_load(enum gt_load_api api, int kind)
{
    if (kind >= 1 && kind <= GT_LOAD_KINDS) gt_count(&gt_counters.loads[api][kind - 1]);
}

GT_EXPORT uint64_t gtemu_loads(const char *api, const char *kind)
{
    for (int a = 0; api && kind && a < GT_LOAD_APIS; a++)
        for (int k = 0; k < GT_LOAD_KINDS; k++)
            if (!strcmp(api, load_apis[a]) && !strcmp(kind, load_kinds[k]))
                return read_counter(&gt_counters.loads[a][k]);
    return 0;
}

GT_EXPORT void gtemu_reset(void)
{
    for (int a = 0; a < GT_LOAD_APIS; a++)
        for (int k = 0; k < GT_LOAD_KINDS; k++)
            atomic_store_explicit(&gt_counters.loads[a][k], 0, memory_order_relaxed);
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
            "\"proc_address_requests\": %llu, \"loads\": {",
            (unsigned long long)gtemu_launches(), (unsigned long long)gtemu_graph_launches(),
            (unsigned long long)gtemu_event_records(),
            (unsigned long long)gtemu_capture_event_records(),
            (unsigned long long)gtemu_events_created(),
            (unsigned long long)gtemu_proc_address_requests());
    const char *sep = "";
    for (int a = 0; a < GT_LOAD_APIS; a++)
        for (int k = 0; k < GT_LOAD_KINDS; k++) {
            uint64_t n = read_counter(&gt_counters.loads[a][k]);
            if (!n) continue;
            fprintf(f, "%s\"%s %s\": %llu", sep, load_apis[a], load_kinds[k],
                    (unsigned long long)n);
            sep = ", ";
        }
    fprintf(f, "}}\n");
    fclose(f);
}

/* Runs at exit (and dlclose). Only writes a file: never waits for workers. */
__attribute__((destructor)) static void write_stats_at_exit(void)
{
    gt_stats_write();
}
