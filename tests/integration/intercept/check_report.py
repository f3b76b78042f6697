#!/usr/bin/env python3
"""Runs a test program under libgputrace.so on the emulated driver and checks
the JSON report against the work the program says it did (its manifest,
GT_APP_MANIFEST) and against the emulator's configured durations.

check_report.py --lib LIB CASE [options] -- program [args...]

Cases:
  match      the report has exactly the manifest's launches (per kernel),
             (with --api LIST: and these api names)
             copies (direction, host memory, async: calls and bytes) and
             memsets; its explicit synchronize calls; no error, nothing
             dropped; GPU totals equal the configured durations within 1%
             (with --timing-off: the config says off, and every GPU time is
             the call's host time)
  categories --categories LIST: disabled tables are empty, the others match
  capture    match, and no event was recorded on a capturing stream
  threads    match, except that launches may go untimed (the cap on live event
             pairs): every launch counted, none dropped, each timed one right
  fork       parent and child report separately; the child has none of the
             parent's work, the parent's report matches its manifest
  same       the program's exit code, stdout and stderr are the same with
             and without the shim (shim output goes to GPUTRACE_LOG)
  static     same, and the shim saw the CUDA runtime's cuGetProcAddress_v2
             lookups: one debug line per lookup the emulated driver logged
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

# Simulated durations every case runs with (tests/emu/README.md, Durations).
KERNEL_NS = {"spin": 300000000, "*": 2000}
GBPS = {"pageable": 8, "pinned": 32, "dtod": 1000, "memset": 2000, "peer": 50}
TOLERANCE = 0.01
TIMEOUT = 300


def emu_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUTRACE_", "GT_APP_"))}
    env.pop("LD_PRELOAD", None)
    env["GPUTRACE_EMU_KERNEL_NS"] = ",".join(f"{k}={v}" for k, v in KERNEL_NS.items())
    env["GPUTRACE_EMU_GBPS"] = ",".join(f"{k}={v}" for k, v in GBPS.items())
    # GPU times are checked against these durations: event pairs read them exactly.
    env["GPUTRACE_EMU_EVENT_LATENCY_NS"] = "0"
    return env


def run(command, env, timeout=TIMEOUT):
    p = subprocess.run(command, env=env, capture_output=True, timeout=timeout)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


class Checker:
    def __init__(self):
        self.errors = []

    def expect(self, cond, what):
        if not cond:
            self.errors.append(what)
        return cond

    def close(self, actual, expected, calls, what):
        """actual within 1% of expected (and 1 ns per call: the emulator
        rounds each transfer to whole ns)."""
        slack = max(TOLERANCE * expected, float(calls))
        self.expect(abs(actual - expected) <= slack,
                    f"{what}: {actual} ns, expected {expected:.0f} ns (+-{slack:.0f})")


def base_name(demangled):
    """'void apps::axpy<float>(float, ...)' -> 'apps::axpy<float>': the
    manifest names kernels without parameter list or return type."""
    depth = 0
    end = len(demangled)
    for i, ch in enumerate(demangled):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0:
            end = i
            break
    name = demangled[:end]
    depth = 0
    start = 0
    for i, ch in enumerate(name):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == " " and depth == 0:
            start = i + 1
    return name[start:]


def kernel_ns(name):
    return KERNEL_NS.get(name, KERNEL_NS["*"])


def copy_rate(direction, host_memory):
    """GB/s of a copy on the emulator: managed memory counts as device memory."""
    if direction == "PtoP":
        return GBPS["peer"]
    if direction == "DtoD" or host_memory == "managed":
        return GBPS["dtod"]
    return GBPS[host_memory]


def read_json(path):
    with open(path) as f:
        return json.load(f)


def check_transfers(c, what, got, want, rate_of, gpu):
    """Rows of copies or memsets: the same keys, calls and bytes as the
    manifest's; GPU time = bytes / rate (captured ones run in graphs)."""
    c.expect(sorted(got) == sorted(want), f"{what} {sorted(got)}, manifest {sorted(want)}")
    for key, m in want.items():
        r = got.get(key)
        if r is None:
            continue
        c.expect((r["calls"], r["bytes"]) == (m["calls"], m["bytes"]),
                 f"{what} {key}: {r['calls']} calls {r['bytes']} bytes, manifest "
                 f"{m['calls']} calls {m['bytes']} bytes")
        timed_bytes = m["bytes"] * (m["calls"] - m["captured"]) / m["calls"]
        gpu(r, timed_bytes / rate_of(key), m["calls"], f"{what} {key}")


