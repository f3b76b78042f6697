/* The configuration's warnings, given once per run of gputrace.
 *
 * Under `gputrace -- bash -c '...'` every process loads the shim and
 * parses the same variables; each would repeat the same warnings. The
 * command parses them once, gives the warnings, and sets
 * GPUTRACE_CONFIG_CHECKED to a fingerprint of the values it checked. A
 * process whose values still have that fingerprint stays quiet about
 * them; one whose values changed on the way (a script that sets its own)
 * warns as usual, and so does a process preloaded by hand. */
#include "internal.h"

#include <stdio.h>

/* FNV-1a, 64 bits: a changed value changes the fingerprint. It decides
 * only whether a warning is repeated, so it needs no more strength. */
static uint64_t mix(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

void gt_config_fingerprint(gt_getenv_fn get, void *ctx, char out[GT_CONFIG_FINGERPRINT_LEN])
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (int var = 0; var < GT_VAR_COUNT; var++) {
        const char *name = gt_config_var_name((enum gt_config_var)var);
        const char *value = get(name, ctx);
        h = mix(h, name, strlen(name) + 1);
        /* Unset and empty are the same to the parser: the default. */
        if (value && value[0]) h = mix(h, value, strlen(value) + 1);
    }
    snprintf(out, GT_CONFIG_FINGERPRINT_LEN, "%016llx", (unsigned long long)h);
}

int gt_config_checked(gt_getenv_fn get, void *ctx)
{
    const char *given = get(GT_CONFIG_CHECKED_VAR, ctx);
    if (!given) return 0;
    char mine[GT_CONFIG_FINGERPRINT_LEN];
    gt_config_fingerprint(get, ctx, mine);
    return strcmp(given, mine) == 0;
}

void gt_config_give_warnings(const gt_config *cfg)
{
    for (unsigned i = 0; i < cfg->n_warnings && cfg->verbosity != GT_VERB_NONE; i++) {
        char line[GT_WARNING_MAX + 1];
        size_t n = strlen(cfg->warnings[i]);
        memcpy(line, cfg->warnings[i], n);
        line[n++] = '\n';
        gt_log_write(line, n);
    }
}
