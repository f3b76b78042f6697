#!/usr/bin/env python3
"""Runs callsite_prog CASE under libgputrace.so on the emulated driver and
holds the call sites of the report (SPEC §12 `callsites`, the summary's
`call sites` section, the leaks' sites) against the program: each call
it makes is on a line marked "SITE function" in its source.

check_callsites.py --lib LIB --prog PROG --source SOURCE CASE

  plain    every call attributed exactly: per site the calls, GPU time
           (calls x the configured duration) and bytes; allocations'
           bytes, peak and what was held at exit; leaks name their site
  threads  the same from two threads at once: twice the figures
  fork     the parent's report and the child's each as plain
  sampled  enough launches to pass the exact calls: the sites' estimates
           add up to the launches made and are within 20% of the truth,
           marked as estimates, with about one sample in 8 past the exact
           calls; the summary marks them (~)
  off      GPUTRACE_CALLSITES=off: no call sites anywhere
  nvcc     the CUDA C++ program (nvcc -cudart shared, <<<...>>>), built
           at -O2 or -O0: each launch and allocation at its own line and
           function, past nvcc's launch code and cuda_runtime.h's typed
           cudaMalloc (inlined at -O2), into the user's inlined helper and
           through a launch that is its function's last statement (a tail
           call);
           the kernel's declaration line and the CUDA headers name no site
  tools    `gputrace report` writes the call sites as the run did (JSON,
           the summary's section, the leaks' sites, in JSON and in the
           verbose summary); `gputrace merge` of
           two runs adds them up; `gputrace diff` of a run against one whose
           launches moved from one line to another finds no change
In plain, threads and fork the Chrome and Perfetto traces carry each
launch's, copy's and allocation's site on its host slice.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "..", "perfetto"))
from verdict import check, report  # noqa: E402

pftrace_import = None  # the plain case's Perfetto reader (tests/perfetto)

KERNEL_NS = {"vec_add": 2000, "_ZN4apps5scaleEPffi": 3000}
N = 4096
SMALL, LARGE = N * 4, 4 * N * 4
COPY_NS = 1638  # N floats of pageable memory at 10 GB/s, as the emulator rounds
# shim/callsite/callsite.h: GT_CALLSITE_EXACT_CALLS, GT_CALLSITE_SAMPLE_MEAN
EXACT_CALLS, SAMPLE_MEAN = 256, 8


def site_lines(source):
    """function -> the line of the call it marks."""
    lines = {}
    with open(source) as f:
        for number, text in enumerate(f, 1):
            m = re.search(r"/\* SITE (\w+)(: the call on the next line)? \*/", text)
            if m:
                lines[m.group(1)] = number + (1 if m.group(2) else 0)
    return lines


def run(args, case, tmp, launches, mode=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUTRACE_")}
    env.update(LD_PRELOAD=args.lib, GPUTRACE_OUTPUT=os.path.join(tmp, "r.%p"),
               GPUTRACE_FORMAT="json,text,chrome,perfetto", GPUTRACE_VERBOSITY="none",
               GPUTRACE_EMU_KERNEL_NS=",".join(f"{k}={v}" for k, v in KERNEL_NS.items()),
               GPUTRACE_EMU_GBPS="pageable=10", GPUTRACE_EMU_EVENT_LATENCY_NS="0")
    if case == "off":
        env["GPUTRACE_CALLSITES"] = "off"
    mode = mode or ("plain" if case in ("sampled", "off", "tools") else case)
    p = subprocess.run([args.prog, mode, str(launches)], env=env, capture_output=True, text=True,
                       timeout=100)
    check(p.returncode == 0, f"the program failed ({p.returncode}): {p.stderr.strip()}")
    reports = []
    for path in sorted(glob.glob(os.path.join(tmp, "r.*[0-9].json"))):
        stem = path[:-len("json")]
        with open(path) as f:
            data = json.load(f)
        with open(stem + "txt") as f:
            text = f.read()
        with open(stem + "trace.json") as f:
            chrome = json.load(f)
        perfetto = pftrace_import.load(stem + "pftrace") if pftrace_import else None
        reports.append((data, text, chrome, perfetto))
    return reports


def rows_by(data, kind):
    """(name, function) -> row of the report's call sites."""
    return {(r["name"], r["site"]["function"]): r for r in data.get("callsites", [])
            if r["kind"] == kind}


