/* Faults on demand, from the environment, read once: records dropped or left
 * without timestamps, another subscriber present, a failed initialisation,
 * activity kinds that cannot be enabled. A bad value prints one warning line
 * on stderr and the fault stays off. */
#include "cupti_emu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct gt_cupti_config config;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;

static void warn(const char *var, const char *value, const char *expected)
{
    fprintf(stderr, "gputrace-emu: warning: %s='%s' ignored: expected %s\n", var, value, expected);
}

/* N >= 1: the fault takes every Nth. */
static void parse_every(const char *var, uint64_t *out)
{
    const char *v = getenv(var);
    if (!v) return;
    char *end = NULL;
    unsigned long long n = (*v >= '0' && *v <= '9') ? strtoull(v, &end, 10) : 0;
    if (!end || *end || n == 0) {
        warn(var, v, "a whole number from 1 (every Nth record)");
        return;
    }
    *out = n;
}

static const struct {
    const char *name;
    CUptiResult result;
} init_errors[] = {
    {"not-initialized", CUPTI_ERROR_NOT_INITIALIZED},
    {"insufficient-privileges", CUPTI_ERROR_INSUFFICIENT_PRIVILEGES},
    {"not-supported", CUPTI_ERROR_NOT_SUPPORTED},
    {"unknown", CUPTI_ERROR_UNKNOWN},
};

static void parse_init_error(void)
{
    const char *var = "GPUTRACE_EMU_CUPTI_INIT_ERROR";
    const char *v = getenv(var);
    if (!v) return;
    for (size_t i = 0; i < sizeof init_errors / sizeof init_errors[0]; i++)
        if (!strcmp(v, init_errors[i].name)) {
            config.init_error = init_errors[i].result;
            return;
        }
    warn(var, v, "not-initialized, insufficient-privileges, not-supported or unknown");
}

static const struct {
    const char *name;
    CUpti_ActivityKind kind;
} kind_names[] = {
    {"memcpy", CUPTI_ACTIVITY_KIND_MEMCPY},
    {"memset", CUPTI_ACTIVITY_KIND_MEMSET},
    {"kernel", CUPTI_ACTIVITY_KIND_KERNEL},
    {"driver", CUPTI_ACTIVITY_KIND_DRIVER},
    {"runtime", CUPTI_ACTIVITY_KIND_RUNTIME},
    {"concurrent_kernel", CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL},
    {"memcpy2", CUPTI_ACTIVITY_KIND_MEMCPY2},
    {"external_correlation", CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION},
    {"graph_trace", CUPTI_ACTIVITY_KIND_GRAPH_TRACE},
};

static bool kind_by_name(const char *name, size_t len, CUpti_ActivityKind *out)
{
    for (size_t i = 0; i < sizeof kind_names / sizeof kind_names[0]; i++)
        if (strlen(kind_names[i].name) == len && !strncmp(name, kind_names[i].name, len)) {
            *out = kind_names[i].kind;
            return true;
        }
    return false;
}

/* "memset,memcpy2" */
static void parse_fail_kinds(void)
{
    const char *var = "GPUTRACE_EMU_CUPTI_FAIL_KINDS";
    const char *v = getenv(var);
    if (!v) return;
    bool fail[CUPTI_ACTIVITY_KIND_COUNT] = {false};
    for (const char *p = v;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        CUpti_ActivityKind kind;
        if (!kind_by_name(p, len, &kind)) {
            warn(var, v,
                 "a comma list of memcpy, memcpy2, memset, kernel, concurrent_kernel, "
                 "driver, runtime, external_correlation, graph_trace");
            return;
        }
        fail[kind] = true;
        if (!end) break;
        p = end + 1;
    }
    memcpy(config.fail_kind, fail, sizeof fail);
}

static void load(void)
{
    parse_init_error();
    parse_every("GPUTRACE_EMU_CUPTI_DROP", &config.drop_every);
    parse_every("GPUTRACE_EMU_CUPTI_ZERO_TIMESTAMPS", &config.zero_every);
    const char *other = getenv("GPUTRACE_EMU_CUPTI_SUBSCRIBER");
    if (other && !*other)
        warn("GPUTRACE_EMU_CUPTI_SUBSCRIBER", other, "the name of the other subscriber");
    else if (other)
        config.other_subscriber = strdup(other);
    parse_fail_kinds();
}

const struct gt_cupti_config *gt_cupti_config(void)
{
    pthread_once(&config_once, load);
    return &config;
}
