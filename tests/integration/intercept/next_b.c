/* The definition after next_a.c's (see there). */
char next_probe(void)
{
    return 'b';
}
