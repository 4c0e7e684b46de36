"""A C extension that the compiler refuses: a missing semicolon."""

import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SOURCE = r"""
#include <Python.h>
static PyObject* one(PyObject* self, PyObject* args) { return PyFloat_FromDouble(1.0) }
"""

ext = load_inline(name="arena_broken_ext", cpp_sources=SOURCE, no_implicit_headers=True)


class ModelNew(nn.Module):
    def forward(self, x):
        return x * ext.one()