def check_report(c, report, manifest, categories=None, timing_off=False, timed_subset=False):
    enabled = set(categories) if categories is not None else None
    on = lambda cat: enabled is None or cat in enabled  # noqa: E731
    c.expect(report["totals"]["dropped"] == 0, f"{report['totals']['dropped']} events dropped")
    c.expect(report["config"]["gpu_timing"] == ("off" if timing_off else "auto"),
             f"config.gpu_timing is {report['config']['gpu_timing']}")
    # The emulator's libcupti beside its libcuda.so.1: auto takes CUPTI,
    # but in a child forked after CUDA started (event pairs, the emulator's
    # latency set to 0 by the checker).
    source = report.get("gpu_timing", {}).get("source")
    c.expect(source == "off" if timing_off else source in ("cupti", "events"),
             f"gpu_timing.source is {source}")

    def gpu(row, expected, calls, what):
        if timing_off:
            return
        c.close(row["gpu_ns"]["total"], expected, calls, what + " GPU time")

    # kernels, per name (calls include captured launches: they have no GPU time)
    rows = [r for r in report["kernels"] if not r["graph"]]
    got = {}
    for r in rows:
        got.setdefault(base_name(r["name"]), []).append(r)
    want = {k["name"]: k for k in manifest["kernels"]} if on("kernel") else {}
    c.expect(sorted(got) == sorted(want), f"kernels {sorted(got)}, manifest {sorted(want)}")
    for name, k in want.items():
        if name not in got:
            continue
        calls = sum(r["calls"] for r in got[name])
        c.expect(calls == k["calls"], f"kernel {name}: {calls} calls, manifest {k['calls']}")
        # With CUPTI, each run of a captured launch as a node of a graph
        # launch is timed in the kernel's row too (graph_calls).
        nodes = sum(r.get("graph_calls", 0) for r in got[name])
        want_nodes = k["captured"] * manifest["graph_launches"] if source == "cupti" else 0
        c.expect(nodes == want_nodes, f"kernel {name}: {nodes} runs as graph nodes, want {want_nodes}")
        timed = k["calls"] - k["captured"] + nodes
        total = sum(r["gpu_ns"]["total"] for r in got[name])
        if not timing_off and timed_subset:
            # Each launch that has a GPU time has the right one (the cap on
            # live event pairs may leave some untimed under this load).
            for r in got[name]:
                g = r["gpu_ns"]
                for stat in ("min", "max", "avg"):
                    c.close(g[stat], kernel_ns(name), 1, f"kernel {name} GPU time {stat}")
                c.expect(g["total"] > 0, f"kernel {name}: no launch timed")
        elif not timing_off:
            c.close(total, timed * kernel_ns(name), timed, f"kernel {name} GPU time")
        else:
            host = sum(r["api_ns_total"] for r in got[name])
            c.expect(total == host, f"kernel {name}: timing off, GPU {total} ns != host {host} ns")
    graphs = [r for r in report["kernels"] if r["graph"]]
    launches = manifest["graph_launches"] if on("kernel") else 0
    c.expect(sum(r["calls"] for r in graphs) == launches,
             f"graph launches {[r['calls'] for r in graphs]}, manifest {launches}")

    # copies, per (direction, host memory, async); memsets, per async
    check_transfers(c, "copies", {(r["direction"], r["host_memory"], r["async"]): r
                                  for r in report["memcpy"]},
                    {(m["direction"], m["host_memory"], m["async"]): m
                     for m in manifest["memcpy"]} if on("memcpy") else {},
                    lambda key: copy_rate(*key[:2]), gpu)
    check_transfers(c, "memsets", {r["async"]: r for r in report["memset"]},
                    {m["async"]: m for m in manifest["memset"]} if on("memset") else {},
                    lambda key: GBPS["memset"], gpu)

    # sync: the explicit calls exactly; the other rows are blocking copies and memsets
    got = {r["api"]: r["calls"] for r in report["sync"]}
    if on("sync"):
        for s in manifest["sync"]:
            c.expect(got.get(s["api"]) == s["calls"],
                     f"sync {s['api']}: {got.get(s['api'])} calls, manifest {s['calls']}")
        listed = {s["api"] for s in manifest["sync"]}
        for api in got:
            c.expect(api in listed or re.match(r"^cu(da)?Mem(cpy|set)", api),
                     f"sync row {api} is neither an explicit sync nor a blocking copy or memset")
    else:
        c.expect(not got, f"sync disabled, rows {sorted(got)}")

    # api: no failed call unless the manifest lists it
    if on("api"):
        failed = {(r["name"], e): n for r in report["api"] for e, n in r["errors"].items()}
        listed = {(e["api"], e["error"]): e["calls"] for e in manifest["errors"]}
        for (api, err), n in failed.items():
            c.expect(listed.get((api, err)) == n, f"api {api} failed {n} times with {err}")
    else:
        c.expect(not report["api"], "api disabled, rows present")


