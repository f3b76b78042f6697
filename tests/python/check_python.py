#!/usr/bin/env python3
"""Runs a Python program of progs/ on the emulated driver, bare and under
the gputrace command, and holds the report against what the program did
(its manifest, progs/recorder.py) and what the emulator saw
(GPUTRACE_EMU_STATS).

check_python.py --venv VENV --cli GPUTRACE --emu-lib DIR [--env K=V]... PROGRAM [ARGS...]

  run       exit code 0 and the same stdout bare and traced, the same
            manifest both ways, nothing dropped; the compile libraries are
            the client's own wheels, libcuda the emulator's
  kernels   a row per kernel, launches as the program made them, all of
            them timed, GPU time = launches x the configured duration (1%);
            the launches add up to the emulator's count
  memcpy    rows by (direction, host memory, async): calls and bytes
            exactly, GPU time at the configured bandwidth (1%); memsets too
  memory    device 0 and pinned host memory: allocations and frees made
  compile   rows by (api, name, ok): calls and bytes; an NVVM program by
            the kernel it compiles, with its device functions
  module    rows by (api, kind): the emulator's count of loads, and the
            program's driver links (cuLinkComplete)
  nvtx      rows by (domain, name): calls, and the GPU time of the work
            launched inside each range (1%); the payloads the ranges carried
            (the nvtx package's payload=), summed, per GPU second, and the
            named fields of structured payloads likewise
  timings   the program's own event timings of copies read the configured
            transfer time, traced as bare (the same stdout)
  gpu       GPU timing in auto: CUPTI, the emulator's libcupti beside its
            libcuda; where the program loads the environment's libcudart
            (numba-cuda), the CUPTI wheel's libcupti beside it was tried
            first and passed over (NVIDIA's CUPTI 13.5 does not run on the
            emulated 13.0 driver), which the detail says

Exit status 0 when every check holds, 77 (skipped) when VENV is missing
because PyPI could not be reached, 1 otherwise.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import verdict  # noqa: E402
from verdict import check  # noqa: E402

SKIP = 77
PROGS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "progs")
TOLERANCE = 0.01
# Every kernel of the programs has a duration of its own, so that a launch
# counted under the wrong name shows. GB/s, 10^9 bytes per second.
KERNEL_NS = {"numba_defs::scale": 3000, "numba_defs::axpy": 7000, "saxpy": 5000, "fill": 2000}
DEFAULT_KERNEL_NS = 1000
GBPS = {"pageable": 10.0, "pinned": 25.0, "dtod": 1500.0, "memset": 3000.0}
# Event timings: the emulator's exact time, read back as float milliseconds.
TIMING_SLACK_NS = 1000


def emu_env(emu_lib):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GPUTRACE_", "GT_", "NVTX_", "CUDA_PYTHON_"))}
    env.pop("LD_PRELOAD", None)
    # The emulated libcuda.so.1 only: the clients bring their own NVRTC,
    # NVVM, nvJitLink and CUDA runtime, which must be the ones used.
    env["LD_LIBRARY_PATH"] = emu_lib
    env["GPUTRACE_EMU_KERNEL_NS"] = ",".join(
        [f"{k}={v}" for k, v in KERNEL_NS.items()] + [f"*={DEFAULT_KERNEL_NS}"])
    env["GPUTRACE_EMU_GBPS"] = ",".join(f"{k}={v:g}" for k, v in GBPS.items())
    # GPU times are checked against these durations: event pairs read them exactly.
    env["GPUTRACE_EMU_EVENT_LATENCY_NS"] = "0"
    env["PYTHONPATH"] = PROGS
    return env


def run(command, env, tmp, tag):
    env = dict(env, GT_PY_MANIFEST=os.path.join(tmp, f"{tag}.manifest.json"),
               GPUTRACE_EMU_STATS=os.path.join(tmp, f"{tag}.stats.json"))
    r = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    loaded = {}
    for what in ("manifest", "stats"):
        path = os.path.join(tmp, f"{tag}.{what}.json")
        if os.path.exists(path):
            with open(path) as f:
                loaded[what] = json.load(f)
    return r, loaded


def transfer_ns(nbytes, rate):
    return round(nbytes / GBPS[rate])


def kernel_ns(name):
    return KERNEL_NS.get(name, DEFAULT_KERNEL_NS)


def near(got, want):
    return abs(got - want) <= TOLERANCE * want + 1


def function_name(name):
    """`numba_defs::scale[abi:v1][abi:cw51...](Array<float, 1, C>, double)`
    -> `numba_defs::scale`: no parameter list, no ABI tags."""
    depth, cut = 0, len(name)
    for i in range(len(name) - 1, -1, -1):
        if name[i] == ")":
            depth += 1
        elif name[i] == "(":
            depth -= 1
            if depth == 0:
                cut = i
                break
    return re.sub(r"\[abi:[^\]]*\]", "", name[:cut])


def paired(what, got_rows, want_rows, keys):
    """Rows keyed by `keys`: the same keys on both sides (checked), and the
    (key, got, wanted) of each key the report has."""
    got = {tuple(r[k] for k in keys): r for r in got_rows}
    want = {tuple(r[k] for k in keys): r for r in want_rows}
    check(sorted(got) == sorted(want), f"{what} rows {sorted(got)}, made {sorted(want)}")
    return [(key, got[key], w) for key, w in sorted(want.items()) if key in got]


def same_work(what, key, got, want):
    """The calls and bytes of a report row against the program's."""
    check(got["calls"] == want["calls"] and got["bytes"] == want["bytes"],
          f"{what} {key}: {got['calls']} calls of {got['bytes']} bytes in all, "
          f"the program made {want['calls']} of {want['bytes']}")