def check_site(row, lines, source, what):
    site = row["site"]
    fn = site["function"]
    check(site["language"] == "native", f"{what}: language {site['language']}")
    check(os.path.basename(site["file"]) == os.path.basename(source),
          f"{what}: file {site['file']}")
    check(site["line"] == lines.get(fn), f"{what}: line {site['line']}, marked {lines.get(fn)}")
    check(site["module"].endswith("/" + os.path.basename(os.path.splitext(source)[0])) or
          os.path.basename(site["module"]).startswith("gt_callsite_prog"),
          f"{what}: module {site['module']}")


def check_exact(data, text, lines, source, launches, times):
    kernels = rows_by(data, "kernel")
    want = {("vec_add", "launch_first"): launches, ("vec_add", "launch_second"): 2 * launches,
            ("apps::scale(float*, float, int)", "launch_driver"): launches}
    check(set(kernels) == set(want), f"kernel sites {sorted(kernels)}")
    for key, calls in want.items():
        row = kernels.get(key)
        if not row:
            continue
        ns = KERNEL_NS["vec_add" if key[0] == "vec_add" else "_ZN4apps5scaleEPffi"]
        check(row["calls"] == calls * times, f"{key}: {row['calls']} calls, made {calls * times}")
        check(row["gpu_ns_total"] == calls * times * ns,
              f"{key}: GPU time {row['gpu_ns_total']}, want {calls * times * ns}")
        check(row["sampled"] == 0 and not row["estimate"], f"{key}: sampled {row['sampled']}")
        check_site(row, lines, source, f"{key}")
    copies = rows_by(data, "memcpy")
    row = copies.get(("HtoD pageable sync", "copy_in"))
    if check(row is not None and len(copies) == 1, f"copy sites {sorted(copies)}"):
        check(row["calls"] == 2 * times and row["bytes"] == 2 * times * SMALL,
              f"copy_in: {row['calls']} calls, {row['bytes']} bytes")
        check(abs(row["gpu_ns_total"] - 2 * times * COPY_NS) <= 2 * times,
              f"copy_in: GPU time {row['gpu_ns_total']}")
        check_site(row, lines, source, "copy_in")
    allocs = rows_by(data, "alloc")
    small, large = allocs.get(("device", "alloc_small")), allocs.get(("device", "alloc_large"))
    if check(small and large and len(allocs) == 2, f"allocation sites {sorted(allocs)}"):
        check(small["calls"] == 2 * times and small["bytes"] == 2 * times * SMALL,
              f"alloc_small: {small['calls']} allocations, {small['bytes']} bytes")
        check(small["held_bytes"] == 0 and small["held_allocs"] == 0,
              f"alloc_small: held {small['held_bytes']} at exit")
        check(small["peak_bytes"] >= 2 * SMALL and small["peak_bytes"] <= 2 * times * SMALL,
              f"alloc_small: peak {small['peak_bytes']}")
        check(large["calls"] == 2 * times and large["bytes"] == 2 * times * LARGE,
              f"alloc_large: {large['calls']} allocations, {large['bytes']} bytes")
        check(large["held_bytes"] == 2 * times * LARGE and large["held_allocs"] == 2 * times,
              f"alloc_large: held {large['held_bytes']} in {large['held_allocs']} at exit")
        check(large["peak_bytes"] == 2 * times * LARGE, f"alloc_large: peak {large['peak_bytes']}")
        check_site(small, lines, source, "alloc_small")
        check_site(large, lines, source, "alloc_large")
    leaks = [leak for d in data["memory"]["devices"] for leak in d.get("largest_leaks", [])]
    check(leaks and all(f":{lines['alloc_large']} in alloc_large" in leak.get("site", "")
                        for leak in leaks), f"leaks' sites: {leaks}")
    base = os.path.basename(source)
    check("\ncall sites:" in text, "no `call sites` section in the summary")
    for fn in ("launch_first", "launch_second", "launch_driver", "copy_in", "alloc_small"):
        check(f"{base}:{lines[fn]} in {fn}" in text, f"the summary does not name {fn}")
    check(re.search(rf"held\s+device\s+{re.escape(base)}:{lines['alloc_large']} in alloc_large",
                    text) is not None, "the summary does not say alloc_large's memory is held")


