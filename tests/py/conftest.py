import os
import subprocess
import sys

import pytest

from swaplab.kernel import machine as M

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_cli(*args, check=False, env=None, timeout=300):
    """Runs `python -m swaplab.cli ARGS`; returns CompletedProcess (text)."""
    e = dict(os.environ)
    if env:
        e.update(env)
    p = subprocess.run([sys.executable, "-m", "swaplab.cli", *args], capture_output=True, text=True,
                       env=e, timeout=timeout, cwd=ROOT)
    if check and p.returncode != 0:
        raise AssertionError(f"swaplab {' '.join(args)} exited {p.returncode}: {p.stderr}")
    return p


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture
def root():
    return ROOT


def _kernel_unavailable():
    """Why the live-kernel tests cannot run here, or None."""
    if os.geteuid() != 0:
        return "needs root"
    saved = {k: os.environ.pop(k) for k in ("SWAPLAB_FAKE_NONROOT", "SWAPLAB_SYSFS_ROOT")
             if k in os.environ}
    try:
        M.check_can_run([16, 32, 64])
    except M.HarnessRefused as e:
        return str(e)
    finally:
        os.environ.update(saved)
    return None


UNAVAILABLE = _kernel_unavailable()
needs_kernel = pytest.mark.skipif(UNAVAILABLE is not None, reason=f"kernel harness unavailable: {UNAVAILABLE}")
