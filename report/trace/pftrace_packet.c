/* The Perfetto trace's packets: events, sequence starts, track
 * descriptors, and the interned data they bring along (see pftrace.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"
#include "display_name.h"
#include "event.h"
#include "keyed.h"
#include "outbuf.h"
#include "pb.h"
#include "pftrace.h"
#include "pftrace_internal.h"
#include "strtab.h"
#include "utf8.h"

/* A packet's fixed parts fit this (the largest, an event with every
 * annotation, is under 200 bytes); texts come on top, at 3 bytes per
 * byte (the worst case of their UTF-8 repair) and TEXT_ROOM each. */
#define PACKET_ROOM 384u
#define TEXT_ROOM 48u

/* The interning tables the cache remembers per sequence (categories and
 * annotation names, a handful, are bits in pf_seq). */
enum table { TABLE_NAMES, TABLE_STRINGS };

static const char *const arg_names[PF_ARG_COUNT] = {
    [PF_ARG_GRID] = "grid",   [PF_ARG_BLOCK] = "block",   [PF_ARG_SHARED] = "shared memory",
    [PF_ARG_BYTES] = "bytes", [PF_ARG_KERNEL] = "kernel", [PF_ARG_PROGRAM] = "program",
    [PF_ARG_ERROR] = "error", [PF_ARG_DOMAIN] = "domain", [PF_ARG_CATEGORY] = "category",
    [PF_ARG_COLOR] = "color", [PF_ARG_SITE] = "site",
};

/* --- the interning cache: which sequence was given which iid ---------- */

static uint64_t seen_key(uint32_t seq, enum table table, uint64_t iid)
{
    return ((uint64_t)seq << 40 | (uint64_t)table << 39 | iid) + 1;
}

static uint64_t *seen_slot(gt_pftrace *t, uint64_t key)
{
    return &t->seen[(key * 0x9E3779B97F4A7C15ull) >> (64 - PF_SEEN_BITS)];
}

/* What a packet must intern beyond what its sequence has. */
typedef struct intern {
    uint32_t field; /* InternedData's */
    uint64_t iid;
    uint64_t key;    /* in the cache, set once written */
    uint64_t *given; /* the sequence's slot for it, set then too */
    const char *text;
    size_t len;
    char buf[64];
} intern;

typedef struct plan {
    intern items[1 + PF_MAX_ARGS];
    unsigned n;
    uint32_t categories, arg_names; /* bits to intern */
    size_t room;
} plan;

static void need(gt_pftrace *t, plan *pl, pf_seq *s, uint32_t seq, enum table table, uint64_t iid)
{
    uint64_t key = seen_key(seq, table, iid);
    uint64_t *given = &s->given[(iid ^ table) & (PF_GIVEN - 1)];
    if (*given == key) return;
    if (*seen_slot(t, key) == key) {
        *given = key;
        return;
    }
    intern *it = &pl->items[pl->n++];
    it->field = table == TABLE_NAMES ? PB_INTERNED_NAMES : PB_INTERNED_STRINGS;
    it->iid = iid;
    it->key = key;
    it->given = given;
    it->text = table == TABLE_NAMES ? gt_pf_name_text(t, iid, it->buf, sizeof it->buf)
                                    : gt_pf_string_text(t, iid, it->buf, sizeof it->buf);
    it->len = strlen(it->text);
    pl->room += 3 * it->len + TEXT_ROOM;
}

/* --- texts ----------------------------------------------------------- */

/* A string field holding s as valid UTF-8. */
static uint8_t *put_text(uint8_t *p, uint32_t field, const char *s, size_t n)
{
    uint8_t *len_at;
    p = gt_pb_open(p, field, &len_at);
    p += gt_utf8_copy((char *)p, s, n);
    return gt_pb_close(len_at, p);
}

/* An interned entry: {iid, name}. */
static uint8_t *put_entry(uint8_t *p, uint32_t field, uint64_t iid, const char *s, size_t n)
{
    uint8_t *len_at;
    p = gt_pb_open(p, field, &len_at);
    p = gt_pb_uint(p, PB_INTERNED_IID, iid);
    p = put_text(p, PB_INTERNED_TEXT, s, n);
    return gt_pb_close(len_at, p);
}

