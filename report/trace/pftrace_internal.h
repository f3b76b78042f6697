/* The Perfetto trace's state, shared by pftrace.c (records into events),
 * pftrace_tracks.c (tracks and their sequences) and pftrace_packet.c
 * (the packets' encoding and interning). */
#ifndef GT_PFTRACE_INTERNAL_H
#define GT_PFTRACE_INTERNAL_H

#include <stdbool.h>

#include "deflate.h"
#include "event.h"
#include "keyed.h"
#include "memory_table.h"
#include "outbuf.h"
#include "pftrace.h"
#include "strtab.h"
#include "timeline.h"
#include "trace_format.h"

/* Field numbers and values from Perfetto's protos (protos/perfetto/trace/:
 * trace.proto, trace_packet.proto, trace_packet_defaults.proto,
 * clock_snapshot.proto, interned_data/interned_data.proto,
 * track_event/{track_event,track_descriptor,process_descriptor,
 * thread_descriptor,counter_descriptor,debug_annotation}.proto). */
enum {
    PB_TRACE_PACKET = 1, /* Trace */

    PB_PACKET_CLOCK_SNAPSHOT = 6, /* TracePacket */
    PB_PACKET_TIMESTAMP = 8,
    PB_PACKET_SEQUENCE_ID = 10, /* trusted_packet_sequence_id */
    PB_PACKET_TRACK_EVENT = 11,
    PB_PACKET_INTERNED_DATA = 12,
    PB_PACKET_SEQUENCE_FLAGS = 13,
    PB_PACKET_COMPRESSED = 50, /* compressed_packets */
    PB_PACKET_CLOCK_ID = 58,   /* timestamp_clock_id */
    PB_PACKET_DEFAULTS = 59,   /* trace_packet_defaults */
    PB_PACKET_TRACK_DESCRIPTOR = 60,

    PB_DEFAULTS_CLOCK_ID = 58, /* TracePacketDefaults */
    PB_DEFAULTS_TRACK_EVENT = 11,
    PB_EVENT_DEFAULTS_TRACK_UUID = 11, /* TrackEventDefaults */

    PB_SNAPSHOT_CLOCK = 1, /* ClockSnapshot */
    PB_SNAPSHOT_PRIMARY_CLOCK = 2,
    PB_CLOCK_ID = 1, /* ClockSnapshot.Clock */
    PB_CLOCK_TIMESTAMP = 2,
    PB_CLOCK_INCREMENTAL = 3,

    PB_EVENT_CATEGORY_IIDS = 3, /* TrackEvent */
    PB_EVENT_DEBUG_ANNOTATION = 4,
    PB_EVENT_TYPE = 9,
    PB_EVENT_NAME_IID = 10,
    PB_EVENT_COUNTER_VALUE = 30,
    PB_EVENT_DOUBLE_COUNTER_VALUE = 44,
    PB_EVENT_FLOW_IDS = 47,
    PB_EVENT_TERMINATING_FLOW_IDS = 48,

    PB_ARG_NAME_IID = 1, /* DebugAnnotation */
    PB_ARG_UINT = 3,
    PB_ARG_STRING = 6,
    PB_ARG_STRING_IID = 17,

    PB_DESC_UUID = 1, /* TrackDescriptor */
    PB_DESC_NAME = 2,
    PB_DESC_PROCESS = 3,
    PB_DESC_THREAD = 4,
    PB_DESC_PARENT = 5,
    PB_DESC_COUNTER = 8,
    PB_PROCESS_PID = 1, /* ProcessDescriptor */
    PB_PROCESS_NAME = 6,
    PB_THREAD_PID = 1, /* ThreadDescriptor */
    PB_THREAD_TID = 2,
    PB_THREAD_NAME = 5,
    PB_COUNTER_UNIT = 3, /* CounterDescriptor */

    PB_INTERNED_CATEGORIES = 1, /* InternedData */
    PB_INTERNED_NAMES = 2,
    PB_INTERNED_ARG_NAMES = 3,
    PB_INTERNED_STRINGS = 29, /* debug_annotation_string_values */
    PB_INTERNED_IID = 1,      /* EventCategory, EventName, DebugAnnotationName, InternedString */
    PB_INTERNED_TEXT = 2,
};

enum { PF_SLICE_BEGIN = 1, PF_SLICE_END = 2, PF_INSTANT = 3, PF_COUNTER = 4 }; /* TrackEvent.Type */
#define PF_SEQ_INCREMENTAL_STATE_CLEARED 1u
#define PF_CLOCK_MONOTONIC 3u /* BuiltinClock: the trace's clock */
#define PF_CLOCK_SEQUENCE 64u /* the first sequence-scoped clock id */
#define PF_UNIT_SIZE_BYTES 3u /* CounterDescriptor.Unit */

/* Debug annotation names: their iids. */
enum pf_arg_name {
    PF_ARG_GRID = 1,
    PF_ARG_BLOCK,
    PF_ARG_SHARED,
    PF_ARG_BYTES,
    PF_ARG_KERNEL,
    PF_ARG_PROGRAM,
    PF_ARG_ERROR,
    PF_ARG_DOMAIN,
    PF_ARG_CATEGORY,
    PF_ARG_COLOR,
    PF_ARG_SITE,
    PF_ARG_COUNT
};

