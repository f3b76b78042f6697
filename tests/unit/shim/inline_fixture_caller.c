/* The caller of inline_fixture.c's fixture_tail, in a unit of its own:
 * its debug information names the function called by a declaration, as a
 * program's main names a launching function of another source file. */
typedef void (*fixture_cb)(void);

void fixture_tail(fixture_cb cb);
void fixture_tail_entry(fixture_cb cb);

extern volatile int fixture_after;

__attribute__((noinline)) void fixture_tail_entry(fixture_cb cb)
{
    fixture_tail(cb); /* the call whose return address the stack shows */
    fixture_after++;
}
