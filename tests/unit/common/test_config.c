/* GPUTRACE_* parsing (SPEC §3): every variable with valid, invalid, empty,
 * huge and garbage values, the resulting configuration and the exact
 * warning line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"
#include "event.h"
#include "log.h"
#include "output_path.h"
#include "settings.h"

/* A fake environment: up to 16 NAME, VALUE pairs. */
typedef struct fake_env {
    const char *pairs[32];
} fake_env;

static const char *fake_getenv(const char *name, void *ctx)
{
    fake_env *env = ctx;
    for (int i = 0; i < 32 && env->pairs[i]; i += 2)
        if (strcmp(env->pairs[i], name) == 0) return env->pairs[i + 1];
    return NULL;
}

static gt_config cfg; /* large: not on the stack */

static const gt_config *parse1(const char *name, const char *value)
{
    fake_env env = {{name, value}};
    gt_config_parse(&cfg, fake_getenv, &env);
    return &cfg;
}

static void assert_defaults_except(const gt_config *c, enum gt_config_var except)
{
    if (except != GT_VAR_VERBOSITY) assert_int_equal(c->verbosity, GT_VERB_DEFAULT);
    if (except != GT_VAR_CATEGORIES) assert_int_equal(c->categories, GT_CAT_ALL);
    if (except != GT_VAR_OUTPUT) assert_string_equal(c->output, "");
    if (except != GT_VAR_FORMAT) assert_int_equal(c->formats, GT_FMT_BIT(GT_OUTPUT_JSON));
    if (except != GT_VAR_GPU_TIMING) assert_int_equal(c->gpu_timing, GT_GPU_TIMING_AUTO);
    if (except != GT_VAR_LOG) assert_int_equal(c->log_dest, GT_LOG_STDERR);
    if (except != GT_VAR_BUFFER_MB) assert_int_equal(c->buffer_bytes, 64u << 20);
    if (except != GT_VAR_CAPTURE) {
        assert_int_equal(c->capture, GT_CAPTURE_ALL);
        assert_string_equal(c->capture_name, "");
        assert_string_equal(c->capture_domain, "");
    }
    if (except != GT_VAR_DELAY) assert_int_equal(c->delay_ns, 0);
    if (except != GT_VAR_DURATION) assert_int_equal(c->duration_ns, 0);
    if (except != GT_VAR_INTERVAL) assert_int_equal(c->interval_ns, 0);
    if (except != GT_VAR_CUPTI_PATH) assert_string_equal(c->cupti_path, "");
    if (except != GT_VAR_CHECKSUM) assert_int_equal(c->checksum.kind, GT_CHECKSUM_OFF);
    if (except != GT_VAR_CALLSITES) assert_int_equal(c->callsites, GT_CALLSITES_AUTO);
    if (except != GT_VAR_CALLSITES_SKIP) assert_string_equal(c->callsites_skip, "");
}

/* The value is rejected: defaults everywhere and exactly this warning. */
static void assert_rejected(const char *name, const char *value, const char *line)
{
    const gt_config *c = parse1(name, value);
    assert_defaults_except(c, GT_VAR_COUNT);
    assert_int_equal(c->n_warnings, 1);
    assert_string_equal(c->warnings[0], line);
}

/* Each value is rejected with "...NAME='value' ignored: expected <expected>". */
static void assert_all_rejected(const char *name, const char *const *bad, size_t n,
                                const char *expected)
{
    for (size_t i = 0; i < n; i++) {
        char line[GT_WARNING_MAX];
        snprintf(line, sizeof line, "gputrace: warning: %s='%s' ignored: expected %s", name, bad[i],
                 expected);
        assert_rejected(name, bad[i], line);
    }
}

#define REJECTED(name, bad, expected)                                                              \
    assert_all_rejected(name, bad, sizeof bad / sizeof bad[0], expected)

static void assert_accepted(const char *name, const char *value)
{
    const gt_config *c = parse1(name, value);
    assert_int_equal(c->n_warnings, 0);
}

