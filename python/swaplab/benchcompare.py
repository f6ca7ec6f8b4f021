"""swaplab bench compare: two builds side by side (the regression guard).

Builds a named commit (REV) and the working tree, or a second commit (REV2),
each into its own build directory and import path: the commit's tree comes
out of `git archive` into a directory of its own; each build's `_core`
extension and its Python package are imported only by child processes
started with that path first, so the two builds never meet in one process.

Time mode (default): the children run A B A B ... (--repeats pairs), each
child every case once; per case the medians, the spread (min-max) and the
ratio B/A. This machine is shared and noisy, so prefer --callgrind: each
build runs once under `valgrind --tool=callgrind`, counting instructions
only inside the core's entry points; a case's instructions per pair are
(count at 2N pairs - count at N pairs) / N, which leaves out the fill and
the process start. Instruction counts are deterministic: a ratio of 1.000
means the same work.
"""
from __future__ import annotations

import glob
import json
import os
import pathlib
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

from . import __version__
from .params import ParamError, format_size, parse_count, shown, PAGE
from .results import check_outputs, machine_info, write_json

SCHEMA = "swaplab.bench-compare/1"
WORKTREE = "worktree"
WORKLOAD = "thp-swap-v1"

# Runs inside each build's own process (argv[1]: the package directory,
# argv[2]: the spec as JSON) and prints its measurements as JSON. It uses
# only what every swaplab commit with `bench alloc` and `bench threads` has:
# _core.bench_alloc, _core.bench_threads, _core.run, params.WorkloadParams
# (the whole runs: bench.RUN_CASES' parameters).
CHILD = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import swaplab
from swaplab import _core
from swaplab.params import WorkloadParams
spec = json.loads(sys.argv[2])
out = {"package": swaplab.__file__, "alloc": [], "threads": [], "run": []}
for c in spec["alloc"]:
    r = _core.bench_alloc(spec["policy"], c["slots"], c["order"], c["fill"], c["pairs"], spec["seed"])
    out["alloc"].append(r["ops_per_sec"])
for c in spec["threads"]:
    r = _core.bench_threads(spec["policy"], c["slots"], c["threads"], c["fill"], [c["order"]], c["ops"],
                            spec["seed"], concurrent=c["locks"])
    out["threads"].append(r["ops_per_sec"])
for c in spec["run_cases"]:
    wp = WorkloadParams(**c["params"])
    out["run"].append([_core.run(policy=spec["policy"], **wp.core_kwargs())["seconds"]
                       for _ in range(spec["runs"])])
