#!/usr/bin/env python3
"""An MPI job of 4 ranks under gputrace, merged: the emulator's driver test
program (its work per process is known: tests/apps/expected) runs as
`mpirun -np 4 --oversubscribe` under
`gputrace -o 'DIR/rank%q{OMPI_COMM_WORLD_RANK}'`, which must give
rank0.json to rank3.json; `gputrace merge` of them must count exactly 4
times the work of one process, each row's spread over 4 inputs, each
kernel's GPU time 4 x its launches x the configured duration (1%), and the
inputs in its header.

check_mpi.py --cli GPUTRACE --expected MANIFEST.json --kernel-ns NS -- program [args...]
Exits 77 (skipped) with one line when mpirun is not installed.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from verdict import check, report  # noqa: E402

RANKS = 4
SKIPPED = 77


def run(argv, env, what):
    p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    check(p.returncode == 0, f"{what}: exit {p.returncode}: {p.stdout}{p.stderr}")
    return p


def by_key(rows, *keys):
    return {tuple(r[k] for k in keys): r for r in rows}


def base_name(demangled):
    """'void apps::scale(float*, int)' -> 'apps::scale', as the manifest
    names kernels."""
    head = demangled.split("(", 1)[0]
    return head.rsplit(" ", 1)[-1]


def check_counts(merged, expected, kernel_ns):
    kernels = {(base_name(r["name"]),): r for r in merged["kernels"]}
    for k in expected["kernels"]:
        row = kernels.get((k["name"],))
        if not check(row, f"kernel {k['name']} missing from the merge"):
            continue
        calls = RANKS * k["calls"]
        check(row["calls"] == calls, f"kernel {k['name']}: {row['calls']} calls, expected {calls}")
        want = calls * kernel_ns
        check(abs(row["gpu_ns"]["total"] - want) <= 0.01 * want,
              f"kernel {k['name']}: GPU time {row['gpu_ns']['total']} ns, expected {want} (1%)")
    copies = by_key(merged["memcpy"], "direction", "host_memory", "async")
    for c in expected["memcpy"]:
        key = (c["direction"], c["host_memory"], c["async"])
        row = copies.get(key)
        if not check(row, f"memcpy {key} missing from the merge"):
            continue
        check(row["calls"] == RANKS * c["calls"] and row["bytes"] == RANKS * c["bytes"],
              f"memcpy {key}: {row['calls']} calls, {row['bytes']} bytes; expected "
              f"{RANKS * c['calls']}, {RANKS * c['bytes']}")
    sets = by_key(merged["memset"], "async")
    for m in expected["memset"]:
        row = sets.get((m["async"],))
        check(row and row["calls"] == RANKS * m["calls"] and row["bytes"] == RANKS * m["bytes"],
              f"memset async={m['async']}: {row}, expected 4 x {m}")
    syncs = by_key(merged["sync"], "api")
    for s in expected["sync"]:
        row = syncs.get((s["api"],))
        check(row and row["calls"] == RANKS * s["calls"],
              f"sync {s['api']}: {row and row['calls']} calls, expected {RANKS * s['calls']}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--expected", required=True)
    ap.add_argument("--kernel-ns", type=int, required=True)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    mpirun = shutil.which("mpirun")
    if not mpirun:
        print("SKIP: mpirun not found (install openmpi-bin)")
        return SKIPPED
    with open(args.expected) as f:
        expected = json.load(f)
    with tempfile.TemporaryDirectory(prefix="gt-mpi-") as d:
        # GPU times are checked against kernel_ns: event pairs read it exactly.
        env = dict(os.environ, GPUTRACE_EMU_KERNEL_NS=f"*={args.kernel_ns}",
                   GPUTRACE_EMU_EVENT_LATENCY_NS="0",
                   GPUTRACE_VERBOSITY="none", GT_APP_MANIFEST=os.path.join(d, "m.%p.json"))
        run([mpirun, "-np", str(RANKS), "--oversubscribe", "--allow-run-as-root",
             "-x", "LD_LIBRARY_PATH", "-x", "GPUTRACE_EMU_KERNEL_NS",
             "-x", "GPUTRACE_EMU_EVENT_LATENCY_NS", "-x", "GPUTRACE_VERBOSITY",
             "-x", "GT_APP_MANIFEST",
             args.cli, "-o", os.path.join(d, "rank%q{OMPI_COMM_WORLD_RANK}"), "--", *command],
            env, "mpirun")
        ranks = sorted(os.path.basename(p) for p in glob.glob(os.path.join(d, "rank*.json")))
        want = [f"rank{i}.json" for i in range(RANKS)]
        check(ranks == want, f"reports written: {ranks}, expected {want}")
        inputs = [os.path.join(d, r) for r in want]
        run([args.cli, "merge", *inputs, "-o", os.path.join(d, "all"), "-f", "json,text"], env,
            "gputrace merge")
        with open(os.path.join(d, "all.json")) as f:
            merged = json.load(f)
        check_counts(merged, expected, args.kernel_ns)
        check([i["file"] for i in merged.get("inputs", [])] == inputs,
              f"merged inputs {merged.get('inputs')}, expected {inputs}")
        events = 0
        for path in inputs:
            with open(path) as f:
                events += json.load(f)["totals"]["events"]
        check(merged["totals"]["events"] == events,
              f"merged events {merged['totals']['events']}, inputs' sum {events}")
        for table in ("kernels", "memcpy", "memset", "sync", "api"):
            for row in merged[table]:
                check(row["spread"]["inputs"] == RANKS, f"{table} row {row}: not in every rank")
        with open(os.path.join(d, "all.txt")) as f:
            text = f.read()
        check(f"inputs: {RANKS} reports" in text and "rank3.json" in text,
              "the merged summary does not list the inputs")
    return report()


if __name__ == "__main__":
    sys.exit(main())
