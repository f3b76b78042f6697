#!/usr/bin/env python3
"""The real-GPU kit's logic, without a GPU: the comparison of gputrace's report with the
CUPTI reference's (canned reports of one cu_streams run, altered one quantity at a
time), the Python workloads' plausibility checks, and scripts/gpu-check.sh's answer
where no NVIDIA driver is (with --skip-build: it checks this build, rebuilds nothing).

test_gpu_kit.py REPO BUILD_DIR"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

REPO, BUILD = (os.path.abspath(p) for p in sys.argv[1:3])
KIT = os.path.join(REPO, "scripts", "gpu_check")
CANNED = os.path.join(REPO, "tests", "gpu", "canned")
sys.path.insert(0, KIT)

import compare  # noqa: E402
import run  # noqa: E402
import runner  # noqa: E402
import workloads  # noqa: E402

BLOCK_SUM = "void apps::detail::block_sum<256>(float const*, float*, int)"


def canned(name):
    with open(os.path.join(CANNED, name)) as f:
        return json.load(f)


class Compare(unittest.TestCase):
    """compare.py as the check runs it: on the command line, exit status and output."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.ours = canned("ours_cu_streams.json")
        self.cupti = canned("cupti_cu_streams.json")

    def tearDown(self):
        self.tmp.cleanup()

    def run_compare(self, *options):
        paths = []
        for name, doc in (("ours.json", self.ours), ("cupti.json", self.cupti)):
            paths.append(os.path.join(self.tmp.name, name))
            with open(paths[-1], "w") as f:
                json.dump(doc, f)
        proc = subprocess.run([sys.executable, os.path.join(KIT, "compare.py"), "--program",
                               "cu_streams", *options, *paths], capture_output=True, text=True,
                              timeout=60)
        return proc.returncode, proc.stdout + proc.stderr

    def row(self, output):
        return next(line for line in output.splitlines() if line.startswith("cu_streams "))

    def cupti_kernel(self, name):
        return next(r for r in self.cupti["kernels"] if r["name"] == name)

    def test_equal_reports_pass(self):
        rc, out = self.run_compare()
        self.assertEqual(rc, 0, out)
        row = self.row(out)
        self.assertRegex(row, r" 4/4 +26/26 \+g2/2 +1\.40ms / 1\.36ms +\+2\.9% +16/16 +14\.03KiB =")
        # The canned run's two pageable copies took 1 and 2 ns: within the floor only.
        self.assertTrue(row.endswith(" ok (floor)"), row)
        self.assertIn("note cu_streams: staged copy GPU time +1 ns per timed operation against "
                      "CUPTI's: within the floor", out)
        self.assertNotIn("FAIL", out)

    def test_differing_launch_count_fails(self):
        self.cupti_kernel("touch(int*, int)")["calls"] += 1
        rc, out = self.run_compare()
        self.assertEqual(rc, 1, out)
        self.assertIn("FAIL cu_streams: launches of touch(int*, int) differ: ours 7, CUPTI 8", out)
        self.assertIn("FAIL cu_streams: launch totals differ: ours 26, CUPTI 27", out)
        self.assertTrue(self.row(out).endswith(" FAIL"))

    def test_kernel_time_beyond_tolerance_fails(self):
        for row in self.cupti["kernels"]:
            row["gpu_ns"] = int(row["gpu_ns"] * 0.8)
        rc, out = self.run_compare()
        self.assertEqual(rc, 1, out)
        self.assertIn("FAIL cu_streams: kernel GPU time differs: ours 1400002 ns, CUPTI 1127200 "
                      "ns, allowed 56360 ns (tolerance)", out)

    def test_floor_allows_a_fixed_cost_per_timed_operation(self):
        # ours 11% over CUPTI: beyond 5%, within 26 timed operations x 10 us.
        for row in self.cupti["kernels"]:
            row["gpu_ns"] = int(row["gpu_ns"] * 0.9)
        rc, out = self.run_compare()
        self.assertEqual(rc, 1, out)
        self.assertIn("allowed 62180 ns (tolerance)", out)
        rc, out = self.run_compare("--floor-us", "10")
        self.assertEqual(rc, 0, out)
        self.assertTrue(self.row(out).endswith(" ok (floor)"), out)
        self.assertIn("note cu_streams: kernel GPU time +6015 ns per timed operation against "
                      "CUPTI's: within the floor", out)

    def test_overlapping_streams_hold_only_the_lower_bound(self):
        for row in self.cupti["kernels"]:
            row["gpu_ns"] = int(row["gpu_ns"] * 0.7)
        self.assertEqual(self.run_compare()[0], 1)
        rc, out = self.run_compare("--overlap")
        self.assertEqual(rc, 0, out)
        self.assertTrue(self.row(out).endswith(" ok (overlap)"), out)
        self.assertRegex(out, r"note cu_streams: kernel GPU time \+\d+ ns per timed operation "
                              r"over CUPTI's: waits behind other streams' work")
        # Shorter than the work: wrong whatever the streams do.
        self.cupti = canned("cupti_cu_streams.json")
        for row in self.ours["kernels"]:
            row["gpu_ns"]["total"] = int(row["gpu_ns"]["total"] * 0.7)
        rc, out = self.run_compare("--overlap")
        self.assertEqual(rc, 1, out)
        self.assertIn("allowed below CUPTI's", out)

    def pageable_rows(self, doc, ours):
        rows = [r for r in doc["memcpy"] if r["host_memory"] == "pageable"]
        self.assertTrue(rows)
        for row in rows:
            if ours:
                row["gpu_ns"]["total"] = 1000000
            else:
                row["gpu_ns"] = 1000000
        return rows

    def test_pageable_copies_hold_only_the_lower_bound(self):
        # The event pair also times the driver's staging: 50% over CUPTI passes.
        self.pageable_rows(self.cupti, ours=False)
        for row in self.pageable_rows(self.ours, ours=True):
            row["gpu_ns"]["total"] = 1500000
        rc, out = self.run_compare()
        self.assertEqual(rc, 0, out)
        self.assertTrue(self.row(out).endswith(" ok (staging)"), out)
        self.assertRegex(out, r"note cu_streams: staged copy GPU time \+\d+ ns per timed "
                              r"operation over CUPTI's: the driver's staging before the transfer")
        # 25% short of CUPTI's: beyond the 20% the staging's run-to-run spread allows.
        for row in self.pageable_rows(self.ours, ours=True):
            row["gpu_ns"]["total"] = 370000
        rc, out = self.run_compare()
        self.assertEqual(rc, 1, out)
        self.assertIn("FAIL cu_streams: staged copy GPU time differs: ours 740000 ns, CUPTI "
                      "2000000 ns, allowed below CUPTI's 400000 ns (tolerance)", out)

    def test_copies_from_one_run_with_both_tracers_hold_the_tolerance(self):
        # Across runs 25% short failed above; the run with both tracers decides instead.
        for row in self.pageable_rows(self.ours, ours=True):
            row["gpu_ns"]["total"] = 370000
        both_ours, both_cupti = canned("ours_cu_streams.json"), canned("cupti_cu_streams.json")
        self.pageable_rows(both_ours, ours=True)
        self.pageable_rows(both_cupti, ours=False)
        for row in self.pageable_rows(both_ours, ours=True):
            row["gpu_ns"]["total"] = 960000  # 4% short of CUPTI's in the same run: passes
        paths = []
        for name, doc in (("both_ours.json", both_ours), ("both_cupti.json", both_cupti)):
            paths.append(os.path.join(self.tmp.name, name))
            with open(paths[-1], "w") as f:
                json.dump(doc, f)
        options = ("--same-run-ours", paths[0], "--same-run-cupti", paths[1])
        rc, out = self.run_compare(*options)
        self.assertEqual(rc, 0, out)
        for row in self.pageable_rows(both_ours, ours=True):
            row["gpu_ns"]["total"] = 900000  # 10% short: beyond the 5% tolerance
        with open(paths[0], "w") as f:
            json.dump(both_ours, f)
        rc, out = self.run_compare(*options)
        self.assertEqual(rc, 1, out)
        self.assertIn("FAIL cu_streams: staged copy (one run, both tracers) GPU time differs: "
                      "ours 1800000 ns, CUPTI 2000000 ns, allowed below CUPTI's 100000 ns "
                      "(tolerance)", out)
        # The other copies' times come from that run too: doubled there, they fail.
        for row in both_ours["memcpy"]:
            if row["host_memory"] == "pinned":
                row["gpu_ns"]["total"] *= 2
        with open(paths[0], "w") as f:
            json.dump(both_ours, f)
        rc, out = self.run_compare(*options, "--floor-us", "0.1")
        self.assertRegex(out, r"FAIL cu_streams: copy \(one run, both tracers\) GPU time differs")

    def test_managed_copies_are_staged_whatever_each_tracer_calls_them(self):
        # gputrace: HtoD from managed memory; CUPTI: device to device, managed.
        self.ours["memcpy"].append({"direction": "HtoD", "host_memory": "managed",
                                    "async": False, "calls": 1, "bytes": 4096, "timed": 1,
                                    "gpu_ns": {"total": 3000000}})
        self.cupti["memcpy"].append({"direction": "DtoD", "host_memory": "managed",
                                     "async": False, "calls": 1, "bytes": 4096,
                                     "gpu_ns": 1000000})
        rc, out = self.run_compare()
        self.assertEqual(rc, 0, out)
        self.assertTrue(self.row(out).endswith(" ok (staging)"), out)
        self.assertIn("note cu_streams: copy DtoD/managed/sync: ours 0 calls 0 B, CUPTI 1 "
                      "calls 4096 B", out)

    def test_pinned_copies_hold_both_bounds(self):
        for row in self.ours["memcpy"]:
            if row["host_memory"] == "pinned":
                row["gpu_ns"]["total"] *= 2
        rc, out = self.run_compare("--floor-us", "0.1")
        self.assertEqual(rc, 1, out)
        self.assertRegex(out, r"FAIL cu_streams: copy GPU time differs: ours \d+ ns, CUPTI "
                              r"\d+ ns, allowed \d+ ns \(floor\)")

    def test_missing_kernel_fails(self):
        self.ours["kernels"] = [r for r in self.ours["kernels"] if r["name"] != BLOCK_SUM]
        rc, out = self.run_compare()
        self.assertEqual(rc, 1, out)
        self.assertIn(f"FAIL cu_streams: kernel missing from ours: {BLOCK_SUM} (6 calls)", out)
        self.assertRegex(self.row(out), r" 3/4 +20/26 ")

    def test_differing_copy_bytes_fail_and_name_the_row(self):
        row = next(r for r in self.cupti["memcpy"] if r["direction"] == "HtoD" and r["async"])
        row["bytes"] += 4096
        rc, out = self.run_compare()
        self.assertEqual(rc, 1, out)
        self.assertIn("FAIL cu_streams: copy bytes differ: ours 14368, CUPTI 18464", out)
        self.assertIn("note cu_streams: copy HtoD/pinned/async: ours 6 calls 6144 B, CUPTI 6 "
                      "calls 10240 B", out)

    def test_rows_keyed_differently_are_notes_when_totals_agree(self):
        row = next(r for r in self.cupti["memcpy"] if r["direction"] == "DtoD")
        row["async"] = False
        rc, out = self.run_compare()
        self.assertEqual(rc, 0, out)
        self.assertIn("note cu_streams: copy DtoD/none/async: ours 1 calls 1024 B, CUPTI 0 calls "
                      "0 B", out)

    def test_graph_launches_and_dropped_records_fail(self):
        self.cupti["graphs"]["launches"] = 3
        self.cupti["dropped"] = 5
        rc, out = self.run_compare()
        self.assertEqual(rc, 1, out)
        self.assertIn("FAIL cu_streams: graph launches differ: ours 2, CUPTI 3", out)
        self.assertIn("FAIL cu_streams: records dropped: ours 0, CUPTI 5", out)

    def test_graph_kernels_in_their_rows_are_held_against_the_nodes_runs(self):
        # gputrace with CUPTI: a graph's kernels are timed in their kernels' rows
        # (graph_calls), the launches' spans in their own row; the reference keeps
        # its node runs' time apart (graph_gpu_ns). Neither span is added twice.
        name = self.ours["kernels"][0]["name"]
        ours_row = self.ours["kernels"][0]
        ref_row = self.cupti_kernel(name)
        ours_row["graph_calls"] = 4
        ours_row["timed"] += 4
        ours_row["gpu_ns"]["total"] += 4000
        ref_row["graph_runs"] = 4
        ref_row["graph_gpu_ns"] = 4000
        rc, out = self.run_compare()
        self.assertEqual(rc, 0, out)
        ref_row["graph_gpu_ns"] = 400000  # the nodes took 100x longer by CUPTI
        rc, out = self.run_compare("--floor-us", "0")
        self.assertEqual(rc, 1, out)
        self.assertIn("FAIL cu_streams: kernel GPU time", out)

    def test_untimed_records_fail(self):
        self.cupti["untimed"] = 4
        rc, out = self.run_compare()
        self.assertEqual(rc, 1, out)
        self.assertIn("FAIL cu_streams: CUPTI left 4 operations untimed: its GPU times miss "
                      "theirs", out)

    def test_unreadable_report_is_an_error(self):
        self.cupti = {"kernels": [{"calls": 1}]}
        rc, out = self.run_compare()
        self.assertEqual(rc, 2, out)
        self.assertIn("cannot read the reports", out)


