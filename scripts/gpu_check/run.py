#!/usr/bin/env python3
"""The real-GPU check of gputrace (run by scripts/gpu-check.sh after its build).

run.py --build-dir DIR [options]
  Runs every program of programs.py bare, under libgputrace.so and under the CUPTI
  reference (one tracer per run; then, for programs that copy, one run with both, for the
  copy times), compares the reports (compare.py), runs
  the Python workloads (workloads.py), prints the fidelity tables and writes
  DIR/summary.json. Exit status 1 when any check fails.
run.py --build-dir DIR --check-artifacts
  Only checks that the build holds everything the check runs.
"""
import argparse
import dataclasses
import datetime
import json
import os
import re
import subprocess
import sys
import time

import compare
import runner
import workloads
from programs import ARTIFACTS, CUPTI_REF, EVENT_FLOOR, PROGRAMS, SHIM
from table import ProgramRow, program_lines

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _output(command, timeout=30):
    """A command's stdout, or '' when it cannot run."""
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def cuda_root(build):
    """The toolkit the build used (its CMake cache), for the programs' libraries."""
    try:
        with open(os.path.join(build, "CMakeCache.txt")) as f:
            for line in f:
                if line.startswith("GPUTRACE_CUDA_ROOT:"):
                    return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return "/usr/local/cuda"