/* String id's text, a Numba kernel's name as the verbose summary shows it
 * (kept, made once); as it is past the cap or out of memory. */
static const char *readable(gt_pftrace *t, uint32_t id)
{
    const char *text = gt_strtab_get(t->names, id);
    if (!gt_name_is_numba(text)) return text;
    char **kept = gt_keyed_find(&t->readable, id);
    if (kept) return *kept;
    char *made = gt_verbose_name(text);
    if (!made || !(kept = gt_keyed_add(&t->readable, id))) {
        free(made);
        return text;
    }
    *kept = made;
    return made;
}

const char *gt_pf_name_text(gt_pftrace *t, uint64_t iid, char *buf, size_t cap)
{
    uint64_t k = iid >> 2;
    if ((iid & 3) == PF_NAME_STRING) return readable(t, (uint32_t)k);
    if (k == PF_FIXED_MEMSET) return "memset";
    if (k == PF_FIXED_GRAPH) return GT_GRAPH_LAUNCH_NAME;
    if (k >= PF_COPY_LABELS) return "(unnamed kernel)";
    unsigned async = (unsigned)(k & 1), host = (unsigned)(k >> 1) % (GT_HOST_COUNT + 1),
             dir = (unsigned)(k >> 1) / (GT_HOST_COUNT + 1);
    gt_copy_label_format(buf, cap, (enum gt_copy_dir)dir, (enum gt_host_mem)host, async != 0);
    return buf;
}

const char *gt_pf_string_text(gt_pftrace *t, uint64_t iid, char *buf, size_t cap)
{
    uint32_t k = (uint32_t)(iid >> 2);
    if ((iid & 3) == PF_STR_STRING) return readable(t, k);
    const uint32_t *v = ((const pf_dims *)gt_keyed_at(&t->dims, k))->v;
    snprintf(buf, cap, "%u,%u,%u", v[0], v[1], v[2]);
    return buf;
}

/* --- packets --------------------------------------------------------- */

/* Room for a packet: the Trace's packet field opened, *frame its length. */
static uint8_t *open_packet(gt_pftrace *t, size_t room, uint8_t **frame)
{
    uint8_t *p = (uint8_t *)gt_outbuf_reserve(&t->out, room);
    if (!p) {
        t->common.lost.no_memory++;
        return NULL;
    }
    return gt_pb_open(p, PB_TRACE_PACKET, frame);
}

static void close_packet(gt_pftrace *t, uint8_t *frame, uint8_t *end)
{
    gt_outbuf_commit(&t->out, (char *)gt_pb_close(frame, end));
}

/* The packet's timestamp: a delta on the sequence's incremental clock,
 * or, earlier than its last, absolute on the trace's clock. */
static uint8_t *put_time(pf_seq *s, uint8_t *p, uint64_t ts)
{
    if (ts >= s->last) {
        p = gt_pb_uint(p, PB_PACKET_TIMESTAMP, ts - s->last);
        s->last = ts;
        return p;
    }
    p = gt_pb_uint(p, PB_PACKET_CLOCK_ID, PF_CLOCK_MONOTONIC);
    return gt_pb_uint(p, PB_PACKET_TIMESTAMP, ts);
}

static uint8_t *put_arg(uint8_t *p, const pf_arg *a)
{
    uint8_t *len_at;
    p = gt_pb_open(p, PB_EVENT_DEBUG_ANNOTATION, &len_at);
    p = gt_pb_uint(p, PB_ARG_NAME_IID, a->name);
    if (a->kind == PF_UINT)
        p = gt_pb_uint(p, PB_ARG_UINT, a->value);
    else if (a->kind == PF_INTERNED)
        p = gt_pb_uint(p, PB_ARG_STRING_IID, a->value);
    else
        p = put_text(p, PB_ARG_STRING, a->text, a->len);
    return gt_pb_close(len_at, p);
}

