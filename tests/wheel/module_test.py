#!/usr/bin/env python3
"""The gputrace Python module from the source tree (PYTHONPATH=python), with
the standard library only: sections by key and attribute, keys it does not
know, flat rows, tables a report lacks, what is not a report, DataFrames
asked for without pandas, and python -m gputrace running the command it
finds. (The wheel test reads a real report into DataFrames.)"""
import copy
import io
import json
import os
import pathlib
import stat
import subprocess
import sys
import tempfile
import unittest

import gputrace


def stats(total, calls):
    avg = total // calls
    return {"total": total, "avg": avg, "med": avg, "min": avg, "max": avg, "stddev": 0,
            "first": avg, "rest_avg": avg if calls > 1 else 0}


REPORT = {
    "tool": "gputrace", "schema": 1, "version": "9.8.7",
    "process": {"pid": 7, "ppid": 1, "hostname": "h", "command": "python t.py", "start_ns": 10,
                "end_ns": 110, "wall_ns": 100},
    "config": {"verbosity": "default", "categories": ["kernel"], "gpu_timing": "events"},
    "totals": {"events": 5, "dropped": 0, "gpu_busy_ns": 60},
    "kernels": [{"name": "k2", "calls": 2, "gpu_ns": stats(40, 2), "api_ns_total": 9},
                {"name": "k1", "calls": 1, "gpu_ns": stats(20, 1), "api_ns_total": 3,
                 "display_name": "k one"}],
    "memcpy": [], "memset": [],
    "memory": {"devices": [{"device": 0, "allocs": 1, "frees": 1, "peak_bytes": 64,
                            "current_bytes": 0, "leaked_allocs": 0}]},
    "compile": [], "module": [], "sync": [], "nvtx": [],
    "api": [{"name": "cuLaunchKernel", "calls": 3, "wall_ns": stats(30, 3),
             "errors": {"CUDA_ERROR_INVALID_VALUE": 1}}],
    "advice": [{"rule": "leak", "count": 1, "message": "m"}],
    # A section and a table a later version might add.
    "snapshot": {"at_ns": 5, "final": True, "signal": None},
    "streams": [{"stream": 3, "busy": {"ns": 8, "share": {"of_wall": 0.08}}}],
}


