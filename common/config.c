/* SPEC §3: the environment variables, parsed once at load.
 *
 * Rules, the same for every variable:
 * - unset, empty or only blanks: the default, silently (an empty
 *   assignment is the usual shell way to switch a variable off; a blank
 *   one must not become a file named with spaces);
 * - keywords are matched case-insensitively, and blanks around them and
 *   around list items are ignored; empty list items are skipped;
 * - a value with anything wrong in it (one unknown list item included) is
 *   ignored as a whole: one warning line, and the default. A half-applied
 *   list would trace something the user did not ask for.
 * - GPUTRACE_CATEGORIES starts from nothing, or from `all` when its first
 *   item is a removal (`-api` means every category but api). */
#include "config.h"

#include "checksum_mode.h"
#include "event.h"
#include "log.h"
#include "output_path.h"
#include "settings.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

gt_config gt_cfg;

static const char *const var_names[GT_VAR_COUNT] = {
    "GPUTRACE_VERBOSITY",  "GPUTRACE_CATEGORIES", "GPUTRACE_OUTPUT",         "GPUTRACE_FORMAT",
    "GPUTRACE_GPU_TIMING", "GPUTRACE_LOG",        "GPUTRACE_BUFFER_MB",      "GPUTRACE_CAPTURE",
    "GPUTRACE_DELAY",      "GPUTRACE_DURATION",   "GPUTRACE_INTERVAL",       "GPUTRACE_CUPTI_PATH",
    "GPUTRACE_CHECKSUM",   "GPUTRACE_CALLSITES",  "GPUTRACE_CALLSITES_SKIP",
};

static const char *const expectations[GT_VAR_COUNT] = {
    "none, default, verbose, debug or 0-3",
    "a comma list of all, kernel, memcpy, memset, memory, compile, module, sync, nvtx, api "
    "(a leading - removes one)",
    "a path template shorter than 4096 bytes",
    "a comma list of text, json, csv, chrome, perfetto",
    "auto, cupti, events or off",
    "stderr, stdout or a file path shorter than 4096 bytes",
    "a whole number of MiB from 1 to 16384",
    "all, profiler-api, nvtx:NAME or nvtx:NAME@DOMAIN (DOMAIN * for any)",
    "seconds from 0 to 31536000, decimals allowed (0.5)",
    "seconds above 0 up to 31536000, decimals allowed (0.5)",
    "seconds from 0.1 to 31536000, decimals allowed (0.5)",
    "a path to libcupti.so shorter than 4096 bytes",
    "off, dtoh, dtoh:f32:BITS (BITS 1-23) or dtoh:f64:BITS (BITS 1-52)",
    "auto, python, native, all or off",
    "a comma list of Python package names (letters, digits, _ and ., as numba or "
    "mylib.kernels), shorter than 1024 bytes",
};

const char *gt_config_var_name(enum gt_config_var v)
{
    return (unsigned)v < GT_VAR_COUNT ? var_names[v] : "";
}

/* A piece of the value: [s, s + len). */
typedef struct span {
    const char *s;
    size_t len;
} span;

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

static span trim(span v)
{
    while (v.len && is_blank(v.s[0]))
        v.s++, v.len--;
    while (v.len && is_blank(v.s[v.len - 1]))
        v.len--;
    return v;
}

static int span_is(span v, const char *word)
{
    return v.len == strlen(word) && strncasecmp(v.s, word, v.len) == 0;
}

/* The first i in [0, n) whose name(i) is the word v, or -1. */
static int lookup(span v, const char *(*name)(int i), int n)
{
    for (int i = 0; i < n; i++)
        if (span_is(v, name(i))) return i;
    return -1;
}

static const char *verbosity_word(int i)
{
    return gt_verbosity_name((enum gt_verbosity)i);
}

static const char *timing_word(int i)
{
    return gt_gpu_timing_name((enum gt_gpu_timing)i);
}

static const char *category_word(int i)
{
    return gt_category_name((enum gt_category)i);
}

static const char *callsites_word(int i)
{
    return gt_callsites_name((enum gt_callsites)i);
}

static const char *format_word(int i)
{
    return gt_output_format_name((enum gt_output_format)i);
}

/* Calls item() for each trimmed, non-empty item of a comma list; stops at
 * the first that item() refuses. Returns the number of items accepted, or
 * -1 when one was refused. */
static int for_each_item(span v, int (*item)(span it, void *ctx), void *ctx)
{
    int n = 0;
    const char *end = v.s + v.len;
    for (const char *p = v.s; p <= end;) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *stop = comma ? comma : end;
        span it = trim((span){p, (size_t)(stop - p)});
        if (it.len) {
            if (item(it, ctx) != 0) return -1;
            n++;
        }
        p = stop + 1;
    }
    return n;
}

static int parse_verbosity(span v, gt_config *cfg)
{
    v = trim(v);
    int i = lookup(v, verbosity_word, GT_VERB_DEBUG + 1);
    if (i < 0 && v.len == 1 && v.s[0] >= '0' && v.s[0] <= '3') i = v.s[0] - '0';
    if (i < 0) return -1;
    cfg->verbosity = (enum gt_verbosity)i;
    return 0;
}

