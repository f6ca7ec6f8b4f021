"""Builds the C core's tests with CMake and runs them: plain, under
AddressSanitizer + UndefinedBehaviorSanitizer, and the concurrent tests under
ThreadSanitizer (warnings are errors)."""
import glob
import os
import re
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
    if name == "plain":
        check_tags_select_suites(build, env)


def file_tags():
    """{test file: the first word of each of its TEST names}."""
    out = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "tests", "c", "test_*.c"))):
        with open(path) as f:
            names = re.findall(r"^TEST\((\w+)\)", f.read(), re.M)
        out[os.path.basename(path)] = (names, {n.split("_")[0] for n in names})
    return out


def check_tags_select_suites(build, env):
    """Every C test starts with its file's one tag; `sl_tests TAG` runs exactly
    that file's tests; ctest has one entry per tag; a filter that selects no
    test is an error, not an empty pass."""
    tags = file_tags()
    for fname, (names, words) in tags.items():
        assert len(words) == 1, f"{fname}: tests of several tags {sorted(words)}"
    by_tag = {}
    for names, words in tags.values():
        by_tag.setdefault(words.pop(), []).extend(names)
    listed = subprocess.run([str(build / "sl_tests"), "--list"], capture_output=True,
                            text=True, check=True).stdout.split()
    assert sorted(listed) == sorted(n for v in by_tag.values() for n in v)
    r = subprocess.run([str(build / "sl_tests"), "v618"], capture_output=True, text=True,
                       env=env, timeout=600)
    ran = [ln.split()[1] for ln in r.stdout.splitlines() if ln.startswith("ok ")]
    assert r.returncode == 0 and sorted(ran) == sorted(by_tag["v618"])
    r = subprocess.run([str(build / "sl_tests"), "v61"], capture_output=True, text=True)
    assert (r.returncode, r.stdout, r.stderr) == (2, "", "sl_tests: no test is selected by 'v61'\n")
    if shutil.which("ctest"):
        n = subprocess.run(["ctest", "-N"], cwd=build, capture_output=True, text=True,
                           check=True).stdout
        # one entry per tag, and the fuzzer's short run (tests/fuzz)
        assert sorted(re.findall(r"Test +#\d+: (\S+)", n)) == sorted([*by_tag, "sl_fuzz"])