def environment_lines(build):
    """What the results hold for: GPU, driver, CUDA and the source revision."""
    lines = []
    gpus = _output(["nvidia-smi", "--query-gpu=index,name,memory.total,compute_cap,"
                    "driver_version", "--format=csv,noheader"]).strip().splitlines()
    for gpu in gpus or ["(nvidia-smi gave no GPU list)"]:
        lines.append(f"GPU {gpu}")
    smi = re.search(r"CUDA Version:\s*([\d.]+)", _output(["nvidia-smi"]))
    nvcc = re.search(r"release ([\d.]+), (V[\d.]+)",
                     _output([os.path.join(cuda_root(build), "bin", "nvcc"), "--version"]))
    lines.append(f"CUDA: driver supports {smi.group(1) if smi else '?'}, toolkit nvcc "
                 f"{' '.join(nvcc.groups()) if nvcc else '?'} ({cuda_root(build)}); "
                 f"python {sys.version.split()[0]}")
    commit = _output(["git", "-C", REPO, "rev-parse", "--short", "HEAD"]).strip()
    dirty = _output(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"])
    lines.append(f"source: {commit or 'no git checkout'}"
                 f"{' with uncommitted changes' if dirty.strip() else ''}; build: {build}")
    return lines


def rule_lines(ctx):
    return [
        f"gputrace's GPU timing: GPUTRACE_GPU_TIMING={ctx.gpu_timing}"
        f"{' (CUPTI must be the source)' if ctx.gpu_timing != 'events' else ''}; with CUPTI "
        "the floor is 0 and the kernels graphs ran are compared in their kernels' rows;",
        "checks: per kernel name, launches equal; graph launches, copy and memset calls and "
        "bytes equal;",
        f"  GPU time totals (kernels with graph launches, copies, memsets) within "
        f"max({ctx.tolerance:.0%} of CUPTI's, {ctx.floor_ns / 1000:g} us x operations CUPTI "
        f"timed):",
        "  the floor is one event pair's allowance: its timestamps are taken by the GPU's "
        "front end around the work, CUPTI's by the units that do it (compare.py);",
        f"  {ctx.floor_source}",
        "  copy times from a third run with both tracers (a copy's speed moves between runs);",
        "  copies of pageable or managed memory (staged) held to the lower bound only (the "
        "pair also times the driver's staging and page migration): 'ok (staging)';",
        "  programs whose streams overlap are held to the lower bound only (an event pair "
        "also times waits behind other streams' work): 'ok (overlap)';",
        f"  each tracer in its own run; wall: best of {ctx.repeat} run"
        f"{'s' if ctx.repeat > 1 else ''} bare and under gputrace, not checked.",
    ]


def measure_floor(ctx, floor_ns, explicit):
    """The floor: what an event pair reads around work of well under a microsecond after
    the GPU has idled (tests/gpu/event_floor.cu, run bare), unless --floor-us names one.
    Returns (floor_ns, the line that says where it came from)."""
    if explicit:
        return floor_ns, f"floor {floor_ns / 1000:g} us: given by --floor-us"
    run = runner.run([os.path.join(ctx.build, EVENT_FLOOR)], ctx.program_env,
                     os.path.join(ctx.runs, "event_floor"), runner.run_timeout(ctx))
    try:
        figures = json.loads(run.output("stdout").decode().strip().splitlines()[-1])
        measured = float(figures["floor_ns"])
        readings = ", ".join(f"{op} {figures[op]['queued_ns'] / 1000:.1f} us queued / "
                             f"{figures[op]['after_pause_ns'] / 1000:.1f} us after a "
                             f"{figures['pause_ms']} ms pause"
                             for op in ("kernel", "memset", "dtod"))
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        return floor_ns, (f"floor {floor_ns / 1000:g} us: the default (event_floor did not "
                          f"measure one: {run.describe()}{run.output_hint()})")
    chosen = max(floor_ns, measured)
    return chosen, (f"floor {chosen / 1000:g} us: event pairs on this GPU around work of well "
                    f"under 1 us read {readings}")


def _fail(row, text):
    row.failures.append(text)
    return row


def run_program(program, ctx):
    """Runs one program three ways and compares what the tracers saw."""
    row = ProgramRow(program.name)
    if time.monotonic() > ctx.deadline:
        return _fail(row, "not run: the time budget was spent")
    command = [os.path.join(ctx.build, program.path), *program.args]
    directory = os.path.join(ctx.runs, program.name)
    bare_walls, shim_walls = [], []
    for _ in range(ctx.repeat):
        bare = runner.run(command, ctx.program_env, os.path.join(directory, "bare"),
                          runner.run_timeout(ctx))
        if bare.rc != 0:
            return _fail(row, f"bare run: {bare.describe()}")
        shim_dir = os.path.join(directory, "shim")
        shim = runner.run(command, runner.shim_environment(ctx.program_env, ctx.shim, shim_dir,
                                                           ctx.gpu_timing),
                          shim_dir, runner.run_timeout(ctx))
        if shim.rc != bare.rc:
            return _fail(row, f"under gputrace: {shim.describe()}")
        bare_walls.append(bare.wall_s)
        shim_walls.append(shim.wall_s)
    row.wall_bare, row.wall_shim = min(bare_walls), min(shim_walls)
    if program.same_stdout and bare.output("stdout") != shim.output("stdout"):
        row.failures.append("stdout differs under gputrace")
    if b"gputrace" in shim.output("stderr"):
        row.notes.append(f"gputrace wrote to stderr at verbosity none: {shim.tail(2)}")

    cupti_dir = os.path.join(directory, "cupti")
    cupti_env = runner.cupti_environment(ctx.program_env, ctx.cupti_ref, cupti_dir)
    cupti = runner.run(command, cupti_env, cupti_dir, runner.run_timeout(ctx))
    if cupti.rc != 0:
        return _fail(row, f"under CUPTI: {cupti.describe()}")
    ours, why_ours = runner.load_report(shim, "ours")
    reference, why_cupti = runner.load_report(cupti, "cupti")
    if why_ours:
        row.failures.append(f"under gputrace: {why_ours}{shim.output_hint()}")
    if why_cupti:
        row.failures.append(f"under CUPTI: {why_cupti}{cupti.output_hint()}")
    if ours is None or reference is None:
        return row
    timing = ours.get("gpu_timing", {})
    source = timing.get("source", "events")
    row.notes.append(f"GPU times from {source}: {timing.get('detail', '')}")
    if ctx.gpu_timing in ("auto", "cupti") and source != "cupti":
        row.failures.append(f"GPUTRACE_GPU_TIMING={ctx.gpu_timing} did not give CUPTI: "
                            f"{timing.get('detail', '')}")
    ours = compare.from_ours(ours)
    reference = compare.from_cupti(reference, ours.nodes_in_rows)
    same_run = None
    # With both tracers in one process gputrace sees another CUPTI client and
    # times with event pairs: that run stands for an event-pair source only.
    if source != "cupti" and (compare.has_copies(ours) or compare.has_copies(reference)):
        same_run = both_tracers(command, directory, ctx, row)
    # CUPTI's records are the work's own times, with no event pair's
    # front-end latency to allow for: no floor.
    floor_ns = 0 if source == "cupti" else ctx.floor_ns
    row.comparison = compare.compare(program.name, ours, reference, ctx.tolerance, floor_ns,
                                     program.overlap, same_run)
    return row


def both_tracers(command, directory, ctx, row):
    """(ours, CUPTI) Totals of one run with both tracers, for the copy times, which
    move between runs (compare.py); None, with a note, when that run fails."""
    both_dir = os.path.join(directory, "both")
    env = runner.shim_environment(runner.cupti_environment(ctx.program_env, ctx.cupti_ref,
                                                           both_dir), ctx.shim, both_dir)
    both = runner.run(command, env, both_dir, runner.run_timeout(ctx))
    ours, why_ours = runner.load_report(both, "ours")
    reference, why_cupti = runner.load_report(both, "cupti")
    if both.rc != 0 or ours is None or reference is None:
        why = "; ".join(w for w in (why_ours, why_cupti) if w) or both.describe()
        row.notes.append(f"the run with both tracers gave no reports ({why}): copies "
                         f"compared across runs")
        return None
    return compare.from_ours(ours), compare.from_cupti(reference)


def _guarded(check, item, ctx, row_type):
    """check(item, ctx), or a failed row when the check itself breaks (a report of an
    unexpected shape, say): one program's trouble never stops the others'."""
    try:
        return check(item, ctx)
    except Exception as e:  # noqa: BLE001 - any error becomes the row's failure
        return row_type(item.name, failures=[f"the check broke: {type(e).__name__}: {e}"])


def check_artifacts(build):
    missing = [path for path in ARTIFACTS if not os.path.isfile(os.path.join(build, path))]
    for path in missing:
        print(f"gpu-check: missing from the build: {os.path.join(build, path)}", file=sys.stderr)
    return 1 if missing else 0


def _summary(rows, python_rows, ctx, path):
    doc = {"gpu_timing": ctx.gpu_timing, "floor_ns": ctx.floor_ns,
           "floor_source": ctx.floor_source,
           "programs": [dict(dataclasses.asdict(r), ok=r.ok) for r in rows],
           "python": [dict(dataclasses.asdict(r), ok=r.ok) for r in python_rows]}
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("--check-artifacts", action="store_true")
    parser.add_argument("--only", help="run only the programs and workloads matching this regex")
    parser.add_argument("--no-python", action="store_true", help="skip the Python workloads")
    parser.add_argument("--repeat", type=int, default=2, help="bare and gputrace runs for wall")
    parser.add_argument("--timeout", type=float, default=90, help="seconds per run")
    parser.add_argument("--budget", type=float, default=360,
                        help="seconds for all runs; programs not started by then fail")
    parser.add_argument("--tolerance", type=float, default=compare.DEFAULT_TOLERANCE)
    parser.add_argument("--gpu-timing", choices=("auto", "cupti", "events"), default="auto",
                        help="GPUTRACE_GPU_TIMING for gputrace's runs (default auto: CUPTI, "
                             "which must be used)")
    parser.add_argument("--floor-us", type=float,
                        help="the per-operation floor (default: measured on the GPU, at least "
                             f"{compare.DEFAULT_FLOOR_NS / 1000:g})")
    args = parser.parse_args()
    build = os.path.abspath(args.build_dir)
    if args.check_artifacts:
        return check_artifacts(build)
    if check_artifacts(build):
        return 1

    library_path = os.path.join(cuda_root(build), "lib64")
    ctx = runner.Context(build=build, runs=os.path.join(build, "runs"),
                  shim=os.path.join(build, SHIM), cupti_ref=os.path.join(build, CUPTI_REF),
                  program_env=runner.clean_environment(library_path),
                  python_env=runner.clean_environment(), timeout=args.timeout,
                  repeat=max(1, args.repeat), tolerance=args.tolerance,
                  floor_ns=(args.floor_us if args.floor_us is not None else
                            compare.DEFAULT_FLOOR_NS / 1000) * 1000,
                  deadline=time.monotonic() + args.budget, gpu_timing=args.gpu_timing)
    ctx.floor_ns, ctx.floor_source = measure_floor(ctx, ctx.floor_ns, args.floor_us is not None)
    selected = re.compile(args.only) if args.only else None
    started = time.monotonic()
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(f"gputrace GPU check, {now}")
    for line in environment_lines(build) + rule_lines(ctx):
        print(line)
    print(flush=True)

    rows = []
    for program in PROGRAMS:
        if selected and not selected.search(program.name):
            continue
        print(f"running {program.name}", flush=True)
        rows.append(_guarded(run_program, program, ctx, ProgramRow))
    python_rows = []
    if not args.no_python:
        for workload in workloads.WORKLOADS:
            if selected and not selected.search(workload.name):
                continue
            print(f"running python workload {workload.name}", flush=True)
            python_rows.append(_guarded(workloads.run_workload, workload, ctx,
                                        workloads.WorkloadRow))

    print()
    for line in program_lines(rows):
        print(line)
    if python_rows:
        print()
        for line in workloads.workload_lines(python_rows):
            print(line)
    failed = [r.name for r in rows if not r.ok] + [r.name for r in python_rows if
                                                       not r.ok and not r.skipped]
    skipped = [r.name for r in python_rows if r.skipped]
    _summary(rows, python_rows, ctx, os.path.join(build, "summary.json"))
    print()
    print(f"gpu-check: {len(rows)} programs, {len(python_rows) - len(skipped)} Python workloads "
          f"({len(skipped)} skipped) in {time.monotonic() - started:.0f} s: "
          f"{'FAILED: ' + ', '.join(failed) if failed else 'all checks passed'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
