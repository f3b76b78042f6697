#!/usr/bin/env python3
"""timing_prog under libgputrace.so on a variant of the emulated driver.

check_timing.py --lib LIB --prog PROG --driver-dir DIR --emu-dir DIR VARIANT

DIR holds the libcuda.so.1 to use (ahead of the emulator's own directory).
Every case: the program's exit status and output are the same bare and
traced, and every launch, copy and memset is counted.

  full, no-ptsz, no-capturing-record
      GPU timing works: each kernel, copy and memset has its configured
      GPU time (1%), the captured kernels have none, and nothing is said
      about timing. no-ptsz lacks the per-thread variants of the capture
      query and the event record; no-capturing-record lacks
      cuStreamIsCapturing and cuEventRecord in every variant.
  no-elapsed
      The driver has no cuEventElapsedTime in either name: no GPU time can
      be had. One warning at default verbosity (none at `none`), the
      summary's header says "GPU timing off: <reason>", the JSON keeps
      config.gpu_timing "events" and gives config.gpu_timing_off_reason,
      and no row claims a GPU time.
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

LAUNCHES = 20
CAPTURED = 3
KERNEL_NS = {"vec_add": 200_000, "apps::scale": 300_000}
GBPS = {"pinned": 20, "memset": 100}
COPY_BYTES = 4 << 20
MEMSET_BYTES = 1 << 20
TIMEOUT = 60
TIMED = ("full", "no-ptsz", "no-capturing-record")
NO_ELAPSED_REASON = "the driver has no cuEventElapsedTime_v2 or cuEventElapsedTime"


def env_for(args, **extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GPUTRACE_") and k not in ("LD_PRELOAD", "NVTX_INJECTION64_PATH")}
    env["LD_LIBRARY_PATH"] = os.pathsep.join(dict.fromkeys([args.driver_dir, args.emu_dir]))
    env["GPUTRACE_EMU_KERNEL_NS"] = ",".join(f"{k}={v}" for k, v in KERNEL_NS.items())
    env["GPUTRACE_EMU_GBPS"] = ",".join(f"{k}={v}" for k, v in GBPS.items())
    # What event timing takes from drivers that lack entry points: event
    # pairs, which read these durations exactly without the emulator's latency.
    env["GPUTRACE_GPU_TIMING"] = "events"
    env["GPUTRACE_EMU_EVENT_LATENCY_NS"] = "0"
    env.update(extra)
    return env


def run(args, env):
    p = subprocess.run([args.prog, str(LAUNCHES)], env=env, capture_output=True, text=True,
                       timeout=TIMEOUT)
    if p.returncode != 0:
        print(p.stdout, p.stderr)
    return p


def traced(args, out_dir, verbosity="default"):
    template = os.path.join(out_dir, f"rep-{verbosity}")
    env = env_for(args, LD_PRELOAD=args.lib, GPUTRACE_OUTPUT=template,
                  GPUTRACE_FORMAT="json", GPUTRACE_VERBOSITY=verbosity)
    p = run(args, env)
    with open(template + ".json") as f:
        return p, json.load(f)


def rows_by(rows, key):
    return {r[key]: r for r in rows}


def near(got, want, what, tolerance=0.01):
    return check(abs(got - want) <= tolerance * want, f"{what}: {got} ns, configured {want} ns")


def copy_ns(n, rate):
    return round(n / rate)


def check_counts(rep):
    """Calls and bytes: the same whatever the driver lets the tracer time."""
    kernels = rows_by([k for k in rep["kernels"] if not k.get("graph")], "name")
    vec_add = kernels.get("vec_add", {})
    scale = next((k for n, k in kernels.items() if n.startswith("apps::scale")), {})
    check(vec_add.get("calls") == 2 * LAUNCHES, f"vec_add calls: {vec_add.get('calls')}")
    check(scale.get("calls") == LAUNCHES + CAPTURED, f"apps::scale calls: {scale.get('calls')}")
    graphs = [k for k in rep["kernels"] if k.get("graph")]
    check(len(graphs) == 1 and graphs[0]["calls"] == 1, f"graph launches: {graphs}")
    copies = {(c["direction"], c["host_memory"], c["async"]): c for c in rep["memcpy"]}
    htod = copies.get(("HtoD", "pinned", True), {})
    dtoh = copies.get(("DtoH", "pinned", False), {})
    check(htod.get("calls") == 1 and htod.get("bytes") == COPY_BYTES, f"HtoD copy: {htod}")
    check(dtoh.get("calls") == 1 and dtoh.get("bytes") == MEMSET_BYTES, f"DtoH copy: {dtoh}")
    memsets = rep["memset"]
    check(len(memsets) == 1 and memsets[0]["calls"] == 1 and memsets[0]["bytes"] == MEMSET_BYTES,
          f"memsets: {memsets}")
    check(rep["totals"]["dropped"] == 0, f"dropped: {rep['totals']['dropped']}")
    return vec_add, scale, graphs, htod, dtoh, memsets


def check_timed(rep, stderr):
    vec_add, scale, graphs, htod, dtoh, memsets = check_counts(rep)
    check(vec_add.get("timed") == 2 * LAUNCHES, f"vec_add timed: {vec_add.get('timed')}")
    near(vec_add["gpu_ns"]["total"], 2 * LAUNCHES * KERNEL_NS["vec_add"], "vec_add GPU time")
    check(scale.get("timed") == LAUNCHES, f"apps::scale timed: {scale.get('timed')} (captured: none)")
    near(scale["gpu_ns"]["total"], LAUNCHES * KERNEL_NS["apps::scale"], "apps::scale GPU time")
    near(graphs[0]["gpu_ns"]["total"], CAPTURED * KERNEL_NS["apps::scale"], "graph launch GPU time")
    near(htod["gpu_ns"]["total"], copy_ns(COPY_BYTES, GBPS["pinned"]), "HtoD GPU time")
    near(dtoh["gpu_ns"]["total"], copy_ns(MEMSET_BYTES, GBPS["pinned"]), "DtoH GPU time")
    near(memsets[0]["gpu_ns"]["total"], copy_ns(MEMSET_BYTES, GBPS["memset"]), "memset GPU time")
    check("gpu_timing_off_reason" not in rep["config"], f"config: {rep['config']}")
    check("GPU timing off" not in stderr, f"timing said to be off:\n{stderr}")
    check("warning" not in stderr, f"a warning:\n{stderr}")


def check_untimed(rep, stderr):
    vec_add, scale, graphs, htod, dtoh, memsets = check_counts(rep)
    rows = [vec_add, scale, graphs[0], htod, dtoh, memsets[0]]
    check(all(r.get("timed") == 0 and r["gpu_ns"]["total"] == 0 for r in rows),
          f"rows with a GPU time: {rows}")
    check(rep["config"]["gpu_timing"] == "events", f"config.gpu_timing: {rep['config']}")
    check(rep["config"].get("gpu_timing_off_reason") == NO_ELAPSED_REASON,
          f"config.gpu_timing_off_reason: {rep['config'].get('gpu_timing_off_reason')!r}")
    warnings = [line for line in stderr.splitlines() if line.startswith("gputrace: warning:")]
    check(warnings == [f"gputrace: warning: GPU timing off: {NO_ELAPSED_REASON}; kernels, "
                       "copies and memsets are counted without GPU time"],
          f"warnings: {warnings}")
    header = next((line for line in stderr.splitlines() if re.match(r"gputrace: .* \| wall ", line)),
                  "")
    check("| GPU timing off |" in header, f"header: {header!r}")
    check(f"gputrace: GPU timing off: {NO_ELAPSED_REASON}" in stderr.splitlines(),
          f"no reason under the header:\n{stderr}")
    check(re.search(r"^kernel: .*, not timed \(GPU timing off\)$", stderr, re.M) is not None,
          f"kernel table title:\n{stderr}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--prog", required=True)
    ap.add_argument("--driver-dir", required=True)
    ap.add_argument("--emu-dir", required=True)
    ap.add_argument("variant")
    args = ap.parse_args()

    bare = run(args, env_for(args))
    check(bare.returncode == 0, f"bare run exited {bare.returncode}")
    with tempfile.TemporaryDirectory() as out_dir:
        p, rep = traced(args, out_dir)
        check(p.returncode == bare.returncode, f"traced run exited {p.returncode}")
        check(p.stdout == bare.stdout, f"output changed:\n{bare.stdout}\n---\n{p.stdout}")
        if args.variant in TIMED:
            check_timed(rep, p.stderr)
        else:
            check_untimed(rep, p.stderr)
            quiet, rep = traced(args, out_dir, "none")
            check(quiet.stderr == "", f"output at verbosity none:\n{quiet.stderr}")
            check(rep["config"].get("gpu_timing_off_reason") == NO_ELAPSED_REASON,
                  "the JSON of a quiet run gives no reason")
    return report()


if __name__ == "__main__":
    sys.exit(main())