typedef struct category_state {
    unsigned mask;
    int first;
} category_state;

static int category_item(span it, void *ctx)
{
    category_state *st = ctx;
    int removal = it.s[0] == '-';
    if (removal) it = trim((span){it.s + 1, it.len - 1});
    unsigned bits;
    if (span_is(it, "all")) {
        bits = GT_CAT_ALL;
    } else {
        int c = lookup(it, category_word, GT_CAT_COUNT);
        if (c < 0) return -1;
        bits = GT_CAT_BIT(c);
    }
    if (st->first && removal) st->mask = GT_CAT_ALL;
    st->first = 0;
    st->mask = removal ? st->mask & ~bits : st->mask | bits;
    return 0;
}

static int parse_categories(span v, gt_config *cfg)
{
    category_state st = {0, 1};
    if (for_each_item(v, category_item, &st) <= 0) return -1;
    cfg->categories = st.mask;
    return 0;
}

static int format_item(span it, void *ctx)
{
    int f = lookup(it, format_word, GT_OUTPUT_FORMAT_COUNT);
    if (f < 0) return -1;
    *(unsigned *)ctx |= GT_FMT_BIT(f);
    return 0;
}

static int parse_formats(span v, gt_config *cfg)
{
    unsigned mask = 0;
    if (for_each_item(v, format_item, &mask) <= 0) return -1;
    cfg->formats = mask;
    return 0;
}

static int parse_gpu_timing(span v, gt_config *cfg)
{
    int i = lookup(trim(v), timing_word, GT_GPU_TIMING_COUNT);
    if (i < 0) return -1;
    cfg->gpu_timing = (enum gt_gpu_timing)i;
    return 0;
}

static int copy_path(span v, char *dst)
{
    if (v.len >= GT_PATH_MAX || memchr(v.s, '\0', v.len)) return -1;
    memcpy(dst, v.s, v.len);
    dst[v.len] = '\0';
    return 0;
}

static int parse_output(span v, gt_config *cfg)
{
    return copy_path(v, cfg->output);
}

static int parse_cupti_path(span v, gt_config *cfg)
{
    return copy_path(v, cfg->cupti_path);
}

static int parse_log(span v, gt_config *cfg)
{
    /* Exact words: any other string, "STDERR" included, is a file name. */
    if (v.len == 6 && memcmp(v.s, "stderr", 6) == 0) {
        cfg->log_dest = GT_LOG_STDERR;
        return 0;
    }
    if (v.len == 6 && memcmp(v.s, "stdout", 6) == 0) {
        cfg->log_dest = GT_LOG_STDOUT;
        return 0;
    }
    if (copy_path(v, cfg->log_path) != 0) return -1;
    cfg->log_dest = GT_LOG_FILE;
    return 0;
}

static int parse_buffer_mb(span v, gt_config *cfg)
{
    v = trim(v);
    if (v.len == 0) return -1;
    unsigned long mb = 0;
    for (size_t i = 0; i < v.len; i++) {
        if (v.s[i] < '0' || v.s[i] > '9') return -1;
        mb = mb * 10 + (unsigned long)(v.s[i] - '0');
        if (mb > GT_BUFFER_MB_MAX) return -1;
    }
    if (mb < GT_BUFFER_MB_MIN) return -1;
    cfg->buffer_bytes = (size_t)mb << 20;
    return 0;
}

/* nvtx:NAME or nvtx:NAME@DOMAIN; the last @ starts the domain. */
static int parse_capture(span v, gt_config *cfg)
{
    v = trim(v);
    if (span_is(v, "all") || span_is(v, "profiler-api")) {
        cfg->capture = span_is(v, "all") ? GT_CAPTURE_ALL : GT_CAPTURE_PROFILER;
        return 0;
    }
    if (v.len < 5 || strncasecmp(v.s, "nvtx:", 5) != 0) return -1;
    span name = {v.s + 5, v.len - 5}, domain = {"", 0};
    for (size_t i = name.len; i-- > 0;) {
        if (name.s[i] != '@') continue;
        domain = (span){name.s + i + 1, name.len - i - 1};
        name.len = i;
        if (!domain.len) return -1;
        break;
    }
    if (!name.len || name.len >= GT_CAPTURE_NAME_MAX || domain.len >= GT_CAPTURE_NAME_MAX)
        return -1;
    cfg->capture = GT_CAPTURE_NVTX;
    memcpy(cfg->capture_name, name.s, name.len);
    cfg->capture_name[name.len] = '\0';
    memcpy(cfg->capture_domain, domain.s, domain.len);
    cfg->capture_domain[domain.len] = '\0';
    return 0;
}

/* Decimal seconds ("2", "0.25", ".5", "3."; at most 9 decimals, no sign,
 * no exponent: the locale never matters) into ns, from min_ns up to
 * GT_SECONDS_MAX seconds. */
