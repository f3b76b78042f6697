"""Running a program bare, under gputrace and under the CUPTI reference: each run in a
directory of its own, with a time limit, its output kept in files."""
import glob
import json
import os
import signal
import subprocess
import time
from dataclasses import dataclass


@dataclass
class Context:
    """What every run of a check shares."""
    build: str
    runs: str
    shim: str
    cupti_ref: str
    program_env: dict
    python_env: dict
    timeout: float  # seconds per run, cut down as the deadline nears
    repeat: int
    tolerance: float
    floor_ns: float
    deadline: float
    floor_source: str = ""  # where the floor came from (run.measure_floor)
    gpu_timing: str = "auto"  # GPUTRACE_GPU_TIMING for gputrace's runs


def run_timeout(ctx):
    """A run's time limit: its own, but none ends much past the budget's deadline."""
    return min(ctx.timeout, max(10.0, ctx.deadline + 60 - time.monotonic()))


# Variables that would change what a run records, never inherited from the caller.
_TRACER_VARIABLES = ("LD_PRELOAD", "NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH")


@dataclass
class Run:
    directory: str
    rc: int = None  # None: it did not start or ran past its limit
    wall_s: float = None
    pid: int = None
    timed_out: bool = False
    error: str = ""  # why it did not start

    def output(self, name):
        try:
            with open(os.path.join(self.directory, name), "rb") as f:
                return f.read()
        except OSError:
            return b""

    def tail(self, lines=3):
        text = (self.output("stdout") + self.output("stderr")).decode(errors="replace")
        return " | ".join(text.strip().splitlines()[-lines:])

    def output_hint(self):
        """' (output: ...)' with the end of the run's output, or '' when it wrote none."""
        tail = self.tail(2)
        return f" (output: {tail})" if tail else ""

    def describe(self):
        """A failed run in a few words."""
        if self.error:
            return f"did not start: {self.error}"
        if self.timed_out:
            return f"ran past its limit of {self.wall_s:.0f} s"
        if self.rc < 0:
            return f"killed by signal {-self.rc}: {self.tail()}"
        return f"exit status {self.rc}: {self.tail()}"


def clean_environment(library_path=None):
    """The caller's environment without tracer or gputrace settings; `library_path`
    first in LD_LIBRARY_PATH when given."""
    env = {k: v for k, v in os.environ.items()
           if k not in _TRACER_VARIABLES and not k.startswith("GPUTRACE_")}
    if library_path:
        env["LD_LIBRARY_PATH"] = os.pathsep.join(
            p for p in (library_path, env.get("LD_LIBRARY_PATH")) if p)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def shim_environment(base, shim, directory, gpu_timing="auto"):
    env = dict(base)
    env.update(LD_PRELOAD=shim, NVTX_INJECTION64_PATH=shim,
               GPUTRACE_OUTPUT=os.path.join(directory, "ours.%p"), GPUTRACE_FORMAT="json",
               GPUTRACE_VERBOSITY="none", GPUTRACE_GPU_TIMING=gpu_timing)
    return env


def cupti_environment(base, cupti_ref, directory):
    env = dict(base)
    env.update(CUDA_INJECTION64_PATH=cupti_ref,
               GPUTRACE_CUPTI_OUT=os.path.join(directory, "cupti.%p.json"))
    return env


def run(command, env, directory, timeout_s):
    """Runs `command` in `directory` (made fresh), stdout and stderr to files there.
    The program gets a process group of its own, so that a run past its limit is ended
    with every process it started."""
    os.makedirs(directory, exist_ok=True)
    for old in glob.glob(os.path.join(directory, "*")):
        os.remove(old)
    result = Run(directory)
    with open(os.path.join(directory, "stdout"), "wb") as out, \
            open(os.path.join(directory, "stderr"), "wb") as err:
        start = time.monotonic()
        try:
            proc = subprocess.Popen(command, env=env, cwd=directory, stdout=out, stderr=err,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError as e:
            result.error = str(e)
            return result
        result.pid = proc.pid
        try:
            result.rc = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            result.timed_out = True
        result.wall_s = time.monotonic() - start
    return result


def load_report(run_result, prefix):
    """The JSON file `prefix`.<pid>.json the run's own process wrote (a forked child
    writes its own beside it), or None with the reason. A report that says why it holds
    nothing (its "error": the CUPTI reference stood down) is none, for that reason."""
    path = os.path.join(run_result.directory, f"{prefix}.{run_result.pid}.json")
    try:
        with open(path) as f:
            doc = json.load(f)
    except FileNotFoundError:
        return None, f"no {os.path.basename(path)} written"
    except (OSError, ValueError) as e:
        return None, f"{os.path.basename(path)} unreadable: {e}"
    if isinstance(doc, dict) and doc.get("error"):
        return None, f"{os.path.basename(path)} holds nothing: {doc['error']}"
    return doc, ""