def check_run(bare, traced, program):
    (rb, mb), (rt, mt) = bare, traced
    check(rb.returncode == 0, f"{program} exited {rb.returncode} bare: {rb.stdout}{rb.stderr}")
    check(rt.returncode == rb.returncode,
          f"exit {rt.returncode} under gputrace, {rb.returncode} bare: {rt.stderr}")
    check(rt.stdout == rb.stdout,
          f"stdout under gputrace {rt.stdout!r}, bare {rb.stdout!r}")
    for m, how in ((mb, "bare"), (mt, "traced")):
        check("manifest" in m and "stats" in m, f"{how}: no manifest or emulator stats")
    if "manifest" in mb and "manifest" in mt:
        keep = ("kernels", "memcpy", "memset", "memory", "compile", "links", "nvtx")
        check({k: mb["manifest"][k] for k in keep} == {k: mt["manifest"][k] for k in keep},
              "the program did other work under gputrace than bare")


def check_libs(manifest, venv, emu_lib):
    libs = manifest["libs"]
    for lib in libs:
        base = os.path.basename(lib)
        if base.startswith("libcuda.so"):
            check(os.path.dirname(lib) == os.path.realpath(emu_lib),
                  f"libcuda from {lib}, not the emulator's")
        else:
            check(lib.startswith(os.path.realpath(venv)), f"{base} from {lib}, not the client's")


def check_gpu_timing(report, manifest, venv, emu_lib):
    t = report.get("gpu_timing", {})
    check(t.get("requested") == "auto", f"GPU timing asked for: {t}")
    check(t.get("source") == "cupti", f"GPU timing from {t.get('source')!r}, not CUPTI: {t}")
    detail = t.get("detail", "")
    emu_cupti = os.path.join(os.path.realpath(emu_lib), "libcupti.so.13")
    check(detail.startswith(emu_cupti), f"GPU timing detail {detail!r}: not {emu_cupti}")
    venv = os.path.realpath(venv)
    wheel = glob.glob(os.path.join(venv, "lib", "python3*", "site-packages", "nvidia", "cu13",
                                   "lib", "libcupti.so.13"))
    own_cudart = any(os.path.basename(lib).startswith("libcudart.so") and lib.startswith(venv)
                     for lib in manifest["libs"])
    if wheel and own_cudart:
        check(f"passed over: {os.path.realpath(wheel[0])}: cuptiGetVersion" in detail,
              f"GPU timing detail {detail!r}: the CUPTI wheel's library beside libcudart was "
              "not tried first")


