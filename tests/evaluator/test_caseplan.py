"""The case plan's byte budget (grader/caseplan.py) and the hand-over of output descriptors from
the candidate's folder to the judge's (grader/device_outputs.py: sockets only, no GPU here)."""

import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from grader import feasibility
from grader.caseplan import UNSEEN_BUDGET_UNITS, apply_budget, largest_peak_bytes
from grader.cases import cases_for
from grader.device_outputs import RESERVE_BYTES, Broker, Inbox, device_budget_bytes
from grader.outputs import OutputFileError

GB = 10**9


def planned(unseen_sizes: list[int]) -> tuple[list[dict], dict]:
    shapes = [
        {
            "shape": {"n": 1},
            "seen": True,
            "cases": [c.to_dict() for c in cases_for(seen=True, base_seed=0)],
        }
    ]
    for j, _ in enumerate(unseen_sizes):
        cases = [c.to_dict() for c in cases_for(seen=False, base_seed=500 + 100 * j)]
        shapes.append({"shape": {"n": 2 + j}, "seen": False, "cases": cases})
    entry = {
        "visible_output_bytes": 6 * GB,
        "shapes": {
            feasibility.shape_key({"n": 2 + j}): {"output_bytes": size, "footprint_bytes": 3 * size}
            for j, size in enumerate(unseen_sizes)
        },
    }
    return shapes, entry


def test_visible_shapes_keep_every_case_and_unseen_shapes_at_least_one():
    shapes, entry = planned([12 * GB] * 5)
    out, budget = apply_budget(shapes, entry)
    assert out[0]["cases"] == shapes[0]["cases"]
    assert [len(s["cases"]) for s in out[1:]] == [1, 1, 1, 1, 1]
    assert budget.second_cases_dropped == 5
    # 5 unseen shapes at twice the visible size: over the 6 units, never under one case each.
    assert budget.planned_bytes == (6 + 5 * 2) * 6 * GB


def test_unseen_distributions_alternate_so_both_run():
    shapes, entry = planned([12 * GB] * 4)
    out, _ = apply_budget(shapes, entry)
    assert [s["cases"][0]["distribution"] for s in out[1:]] == [
        "problem",
        "normal",
        "problem",
        "normal",
    ]


def test_second_cases_run_while_the_bytes_stay_within_the_budget():
    shapes, entry = planned([2 * GB] * 5)
    out, budget = apply_budget(shapes, entry)
    assert [len(s["cases"]) for s in out[1:]] == [2, 2, 2, 2, 2]
    assert budget.planned_bytes == 36 * GB + 20 * GB <= budget.budget_bytes
    assert budget.budget_bytes == 36 * GB + UNSEEN_BUDGET_UNITS * 6 * GB
    shapes, entry = planned([6 * GB] * 5)
    out, budget = apply_budget(shapes, entry)
    assert [len(s["cases"]) for s in out[1:]] == [2, 1, 1, 1, 1]
    assert budget.planned_bytes == budget.budget_bytes


def test_second_cases_stop_where_the_device_can_hold_no_more_outputs():
    # Room for the visible cases and 8 GB more on the device: of five 2 GB unseen shapes, every
    # first case runs, and second cases only while the outputs still fit there.
    shapes, entry = planned([2 * GB] * 5)
    out, budget = apply_budget(shapes, entry, device_bytes=36 * GB + 14 * GB)
    assert [len(s["cases"]) for s in out[1:]] == [2, 2, 1, 1, 1]
    assert budget.planned_bytes == 36 * GB + 14 * GB == budget.budget_bytes
    assert budget.to_detail()["bytes_device_budget"] == 50 * GB
    # A device that holds less than the first cases: they all run (through host memory).
    out, budget = apply_budget(shapes, entry, device_bytes=10 * GB)
    assert [len(s["cases"]) for s in out[1:]] == [1, 1, 1, 1, 1]
    assert budget.planned_bytes == 36 * GB + 10 * GB
    # Room for more than the unit budget: the unit budget still bounds the plan.
    _, roomy = apply_budget(shapes, entry, device_bytes=10**6 * GB)
    assert roomy.budget_bytes == 36 * GB + UNSEEN_BUDGET_UNITS * 6 * GB


def test_a_size_the_probe_did_not_record_counts_as_its_larger_footprint():
    shapes, entry = planned([5 * GB] * 3)
    for verdict in entry["shapes"].values():
        del verdict["output_bytes"]  # a cache entry from before output sizes were probed
    out, budget = apply_budget(shapes, entry)
    assert budget.planned_bytes == 36 * GB + 3 * 15 * GB > budget.budget_bytes
    assert [len(s["cases"]) for s in out[1:]] == [1, 1, 1]


def test_without_a_probe_every_case_runs_and_no_budget_is_claimed():
    shapes, _ = planned([1 * GB])
    out, budget = apply_budget(shapes, None)
    assert out == shapes and budget.budget_bytes is None


