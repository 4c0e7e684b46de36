"""Sandboxes for untrusted code, used by the grader (a candidate's child) and by agent runs alike.

backends.py: the process and bwrap backends, limits and cgroups, and the one explicit table of
backends behind `sandbox_for`; docker.py: the docker backend (the Docker SDK, loaded only when
docker is asked for); egress.py: the allow-listed proxy that is a sandbox's only way out;
processes.py: a process's own children; image/: the offline build of the docker sandbox's image.
Only the standard library (and the Docker SDK, for docker): a GPU host running only the grader
imports this package with nothing else installed. docs/sandboxes.md.
"""
