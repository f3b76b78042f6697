/* The correlation table (cupti_internal.h): open addressing on the
 * correlation id with linear probing and backward-shift deletion (no
 * tombstones, however many ids come and go), kept below three quarters
 * full. Draining thread only.
 *
 * Bounded: at most `bound` entries, from an eighth of GPUTRACE_BUFFER_MB.
 * An entry normally leaves when the record of its call takes it; records
 * no call ever takes (the call's record was dropped, or made inside the
 * shim) would otherwise stay for ever, so a full table pushes out its
 * oldest entry, found through a ring of ids in insertion order. The ring
 * has room for twice the bound: an entry that left keeps its slot there
 * until the slot comes round, and a full ring holds at least `bound` such
 * slots to drop.
 *
 * A graph launch's kernel nodes hang off its entry in a list through a
 * node store, bounded as the entries are; a node past the bound is
 * dropped and counted (the launch keeps its span). */
#include "cupti_internal.h"

#include <stdlib.h>
#include <string.h>

#define BOUND_MIN 4096u
#define BOUND_MAX (1u << 22)

typedef struct ring_slot {
    uint32_t corr;
    uint64_t order;
} ring_slot;

static gt_cupti_entry *slots; /* capacity entries */
static uint32_t capacity;     /* a power of two */
static uint32_t count;
static uint32_t bound = BOUND_MIN;
static ring_slot *ring; /* 2 * bound slots: ids in insertion order */
static uint32_t ring_head, ring_len;
static uint64_t next_order = 1;
static uint64_t evicted;
static gt_cupti_node *node_store; /* bound nodes */
static uint32_t node_free;        /* the first free node's index + 1 */
static uint32_t nodes_made;       /* nodes ever taken from the store's end */
static uint64_t nodes_dropped;
static int unavailable; /* no memory for the table: every record is counted evicted */

void gt_cupti_table_init(size_t event_buffer_bytes)
{
    size_t n = event_buffer_bytes / 8 / (2 * sizeof(gt_cupti_entry) + sizeof(ring_slot));
    if (n < BOUND_MIN) n = BOUND_MIN;
    if (n > BOUND_MAX) n = BOUND_MAX;
    bound = (uint32_t)n;
}

static int ensure(void)
{
    if (slots) return 0;
    if (unavailable) return -1;
    uint32_t cap = 1;
    while (cap < bound + bound / 3 + 1)
        cap <<= 1;
    slots = calloc(cap, sizeof *slots);
    ring = calloc(2 * (size_t)bound, sizeof *ring);
    node_store = malloc((size_t)bound * sizeof *node_store);
    if (!slots || !ring || !node_store) {
        free(slots);
        free(ring);
        free(node_store);
        slots = NULL;
        ring = NULL;
        node_store = NULL;
        unavailable = 1;
        return -1;
    }
    capacity = cap;
    return 0;
}

static inline uint32_t home(uint32_t corr)
{
    return (corr * 2654435761u) & (capacity - 1);
}

static gt_cupti_entry *lookup(uint32_t corr)
{
    for (uint32_t i = home(corr);; i = (i + 1) & (capacity - 1)) {
        if (slots[i].corr == corr) return &slots[i];
        if (!slots[i].corr) return NULL;
    }
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

static void remove_at(uint32_t i)
{
    slots[i].corr = 0;
    count--;
    /* Backward shift: every entry after the hole that may live in it moves
     * up, so that probes never stop early. */
    for (uint32_t j = (i + 1) & (capacity - 1); slots[j].corr; j = (j + 1) & (capacity - 1)) {
        uint32_t h = home(slots[j].corr);
        int between = i <= j ? (h > i && h <= j) : (h > i || h <= j);
        if (between) continue;
        slots[i] = slots[j];
        slots[j].corr = 0;
        i = j;
    }
}

static ring_slot ring_pop(void)
{
    ring_slot s = ring[ring_head];
    ring_head = (ring_head + 1) % (2 * bound);
    ring_len--;
    return s;
}

static void ring_push(ring_slot s)
{
    ring[(ring_head + ring_len) % (2 * bound)] = s;
    ring_len++;
}

/* The entry a ring slot was made for, NULL when it left the table. */
static gt_cupti_entry *live(ring_slot s)
{
    gt_cupti_entry *e = lookup(s.corr);
    return e && e->order == s.order ? e : NULL;
}

/* Room for one more entry: the oldest pushed out of a full table, stale
 * ring slots dropped from a full ring (a live one met on the way goes
 * round again). */
static void make_room(void)
{
    while (count >= bound && ring_len) {
        gt_cupti_entry *e = live(ring_pop());
        if (e) {
            free_nodes(e->nodes);
            remove_at((uint32_t)(e - slots));
            evicted++;
        }
    }
    while (ring_len >= 2 * bound) {
        ring_slot s = ring_pop();
        if (live(s)) ring_push(s);
    }
}

void gt_cupti_table_add(uint32_t corr, uint64_t start, uint64_t end, uint16_t device,
                        uint64_t now_ns)
{
    if (!corr) return;
    if (ensure() != 0) {
        evicted++;
        return;
    }
    gt_cupti_entry *e = lookup(corr);
    if (!e) {
        make_room();
        uint32_t i = home(corr);
        while (slots[i].corr)
            i = (i + 1) & (capacity - 1);
        e = &slots[i];
        *e = (gt_cupti_entry){.corr = corr, .device = device, .order = next_order++};
        count++;
        ring_push((ring_slot){corr, e->order});
    }
    if (e->records < UINT16_MAX) e->records++;
    e->updated = now_ns;
    if (!start || !end || end < start) {
        if (e->untimed < UINT16_MAX) e->untimed++;
        return;
    }
    if (!e->start || start < e->start) e->start = start;
    if (end > e->end) e->end = end;
}

const gt_cupti_entry *gt_cupti_table_find(uint32_t corr)
{
    if (!slots || !corr) return NULL;
    return lookup(corr);
}

void gt_cupti_table_add_node(uint32_t corr, const gt_cupti_node *node)
{
    gt_cupti_entry *e = slots && corr ? lookup(corr) : NULL;
    if (!e) return;
    uint32_t i = node_free;
    if (i) {
        node_free = node_store[i - 1].next;
    } else if (nodes_made < bound) {
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
    if (!slots || !corr) return;
    gt_cupti_entry *e = lookup(corr);
    if (!e) return;
    if (nodes)
        *nodes = e->nodes;
    else
        free_nodes(e->nodes);
    remove_at((uint32_t)(e - slots));
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

void gt_cupti_table_forget(void)
{
    slots = NULL;
    ring = NULL;
    node_store = NULL;
    node_free = nodes_made = 0;
    capacity = count = ring_head = ring_len = 0;
    unavailable = 0;
}
