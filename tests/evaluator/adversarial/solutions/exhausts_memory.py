"""Takes memory until it is stopped: the address-space limit refuses one process, so eight
helpers forked at import take more each, and only the limit on the whole tree (a memory cgroup,
which kills) or each one's own limit (MemoryError) ends them."""

import os

import torch.nn as nn

CHUNK = 16 * 1024 * 1024


def hoard() -> None:
    held = []
    while True:
        block = bytearray(CHUNK)
        block[::4096] = b"\1" * (CHUNK // 4096)  # every page touched, so really taken
        held.append(block)


for _ in range(8):
    if os.fork() == 0:
        try:
            hoard()
        finally:
            os._exit(1)  # a helper never returns into the grader's code
hoard()


class ModelNew(nn.Module):
    def forward(self, x):
        return x
