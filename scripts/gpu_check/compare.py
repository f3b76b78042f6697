#!/usr/bin/env python3
"""gputrace's report of a program against the CUPTI reference's of another run of it.

compare.py [--program NAME] [--tolerance F] [--floor-us US] [--overlap] OURS.json CUPTI.json
prints the fidelity table's header, the program's row and what differs; exit status 1
when a check fails.

What is compared (separate runs, one tracer each; copy times from a third run with both
tracers where one is given, see below):
  kernel names      the set of demangled names, gputrace's row of graph launches aside
                    (the row with "graph": true)
  launches          per kernel name, calls: launches outside graphs, plus each kernel
                    captured into a graph once (gputrace records the captured call;
                    the reference counts each graph node once); graph launches apart
  copies, memsets   calls and bytes summed over all rows; rows keyed by (direction,
                    host memory, async) that differ are listed as notes
  GPU time          totals of kernels (graph launches included: gputrace times a
                    graph launch as one piece of work, the reference spans its nodes),
                    of copies and of memsets
Counts and bytes must be equal, and neither tracer may have dropped records, nor CUPTI have
left operations untimed (its "untimed": their times would be missing from its totals). A
time total passes when
    |ours - CUPTI| <= max(tolerance x CUPTI, floor x timed operations)
where timed operations are the operations CUPTI timed outside graphs plus the graph
launches. The floor is the allowance for one event pair: its two timestamps are
written by the GPU's front end around the work (the documented resolution of an
event's elapsed time is about 0.5 us per timestamp) and include the time the front end
takes to start the work after the first one and to see it end before the second one,
which CUPTI's timestamps, taken by the units doing the work, leave out. With kernels of
a few microseconds this allowance, not the tolerance, is what the check can promise.

--overlap, for programs whose streams run work side by side: an event pair on one
stream also times the wait of its work for a GPU busy with another stream's, which
CUPTI does not count, so only the lower bound holds there:
    CUPTI - ours <= max(tolerance x CUPTI, floor x timed operations)
An event pair cannot be shorter than the work it brackets.

Copies are timed from a third run with both tracers at once where run.py makes one
(--same-run-ours/--same-run-cupti here): a copy's speed depends on the host and the
machine's state, and the same program's copies moved between separate runs by 4%
(pinned) and up to 40% (pageable, managed) in CUPTI's own figures on an H100, which a
5% tolerance cannot absorb; within one run both tracers time the same copies.
Copies of pageable or managed host memory ("staged" copies) are held to the lower
bound only: the driver stages a pageable copy through pinned buffers of its own and
migrates managed pages, and the event pair also times that work before the first
transfer starts, which CUPTI's record of the transfer leaves out. Without a run with
both tracers, staged copies are held to PAGEABLE_TOLERANCE.

The floor is measured on the GPU by run.py (tests/gpu/event_floor.cu) where it can be:
what an event pair reads around work of well under a microsecond after the GPU has
been idle, the largest allowance one timed operation can need.
"""
import argparse
import json
import sys
from dataclasses import dataclass, field

DEFAULT_TOLERANCE = 0.05
DEFAULT_FLOOR_NS = 2000
PAGEABLE_TOLERANCE = 0.20


@dataclass
class Work:
    """Totals of one row: calls, bytes, GPU ns and the operations that carry a time."""
    calls: int = 0
    bytes: int = 0
    gpu_ns: int = 0
    timed: int = 0

    def add(self, other):
        self.calls += other.calls
        self.bytes += other.bytes
        self.gpu_ns += other.gpu_ns
        self.timed += other.timed


@dataclass
class Totals:
    """One tracer's view of a run, in the form both reports can be brought to."""
    kernels: dict = field(default_factory=dict)  # name -> Work
    graph: Work = field(default_factory=Work)  # graph launches
    memcpy: dict = field(default_factory=dict)  # (direction, host_memory, async) -> Work
    memset: dict = field(default_factory=dict)  # async -> Work
    dropped: int = 0
    untimed: int = 0  # operations recorded without a time (CUPTI's)
    # The kernels a graph launch ran are in their kernels' rows, times
    # included (gputrace with CUPTI): the launches' spans are then not added.
    nodes_in_rows: bool = False

    def kernel_time(self):
        spans = 0 if self.nodes_in_rows else self.graph.gpu_ns
        return sum(w.gpu_ns for w in self.kernels.values()) + spans

    def kernel_timed(self):
        spans = 0 if self.nodes_in_rows else self.graph.timed
        return sum(w.timed for w in self.kernels.values()) + spans