static void test_defaults(void **state)
{
    (void)state;
    fake_env env = {{NULL}};
    gt_config_parse(&cfg, fake_getenv, &env);
    assert_defaults_except(&cfg, GT_VAR_COUNT);
    assert_int_equal(cfg.n_warnings, 0);
}

static void test_empty_values_are_defaults_without_warning(void **state)
{
    (void)state;
    fake_env env = {{"GPUTRACE_VERBOSITY", "", "GPUTRACE_CATEGORIES", "", "GPUTRACE_OUTPUT", "",
                     "GPUTRACE_FORMAT",    "", "GPUTRACE_GPU_TIMING", "", "GPUTRACE_LOG",    "",
                     "GPUTRACE_BUFFER_MB", "", "GPUTRACE_CAPTURE",    "", "GPUTRACE_DELAY",  "",
                     "GPUTRACE_DURATION",  "", "GPUTRACE_INTERVAL",   ""}};
    gt_config_parse(&cfg, fake_getenv, &env);
    assert_defaults_except(&cfg, GT_VAR_COUNT);
    assert_int_equal(cfg.n_warnings, 0);
}

static void test_blank_values_are_defaults_without_warning(void **state)
{
    (void)state;
    fake_env env = {{"GPUTRACE_VERBOSITY", " ", "GPUTRACE_CATEGORIES", "\t", "GPUTRACE_OUTPUT",
                     "  ", "GPUTRACE_FORMAT", " \t ", "GPUTRACE_GPU_TIMING", "   ", "GPUTRACE_LOG",
                     "   ", "GPUTRACE_BUFFER_MB", "\t\t"}};
    gt_config_parse(&cfg, fake_getenv, &env);
    assert_defaults_except(&cfg, GT_VAR_COUNT);
    assert_int_equal(cfg.n_warnings, 0);
}

static void test_verbosity(void **state)
{
    (void)state;
    static const struct {
        const char *value;
        enum gt_verbosity want;
    } ok[] = {
        {"none", GT_VERB_NONE},          {"default", GT_VERB_DEFAULT}, {"verbose", GT_VERB_VERBOSE},
        {"debug", GT_VERB_DEBUG},        {"0", GT_VERB_NONE},          {"1", GT_VERB_DEFAULT},
        {"2", GT_VERB_VERBOSE},          {"3", GT_VERB_DEBUG},         {"DEBUG", GT_VERB_DEBUG},
        {" verbose\t", GT_VERB_VERBOSE},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        assert_accepted("GPUTRACE_VERBOSITY", ok[i].value);
        assert_int_equal(cfg.verbosity, ok[i].want);
        assert_defaults_except(&cfg, GT_VAR_VERBOSITY);
    }
    static const char *const bad[] = {"loud", "4", "-1", "01", "debug,verbose", "de bug"};
    REJECTED("GPUTRACE_VERBOSITY", bad, "none, default, verbose, debug or 0-3");
}

#define CAT(c) GT_CAT_BIT(GT_CAT_##c)

static void test_categories(void **state)
{
    (void)state;
    static const struct {
        const char *value;
        unsigned want;
    } ok[] = {
        {"all", GT_CAT_ALL},
        {"kernel", CAT(KERNEL)},
        {"kernel,memcpy", CAT(KERNEL) | CAT(MEMCPY)},
        {" kernel , sync ,", CAT(KERNEL) | CAT(SYNC)},
        {"kernel,,nvtx", CAT(KERNEL) | CAT(NVTX)},
        {"all,-api", GT_CAT_ALL & ~CAT(API)},
        {"-api", GT_CAT_ALL & ~CAT(API)},
        {"-api,-nvtx", GT_CAT_ALL & ~CAT(API) & ~CAT(NVTX)},
        {"-all", 0},
        {"all,-all,memset", CAT(MEMSET)},
        {"kernel,-kernel", 0},
        {"KERNEL,Memory", CAT(KERNEL) | CAT(MEMORY)},
        {"memset,memory,compile,module", CAT(MEMSET) | CAT(MEMORY) | CAT(COMPILE) | CAT(MODULE)},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        assert_accepted("GPUTRACE_CATEGORIES", ok[i].value);
        assert_int_equal(cfg.categories, ok[i].want);
        assert_defaults_except(&cfg, GT_VAR_CATEGORIES);
    }
    static const char *const bad[] = {"kernel,bogus", "kernels", ",", " , ", "-", "all,-"};
    REJECTED("GPUTRACE_CATEGORIES", bad,
             "a comma list of all, kernel, memcpy, memset, memory, compile, module, sync, nvtx, "
             "api (a leading - removes one)");
}

