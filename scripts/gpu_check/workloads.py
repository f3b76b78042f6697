"""Python workloads (numba-cuda, CuPy, PyTorch) run under gputrace and under the CUPTI
reference; each workload writes what it did (work.json, see py_numba.py) and the check
is that gputrace saw it, with plausible times:
  - launches of the workload's kernel (every kernel's, for PyTorch, whose cuBLAS kernel
    names vary) equal what it made, in both tracers, and the tracers' totals of all
    kernel launches are equal;
  - those kernels and the HtoD and DtoH copies have GPU time above zero, and bytes at
    least what the workload moved (frameworks add copies of their own);
  - the compile API the framework uses (NVVM for numba, NVRTC for CuPy) was recorded,
    successful, with a wall time above zero;
  - GPU busy time, the sum of kernel times and the sum of copy times are each no more
    than the process's wall time (the workloads use one stream).
GPU times are shown against CUPTI's, not checked: the frameworks launch work of their
own around the workload's."""
import json
import os
import sys
import time
from dataclasses import dataclass

import runner
from table import RunRow, detail_lines, fmt_bytes, fmt_diff, fmt_ns
from workload_common import SKIP_STATUS

HERE = os.path.dirname(os.path.abspath(__file__))


@dataclass(frozen=True)
class Workload:
    name: str
    script: str


WORKLOADS = (Workload("numba", "py_numba.py"), Workload("cupy", "py_cupy.py"),
             Workload("torch", "py_torch.py"))


@dataclass
class WorkloadRow(RunRow):
    version: str = ""
    skipped: str = ""
    kernel: str = ""
    launches: tuple = None  # (ours, CUPTI or "-", made)
    kernel_ns: tuple = None  # (ours, CUPTI or None)
    copy_bytes: tuple = None  # (HtoD, DtoH) in ours
    compile: str = ""

    @property
    def ok(self):
        return not self.skipped and not self.failures


def _kernels(doc, pattern):
    rows = [r for r in doc.get("kernels", []) if doc.get("tool") != "gputrace" or
            not r["graph"]]
    return [r for r in rows if pattern is None or pattern in r["name"]]


def _ours_ns(row):
    return row["gpu_ns"]["total"]


def _cupti_ns(row):
    return row["gpu_ns"] + row.get("graph_gpu_ns", 0)


def _check_launches(row, who, calls, pattern, made):
    if pattern and calls != made:
        row.failures.append(f"{who}: {calls} launches of *{pattern}*, the workload made {made}")
    if not pattern and calls < made:
        row.failures.append(f"{who}: {calls} kernel launches, the workload made at least {made}")


def check_workload(row, work, ours, cupti):
    """Fills `row` from the workload's own account and both tracers' reports (cupti
    None: its run failed, and only gputrace's report is checked)."""
    fail = row.failures.append
    pattern, made = work.get("kernel"), work["launches"]
    row.kernel = pattern or "(all)"
    ours_named = _kernels(ours, pattern)
    ours_calls = sum(r["calls"] for r in ours_named)
    row.launches = (ours_calls, "-", made)
    row.kernel_ns = (sum(_ours_ns(r) for r in ours_named), None)
    _check_launches(row, "ours", ours_calls, pattern, made)
    if cupti is not None:
        cupti_named = _kernels(cupti, pattern)
        cupti_calls = sum(r["calls"] for r in cupti_named)
        row.launches = (ours_calls, cupti_calls, made)
        row.kernel_ns = (row.kernel_ns[0], sum(_cupti_ns(r) for r in cupti_named))
        _check_launches(row, "CUPTI", cupti_calls, pattern, made)
        all_ours = sum(r["calls"] for r in _kernels(ours, None))
        all_cupti = sum(r["calls"] for r in _kernels(cupti, None))
        if all_ours != all_cupti:
            fail(f"kernel launches in all: ours {all_ours}, CUPTI {all_cupti}")
    for r in ours_named:
        if _ours_ns(r) <= 0:
            fail(f"no GPU time for {r['name']}")

    wall = ours["process"]["wall_ns"]
    busy = ours["totals"]["gpu_busy_ns"]
    if ours["totals"].get("dropped"):
        fail(f"{ours['totals']['dropped']} events dropped")
    if not 0 < busy <= wall:
        fail(f"GPU busy time {busy} ns against wall time {wall} ns")
    kernel_sum = sum(_ours_ns(r) for r in ours.get("kernels", []))  # graph launches too
    if kernel_sum > wall:
        fail(f"kernel GPU time {kernel_sum} ns exceeds the wall time {wall} ns")

    moved = []
    for direction in ("HtoD", "DtoH"):
        rows = [r for r in ours.get("memcpy", []) if r["direction"] == direction]
        nbytes, ns = sum(r["bytes"] for r in rows), sum(_ours_ns(r) for r in rows)
        moved.append(nbytes)
        expected = work[f"{direction.lower()}_bytes"]
        if nbytes < expected:
            fail(f"{direction}: {nbytes} bytes recorded, the workload moved {expected}")
        if ns <= 0:
            fail(f"{direction}: no GPU time")
    row.copy_bytes = tuple(moved)
    copy_sum = sum(_ours_ns(r) for r in ours.get("memcpy", []))
    if copy_sum > wall:
        fail(f"copy GPU time {copy_sum} ns exceeds the wall time {wall} ns")

    api = work.get("compile_api")
    if api:
        rows = [r for r in ours.get("compile", []) if r["api"] == api]
        calls = sum(r["calls"] for r in rows)
        ns = sum(r["wall_ns"]["total"] for r in rows)
        row.compile = f"{api} x{calls} {fmt_ns(ns)}"
        if calls == 0:
            fail(f"no {api} recorded")
        elif not any(r["ok"] for r in rows):
            fail(f"{api} recorded only as failing")
        elif not 0 < ns <= wall:
            fail(f"{api} wall time {ns} ns against the process's {wall} ns")


