/* Emulator configuration from the environment, parsed once. A bad value
 * prints one warning line on stderr and the default is used. */
#include "emu.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GT_DEFAULT_DEVICES 1
#define GT_DEFAULT_MEMORY_MB 16384
#define GT_DEFAULT_KERNEL_NS 1000
/* On an H100 an event pair around a 0.9 us empty kernel read 5-7 us (DESIGN
 * section 5): the front end's time to start the work after the first
 * timestamp and to see it end before the second. 0.9 + 5 us lies in that
 * range. */
#define GT_DEFAULT_EVENT_LATENCY_NS 5000
#define GT_MAX_EVENT_LATENCY_NS 1000000000L

static struct gt_config config;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;

static void warn(const char *var, const char *value, const char *expected)
{
    fprintf(stderr, "gputrace-emu: warning: %s='%s' ignored: expected %s\n", var, value, expected);
}

static bool parse_u64(const char *s, const char *end, uint64_t *out)
{
    if (s == end || *s < '0' || *s > '9') return false;
    uint64_t v = 0;
    for (; s < end; s++) {
        if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10) return false;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return true;
}

static void parse_int_var(const char *var, long lo, long hi, long *out)
{
    const char *v = getenv(var);
    if (!v) return;
    uint64_t n;
    if (!parse_u64(v, v + strlen(v), &n) || (long)n < lo || (long)n > hi) {
        char expected[64];
        snprintf(expected, sizeof expected, "an integer from %ld to %ld", lo, hi);
        warn(var, v, expected);
        return;
    }
    *out = (long)n;
}

static bool add_rule(struct gt_config *c, const char *name, size_t len, uint64_t ns)
{
    struct gt_kernel_rule *rules = realloc(c->rules, (c->n_rules + 1) * sizeof *rules);
    if (!rules) return false;
    c->rules = rules;
    rules[c->n_rules].name = strndup(name, len);
    rules[c->n_rules].ns = ns;
    if (!rules[c->n_rules].name) return false;
    c->n_rules++;
    return true;
}

static void drop_rules(struct gt_config *c)
{
    for (size_t i = 0; i < c->n_rules; i++)
        free(c->rules[i].name);
    free(c->rules);
    c->rules = NULL;
    c->n_rules = 0;
}

/* Calls fn for each "key=value" item of a comma list; stops at the first
 * false (a malformed item, or fn's refusal). */
typedef bool (*item_fn)(const char *key, size_t key_len, const char *value, const char *end,
                        void *arg);

static bool for_each_item(const char *list, item_fn fn, void *arg)
{
    const char *p = list;
    while (*p) {
        const char *end = strchr(p, ',');
        if (!end) end = p + strlen(p);
        const char *eq = memchr(p, '=', (size_t)(end - p));
        if (!eq || eq == p || !fn(p, (size_t)(eq - p), eq + 1, end, arg)) return false;
        p = *end ? end + 1 : end;
    }
    return true;
}

struct kernel_items {
    struct gt_config *config;
    uint64_t default_ns;
};

static bool kernel_item(const char *key, size_t key_len, const char *value, const char *end,
                        void *arg)
{
    struct kernel_items *k = arg;
    uint64_t ns;
    if (!parse_u64(value, end, &ns)) return false;
    if (key_len == 1 && *key == '*') {
        k->default_ns = ns;
        return true;
    }
    return add_rule(k->config, key, key_len, ns);
}

/* "name=ns,name2=ns,*=ns" */
static void parse_kernel_ns(struct gt_config *c)
{
    const char *var = "GPUTRACE_EMU_KERNEL_NS";
    const char *v = getenv(var);
    if (!v) return;
    struct kernel_items k = {.config = c, .default_ns = c->kernel_default_ns};
    if (!for_each_item(v, kernel_item, &k)) {
        warn(var, v, "name=ns[,name=ns...] with ns a whole number ('*' names the default)");
        drop_rules(c);
        return;
    }
    c->kernel_default_ns = k.default_ns;
}