def manifests_by_pid(directory):
    out = {}
    for path in glob.glob(os.path.join(directory, "m.*.json")):
        m = read_json(path)
        out[m.pop("pid")] = m
    return out


def run_traced(lib, command, directory, extra_env, timeout=TIMEOUT):
    env = emu_env()
    env.update(extra_env)
    env["LD_PRELOAD"] = lib
    env["GT_APP_MANIFEST"] = os.path.join(directory, "m.%p.json")
    env.setdefault("GPUTRACE_OUTPUT", os.path.join(directory, "r.%p"))
    env.setdefault("GPUTRACE_VERBOSITY", "none")
    return run(command, env, timeout)


def event_records(command, env, directory):
    """Events the emulated driver recorded on streams during one run."""
    stats = os.path.join(directory, "stats-%d.json" % len(os.listdir(directory)))
    env = dict(env, GPUTRACE_EMU_STATS=stats)
    run(command, env)
    return read_json(stats)["event_records"]


def case_match(c, args, directory, extra_env=None, categories=None, timed_subset=False):
    env = dict(extra_env or {})
    if args.timing_off:
        env["GPUTRACE_GPU_TIMING"] = "off"
        # Timing off: the shim records no event of its own.
        traced = dict(emu_env(), LD_PRELOAD=args.lib, GPUTRACE_GPU_TIMING="off",
                      GPUTRACE_VERBOSITY="none")
        bare_events = event_records(args.command, emu_env(), directory)
        traced_events = event_records(args.command, traced, directory)
        c.expect(bare_events == traced_events,
                 f"timing off: {traced_events} event records traced, {bare_events} bare")
    if categories is not None:
        env["GPUTRACE_CATEGORIES"] = ",".join(categories)
    rc, out, err = run_traced(args.lib, args.command, directory, env)
    if not c.expect(rc == 0, f"exit code {rc}; stderr: {err[-2000:]}"):
        return None
    manifests = manifests_by_pid(directory)
    if not c.expect(len(manifests) == 1, f"{len(manifests)} manifests"):
        return None
    pid, manifest = next(iter(manifests.items()))
    report = read_json(os.path.join(directory, f"r.{pid}.json"))
    check_report(c, report, manifest, categories, args.timing_off, timed_subset)
    names = {r["name"] for r in report["api"]}
    for api in (args.api.split(",") if args.api else []):
        c.expect(api in names, f"no {api} in the api table {sorted(names)}")
    return report


def case_capture(c, args, directory):
    stats = os.path.join(directory, "emu-stats.json")
    case_match(c, args, directory, {"GPUTRACE_EMU_STATS": stats})
    s = read_json(stats)
    c.expect(s["capture_event_records"] == 0,
             f"{s['capture_event_records']} events recorded on capturing streams")
    c.expect(s["graph_launches"] > 0, "no graph launched")