class ReportTest(unittest.TestCase):
    def setUp(self):
        self.r = gputrace.Report(copy.deepcopy(REPORT), "t.json")

    def test_every_section_by_key_and_attribute(self):
        self.assertEqual(list(self.r), list(REPORT))
        self.assertEqual(len(self.r), len(REPORT))
        for key, value in REPORT.items():
            self.assertEqual(self.r[key], value)
            self.assertEqual(getattr(self.r, key), value)
        self.assertEqual(self.r.snapshot["final"], True)
        self.assertIn("streams", dir(self.r))
        self.assertIs(self.r.data["kernels"], self.r.kernels)
        with self.assertRaisesRegex(AttributeError, "no section 'capture'"):
            self.r.capture

    def test_tables(self):
        self.assertEqual(sorted(self.r.tables()),
                         sorted(["kernels", "memcpy", "memset", "compile", "module", "sync",
                                 "nvtx", "api", "advice", "streams", "memory"]))

    def test_rows_spread_nested_objects(self):
        k2, k1 = self.r.rows("kernels")
        self.assertEqual(k2["gpu_ns_total"], 40)
        self.assertEqual(k2["gpu_ns_avg"], 20)
        self.assertEqual(k1["gpu_ns_rest_avg"], 0)
        self.assertNotIn("gpu_ns", k2)
        self.assertEqual(k1["display_name"], "k one")
        self.assertEqual(self.r.rows("streams"),
                         [{"stream": 3, "busy_ns": 8, "busy_share_of_wall": 0.08}])
        self.assertEqual(self.r.rows("memory")[0]["peak_bytes"], 64)

    def test_error_counts_stay_one_column(self):
        (api,) = self.r.rows("api")
        self.assertEqual(api["errors"], {"CUDA_ERROR_INVALID_VALUE": 1})
        self.assertEqual(api["wall_ns_total"], 30)

    def test_rows_leave_the_report_as_loaded(self):
        self.r.rows("kernels")
        self.assertEqual(self.r.data, REPORT)

    def test_nvtx_numbers(self):
        data = copy.deepcopy(REPORT)
        data["nvtx"] = [{"domain": "", "name": "solve", "calls": 1, "wall_ns": stats(9, 1),
                         "gpu_ns_total": 4,
                         "payload": {"type": "uint64", "total": 8, "per_gpu_s": 2e9,
                                     "per_wall_s": 8e8, "count": 1},
                         "payload_fields": [{"name": "flops", "total": 2, "unit": "FLOP"}],
                         "memory": {"allocated_bytes": 1, "freed_bytes": 0, "peak_bytes": 5}}]
        data["memory"]["heaps"] = [{"domain": "", "name": "pool", "regions": 2}]
        data["nvtx_counters"] = [{"domain": "", "name": "depth", "count": 3, "last": 4}]
        r = gputrace.Report(data, "t.json")
        (solve,) = r.rows("nvtx")
        self.assertEqual(solve["payload_per_gpu_s"], 2e9)
        self.assertEqual(solve["memory_peak_bytes"], 5)
        self.assertEqual(solve["payload_fields"], [{"name": "flops", "total": 2, "unit": "FLOP"}])
        self.assertEqual(r.rows("heaps"), [{"domain": "", "name": "pool", "regions": 2}])
        self.assertEqual(r.rows("nvtx_counters")[0]["last"], 4)
        self.assertIn("heaps", r.tables())

    def test_checksums(self):
        data = copy.deepcopy(REPORT)
        data["checksums"] = {"mode": "dtoh", "hashed": 1, "unhashed": 1, "copies": [
            {"thread": 0, "index": 0, "bytes": 8, "hash": "00000000000000ff", "status": "hashed",
             "site": None},
            {"thread": 0, "index": 1, "bytes": 8, "hash": None, "status": "overwritten",
             "site": {"file": "t.py", "line": 3}}]}
        r = gputrace.Report(data, "t.json")
        self.assertIn("checksums", r.tables())
        first, second = r.rows("checksums")
        self.assertEqual(first["hash"], "00000000000000ff")
        self.assertEqual(second["status"], "overwritten")
        self.assertEqual(second["site_line"], 3)
        self.assertEqual(r.checksums["mode"], "dtoh")

    def test_tables_a_report_lacks(self):
        self.assertEqual(self.r.rows("nvtx_marks"), [])
        self.assertEqual(self.r.rows("heaps"), [])
        self.assertEqual(self.r.rows("nvtx_counters"), [])
        self.assertEqual(self.r.rows("checksums"), [])
        with self.assertRaisesRegex(KeyError, "no table 'process'"):
            self.r.rows("process")
        with self.assertRaisesRegex(KeyError, "no table 'nosuch'"):
            self.r.rows("nosuch")

    def test_not_a_report(self):
        for data in ({"tool": "nsys"}, [1, 2], {}):
            with self.assertRaisesRegex(ValueError, "not a gputrace report"):
                gputrace.Report(data, "x.json")

    def test_dataframes_without_pandas(self):
        saved = sys.modules.get("pandas")
        sys.modules["pandas"] = None  # import pandas now raises ImportError
        try:
            with self.assertRaisesRegex(ImportError, "need pandas"):
                self.r.kernels_df()
        finally:
            if saved is None:
                del sys.modules["pandas"]
            else:
                sys.modules["pandas"] = saved

    def test_load_a_path_or_a_file(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "run.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(REPORT, f)
            for source in (path, pathlib.Path(path)):
                r = gputrace.load(source)
                self.assertEqual(r.data, REPORT)
                self.assertEqual(r.path, path)
            self.assertEqual(gputrace.load(io.StringIO(json.dumps(REPORT))).kernels,
                             REPORT["kernels"])
            with open(path, "w", encoding="utf-8") as f:
                f.write('{"tool": "gputrace", "kernels": [')
            with self.assertRaisesRegex(ValueError, "run.json: not valid JSON \\(cut short\\?\\)"):
                gputrace.load(path)

    def test_what_it_is_when_no_report(self):
        """A CSV, a text summary, a trace or a diff is named, not a bare
        JSONDecodeError."""
        cases = [
            ("run.csv", b"category,name,calls,total_ns\r\nkernel,\"k\",1,5\r\n",
             "run.csv: a gputrace CSV report: load\\(\\) reads the JSON one.*pandas.read_csv"),
            ("run.txt", b"gputrace: prog | wall 1 ms\n", "run.txt: a gputrace text summary"),
            ("run.pftrace", b"\x0a\x83\x01\x92\xff\x00\x01", "run.pftrace: binary, not a JSON report"),
            ("run.trace.json", b'{"traceEvents": []}', "not a gputrace report \\(a Chrome trace"),
            ("d.json", b'{"tool": "gputrace", "kind": "diff", "rows": []}',
             "the output of gputrace diff"),
            ("n.json", b'{"tool": "nsys"}', "not a gputrace report \\(written by 'nsys'\\)"),
            ("e.txt", b"hello", "not JSON: load\\(\\) reads the JSON report"),
        ]
        with tempfile.TemporaryDirectory() as d:
            for name, data, message in cases:
                path = os.path.join(d, name)
                with open(path, "wb") as f:
                    f.write(data)
                with self.assertRaisesRegex(ValueError, message):
                    gputrace.load(path)
                with self.assertRaisesRegex(ValueError, message.replace(name, "data")
                                            if message.startswith(name) else message):
                    gputrace.load(io.BytesIO(data))


class MainTest(unittest.TestCase):
    """python -m gputrace without an installed wheel runs the gputrace on PATH."""

    def run_main(self, path, *args):
        """(process, its exit status, stdout, stderr)"""
        env = {"PATH": path, "PYTHONPATH": os.environ["PYTHONPATH"],
               "PYTHONDONTWRITEBYTECODE": "1"}
        p = subprocess.Popen([sys.executable, "-m", "gputrace", *args], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out, err = p.communicate(timeout=60)
        return p.pid, p.returncode, out, err

    def test_runs_the_command_in_its_place(self):
        with tempfile.TemporaryDirectory() as d:
            fake = os.path.join(d, "gputrace")
            with open(fake, "w") as f:
                f.write('#!/bin/sh\necho "$$ $*"\nexit 3\n')
            os.chmod(fake, stat.S_IRWXU)
            pid, status, out, err = self.run_main(d, "-v", "none", "--", "prog", "a b")
            self.assertEqual(status, 3, err)
            ran_as, args = out.strip().split(" ", 1)
            self.assertEqual(args, "-v none -- prog a b")
            self.assertEqual(int(ran_as), pid)  # the interpreter's process, not a child

    def test_no_command(self):
        with tempfile.TemporaryDirectory() as d:
            _, status, out, err = self.run_main(d, "--version")
        self.assertEqual(status, 2)
        self.assertEqual(out, "")
        self.assertIn("gputrace: the gputrace command is not installed", err)


if __name__ == "__main__":
    unittest.main()
