#!/usr/bin/env python3
"""What the shipped binaries are built with (cmake/hardening.cmake,
docs/security.md), read from the binaries by readelf:

    check_hardening.py LIBGPUTRACE GPUTRACE

both: full RELRO (a GNU_RELRO segment and BIND_NOW), a stack that is not
executable, the stack protector (__stack_chk_fail imported) and
_FORTIFY_SOURCE (glibc's checked __*_chk functions imported); the command
is also a position-independent executable.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from verdict import check, report  # noqa: E402


def readelf(*args):
    return subprocess.run(["readelf", "-W", *args], capture_output=True, text=True,
                          check=True).stdout


def examine(path, executable):
    name = os.path.basename(path)
    segments = readelf("-l", path)
    dynamic = readelf("-d", path)
    symbols = readelf("--dyn-syms", path)
    check(re.search(r"^\s*GNU_RELRO\s", segments, re.M), f"{name}: no GNU_RELRO segment")
    check(re.search(r"\(FLAGS\).*\bBIND_NOW\b", dynamic) or
          re.search(r"\(FLAGS_1\).*\bNOW\b", dynamic), f"{name}: not BIND_NOW (partial RELRO)")
    stack = re.search(r"^\s*GNU_STACK\s.*\s(R?W?E?)\s+0x", segments, re.M)
    check(stack and "E" not in stack.group(1), f"{name}: executable stack or none declared")
    imported = set(re.findall(r"\bUND\s+([A-Za-z_]\w*)", symbols))
    check("__stack_chk_fail" in imported, f"{name}: no stack protector (__stack_chk_fail)")
    fortified = sorted(s for s in imported if re.fullmatch(r"__\w+_chk", s))
    check(fortified, f"{name}: no _FORTIFY_SOURCE (no __*_chk function imported)")
    if executable:
        check(re.search(r"Type:\s+DYN", readelf("-h", path)),
              f"{name}: not a position-independent executable")
    print(f"{name}: RELRO, BIND_NOW, NX stack, stack protector, fortified: {' '.join(fortified)}")


def main():
    lib, cli = sys.argv[1:3]
    examine(lib, False)
    examine(cli, True)
    return report()


if __name__ == "__main__":
    sys.exit(main())