/* The interned data the plan found missing, now given to the sequence. */
static uint8_t *put_interned(gt_pftrace *t, pf_seq *s, plan *pl, uint8_t *p)
{
    uint8_t *len_at;
    p = gt_pb_open(p, PB_PACKET_INTERNED_DATA, &len_at);
    for (unsigned c = 1; c <= GT_CAT_COUNT; c++) {
        if (!(pl->categories & 1u << c)) continue;
        const char *name = gt_category_name((enum gt_category)(c - 1));
        p = put_entry(p, PB_INTERNED_CATEGORIES, c, name, strlen(name));
    }
    s->categories |= pl->categories;
    for (unsigned a = 1; a < PF_ARG_COUNT; a++)
        if (pl->arg_names & 1u << a)
            p = put_entry(p, PB_INTERNED_ARG_NAMES, a, arg_names[a], strlen(arg_names[a]));
    s->arg_names |= pl->arg_names;
    for (unsigned i = 0; i < pl->n; i++) {
        intern *it = &pl->items[i];
        p = put_entry(p, it->field, it->iid, it->text, it->len);
        *seen_slot(t, it->key) = it->key;
        *it->given = it->key;
    }
    return gt_pb_close(len_at, p);
}

void gt_pf_event(gt_pftrace *t, uint32_t seq, const pf_event *e)
{
    pf_seq *s = gt_pf_seq(t, seq);
    plan pl;
    pl.n = 0;
    pl.categories = e->category && !(s->categories & 1u << e->category) ? 1u << e->category : 0;
    pl.arg_names = 0;
    pl.room = PACKET_ROOM + (pl.categories ? TEXT_ROOM : 0);
    if (e->name) need(t, &pl, s, seq, TABLE_NAMES, e->name);
    for (unsigned i = 0; i < e->nargs; i++) {
        const pf_arg *a = &e->args[i];
        if (!(s->arg_names & 1u << a->name)) {
            pl.arg_names |= 1u << a->name;
            pl.room += TEXT_ROOM;
        }
        if (a->kind == PF_INTERNED) need(t, &pl, s, seq, TABLE_STRINGS, a->value);
        if (a->kind == PF_TEXT) pl.room += 3 * a->len + TEXT_ROOM;
    }
    uint8_t *frame, *p = open_packet(t, pl.room, &frame);
    if (!p) return;
    p = gt_pb_uint(p, PB_PACKET_SEQUENCE_ID, seq + 1);
    p = put_time(s, p, e->ts);
    uint8_t *len_at;
    p = gt_pb_open(p, PB_PACKET_TRACK_EVENT, &len_at);
    p = gt_pb_uint(p, PB_EVENT_TYPE, e->type);
    if (e->category) p = gt_pb_uint(p, PB_EVENT_CATEGORY_IIDS, e->category);
    if (e->name) p = gt_pb_uint(p, PB_EVENT_NAME_IID, e->name);
    if (e->type == PF_COUNTER && e->is_double) {
        uint64_t bits;
        memcpy(&bits, &e->counter_double, sizeof bits);
        p = gt_pb_fixed64(p, PB_EVENT_DOUBLE_COUNTER_VALUE, bits);
    } else if (e->type == PF_COUNTER) {
        p = gt_pb_uint(p, PB_EVENT_COUNTER_VALUE, e->counter);
    }
    if (e->flow_out) p = gt_pb_fixed64(p, PB_EVENT_FLOW_IDS, e->flow_out);
    if (e->flow_in) p = gt_pb_fixed64(p, PB_EVENT_TERMINATING_FLOW_IDS, e->flow_in);
    for (unsigned i = 0; i < e->nargs; i++)
        p = put_arg(p, &e->args[i]);
    p = gt_pb_close(len_at, p);
    if (pl.n || pl.categories || pl.arg_names) p = put_interned(t, s, &pl, p);
    close_packet(t, frame, p);
}

void gt_pf_end(gt_pftrace *t, uint32_t seq, uint64_t ts)
{
    uint8_t *frame, *p = open_packet(t, 64, &frame);
    if (!p) return;
    p = gt_pb_uint(p, PB_PACKET_SEQUENCE_ID, seq + 1);
    p = put_time(gt_pf_seq(t, seq), p, ts);
    uint8_t *len_at;
    p = gt_pb_open(p, PB_PACKET_TRACK_EVENT, &len_at);
    p = gt_pb_uint(p, PB_EVENT_TYPE, PF_SLICE_END);
    close_packet(t, frame, gt_pb_close(len_at, p));
}

