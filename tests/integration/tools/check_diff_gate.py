#!/usr/bin/env python3
"""gputrace diff as a CI gate with its defaults (SPEC §12): GPU-timed rows
and the GPU busy total, a minimum that ignores noise-sized rows, work that
moved between rows not counted as time added.

check_diff_gate.py --cli GPUTRACE --ode BATCH_ODE -- program [args...]

On the emulator (LD_LIBRARY_PATH set by ctest): the program runs RUNS times
with the same kernel durations; each run's diff against the first passes
(exit 0), though host times (launch calls, synchronize, wall) vary from run
to run. A run whose kernels take 30% longer fails (exit 1) with both
kernels slower and the GPU busy time up by about 30%. The batch ODE example
with its --pin-all (the advice applied: pageable copies pinned, their calls
doubled) passes against the same solver without it, its pinned copy row
"moved".
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from verdict import check, report  # noqa: E402

RUNS = 5
KERNEL_NS = 200000
ODE_ENV = {"GPUTRACE_EMU_KERNEL_NS": "integrate_oscillator=1000000,*=5000",
           "GPUTRACE_EMU_GBPS": "pinned=50,pageable=12,dtod=2000,memset=3000,peer=300"}


def traced(cli, out, command, **env):
    e = dict(os.environ, GPUTRACE_VERBOSITY="none", **env)
    p = subprocess.run([cli, "-o", out, "--", *command], env=e, capture_output=True, timeout=120)
    check(p.returncode == 0 and os.path.exists(out + ".json"),
          f"{' '.join(command)}: exit {p.returncode} {p.stderr.decode()[-300:]}")
    return out + ".json"


def diff(cli, base, new, *options):
    p = subprocess.run([cli, "diff", base, new, *options], capture_output=True, timeout=60)
    return p.returncode, p.stdout.decode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--ode", required=True)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    os.environ.pop("COLUMNS", None)
    with tempfile.TemporaryDirectory(prefix="gt-gate-") as d:
        same = {"GPUTRACE_EMU_KERNEL_NS": f"*={KERNEL_NS}"}
        runs = [traced(args.cli, os.path.join(d, f"run{i}"), command, **same) for i in range(RUNS)]
        for i, run in enumerate(runs[1:], 1):
            rc, out = diff(args.cli, runs[0], run)
            check(rc == 0 and "pass, nothing slower" in out,
                  f"run {i} against run 0: exit {rc}\n{out}")
        # every table compared, host times included, is what the defaults leave out
        rc, out = diff(args.cli, runs[0], runs[1], "-c", "all", "-f", "json")
        check(rc in (0, 1) and json.loads(out)["categories"][-1] == "api", f"-c all: exit {rc}")

        slow = traced(args.cli, os.path.join(d, "slow"), command,
                      GPUTRACE_EMU_KERNEL_NS=f"*={KERNEL_NS * 13 // 10}")
        rc, out = diff(args.cli, runs[0], slow)
        busy = re.search(r"; GPU busy \+(\d+\.\d)%\n", out)
        check(rc == 1 and "FAIL, 2 rows are slower or new, and the GPU busy time grew" in out and
              busy and 20 <= float(busy.group(1)) <= 30,
              f"kernels 30% slower: exit {rc}\n{out}")
        check(len(re.findall(r"^  slower +\+30\.0%", out, re.M)) == 2, f"slower rows:\n{out}")

        ode = [args.ode, "--systems", "65536"]
        base = traced(args.cli, os.path.join(d, "ode"), ode, **ODE_ENV)
        pinned = traced(args.cli, os.path.join(d, "pinned"), ode + ["--pin-all"], **ODE_ENV)
        rc, out = diff(args.cli, base, pinned)
        check(rc == 0 and re.search(r"^  moved .* DtoH pinned async$", out, re.M) and
              re.search(r"^  gone .* DtoH pageable async$", out, re.M),
              f"--pin-all against the solver as built: exit {rc}\n{out}")
    return report()


if __name__ == "__main__":
    sys.exit(main())
