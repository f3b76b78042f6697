#!/usr/bin/env python3
"""The CUPTI reference recorder (tests/gpu/cupti_ref.c) on the emulated driver and CUPTI:
injected with CUDA_INJECTION64_PATH into test programs as scripts/gpu-check.sh injects it,
with the emulator's libcupti.so.13 first on LD_LIBRARY_PATH, and its JSON checked against
the emulator's configured durations (exactly: CUPTI's records carry them).

test_cupti_ref.py REPO BUILD_DIR GTEMU_LIB_DIR"""
import json
import os
import sys
import tempfile
import unittest

REPO, BUILD, EMU_LIB = (os.path.abspath(p) for p in sys.argv[1:4])
sys.path.insert(0, os.path.join(REPO, "scripts", "gpu_check"))

import runner  # noqa: E402

CUPTI_REF = os.path.join(BUILD, "gpu", "libcupti_ref.so")
CAPTURE = os.path.join(BUILD, "tests", "apps", "capture")
PROBE = os.path.join(BUILD, "gpu", "cupti_ref_probe")

STEP_NS = 10000
VEC_ADD_NS = 20000000
# capture 10 2 4096: each graph launch runs two steps, a memset of 16384 bytes (at
# 1000 GB/s: 16 ns) and a DtoD copy of them (at 1000 GB/s: 16 ns), one after another.
GRAPH_LAUNCHES = 10
GRAPH_SPAN_NS = 2 * STEP_NS + 16 + 16
EMU_ENV = {
    "GPUTRACE_EMU_DEVICES": "2",
    "GPUTRACE_EMU_KERNEL_NS": f"step={STEP_NS},vec_add={VEC_ADD_NS},*=1000",
    "GPUTRACE_EMU_GBPS": "pageable=10,pinned=25,dtod=1000,memset=1000,peer=50",
}


class CuptiRef(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def reference(self, command, **env):
        """The reference's JSON of one run of `command` (which must succeed), read as
        written: the kit's reader takes a report with an "error" for none."""
        base = runner.clean_environment(EMU_LIB)
        base.update(EMU_ENV, **env)
        cupti_env = runner.cupti_environment(base, CUPTI_REF, self.tmp.name)
        run = runner.run(command, cupti_env, self.tmp.name, 60)
        self.assertEqual(run.rc, 0, run.describe())
        with open(os.path.join(self.tmp.name, f"cupti.{run.pid}.json")) as f:
            return json.load(f)

    def capture(self, **env):
        return self.reference([CAPTURE, str(GRAPH_LAUNCHES), "2", "4096"], **env)

    def row(self, doc, table, **key):
        rows = [r for r in doc[table] if all(r.get(k) == v for k, v in key.items())]
        self.assertEqual(len(rows), 1, f"{table} rows {key}: {doc[table]}")
        return rows[0]

    def test_graph_launches_are_each_counted(self):
        doc = self.capture()
        self.assertNotIn("error", doc)
        self.assertEqual(doc["graphs"], {"launches": GRAPH_LAUNCHES,
                                         "gpu_ns": GRAPH_LAUNCHES * GRAPH_SPAN_NS})
        step = self.row(doc, "kernels", name="step(float*, int)")
        self.assertEqual((step["calls"], step["graph_nodes"], step["graph_runs"]),
                         (1 + 2, 2, 2 * GRAPH_LAUNCHES))
        self.assertEqual(step["gpu_ns"], STEP_NS)
        self.assertEqual(doc["untimed"], 0)

    def test_records_without_timestamps_are_untimed(self):
        # Every third record of GPU work has no timestamps. capture makes 42: the launch
        # outside the graph, 4 node records a launch, the DtoH copy that checks the result.
        doc = self.capture(GPUTRACE_EMU_CUPTI_ZERO_TIMESTAMPS="3")
        self.assertEqual(doc["untimed"], 14)
        step = self.row(doc, "kernels", name="step(float*, int)")
        total_untimed = sum(r["untimed"] for t in ("kernels", "memcpy", "memset")
                            for r in doc[t])
        self.assertEqual(total_untimed, 14)
        # No launch's span reaches back to time 0: each is at most its full span.
        self.assertEqual(doc["graphs"]["launches"], GRAPH_LAUNCHES)
        self.assertLessEqual(doc["graphs"]["gpu_ns"], GRAPH_LAUNCHES * GRAPH_SPAN_NS)
        self.assertGreater(doc["graphs"]["gpu_ns"], 0)
        # The first record (the launch outside the graph) is timed.
        self.assertEqual(step["gpu_ns"], STEP_NS)

    def test_peer_copies_are_counted(self):
        doc = self.reference([PROBE, "peer", "1000000"])
        for asynchronous in (False, True):
            peer = self.row(doc, "memcpy", direction="PtoP", **{"async": asynchronous})
            self.assertEqual(peer["host_memory"], "none")
            self.assertEqual((peer["calls"], peer["bytes"]), (1, 1000000))
            self.assertEqual(peer["gpu_ns"], 20000)  # 10^6 bytes at 50 GB/s

    def test_exit_waits_for_queued_work(self):
        doc = self.reference([PROBE, "pending", "5"])
        vec_add = self.row(doc, "kernels", name="vec_add")
        self.assertEqual(vec_add["calls"], 5)
        self.assertEqual(vec_add["gpu_ns"], 5 * VEC_ADD_NS)
        self.assertEqual(doc["untimed"], 0)

    def test_stands_down_for_another_subscriber(self):
        doc = self.capture(GPUTRACE_EMU_CUPTI_SUBSCRIBER="Nsight Systems")
        self.assertIn("another CUPTI subscriber", doc["error"])
        self.assertEqual((doc["kernels"], doc["memcpy"], doc["memset"]), ([], [], []))

    def test_a_kind_that_fails_to_enable_undoes_tracing(self):
        doc = self.capture(GPUTRACE_EMU_CUPTI_FAIL_KINDS="memset")
        self.assertIn("MEMSET", doc["error"])
        self.assertIn("CUPTI_ERROR_NOT_COMPATIBLE", doc["error"])
        self.assertEqual((doc["kernels"], doc["memcpy"], doc["memset"]), ([], [], []))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