json.dump(out, sys.stdout)
"""

# the core's entry points in _core.c: callgrind counts only inside them and
# writes one dump after each call (exact names: callgrind's dump-after takes
# no wildcard)
ENTRY = {"alloc": "py_bench_alloc", "threads": "py_bench_threads", "run": "py_run"}


def add_parser(bsub) -> None:
    c = bsub.add_parser("compare", help="compare two builds side by side (regression guard)",
                        description="Builds REV and the working tree (or REV2) side by side and runs "
                                    "bench alloc cases, bench threads cases and the whole runs of "
                                    "bench run (thp-swap-v1; thp-swap -a with 16K-1M) "
                                    "on each, alternating; prints medians, spread and the ratio B/A. "
                                    "--callgrind counts instructions instead (deterministic: the "
                                    "recommended mode on a shared machine).")
    c.add_argument("rev", metavar="REV", help="the baseline commit (A), e.g. HEAD~1 or a hash")
    c.add_argument("rev2", metavar="REV2", nargs="?", default=None,
                   help="the commit to compare (B); default: the working tree as it is")
    c.add_argument("--callgrind", action="store_true",
                   help="count instructions under valgrind --tool=callgrind (deterministic)")
    c.add_argument("--repeats", default="5", help="A B rounds in time mode (default 5)")
    c.add_argument("--policy", default="linux-6.18", help="the policy both builds run (default linux-6.18)")
    c.add_argument("--sizes", default="64M,4G", help="bench alloc device sizes (default 64M,4G)")
    c.add_argument("--fills", default="50,95", help="fill levels in percent (default 50,95)")
    c.add_argument("--orders", default="0,4", help="allocation orders (default 0,4)")
    c.add_argument("--pairs", default=None,
                   help="order-0 pairs per case (order k: >> k; default 2000000, 200000 with --callgrind)")
    c.add_argument("--threads", default=None,
                   help="bench threads cases too (4G device, --orders, --fills): these thread counts "
                        "with locks, and one thread without (the deterministic cost), e.g. 1,2")
    c.add_argument("--runs", default="3",
                   help="runs of each whole-run case (bench run's) per child (default 3; 0 skips)")
    c.add_argument("--seed", default="1", help="the seed of every case (default 1)")
    c.add_argument("--build-dir", metavar="DIR", default=None,
                   help="keep the builds here and reuse a commit's build (default: a temporary directory)")
    c.add_argument("--json", metavar="PATH", help="write the JSON result ('-' for stdout only)")


# ---- git and builds -------------------------------------------------------

def _git(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], capture_output=True, text=True, cwd=cwd)


def repo_root() -> str:
    try:
        p = _git("rev-parse", "--show-toplevel")
    except OSError:
        raise ParamError("bench compare needs git on the PATH") from None
    if p.returncode != 0:
        raise ParamError("bench compare runs inside the swaplab git repository (not a git work tree here)")
    root = p.stdout.strip()
    if not os.path.isfile(os.path.join(root, "python", "swaplab", "_core.c")):
        raise ParamError(f"'{shown(root)}' is not a swaplab checkout (no python/swaplab/_core.c)")
    return root


def resolve(root: str, rev: str) -> str:
    if rev.startswith("-"):
        raise ParamError(f"unknown revision '{shown(rev)}'")
    p = _git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", cwd=root)
    if p.returncode != 0:
        raise ParamError(f"unknown revision '{shown(rev)}'")
    return p.stdout.strip()


def _describe(root: str) -> str:
    head = _git("rev-parse", "HEAD", cwd=root).stdout.strip()
    dirty = _git("status", "--porcelain", "--untracked-files=no", cwd=root).stdout.strip()
    return head + ("+changes" if dirty else "")


def _run_logged(cmd, log, cwd=None) -> None:
    with open(log, "a") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        f.flush()
        p = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=cwd)
    if p.returncode != 0:
        with open(log) as f:
            tail = f.read()[-2000:]
        sys.stderr.write(tail)
        raise ParamError(f"build step failed: {' '.join(cmd[:3])} ... (log: {shown(log)})")


def build(root: str, sha: str | None, where: str) -> str:
    """Builds a commit (sha) or the working tree (None) under `where`; returns
    the directory to put first on sys.path (it holds swaplab/ with _core)."""
    pkg = os.path.join(where, "pkg")
    done = os.path.join(where, "built")
    if sha and os.path.exists(done):
        return pkg
    os.makedirs(where, exist_ok=True)
    log = os.path.join(where, "build.log")
    src = root
    if sha:
        src = os.path.join(where, "src")
        shutil.rmtree(src, ignore_errors=True)
        os.makedirs(src)
        arch = subprocess.run(["git", "-C", root, "archive", "--format=tar", sha], capture_output=True)
        if arch.returncode != 0:
            raise ParamError(f"git archive {sha[:12]} failed: {arch.stderr.decode(errors='replace').strip()}")
        subprocess.run(["tar", "-x", "-C", src], input=arch.stdout, check=True)
    bdir = os.path.join(where, "build")
    _run_logged(["cmake", "-S", src, "-B", bdir, "-DCMAKE_BUILD_TYPE=Release", "-DSWAPLAB_PYTHON=ON",
                 "-DSWAPLAB_TESTS=OFF", f"-DPython_EXECUTABLE={sys.executable}"], log)
    _run_logged(["cmake", "--build", bdir, "--target", "_core", "-j", str(min(4, os.cpu_count() or 1))], log)
    so = glob.glob(os.path.join(bdir, "_core*.so")) + glob.glob(os.path.join(bdir, "**", "_core*.so"),
                                                                  recursive=True)
    if not so:
        raise ParamError(f"the build of {sha[:12] if sha else WORKTREE} made no _core extension "
                         f"(log: {shown(log)})")
    shutil.rmtree(pkg, ignore_errors=True)
    shutil.copytree(os.path.join(src, "python", "swaplab"), os.path.join(pkg, "swaplab"),
                    ignore=shutil.ignore_patterns("__pycache__", "_core*.so"))
    shutil.copy2(so[0], os.path.join(pkg, "swaplab"))
    if sha:
        pathlib.Path(done).touch()
    return pkg


# ---- the cases ------------------------------------------------------------

def make_spec(policy, sizes, fills, orders, pairs, threads, runs, seed) -> dict:
    alloc = [{"size": format_size(s), "slots": s // PAGE, "order": o, "fill": f / 100.0, "fill_pct": f,
              "pairs": max(1, pairs >> o)} for s in sizes for o in orders for f in fills]
    tcases = []
    if threads:
        size = 4 << 30
        for o in orders:
            for f in fills:
                for t, locks in [(1, False)] + [(t, True) for t in threads]:
                    tcases.append({"size": format_size(size), "slots": size // PAGE, "order": o,
                                   "fill": f / 100.0, "fill_pct": f, "threads": t, "locks": locks,
                                   "ops": max(1, pairs >> o)})
    from .bench import RUN_CASES
    return {"policy": policy, "seed": seed, "workload": WORKLOAD, "runs": runs, "alloc": alloc,
            "threads": tcases,
            "run_cases": [{"name": c["name"], "params": c["params"]} for c in RUN_CASES]}


def case_names(spec: dict) -> list:
    names = [("alloc", f"alloc {c['size']} order {c['order']} fill {c['fill_pct']}%") for c in spec["alloc"]]
    names += [("threads", f"threads {c['threads']}{'' if c['locks'] else ' no locks'} {c['size']} "
                          f"order {c['order']} fill {c['fill_pct']}%") for c in spec["threads"]]
    if spec["runs"]:
        names += [("run", f"run {c['name']} {spec['policy']}") for c in spec["run_cases"]]
    return names


def _child(pkg: str, spec: dict, prefix=()) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    return subprocess.run([*prefix, sys.executable, "-c", CHILD, pkg, json.dumps(spec)],
                          capture_output=True, text=True, cwd=pkg, env=env)


def _child_result(p: subprocess.CompletedProcess, pkg: str, label: str) -> dict:
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise ParamError(f"build {label} failed to run the cases: {shown(last)}")
    out = json.loads(p.stdout)
    if not os.path.realpath(out["package"]).startswith(os.path.realpath(pkg)):
        raise ParamError(f"build {label} imported swaplab from {shown(out['package'])}, not its own build")
    return out


def _values(out: dict, spec: dict) -> list:
    """One value per case name: pairs/s for alloc and threads, the run's
    median seconds."""
    vals = list(out["alloc"]) + list(out["threads"])
    if spec["runs"]:
        vals += [statistics.median(r) for r in out["run"]]
    return vals


def time_mode(sides, spec, repeats, progress) -> list:
    per = [[[] for _ in case_names(spec)] for _ in sides]
    for r in range(repeats):
        for i, (label, pkg) in enumerate(sides):
            out = _child_result(_child(pkg, spec), pkg, label)
            for k, v in enumerate(_values(out, spec)):
                per[i][k].append(v)
            if progress:
                progress(f"round {r + 1}/{repeats}: {label} done")
    return per


def _callgrind_counts(pkg: str, spec: dict, where: str, label: str) -> list:
    """Instructions inside each entry point, one per call, in call order:
    one child per kind of case (callgrind honours a single toggle/dump
    function reliably, not several)."""
    os.makedirs(where, exist_ok=True)
    counts = []
    for kind in ("alloc", "threads", "run"):
        want = (len(spec["run_cases"]) * spec["runs"]) if kind == "run" else len(spec[kind])
        if not want:
            continue
        sub = dict(spec, alloc=[], threads=[], runs=0)
        sub["runs" if kind == "run" else kind] = spec["runs" if kind == "run" else kind]
        for f in glob.glob(os.path.join(where, "cg.out*")):
            os.unlink(f)
        out = os.path.join(where, "cg.out")
        prefix = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--dump-instr=no",
                  f"--toggle-collect={ENTRY[kind]}", f"--dump-after={ENTRY[kind]}"]
        _child_result(_child(pkg, sub, prefix), pkg, label)
        parts = []
        for f in glob.glob(out + ".*"):
            m = re.search(r"\.(\d+)$", f)
            if m:
                parts.append((int(m.group(1)), f))
        got = []
        for _, f in sorted(parts):
            with open(f) as fh:
                m = re.search(r"^(?:summary|totals):\s*(\d+)", fh.read(), re.M)
            got.append(int(m.group(1)) if m else 0)
        if len(got) != want or not all(got):
            raise ParamError(f"callgrind counted {len(got)} calls of {ENTRY[kind]} in build {label} "
                             f"({sum(1 for g in got if g)} non-empty), expected {want}")
        counts += got
    return counts


def callgrind_mode(sides, spec, tmp, progress) -> list:
    """Per side and case: instructions per pair ((2N - N) / N), and each
    whole run's instructions."""
    spec1 = dict(spec, runs=min(spec["runs"], 1))
    spec2 = dict(spec1, runs=0,
                 alloc=[dict(c, pairs=2 * c["pairs"]) for c in spec["alloc"]],
                 threads=[dict(c, ops=2 * c["ops"]) for c in spec["threads"]])
    per = []
    for i, (label, pkg) in enumerate(sides):
        a = _callgrind_counts(pkg, spec1, os.path.join(tmp, f"cg-{i}"), label)
        b = _callgrind_counts(pkg, spec2, os.path.join(tmp, f"cg-{i}"), label)
        if progress:
            progress(f"callgrind: {label} done")
        vals = []
        cases = spec["alloc"] + spec["threads"]
        for k, c in enumerate(cases):
            n = c.get("pairs", c.get("ops"))
            vals.append([(b[k] - a[k]) / n])
        if spec1["runs"]:
            vals += [[float(x)] for x in a[len(cases):]]
        per.append(vals)
    return per