static void test_formats(void **state)
{
    (void)state;
    assert_accepted("GPUTRACE_FORMAT", "text,json,csv,chrome");
    assert_int_equal(cfg.formats, GT_FMT_BIT(GT_OUTPUT_TEXT) | GT_FMT_BIT(GT_OUTPUT_JSON) |
                                      GT_FMT_BIT(GT_OUTPUT_CSV) | GT_FMT_BIT(GT_OUTPUT_CHROME));
    assert_accepted("GPUTRACE_FORMAT", "perfetto, Chrome");
    assert_int_equal(cfg.formats, GT_FMT_BIT(GT_OUTPUT_PERFETTO) | GT_FMT_BIT(GT_OUTPUT_CHROME));
    assert_accepted("GPUTRACE_FORMAT", " CSV ,text,text");
    assert_int_equal(cfg.formats, GT_FMT_BIT(GT_OUTPUT_CSV) | GT_FMT_BIT(GT_OUTPUT_TEXT));
    assert_defaults_except(&cfg, GT_VAR_FORMAT);
    static const char *const bad[] = {"xml", "json,xml", ",", "json;text", "-json", "pftrace"};
    REJECTED("GPUTRACE_FORMAT", bad, "a comma list of text, json, csv, chrome, perfetto");
}

static void test_gpu_timing(void **state)
{
    (void)state;
    assert_accepted("GPUTRACE_GPU_TIMING", "off");
    assert_int_equal(cfg.gpu_timing, GT_GPU_TIMING_OFF);
    assert_accepted("GPUTRACE_GPU_TIMING", "Events");
    assert_int_equal(cfg.gpu_timing, GT_GPU_TIMING_EVENTS);
    assert_accepted("GPUTRACE_GPU_TIMING", " cupti");
    assert_int_equal(cfg.gpu_timing, GT_GPU_TIMING_CUPTI);
    assert_accepted("GPUTRACE_GPU_TIMING", "AUTO");
    assert_int_equal(cfg.gpu_timing, GT_GPU_TIMING_AUTO);
    assert_rejected("GPUTRACE_GPU_TIMING", "on",
                    "gputrace: warning: GPUTRACE_GPU_TIMING='on' ignored: expected auto, cupti, "
                    "events or off");
    assert_rejected("GPUTRACE_GPU_TIMING", "events,off",
                    "gputrace: warning: GPUTRACE_GPU_TIMING='events,off' ignored: expected auto, "
                    "cupti, events or off");
    assert_accepted("GPUTRACE_CUPTI_PATH", "/opt/cupti/libcupti.so.13");
    assert_string_equal(cfg.cupti_path, "/opt/cupti/libcupti.so.13");
    assert_defaults_except(&cfg, GT_VAR_CUPTI_PATH);
}

static void test_checksum(void **state)
{
    (void)state;
    assert_accepted("GPUTRACE_CHECKSUM", " dtoh ");
    assert_int_equal(cfg.checksum.kind, GT_CHECKSUM_BYTES);
    assert_defaults_except(&cfg, GT_VAR_CHECKSUM);
    assert_accepted("GPUTRACE_CHECKSUM", "dtoh:f64:30");
    assert_int_equal(cfg.checksum.kind, GT_CHECKSUM_F64);
    assert_int_equal(cfg.checksum.bits, 30);
    assert_accepted("GPUTRACE_CHECKSUM", "OFF");
    assert_int_equal(cfg.checksum.kind, GT_CHECKSUM_OFF);
    static const char *const bad[] = {"on", "dtoh:f32:24", "dtoh,off", "dtoh:f64"};
    assert_all_rejected("GPUTRACE_CHECKSUM", bad, sizeof bad / sizeof bad[0],
                        "off, dtoh, dtoh:f32:BITS (BITS 1-23) or dtoh:f64:BITS (BITS 1-52)");
}