struct rate_key {
    const char *key;
    double value;
    double *dst;
};

static bool rate_item(const char *key, size_t key_len, const char *value, const char *end,
                      void *arg)
{
    struct rate_key *keys = arg;
    for (struct rate_key *k = keys; k->key; k++) {
        if (strlen(k->key) != key_len || strncmp(key, k->key, key_len) != 0) continue;
        char *num_end = NULL;
        errno = 0;
        double v = strtod(value, &num_end);
        if (num_end != end || errno || !(v > 0) || !isfinite(v)) return false;
        k->value = v;
        return true;
    }
    return false;
}

/* "pageable=5,pinned=20,dtod=500,memset=1000,peer=50" in GB/s */
static void parse_gbps(struct gt_config *c)
{
    const char *var = "GPUTRACE_EMU_GBPS";
    const char *v = getenv(var);
    if (!v) return;
    struct rate_key keys[] = {{"pageable", c->gbps_pageable, &c->gbps_pageable},
                              {"pinned", c->gbps_pinned, &c->gbps_pinned},
                              {"dtod", c->gbps_dtod, &c->gbps_dtod},
                              {"memset", c->gbps_memset, &c->gbps_memset},
                              {"peer", c->gbps_peer, &c->gbps_peer},
                              {NULL, 0, NULL}};
    if (!for_each_item(v, rate_item, keys)) {
        warn(var, v, "key=GB/s[,key=GB/s...] with keys pageable, pinned, dtod, memset, peer");
        return;
    }
    for (struct rate_key *k = keys; k->key; k++)
        *k->dst = k->value;
}

static void load(void)
{
    struct gt_config *c = &config;
    long devices = GT_DEFAULT_DEVICES, memory_mb = GT_DEFAULT_MEMORY_MB;
    long latency_ns = GT_DEFAULT_EVENT_LATENCY_NS;
    parse_int_var("GPUTRACE_EMU_DEVICES", 0, GT_MAX_DEVICES, &devices);
    parse_int_var("GPUTRACE_EMU_MEMORY_MB", 1, 1L << 22, &memory_mb);
    parse_int_var("GPUTRACE_EMU_EVENT_LATENCY_NS", 0, GT_MAX_EVENT_LATENCY_NS, &latency_ns);
    c->devices = (int)devices;
    c->memory_bytes = (size_t)memory_mb << 20;
    c->event_latency_ns = (uint64_t)latency_ns;
    c->kernel_default_ns = GT_DEFAULT_KERNEL_NS;
    c->gbps_pageable = 10;
    c->gbps_pinned = 25;
    c->gbps_dtod = 1500;
    c->gbps_memset = 3000;
    c->gbps_peer = 50;
    parse_kernel_ns(c);
    parse_gbps(c);
    const char *stats = getenv("GPUTRACE_EMU_STATS");
    c->stats_path = stats && *stats ? strdup(stats) : NULL;
    const char *log = getenv("GPUTRACE_EMU_LOG");
    c->log_path = log && *log ? strdup(log) : NULL;
}

const struct gt_config *gt_config_get(void)
{
    pthread_once(&config_once, load);
    return &config;
}

uint64_t gt_bytes_duration(size_t bytes, double gbps)
{
    /* GB/s is bytes per ns. */
    return (uint64_t)llround((double)bytes / gbps);
}

uint64_t gt_kernel_duration(const char *name)
{
    const struct gt_config *c = gt_config_get();
    if (c->n_rules == 0 || !name) return c->kernel_default_ns;
    for (size_t i = 0; i < c->n_rules; i++)
        if (!strcmp(c->rules[i].name, name)) return c->rules[i].ns;
    char base[512];
    if (gt_function_base_name(name, base, sizeof base)) {
        for (size_t i = 0; i < c->n_rules; i++)
            if (!strcmp(c->rules[i].name, base)) return c->rules[i].ns;
    }
    return c->kernel_default_ns;
}