def summarise(per, spec, mode) -> list:
    rows = []
    for k, (kind, name) in enumerate(case_names(spec)):
        if mode == "callgrind":
            metric = "instructions" if kind == "run" else "instructions/pair"
        else:
            metric = "seconds" if kind == "run" else "pairs/s"
        row = {"case": name, "kind": kind, "metric": metric}
        for side, vals in zip(("a", "b"), (per[0][k], per[1][k])):
            row[side] = {"median": statistics.median(vals), "min": min(vals), "max": max(vals),
                         "values": vals}
        row["ratio"] = row["b"]["median"] / row["a"]["median"] if row["a"]["median"] else None
        rows.append(row)
    return rows


def _fmt(v: float, metric: str) -> str:
    if metric == "pairs/s":
        return f"{v / 1e6:.2f} M"
    if metric == "seconds":
        return f"{v * 1000:.2f} ms"
    if metric == "instructions":
        return f"{v / 1e6:.2f} M"
    return f"{v:.1f}"


def print_report(out: dict) -> None:
    a, b = out["a"], out["b"]
    for side, x in (("A", a), ("B", b)):
        c = x["commit"]
        print(f"{side}: {x['rev']} ({c[:12]}{c[40:]})")
    if out["mode"] == "callgrind":
        print("instructions counted by callgrind (deterministic); ratio B/A < 1: B does less work")
    else:
        print(f"time, {out['repeats']} alternating rounds (A B A B ...); median [min-max]; "
              "ratio B/A of the medians (pairs/s > 1 or seconds < 1: B faster)")
    w = max(len(r["case"]) for r in out["cases"])
    for r in out["cases"]:
        ra, rb, m = r["a"], r["b"], r["metric"]
        if out["mode"] == "callgrind":
            line = f"{r['case']:<{w}}  {m:<17}  A {_fmt(ra['median'], m):>10}  B {_fmt(rb['median'], m):>10}"
        else:
            line = (f"{r['case']:<{w}}  {m:<8}  A {_fmt(ra['median'], m):>9} [{_fmt(ra['min'], m)}-"
                    f"{_fmt(ra['max'], m)}]  B {_fmt(rb['median'], m):>9} [{_fmt(rb['min'], m)}-"
                    f"{_fmt(rb['max'], m)}]")
        ratio = "n/a" if r["ratio"] is None else f"{r['ratio']:.3f}"
        print(f"{line}  ratio {ratio}")


