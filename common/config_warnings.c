/* The configuration's warnings, given once per run of gputrace.
 *
 * Under `gputrace -- bash -c '...'` every process loads the shim and
 * parses the same variables; each would repeat the same warnings. The
 * command parses them once, gives the warnings, and lists in
 * GPUTRACE_CONFIG_CHECKED a hash of each variable's name and value. A
 * process stays quiet about a variable whose value is listed; one that a
 * script gave a new value warns about that one as usual, and so does a
 * process preloaded by hand, which has no list. */
#include "config.h"
#include "log.h"
#include "settings.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* FNV-1a, 64 bits, of "NAME=value": it decides only whether a warning is
 * repeated, so it needs no more strength. */
static uint64_t value_hash(const char *name, const char *value)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (const char *parts[] = {name, "=", value}, **p = parts; p < parts + 3; p++)
        for (const unsigned char *c = (const unsigned char *)*p; *c; c++)
            h = (h ^ *c) * 0x100000001b3ull;
    return h;
}

void gt_config_checked_list(gt_getenv_fn get, void *ctx, char out[GT_CONFIG_CHECKED_MAX])
{
    size_t len = 0;
    out[0] = '\0';
    for (int var = 0; var < GT_VAR_COUNT; var++) {
        const char *name = gt_config_var_name((enum gt_config_var)var);
        const char *value = get(name, ctx);
        /* Unset and empty are the default, silently: nothing to list. */
        if (!value || !value[0]) continue;
        len += (size_t)snprintf(out + len, GT_CONFIG_CHECKED_MAX - len, "%s%016llx", len ? "," : "",
                                (unsigned long long)value_hash(name, value));
    }
}

/* Whether `list` holds the hash of var's value now. */
static int checked(const char *list, enum gt_config_var var, gt_getenv_fn get, void *ctx)
{
    const char *name = gt_config_var_name(var);
    const char *value = get(name, ctx);
    if (!list || !value) return 0;
    char mine[17];
    snprintf(mine, sizeof mine, "%016llx", (unsigned long long)value_hash(name, value));
    for (const char *p = list; *p; p += strspn(p, ",")) {
        size_t n = strcspn(p, ",");
        if (n == 16 && memcmp(p, mine, 16) == 0) return 1;
        p += n;
    }
    return 0;
}

void gt_config_give_warnings(const gt_config *cfg, gt_getenv_fn get, void *ctx)
{
    const char *list = get(GT_CONFIG_CHECKED_VAR, ctx);
    for (unsigned i = 0; i < cfg->n_warnings && cfg->verbosity != GT_VERB_NONE; i++) {
        if (checked(list, (enum gt_config_var)cfg->warning_var[i], get, ctx)) continue;
        char line[GT_WARNING_MAX + 1];
        size_t n = strlen(cfg->warnings[i]);
        memcpy(line, cfg->warnings[i], n);
        line[n++] = '\n';
        gt_log_write(line, n);
    }
}
