#!/usr/bin/env python3
"""The wheel, as a Python user gets it: build it with pip from the source tree
(scikit-build-core over the CMake build), install it into a venv that has
numba-cuda and pandas, and from that venv alone run
`gputrace python numba_prog.py` on the emulated driver, then read the report
with the installed module (check_report.py), and check
`python -m gputrace --version` against the project's version.

wheel_test.py --source DIR --work DIR --emu-lib DIR --version X.Y.Z [--cuda-root DIR]

Cached in --work: the venvs (made again when their requirements file
changes) and the CMake build of the wheel (incremental). The wheel itself is
built and installed anew every run. Where a venv must be made and PyPI cannot
be reached, prints one line and exits with SKIP (77)."""
import argparse
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
KERNEL_NS = 250000
GBPS = {"pageable": 8, "pinned": 32, "memset": 2000}
PIP_TIMEOUT = 600


def fail(message):
    print(f"wheel test: {message}")
    sys.exit(1)


def run(command, timeout=PIP_TIMEOUT, **kwargs):
    p = subprocess.run(command, capture_output=True, text=True, timeout=timeout, **kwargs)
    return p.returncode, p.stdout, p.stderr


def pypi_reachable(python):
    """Whether pip reaches its index, asked once and briefly."""
    rc, _, err = run([python, "-m", "pip", "index", "versions", "pip", "--retries", "0",
                      "--timeout", "15"], timeout=60)
    last = (err.strip().splitlines() or ["no answer"])[-1]
    return rc == 0, "pip index versions pip: " + last.replace("ERROR: ", "")


def venv(path, requirements):
    """The venv at path with requirements installed; made again when the
    requirements file or the interpreter changed."""
    with open(requirements, "rb") as f:
        stamp = hashlib.sha256(f.read() + sys.version.encode()).hexdigest()
    stamp_file = os.path.join(path, "gputrace-requirements.sha256")
    python = os.path.join(path, "bin", "python")
    if os.path.exists(stamp_file):
        with open(stamp_file) as f:
            if f.read() == stamp:
                return python
    shutil.rmtree(path, ignore_errors=True)
    rc, out, err = run([sys.executable, "-m", "venv", path])
    if rc != 0:
        fail(f"python3 -m venv {path}: {err.strip() or out.strip()}")
    reachable, why = pypi_reachable(python)
    if not reachable:
        print(f"wheel test: skipped: PyPI unreachable ({why})")
        sys.exit(SKIP)
    started = time.monotonic()
    rc, out, err = run([python, "-m", "pip", "install", "-q", "-r", requirements])
    if rc != 0:
        fail(f"pip install -r {requirements}: {err.strip()[-2000:]}")
    print(f"wheel test: venv {os.path.basename(path)} made in {time.monotonic() - started:.0f} s")
    with open(stamp_file, "w") as f:
        f.write(stamp)
    return python


def build_wheel(builder, source, work, cuda_root):
    dist = os.path.join(work, "dist")
    shutil.rmtree(dist, ignore_errors=True)
    # One compile at a time: ctest runs another test beside this one, and the
    # emulator's timing tests want their core.
    env = dict(os.environ, CMAKE_BUILD_PARALLEL_LEVEL="1")
    if cuda_root:
        env["GPUTRACE_CUDA_ROOT"] = cuda_root
    started = time.monotonic()
    rc, out, err = run([builder, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps",
                        "-w", dist, "-C", f"build-dir={os.path.join(work, 'cmake')}", source],
                       env=env)
    if rc != 0:
        fail(f"pip wheel: {(out + err).strip()[-3000:]}")
    wheels = glob.glob(os.path.join(dist, "*.whl"))
    if len(wheels) != 1:
        fail(f"pip wheel made {wheels}")
    print(f"wheel test: built {os.path.basename(wheels[0])} in {time.monotonic() - started:.1f} s")
    return wheels[0]


def check_wheel(wheel, version):
    """Named for the project's version, for any Python 3; holds the module,
    the command, the library and nothing else that runs."""
    name = os.path.basename(wheel)
    if not name.startswith(f"gputrace-{version}-py3-none-"):
        fail(f"wheel name {name}: expected gputrace-{version}-py3-none-<platform>")
    data = f"gputrace-{version}.data"
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        command_mode = z.getinfo(f"{data}/scripts/gputrace").external_attr >> 16 \
            if f"{data}/scripts/gputrace" in names else 0
    for want in (f"{data}/scripts/gputrace", f"{data}/data/lib/libgputrace.so",
                 "gputrace/__init__.py", "gputrace/__main__.py"):
        if want not in names:
            fail(f"{name} lacks {want}: {sorted(names)}")
    if not command_mode & 0o111:
        fail(f"{data}/scripts/gputrace is not executable (mode {command_mode:o})")
    extra = sorted(n for n in names if n.endswith((".so", ".a")) or ".so." in n)
    if extra != [f"{data}/data/lib/libcjson.so.1", f"{data}/data/lib/libgputrace.so"]:
        fail(f"{name}: libraries {extra}, expected libgputrace.so and the command's "
             "libcjson.so.1")