def _sum(rows):
    total = Work()
    for w in rows:
        total.add(w)
    return total


def _add_row(table, key, work):
    table.setdefault(key, Work()).add(work)


def _ours_work(row):
    """A gputrace row: "timed" is how many of its calls carry a GPU time."""
    return Work(row["calls"], row.get("bytes", 0), row["gpu_ns"]["total"], row["timed"])


def from_ours(doc):
    """Totals from gputrace's JSON report (SPEC section 6)."""
    t = Totals(dropped=doc.get("totals", {}).get("dropped", 0),
               nodes_in_rows=any(r.get("graph_calls", 0) for r in doc.get("kernels", [])))
    for row in doc.get("kernels", []):
        if row["graph"]:
            t.graph.add(_ours_work(row))
        else:
            _add_row(t.kernels, row["name"], _ours_work(row))
    for row in doc.get("memcpy", []):
        key = (row["direction"], row["host_memory"], bool(row["async"]))
        _add_row(t.memcpy, key, _ours_work(row))
    for row in doc.get("memset", []):
        _add_row(t.memset, bool(row.get("async", False)), _ours_work(row))
    return t


def _cupti_work(row):
    return Work(row["calls"], row.get("bytes", 0), row["gpu_ns"],
                row["calls"] - row.get("graph_nodes", 0))


def _cupti_kernel_with_nodes(row):
    """A kernel row with its runs as graph nodes timed in it, as gputrace's rows are
    with CUPTI."""
    return Work(row["calls"], 0, row["gpu_ns"] + row.get("graph_gpu_ns", 0),
                row["calls"] - row.get("graph_nodes", 0) + row.get("graph_runs", 0))


def from_cupti(doc, nodes_in_rows=False):
    """Totals from the CUPTI reference's JSON (tests/gpu/cupti_ref.c); with
    nodes_in_rows, the kernels graphs ran are timed in their kernels' rows."""
    t = Totals(dropped=doc.get("dropped", 0), untimed=doc.get("untimed", 0),
               nodes_in_rows=nodes_in_rows)
    for row in doc.get("kernels", []):
        _add_row(t.kernels, row["name"],
                 _cupti_kernel_with_nodes(row) if nodes_in_rows else _cupti_work(row))
    graphs = doc.get("graphs", {})
    t.graph = Work(graphs.get("launches", 0), 0, graphs.get("gpu_ns", 0), graphs.get("launches", 0))
    for row in doc.get("memcpy", []):
        key = (row["direction"], row["host_memory"], bool(row.get("async", False)))
        _add_row(t.memcpy, key, _cupti_work(row))
    for row in doc.get("memset", []):
        _add_row(t.memset, bool(row.get("async", False)), _cupti_work(row))
    return t


@dataclass
class TimeCheck:
    ours: int
    cupti: int
    timed: int  # operations CUPTI timed
    tolerance_ns: int  # tolerance x CUPTI's total
    floor_ns: int  # floor x timed operations
    lower_bound_only: bool = False  # streams overlap: ours may include waits (--overlap)

    @property
    def limit(self):
        return max(self.tolerance_ns, self.floor_ns)

    @property
    def ok(self):
        if self.lower_bound_only:
            return self.cupti - self.ours <= self.limit
        return abs(self.ours - self.cupti) <= self.limit

    @property
    def needs_overlap(self):
        """Passes only because the excess may be waiting for other streams' work."""
        return self.ok and self.ours - self.cupti > self.limit

    @property
    def needs_floor(self):
        """Passes only thanks to the per-operation floor."""
        return self.ok and self.tolerance_ns < abs(self.ours - self.cupti) <= self.limit

    @property
    def rule(self):
        return "tolerance" if self.tolerance_ns >= self.floor_ns else "floor"

    def per_operation(self):
        """The difference per timed operation, in ns."""
        return (self.ours - self.cupti) / self.timed if self.timed else 0.0


def check_time(ours, cupti, timed, tolerance, floor_ns, overlap=False):
    return TimeCheck(ours, cupti, timed, int(tolerance * cupti), int(floor_ns * timed), overlap)


