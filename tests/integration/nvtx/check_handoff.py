#!/usr/bin/env python3
"""Start/end ranges ended on another thread (nvtx_handoff.c) under
libgputrace.so as the NVTX injection library: each range's GPU time is
that of the one kernel launched inside it, whenever the ending thread's
records reach the report; the kernels launched after each end are not the
range's.

check_handoff.py --lib LIB --prog PROG
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from verdict import check, report  # noqa: E402

ROUNDS = 1000
KERNEL_NS = 1000  # the emulator's default kernel duration
TIMEOUT = 120


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--prog", required=True)
    a = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUTRACE_")}
    with tempfile.TemporaryDirectory() as tmp:
        env.update(LD_PRELOAD=a.lib, NVTX_INJECTION64_PATH=a.lib, GPUTRACE_VERBOSITY="none",
                   GPUTRACE_OUTPUT=os.path.join(tmp, "run"))
        p = subprocess.run([a.prog, str(ROUNDS)], env=env, capture_output=True, text=True,
                           timeout=TIMEOUT)
        check(p.returncode == 0, f"the program exited {p.returncode}: {p.stderr}")
        with open(os.path.join(tmp, "run.json")) as f:
            rep = json.load(f)
    rows = [r for r in rep["nvtx"] if r["name"] == "handed"]
    check(len(rows) == 1, f"nvtx rows {rep['nvtx']}")
    if rows:
        r = rows[0]
        inside = ROUNDS * KERNEL_NS
        check(r["calls"] == ROUNDS, f"{r['calls']} ranges")
        check(r["gpu_ns_total"] == inside, f"gpu_ns_total {r['gpu_ns_total']}, expected {inside}")
        check(r["gpu_span_ns_total"] == inside,
              f"gpu_span_ns_total {r['gpu_span_ns_total']}, expected {inside}")
    return report()


if __name__ == "__main__":
    sys.exit(main())
