"""Sandbox backends that need more than the grader's standard library: docker (the Docker SDK).

Importing this package registers them with the grader's registry, so `sandbox_for("docker")`
from evaluator.engine.sandbox resolves in any process that imported it (the Django side does).
"""

from arena.sandboxes.docker_sandbox import DockerSandbox, docker_problem, docker_usable
from evaluator.engine.sandbox import register_sandbox, sandbox_for

register_sandbox(DockerSandbox.name, DockerSandbox, probe=docker_problem)

__all__ = ["DockerSandbox", "docker_usable", "sandbox_for"]
