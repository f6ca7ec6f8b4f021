"""swaplab: a laboratory for the Linux swap-slot allocator.

The C core (swaplab._core) models the allocator and the process side; this
package is the front: parameters, result files, the CLI, the kernel harness
and the comparisons.
"""
from . import _core

__version__ = _core.VERSION

__all__ = ["__version__", "policies", "workloads"]


def policies():
    """Every registered policy as dicts: name, summary, kernel."""
    return _core.policies()


def workloads():
    """Every workload name."""
    return _core.workloads()