static int parse_seconds(span v, uint64_t min_ns, uint64_t *out)
{
    v = trim(v);
    uint64_t whole = 0, frac = 0;
    size_t i = 0, digits = 0, decimals = 0;
    for (; i < v.len && v.s[i] >= '0' && v.s[i] <= '9'; i++, digits++) {
        whole = whole * 10 + (uint64_t)(v.s[i] - '0');
        if (whole > GT_SECONDS_MAX) return -1;
    }
    if (i < v.len && v.s[i] == '.')
        for (i++; i < v.len && v.s[i] >= '0' && v.s[i] <= '9'; i++, digits++) {
            if (++decimals > 9) return -1;
            frac = frac * 10 + (uint64_t)(v.s[i] - '0');
        }
    if (i != v.len || !digits) return -1;
    for (; decimals < 9; decimals++)
        frac *= 10;
    uint64_t ns = whole * 1000000000u + frac;
    if (ns < min_ns || ns > (uint64_t)GT_SECONDS_MAX * 1000000000u) return -1;
    *out = ns;
    return 0;
}

static int parse_delay(span v, gt_config *cfg)
{
    return parse_seconds(v, 0, &cfg->delay_ns);
}

static int parse_duration(span v, gt_config *cfg)
{
    return parse_seconds(v, 1, &cfg->duration_ns);
}

static int parse_interval(span v, gt_config *cfg)
{
    return parse_seconds(v, GT_INTERVAL_MIN_NS, &cfg->interval_ns);
}

static int parse_checksum(span v, gt_config *cfg)
{
    v = trim(v);
    return gt_checksum_mode_parse(v.s, v.len, &cfg->checksum);
}

static int parse_callsites(span v, gt_config *cfg)
{
    int i = lookup(trim(v), callsites_word, GT_CALLSITES_COUNT);
    if (i < 0) return -1;
    cfg->callsites = (enum gt_callsites)i;
    return 0;
}

static int package_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.';
}

typedef struct skip_list {
    char out[GT_CALLSITES_SKIP_MAX];
    size_t len;
} skip_list;

/* A package name: a dotted name without empty parts. */
static int skip_item(span it, void *ctx)
{
    skip_list *l = ctx;
    if (it.s[0] == '.' || it.s[it.len - 1] == '.') return -1;
    for (size_t i = 0; i < it.len; i++)
        if (!package_char(it.s[i]) || (it.s[i] == '.' && it.s[i + 1] == '.')) return -1;
    if (l->len + (l->len != 0) + it.len + 1 > sizeof l->out) return -1; /* comma, NUL */
    if (l->len) l->out[l->len++] = ',';
    memcpy(l->out + l->len, it.s, it.len);
    l->len += it.len;
    l->out[l->len] = '\0';
    return 0;
}

static int parse_callsites_skip(span v, gt_config *cfg)
{
    skip_list l = {.len = 0};
    if (for_each_item(v, skip_item, &l) <= 0) return -1;
    memcpy(cfg->callsites_skip, l.out, l.len + 1);
    return 0;
}

static int (*const parsers[GT_VAR_COUNT])(span, gt_config *) = {
    parse_verbosity, parse_categories, parse_output,   parse_formats,   parse_gpu_timing,
    parse_log,       parse_buffer_mb,  parse_capture,  parse_delay,     parse_duration,
    parse_interval,  parse_cupti_path, parse_checksum, parse_callsites, parse_callsites_skip,
};

static void add_warning(gt_config *cfg, enum gt_config_var var, const char *value, size_t len)
{
    char shown[GT_SHOWN_VALUE_MAX * 4 + 8];
    gt_escape(shown, sizeof shown, value, len, GT_SHOWN_VALUE_MAX);
    cfg->warning_var[cfg->n_warnings] = (uint8_t)var;
    snprintf(cfg->warnings[cfg->n_warnings++], GT_WARNING_MAX,
             "gputrace: warning: %s='%s' ignored: expected %s", var_names[var], shown,
             expectations[var]);
}

static void set_defaults(gt_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->categories = GT_CAT_ALL;
    cfg->verbosity = GT_VERB_DEFAULT;
    cfg->gpu_timing = GT_GPU_TIMING_AUTO;
    cfg->formats = GT_FMT_BIT(GT_OUTPUT_JSON);
    cfg->log_dest = GT_LOG_STDERR;
    cfg->buffer_bytes = (size_t)GT_BUFFER_MB_DEFAULT << 20;
}

void gt_config_parse(gt_config *cfg, gt_getenv_fn get, void *ctx)
{
    set_defaults(cfg);
    for (int var = 0; var < GT_VAR_COUNT; var++) {
        const char *value = get(var_names[var], ctx);
        if (!value) continue;
        size_t len = strlen(value);
        if (trim((span){value, len}).len == 0) continue;
        /* Each parser writes cfg only once the whole value is valid. */
        if (parsers[var]((span){value, len}, cfg) != 0)
            add_warning(cfg, (enum gt_config_var)var, value, len);
    }
}