def _read_work(run_result):
    try:
        with open(os.path.join(run_result.directory, "work.json")) as f:
            return json.load(f), ""
    except (OSError, ValueError) as e:
        return None, f"no work.json from the workload: {e}"


def run_workload(workload, ctx):
    row = WorkloadRow(workload.name)
    if time.monotonic() > ctx.deadline:
        row.failures.append("not run: the time budget was spent")
        return row
    command = [sys.executable, os.path.join(HERE, workload.script), "work.json"]
    directory = os.path.join(ctx.runs, "python", workload.name)
    bare = runner.run(command, ctx.python_env, os.path.join(directory, "bare"),
                      runner.run_timeout(ctx))
    if bare.rc == SKIP_STATUS:
        row.skipped = bare.tail(1)
        return row
    if bare.rc != 0:
        row.failures.append(f"bare run: {bare.describe()}")
        return row
    shim = runner.run(command, runner.shim_environment(ctx.python_env, ctx.shim, "", ctx.gpu_timing),
                      os.path.join(directory, "shim"), runner.run_timeout(ctx))
    if shim.rc != 0:
        row.failures.append(f"under gputrace: {shim.describe()}")
        return row
    row.wall_bare, row.wall_shim = bare.wall_s, shim.wall_s
    work, why = _read_work(shim)
    ours, why_ours = runner.load_report(shim, "ours")
    for problem in (why, why_ours):
        if problem:
            row.failures.append(f"under gputrace: {problem}{shim.output_hint()}")
    if row.failures:
        return row
    row.version = work.get("version", "")
    # A failing CUPTI run leaves gputrace's report to be checked on its own.
    cupti = runner.run(command, runner.cupti_environment(ctx.python_env, ctx.cupti_ref, ""),
                       os.path.join(directory, "cupti"), runner.run_timeout(ctx))
    reference, why_cupti = None, ""
    if cupti.rc != 0:
        row.failures.append(f"under CUPTI: {cupti.describe()}")
    else:
        reference, why_cupti = runner.load_report(cupti, "cupti")
        if why_cupti:
            row.failures.append(f"under CUPTI: {why_cupti}{cupti.output_hint()}")
    check_workload(row, work, ours, reference)
    return row


_COLUMNS = (("workload", 8), ("kernel", 16), ("launches", 18),
            ("kernel GPU time", 22), ("diff", 7), ("HtoD / DtoH", 21), ("compile", 32),
            ("wall bare / shim", 17), ("ovhd", 7), ("result", 0))
LEGEND = ("launches: gputrace/CUPTI/made by the workload; kernel GPU time: gputrace / CUPTI "
          "(separate runs, not checked); HtoD / DtoH: bytes gputrace recorded")


def _line(cells):
    return " ".join(f"{cell:<{width}}" for cell, (_, width) in zip(cells, _COLUMNS)).rstrip()


def _row_line(row):
    if row.skipped:
        return f"{row.name:<{_COLUMNS[0][1]}} skipped: {row.skipped}"
    wall, overhead = row.wall_cells()
    launches = "/".join(str(n) for n in row.launches) if row.launches else "-"
    kernel_time, diff = "-", ""
    if row.kernel_ns:
        ours, reference = row.kernel_ns
        kernel_time = f"{fmt_ns(ours)} / {fmt_ns(reference) if reference is not None else '-'}"
        diff = fmt_diff(ours, reference) if reference is not None else ""
    copies = " / ".join(fmt_bytes(n) for n in row.copy_bytes) if row.copy_bytes else "-"
    return _line((row.name, row.kernel or "-", launches, kernel_time, diff, copies,
                  row.compile or "-", wall, overhead, "ok" if row.ok else "FAIL"))


def workload_lines(rows):
    lines = [_line([heading for heading, _ in _COLUMNS])]
    lines += [_row_line(row) for row in rows]
    lines.append(LEGEND)
    versions = [f"{row.name} ({row.version})" for row in rows if row.version]
    if versions:
        lines.append("versions: " + "; ".join(versions))
    return lines + detail_lines(rows)