def main_compare(a) -> int:
    from .bench import _fill, _list, _order, _size, _threads
    from .params import check_policy_name

    check_policy_name(a.policy)
    sizes = _list(a.sizes, _size, "--sizes")
    fills = _list(a.fills, _fill, "--fills")
    orders = _list(a.orders, _order, "--orders")
    pairs = parse_count(a.pairs, "--pairs", 1, 10 ** 10) if a.pairs is not None else \
        (200000 if a.callgrind else 2000000)
    threads = _list(a.threads, _threads, "--threads") if a.threads is not None else []
    runs = parse_count(a.runs, "--runs", 0, 100)
    repeats = parse_count(a.repeats, "--repeats", 1, 100)
    seed = parse_count(a.seed, "--seed")
    if a.callgrind and shutil.which("valgrind") is None:
        raise ParamError("--callgrind needs valgrind on the PATH")
    if a.build_dir is not None and os.path.exists(a.build_dir) and not os.path.isdir(a.build_dir):
        raise ParamError(f"--build-dir '{shown(a.build_dir)}' is not a directory")
    check_outputs([("--json", a.json)])
    root = repo_root()
    sha_a = resolve(root, a.rev)
    sha_b = resolve(root, a.rev2) if a.rev2 is not None else None
    spec = make_spec(a.policy, sizes, fills, orders, pairs, threads, runs, seed)
    quiet = a.json == "-"

    def progress(msg):
        if not quiet:
            print(msg, file=sys.stderr, flush=True)

    tmp = a.build_dir or tempfile.mkdtemp(prefix="swaplab-compare-")
    try:
        os.makedirs(tmp, exist_ok=True)
        progress(f"building {a.rev} ({sha_a[:12]}) ...")
        pkg_a = build(root, sha_a, os.path.join(tmp, sha_a))
        if sha_b is None:
            progress("building the working tree ...")
            pkg_b, commit_b, rev_b = build(root, None, os.path.join(tmp, WORKTREE)), _describe(root), WORKTREE
        else:
            progress(f"building {a.rev2} ({sha_b[:12]}) ...")
            pkg_b, commit_b, rev_b = build(root, sha_b, os.path.join(tmp, sha_b)), sha_b, a.rev2
        sides = [("A", pkg_a), ("B", pkg_b)]
        if a.callgrind:
            per = callgrind_mode(sides, spec, tmp, progress)
        else:
            per = time_mode(sides, spec, repeats, progress)
    finally:
        if a.build_dir is None:
            shutil.rmtree(tmp, ignore_errors=True)
    out = {"schema": SCHEMA, "bench": "compare", "swaplab_version": __version__,
           "mode": "callgrind" if a.callgrind else "time", "repeats": 1 if a.callgrind else repeats,
           "a": {"rev": a.rev, "commit": sha_a}, "b": {"rev": rev_b, "commit": commit_b},
           "policy": a.policy, "seed": seed, "pairs": pairs, "runs": runs, "workload": WORKLOAD,
           "run_cases": [c["name"] for c in spec["run_cases"]],
           "machine": machine_info(), "cases": summarise(per, spec, "callgrind" if a.callgrind else "time")}
    if not quiet:
        print_report(out)
    if a.json:
        write_json(a.json, out)
    return 0
