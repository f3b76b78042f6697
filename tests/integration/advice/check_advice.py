#!/usr/bin/env python3
"""Runs advice_prog CASE under libgputrace.so on the emulated driver and
checks the advice (SPEC §8) in the JSON report and the text summary
against what the program says it did (the file it writes).

check_advice.py --lib LIB --prog PROG CASE

A rule's case must fire that rule once, with the program's count and a
message naming its worst example; the other rules stay silent (gpu-idle
aside: a loaded machine may leave the GPU waiting for a preempted host
between two calls). The clean case must have no advice at all: its work
is queued behind a long kernel, so that even gpu-idle has no excuse.
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

# Simulated durations per case (tests/emu/README.md): vec_add is each
# case's short kernel, apps::scale the clean case's long one. Pageable
# copies at 1 GB/s make sync-memcpy's 16 MiB copy's transfer last 17 ms,
# 64 times its 256 KiB ones' (whose calls a loaded host may make longer:
# the rule ranks by the transfer).
KERNEL_NS = {
    "sync-api": {"vec_add": 5_000_000},
    "gpu-idle": {"vec_add": 100_000},
    "small-kernels": {"vec_add": 3_000, "_ZN4apps5scaleEPffi": 100_000},
    "clean": {"vec_add": 200_000, "_ZN4apps5scaleEPffi": 200_000_000},
}
RATES = {"pageable": 1, "pinned": 25, "dtod": 1500, "memset": 3000, "peer": 50}  # GB/s
GBPS = ",".join(f"{k}={v}" for k, v in RATES.items())
# The fix the ptx-jit advice gives for PTX from each place (the emulated
# device is sm_90): a program that cannot pass nvcc options is told what
# it can do.
PTX_FIX = {
    "memory": "load machine code for the GPU instead: a cubin (nvcc -cubin -arch=sm_90, "
              "or NVRTC with --gpu-architecture=sm_90)",
    "nvrtc": "the PTX came from NVRTC in this process: compile to a cubin instead "
             "(--gpu-architecture=sm_90, then nvrtcGetCUBIN)",
    "nvvm": "the PTX came from NVVM in this process, as Numba compiles: let Numba cache its "
            "kernels (@cuda.jit(cache=True))",
    "link": "the PTX was linked by the driver (cuLinkAddData of PTX, as Numba does): let Numba "
            "cache its kernels (@cuda.jit(cache=True))",
    "file": "the PTX was a file: ship a cubin instead (nvcc -cubin -arch=sm_90)",
    "fatbin": "the fat binary has no machine code for this GPU, only PTX: build with nvcc "
              "-gencode arch=compute_90,code=sm_90",
}
TIMEOUT = 120



def format_bytes(n):
    """The summary's unit for a byte count: 1024 steps, three significant digits."""
    if n < 1000:
        return f"{n} B"
    x, units = float(n), ["B", "KiB", "MiB", "GiB", "TiB"]
    u = 0
    while u + 1 < len(units) and x >= 1024 - 0.5:
        x /= 1024
        u += 1
    decimals = 2 if x < 9.995 else 1 if x < 99.95 else 0
    return f"{x:.{decimals}f} {units[u]}"


def parse_ns(text):
    """'5.02 ms' -> 5020000."""
    value, unit = text.split()
    scale = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[unit]
    return float(value) * scale


def api_re(api):
    """An entry point as the driver exports it: its versioned name too."""
    return re.escape(api) + r"(?:_v\d+)?"


def read_expect(path):
    out = {}
    with open(path) as f:
        for line in f:
            key, _, value = line.rstrip("\n").partition(" ")
            out[key] = value
    return out


def copy_re(e):
    """A copy as the rules name it: 'cuMemcpyDtoH DtoH of 16.0 MiB'."""
    return rf"{api_re(e['api'])} {e['dir']} of {re.escape(format_bytes(int(e['bytes'])))}"