def case_fork(c, args, directory):
    # Debug verbosity: a child that records nothing still writes its report.
    log = os.path.join(directory, "log")
    rc, out, err = run_traced(args.lib, args.command, directory,
                              {"GPUTRACE_VERBOSITY": "debug", "GPUTRACE_LOG": log})
    if not c.expect(rc == 0, f"exit code {rc}; stderr: {err[-2000:]}"):
        return
    manifests = manifests_by_pid(directory)
    reports = {int(re.search(r"r\.(\d+)\.json$", p).group(1)): read_json(p)
               for p in glob.glob(os.path.join(directory, "r.*.json"))}
    c.expect(sorted(reports) == sorted(manifests),
             f"reports of pids {sorted(reports)}, manifests of {sorted(manifests)}")
    for pid, report in reports.items():
        child = report["process"]["ppid"] in reports
        manifest = manifests.get(pid)
        if manifest is None:
            continue
        if child:
            c.expect(not report["kernels"] and not report["memcpy"] and not report["memset"]
                     and not report["sync"], "the child reports GPU work or syncs")
            parent_apis = {"cuLaunchKernel", "cuModuleGetFunction", "cuInit", "cuMemcpyHtoD"}
            seen = {r["name"] for r in report["api"]} & parent_apis
            c.expect(not seen, f"the child reports the parent's calls {sorted(seen)}")
        else:
            check_report(c, report, manifest)
    c.expect(len(reports) == 2, f"{len(reports)} reports, expected parent and child")


def case_same(c, args, directory, debug_log=None):
    bare = run(args.command, emu_env())
    env = emu_env()
    env["LD_PRELOAD"] = args.lib
    env["GPUTRACE_LOG"] = debug_log or os.path.join(directory, "log")
    env["GPUTRACE_OUTPUT"] = os.path.join(directory, "r.%p")
    if debug_log:
        env["GPUTRACE_VERBOSITY"] = "debug"
        env["GPUTRACE_EMU_LOG"] = os.path.join(directory, "emu.log")
    traced = run(args.command, env)
    for i, what in enumerate(["exit code", "stdout", "stderr"]):
        c.expect(bare[i] == traced[i], f"{what} differs:\n--- bare\n{bare[i]}\n--- traced\n{traced[i]}")
    return env


def case_static(c, args, directory):
    log = os.path.join(directory, "shim.log")
    env = case_same(c, args, directory, log)
    with open(env["GPUTRACE_EMU_LOG"]) as f:
        driver = [l.split(" -> ")[0] for l in f.read().splitlines()]
    with open(log) as f:
        lines = f.read().splitlines()
    # "cuGetProcAddress_v2(cuLaunchKernel, 7000, 2) -> cuLaunchKernel_ptsz"
    seen = []
    for l in lines:
        m = re.match(r"gputrace: debug: cuGetProcAddress(?:_v2)?\((.*), (\d+), (\d+)\) -> (.*)$", l)
        if m:
            seen.append(f"{m.group(1)} {m.group(2)} {m.group(3)}")
    c.expect(len(driver) >= 400, f"the driver logged {len(driver)} lookups")
    c.expect(seen == driver, f"the shim saw {len(seen)} lookups, the driver answered {len(driver)}")
    c.expect(any(re.search(r"cuGetProcAddress_v2\(cuLaunchKernel, 7000, 2\) -> cuLaunchKernel_ptsz$", l)
                 for l in lines), "cuLaunchKernel_ptsz was not handed out")
    c.expect(any(re.search(r"dlsym\(cuGetProcAddress_v2\) -> hooked", l) for l in lines),
             "dlsym(cuGetProcAddress_v2) was not hooked")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lib", required=True)
    parser.add_argument("case", choices=["match", "categories", "capture", "threads", "fork",
                                         "same", "static"])
    parser.add_argument("--timing-off", action="store_true")
    parser.add_argument("--categories")
    parser.add_argument("--api", help="comma list of api names the report must have")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    args.command = args.command[1:] if args.command[:1] == ["--"] else args.command
    c = Checker()
    with tempfile.TemporaryDirectory(prefix="gt-intercept-") as directory:
        if args.case == "match":
            case_match(c, args, directory)
        elif args.case == "threads":
            case_match(c, args, directory, timed_subset=True)
        elif args.case == "categories":
            case_match(c, args, directory, categories=args.categories.split(","))
        elif args.case == "capture":
            case_capture(c, args, directory)
        elif args.case == "fork":
            case_fork(c, args, directory)
        elif args.case == "same":
            case_same(c, args, directory)
        else:
            case_static(c, args, directory)
    for e in c.errors:
        print("FAIL:", e)
    return 1 if c.errors else 0


if __name__ == "__main__":
    sys.exit(main())