/* Interned iids: event names and annotation strings are numbered in
 * parts, the part in the low bits, so that every source has its own
 * numbers without a table. */
#define PF_IID(part, k) ((uint64_t)(k) << 2 | (uint64_t)(part))
enum pf_name_part { PF_NAME_STRING = 1, PF_NAME_FIXED = 2 }; /* event names */
enum pf_str_part { PF_STR_STRING = 1, PF_STR_DIMS = 2 };     /* annotation strings */
/* Fixed event names: the copy labels, then these. */
#define PF_COPY_LABELS ((GT_DIR_COUNT + 1) * (GT_HOST_COUNT + 1) * 2)
enum { PF_FIXED_MEMSET = PF_COPY_LABELS, PF_FIXED_GRAPH, PF_FIXED_UNNAMED, PF_FIXED_NAMES };

/* A debug annotation. */
enum pf_value { PF_UINT, PF_INTERNED, PF_TEXT };
typedef struct pf_arg {
    uint8_t name;     /* enum pf_arg_name */
    uint8_t kind;     /* enum pf_value */
    uint64_t value;   /* PF_UINT: the number; PF_INTERNED: the string's iid */
    const char *text; /* PF_TEXT */
    size_t len;
} pf_arg;

#define PF_MAX_ARGS 6u

/* A TrackEvent about to be written. */
typedef struct pf_event {
    uint8_t type;
    uint8_t category; /* enum gt_category + 1; 0: none */
    uint8_t nargs;
    uint64_t ts;
    uint64_t name;              /* event name iid; 0: none */
    uint64_t flow_out, flow_in; /* flow ids started, ended; 0: none */
    uint64_t counter;
    double counter_double; /* the value when is_double: an NVTX counter's */
    bool is_double;
    pf_arg args[PF_MAX_ARGS];
} pf_event;

#define PF_GIVEN 4u /* a power of two */

/* A track and the packet sequence that writes it. */
typedef struct pf_seq {
    uint64_t uuid;
    uint64_t last;       /* the incremental clock: the last time written as a delta */
    uint32_t categories; /* bit c: category c interned here */
    uint32_t arg_names;  /* bit a: annotation name a interned here */
    /* Interning cache keys this sequence was given lately, by their low
     * bits: a track names a few things over and over, found here without
     * a look in the cache (which only ever forgets: a key here stays true). */
    uint64_t given[PF_GIVEN];
} pf_seq;

/* A GPU stream's lanes: sequences, and the end of each one's last slice. */
typedef struct pf_stream {
    uint32_t index; /* in streams */
    uint16_t device;
    uint64_t stream;
    uint32_t nlanes;
    uint32_t lanes[GT_PFTRACE_MAX_LANES];
    uint64_t ends[GT_PFTRACE_MAX_LANES];
} pf_stream;

typedef struct pf_device {
    int32_t device;   /* CUDA ordinal, or GT_MEM_HOST_DEVICE */
    uint64_t group;   /* its "GPU d" track's uuid; 0 until written */
    uint32_t counter; /* its memory counter's sequence + 1; 0: none yet */
} pf_device;

typedef struct pf_thread {
    uint32_t seq;
} pf_thread;

/* The push/pop ranges open on a (thread, domain): only how many, since a
 * range's BEGIN is written when it opens. */
typedef struct pf_stack {
    uint32_t seq;
    uint32_t depth;
    uint32_t overflow; /* pushes past GT_NVTX_MAX_DEPTH not yet popped */
} pf_stack;

/* A start/end range whose other half has not come yet. */
typedef struct pf_range {
    uint64_t time; /* of the start, or of the end when it came first */
    uint32_t name, domain, category, color;
    bool ended; /* the end came first */
} pf_range;

/* Launch dimensions that were interned: (x, y, z). */
typedef struct pf_dims {
    uint32_t v[3];
} pf_dims;

#define PF_SEEN_BITS 16u /* the interning cache: 2^16 entries */
#define PF_MAX_SEQUENCES (1u << 20)
#define PF_MAX_DIMS 65536u
#define PF_MAX_READABLE 65536u

/* Packets are written to out, whose flushes hand bundles of whole packets
 * of about this many bytes to be deflated into file's buffer. */
#define PF_BUNDLE_BYTES (128u << 10)
#define PF_FILE_BUFFER_BYTES (256u << 10)

struct gt_pftrace {
    gt_trace_common common; /* first (trace_format.h): the file, bundles of packets
                               deflated, and what was left out */
    gt_outbuf out;          /* the packets, as they are */
    gt_deflate *deflate;
    uint8_t *zbuf; /* a bundle's zlib stream */
    size_t zcap;
    const gt_strtab *names;
    int pid;
    unsigned categories;
    uint64_t uuid_base; /* pid << 32: track uuids and flow ids of this process */
    uint64_t process;   /* the process track's uuid */
    uint64_t flows;     /* flows so far: the last one's number */
    gt_memory *memory; /* followed for the counter, NULL when not */

