"""The core's fuzzer (tests/fuzz/sl_fuzz.c) under AddressSanitizer +
UndefinedBehaviorSanitizer: a fixed, seeded number of operations that
visits every policy x device kind x device set at least once, with the
invariant checker on. A developer runs it for hours by hand
(`sl_fuzz --ops 1e9 --seed S`, docs/benchmarks.md)."""
import os
import re
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CASE_OPS = 1000


@pytest.fixture(scope="module")
def sl_fuzz(tmp_path_factory):
    if shutil.which("cmake") is None:
        pytest.skip("cmake is not installed")
    build = tmp_path_factory.mktemp("fuzz-asan")
    subprocess.run(["cmake", "-S", ROOT, "-B", str(build), "-DSWAPLAB_PYTHON=OFF", "-DSWAPLAB_TESTS=ON",
                    "-DCMAKE_BUILD_TYPE=Debug", "-DSWAPLAB_WERROR=ON", "-DSWAPLAB_SANITIZE=ON"],
                   check=True, capture_output=True, text=True)
    b = subprocess.run(["cmake", "--build", str(build), "-j2", "--target", "sl_fuzz"],
                       capture_output=True, text=True)
    assert b.returncode == 0, b.stdout + b.stderr
    return str(build / "sl_fuzz")


ENV = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=1",
           UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")


def _run(exe, *args):
    return subprocess.run([exe, *args], capture_output=True, text=True, env=ENV, timeout=1200)


def test_fuzz_every_case_under_sanitizers(sl_fuzz):
    # one pass to learn how many kinds of case there are, then every one of them
    first = _run(sl_fuzz, "--ops", "1", "--quiet")
    assert first.returncode == 0, first.stderr
    kinds = int(re.search(r" of (\d+) kinds", first.stdout).group(1))
    assert kinds >= 3 * 5 * 8     # device sets x device kinds x policies
    ops = kinds * CASE_OPS
    r = _run(sl_fuzz, "--ops", str(ops), "--case-ops", str(CASE_OPS), "--seed", "14", "--quiet")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    assert "runtime error" not in r.stderr and "Sanitizer" not in r.stderr
    m = re.search(r"ok: (\d+) operations in (\d+) cases of \d+ kinds \((\d+) skipped", r.stdout)
    assert m, r.stdout
    done, cases, skipped = map(int, m.groups())
    assert done == ops and cases + skipped >= kinds and cases > 0


def test_fuzz_is_seeded_and_refuses_bad_arguments(sl_fuzz):
    a = _run(sl_fuzz, "--ops", "3000", "--seed", "5", "--quiet")
    b = _run(sl_fuzz, "--ops", "3e3", "--seed", "5", "--quiet")
    strip = lambda s: re.sub(r", [0-9.]+ s, \d+ ops/s", "", s)  # noqa: E731
    assert a.returncode == b.returncode == 0
    assert strip(a.stdout) == strip(b.stdout)
    bad = _run(sl_fuzz, "--ops", "lots")
    assert bad.returncode == 2 and bad.stderr.startswith("sl_fuzz: bad argument '--ops'")