def check_message(rule, message, e):
    """The worst example the program made, as the rule must name it."""
    m = message
    # The worst copy's call site: the program's function named as the rule.
    site = rf" from advice_prog\.c:\d+ in {rule.replace('-', '_')}"
    if rule == "pageable-async-memcpy":
        check(re.search(rf"Largest: {copy_re(e)}{site}\.", m),
              f"{rule}: the largest copy is not named: {m}")
    elif rule == "sync-memcpy":
        found = re.search(rf"Longest: {copy_re(e)}, ([0-9.]+ \S+){site}\.", m)
        if check(found, f"{rule}: the longest copy is not named: {m}"):
            took, want = parse_ns(found.group(1)), int(e["bytes"]) / RATES["pageable"]
            check(abs(took - want) <= 0.01 * want,
                  f"{rule}: the longest copy took {took} ns, its transfer {want} ns")
    elif rule == "small-memcpy":
        check(f"Most were {e['dir']}: {e['most']} copies." in m,
              f"{rule}: the direction with the most is not named: {m}")
    elif rule == "sync-api":
        found = re.search(rf"Longest: {api_re(e['api'])}, ([0-9.]+ \S+)\.", m)
        if check(found, f"{rule}: the longest call is not named: {m}"):
            longest = parse_ns(found.group(1))
            check(longest >= 0.99 * KERNEL_NS[rule]["vec_add"],
                  f"{rule}: the longest call waited {longest} ns, less than a kernel")
        check(re.search(r"\(\d+\.\d% of the wall time\)", m), f"{rule}: no share of the wall time")
    elif rule == "gpu-idle":
        found = re.search(r"Largest: ([0-9.]+ \S+) at \+", m)
        if check(found, f"{rule}: the largest gap is not named: {m}"):
            largest = parse_ns(found.group(1))
            # A loaded host stretches the gaps: bounded by what the program
            # measured, not by a guess (the message prints 3 digits).
            want = int(e["largest_ms"]) * 1e6 - KERNEL_NS[rule]["vec_add"]
            check(0.99 * want <= largest <= 1.005 * int(e["longest_ns"]),
                  f"{rule}: largest gap {largest} ns, expected from {want} ns to the longest "
                  f"time from a launch to the return of the next, {e['longest_ns']} ns")
    elif rule == "small-kernels":
        found = re.search(rf"Most launched: {re.escape(e['kernel'])}, {e['count']} launches, "
                          rf"([0-9.]+ \S+) each \(median\)\.", m)
        if check(found, f"{rule}: the most launched kernel is not named: {m}"):
            took, want = parse_ns(found.group(1)), KERNEL_NS[rule]["vec_add"]
            check(abs(took - want) <= 0.01 * want,
                  f"{rule}: {e['kernel']} took {took} ns (median), emulated {want} ns")
    elif rule == "ptx-jit":
        check(re.search(rf"Slowest: {api_re(e['api'])}, "
                        rf"{re.escape(format_bytes(int(e['bytes'])))} of image, ", m),
              f"{rule}: the slowest load is not named: {m}")
        check(PTX_FIX[e["source"]] in m,
              f"{rule}: PTX {e['source']}: the fix {PTX_FIX[e['source']]!r} is not given: {m}")
        others = [fix for source, fix in PTX_FIX.items() if source != e["source"] and fix in m]
        check(not others, f"{rule}: PTX {e['source']}: other fixes given too: {others}")
    elif rule == "leak":
        check(f"({format_bytes(int(e['bytes']))})" in m, f"{rule}: leaked bytes not said: {m}")
        check(re.search(rf"Largest: {re.escape(format_bytes(int(e['largest'])))} on device 0"
                        rf" from advice_prog\.c:\d+ in \w+\.", m),
              f"{rule}: the largest leak is not named: {m}")


def text_advice(text):
    """The summary's advice lines, continuation lines joined: {rule: message}."""
    lines = text.splitlines()
    if "advice: none" in lines:
        return {}
    check("advice:" in lines, "the text summary has no advice section")
    found, rule = {}, None
    for line in lines[lines.index("advice:") + 1:] if "advice:" in lines else []:
        m = re.match(r"  \[([a-z-]+)\] (.*)$", line)
        if m:
            rule = m.group(1)
            found[rule] = m.group(2)
        elif rule and line.startswith("      "):
            found[rule] += " " + line.strip()
        else:
            break
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lib", required=True)
    parser.add_argument("--prog", required=True)
    parser.add_argument("case")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gt-advice-") as d:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GPUTRACE_")}
        kernels = dict(KERNEL_NS.get(args.case, {}), **{"*": 20_000})
        env.update(LD_PRELOAD=args.lib, GPUTRACE_OUTPUT=os.path.join(d, "r"),
                   GPUTRACE_FORMAT="json,text", GPUTRACE_VERBOSITY="none",
                   GPUTRACE_EMU_KERNEL_NS=",".join(f"{k}={v}" for k, v in kernels.items()),
                   GPUTRACE_EMU_GBPS=GBPS,
                   # Advice depends on GPU times: event pairs read the durations exactly.
                   GPUTRACE_EMU_EVENT_LATENCY_NS="0")
        expect_path = os.path.join(d, "expect")
        p = subprocess.run([args.prog, args.case, expect_path], env=env, capture_output=True,
                           timeout=TIMEOUT)
        if not check(p.returncode == 0, f"exit code {p.returncode}: {p.stderr.decode()[-2000:]}"):
            return report()
        e = read_expect(expect_path)
        with open(os.path.join(d, "r.json")) as f:
            doc = json.load(f)
        with open(os.path.join(d, "r.txt"), encoding="utf-8") as f:
            text = f.read()

    advice = doc["advice"]
    for row in advice:
        check(list(row) == ["rule", "count", "message"], f"advice row keys {list(row)}")
    rows = {row["rule"]: row for row in advice}
    check(len(rows) == len(advice), f"a rule appears twice: {[r['rule'] for r in advice]}")
    in_text = text_advice(text)
    check(sorted(in_text) == sorted(rows), f"text advice {sorted(in_text)}, JSON {sorted(rows)}")
    for rule, row in rows.items():
        check(" ".join(row["message"].split()) == in_text.get(rule),
              f"{rule}: the text says {in_text.get(rule)!r}, the JSON {row['message']!r}")

    if args.case == "clean":
        check(advice == [], f"the clean program got advice: {advice}")
        return report()
    rule = e["rule"]
    others = sorted(set(rows) - {rule, "gpu-idle"})
    check(not others, f"{rule}: other rules fired too: {others}")
    if check(rule in rows, f"{rule} did not fire; advice: {advice}"):
        row = rows[rule]
        check(row["count"] == int(e["count"]), f"{rule}: count {row['count']}, the program made "
              f"{e['count']}")
        check_message(rule, row["message"], e)
    return report()



if __name__ == "__main__":
    sys.exit(main())
