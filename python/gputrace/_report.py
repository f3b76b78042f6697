"""Reading a gputrace JSON report (schema 1) with the standard library, and its
tables as pandas DataFrames when pandas is installed."""
from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import IO, Any, Iterator

# Tables whose rows are not a top-level list: name -> path to the list.
_NESTED = {"memory": ("memory", "devices"), "heaps": ("memory", "heaps"),
           "checksums": ("checksums", "copies")}

STATS = ("total", "avg", "med", "min", "max", "stddev", "first", "rest_avg")


def _stats(prefix: str) -> tuple:
    return tuple(f"{prefix}_{s}" for s in STATS)


# The columns every report has (the schema's required keys), so that a table
# with no rows still has them; rows bring any further keys with them.
_COLUMNS = {
    # The readable name first: the full one is long (templates, signatures).
    "kernels": ("display_name", "name", "calls") + _stats("gpu_ns") + ("api_ns_total",),
    "memcpy": ("direction", "host_memory", "async", "calls", "bytes") + _stats("gpu_ns") + ("gbps",),
    "memset": ("calls", "bytes") + _stats("gpu_ns"),
    "memory": ("device", "allocs", "frees", "peak_bytes", "current_bytes", "leaked_allocs"),
    "compile": ("api", "name", "calls", "ok") + _stats("wall_ns"),
    "module": ("api", "kind", "calls", "bytes") + _stats("wall_ns"),
    "sync": ("api", "calls") + _stats("wall_ns"),
    "nvtx": ("domain", "name", "calls") + _stats("wall_ns") + ("gpu_ns_total",),
    "nvtx_marks": ("domain", "name", "count", "first_ns", "last_ns"),
    "nvtx_counters": ("domain", "name", "unit", "count", "min", "max", "last"),
    "heaps": ("domain", "name", "bytes", "regions", "region_bytes", "regions_peak",
              "region_bytes_peak"),
    "api": ("name", "calls") + _stats("wall_ns") + ("errors",),
    "advice": ("rule", "count", "message"),
    "checksums": ("thread", "index", "bytes", "hash", "status", "site"),
}

# Objects whose keys are data rather than fields (error name -> count): they
# stay one dict-valued column instead of a column per key.
_MAPPINGS = frozenset({"errors"})


def flatten(row: Mapping, prefix: str = "") -> dict:
    """One table row with its nested objects spread into columns joined by
    '_': {"gpu_ns": {"total": 5}} -> {"gpu_ns_total": 5}."""
    flat = {}
    for key, value in row.items():
        column = prefix + key
        if isinstance(value, Mapping) and key not in _MAPPINGS:
            flat.update(flatten(value, column + "_"))
        else:
            flat[column] = value
    return flat


