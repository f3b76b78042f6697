#!/usr/bin/env python3
"""A program's own event timings stay its own: own_timing runs bare and
with libgputrace.so (GPU timing on: the shim's event pair around each
operation); exit code and stdout must be the same, and every time printed
the configured duration of its operation (within 1 us, the emulator's
times read back as float milliseconds).

check_own_timing.py --lib LIB -- own_timing [iterations] [bytes]
"""
import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import verdict  # noqa: E402
from verdict import check  # noqa: E402

KERNEL_NS = 5000
PINNED_GBPS = 25.0
MEMSET_GBPS = 1000.0
SLACK_NS = 1000
LINE = re.compile(r"^(\d+) (copy|memset|kernel) ([0-9.]+) ms$")


def run(command, env):
    r = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    command = a.command[1:] if a.command[:1] == ["--"] else a.command
    nbytes = int(command[2]) if len(command) > 2 else 4194304
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUTRACE_")}
    env.pop("LD_PRELOAD", None)
    env["GPUTRACE_EMU_KERNEL_NS"] = f"tick={KERNEL_NS}"
    env["GPUTRACE_EMU_GBPS"] = f"pinned={PINNED_GBPS:g},memset={MEMSET_GBPS:g}"
    # The program's own pairs are checked against these durations: no front-end latency.
    env["GPUTRACE_EMU_EVENT_LATENCY_NS"] = "0"
    bare = run(command, env)
    traced = run(command, dict(env, LD_PRELOAD=a.lib, GPUTRACE_VERBOSITY="none"))
    check(bare[0] == 0, f"exited {bare[0]} bare: {bare[1]}")
    check(traced == bare, f"with the shim: exit {traced[0]}, stdout {traced[1]!r}; "
                          f"bare: exit {bare[0]}, stdout {bare[1]!r}")
    want = {"copy": round(nbytes / PINNED_GBPS), "memset": round(nbytes / MEMSET_GBPS),
            "kernel": KERNEL_NS}
    for how, (_, out) in (("bare", bare), ("traced", traced)):
        lines = out.splitlines()
        check(len(lines) > 0, f"{how}: no timings printed")
        for line in lines:
            m = LINE.match(line)
            if not check(m is not None, f"{how}: unexpected line {line!r}"):
                continue
            got = float(m.group(3)) * 1e6
            check(abs(got - want[m.group(2)]) <= SLACK_NS,
                  f"{how}: iteration {m.group(1)} {m.group(2)} read {got:.0f} ns, "
                  f"configured {want[m.group(2)]} ns")
    status = verdict.report()
    if status == 0:
        print("ok:", " ".join(command))
    return status


if __name__ == "__main__":
    sys.exit(main())