static void test_callsites(void **state)
{
    (void)state;
    assert_accepted("GPUTRACE_CALLSITES", "native");
    assert_int_equal(cfg.callsites, GT_CALLSITES_NATIVE);
    assert_defaults_except(&cfg, GT_VAR_CALLSITES);
    assert_accepted("GPUTRACE_CALLSITES", " Python ");
    assert_int_equal(cfg.callsites, GT_CALLSITES_PYTHON);
    assert_accepted("GPUTRACE_CALLSITES", "off");
    assert_int_equal(cfg.callsites, GT_CALLSITES_OFF);
    assert_rejected("GPUTRACE_CALLSITES", "lines",
                    "gputrace: warning: GPUTRACE_CALLSITES='lines' ignored: expected auto, python, "
                    "native, all or off");

    assert_accepted("GPUTRACE_CALLSITES_SKIP", "mylib, mylib.kernels,helpers_2");
    assert_string_equal(cfg.callsites_skip, "mylib,mylib.kernels,helpers_2");
    assert_defaults_except(&cfg, GT_VAR_CALLSITES_SKIP);
    static const char *const bad[] = {"my lib", ".mylib", "mylib.", "my..lib", "my/lib"};
    REJECTED("GPUTRACE_CALLSITES_SKIP", bad,
             "a comma list of Python package names (letters, digits, _ and ., as numba or "
             "mylib.kernels), shorter than 1024 bytes");
    static char longest[GT_CALLSITES_SKIP_MAX + 1];
    memset(longest, 'p', GT_CALLSITES_SKIP_MAX - 1);
    assert_accepted("GPUTRACE_CALLSITES_SKIP", longest);
    assert_int_equal(strlen(cfg.callsites_skip), GT_CALLSITES_SKIP_MAX - 1);
    longest[GT_CALLSITES_SKIP_MAX - 1] = 'p';
    assert_int_equal(parse1("GPUTRACE_CALLSITES_SKIP", longest)->n_warnings, 1);
    assert_defaults_except(&cfg, GT_VAR_COUNT);
}

static void test_output_and_log_paths(void **state)
{
    (void)state;
    assert_accepted("GPUTRACE_OUTPUT", "/tmp/run-%p-%h-%q{RANK}");
    assert_string_equal(cfg.output, "/tmp/run-%p-%h-%q{RANK}");
    assert_defaults_except(&cfg, GT_VAR_OUTPUT);
    assert_accepted("GPUTRACE_OUTPUT", " spaced name ");
    assert_string_equal(cfg.output, " spaced name "); /* paths are taken as written */

    assert_accepted("GPUTRACE_LOG", "stdout");
    assert_int_equal(cfg.log_dest, GT_LOG_STDOUT);
    assert_accepted("GPUTRACE_LOG", "stderr");
    assert_int_equal(cfg.log_dest, GT_LOG_STDERR);
    assert_accepted("GPUTRACE_LOG", "STDERR"); /* only the exact words are streams */
    assert_int_equal(cfg.log_dest, GT_LOG_FILE);
    assert_string_equal(cfg.log_path, "STDERR");
    assert_accepted("GPUTRACE_LOG", "/var/tmp/gputrace.log");
    assert_int_equal(cfg.log_dest, GT_LOG_FILE);
    assert_string_equal(cfg.log_path, "/var/tmp/gputrace.log");

    /* The longest path that fits, and one byte more. */
    static char longest[GT_PATH_MAX + 1];
    memset(longest, 'p', GT_PATH_MAX - 1);
    longest[GT_PATH_MAX - 1] = '\0';
    assert_accepted("GPUTRACE_OUTPUT", longest);
    assert_int_equal(strlen(cfg.output), GT_PATH_MAX - 1);
    longest[GT_PATH_MAX - 1] = 'p';
    longest[GT_PATH_MAX] = '\0';
    assert_rejected("GPUTRACE_OUTPUT", longest,
                    "gputrace: warning: GPUTRACE_OUTPUT='pppppppppppppppppppppppppppppppppppppppppp"
                    "pppppppppppppppppppppp...' ignored: expected a path template shorter than "
                    "4096 bytes");
    assert_rejected("GPUTRACE_LOG", longest,
                    "gputrace: warning: GPUTRACE_LOG='pppppppppppppppppppppppppppppppppppppppppppp"
                    "pppppppppppppppppppp...' ignored: expected stderr, stdout or a file path "
                    "shorter than 4096 bytes");
}

