"""What the Python workloads share: importing their framework or saying why not, and
writing the account of their work that workloads.py checks the tracers against."""
import importlib
import json
import sys
from importlib import metadata

SKIP_STATUS = 3  # workloads.SKIP_STATUS: the framework is not there


def require(module):
    """The module, or exit with SKIP_STATUS and the reason on stdout."""
    try:
        return importlib.import_module(module)
    except Exception as e:  # a framework can fail to import in many ways
        print(f"{module} not importable: {type(e).__name__}: {e}".splitlines()[0])
        sys.exit(SKIP_STATUS)


def versions(*distributions):
    """'name version' of each installed distribution, joined by commas."""
    found = []
    for name in distributions:
        try:
            found.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            pass
    return ", ".join(found)


def write_work(path, version, kernel, launches, htod_bytes, dtoh_bytes, compile_api):
    """kernel: a text every name of the workload's kernel contains (None: any kernel);
    launches: how many it launched; htod_bytes, dtoh_bytes: what its own copies moved;
    compile_api: the compile API the framework must have called, or None."""
    work = dict(version=version, kernel=kernel, launches=launches, htod_bytes=htod_bytes,
                dtoh_bytes=dtoh_bytes, compile_api=compile_api)
    with open(path, "w") as f:
        json.dump(work, f)


def expect_close(what, got, expected, rtol, atol=0.0):
    """Exits with status 1 when the workload's result is wrong."""
    import numpy

    if not numpy.allclose(got, expected, rtol=rtol, atol=atol):
        print(f"wrong result: {what}")
        sys.exit(1)