def check_traces(data, chrome, perfetto, launches, times):
    """Each launch, copy and allocation slice of the host carries its site,
    as the report labels it: the Chrome trace's args; the Perfetto trace's
    debug annotations, read as Perfetto reads them (plain case only)."""
    check_trace_sites(data, chrome["traceEvents"] if isinstance(chrome, dict) else chrome,
                      "Chrome", launches, times)
    if perfetto is not None:
        for problem in perfetto.problems:
            check(False, f"Perfetto trace: {problem}")
        check_trace_sites(data, perfetto.events, "Perfetto", launches, times)


def check_trace_sites(data, events, what, launches, times):
    by_function = {r["site"]["function"]: r["label"] for r in data["callsites"]}
    calls = {"cudaLaunchKernel": ({"launch_first", "launch_second"}, 3 * launches),
             "cuLaunchKernel": ({"launch_driver"}, launches), "cudaMemcpy": ({"copy_in"}, 2),
             "cudaMalloc": ({"alloc_small", "alloc_large"}, 4)}
    for api, (functions, count) in calls.items():
        slices = [e for e in events if e.get("ph") == "X" and e.get("name") == api]
        sites = [e.get("args", {}).get("site") for e in slices]
        check(len(slices) == count * times and
              all(s in {by_function.get(f) for f in functions} for s in sites),
              f"{what} trace: {len(slices)} {api} slices with sites "
              f"{sorted(set(map(str, sites)))}")


def check_sampled(data, text, lines, source, launches):
    kernels = rows_by(data, "kernel")
    first, second = kernels.get(("vec_add", "launch_first")), kernels.get(("vec_add", "launch_second"))
    if not check(first and second, f"kernel sites {sorted(kernels)}"):
        return
    check(first["calls"] + second["calls"] == 3 * launches,
          f"the estimates add up to {first['calls'] + second['calls']}, {3 * launches} made")
    for row, made in ((first, launches), (second, 2 * launches)):
        fn = row["site"]["function"]
        check(abs(row["calls"] - made) <= 0.2 * made, f"{fn}: estimate {row['calls']}, made {made}")
        check(row["estimate"], f"{fn} is not marked as an estimate")
        check(abs(row["gpu_ns_total"] - row["calls"] * KERNEL_NS["vec_add"]) <= KERNEL_NS["vec_add"],
              f"{fn}: GPU time {row['gpu_ns_total']} for {row['calls']} calls")
        check_site(row, lines, source, fn)
    # launch_first's first calls are exact, then one in 8 on average is
    # sampled; all of launch_second's are past the exact ones.
    for row, past in ((first, launches - EXACT_CALLS), (second, 2 * launches)):
        check(abs(row["sampled"] - past / SAMPLE_MEAN) <= 0.3 * past / SAMPLE_MEAN,
              f"{row['site']['function']}: {row['sampled']} samples of {past} calls")
    check(re.search(rf"~\d+ .*{os.path.basename(source)}:{lines['launch_second']} in launch_second",
                    text) is not None and "estimated from a sample" in text,
          "the summary does not mark the estimates")
    scale = kernels.get(("apps::scale(float*, float, int)", "launch_driver"))
    check(scale is not None and scale["calls"] == launches and scale["estimate"],
          f"launch_driver: {scale}")


