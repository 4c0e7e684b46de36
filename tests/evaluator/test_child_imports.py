"""A grader child's imports run with the cyclic collector off, and every job runs with it on."""

from tests.processes import repo_python

CHECK = """
import gc
import grader.child as child
assert not gc.isenabled(), "the collector ran during the child's imports"
child._freeze_imports()
assert gc.isenabled(), "a job would run with the collector off"
assert gc.get_freeze_count() > 100_000, gc.get_freeze_count()
print("ok")
"""


def test_the_collector_is_off_for_the_imports_and_on_again_before_any_job():
    done = repo_python("-c", CHECK)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
