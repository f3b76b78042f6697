"""Where the wheel put the command and the library.

The wheel installs the command in the environment's scripts directory (on
PATH) and the library in lib/ beside it, where the command looks for it; the
package's RECORD says where exactly, whatever the install scheme (a venv,
--user, a prefix)."""
from __future__ import annotations

import shutil
from importlib import metadata


def _installed(directory: str, name: str) -> str | None:
    try:
        files = metadata.distribution("gputrace").files or []
    except metadata.PackageNotFoundError:
        return None
    for f in files:
        # RECORD paths are relative to site-packages (../../lib/libgputrace.so
        # in a venv): the installed file's own directory is what tells.
        path = f.locate().resolve() if f.name == name else None
        if path is not None and path.parent.name == directory:
            return str(path)
    return None


def command_path() -> str | None:
    """The gputrace command installed with this module; else the one on
    PATH; None when there is neither."""
    return _installed("bin", "gputrace") or shutil.which("gputrace")


def library_path() -> str | None:
    """libgputrace.so installed with this module (for LD_PRELOAD and
    NVTX_INJECTION64_PATH by hand); None when it is not installed."""
    return _installed("lib", "libgputrace.so")