class Report(Mapping):
    """A gputrace JSON report: every top-level section by key (r["kernels"])
    or attribute (r.kernels), keys added by later versions included, as the
    JSON has them (times in integer nanoseconds). rows() and the *_df()
    methods give the tables with nested statistics spread into columns."""

    def __init__(self, data: dict, path: str | None = None):
        if not isinstance(data, dict) or data.get("tool") != "gputrace":
            raise ValueError(f"{path or 'data'}: not a gputrace report ({_what_json(data)})")
        if data.get("kind") == "diff":
            raise ValueError(f"{path or 'data'}: the output of gputrace diff, not a report: read "
                             "it with json.load")
        self._data = data
        self.path = path

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["_data"][name]
        except KeyError:
            raise AttributeError(f"the report has no section {name!r}") from None

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._data))

    def __repr__(self) -> str:
        command = self._data.get("process", {}).get("command", "?")
        return f"<gputrace.Report {command!r}: {', '.join(self._data)}>"

    @property
    def data(self) -> dict:
        """The report as json.load returned it."""
        return self._data

    def tables(self) -> list:
        """The names of the sections that are tables (lists of rows)."""
        names = [k for k, v in self._data.items() if isinstance(v, list) and
                 all(isinstance(row, Mapping) for row in v)]
        names += [name for name, path in _NESTED.items() if self._raw_rows(path) is not None]
        return names

    def _raw_rows(self, path: tuple):
        node = self._data
        for key in path:
            if not isinstance(node, Mapping) or key not in node:
                return None
            node = node[key]
        return node if isinstance(node, list) else None

    def rows(self, table: str) -> list:
        """The rows of a table as flat dicts (standard library only). A table
        of the schema that the report lacks has none; any other name that is
        not a table is a KeyError."""
        rows = self._raw_rows(_NESTED.get(table, (table,)))
        if rows is None and table in _COLUMNS:  # a table this report predates
            rows = []
        if rows is None:
            raise KeyError(f"the report has no table {table!r} (tables: {', '.join(self.tables())})")
        return [flatten(row) for row in rows]

    def df(self, table: str):
        """A table as a pandas DataFrame, one row per JSON row, one column per
        (flattened) key: the schema's columns first, then any others."""
        try:
            import pandas
        except ImportError as e:
            raise ImportError("gputrace: DataFrames need pandas (pip install pandas)") from e
        rows = self.rows(table)
        columns = list(_COLUMNS.get(table, ()))
        for row in rows:
            columns += [c for c in row if c not in columns]
        df = pandas.DataFrame(rows, columns=columns)
        # A column of integers that some rows lack (a key a later version
        # writes, one written only where it applies) stays integers, with
        # <NA> where a row has none, instead of becoming floats.
        for column in columns:
            present = [row[column] for row in rows if row.get(column) is not None]
            if (present and len(present) < len(rows) and
                    all(isinstance(v, int) and not isinstance(v, bool) for v in present)):
                df[column] = df[column].astype("Int64")
        return df

    def kernels_df(self):
        return self.df("kernels")

    def memcpy_df(self):
        return self.df("memcpy")

    def memset_df(self):
        return self.df("memset")

    def memory_df(self):
        """memory.devices: one row per device (-1: pinned host memory)."""
        return self.df("memory")

    def compile_df(self):
        return self.df("compile")

    def module_df(self):
        return self.df("module")

    def sync_df(self):
        return self.df("sync")

    def nvtx_df(self):
        return self.df("nvtx")

    def nvtx_marks_df(self):
        return self.df("nvtx_marks")

    def nvtx_counters_df(self):
        """NVTX counters: samples, min, max, last per (domain, name)."""
        return self.df("nvtx_counters")

    def heaps_df(self):
        """memory.heaps: the heaps pools described with NVTX, their regions."""
        return self.df("heaps")

    def api_df(self):
        """One row per entry point; errors stays a dict (error name -> count)."""
        return self.df("api")

    def advice_df(self):
        return self.df("advice")

    def checksums_df(self):
        """checksums.copies (GPUTRACE_CHECKSUM): one row per device-to-host
        copy, by thread and index; hash is 16 hex digits, None when the copy
        could not be hashed (status says why)."""
        return self.df("checksums")


def _what_json(data) -> str:
    """What JSON that is no report is, as far as gputrace knows it."""
    if isinstance(data, dict) and "traceEvents" in data:
        return "a Chrome trace (gputrace -f chrome): open it in ui.perfetto.dev"
    if isinstance(data, dict) and data.get("tool") not in (None, "gputrace"):
        return f"written by {str(data['tool'])[:40]!r}"
    return 'no "tool": "gputrace"'


def _what_text(text: str) -> str:
    """What a file that is not JSON is, from its first bytes."""
    head = text.lstrip("\ufeff")[:200]
    if head.startswith("category,name,calls,"):
        return ("a gputrace CSV report: load() reads the JSON one (gputrace -f json); "
                "read this one with pandas.read_csv")
    if head.startswith("gputrace: "):
        return "a gputrace text summary: load() reads the JSON report (gputrace -f json)"
    if "\ufffd" in head or "\0" in head:
        return ("binary, not a JSON report (a .pftrace is Perfetto's trace: open it in "
                "ui.perfetto.dev)")
    if head.startswith("{") or head.startswith("["):
        return "not valid JSON (cut short?)"
    return "not JSON: load() reads the JSON report gputrace -f json writes"


def _parse(text: str, name: str | None) -> Report:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{name or 'data'}: {_what_text(text)} ({e})") from e
    return Report(data, name)


def load(source: str | os.PathLike | IO) -> Report:
    """Reads a report written by gputrace -f json (GPUTRACE_FORMAT=json): a
    path or an open file. Anything else (a CSV or text report, a trace, a
    file cut short) is a ValueError that says what it is."""
    if hasattr(source, "read"):
        data = source.read()
        name = getattr(source, "name", None)
    else:
        name = os.fspath(source)
        with open(name, "rb") as f:
            data = f.read()
    if isinstance(data, bytes):
        data = data.decode("utf-8", errors="replace")
    return _parse(data, name)
