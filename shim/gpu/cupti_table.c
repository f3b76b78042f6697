/* The correlation table (cupti_internal.h): direct-mapped on the
 * correlation id, a slot per id modulo a power of two. Draining thread
 * only.
 *
 * CUPTI hands correlation ids out in sequence, so the entries alive at
 * once are ids close together: each has a slot of its own, records that
 * come together (a buffer's) and the calls the drain resolves in turn sit
 * in neighbouring slots, and adding, finding and removing are one slot
 * each, whatever the backlog. (Open addressing cost a cache miss per
 * record with a scattering hash, and whole-table scans on removal with
 * the id as its own hash.)
 *
 * Bounded: `slots` entries and an eighth as many overflow slots, from an
 * eighth of GPUTRACE_BUFFER_MB. An entry normally leaves when the record
 * of its call takes it. One still there when an id `slots` later needs
 * its slot moves to the overflow slots, direct-mapped too: a thread that
 * lost its core right after its calls leaves up to a chunk of records
 * unpublished while the other threads make a whole table's worth of
 * calls, and those entries must wait for it. One that no call takes (the
 * call's record was dropped, or made inside the shim) is pushed out of
 * the overflow by the next one that needs its place, and counted; its
 * main slot remembers the id pushed out, so that a call asking for it
 * later is told its records are gone rather than left to wait for them.
 *
 * A graph launch's kernel nodes hang off its entry in a list through a
 * node store, bounded as the entries are; a node past the bound is
 * dropped and counted (the launch keeps its span). */
#include "cupti_internal.h"

#include <stdlib.h>
#include <string.h>

#define SLOTS_MIN 4096u
#define SLOTS_MAX (1u << 22)
#define OVERFLOW_SHARE 8u

static gt_cupti_entry *table;        /* n_slots entries */
static uint32_t n_slots = SLOTS_MIN; /* a power of two */
static gt_cupti_entry *overflow;     /* n_slots / OVERFLOW_SHARE entries */
static uint32_t count;
static uint64_t evicted;
static gt_cupti_node *node_store; /* n_slots nodes */
static uint32_t node_free;        /* the first free node's index + 1 */
static uint32_t nodes_made;       /* nodes ever taken from the store's end */
static uint64_t nodes_dropped;
static int unavailable; /* no memory for the table: every record is counted evicted */

void gt_cupti_table_init(size_t event_buffer_bytes)
{
    size_t per_slot =
        sizeof(gt_cupti_entry) + sizeof(gt_cupti_entry) / OVERFLOW_SHARE + sizeof(gt_cupti_node);
    size_t want = event_buffer_bytes / 8 / per_slot;
    uint32_t n = SLOTS_MIN;
    while (n < SLOTS_MAX && (size_t)n * 2 <= want)
        n *= 2;
    n_slots = n;
}

static int ensure(void)
{
    if (table) return 0;
    if (unavailable) return -1;
    table = calloc(n_slots, sizeof *table);
    overflow = calloc(n_slots / OVERFLOW_SHARE, sizeof *overflow);
    node_store = malloc((size_t)n_slots * sizeof *node_store);
    if (!table || !overflow || !node_store) {
        free(table);
        free(overflow);
        free(node_store);
        table = NULL;
        overflow = NULL;
        node_store = NULL;
        unavailable = 1;
        return -1;
    }
    return 0;
}

static inline gt_cupti_entry *slot_of(uint32_t corr)
{
    return &table[corr & (n_slots - 1)];
}

static inline gt_cupti_entry *overflow_of(uint32_t corr)
{
    return &overflow[corr & (n_slots / OVERFLOW_SHARE - 1)];
}

static void free_nodes(uint32_t list)
{
    while (list) {
        gt_cupti_node *n = &node_store[list - 1];
        uint32_t next = n->next;
        n->next = node_free;
        node_free = list;
        list = next;
    }
}

