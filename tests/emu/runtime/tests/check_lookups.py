#!/usr/bin/env python3
"""Checks the driver lookups a runtime program made against the runtime's list.

check_lookups.py ENTRY_POINTS_DEF USED_DEF -- program [args...]
Runs the program with GPUTRACE_EMU_LOG (one line per cuGetProcAddress request:
"symbol version flags -> answer") and checks that the runtime asked for exactly the
(symbol, version, flags) of rt_entry_points.def, in that order, once each, after
one request for an empty name at version 0 (as the real runtime does), and that
every entry point it calls (rt_driver_used.def) was found.
"""
import os
import re
import subprocess
import sys
import tempfile


def main():
    entry_def, used_def = sys.argv[1], sys.argv[2]
    command = sys.argv[4:] if sys.argv[3] == "--" else sys.argv[3:]
    with open(entry_def) as f:
        expected = [("", 0, 0)] + [
            (m[0], int(m[1]), int(m[2]))
            for m in re.findall(r"^RT_ENTRY\((\w+), (\d+), (\d+)\)", f.read(), re.M)]
    with open(used_def) as f:
        text = f.read()
    used = set()
    for name, v0 in re.findall(r"^RT_USE\(\w+, (\w+), (\d+),", text, re.M):
        used.add((name, int(v0), 0))
    for name, v0, v1 in re.findall(r"^RT_USE2\(\w+, (\w+), (\d+), (\d+),", text, re.M):
        used.add((name, int(v0), 0))
        used.add((name, int(v1), 2))

    with tempfile.TemporaryDirectory(prefix="gt-lookups-") as d:
        log = os.path.join(d, "lookups.log")
        env = dict(os.environ, GPUTRACE_EMU_LOG=log)
        proc = subprocess.run(command, env=env, timeout=120)
        if proc.returncode != 0:
            print(f"check_lookups: program exited {proc.returncode}", file=sys.stderr)
            return 1
        with open(log) as f:
            lines = f.read().splitlines()
    requests, answers = [], {}
    for line in lines:
        m = re.match(r"^(\S*) (\d+) (\d+) -> (\S+)$", line)
        if not m:
            print(f"check_lookups: unexpected log line {line!r}", file=sys.stderr)
            return 1
        key = (m[1], int(m[2]), int(m[3]))
        requests.append(key)
        answers[key] = m[4]
    errors = []
    if requests != expected:
        missing = [e for e in expected if e not in requests]
        extra = [r for r in requests if r not in expected]
        errors.append(f"{len(requests)} requests, expected {len(expected)} in the listed order; "
                      f"missing {missing[:5]}, unexpected {extra[:5]}")
    for key in sorted(used):
        answer = answers.get(key)
        if answer is None or answer in ("NOT_FOUND", "VERSION_NOT_SUFFICIENT", "INVALID_VALUE"):
            errors.append(f"entry point the runtime calls not provided: {key} -> {answer}")
    for e in errors:
        print("check_lookups: " + e, file=sys.stderr)
    if not errors:
        print(f"check_lookups: {len(requests)} lookups as listed, {len(used)} used ones found")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