static void test_buffer_mb(void **state)
{
    (void)state;
    static const struct {
        const char *value;
        size_t mb;
    } ok[] = {{"1", 1}, {"64", 64}, {"16384", 16384}, {" 8 ", 8}, {"0008", 8}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        assert_accepted("GPUTRACE_BUFFER_MB", ok[i].value);
        assert_int_equal(cfg.buffer_bytes, ok[i].mb << 20);
        assert_defaults_except(&cfg, GT_VAR_BUFFER_MB);
    }
    static const char *const bad[] = {"0",   "16385", "99999999999999999999999", "64M", "-1", "+5",
                                      "1.5", "0x10"};
    REJECTED("GPUTRACE_BUFFER_MB", bad, "a whole number of MiB from 1 to 16384");
}

/* 100 kB of a valid-looking value for each variable: refused (too long for
 * a path, or not a keyword), and the warning shows 64 bytes of it. */
static void test_huge_values(void **state)
{
    (void)state;
    size_t n = 100 * 1024;
    char *huge = malloc(n + 1);
    assert_non_null(huge);
    for (size_t i = 0; i < n; i++)
        huge[i] = "all,"[i % 4];
    huge[n] = '\0';
    for (int var = 0; var < GT_VAR_COUNT; var++) {
        const char *name = gt_config_var_name((enum gt_config_var)var);
        const gt_config *c = parse1(name, huge);
        if (var == GT_VAR_CATEGORIES) { /* a 25,600-item list of "all" is valid */
            assert_int_equal(c->n_warnings, 0);
            assert_int_equal(c->categories, GT_CAT_ALL);
            continue;
        }
        assert_defaults_except(c, GT_VAR_COUNT);
        assert_int_equal(c->n_warnings, 1);
        char prefix[128];
        snprintf(prefix, sizeof prefix,
                 "gputrace: warning: %s='all,all,all,all,all,all,all,all,all,all,all,all,all,all,"
                 "all,all,...' ignored: expected ",
                 name);
        assert_memory_equal(c->warnings[0], prefix, strlen(prefix));
        assert_true(strlen(c->warnings[0]) < GT_WARNING_MAX);
    }
    free(huge);
}

/* Control bytes, escape sequences, invalid UTF-8, quotes: nothing of the
 * value reaches the terminal raw except printable text. */
static void test_garbage_is_escaped(void **state)
{
    (void)state;
    assert_rejected("GPUTRACE_VERBOSITY", "\x1b[2J\x07\x01\r\n",
                    "gputrace: warning: GPUTRACE_VERBOSITY='\\x1b[2J\\x07\\x01\\x0d\\x0a' ignored: "
                    "expected none, default, verbose, debug or 0-3");
    assert_rejected("GPUTRACE_FORMAT", "\xff\xfe\xc3(\xe2\x82",
                    "gputrace: warning: GPUTRACE_FORMAT='\\xff\\xfe\\xc3(\\xe2\\x82' ignored: "
                    "expected a comma list of text, json, csv, chrome, perfetto");
    /* Well-formed UTF-8 is shown as is; a C1 control (U+009B, CSI) is not. */
    assert_rejected(
        "GPUTRACE_GPU_TIMING",
        "d\xc3\xa9sactiv\xc3\xa9 \xc2\x9b"
        "31m",
        "gputrace: warning: GPUTRACE_GPU_TIMING='d\xc3\xa9sactiv\xc3\xa9 \\xc2\\x9b31m' "
        "ignored: expected auto, cupti, events or off");
    assert_rejected("GPUTRACE_CATEGORIES", "it's \\ bad",
                    "gputrace: warning: GPUTRACE_CATEGORIES='it\\'s \\\\ bad' ignored: expected a "
                    "comma list of all, kernel, memcpy, memset, memory, compile, module, sync, "
                    "nvtx, api (a leading - removes one)");
    /* Overlong encodings and surrogates are not well-formed. */
    assert_rejected("GPUTRACE_GPU_TIMING", "\xc0\xaf\xed\xa0\x80",
                    "gputrace: warning: GPUTRACE_GPU_TIMING='\\xc0\\xaf\\xed\\xa0\\x80' ignored: "
                    "expected auto, cupti, events or off");
}

