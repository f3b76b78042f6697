#!/usr/bin/env python3
"""One renderer: a program run under gputrace writes text, JSON and CSV;
`gputrace report` of that JSON must print exactly the text the shim wrote,
and write exactly its CSV and JSON again.

check_render.py --cli GPUTRACE [--verbosity V]... [--require KEY]... -- program [args...]

The program runs once per verbosity (default: default and debug, which
shows every row, the NVTX tree, the largest leaks and the diagnostics)
with -o DIR/r.%p -f text,json,csv. "@DIR@" in an argument is replaced by
the run's directory (for programs that write a manifest there). Every
report written (a forking program writes several) is rendered. The
program's own exit status does not matter: what it recorded is the
subject. --require names a member that some report of each run must have
and not be 0 or empty ("totals.late_events", "config.gpu_timing_off_reason",
"memory.devices.context_released_allocs": a list matches when one of its
items does), so that a program meant to show a feature does show it.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from verdict import check, report  # noqa: E402


def first_difference(want, got):
    for n, (a, b) in enumerate(zip(want.splitlines(), got.splitlines()), 1):
        if a != b:
            return f"line {n}:\n  shim:   {a!r}\n  report: {b!r}"
    return f"lengths differ: {len(want)} bytes from the shim, {len(got)} from report"


def render(cli, path, *options):
    p = subprocess.run([cli, "report", path, *options], capture_output=True, timeout=60)
    check(p.returncode == 0, f"gputrace report {path} {' '.join(options)}: exit {p.returncode}: "
          f"{p.stderr.decode(errors='replace')}")
    return p.stdout


def compare(cli, json_path):
    base = json_path[:-len(".json")]
    pairs = [(".txt", ()), (".csv", ("-f", "csv")), (".json", ("-f", "json"))]
    for ext, options in pairs:
        with open(base + ext, "rb") as f:
            want = f.read()
        got = render(cli, json_path, *options)
        check(got == want, f"{os.path.basename(base)}{ext} differs from gputrace report "
              f"{' '.join(options)}: "
              f"{first_difference(want.decode(errors='replace'), got.decode(errors='replace'))}")
    return 3


def holds(value, path):
    """Whether the member at the dotted path is there and not 0 or empty."""
    if isinstance(value, list):
        return any(holds(v, path) for v in value)
    if not path:
        return bool(value)
    head, _, rest = path.partition(".")
    return isinstance(value, dict) and head in value and holds(value[head], rest)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--verbosity", action="append")
    ap.add_argument("--require", action="append", default=[])
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    os.environ.pop("COLUMNS", None)  # the text compared is a file's width
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    compared = 0
    for verbosity in args.verbosity or ["default", "debug"]:
        with tempfile.TemporaryDirectory(prefix="gt-render-") as d:
            argv = [a.replace("@DIR@", d) for a in command]
            env = dict(os.environ, GPUTRACE_LOG=os.path.join(d, "log"),
                       GT_APP_MANIFEST=os.path.join(d, "m.%p.json"),
                       GT_EXPECT=os.path.join(d, "expect.json"))
            subprocess.run([args.cli, "-v", verbosity, "-o", os.path.join(d, "r.%p"),
                            "-f", "text,json,csv", "--", *argv],
                           env=env, capture_output=True, timeout=120)
            reports = sorted(glob.glob(os.path.join(d, "r.*.json")))
            check(reports, f"{' '.join(argv)} at {verbosity}: no report written")
            loaded = []
            for path in reports:
                compared += compare(args.cli, path)
                with open(path, encoding="utf-8") as f:
                    loaded.append(json.load(f))
            for key in args.require:
                check(holds(loaded, key), f"{' '.join(argv)} at {verbosity}: no report has {key}")
    print(f"{compared} renderings compared")
    return report()


if __name__ == "__main__":
    sys.exit(main())
