"""The kernel harness: `swaplab kernel run`, `swaplab kernel move-cost` and
`swaplab kernel cleanup`
(docs/kernel-harness.md)."""
from __future__ import annotations

import sys

from ..params import ParamError, add_workload_options, params_from_args

EXIT_BAD_INPUT = 2
EXIT_FAILED = 1


def add_parsers(sub) -> None:
    """Adds `kernel` (with run and cleanup) to the top-level subparsers."""
    k = sub.add_parser("kernel", help="run workloads on the live kernel (root, zram)",
                       description="The kernel harness: runs a workload on this machine's kernel "
                                   "on a zram swap device of its own and restores the machine.")
    ksub = k.add_subparsers(dest="kernel_command", metavar="KCOMMAND", parser_class=type(k))
    ksub.required = True

    r = ksub.add_parser("run", help="run a workload on the live kernel",
                        description="Run a workload on the live kernel: creates its own zram swap "
                                    "device, sets the requested mTHP sizes to always and the others "
                                    "to never, replays the model's operation stream in "
                                    "swaplab-kdriver, and restores everything. Writes the same "
                                    "result schema as 'swaplab run'.")
    r.add_argument("workload", help="workload name (swaplab workloads)")
    add_workload_options(r, policy=False)
    r.add_argument("--json", metavar="PATH", help="write the result as JSON ('-' for stdout)")
    r.add_argument("--layout-dump", metavar="PATH",
                   help="write the final layout: one little-endian uint64 per page (docs/layout-hash.md)")
    r.add_argument("--allow-other-swap", action="store_true",
                   help="run even while other swap is active (ours gets the highest priority)")
    r.add_argument("-q", "--quiet", action="store_true", help="print nothing")
    r.set_defaults(func=_cmd_run)

    m = ksub.add_parser("move-cost", help="time a swap-entry move's copy on a zram device",
                        description="What one move of proposal-compact costs in I/O on this kernel: "
                                    "on a zram block device of its own (not swap), swaplab-mdriver "
                                    "reads a 4 KiB block, writes it to a free block and discards the "
                                    "old one, timing each step (docs/kernel-findings.md F32). "
                                    "Restores the machine on every exit path.")
    m.add_argument("--content", default="same,byte,mixed,random", metavar="LIST",
                   help="page contents, comma-separated: same (kdriver's 0x11 pages), byte "
                        "(rdriver's one-byte pages), mixed (compressible like anonymous memory), "
                        "random (incompressible); default all four")
    m.add_argument("--slots", type=int, default=8192, help="4 KiB blocks of the device, half in use "
                                                          "(default 8192: 32 MiB)")
    m.add_argument("--moves", type=int, default=100000, help="moves a run (default 100000)")
    m.add_argument("--repeats", type=int, default=3, help="runs of each content, alternating (default 3)")
    m.add_argument("--seed", type=int, default=1, help="seed of the block choice and the content")
    m.add_argument("--cpu", type=int, default=0, help="CPU the driver is pinned to (default 0)")
    m.add_argument("--json", metavar="PATH", help="write the result as JSON ('-' for stdout)")
    m.add_argument("--allow-other-swap", action="store_true",
                   help="run even while other swap is active (the device is not swap)")
    m.add_argument("-q", "--quiet", action="store_true", help="print nothing")
    m.set_defaults(func=_cmd_move_cost)

    c = ksub.add_parser("cleanup", help="restore the machine after a killed kernel run",
                        description="Undoes what the state file of a killed 'swaplab kernel run' "
                                    "names (swapoff, zram removal, mTHP knobs); a no-op without one.")
    c.set_defaults(func=_cmd_cleanup)


def _fail(cmd: str, msg: str, code: int) -> int:
    sys.stderr.write(f"swaplab kernel {cmd}: error: {msg}\n")
    return code


def _guarded(cmd: str, fn) -> tuple:
    """fn() with the errors every kernel command reports the same way:
    (None, its value), or (the exit status, None) after one line on stderr."""
    from . import harness, machine

    try:
        return None, fn()
    except ParamError as e:
        return _fail(cmd, str(e), EXIT_BAD_INPUT), None
    except machine.HarnessError as e:
        return _fail(cmd, str(e), EXIT_FAILED), None
    except harness.Signalled as e:
        sys.stderr.write(f"swaplab kernel {cmd}: interrupted by signal {e.signo}; machine restored\n")
        return 128 + e.signo, None


