"""Reads a .pftrace with Perfetto's own definitions (perfetto_trace_pb2) the
way Perfetto's trace processor reads it, as its .proto files document:

  - bundles (compressed_packets): a packet holding only a zlib stream of
    Trace bytes, whose packets are read in its place; they do not nest;
  - packet sequences (trusted_packet_sequence_id): a sequence's first
    packet must clear its incremental state (SEQ_INCREMENTAL_STATE_CLEARED);
    its interned data (event names, categories, debug annotation names and
    strings) and defaults (TracePacketDefaults: clock, track) hold for the
    packets after it on that sequence; an interned entry given again must
    be the same;
  - clocks: a ClockSnapshot relates a sequence-scoped clock (64-127) to a
    builtin one; an incremental clock's timestamps are deltas from the
    previous timestamp on that clock and sequence; the snapshot's
    primary_trace_clock is the trace's clock (CLOCK_MONOTONIC here);
  - tracks (TrackDescriptor): uuid, parent, name, process, thread, counter;
  - events (TrackEvent), sorted by time per track (ties in file order, as
    the trace processor's sorter): BEGIN opens a slice, END closes the
    innermost open one, INSTANT, COUNTER on counter tracks only; flows
    from flow_ids to terminating_flow_ids.

Whatever breaks one of those rules is a problem (Trace.problems). The
result is also given in the Chrome trace's own terms (Trace.events:
"X" slices, "i" instants, "b"/"e" start/end ranges, "C" counters, "M"
names, with flows as bind_id/flow_out/flow_in, ts and dur in us), so that
the Chrome trace's checks (check_trace.py, report_chrome_check.py) assert
the same things of both formats. Tids there: a thread track's tid (a
domain track counts as its thread's); GPU tracks, one synthetic tid per
(parent, name) as the UI merges lanes of one name, from GPU_TID_BASE.
"""
import zlib

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

GPU_TID_BASE = 1 << 22
MONOTONIC = pb.BUILTIN_CLOCK_MONOTONIC
CLEARED = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
BEGIN, END = pb.TrackEvent.TYPE_SLICE_BEGIN, pb.TrackEvent.TYPE_SLICE_END
INSTANT, COUNTER = pb.TrackEvent.TYPE_INSTANT, pb.TrackEvent.TYPE_COUNTER
RANGES_TRACK = "NVTX start/end ranges"


class Sequence:
    def __init__(self):
        self.interned = {}  # (table, iid) -> value
        self.clock = None   # TracePacketDefaults.timestamp_clock_id
        self.track = None   # TrackEventDefaults.track_uuid
        self.clocks = {}    # sequence clock id -> [last value, offset to the trace clock]


