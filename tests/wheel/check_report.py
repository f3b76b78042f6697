"""Run by the wheel's venv: loads a report of numba_prog.py with the installed
gputrace module into DataFrames and checks its rows and values against what
the program did (its facts file) and the emulator's configured durations.

usage: check_report.py REPORT_JSON FACTS_JSON VERSION KERNEL_NS GBPS_JSON
Prints one line per problem; exit status 1 when there is any."""
import json
import os
import sys

import gputrace
import pandas as pd

TOLERANCE = 0.01  # of a configured duration, as the other report checks


class Checks:
    def __init__(self):
        self.errors = []

    def expect(self, cond, what):
        if not cond:
            self.errors.append(what)
        return bool(cond)

    def close(self, actual, expected, calls, what):
        """Within 1% of the configured figure, or 1 ns per call (the emulator
        rounds each transfer to whole ns)."""
        slack = max(TOLERANCE * expected, float(calls))
        self.expect(abs(actual - expected) <= slack,
                    f"{what}: {actual} ns, expected {expected:.0f} ns (+-{slack:.0f})")


def check_module(c, venv):
    c.expect(os.path.realpath(gputrace.__file__).startswith(venv + os.sep),
             f"gputrace imported from {gputrace.__file__}, not from the venv {venv}")
    c.expect(not os.environ.get("PYTHONPATH"), "PYTHONPATH is set")


def check_sections(c, r, version):
    c.expect(isinstance(r, gputrace.Report), f"load() gave {type(r)}")
    raw = r.data
    for key in raw:
        c.expect(getattr(r, key) is raw[key] and r[key] is raw[key], f"section {key}: not the JSON's")
    c.expect(list(r) == list(raw), "iteration differs from the JSON's keys")
    c.expect(r.version == version, f"report version {r.version}, project {version}")
    c.expect(r.tool == "gputrace" and r.schema == 1, f"tool {r.tool} schema {r.schema}")
    c.expect(r.totals["dropped"] == 0, f"dropped {r.totals['dropped']}")
    c.expect(r.process["command"].split()[0] == "python", f"command {r.process['command']}")


def check_kernels(c, r, facts, kernel_ns):
    k = r.kernels_df()
    c.expect(isinstance(k, pd.DataFrame), "kernels_df() is no DataFrame")
    mine = k[k["name"].str.contains(facts["kernel"], regex=False)]
    if not c.expect(len(k) == 1 and len(mine) == 1, f"kernel rows: {list(k['name'])}"):
        return
    row = mine.iloc[0]
    n = facts["launches"]
    c.expect(row["calls"] == n and row["timed"] == n, f"kernel calls {row['calls']}, timed {row['timed']}")
    c.close(row["gpu_ns_total"], n * kernel_ns, n, "kernel gpu_ns_total")
    for stat in ("avg", "med", "min", "max", "first"):
        c.close(row[f"gpu_ns_{stat}"], kernel_ns, 1, f"kernel gpu_ns_{stat}")
    c.expect(row["gpu_ns_stddev"] <= TOLERANCE * kernel_ns, f"kernel stddev {row['gpu_ns_stddev']}")
    c.expect(row["api_ns_total"] > 0, "kernel api_ns_total 0")
    c.expect(str(k["calls"].dtype).startswith("int"), f"calls dtype {k['calls'].dtype}")
    c.expect(k.columns[0] == "display_name", f"kernels_df() columns begin {list(k.columns[:3])}")
    c.expect(k.to_dict("records") == r.rows("kernels"), "kernels_df() and rows() differ")
    # A key only some rows have (graph runs: CUPTI's) keeps its integers.
    data = json.loads(json.dumps(r.data))
    lacking = {key: value for key, value in data["kernels"][0].items() if key != "graph_calls"}
    data["kernels"] = [dict(data["kernels"][0], graph_calls=3), lacking]
    g = gputrace.Report(data).kernels_df()["graph_calls"]
    c.expect(str(g.dtype) == "Int64" and g[0] == 3 and g.isna()[1],
             f"graph_calls of one row in two: {g.dtype} {list(g)}")


def check_transfers(c, r, facts, gbps):
    m = r.memcpy_df()
    got = {(row.direction, row.host_memory, bool(row["async"])): row for _, row in m.iterrows()}
    want = {(x["direction"], x["host_memory"], x["async"]): x for x in facts["copies"]}
    if not c.expect(set(got) == set(want), f"memcpy rows {sorted(got)}, expected {sorted(want)}"):
        return
    for key, x in want.items():
        row = got[key]
        c.expect(row["calls"] == x["calls"] and row["bytes"] == x["bytes"],
                 f"memcpy {key}: {row['calls']} calls {row['bytes']} bytes, expected {x}")
        rate = gbps[x["host_memory"]]
        c.close(row["gpu_ns_total"], x["bytes"] / rate, x["calls"], f"memcpy {key} gpu_ns_total")
        c.expect(abs(row["gbps"] - rate) <= TOLERANCE * rate, f"memcpy {key}: {row['gbps']} GB/s")
    s = r.memset_df()
    if c.expect(len(s) == 1, f"memset rows: {len(s)}"):
        row = s.iloc[0]
        c.expect(row["calls"] == 1 and row["bytes"] == facts["memset_bytes"],
                 f"memset {row['calls']} calls {row['bytes']} bytes")
        c.close(row["gpu_ns_total"], facts["memset_bytes"] / gbps["memset"], 1, "memset gpu_ns_total")


def check_other_tables(c, r, facts):
    mem = r.memory_df().set_index("device")
    if c.expect(0 in mem.index, f"memory devices {list(mem.index)}"):
        gpu = mem.loc[0]
        c.expect(gpu["allocs"] == facts["device_allocs"] and gpu["peak_bytes"] == facts["device_bytes"],
                 f"device 0: {gpu['allocs']} allocations, peak {gpu['peak_bytes']}")
    comp = r.compile_df()
    nvvm = comp[comp["api"] == "nvvmCompileProgram"]
    c.expect(len(nvvm) >= 1 and bool(nvvm["ok"].all()) and (nvvm["wall_ns_total"] > 0).all(),
             f"compile rows: {comp[['api', 'name', 'ok']].to_dict('records')}")
    api = r.api_df().set_index("name")
    c.expect(isinstance(api["errors"].iloc[0], dict), "api errors is not a dict column")
    c.expect(api["calls"].sum() >= facts["launches"] and (api["wall_ns_total"] >= 0).all(), "api rows")
    for table in ("sync", "module", "advice", "nvtx", "nvtx_marks"):
        c.expect(isinstance(r.df(table), pd.DataFrame), f"{table} is no DataFrame")
    c.expect(r.nvtx_df().empty and "gpu_ns_total" in r.nvtx_df().columns,
             f"nvtx: {r.nvtx_df().columns.tolist()}")


def main(report_path, facts_path, version, kernel_ns, gbps_json):
    with open(facts_path, encoding="utf-8") as f:
        facts = json.load(f)
    c = Checks()
    check_module(c, os.path.realpath(sys.prefix))
    r = gputrace.load(report_path)
    check_sections(c, r, version)
    check_kernels(c, r, facts, int(kernel_ns))
    check_transfers(c, r, facts, json.loads(gbps_json))
    check_other_tables(c, r, facts)
    for e in c.errors:
        print(f"check_report: {e}")
    return 1 if c.errors else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
