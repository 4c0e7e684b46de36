"""Where an evaluation's wall time went, split at the candidate's messages."""

from grader.evaluate import _phases
from sandboxes.backends import Outcome


def message(event, at, **extra):
    return {"event": event, "received_at": at, **extra}


def test_a_timed_candidate_is_split_at_its_messages():
    outcome = Outcome(
        0,
        False,
        9.0,
        messages=[
            message("started", 12.0),
            message("compiled", 15.0),
            message("case_done", 16.0, shape=0, case=0),
            message("timing_begin", 17.5, shape=0),
            message("timing_end", 18.0, shape=0),
            message("timing_begin", 18.1, shape=1),
            message("timing_end", 19.0, shape=1),
            # The unseen shapes run after the timing: their cases are correctness too.
            message("case_done", 20.0, shape=2, case=0),
            message("done", 20.25),
        ],
    )
    assert _phases("candidate", 10.0, 20.5, outcome) == {
        "candidate_startup": 2.0,
        "candidate_compile": 3.0,
        "candidate_correctness": 3.75,
        "candidate_timing": 1.5,
        "candidate_exit": 0.25,
    }


def test_an_untimed_candidate_runs_correctness_to_its_last_message():
    outcome = Outcome(
        0,
        False,
        4.0,
        messages=[message("started", 1.0), message("compiled", 1.5), message("done", 3.0)],
    )
    phases = _phases("candidate", 0.0, 4.0, outcome)
    assert phases == {
        "candidate_startup": 1.0,
        "candidate_compile": 0.5,
        "candidate_correctness": 1.5,
        "candidate_exit": 1.0,
    }


def test_the_probe_and_the_judge_are_timed_whole():
    assert _phases("judge", 3.0, 7.25, Outcome(0, False, 4.25)) == {"judge": 4.25}