def test_the_device_budget_leaves_the_judge_room_for_the_largest_shape():
    # An H100's 80 GB; the reference's peak 12 GB on the visible shape (6 GB of outputs), an
    # unseen shape with twice the outputs: the judge needs twice its 24 GB peak there, more
    # than three times the visible peak, and the held outputs get what is left.
    shapes, entry = planned([6 * GB, 12 * GB])
    entry["visible_peak_bytes"] = 12 * GB
    assert largest_peak_bytes(entry, shapes) == 24 * GB
    assert device_budget_bytes(80 * GB, 12 * GB, 24 * GB) == 80 * GB - RESERVE_BYTES - 48 * GB
    # Unseen shapes no larger than the visible one: three times the visible peak binds.
    small, small_entry = planned([3 * GB])
    small_entry["visible_peak_bytes"] = 12 * GB
    assert largest_peak_bytes(small_entry, small) == 12 * GB
    assert device_budget_bytes(80 * GB, 12 * GB, 12 * GB) == 80 * GB - RESERVE_BYTES - 36 * GB
    # A roomy device: half its memory at most.
    assert device_budget_bytes(141 * GB, 12 * GB, 24 * GB) == int(141 * GB * 0.5)
    # No peak measured: nothing to scale.
    assert largest_peak_bytes({"visible_output_bytes": 6 * GB}, shapes) is None


SENDER = textwrap.dedent(
    """
    import json, os, socket, sys
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    sock.connect(sys.argv[1])
    for case in range(int(sys.argv[2])):
        fd = os.open(sys.argv[3], os.O_RDONLY)
        header = json.dumps({"shape": 0, "case": case}).encode()
        socket.send_fds(sock, [header], [fd])
    """
)


def test_descriptors_sent_by_an_exited_process_reach_the_judges_socket(tmp_path: Path):
    marker = tmp_path / "marker"
    marker.write_text("held")
    (tmp_path / "c").mkdir()
    (tmp_path / "j").mkdir()
    broker = Broker(tmp_path / "c", max_cases=2)
    try:
        subprocess.run(
            [sys.executable, "-c", SENDER, str(broker.path), "3", str(marker)],
            check=True,
            timeout=60,
        )
        broker.stop()
        # Past the plan's two cases, a descriptor is closed, never held.
        assert len(broker.held) == 2 and broker.refused == 1
        handoff = broker.serve(tmp_path / "j")
        try:
            received = _receive_all(handoff.path)
        finally:
            handoff.close()
        # Once the judge has them, the grading process holds none of its own: each case's
        # memory goes back as soon as the judge releases it.
        assert not broker.held and broker.received == 2
    finally:
        broker.close()
    assert [json.loads(h)["case"] for h, _ in received] == [0, 1]
    for _, fd in received:
        assert os.read(fd, 4) == b"held"
        os.close(fd)
    assert not broker.held


HOLDING_SENDER = textwrap.dedent(
    """
    import json, os, socket, sys, time
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    sock.connect(sys.argv[1])
    fd = os.open(sys.argv[2], os.O_RDONLY)
    socket.send_fds(sock, [json.dumps({"shape": 0, "case": 0}).encode()], [fd])
    print("sent", flush=True)
    time.sleep(600)
    """
)


def test_a_connection_held_open_past_stop_is_read_then_dropped(tmp_path: Path):
    # A process that keeps its connection open (a stray the candidate left, say): stop() keeps
    # what it sent and ends the broker's thread without waiting for that connection to close.
    marker = tmp_path / "marker"
    marker.write_text("held")
    (tmp_path / "c").mkdir()
    broker = Broker(tmp_path / "c", max_cases=2)
    sender = subprocess.Popen(
        [sys.executable, "-c", HOLDING_SENDER, str(broker.path), str(marker)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert sender.stdout is not None and sender.stdout.readline().strip() == "sent"
        broker.stop()
        assert not broker._thread.is_alive()
        assert broker.received == 1 and len(broker.held) == 1
        assert os.pread(broker.held[0].fd, 4, 0) == b"held"
        assert sender.poll() is None  # its end is still open: stop() did not wait for it
    finally:
        sender.kill()
        sender.wait()
        broker.close()
    assert not broker.held


def _receive_all(path: Path) -> list[tuple[bytes, int]]:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    sock.connect(str(path))
    out = []
    with sock:
        while True:
            header, fds, _, _ = socket.recv_fds(sock, 65536, 1)
            if not header and not fds:
                return out
            out.append((header, fds[0]))


def test_a_malformed_header_is_the_solutions_malformed_output():
    inbox = Inbox()
    r, w = os.pipe()
    os.close(w)
    with pytest.raises(OutputFileError, match="malformed"):
        inbox._take(b"{not json", [r], 1 << 30, 4)
    with pytest.raises(OSError):
        os.fstat(r)  # the descriptor was closed with the refusal
