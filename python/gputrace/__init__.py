"""gputrace: where a CUDA program spends its GPU time.

The package holds the ``gputrace`` command (a C program, on the environment's
PATH), the library it preloads into the traced program, and this module, which
reads the JSON reports::

    $ gputrace -o run python train.py          # writes run.json
    >>> import gputrace
    >>> r = gputrace.load("run.json")
    >>> r.totals["gpu_busy_ns"], r["process"]["command"]
    >>> r.kernels_df()                           # with pandas installed

``python -m gputrace ...`` runs the command.
"""
from importlib import metadata as _metadata

from ._install import command_path, library_path
from ._report import Report, load

try:
    __version__ = _metadata.version("gputrace")
except _metadata.PackageNotFoundError:  # the source tree, not an installed wheel
    __version__ = "unknown"

__all__ = ["Report", "load", "command_path", "library_path", "__version__"]