@dataclass
class Comparison:
    program: str
    names_matched: int
    names_total: int
    launches: tuple  # (ours, CUPTI)
    graphs: tuple
    copies: tuple  # Work, Work
    memsets: tuple
    kernel_time: TimeCheck
    copy_time: TimeCheck  # copies other than of pageable or managed memory
    staged_time: TimeCheck  # copies of pageable or managed memory: lower bound only
    copies_same_run: bool  # copy times come from one run with both tracers
    copy_ns: tuple  # (ours, CUPTI): the copy times checked, staged and not
    memset_time: TimeCheck
    failures: list
    notes: list

    @property
    def ok(self):
        return not self.failures

    def times(self):
        return (self.kernel_time, self.copy_time, self.staged_time, self.memset_time)

    @property
    def by_overlap(self):
        """A time passed only because the program's streams overlap."""
        return any(c.needs_overlap for c in self.times() if c is not self.staged_time)

    @property
    def by_staging(self):
        """Pageable copies passed only because the driver's staging is not CUPTI's time."""
        return self.staged_time.needs_overlap

    @property
    def by_floor(self):
        """A time passed only thanks to the per-operation floor."""
        return any(c.needs_floor for c in self.times())


def _staged(key):
    """A copy row's key names pageable or managed memory: the driver's work, not only
    the copy engine's, is in the copy."""
    return key[1] in ("pageable", "managed")


def has_copies(totals):
    return any(work.calls for work in totals.memcpy.values())


def _key_name(key):
    if isinstance(key, tuple):
        direction, memory, is_async = key
        return f"{direction}/{memory}/{'async' if is_async else 'sync'}"
    return "async" if key else "sync"


def _row_notes(what, ours, cupti):
    """Rows whose calls or bytes differ between the two tables."""
    notes = []
    for key in sorted(set(ours) | set(cupti), key=_key_name):
        o, c = ours.get(key, Work()), cupti.get(key, Work())
        if (o.calls, o.bytes) != (c.calls, c.bytes):
            notes.append(f"{what} {_key_name(key)}: ours {o.calls} calls {o.bytes} B, "
                         f"CUPTI {c.calls} calls {c.bytes} B")
    return notes


def _check_equal(failures, what, ours, cupti):
    if ours != cupti:
        failures.append(f"{what} differ: ours {ours}, CUPTI {cupti}")


