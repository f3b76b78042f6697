#!/usr/bin/env python3
"""What each tracer adds to a kernel launch (scripts/gpu-check.sh runs it after the
fidelity check).

launch_cost.py --build-dir DIR [--launches N] [--runs R] [--no-cupti] [--timeout S]
               [--output-dir OUT] [--library-path PATH]
  Runs gpu/launch_cost in its modes `one` (one stream) and `four` (4 threads, 4 streams)
  bare, under libgputrace.so with GPU timing off and on, and under the CUPTI reference
  (each tracer alone); R rounds, the order of the configurations rotated each round so
  that a drift in the machine's state touches all alike; and its mode `event` (the cost
  of one cuEventRecord) bare. Prints the medians as a Markdown table and writes
  OUT/launch_cost.json (OUT: DIR unless given); each run's output and gputrace's reports
  stay in OUT/launch-cost/MODE/CONFIG. Exit status 1 when a run failed (the table says
  which and why), 2 when the build lacks what the runs need.
"""
import argparse
import json
import os
import statistics
import sys
from dataclasses import dataclass

import runner
from programs import CUPTI_REF, LAUNCH_COST, SHIM
from run import cuda_root

MODES = (("one", "one stream"), ("four", "4 threads, 4 streams"))


@dataclass(frozen=True)
class Config:
    key: str
    column: str
    timing: str = ""  # GPUTRACE_GPU_TIMING under gputrace; "" for no gputrace
    cupti: bool = False


BARE = Config("bare", "bare ns/launch")
CONFIGS = (BARE,
           Config("timing_off", "+ gputrace timing off", timing="off"),
           Config("timing_on", "+ gputrace timing on", timing="events"),
           Config("timing_cupti", "+ gputrace CUPTI source", timing="cupti"),
           Config("cupti", "+ CUPTI", cupti=True))


def environment(config, base, build, directory):
    if config.cupti:
        return runner.cupti_environment(base, os.path.join(build, CUPTI_REF), directory)
    if config.timing:
        return runner.shim_environment(base, os.path.join(build, SHIM), directory, config.timing)
    return base


@dataclass
class Cell:
    values: list
    error: str = ""  # the first failed run's, in a few words

    @property
    def median(self):
        return statistics.median(self.values) if self.values and not self.error else None

    def as_json(self):
        return {"ns": self.values, "median": self.median, "error": self.error or None}


def measure(command, env, directory, timeout, field, cell):
    """One run of the program; its figure, or the reason there is none, into `cell`."""
    result = runner.run(command, env, directory, timeout)
    if result.rc != 0:
        cell.error = cell.error or result.describe()
        return
    lines = result.output("stdout").decode(errors="replace").strip().splitlines()
    try:
        cell.values.append(float(json.loads(lines[-1])[field]))
    except (IndexError, ValueError, KeyError, TypeError):
        cell.error = cell.error or f"no {field} in its output{result.output_hint()}"


def measure_all(args, build, out):
    configs = [c for c in CONFIGS if not (c.cupti and args.no_cupti)]
    # Absolute: each run's working directory is its own.
    library_path = os.path.abspath(args.library_path or os.path.join(cuda_root(build), "lib64"))
    base = runner.clean_environment(library_path)
    program = os.path.join(build, LAUNCH_COST)
    cells = {mode: {c.key: Cell([]) for c in configs} for mode, _ in MODES}
    for rnd in range(args.runs):
        shift = rnd % len(configs)
        for config in configs[shift:] + configs[:shift]:
            for mode, _ in MODES:
                directory = os.path.join(out, "launch-cost", mode, config.key)
                measure([program, mode, str(args.launches)],
                        environment(config, base, build, directory), directory, args.timeout,
                        "ns_per_launch", cells[mode][config.key])
    cells["event"] = {"bare": Cell([])}
    for _ in range(args.runs):
        measure([program, "event", str(args.launches)], base,
                os.path.join(out, "launch-cost", "event", "bare"), args.timeout,
                "ns_per_record", cells["event"]["bare"])
    return configs, cells


def table_lines(configs, cells, args):
    lines = [f"launch cost: {args.launches} empty-kernel launches per run, median of {args.runs} "
             f"run{'s' if args.runs > 1 else ''}; host wall time from the first launch to the "
             f"stream synchronized, per launch (4 threads: their wall time over all launches);",
             "  each tracer's column: ns it adds per launch (its median - the bare median)", "",
             "| launches | " + " | ".join(c.column for c in configs) + " |",
             "|---" * (len(configs) + 1) + "|"]
    failures = []
    for mode, label in MODES:
        bare = cells[mode][BARE.key].median
        row = []
        for config in configs:
            cell = cells[mode][config.key]
            if cell.error:
                row.append("failed")
                failures.append(f"failed: {label}, {config.key}: {cell.error}")
            elif config is BARE:
                row.append(f"{cell.median:.0f}")
            else:
                row.append(f"{cell.median - bare:+.0f}" if bare is not None else
                           f"{cell.median:.0f} in all")
        lines.append(f"| {label} | " + " | ".join(row) + " |")
    lines.append("")
    event = cells["event"]["bare"]
    lines.append(f"cuEventRecord: {event.median:.0f} ns per call (bare, idle stream)"
                 if not event.error else f"cuEventRecord: failed: {event.error}")
    return lines + failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("--launches", type=int, default=1000000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-cupti", action="store_true", help="skip the CUPTI reference")
    parser.add_argument("--timeout", type=float, default=120, help="seconds per run")
    parser.add_argument("--output-dir", help="where the runs and launch_cost.json go")
    parser.add_argument("--library-path",
                        help="LD_LIBRARY_PATH's first entry (default: the toolkit's lib64)")
    args = parser.parse_args()
    if args.launches < 4 or args.runs < 1:
        parser.error("--launches must be at least 4 and --runs at least 1")
    build = os.path.abspath(args.build_dir)
    out = os.path.abspath(args.output_dir or build)
    needed = [LAUNCH_COST, SHIM] + ([] if args.no_cupti else [CUPTI_REF])
    missing = [p for p in needed if not os.path.isfile(os.path.join(build, p))]
    if missing:
        print(f"launch-cost: missing from the build: {', '.join(missing)}", file=sys.stderr)
        return 2

    configs, cells = measure_all(args, build, out)
    lines = table_lines(configs, cells, args)
    print("\n".join(lines))
    doc = {"launches": args.launches, "runs": args.runs,
           "results": {mode: {key: cell.as_json() for key, cell in row.items()}
                       for mode, row in cells.items()}}
    with open(os.path.join(out, "launch_cost.json"), "w") as f:
        json.dump(doc, f, indent=1)
    failed = any(cell.error for row in cells.values() for cell in row.values())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