def check_kernels(report, manifest, stats):
    rows = {}
    for r in report["kernels"]:
        rows.setdefault(function_name(r["name"]), []).append(r)
    want = manifest["kernels"]
    check(sorted(rows) == sorted(want), f"kernel rows {sorted(rows)}, launched {sorted(want)}")
    for name, calls in want.items():
        got = rows.get(name, [])
        if not check(len(got) == 1, f"kernel {name}: {len(got)} rows"):
            continue
        r = got[0]
        check(r["calls"] == calls, f"kernel {name}: {r['calls']} launches, made {calls}")
        check(r["timed"] == calls, f"kernel {name}: {r['timed']} of {calls} launches timed")
        total = r["gpu_ns"]["total"]
        check(near(total, calls * kernel_ns(name)),
              f"kernel {name}: GPU time {total} ns, configured {calls} x {kernel_ns(name)} ns")
    launched = sum(r["calls"] for r in report["kernels"])
    check(launched == stats["launches"],
          f"{launched} launches reported, the emulator ran {stats['launches']}")


def check_transfers(report, manifest):
    for key, g, w in paired("memcpy", report["memcpy"], manifest["memcpy"],
                            ("direction", "host_memory", "async")):
        same_work("memcpy", key, g, w)
        check(g["timed"] == w["calls"], f"memcpy {key}: {g['timed']} of {w['calls']} timed")
        rate = "dtod" if w["direction"] == "DtoD" else w["host_memory"]
        ns = transfer_ns(w["bytes"] // w["calls"], rate) * w["calls"]
        check(near(g["gpu_ns"]["total"], ns),
              f"memcpy {key}: GPU time {g['gpu_ns']['total']} ns, at {GBPS[rate]:g} GB/s {ns}")
    for key, g, w in paired("memset", report["memset"], manifest["memset"], ("async",)):
        same_work("memset", key, g, w)
        ns = transfer_ns(w["bytes"] // w["calls"], "memset") * w["calls"]
        check(near(g["gpu_ns"]["total"], ns),
              f"memset {key}: GPU time {g['gpu_ns']['total']} ns, configured {ns}")


def check_memory(report, manifest):
    devices = {d["device"]: d for d in report["memory"]["devices"]}
    for device, kind in ((0, "device"), (-1, "pinned")):
        allocs, frees = manifest["memory"][kind]
        d = devices.get(device, {"allocs": 0, "frees": 0})
        check((d["allocs"], d["frees"]) == (allocs, frees),
              f"memory {kind}: {d['allocs']} allocations, {d['frees']} frees; "
              f"the program made {allocs} and {frees}")


def check_no_leak(report):
    # None of these programs leaks: what Numba and cuda.core free late (deferred
    # frees, finalizers, context teardown at interpreter exit) is freed all the
    # same, and must be neither counted as leaked nor advised about.
    leaked = {d["device"]: d["leaked_allocs"] for d in report["memory"]["devices"]
              if d["leaked_allocs"]}
    check(not leaked, f"memory counted as leaked at exit: {leaked}")
    rules = [a["rule"] for a in report["advice"]]
    check("leak" not in rules, f"leak advice for a program that frees everything: {rules}")


def check_compile(report, manifest):
    rows = [dict(r, name=function_name(r["name"])) for r in report["compile"]]
    for key, g, w in paired("compile", rows, manifest["compile"], ("api", "name", "ok")):
        same_work("compile", key, g, w)
        if w.get("functions") is not None:
            got = [function_name(f) for f in g.get("functions", [])]
            check(got == w["functions"], f"compile {key}: functions {got}, "
                  f"the program's modules define {w['functions']}")


def check_modules(report, manifest, stats):
    got = {f"{r['api']} {r['kind']}": r["calls"] for r in report["module"]}
    want = dict(stats.get("loads", {}))
    want.update(manifest["links"])
    check(got == want, f"module rows {got}; loaded and linked {want}")


def range_gpu_ns(work):
    ns = 0
    for kind, key, amount in work:
        ns += amount * kernel_ns(key) if kind == "kernel" else transfer_ns(amount, key)
    return ns


def check_nvtx(report, manifest):
    for key, g, w in paired("nvtx", report["nvtx"], manifest["nvtx"], ("domain", "name")):
        check(g["calls"] == w["calls"], f"nvtx {key}: {g['calls']} calls, made {w['calls']}")
        ns = range_gpu_ns(w["work"])
        check(near(g["gpu_ns_total"], ns),
              f"nvtx {key}: {g['gpu_ns_total']} ns of GPU work, launched inside {ns}")
        check_payloads(key, g, w, ns)


def check_payloads(key, got, want, gpu_ns):
    p = got.get("payload")
    if want.get("payload") is None:
        check(p is None, f"nvtx {key}: a payload {p} nobody gave")
    else:
        check(p is not None and p["total"] == want["payload"],
              f"nvtx {key}: payload {p}, gave {want['payload']}")
        if p:
            check(near(p["per_gpu_s"], want["payload"] * 1e9 / gpu_ns),
                  f"nvtx {key}: payload {p['per_gpu_s']} per GPU s")
    fields = {f["name"]: f for f in got.get("payload_fields", [])}
    check(set(fields) == set(want.get("fields", {})), f"nvtx {key}: fields {sorted(fields)}")
    for name, total in want.get("fields", {}).items():
        f = fields.get(name)
        if f:
            check(f["total"] == total and near(f["per_gpu_s"], total * 1e9 / gpu_ns),
                  f"nvtx {key}.{name}: {f}, gave {total}")


def check_timings(manifest):
    for t in manifest["timings"]:
        want = transfer_ns(t["bytes"], t["rate"])
        got = t["ms"] * 1e6
        check(abs(got - want) <= TIMING_SLACK_NS,
              f"the program timed a {t['rate']} copy of {t['bytes']} bytes at {got:.0f} ns, "
              f"configured {want} ns")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--venv", required=True)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--emu-lib", required=True)
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("program")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    python = os.path.join(a.venv, "bin", "python")
    if not os.path.exists(python):
        print(f"SKIP: no Python environment at {a.venv} (python.venv: PyPI cannot be reached)")
        return SKIP
    env = emu_env(a.emu_lib)
    env.update(kv.split("=", 1) for kv in a.env)
    command = [python, os.path.join(PROGS, a.program)] + a.args
    with tempfile.TemporaryDirectory() as tmp:
        bare = run(command, env, tmp, "bare")
        report_base = os.path.join(tmp, "report")
        traced = run([a.cli, "-v", "none", "-o", report_base, "-f", "json", "--"] + command,
                     env, tmp, "traced")
        check_run(bare, traced, a.program)
        report = None
        if os.path.exists(report_base + ".json"):
            with open(report_base + ".json") as f:
                report = json.load(f)
        check(report is not None, "no report")
        manifest, stats = traced[1].get("manifest"), traced[1].get("stats")
        if report and manifest and stats:
            check(report["totals"]["dropped"] == 0, f"{report['totals']['dropped']} dropped")
            check_libs(manifest, a.venv, a.emu_lib)
            check_gpu_timing(report, manifest, a.venv, a.emu_lib)
            check_kernels(report, manifest, stats)
            check_transfers(report, manifest)
            check_memory(report, manifest)
            check_no_leak(report)
            check_compile(report, manifest)
            check_modules(report, manifest, stats)
            check_nvtx(report, manifest)
            check_timings(manifest)
            check_timings(bare[1].get("manifest", {"timings": []}))
    status = verdict.report()
    if status == 0:
        print("ok:", a.program, " ".join(a.args), " ".join(a.env))
    return status


if __name__ == "__main__":
    sys.exit(main())
