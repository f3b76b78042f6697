"""The fidelity table: one row per program, then what failed and what differed."""
from dataclasses import dataclass, field

from compare import Comparison


@dataclass
class RunRow:
    """What a row of either table holds about its runs: wall times in seconds (bare and
    under gputrace), failures and notes."""
    name: str
    wall_bare: float = None
    wall_shim: float = None
    failures: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    def all_failures(self):
        return self.failures

    def all_notes(self):
        return self.notes

    def wall_cells(self):
        """'bare / shim' and the overhead."""
        if self.wall_bare is None or self.wall_shim is None:
            return "-", ""
        return (f"{self.wall_bare:.2f}s / {self.wall_shim:.2f}s",
                fmt_diff(round(self.wall_shim * 1e6), round(self.wall_bare * 1e6)))


@dataclass
class ProgramRow(RunRow):
    """A program's runs and the comparison of its reports (None when a run failed
    before there was anything to compare)."""
    comparison: Comparison = None

    @property
    def ok(self):
        return not self.failures and self.comparison is not None and self.comparison.ok

    def all_failures(self):
        return self.failures + (self.comparison.failures if self.comparison else [])

    def all_notes(self):
        return self.notes + (self.comparison.notes if self.comparison else [])


def detail_lines(rows):
    """One line per failure and per note, after a blank line when there are any."""
    lines = []
    for row in rows:
        lines += [f"  FAIL {row.name}: {text}" for text in row.all_failures()]
        lines += [f"  note {row.name}: {text}" for text in row.all_notes()]
    return [""] + lines if lines else []


def fmt_ns(ns):
    if ns < 1000:
        return f"{ns}ns"
    if ns < 1_000_000:
        return f"{ns / 1e3:.1f}us"
    if ns < 1_000_000_000:
        return f"{ns / 1e6:.2f}ms"
    return f"{ns / 1e9:.3f}s"


def fmt_bytes(n):
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.2f}{unit}"
    return f"{n}B"


def fmt_diff(ours, reference):
    if reference == 0:
        return "=" if ours == 0 else "n/a"
    return f"{100.0 * (ours - reference) / reference:+.1f}%"


def _pair(ours, cupti):
    return f"{ours}/{cupti}"


def _time_pair(check):
    return f"{fmt_ns(check.ours)} / {fmt_ns(check.cupti)}"


# (heading, width); groups name the columns under them.
COLUMNS = (("program", 24), ("names", 6), ("launches", 16), ("GPU time", 22), ("diff", 7),
           ("calls", 11), ("bytes", 19), ("GPU time", 22), ("diff", 7), ("calls", 9),
           ("bare / shim", 16), ("ovhd", 7), ("result", 0))
GROUPS = (("", 1), ("kernels", 4), ("copies", 4), ("memsets", 1), ("wall", 2), ("", 1))
LEGEND = ("a/b and a / b: gputrace / CUPTI; +gA/B: graph launches; bytes '=': equal; "
          "ovhd: wall time under gputrace against bare; *: from one run with both tracers")


def _line(cells):
    return " ".join(f"{cell:<{width}}" for cell, (_, width) in zip(cells, COLUMNS)).rstrip()


def _group_line():
    parts, i = [], 0
    for name, span in GROUPS:
        width = sum(w for _, w in COLUMNS[i:i + span]) + span - 1
        parts.append(f"{name:<{width}}")
        i += span
    return " ".join(parts).rstrip()


def _result(row):
    if not row.ok:
        return "FAIL"
    if row.comparison.by_overlap:
        return "ok (overlap)"
    if row.comparison.by_staging:
        return "ok (staging)"
    return "ok (floor)" if row.comparison.by_floor else "ok"


def _row_line(row):
    wall, overhead = row.wall_cells()
    c = row.comparison
    if c is None:
        return _line((row.name, "-", "-", "-", "", "-", "-", "-", "", "-", wall, overhead,
                      _result(row)))
    launches = _pair(*c.launches)
    if c.graphs != (0, 0):
        launches += f" +g{_pair(*c.graphs)}"
    copies, ref_copies = c.copies
    memsets, ref_memsets = c.memsets
    if copies.bytes == ref_copies.bytes:
        copy_bytes = f"{fmt_bytes(copies.bytes)} ="
    else:
        copy_bytes = f"{fmt_bytes(copies.bytes)} / {fmt_bytes(ref_copies.bytes)}"
    return _line((row.name, _pair(c.names_matched, c.names_total), launches,
                  _time_pair(c.kernel_time), fmt_diff(c.kernel_time.ours, c.kernel_time.cupti),
                  _pair(copies.calls, ref_copies.calls), copy_bytes,
                  f"{fmt_ns(c.copy_ns[0])} / {fmt_ns(c.copy_ns[1])}"
                  f"{'*' if c.copies_same_run else ''}", fmt_diff(*c.copy_ns),
                  _pair(memsets.calls, ref_memsets.calls), wall, overhead, _result(row)))


def program_lines(rows):
    """The table, then one line per failure and per note."""
    lines = [_group_line(), _line([heading for heading, _ in COLUMNS])]
    lines += [_row_line(row) for row in rows]
    lines.append(LEGEND)
    return lines + detail_lines(rows)
