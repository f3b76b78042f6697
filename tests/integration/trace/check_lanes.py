#!/usr/bin/env python3
"""The Perfetto trace of threads that share one stream (shared_stream.c),
past the lanes a stream may have: the warning on the log names that cause,
not the cap on the number of streams.

check_lanes.py --lib LIB --prog PROG
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from verdict import check, report  # noqa: E402

LANES = 16


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lib", required=True)
    parser.add_argument("--prog", required=True)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GPUTRACE_")}
        env.update(LD_PRELOAD=args.lib, GPUTRACE_OUTPUT=os.path.join(tmp, "run"),
                   GPUTRACE_FORMAT="perfetto", GPUTRACE_LOG=os.path.join(tmp, "log"))
        p = subprocess.run([args.prog], env=env, capture_output=True, text=True, timeout=120)
        check(p.returncode == 0, f"the program exited {p.returncode}: {p.stderr}")
        with open(os.path.join(tmp, "log"), encoding="utf-8") as f:
            log = f.read()
    m = re.search(r"the Perfetto trace left out (\d+) events: (.*)", log)
    check(m is not None, f"no warning of events left out: {log!r}")
    if m:
        lost, causes = m.group(1), m.group(2)
        check(causes == f"{lost} pieces of GPU work overlapping {LANES} others on their stream",
              f"the warning names other causes: {m.group(0)!r}")
    return report()


if __name__ == "__main__":
    sys.exit(main())