/* Empties e's slot (main or overflow). */
static void clear(gt_cupti_entry *e)
{
    *e = (gt_cupti_entry){.pushed_out = e->pushed_out};
    count--;
}

/* Makes room in corr's main slot: a live entry there moves to the
 * overflow, pushing out the one it finds there. */
static void make_room(gt_cupti_entry *e)
{
    gt_cupti_entry *o = overflow_of(e->corr);
    if (o->corr) {
        free_nodes(o->nodes);
        slot_of(o->corr)->pushed_out = o->corr;
        clear(o);
        evicted++;
    }
    *o = *e;
    *e = (gt_cupti_entry){.pushed_out = e->pushed_out};
}

void gt_cupti_table_add(uint32_t corr, uint64_t start, uint64_t end, uint16_t device,
                        uint64_t now_ns, int forced)
{
    if (!corr) return;
    if (ensure() != 0) {
        evicted++;
        return;
    }
    gt_cupti_entry *e = slot_of(corr);
    if (e->corr != corr && overflow_of(corr)->corr == corr) e = overflow_of(corr);
    if (e->corr != corr) {
        if (e->corr) make_room(e);
        *e = (gt_cupti_entry){.corr = corr, .device = device, .pushed_out = e->pushed_out};
        count++;
    }
    if (e->records < UINT16_MAX) e->records++;
    e->updated = now_ns;
    if (!start || !end || end < start) {
        if (e->untimed < UINT16_MAX) e->untimed++;
        e->running |= (uint8_t)(forced != 0);
        return;
    }
    if (!e->start || start < e->start) e->start = start;
    if (end > e->end) e->end = end;
}

const gt_cupti_entry *gt_cupti_table_find(uint32_t corr)
{
    if (!table || !corr) return NULL;
    gt_cupti_entry *e = slot_of(corr);
    if (e->corr == corr) return e;
    e = overflow_of(corr);
    return e->corr == corr ? e : NULL;
}

int gt_cupti_table_pushed_out(uint32_t corr)
{
    return table && corr && slot_of(corr)->pushed_out == corr;
}

void gt_cupti_table_add_node(uint32_t corr, const gt_cupti_node *node)
{
    gt_cupti_entry *e = (gt_cupti_entry *)gt_cupti_table_find(corr);
    if (!e) return;
    uint32_t i = node_free;
    if (i) {
        node_free = node_store[i - 1].next;
    } else if (nodes_made < n_slots) {
        i = ++nodes_made;
    } else {
        nodes_dropped++;
        return;
    }
    node_store[i - 1] = *node;
    node_store[i - 1].next = e->nodes;
    e->nodes = i;
}

void gt_cupti_table_remove(uint32_t corr, uint32_t *nodes)
{
    if (nodes) *nodes = 0;
    gt_cupti_entry *e = (gt_cupti_entry *)gt_cupti_table_find(corr);
    if (!e) return;
    if (nodes)
        *nodes = e->nodes;
    else
        free_nodes(e->nodes);
    clear(e);
}

int gt_cupti_table_take_node(uint32_t *list, gt_cupti_node *out)
{
    if (!*list) return 0;
    uint32_t i = *list;
    *out = node_store[i - 1];
    *list = out->next;
    node_store[i - 1].next = node_free;
    node_free = i;
    return 1;
}

uint64_t gt_cupti_table_nodes_dropped(void)
{
    return nodes_dropped;
}

uint64_t gt_cupti_table_evicted(void)
{
    return evicted;
}

size_t gt_cupti_table_count(void)
{
    return count;
}

size_t gt_cupti_table_slots(void)
{
    return n_slots;
}

void gt_cupti_table_free(void)
{
    free(table);
    free(overflow);
    free(node_store);
    gt_cupti_table_forget();
}

void gt_cupti_table_forget(void)
{
    table = NULL;
    overflow = NULL;
    node_store = NULL;
    node_free = nodes_made = 0;
    count = 0;
    unavailable = 0;
}