def tool(args, *argv):
    p = subprocess.run([args.cli, *argv], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def section(text):
    """The summary's `call sites` section."""
    m = re.search(r"\ncall sites:.*?\n\n", text, re.S)
    return m.group(0) if m else ""


def check_tools(args, tmp):
    plain = os.path.join(tmp, "plain")
    moved = os.path.join(tmp, "moved")
    for d, mode in ((plain, "plain"), (moved, "moved")):
        os.mkdir(d)
        got = run(args, "tools", d, 10, mode)
        if not check(len(got) == 1, f"{mode}: {len(got)} reports"):
            return
    (path,) = glob.glob(os.path.join(plain, "r.*[0-9].json"))
    (moved_path,) = glob.glob(os.path.join(moved, "r.*[0-9].json"))
    with open(path) as f:
        data = json.load(f)
    with open(path[:-len("json")] + "txt") as f:
        text = f.read()
    rc, out, err = tool(args, "report", path, "-f", "json")
    back = json.loads(out) if rc == 0 else {}
    check(back.get("callsites") == data["callsites"], f"report -f json: {rc} {err}")
    leaks = lambda d: [l.get("site") for dev in d["memory"]["devices"]  # noqa: E731
                       for l in dev.get("largest_leaks", [])]
    check(back and leaks(back) == leaks(data), "report -f json: the leaks' sites")
    check(back and back["config"]["callsites"] == "auto", "report -f json: config.callsites")
    rc, out, err = tool(args, "report", path)
    check(rc == 0 and section(out) and section(out) == section(text),
          f"report: the call sites section {section(out)!r}, the run's {section(text)!r}")
    rc, out, err = tool(args, "report", path, "-v", "verbose")
    check(re.search(r"largest leaks on GPU 0: .* from callsite_prog\.c:\d+ in alloc_large", out),
          f"report -v verbose: the largest leaks name no site: {out}")
    merged = os.path.join(tmp, "merged")
    rc, out, err = tool(args, "merge", path, path, "-o", merged)
    if check(rc == 0, f"merge: {rc} {err}"):
        with open(merged + ".json") as f:
            m = json.load(f)
        want = {(r["kind"], r["label"]): (2 * r["calls"], 2 * r["bytes"], 2 * r["gpu_ns_total"])
                for r in data["callsites"]}
        got = {(r["kind"], r["label"]): (r["calls"], r["bytes"], r["gpu_ns_total"])
               for r in m.get("callsites", [])}
        check(got == want, f"merge: {got}, want {want}")
    rc, out, err = tool(args, "diff", path, moved_path, "-c", "kernel")
    check(rc == 0, f"diff of launches that moved lines: status {rc}: {out}{err}")
    with open(moved_path) as f:
        sites = {r["site"]["function"] for r in json.load(f)["callsites"] if r["kind"] == "kernel"}
    check(sites == {"launch_first", "launch_driver"}, f"the moved run's kernel sites {sites}")


def check_nvcc(args, lines, tmp):
    """At -O2 nvcc's launch code (the host function named as the kernel,
    whose line is the kernel's declaration) and cuda_runtime.h's typed
    cudaMalloc are inlined into the functions that call them: each site is
    still the line that launched or allocated, a launch inside the user's
    own inlined helper is the helper's line, and a launch that is its
    function's last statement (a tail call at -O2, which leaves that
    function no frame) is that function's line, not its caller's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUTRACE_")}
    env.update(LD_PRELOAD=args.lib, GPUTRACE_OUTPUT=os.path.join(tmp, "r"),
               GPUTRACE_FORMAT="json", GPUTRACE_VERBOSITY="none",
               GPUTRACE_EMU_KERNEL_NS="*=4000", GPUTRACE_EMU_EVENT_LATENCY_NS="0")
    p = subprocess.run([args.prog, "10"], env=env, capture_output=True, text=True, timeout=100)
    if not check(p.returncode == 0, f"the program failed ({p.returncode}): {p.stderr.strip()}"):
        return
    with open(os.path.join(tmp, "r.json")) as f:
        data = json.load(f)
    base = os.path.basename(args.source)
    # The kernel's lines, from its declaration to its closing brace.
    with open(args.source) as f:
        text = f.read().splitlines()
    first = next(n for n, line in enumerate(text, 1) if "__global__ void scale" in line)
    kernel = range(first, next(n for n in range(first, len(text) + 1) if text[n - 1] == "}") + 1)
    # function as the report names it -> (the SITE mark, calls or allocations)
    want = {"kernel": {"cu_first(float*, int)": ("cu_first", 10),
                       "cu_second(float*, int)": ("cu_second", 20), "cu_helper": ("cu_helper", 10),
                       "cu_tail(float*)": ("cu_tail", 10)},
            "alloc": {"cu_alloc()": ("cu_alloc", 1), "cu_alloc_typed()": ("cu_alloc_typed", 1)}}
    for kind, sites in want.items():
        got = {r["site"]["function"]: r for r in data["callsites"] if r["kind"] == kind}
        check(set(got) == set(sites), f"{kind} sites {sorted(got)}, want {sorted(sites)}")
        for fn, (mark, calls) in sites.items():
            row = got.get(fn)
            if not row:
                continue
            site = row["site"]
            check(os.path.basename(site["file"]) == base and site["line"] == lines[mark],
                  f"{fn}: {os.path.basename(site['file'])}:{site['line']}, "
                  f"marked {base}:{lines[mark]}")
            check(row["calls"] == calls, f"{fn}: {row['calls']} calls, made {calls}")
            if kind == "kernel":
                check(row["gpu_ns_total"] == 4000 * calls and row["name"].startswith("scale"),
                      f"{fn}: {row}")
    for row in data["callsites"]:
        site = row["site"]
        check(os.path.basename(site["file"]) == base and site["line"] not in kernel,
              f"a site at {site['file']}:{site['line']} (the kernel is at lines "
              f"{kernel.start} to {kernel.stop - 1})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--prog", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--build-dir", help="where the Perfetto definitions' venv lives")
    ap.add_argument("--cli", help="the gputrace command (tools)")
    ap.add_argument("case",
                    choices=["plain", "threads", "fork", "sampled", "off", "tools", "nvcc"])
    args = ap.parse_args()
    if args.case == "plain" and args.build_dir:
        import perfetto_env
        perfetto_env.run_in_venv(args.build_dir)
        global pftrace_import
        import pftrace_import
    lines = site_lines(args.source)
    launches = 1000 if args.case == "sampled" else 10
    if args.case == "nvcc":
        with tempfile.TemporaryDirectory() as tmp:
            check_nvcc(args, lines, tmp)
        return report()
    if args.case == "tools":
        with tempfile.TemporaryDirectory() as tmp:
            check_tools(args, tmp)
        return report()
    with tempfile.TemporaryDirectory() as tmp:
        reports = run(args, args.case, tmp, launches)
    want = 2 if args.case == "fork" else 1
    if not check(len(reports) == want, f"{len(reports)} reports, want {want}"):
        return report()
    for data, text, chrome, perfetto in reports:
        if args.case == "off":
            check(data["config"]["callsites"] == "off", f"config {data['config']}")
            check(not data.get("callsites"), "call sites with GPUTRACE_CALLSITES=off")
            check("call sites" not in text, "a `call sites` section with GPUTRACE_CALLSITES=off")
        elif args.case == "sampled":
            check_sampled(data, text, lines, args.source, launches)
        else:
            times = 2 if args.case == "threads" else 1
            check_exact(data, text, lines, args.source, launches, times)
            check_traces(data, chrome, perfetto, launches, times)
    return report()


if __name__ == "__main__":
    sys.exit(main())