class Reports(unittest.TestCase):
    """runner.load_report: a reference that stood down is no report, for its reason."""

    def test_a_reference_that_stood_down_is_no_report(self):
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "cupti.42.json"), "w") as f:
                json.dump({"tool": "cupti_ref", "dropped": 0, "untimed": 0,
                           "error": "another CUPTI subscriber holds CUPTI", "kernels": [],
                           "memcpy": [], "memset": [], "graphs": {"launches": 0, "gpu_ns": 0}},
                          f)
            doc, why = runner.load_report(runner.Run(tmp, rc=0, pid=42), "cupti")
        self.assertIsNone(doc)
        self.assertEqual(why, "cupti.42.json holds nothing: another CUPTI subscriber holds CUPTI")

    def test_a_complete_reference_is_read(self):
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "cupti.7.json"), "w") as f:
                json.dump(canned("cupti_cu_streams.json"), f)
            doc, why = runner.load_report(runner.Run(tmp, rc=0, pid=7), "cupti")
        self.assertEqual((doc["tool"], why), ("cupti_ref", ""))


def stats(total, calls):
    return {"total": total, "avg": total // calls if calls else 0}


class Workload(unittest.TestCase):
    """workloads.check_workload on a numba run as both tracers would report it."""

    WORK = {"version": "numba", "kernel": "gt_numba_axpy", "launches": 200,
            "htod_bytes": 128 << 20, "dtoh_bytes": 64 << 20, "compile_api": "nvvmCompileProgram"}
    NAME = "__main__::gt_numba_axpy$241(float, Array<float, 1, C, mutable, aligned>)"

    def setUp(self):
        self.ours = {
            "tool": "gputrace",
            "process": {"wall_ns": 3_000_000_000},
            "totals": {"gpu_busy_ns": 60_000_000, "dropped": 0},
            "kernels": [{"name": self.NAME, "calls": 200, "gpu_ns": stats(8_000_000, 200),
                         "timed": 200, "graph": False},
                        {"name": "[graph launch]", "calls": 1, "gpu_ns": stats(5_000, 1),
                         "timed": 1, "graph": True}],
            "memcpy": [{"direction": "HtoD", "host_memory": "pageable", "async": False,
                        "calls": 2, "bytes": 128 << 20, "gpu_ns": stats(30_000_000, 2)},
                       {"direction": "DtoH", "host_memory": "pageable", "async": False,
                        "calls": 1, "bytes": 64 << 20, "gpu_ns": stats(15_000_000, 1)}],
            "compile": [{"api": "nvvmCompileProgram", "name": "", "calls": 1, "ok": True,
                         "wall_ns": stats(400_000_000, 1)}],
        }
        self.cupti = {"tool": "cupti_ref", "kernels": [
            {"name": self.NAME, "calls": 200, "gpu_ns": 7_800_000, "graph_gpu_ns": 0}]}

    def check(self):
        row = workloads.WorkloadRow("numba")
        workloads.check_workload(row, self.WORK, self.ours, self.cupti)
        return row

    def test_plausible_run_passes(self):
        row = self.check()
        self.assertEqual(row.failures, [])
        self.assertEqual(row.launches, (200, 200, 200))
        self.assertEqual(row.kernel_ns, (8_000_000, 7_800_000))
        self.assertEqual(row.compile, "nvvmCompileProgram x1 400.00ms")

    def test_missing_compile_event_fails(self):
        self.ours["compile"] = []
        self.assertIn("no nvvmCompileProgram recorded", self.check().failures)

    def test_missed_launches_fail(self):
        self.ours["kernels"][0]["calls"] = 199
        self.assertIn("ours: 199 launches of *gt_numba_axpy*, the workload made 200",
                      self.check().failures)

    def test_gpu_time_beyond_wall_time_fails(self):
        self.ours["kernels"][0]["gpu_ns"] = stats(4_000_000_000, 200)
        self.assertIn("kernel GPU time 4000005000 ns exceeds the wall time 3000000000 ns",
                      self.check().failures)

    def test_without_cupti_gputrace_alone_is_checked(self):
        row = workloads.WorkloadRow("numba")
        workloads.check_workload(row, self.WORK, self.ours, None)
        self.assertEqual(row.failures, [])
        self.assertEqual(row.launches, (200, "-", 200))
        self.assertEqual(workloads.workload_lines([row])[1].split()[:6],
                         ["numba", "gt_numba_axpy", "200/-/200", "8.00ms", "/", "-"])

    def test_copy_without_time_fails(self):
        self.ours["memcpy"][1]["gpu_ns"] = stats(0, 1)
        self.assertIn("DtoH: no GPU time", self.check().failures)


class Floor(unittest.TestCase):
    """run.py's floor: measured by the build's event_floor where it answers."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        os.mkdir(os.path.join(self.tmp.name, "gpu"))
        self.ctx = runner.Context(build=self.tmp.name, runs=os.path.join(self.tmp.name, "runs"),
                                  shim="", cupti_ref="", program_env=dict(os.environ),
                                  python_env={}, timeout=30, repeat=1, tolerance=0.05,
                                  floor_ns=2000, deadline=float("inf"))

    def tearDown(self):
        self.tmp.cleanup()

    def fake_event_floor(self, output):
        path = os.path.join(self.tmp.name, "gpu", "event_floor")
        with open(path, "w") as f:
            f.write(f"#!/bin/sh\necho '{output}'\n")
        os.chmod(path, 0o755)

    def test_measured_floor_is_taken(self):
        op = '{"queued_ns":7000,"after_pause_ns":%d}'
        self.fake_event_floor('{"pause_ms":100,"repeats":7,"kernel":%s,"memset":%s,"dtod":%s,'
                              '"floor_ns":41000}' % (op % 38000, op % 41000, op % 40000))
        floor, line = run.measure_floor(self.ctx, 2000, explicit=False)
        self.assertEqual(floor, 41000)
        self.assertIn("floor 41 us: event pairs on this GPU", line)
        self.assertIn("memset 7.0 us queued / 41.0 us after a 100 ms pause", line)

    def test_floor_never_below_the_default_nor_over_an_explicit_one(self):
        op = '{"queued_ns":300,"after_pause_ns":500}'
        self.fake_event_floor('{"pause_ms":100,"repeats":7,"kernel":%s,"memset":%s,"dtod":%s,'
                              '"floor_ns":500}' % (op, op, op))
        self.assertEqual(run.measure_floor(self.ctx, 2000, explicit=False)[0], 2000)
        self.assertEqual(run.measure_floor(self.ctx, 9000, explicit=True),
                         (9000, "floor 9 us: given by --floor-us"))

    def test_a_failed_measure_keeps_the_default_and_says_why(self):
        self.fake_event_floor("no GPU here")
        floor, line = run.measure_floor(self.ctx, 2000, explicit=False)
        self.assertEqual(floor, 2000)
        self.assertIn("the default (event_floor did not measure one", line)


class Script(unittest.TestCase):
    """gpu-check.sh with a PATH that has no working nvidia-smi."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.bin = os.path.join(self.tmp.name, "bin")
        os.mkdir(self.bin)
        for tool in ("bash", "python3", "dirname", "readlink", "mkdir", "tail", "nproc"):
            found = shutil.which(tool)
            if found:
                os.symlink(found, os.path.join(self.bin, tool))

    def tearDown(self):
        self.tmp.cleanup()

    def run_script(self, build):
        env = {"PATH": self.bin, "HOME": self.tmp.name}
        proc = subprocess.run([os.path.join(self.bin, "bash"),
                               os.path.join(REPO, "scripts", "gpu-check.sh"), "--skip-build",
                               "--build-dir", build], env=env, capture_output=True, text=True,
                              timeout=60)
        return proc.returncode, proc.stdout, proc.stderr

    def test_no_nvidia_smi_means_built_only(self):
        rc, out, err = self.run_script(BUILD)
        self.assertEqual((rc, out), (0, "no NVIDIA GPU: built only\n"), err)

    def test_failing_nvidia_smi_means_built_only(self):
        fake = os.path.join(self.bin, "nvidia-smi")
        with open(fake, "w") as f:
            f.write("#!/bin/sh\necho 'NVIDIA-SMI has failed' >&2\nexit 9\n")
        os.chmod(fake, 0o755)
        rc, out, err = self.run_script(BUILD)
        self.assertEqual((rc, out), (0, "no NVIDIA GPU: built only\n"), err)

    def test_a_build_without_the_programs_fails(self):
        empty = os.path.join(self.tmp.name, "empty-build")
        os.mkdir(empty)
        rc, out, err = self.run_script(empty)
        self.assertEqual(rc, 1)
        self.assertEqual(out, "")
        self.assertIn(f"missing from the build: {empty}/tests/apps/drv_linked", err)
        self.assertIn(f"missing from the build: {empty}/gpu/libcupti_ref.so", err)
        self.assertIn(f"missing from the build: {empty}/gpu/launch_cost", err)
        self.assertIn(f"missing from the build: {empty}/gpu/event_floor", err)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