    gt_keyed seqs;    /* pf_seq by index: sequence i has id i + 1 */
    uint64_t *seen;   /* the interning cache: (sequence, table, iid) + 1, 0 empty */
    gt_keyed threads; /* pf_thread by tid */
    gt_keyed streams; /* pf_stream by stream ^ device << 48 */
    gt_keyed devices; /* pf_device by device row */
    gt_keyed stacks;  /* pf_stack by tid | domain << 32 */
    gt_keyed ranges;  /* pf_range by range id */
    pf_stream async;  /* the lanes of start/end ranges */
    gt_keyed dims;    /* pf_dims by a hash of them */
    gt_keyed readable; /* char * by string id: Numba names as shown (display_name.h) */
    gt_keyed counters; /* pf_thread (a counter's sequence) by domain << 32 | name */

    /* The last thread, stream and launch dimensions looked up: records
     * come in runs from one thread (a drained chunk), and a run mostly
     * launches the same kernels on the same streams. */
    uint32_t last_tid, last_thread_seq; /* last_thread_seq + 1; 0: none */
    uint64_t last_stream_key;
    uint32_t last_stream; /* index + 1; 0: none */
    uint32_t last_dims[2][3];
    uint64_t last_dims_iid[2]; /* 0: none */
};

/* pftrace_packet.c */

/* Writes an event on sequence seq (an index into seqs), interning what
 * it names that the sequence may not have been given. */
void gt_pf_event(gt_pftrace *t, uint32_t seq, const pf_event *e);
/* A slice's END: the fast path of gt_pf_event. */
void gt_pf_end(gt_pftrace *t, uint32_t seq, uint64_t ts);

/* The first packet of a new sequence: its incremental state cleared, its
 * defaults (its track, its clock) and its clock starting at t0. */
void gt_pf_sequence_start(gt_pftrace *t, uint32_t seq, uint64_t t0);

/* A TrackDescriptor. Kinds: the process (pid, name), a thread (tid,
 * name), a named track (parent, name), a counter (parent, name, bytes). */
typedef struct pf_track {
    uint64_t uuid, parent;
    const char *name; /* NULL: none */
    uint32_t tid;     /* a thread's */
    bool process, thread, counter;
    bool unitless; /* a counter of no unit Perfetto knows (NVTX's) */
} pf_track;
void gt_pf_descriptor(gt_pftrace *t, const pf_track *track);

/* The text of an interned string value or event name iid. */
const char *gt_pf_string_text(gt_pftrace *t, uint64_t iid, char *buf, size_t cap);
const char *gt_pf_name_text(gt_pftrace *t, uint64_t iid, char *buf, size_t cap);

/* pftrace_tracks.c */

static inline pf_seq *gt_pf_seq(const gt_pftrace *t, uint32_t seq)
{
    return (pf_seq *)gt_keyed_at(&t->seqs, seq);
}

void gt_pf_state_init(gt_pftrace *t);

/* A new sequence (and track) of a fresh uuid; its index, or UINT32_MAX
 * past the cap or out of memory. Nothing is written yet. */
uint32_t gt_pf_new_sequence(gt_pftrace *t);

/* The sequence of a thread's track, started at t0 when new; UINT32_MAX
 * (counted) past the cap. */
uint32_t gt_pf_thread(gt_pftrace *t, uint32_t tid, uint64_t t0);
void gt_pf_thread_name(gt_pftrace *t, uint32_t tid, uint32_t name, uint64_t at);

/* The lane of GPU work [start, end) on (device, stream): the first whose
 * last slice ended by start, a new one when none did; UINT32_MAX past
 * the caps, the loss counted by its cause (lanes, tracks). */
uint32_t gt_pf_gpu_lane(gt_pftrace *t, uint16_t device, uint64_t stream, uint64_t start,
                        uint64_t end);
/* The same for a start/end range (range_lanes, ranges). */
uint32_t gt_pf_range_lane(gt_pftrace *t, uint64_t start, uint64_t end);

/* The memory counter's sequence of a device row, started at t0 when new. */
uint32_t gt_pf_counter(gt_pftrace *t, int32_t device, uint64_t t0);

/* The track of an NVTX counter (domain, name), started at t0 when new;
 * UINT32_MAX past the cap. */
uint32_t gt_pf_nvtx_counter(gt_pftrace *t, uint32_t domain, uint32_t name, uint64_t t0);

/* The push/pop stack of (tid, domain), its track made when new; NULL
 * past the caps or out of memory. */
pf_stack *gt_pf_stack(gt_pftrace *t, uint32_t tid, uint32_t domain, uint64_t t0);

/* The iid of launch dimensions as an annotation string (which: 0 grid,
 * 1 block, for the cache); 0 past the cap (the caller writes them as
 * text). */
uint64_t gt_pf_dims_iid(gt_pftrace *t, unsigned which, const uint32_t v[3]);

void gt_pf_state_free(gt_pftrace *t);

#endif