def clean_env(venv_dir, emu_lib):
    """The venv's bin and the system's on PATH, the emulated driver where a
    GPU machine's driver would be; nothing of the build or source tree."""
    env = {k: v for k, v in os.environ.items()
           if k in ("HOME", "LANG", "LC_ALL", "TMPDIR", "USER")}
    env["PATH"] = os.pathsep.join([os.path.join(venv_dir, "bin"), "/usr/bin", "/bin"])
    env["LD_LIBRARY_PATH"] = emu_lib
    env["GPUTRACE_EMU_KERNEL_NS"] = f"*={KERNEL_NS}"
    env["GPUTRACE_EMU_GBPS"] = ",".join(f"{k}={v}" for k, v in GBPS.items())
    # GPU times are checked against these durations: event pairs read them exactly.
    env["GPUTRACE_EMU_EVENT_LATENCY_NS"] = "0"
    return env


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--emu-lib", required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("--cuda-root", default="")
    a = ap.parse_args()
    for name in ("source", "work", "emu_lib"):  # the run's directory is another
        setattr(a, name, os.path.abspath(getattr(a, name)))
    started = time.monotonic()
    os.makedirs(a.work, exist_ok=True)
    builder = venv(os.path.join(a.work, "builder"), os.path.join(HERE, "build-requirements.txt"))
    client = venv(os.path.join(a.work, "venv"), os.path.join(HERE, "requirements.txt"))
    wheel = build_wheel(builder, a.source, a.work, a.cuda_root)
    check_wheel(wheel, a.version)
    rc, out, err = run([client, "-m", "pip", "install", "-q", "--force-reinstall", "--no-deps",
                        wheel])
    if rc != 0:
        fail(f"pip install {wheel}: {err.strip()[-2000:]}")

    venv_dir = os.path.dirname(os.path.dirname(client))
    env = clean_env(venv_dir, a.emu_lib)
    with tempfile.TemporaryDirectory() as tmp:
        found = shutil.which("gputrace", path=env["PATH"])
        if found != os.path.join(venv_dir, "bin", "gputrace"):
            fail(f"gputrace on the venv's PATH is {found}")
        want = f"gputrace {a.version}"
        for command in (["python", "-m", "gputrace", "--version"], ["gputrace", "--version"]):
            rc, out, err = run(command, env=env, cwd=tmp, timeout=60)
            if rc != 0 or out.strip() != want:
                fail(f"{' '.join(command)}: status {rc}, {out.strip()!r} {err.strip()!r}; "
                     f"expected {want!r}")
        # The command's cJSON is the wheel's own, so that it runs where the
        # system has none.
        rc, out, err = run(["ldd", found], env=env, cwd=tmp, timeout=60)
        cjson = [os.path.normpath(line.split("=>")[1].split()[0]) for line in out.splitlines()
                 if "libcjson" in line and "=>" in line]
        if rc != 0 or cjson != [os.path.join(venv_dir, "lib", "libcjson.so.1")]:
            fail(f"the installed command's cJSON: {cjson or out.strip()}; expected the venv's lib/")
        # Copied, so that no directory of the source tree is on the scripts' sys.path.
        for script in ("numba_prog.py", "check_report.py"):
            shutil.copy(os.path.join(HERE, script), tmp)
        prog = os.path.join(tmp, "numba_prog.py")
        facts = os.path.join(tmp, "facts.json")
        rc, out, err = run(["gputrace", "-o", os.path.join(tmp, "run"), "-f", "json",
                            "python", prog, facts], env=env, cwd=tmp, timeout=300)
        if rc != 0 or not os.path.exists(os.path.join(tmp, "run.json")):
            fail(f"gputrace python numba_prog.py: status {rc}\n{out}{err}")
        rc, out, err = run(["python", os.path.join(tmp, "check_report.py"),
                            os.path.join(tmp, "run.json"), facts, a.version, str(KERNEL_NS),
                            json.dumps(GBPS)], env=env, cwd=tmp, timeout=120)
        if rc != 0:
            fail(f"the report read with the module:\n{out}{err}")
        rc, out, err = run(["gputrace", "report", os.path.join(tmp, "run.json")], env=env,
                           cwd=tmp, timeout=60)
        if rc != 0 or not out.startswith("gputrace: "):
            fail(f"gputrace report run.json from the venv: status {rc}\n{out}{err}")
    print(f"wheel test: OK ({time.monotonic() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
