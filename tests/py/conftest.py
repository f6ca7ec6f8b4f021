import os
import subprocess
import sys

import pytest

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
