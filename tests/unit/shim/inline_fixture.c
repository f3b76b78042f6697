/* Inlined calls for test_shim_callsite_inline.c, built as a shared object
 * at -O2 -g in each DWARF variant the compilers write: fixture_entry calls
 * back from code inlined two deep, one deep, and its own. A tail call for
 * test_shim_callsite_tailcall.c: fixture_tail_entry (in another unit,
 * inline_fixture_caller.c) calls fixture_tail, which jumps to
 * fixture_glue. The tests find each call's line by its MARK comment. */
typedef void (*fixture_cb)(void);

void fixture_entry(fixture_cb cb);
void fixture_glue(fixture_cb cb);
void fixture_tail(fixture_cb cb);

/* A store after each call keeps it from being a tail call, whose return
 * address would not be here. */
volatile int fixture_after;

/* Called never: its branch puts part of each inlined call, and of
 * fixture_entry, apart from the rest (.text.unlikely), so that their
 * addresses are range lists. */
__attribute__((noinline, cold)) void fixture_rare(void);

void fixture_rare(void)
{
    fixture_after = 0;
}

static inline __attribute__((always_inline)) void fixture_inner(fixture_cb cb)
{
    if (__builtin_expect(fixture_after == -1, 0)) fixture_rare();
    cb(); /* MARK inner_call */
    fixture_after++;
}

static inline __attribute__((always_inline)) void fixture_outer(fixture_cb cb)
{
    fixture_inner(cb); /* MARK outer_calls_inner */
    cb();              /* MARK outer_call */
    fixture_after++;
}

__attribute__((noinline)) void fixture_entry(fixture_cb cb)
{
    /* Code before the inlined calls: a range list of DWARF 4 starting at
     * its unit's first address would start (0, 0), which ends a list. */
    fixture_after++;
    fixture_outer(cb); /* MARK entry_calls_outer */
    cb();              /* MARK entry_call */
    fixture_after++;
}

/* fixture_glue's return address: in fixture_tail_entry, since
 * fixture_tail's call of it, its last statement, is a jump at -O2. */
void *volatile fixture_return;

__attribute__((noinline)) void fixture_glue(fixture_cb cb)
{
    fixture_return = __builtin_return_address(0);
    cb();
    fixture_after++;
}

__attribute__((noinline)) void fixture_tail(fixture_cb cb)
{
    fixture_after++;
    fixture_glue(cb); /* MARK tail_call */
}
