/* The Perfetto trace (SPEC §11, `<template>.pftrace`): Perfetto's native
 * protobuf format, a `Trace` of `TracePacket`s, streamed as the records
 * come like the Chrome trace (chrome.h) and drawing the same things, at a
 * fraction of its size, in a form the Perfetto UI loads at any length.
 *
 * Tracks (TrackDescriptor, children named under their parents):
 *   the process (ProcessDescriptor: pid, program name);
 *   a thread track per host thread (ThreadDescriptor, its NVTX name);
 *   per non-default NVTX domain used on a thread, a track of that
 *     thread named by the domain, so that ranges of different domains,
 *     which need not nest with each other, never share a stack;
 *   "GPU d", a track per device under the process, and under it the
 *     tracks of its streams ("GPU d stream 0x..."), and "GPU d memory",
 *     a counter track (bytes) of device memory in use ("host pinned
 *     memory" under the process);
 *   "NVTX start/end ranges" under the process for start/end ranges.
 * Events (TrackEvent):
 *   slices (a BEGIN and an END: the format has no complete event) for
 *     host API calls on their thread, GPU work at its GPU times on its
 *     stream, NVTX push/pop ranges on their thread (or domain track) and
 *     start/end ranges; instants for NVTX marks; counter values for the
 *     memory in use after each change, in time order (gt_memory's sink);
 *   categories (kernel, memcpy, ... as in the report) and names interned;
 *   debug annotations, only what neither the name nor the track says:
 *     kernels' "grid", "block", "shared memory"; copies' and memsets'
 *     "bytes" (a copy's direction and host memory are in its name, its
 *     stream is its track's name); host calls' "bytes" or "kernel" when no
 *     GPU slice carries them, "program", "error"; NVTX "domain",
 *     "category", "color";
 *   flows: the launching call's slice starts one (flow_ids) that the GPU
 *     slice ends (terminating_flow_ids).
 *
 * Encoding, for size (a record costs tens of bytes, not hundreds):
 *   one packet sequence per track (trusted_packet_sequence_id), whose
 *     first packet clears its incremental state, sets the defaults (the
 *     track, the clock) and a sequence-scoped incremental clock: each
 *     timestamp is the nanoseconds since the sequence's previous one. A
 *     time earlier than that (a host call that another recorded call ran
 *     inside arrives after it) is written absolute, on CLOCK_MONOTONIC,
 *     the trace's clock (times are the records' CLOCK_MONOTONIC ns);
 *   names, categories, annotation names and repeated annotation strings
 *     (kernel, domain and error names, launch dimensions, streams)
 *     interned per sequence: a string is written in the packet that first
 *     uses it, and again only when the fixed-size cache that remembers
 *     what each sequence was given has forgotten it (re-emitting an
 *     interned string unchanged is allowed), so memory stays bounded;
 *   the packets deflated in bundles of about 128 KiB: each bundle is one
 *     packet of compressed_packets, a zlib stream of the bundle's packets
 *     as Trace bytes, which the reader reads in its place (deflate.h). A
 *     bundle that would not shrink (a tiny trace) is written as it is.
 *     The packets are a few shapes repeating with a new time delta and
 *     flow id, so a bundle shrinks five- or sixfold.
 * Timestamps on one sequence may go back; the reader sorts. What it
 * cannot sort out is two slices of one track out of order that touch or
 * overlap (GPU work of two threads on one stream arrives a chunk at a
 * time, event timing can overlap neighbours by a little): so a stream,
 * and the start/end ranges, are drawn on as many lanes (tracks of the
 * same name under the same parent, which the UI shows as one) as it
 * takes for every lane to be written in time order.
 *
 * Memory: the bundle and file buffers, the compressor's tables, a fixed
 * interning cache, and tables that grow with threads, streams, NVTX
 * stacks and open ranges, each capped as in the Chrome trace; what a cap
 * leaves out is counted by cause. */
#ifndef GT_PFTRACE_H
#define GT_PFTRACE_H

#include <stdint.h>

#include "aggregate.h"
#include "event.h"
#include "memory_table.h"
#include "report.h"
#include "strtab.h"
#include "timeline.h"

#define GT_PFTRACE_MAX_LANES 16u /* tracks per stream (and for start/end ranges) */

typedef struct gt_pftrace gt_pftrace;

/* A trace appending to fd (which stays the caller's); categories is a
 * GT_CAT_BIT mask. NULL when out of memory. */
gt_pftrace *gt_pftrace_create(int fd, const gt_strtab *names, int pid, unsigned categories);

/* The memory counter follows m, as gt_timeline_follow_memory. */
void gt_pftrace_follow_memory(gt_pftrace *t, gt_memory *m);

void gt_pftrace_add(gt_pftrace *t, const gt_event *ev);

/* Ends the ranges still open at p->end_ns, names the process and
 * flushes; stops following the memory. After gt_report_finish. 0, or -1
 * with errno set to the first write error. Nothing may be added after. */
int gt_pftrace_finish(gt_pftrace *t, const gt_process_info *p);

/* Its bytes so far and what it left out: gt_trace_bytes, gt_trace_losses
 * (trace_format.h). */

/* Frees the memory; the fd is not touched. */
void gt_pftrace_destroy(gt_pftrace *t);

#endif
