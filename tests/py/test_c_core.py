"""Builds the C core's tests with CMake and runs them: plain, under
AddressSanitizer + UndefinedBehaviorSanitizer, and the concurrent tests under
ThreadSanitizer (warnings are errors)."""
import os
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# (cmake options, test-name filter): ThreadSanitizer runs the concurrent tests.
BUILDS = {
    "plain": ([], None),
    "asan-ubsan": (["-DSWAPLAB_SANITIZE=ON"], None),
    "tsan": (["-DSWAPLAB_TSAN=ON"], "concurrent"),
}


@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")
@pytest.mark.parametrize("name", list(BUILDS))
def test_c_suite(name, tmp_path_factory):
    build = tmp_path_factory.mktemp(f"c-{name}")
    opts, only = BUILDS[name]
    cfg = ["cmake", "-S", ROOT, "-B", str(build), "-DSWAPLAB_PYTHON=OFF", "-DSWAPLAB_TESTS=ON",
           "-DCMAKE_BUILD_TYPE=Debug", "-DSWAPLAB_WERROR=ON", *opts]
    subprocess.run(cfg, check=True, capture_output=True, text=True)
    b = subprocess.run(["cmake", "--build", str(build), "-j2"], capture_output=True, text=True)
    assert b.returncode == 0, b.stdout + b.stderr
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=1",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1",
               TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1")
    cmd = [str(build / "sl_tests")] + ([only] if only else [])
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1200)
    last = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert last.endswith(" passed, 0 failed"), last
    assert int(last.split()[0]) >= (3 if only else 30)
    assert "runtime error" not in r.stderr
    assert "ThreadSanitizer" not in r.stderr
