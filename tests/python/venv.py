#!/usr/bin/env python3
"""Sets up the virtual environment the `python` tests run their programs
in: VENV (under the build directory) with the pinned packages of
requirements.txt from PyPI.

venv.py VENV REQUIREMENTS

A VENV that was built from the same requirements by the same Python is
reused as it is (the stamp file records both). Otherwise it is built anew.
When PyPI cannot be reached, one line says so and the exit status is 77,
which ctest counts as skipped (SKIP_RETURN_CODE); the tests that need the
environment then skip too. Any other failure is a failure.
"""
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77
STAMP = "gputrace-requirements.sha256"


def wanted_stamp(requirements):
    with open(requirements, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    return f"{digest} {sys.version.split()[0]} {sys.executable}\n"


def current_stamp(venv):
    try:
        with open(os.path.join(venv, STAMP)) as f:
            return f.read()
    except OSError:
        return None


def pypi_reachable(python):
    """pip itself, with its own configuration (index, proxy, certificates),
    fetches one small pinned package."""
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run([python, "-m", "pip", "download", "--no-deps", "--dest", tmp,
                            "--timeout", "20", "--retries", "1", "nvtx==0.2.17"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return r.returncode == 0


def build(venv, requirements):
    shutil.rmtree(venv, ignore_errors=True)
    r = subprocess.run([sys.executable, "-m", "venv", venv], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"FAIL: {sys.executable} -m venv {venv}: {r.stderr.strip()} "
                 "(Debian: apt-get install python3-venv)")
    python = os.path.join(venv, "bin", "python")
    r = subprocess.run([python, "-m", "pip", "install", "--disable-pip-version-check",
                        "--no-input", "-q", "-r", requirements],
                       capture_output=True, text=True)
    if r.returncode != 0:
        reachable = pypi_reachable(python)
        shutil.rmtree(venv, ignore_errors=True)
        if not reachable:
            print("SKIP: PyPI cannot be reached: the python tests need its packages "
                  f"({os.path.basename(requirements)})")
            sys.exit(SKIP)
        sys.exit(f"FAIL: pip install -r {requirements}:\n{r.stdout}{r.stderr}")


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: venv.py VENV REQUIREMENTS")
    venv, requirements = sys.argv[1], sys.argv[2]
    stamp = wanted_stamp(requirements)
    if current_stamp(venv) == stamp:
        print(f"ok: {venv} reused")
        return
    started = time.monotonic()
    build(venv, requirements)
    with open(os.path.join(venv, STAMP), "w") as f:
        f.write(stamp)
    print(f"ok: {venv} built in {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
