"""Option names and help across commands: every option has help, bare
`swaplab` lists the commands, --policy is repeatable or a comma list,
--size/--sizes and --fill/--fills are one option."""
import argparse

import pytest

from swaplab.cli import build_parser


def _walk(p, path):
    for act in p._actions:
        if isinstance(act, argparse._SubParsersAction):
            for name, sp in act.choices.items():
                yield from _walk(sp, path + [name])
        else:
            yield path, act


def test_every_option_has_help():
    missing = [(" ".join(path), act.option_strings or act.dest) for path, act in _walk(build_parser(), ["swaplab"])
               if not act.help and not isinstance(act, argparse._HelpAction)]
    assert missing == []


def test_bare_swaplab_lists_the_commands(cli):
    p = cli()
    assert p.returncode == 0 and p.stdout.startswith("usage: swaplab")
    for cmd in ("run", "sweep", "plot", "compare", "history", "bench", "golden", "kernel", "validate"):
        assert f"\n    {cmd} " in p.stdout or f"\n    {cmd}\n" in p.stdout


def test_policy_options_take_lists_everywhere():
    parser = build_parser()
    for argv in (["history", "thp-swap-v1"], ["bench", "alloc"], ["bench", "threads"], ["golden"],
                 ["sweep", "-o", "x"]):
        a = parser.parse_args(argv + ["--policy", "linux-6.12,linux-6.15", "--policy", "linux-6.18"])
        got = a.policies if argv[0] == "history" else a.policy
        assert got == ["linux-6.12,linux-6.15", "linux-6.18"], argv


@pytest.mark.parametrize("bench,alias,dest", [("alloc", "--size", "sizes"), ("alloc", "--fill", "fills"),
                                              ("threads", "--sizes", "size"), ("threads", "--fills", "fill")])
def test_size_and_fill_aliases(bench, alias, dest):
    a = build_parser().parse_args(["bench", bench, alias, "64M" if "size" in alias else "50"])
    assert getattr(a, dest) == ("64M" if "size" in alias else "50")