def _run_reported(run, a, print_run) -> int:
    """Runs run() -> (result, layout) (which checks the output paths after
    the parameters) with the errors every kernel run reports the same way; prints and writes the outputs. Returns the exit
    status, or None with the result in a.result."""
    from ..results import save_outputs

    rc, out = _guarded("run", run)
    if rc is not None:
        return rc
    res, layout = out
    if not a.quiet and a.json != "-":
        print_run(res)
    save_outputs(res, layout, a.json, a.layout_dump)
    a.result = res
    return None


def _cmd_run(a) -> int:
    from .. import report
    from ..results import check_output_paths
    from . import harness

    def run():
        wp = params_from_args(a.workload, a)
        if wp.migrate_every or wp.cpus != 1:
            raise ParamError("the kernel harness pins its task to one CPU; --cpus and --migrate-every "
                             "are for the model only")
        if wp.device != "zram":
            raise ParamError(f"the kernel harness swaps to its own zram device; --device {wp.device} "
                             "is for the model only")
        check_output_paths(a.json, a.layout_dump)
        return harness.run_kernel(wp, allow_other_swap=a.allow_other_swap)

    rc = _run_reported(run, a, report.print_run)
    if rc is not None:
        return rc
    if a.result.get("first_other_pages_iteration"):
        sys.stderr.write(f"swaplab kernel run: warning: from iteration {a.result['first_other_pages_iteration']} "
                         "the device held pages that are not the workload's (another process swapped "
                         "onto it); later iterations may differ from a quiet machine\n")
    return 0


def main_run_reclaim(argv: list) -> int:
    """swaplab kernel run usemem|pmbench|build|PRESET [options]: the model's
    reclaim options (swaplab run usemem --help) and the harness's."""
    from ..results import check_output_paths
    from . import reclaim

    a = reclaim.build_parser().parse_args(argv)

    def run():
        p = reclaim.params_from_args(a, argv)
        check_output_paths(a.json, a.layout_dump)
        return reclaim.run_kernel(p)

    rc = _run_reported(run, a, reclaim.print_run)
    if rc is not None:
        return rc
    if reclaim.other_pages(a.result):
        where = next((ph["until"] for ph in a.result["phases"] if ph.get("other_pages")), "the exit")
        sys.stderr.write(f"swaplab kernel run: warning: at {where} the device held pages that are not the "
                         "workload's (another process swapped onto it); the slots after it may differ from a "
                         "quiet machine\n")
    return 0


def _cmd_move_cost(a) -> int:
    from ..results import check_output_paths, write_json
    from . import movecost

    contents = a.content.split(",") if a.content else []

    def run():
        check_output_paths(a.json, None)
        return movecost.run(contents, a.slots, a.moves, a.repeats, a.seed, a.cpu, a.allow_other_swap,
                            progress=None if a.quiet or a.json == "-" else
                            (lambda m: sys.stderr.write(f"swaplab kernel move-cost: {m}\n")))

    rc, res = _guarded("move-cost", run)
    if rc is not None:
        return rc
    if not a.quiet and a.json != "-":
        print(f"{'content':8} {'compr':>6} {'read':>7} {'write':>7} {'discard':>8} {'move':>7} "
              f"{'sys/move':>9} {'empty read':>11}   (ns; sys in µs)")
        for c, s in res["summary"].items():
            comp = f"{s['compression']:.2f}" if s["compression"] else "same"
            print(f"{c:8} {comp:>6} {s['read']:7.0f} {s['write']:7.0f} {s['discard']:8.0f} {s['move']:7.0f} "
                  f"{s['sys_us_per_move']:9.2f} {s['empty_read']:11.0f}")
    if a.json:
        write_json(a.json, res)
    return 0


def _cmd_cleanup(a) -> int:
    from . import harness, machine

    try:
        return harness.cleanup()
    except ParamError as e:
        return _fail("cleanup", str(e), EXIT_BAD_INPUT)
    except machine.HarnessError as e:
        return _fail("cleanup", str(e), EXIT_FAILED)
