#!/usr/bin/env python3
"""numba-cuda's copy_to_host under `gputrace --checksum dtoh` on the
emulated driver (progs/numba_checksum.py): every copy the program made is
hashed, on the thread that made it (two threads); two runs of the same
program diff the same (exit 0); a run where one element of copy 1 changed
diffs to exit 3, naming that copy.

check_numba_checksum.py --venv VENV --cli GPUTRACE --emu-lib DIR

Exit status 0 when every check holds, 77 (skipped) when VENV is missing
because PyPI could not be reached, 1 otherwise.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

from check_python import PROGS, SKIP, emu_env

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import verdict  # noqa: E402
from verdict import check  # noqa: E402

COPY_BYTES = (1 << 14) * 4


def traced(cli, python, env, base, change):
    e = dict(env, GT_PY_CHANGE="1" if change else "0")
    p = subprocess.run([cli, "-v", "none", "--checksum", "dtoh", "-o", base, "-f", "json", "--",
                        python, os.path.join(PROGS, "numba_checksum.py")],
                       env=e, capture_output=True, text=True, timeout=300)
    check(p.returncode == 0 and p.stdout == "copies 3, ok\n",
          f"the program exited {p.returncode}: {p.stdout}{p.stderr}")
    with open(base + ".json") as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--venv", required=True)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--emu-lib", required=True)
    a = ap.parse_args()
    python = os.path.join(a.venv, "bin", "python")
    if not os.path.exists(python):
        print(f"SKIP: no Python environment at {a.venv} (python.venv: PyPI cannot be reached)")
        return SKIP
    env = emu_env(a.emu_lib)
    with tempfile.TemporaryDirectory() as tmp:
        runs = [os.path.join(tmp, n) for n in ("a", "b", "changed")]
        reports = [traced(a.cli, python, env, runs[i], i == 2) for i in range(3)]
        ck = reports[0].get("checksums", {})
        copies = ck.get("copies", [])
        check(ck.get("hashed") == 3 and ck.get("unhashed") == 0,
              f"hashed {ck.get('hashed')}, unhashed {ck.get('unhashed')}: expected 3, 0")
        check(sorted(c["bytes"] for c in copies) == [COPY_BYTES] * 3, f"copies {copies}")
        threads = sorted({c["thread"] for c in copies})
        check(threads == [0, 1], f"the copies' threads {threads}: expected two")
        same = subprocess.run([a.cli, "diff", runs[0] + ".json", runs[1] + ".json", "-c",
                               "kernel,memcpy,memset"], capture_output=True, text=True)
        check(same.returncode == 0 and "same: 3 copies compared" in same.stdout,
              f"two equal runs: diff exited {same.returncode}: {same.stdout}")
        changed = subprocess.run([a.cli, "diff", runs[0] + ".json", runs[2] + ".json", "-c",
                                  "kernel,memcpy,memset", "-f", "json"],
                                 capture_output=True, text=True)
        first = json.loads(changed.stdout)["checksums"]["first"] if changed.stdout else None
        check(changed.returncode == 3 and first and first["thread"] == 0
              and first["index"] == 1 and first["bytes"] == COPY_BYTES,
              f"one element changed: diff exited {changed.returncode}, first {first}")
    status = verdict.report()
    if status == 0:
        print("ok: numba copy_to_host checksums")
    return status


if __name__ == "__main__":
    sys.exit(main())