/* {clock_id, timestamp[, is_incremental]} */
static uint8_t *put_clock(uint8_t *p, uint32_t id, uint64_t ts, bool incremental)
{
    uint8_t *len_at;
    p = gt_pb_open(p, PB_SNAPSHOT_CLOCK, &len_at);
    p = gt_pb_uint(p, PB_CLOCK_ID, id);
    p = gt_pb_uint(p, PB_CLOCK_TIMESTAMP, ts);
    if (incremental) p = gt_pb_uint(p, PB_CLOCK_INCREMENTAL, 1);
    return gt_pb_close(len_at, p);
}

void gt_pf_sequence_start(gt_pftrace *t, uint32_t seq, uint64_t t0)
{
    pf_seq *s = gt_pf_seq(t, seq);
    uint8_t *frame, *p = open_packet(t, PACKET_ROOM, &frame);
    if (!p) return;
    p = gt_pb_uint(p, PB_PACKET_SEQUENCE_ID, seq + 1);
    p = gt_pb_uint(p, PB_PACKET_SEQUENCE_FLAGS, PF_SEQ_INCREMENTAL_STATE_CLEARED);
    uint8_t *defaults, *event_defaults, *snapshot;
    p = gt_pb_open(p, PB_PACKET_DEFAULTS, &defaults);
    p = gt_pb_uint(p, PB_DEFAULTS_CLOCK_ID, PF_CLOCK_SEQUENCE);
    p = gt_pb_open(p, PB_DEFAULTS_TRACK_EVENT, &event_defaults);
    p = gt_pb_uint(p, PB_EVENT_DEFAULTS_TRACK_UUID, s->uuid);
    p = gt_pb_close(event_defaults, p);
    p = gt_pb_close(defaults, p);
    /* The sequence's clock starts where CLOCK_MONOTONIC is at t0; every
     * snapshot names CLOCK_MONOTONIC the trace's clock. */
    p = gt_pb_open(p, PB_PACKET_CLOCK_SNAPSHOT, &snapshot);
    p = put_clock(p, PF_CLOCK_SEQUENCE, t0, true);
    p = put_clock(p, PF_CLOCK_MONOTONIC, t0, false);
    p = gt_pb_uint(p, PB_SNAPSHOT_PRIMARY_CLOCK, PF_CLOCK_MONOTONIC);
    p = gt_pb_close(snapshot, p);
    close_packet(t, frame, p);
    s->last = t0;
}

/* Descriptors belong to no sequence: the reader takes them in first,
 * wherever they stand in the file. */
void gt_pf_descriptor(gt_pftrace *t, const pf_track *k)
{
    size_t name_len = k->name ? strlen(k->name) : 0;
    uint8_t *frame, *p = open_packet(t, PACKET_ROOM + 3 * name_len, &frame);
    if (!p) return;
    uint8_t *desc, *inner;
    p = gt_pb_open(p, PB_PACKET_TRACK_DESCRIPTOR, &desc);
    p = gt_pb_uint(p, PB_DESC_UUID, k->uuid);
    if (k->parent) p = gt_pb_uint(p, PB_DESC_PARENT, k->parent);
    if (k->process) {
        p = gt_pb_open(p, PB_DESC_PROCESS, &inner);
        p = gt_pb_uint(p, PB_PROCESS_PID, (uint32_t)t->pid);
        if (k->name) p = put_text(p, PB_PROCESS_NAME, k->name, name_len);
        p = gt_pb_close(inner, p);
    } else if (k->thread) {
        p = gt_pb_open(p, PB_DESC_THREAD, &inner);
        p = gt_pb_uint(p, PB_THREAD_PID, (uint32_t)t->pid);
        p = gt_pb_uint(p, PB_THREAD_TID, k->tid);
        if (k->name) p = put_text(p, PB_THREAD_NAME, k->name, name_len);
        p = gt_pb_close(inner, p);
    } else if (k->name) {
        p = put_text(p, PB_DESC_NAME, k->name, name_len);
    }
    if (k->counter) {
        p = gt_pb_open(p, PB_DESC_COUNTER, &inner);
        if (!k->unitless) p = gt_pb_uint(p, PB_COUNTER_UNIT, PF_UNIT_SIZE_BYTES);
        p = gt_pb_close(inner, p);
    }
    close_packet(t, frame, gt_pb_close(desc, p));
}