/* A multi-byte character is never cut: the shown prefix stops before it. */
static void test_truncation_keeps_characters_whole(void **state)
{
    (void)state;
    char value[80], out[GT_SHOWN_VALUE_MAX * 4 + 8];
    memset(value, 'x', 63);
    memcpy(value + 63, "\xe2\x82\xac", 3); /* the euro sign, across the 64-byte cut */
    value[66] = '\0';
    gt_escape(out, sizeof out, value, strlen(value), GT_SHOWN_VALUE_MAX);
    char want[80];
    memset(want, 'x', 63);
    memcpy(want + 63, "\\xe2...", 8);
    assert_string_equal(out, want);
    /* Short output buffers are never overrun and stay terminated. */
    char tiny[8];
    gt_escape(tiny, sizeof tiny, "\x01\x02\x03\x04", 4, 64);
    assert_string_equal(tiny, "\\x01...");
}

static void test_capture(void **state)
{
    (void)state;
    static const struct {
        const char *value;
        enum gt_capture_mode mode;
        const char *name, *domain;
    } ok[] = {
        {"all", GT_CAPTURE_ALL, "", ""},
        {" Profiler-API ", GT_CAPTURE_PROFILER, "", ""},
        {"nvtx:train", GT_CAPTURE_NVTX, "train", ""},
        {"NVTX:step 3", GT_CAPTURE_NVTX, "step 3", ""},
        {"nvtx:train@my.lib", GT_CAPTURE_NVTX, "train", "my.lib"},
        {"nvtx:a@b@c", GT_CAPTURE_NVTX, "a@b", "c"}, /* the last @ starts the domain */
        {"nvtx:phase@*", GT_CAPTURE_NVTX, "phase", "*"},
        {"nvtx:All", GT_CAPTURE_NVTX, "All", ""},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        assert_accepted("GPUTRACE_CAPTURE", ok[i].value);
        assert_int_equal(cfg.capture, ok[i].mode);
        assert_string_equal(cfg.capture_name, ok[i].name);
        assert_string_equal(cfg.capture_domain, ok[i].domain);
        assert_defaults_except(&cfg, GT_VAR_CAPTURE);
    }
    static const char *const bad[] = {"nvtx",     "nvtx:",           "nvtx:@dom",  "nvtx:name@",
                                      "profiler", "cudaProfilerApi", "all,nvtx:x", "range:x"};
    REJECTED("GPUTRACE_CAPTURE", bad,
             "all, profiler-api, nvtx:NAME or nvtx:NAME@DOMAIN (DOMAIN * for any)");
    /* A name as long as it may be, and one byte longer. */
    char value[GT_CAPTURE_NAME_MAX + 8] = "nvtx:";
    memset(value + 5, 'n', GT_CAPTURE_NAME_MAX - 1);
    value[5 + GT_CAPTURE_NAME_MAX - 1] = '\0';
    assert_accepted("GPUTRACE_CAPTURE", value);
    assert_int_equal(strlen(cfg.capture_name), GT_CAPTURE_NAME_MAX - 1);
    strcat(value, "n");
    parse1("GPUTRACE_CAPTURE", value);
    assert_int_equal(cfg.n_warnings, 1);
    assert_int_equal(cfg.capture, GT_CAPTURE_ALL);
}