class Trace:
    def __init__(self, data):
        self.problems = []
        self.tracks = {}    # uuid -> {"uuid", "parent", "name", "pid", "tid", "process", "thread", "counter"}
        self.raw = []       # (uuid, ts, file order, TrackEvent, interned lookup results)
        self.slices = []    # {"track", "ts", "end", "name", "cat", "args", "flows_out", "flows_in", "depth"}
        self.instants = []
        self.counters = {}  # uuid -> [(ts, value)]
        self.packets = 0
        self.bundles = 0
        trace = pb.Trace()
        try:
            trace.ParseFromString(data)
        except Exception as e:  # the decoder's own error: the file is not a Trace
            self.problem(f"not a Trace: {e}")
            return
        self.sequences = {}
        for order, packet in enumerate(self.unbundled(trace)):
            self.packets += 1
            self.read_packet(order, packet)
        self.replay()
        self.check_tracks()
        self.check_flows()

    def unbundled(self, trace):
        """The packets in file order, a bundle's in its place."""
        for packet in trace.packet:
            if not packet.HasField("compressed_packets"):
                yield packet
                continue
            self.bundles += 1
            if len(packet.ListFields()) != 1:
                self.problem(f"bundle {self.bundles}: fields beside compressed_packets")
            inner = pb.Trace()
            try:
                inner.ParseFromString(zlib.decompress(packet.compressed_packets))
            except Exception as e:  # zlib's or the decoder's own error
                self.problem(f"bundle {self.bundles}: {e}")
                continue
            for p in inner.packet:
                if p.HasField("compressed_packets"):
                    self.problem(f"bundle {self.bundles}: a bundle inside")
                    continue
                yield p

    def problem(self, what):
        if len(self.problems) < 50:
            self.problems.append(what)

    # --- packets ---------------------------------------------------------

    def read_packet(self, order, packet):
        seq = None
        if packet.HasField("trusted_packet_sequence_id"):
            sid = packet.trusted_packet_sequence_id
            if packet.sequence_flags & CLEARED:
                self.sequences[sid] = Sequence()
            seq = self.sequences.get(sid)
            if seq is None:
                self.problem(f"packet {order}: sequence {sid} used before its state was cleared")
                return
        if packet.HasField("trace_packet_defaults"):
            d = packet.trace_packet_defaults
            if seq is None:
                self.problem(f"packet {order}: defaults outside a sequence")
            else:
                seq.clock = d.timestamp_clock_id if d.HasField("timestamp_clock_id") else None
                seq.track = (d.track_event_defaults.track_uuid
                             if d.track_event_defaults.HasField("track_uuid") else None)
        if packet.HasField("interned_data"):
            self.intern(order, seq, packet.interned_data)
        if packet.HasField("clock_snapshot"):
            self.snapshot(order, seq, packet.clock_snapshot)
            return  # the reader takes nothing else from a snapshot's packet
        if packet.HasField("track_descriptor"):
            self.descriptor(packet.track_descriptor)
        if packet.HasField("track_event"):
            if seq is None:
                self.problem(f"packet {order}: an event outside a sequence")
                return
            ts = self.time(order, seq, packet)
            if ts is not None:
                self.event(order, seq, ts, packet.track_event)

    def intern(self, order, seq, data):
        if seq is None:
            self.problem(f"packet {order}: interned data outside a sequence")
            return
        tables = [("category", data.event_categories, "name"), ("name", data.event_names, "name"),
                  ("arg", data.debug_annotation_names, "name"),
                  ("string", data.debug_annotation_string_values, "str")]
        for table, entries, field in tables:
            for e in entries:
                value = getattr(e, field)
                if isinstance(value, bytes):
                    value = value.decode("utf-8", errors="replace")
                old = seq.interned.setdefault((table, e.iid), value)
                if old != value:
                    self.problem(f"packet {order}: {table} {e.iid} interned as {old!r}, then {value!r}")

    def snapshot(self, order, seq, snap):
        if snap.primary_trace_clock != MONOTONIC:
            self.problem(f"packet {order}: primary trace clock {snap.primary_trace_clock}")
        builtin = {c.clock_id: c.timestamp for c in snap.clocks if c.clock_id < 64}
        for c in snap.clocks:
            if c.clock_id < 64:
                continue
            if seq is None or MONOTONIC not in builtin:
                self.problem(f"packet {order}: clock {c.clock_id} related to no builtin clock")
                continue
            offset = builtin[MONOTONIC] - c.timestamp
            seq.clocks[c.clock_id] = [c.timestamp, offset, c.is_incremental]

    def time(self, order, seq, packet):
        if not packet.HasField("timestamp"):
            self.problem(f"packet {order}: an event without a timestamp")
            return None
        clock = packet.timestamp_clock_id if packet.HasField("timestamp_clock_id") else seq.clock
        if clock == MONOTONIC:
            return packet.timestamp
        if clock is None or clock not in seq.clocks:
            self.problem(f"packet {order}: timestamp on clock {clock}, which has no snapshot")
            return None
        state = seq.clocks[clock]
        value = state[0] + packet.timestamp if state[2] else packet.timestamp
        if value >= 1 << 63:
            value -= 1 << 64  # the reader adds deltas as int64
        state[0] = value
        return value + state[1]

    def descriptor(self, d):
        t = self.tracks.setdefault(d.uuid, {"uuid": d.uuid, "parent": None, "name": None,
                                            "pid": None, "tid": None, "process": False,
                                            "thread": False, "counter": None})
        if d.HasField("parent_uuid"):
            t["parent"] = d.parent_uuid
        if d.HasField("name"):
            t["name"] = d.name
        if d.HasField("process"):
            t["process"] = True
            t["pid"] = d.process.pid
            if d.process.HasField("process_name"):
                t["name"] = d.process.process_name
        if d.HasField("thread"):
            t["thread"] = True
            t["pid"], t["tid"] = d.thread.pid, d.thread.tid
            if d.thread.HasField("thread_name"):
                t["name"] = d.thread.thread_name
        if d.HasField("counter"):
            t["counter"] = d.counter.unit

    def lookup(self, order, seq, table, iid):
        value = seq.interned.get((table, iid))
        if value is None:
            self.problem(f"packet {order}: {table} iid {iid} not interned on its sequence")
            return ""
        return value

    def event(self, order, seq, ts, te):
        uuid = te.track_uuid if te.HasField("track_uuid") else seq.track
        if uuid is None:
            self.problem(f"packet {order}: an event on no track")
            return
        e = {"type": te.type, "ts": ts, "order": order, "track": uuid}
        if te.HasField("name_iid"):
            e["name"] = self.lookup(order, seq, "name", te.name_iid)
        elif te.HasField("name"):
            e["name"] = te.name
        e["cat"] = ",".join(self.lookup(order, seq, "category", i) for i in te.category_iids)
        args = {}
        for a in te.debug_annotations:
            key = self.lookup(order, seq, "arg", a.name_iid) if a.HasField("name_iid") else a.name
            if a.HasField("uint_value"):
                args[key] = a.uint_value
            elif a.HasField("int_value"):
                args[key] = a.int_value
            elif a.HasField("string_value_iid"):
                args[key] = self.lookup(order, seq, "string", a.string_value_iid)
            elif a.HasField("string_value"):
                args[key] = a.string_value
            else:
                self.problem(f"packet {order}: annotation {key!r} of a kind not written here")
        e["args"] = args
        e["flows_out"] = list(te.flow_ids)
        e["flows_in"] = list(te.terminating_flow_ids)
        if te.HasField("counter_value"):
            e["counter"] = te.counter_value
        self.raw.append(e)

    # --- tracks and slices -------------------------------------------------

    def replay(self):
        by_track = {}
        for e in self.raw:
            by_track.setdefault(e["track"], []).append(e)
        for uuid, events in by_track.items():
            track = self.tracks.get(uuid)
            if track is None:
                self.problem(f"events on track {uuid}, which has no descriptor")
                continue
            events.sort(key=lambda e: (e["ts"], e["order"]))
            stack = []
            for e in events:
                if (e["type"] == COUNTER) != (track["counter"] is not None):
                    self.problem(f"event type {e['type']} on track {track['name']!r}")
                    continue
                if e["type"] == BEGIN:
                    s = dict(e, end=None, depth=len(stack))
                    stack.append(s)
                    self.slices.append(s)
                elif e["type"] == END:
                    if not stack:
                        self.problem(f"{track['name']!r}: an END at {e['ts']} with no slice open")
                        continue
                    s = stack.pop()
                    s["end"], s["end_order"] = e["ts"], e["order"]
                elif e["type"] == INSTANT:
                    self.instants.append(dict(e, depth=len(stack)))
                else:
                    self.counters.setdefault(uuid, []).append((e["ts"], e["counter"], e["order"]))
            for s in stack:
                self.problem(f"{track['name']!r}: slice {s.get('name')!r} at {s['ts']} never ends")
                s["end"], s["end_order"] = s["ts"], s["order"]

    def check_tracks(self):
        processes = [t for t in self.tracks.values() if t["process"]]
        if len(processes) != 1:
            self.problem(f"{len(processes)} process tracks")
            return
        self.process = processes[0]
        for t in self.tracks.values():
            if t["thread"] and t["pid"] != self.process["pid"]:
                self.problem(f"thread {t['tid']} in pid {t['pid']}")
            if t["counter"] is not None and t["counter"] != pb.CounterDescriptor.UNIT_SIZE_BYTES:
                self.problem(f"counter {t['name']!r} of unit {t['counter']}")
            if not t["process"] and t["parent"] not in self.tracks:
                self.problem(f"track {t['name']!r} has no parent track")

    def check_flows(self):
        outs, ins = {}, {}
        for s in self.slices:
            for f in s["flows_out"]:
                outs[f] = outs.get(f, 0) + 1
            for f in s["flows_in"]:
                ins[f] = ins.get(f, 0) + 1
        if any(n != 1 for n in list(outs.values()) + list(ins.values())):
            self.problem("a flow id starts or ends more than once")

    # --- the Chrome trace's terms -------------------------------------------

    def parent(self, t):
        return self.tracks.get(t["parent"]) if t["parent"] is not None else None

    def gpu_group(self, t):
        """The "GPU d" track a stream's lane hangs under, or None."""
        p = self.parent(t)
        return p if p and not p["process"] and not p["thread"] and p["name"] and \
            p["name"].startswith("GPU ") and self.parent(p) is self.process else None

    def thread_of(self, t):
        """A thread track, or the thread a domain track belongs to."""
        if t["thread"]:
            return t
        p = self.parent(t)
        return p if p and p["thread"] else None

    @property
    def events(self):
        pid = self.process["pid"] if hasattr(self, "process") else 0
        out, gpu_tids = [], {}

        def tid_of(t):
            th = self.thread_of(t)
            if th:
                return th["tid"]
            if self.gpu_group(t):
                key = (t["parent"], t["name"])
                return gpu_tids.setdefault(key, GPU_TID_BASE + len(gpu_tids))
            return pid

        def us(ns):
            return ns / 1000

        def with_args(e, args):
            if args:
                e["args"] = args
            return e

        ranges = 0
        for s in self.slices:
            t = self.tracks[s["track"]]
            e = with_args({"cat": s["cat"], "name": s.get("name", ""), "pid": pid,
                           "tid": tid_of(t), "ts": us(s["ts"]), "order": s["order"]}, s["args"])
            if t["name"] == RANGES_TRACK and self.parent(t) is self.process:
                ranges += 1
                out.append(dict(e, ph="b", id=hex(ranges)))
                out.append(dict(e, ph="e", id=hex(ranges), ts=us(s["end"]), order=s["end_order"]))
                continue
            e.update(ph="X", dur=us(s["end"] - s["ts"]))
            for f in s["flows_out"]:
                e.update(bind_id=f, flow_out=True)
            for f in s["flows_in"]:
                e.update(bind_id=f, flow_in=True)
            out.append(e)
        for i in self.instants:
            out.append(with_args({"ph": "i", "cat": i["cat"], "name": i.get("name", ""),
                                  "pid": pid, "tid": tid_of(self.tracks[i["track"]]),
                                  "ts": us(i["ts"]), "s": "t", "order": i["order"]}, i["args"]))
        for uuid, values in self.counters.items():
            for ts, v, order in values:
                out.append({"ph": "C", "cat": "memory", "name": self.tracks[uuid]["name"],
                            "pid": pid, "tid": pid, "ts": us(ts), "args": {"bytes": v},
                            "order": order})
        # in the order the events were written, which is the records' (a
        # slice where its BEGIN stands), as the Chrome trace's
        out.sort(key=lambda e: e.pop("order"))
        meta = [{"ph": "M", "cat": "__metadata", "name": "process_name", "pid": pid, "tid": pid,
                 "ts": 0, "args": {"name": self.process["name"] if hasattr(self, "process") else None}}]
        for t in self.tracks.values():
            if t["thread"] and t["name"] is not None:
                meta.append({"ph": "M", "cat": "__metadata", "name": "thread_name", "pid": pid,
                             "tid": t["tid"], "ts": 0, "args": {"name": t["name"]}})
        for (parent, name), tid in gpu_tids.items():
            meta.append({"ph": "M", "cat": "__metadata", "name": "thread_name", "pid": pid,
                         "tid": tid, "ts": 0, "args": {"name": name}})
        return out + meta


def load(path):
    with open(path, "rb") as f:
        return Trace(f.read())
