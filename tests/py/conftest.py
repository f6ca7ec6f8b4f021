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


KERNEL_TESTS_VAR = "SWAPLAB_KERNEL_TESTS"


def _kernel_unavailable():
    """Why the live-kernel tests cannot run here, or None.

    They change the machine (a zram device, swapon, mTHP knobs), so a user's
    test command never runs them: only SWAPLAB_KERNEL_TESTS=1 asks for them
    (.ci/run sets it)."""
    if os.environ.get(KERNEL_TESTS_VAR) != "1":
        return f"live-kernel tests run only when asked: set {KERNEL_TESTS_VAR}=1"
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
