/* One name per table row, the same in the text summary, the CSV file and
 * the trace: a row's key in words. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"
#include "event.h"
#include "report.h"
#include "strtab.h"
#include "table.h"

/* a, sep and b (a alone when b is empty), then suffix, in a new string. */
static char *join(const char *a, const char *sep, const char *b, const char *suffix)
{
    if (!b[0]) sep = "";
    size_t n = strlen(a) + strlen(sep) + strlen(b) + strlen(suffix) + 1;
    char *s = malloc(n);
    if (s) snprintf(s, n, "%s%s%s%s", a, sep, b, suffix);
    return s;
}

void gt_copy_label_format(char *buf, size_t cap, enum gt_copy_dir dir, enum gt_host_mem host,
                          bool async)
{
    const char *mem = host == GT_HOST_NONE ? "" : gt_host_mem_name(host);
    snprintf(buf, cap, "%s%s%s%s", gt_copy_dir_name(dir), mem[0] ? " " : "", mem,
             async ? " async" : " sync");
}

char *gt_nvtx_label(const gt_report *r, uint32_t domain, uint32_t message)
{
    /* The default domain has no name. */
    const char *m = gt_strtab_get(r->names, message);
    return domain ? join(gt_strtab_get(r->names, domain), ":", m, "") : strdup(m);
}

char *gt_row_label(const gt_report *r, enum gt_category c, const gt_row *row)
{
    const uint32_t *k = row->key.f;
    const char *s0 = gt_strtab_get(r->names, k[0]);
    switch (c) {
    case GT_CAT_KERNEL:
        return strdup(k[1] ? GT_GRAPH_LAUNCH_NAME : k[0] ? s0 : "(unnamed kernel)");
    case GT_CAT_MEMCPY: {
        char label[GT_COPY_LABEL_MAX];
        gt_copy_label_format(label, sizeof label, k[0], k[1], k[2] != 0);
        return strdup(label);
    }
    case GT_CAT_MEMSET:
        return strdup(k[0] ? "async" : "sync");
    case GT_CAT_COMPILE:
        return join(s0, " ", gt_strtab_get(r->names, k[1]), k[2] ? "" : " (failed)");
    case GT_CAT_MODULE:
        return join(s0, " ", gt_image_kind_name(k[1]), "");
    case GT_CAT_NVTX:
        return gt_nvtx_label(r, k[0], k[1]);
    case GT_CAT_SYNC:
    case GT_CAT_API:
        return strdup(s0);
    case GT_CAT_MEMORY:
    case GT_CAT_COUNT:
        break;
    }
    return strdup("");
}
