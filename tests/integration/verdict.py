"""What the integration checkers share: failures collected as they are
found, then printed, with the exit status."""

failures = []


def check(cond, what):
    """Records `what` as a failure unless cond holds; returns cond."""
    if not cond:
        failures.append(what)
    return cond


def report():
    """Prints the failures; 1 when there were some, else 0."""
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0