static void test_seconds(void **state)
{
    (void)state;
    static const struct {
        const char *value;
        uint64_t ns;
    } ok[] = {
        {"2", 2000000000u},  {"0.25", 250000000u},           {".5", 500000000u},
        {"3.", 3000000000u}, {" 1.000000001 ", 1000000001u}, {"31536000", 31536000000000000u},
        {"0.1", 100000000u}, {"007", 7000000000u},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        assert_accepted("GPUTRACE_DELAY", ok[i].value);
        assert_int_equal(cfg.delay_ns, ok[i].ns);
        assert_defaults_except(&cfg, GT_VAR_DELAY);
        assert_accepted("GPUTRACE_DURATION", ok[i].value);
        assert_int_equal(cfg.duration_ns, ok[i].ns);
        assert_defaults_except(&cfg, GT_VAR_DURATION);
        assert_accepted("GPUTRACE_INTERVAL", ok[i].value);
        assert_int_equal(cfg.interval_ns, ok[i].ns);
        assert_defaults_except(&cfg, GT_VAR_INTERVAL);
    }
    /* Zero: a delay of nothing is the default; no recording at all, or
     * snapshots without pause, are refused. So is more often than 0.1 s. */
    assert_accepted("GPUTRACE_DELAY", "0");
    assert_int_equal(cfg.delay_ns, 0);
    assert_accepted("GPUTRACE_DURATION", "0.000000001");
    assert_int_equal(cfg.duration_ns, 1);
    static const char *const zero[] = {"0", "0.0", ".000000000"};
    REJECTED("GPUTRACE_DURATION", zero, "seconds above 0 up to 31536000, decimals allowed (0.5)");
    static const char *const fast[] = {"0", "0.099999999", ".05"};
    REJECTED("GPUTRACE_INTERVAL", fast, "seconds from 0.1 to 31536000, decimals allowed (0.5)");
    static const char *const bad[] = {
        "-1",           "+1",         "1e3", "1,5", "1.5s", ".",    "1.2.3",
        "0.0000000001", "31536001.5", "1 2", "inf", "nan",  "0x10", "99999999999999999999999"};
    REJECTED("GPUTRACE_DELAY", bad, "seconds from 0 to 31536000, decimals allowed (0.5)");
}

static void test_one_warning_per_bad_variable(void **state)
{
    (void)state;
    fake_env env = {{"GPUTRACE_BUFFER_MB", "lots", "GPUTRACE_VERBOSITY", "verbose",
                     "GPUTRACE_FORMAT", "pdf", "GPUTRACE_CATEGORIES", "kernel,nope"}};
    gt_config_parse(&cfg, fake_getenv, &env);
    assert_int_equal(cfg.n_warnings, 3);
    /* In variable order, each naming its own variable. */
    assert_non_null(strstr(cfg.warnings[0], "GPUTRACE_CATEGORIES='kernel,nope'"));
    assert_non_null(strstr(cfg.warnings[1], "GPUTRACE_FORMAT='pdf'"));
    assert_non_null(strstr(cfg.warnings[2], "GPUTRACE_BUFFER_MB='lots'"));
    assert_int_equal(cfg.verbosity, GT_VERB_VERBOSE); /* the good one still applies */
    assert_int_equal(cfg.categories, GT_CAT_ALL);
    assert_int_equal(cfg.buffer_bytes, 64u << 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_empty_values_are_defaults_without_warning),
        cmocka_unit_test(test_blank_values_are_defaults_without_warning),
        cmocka_unit_test(test_verbosity),
        cmocka_unit_test(test_categories),
        cmocka_unit_test(test_formats),
        cmocka_unit_test(test_gpu_timing),
        cmocka_unit_test(test_output_and_log_paths),
        cmocka_unit_test(test_buffer_mb),
        cmocka_unit_test(test_huge_values),
        cmocka_unit_test(test_garbage_is_escaped),
        cmocka_unit_test(test_truncation_keeps_characters_whole),
        cmocka_unit_test(test_capture),
        cmocka_unit_test(test_checksum),
        cmocka_unit_test(test_callsites),
        cmocka_unit_test(test_seconds),
        cmocka_unit_test(test_one_warning_per_bad_variable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