def compare(program, ours, cupti, tolerance=DEFAULT_TOLERANCE, floor_ns=DEFAULT_FLOOR_NS,
            overlap=False, same_run=None):
    """Compares two Totals; every failure and note is a line of text. overlap: the
    program's streams run work side by side (see --overlap). same_run: (ours, CUPTI)
    Totals of one run with both tracers, for the copy times."""
    failures, notes = [], []
    if ours.dropped or cupti.dropped:
        failures.append(f"records dropped: ours {ours.dropped}, CUPTI {cupti.dropped}")
    if cupti.untimed:
        failures.append(f"CUPTI left {cupti.untimed} operations untimed: its GPU times miss "
                        f"theirs")

    names_ours, names_cupti = set(ours.kernels), set(cupti.kernels)
    for name in sorted(names_cupti - names_ours):
        failures.append(f"kernel missing from ours: {name} ({cupti.kernels[name].calls} calls)")
    for name in sorted(names_ours - names_cupti):
        failures.append(f"kernel missing from CUPTI: {name} ({ours.kernels[name].calls} calls)")
    for name in sorted(names_ours & names_cupti):
        o, c = ours.kernels[name].calls, cupti.kernels[name].calls
        if o != c:
            failures.append(f"launches of {name} differ: ours {o}, CUPTI {c}")
    launches = (sum(w.calls for w in ours.kernels.values()),
                sum(w.calls for w in cupti.kernels.values()))
    _check_equal(failures, "launch totals", *launches)
    graphs = (ours.graph.calls, cupti.graph.calls)
    _check_equal(failures, "graph launches", *graphs)

    copies = (_sum(ours.memcpy.values()), _sum(cupti.memcpy.values()))
    memsets = (_sum(ours.memset.values()), _sum(cupti.memset.values()))
    for what, (o, c) in (("copy", copies), ("memset", memsets)):
        _check_equal(failures, f"{what} calls", o.calls, c.calls)
        _check_equal(failures, f"{what} bytes", o.bytes, c.bytes)
    notes += _row_notes("copy", ours.memcpy, cupti.memcpy)
    notes += _row_notes("memset", ours.memset, cupti.memset)

    kernel_time = check_time(ours.kernel_time(), cupti.kernel_time(), cupti.kernel_timed(),
                             tolerance, floor_ns, overlap)
    copy_ours, copy_cupti = same_run or (ours, cupti)
    direct = (_sum(w for k, w in copy_ours.memcpy.items() if not _staged(k)),
              _sum(w for k, w in copy_cupti.memcpy.items() if not _staged(k)))
    copy_time = check_time(direct[0].gpu_ns, direct[1].gpu_ns, direct[1].timed, tolerance,
                           floor_ns, overlap)
    staged_pair = (_sum(w for k, w in copy_ours.memcpy.items() if _staged(k)),
                   _sum(w for k, w in copy_cupti.memcpy.items() if _staged(k)))
    staged_time = check_time(staged_pair[0].gpu_ns, staged_pair[1].gpu_ns, staged_pair[1].timed,
                             tolerance if same_run else PAGEABLE_TOLERANCE, floor_ns, True)
    memset_time = check_time(memsets[0].gpu_ns, memsets[1].gpu_ns, memsets[1].timed, tolerance,
                             floor_ns, overlap)
    in_run = " (one run, both tracers)" if same_run else ""
    for what, check, ours_timed in (("kernel", kernel_time, ours.kernel_timed()),
                                    (f"copy{in_run}", copy_time, direct[0].timed),
                                    (f"staged copy{in_run}", staged_time, staged_pair[0].timed),
                                    ("memset", memset_time, memsets[0].timed)):
        if not check.ok:
            bound = "below CUPTI's " if check.lower_bound_only else ""
            failures.append(f"{what} GPU time differs: ours {check.ours} ns, CUPTI {check.cupti} "
                            f"ns, allowed {bound}{check.limit} ns ({check.rule}); "
                            f"{check.per_operation():+.0f} ns per timed operation")
        elif check is staged_time and check.needs_overlap:
            notes.append(f"{what} GPU time {check.per_operation():+.0f} ns per timed operation "
                         f"over CUPTI's: the driver's staging before the transfer")
        elif check.needs_overlap:
            notes.append(f"{what} GPU time {check.per_operation():+.0f} ns per timed operation "
                         f"over CUPTI's: waits behind other streams' work")
        elif check.needs_floor:
            notes.append(f"{what} GPU time {check.per_operation():+.0f} ns per timed operation "
                         f"against CUPTI's: within the floor")
        if ours_timed != check.timed:
            notes.append(f"{what}: ours timed about {ours_timed} operations, CUPTI "
                         f"{check.timed}")
    return Comparison(program, len(names_ours & names_cupti), len(names_ours | names_cupti),
                      launches, graphs, copies, memsets, kernel_time, copy_time, staged_time,
                      same_run is not None,
                      (direct[0].gpu_ns + staged_pair[0].gpu_ns,
                       direct[1].gpu_ns + staged_pair[1].gpu_ns), memset_time, failures, notes)


def load(path, convert):
    with open(path) as f:
        return convert(json.load(f))


def main():
    import table  # beside this file

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--program", default="program")
    parser.add_argument("--tolerance", type=float, default=DEFAULT_TOLERANCE)
    parser.add_argument("--floor-us", type=float, default=DEFAULT_FLOOR_NS / 1000)
    parser.add_argument("--overlap", action="store_true")
    parser.add_argument("--same-run-ours", help="gputrace's report of a run with both tracers")
    parser.add_argument("--same-run-cupti", help="CUPTI's report of that run")
    parser.add_argument("ours")
    parser.add_argument("cupti")
    args = parser.parse_args()
    try:
        ours = load(args.ours, from_ours)
        cupti = load(args.cupti, lambda doc: from_cupti(doc, ours.nodes_in_rows))
        same_run = None
        if args.same_run_ours or args.same_run_cupti:
            same_run = (load(args.same_run_ours, from_ours),
                        load(args.same_run_cupti, from_cupti))
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"compare.py: cannot read the reports: {e!r}", file=sys.stderr)
        return 2
    result = compare(args.program, ours, cupti, args.tolerance, args.floor_us * 1000,
                     args.overlap, same_run)
    row = table.ProgramRow(args.program, comparison=result)
    for line in table.program_lines([row]):
        print(line)
    return 0 if row.ok else 1


if __name__ == "__main__":
    sys.exit(main())
