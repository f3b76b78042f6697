/* Stack ids to sites and labels, on the draining thread: each id once,
 * then from a table by id. Python stacks are sites already; native ones
 * are named by native_site.c. */
#include "callsite.h"

#include "callsite_table.h"
#include "native_site.h"
#include "process.h"
#include "stack_table.h"
#include "strtab.h"

#include <stdlib.h>
#include <string.h>

typedef struct resolved {
    uint32_t label; /* 0: not resolved yet */
    gt_site site;
} resolved;

static resolved *by_id; /* GT_STACK_OVERFLOW + 1 entries, made at the first use */

static uint32_t intern(const char *s, size_t len)
{
    gt_strtab *t = gt_names();
    return t && len ? gt_strtab_intern(t, s, len) : 0;
}

static void resolve(uint32_t id, resolved *r)
{
    memset(&r->site, 0, sizeof r->site);
    const gt_stack *s = gt_stack_get(id);
    if (id == GT_STACK_OVERFLOW) {
        const char *what = "(more call stacks than the table holds)";
        r->site.module = intern(what, strlen(what));
    } else if (s && s->lang == GT_STACK_PYTHON) {
        r->site = (gt_site){.language = GT_SITE_PYTHON,
                            .line = s->line,
                            .file = s->file,
                            .function = s->function,
                            .via = s->via};
    } else if (s) {
        gt_native_site(s, &r->site);
    } else {
        return;
    }
    gt_strtab *names = gt_names();
    if (!names) return;
    char label[GT_SITE_LABEL_MAX];
    size_t len = gt_site_label(names, &r->site, label, sizeof label);
    r->label = intern(label, len);
}

uint32_t gt_callsite_resolve(uint32_t id, const gt_site **site)
{
    *site = NULL;
    if (!id || id > GT_STACK_OVERFLOW) return 0;
    if (!by_id && !(by_id = calloc(GT_STACK_OVERFLOW + 1, sizeof *by_id))) return 0;
    resolved *r = &by_id[id];
    if (!r->label) resolve(id, r);
    if (r->label) *site = &r->site;
    return r->label;
}
