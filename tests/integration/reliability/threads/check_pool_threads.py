#!/usr/bin/env python3
"""A pool of many threads that each record a little, all holding what they
recorded at once (pool_threads.c), under libgputrace.so on the emulated
driver:

  many    1500 threads at the default buffer: every launch recorded, none
          dropped
  small   the same with GPUTRACE_BUFFER_MB=1: events are dropped, and the
          warning says why (the buffers full, how many threads held them)

check_pool_threads.py --lib LIB --prog PROG CASE
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from verdict import check, report  # noqa: E402

THREADS, IDLE_MS, LATER = 1500, 300, 5
TIMEOUT = 300


def run(lib, prog, tmp, **gputrace):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUTRACE_")}
    env.update(LD_PRELOAD=lib, GPUTRACE_OUTPUT=os.path.join(tmp, "run"),
               GPUTRACE_LOG=os.path.join(tmp, "log"))
    env.update({"GPUTRACE_" + k.upper(): v for k, v in gputrace.items()})
    p = subprocess.run([prog, str(THREADS), str(IDLE_MS), str(LATER)], env=env,
                       capture_output=True, text=True, timeout=TIMEOUT)
    check(p.returncode == 0, f"the program exited {p.returncode}: {p.stderr}")
    with open(os.path.join(tmp, "run.json")) as f:
        rep = json.load(f)
    with open(os.path.join(tmp, "log"), encoding="utf-8") as f:
        return rep, f.read()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--prog", required=True)
    ap.add_argument("case", choices=["many", "small"])
    a = ap.parse_args()
    launches = THREADS * (1 + LATER)
    with tempfile.TemporaryDirectory() as tmp:
        if a.case == "many":
            rep, log = run(a.lib, a.prog, tmp)
            calls = sum(k["calls"] for k in rep["kernels"])
            check(rep["totals"]["dropped"] == 0 and calls == launches,
                  f"{rep['totals']['dropped']} dropped, {calls} launches of {launches}: {log}")
        else:
            rep, log = run(a.lib, a.prog, tmp, buffer_mb="1")
            dropped = rep["totals"]["dropped"]
            m = re.search(r"gputrace: warning: (\d+) events were dropped because the event buffers "
                          r"\(GPUTRACE_BUFFER_MB=1\) were full, (\d+) threads holding", log)
            check(dropped > 0 and m is not None and int(m.group(1)) == dropped and
                  int(m.group(2)) > 0, f"{dropped} dropped; the warning: {log!r}")
    return report()


if __name__ == "__main__":
    sys.exit(main())
