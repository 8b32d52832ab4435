"""Conventions every `wikipairs` command follows (issue 16, a quiet, strict CLI), checked on the
whole click tree (subgroups too), so a command added later is held to them as well."""
from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from conftest import assert_one_line_error, run_cli

from wikipairs.cli import main


def leaf_commands(command: click.Command = main, path: tuple[str, ...] = ()):
    """(path, command) of every command below `command` that has no subcommands."""
    subcommands = getattr(command, "commands", None)
    if subcommands is None:
        yield path, command
        return
    for name, subcommand in sorted(subcommands.items()):
        yield from leaf_commands(subcommand, path + (name,))


LEAVES = list(leaf_commands())


def test_the_tree_has_the_commands_of_the_issue():
    names = {" ".join(path) for path, _ in LEAVES}
    assert names >= {"parse", "build", "vocab", "stats", "show", "verify", "download",
                     "train pretrain", "train finetune", "train export", "reqa build",
                     "reqa eval", "reqa pairs", "reqa finetune"}, names


@pytest.mark.parametrize("path", [path for path, _ in LEAVES], ids=" ".join)
def test_every_command_takes_quiet_and_verbose(path):
    command = dict(LEAVES)[path]
    options = {opt for param in command.params for opt in param.opts}
    assert {"-q", "--quiet", "-v", "--verbose"} <= options, (path, sorted(options))
    for flag in ("-q", "--quiet", "-v", "--verbose"):  # parsed, whatever else is missing
        result = CliRunner().invoke(main, [*path, flag])
        assert "No such option" not in result.output, (path, flag, result.output)


def test_quiet_and_verbose_together_is_one_usage_error(tmp_path):
    result = run_cli("verify", tmp_path, "-q", "-v")
    assert_one_line_error(result, "--quiet and --verbose")


def all_commands(command: click.Command = main, path: tuple[str, ...] = ()):
    """(path, command) of `command` and of every group and command below it."""
    yield path, command
    for name, subcommand in sorted(getattr(command, "commands", {}).items()):
        yield from all_commands(subcommand, path + (name,))


def test_every_option_has_help():
    """Every visible option of every command and group (subgroups too) says what it does
    (arguments: click shows no help for them; each command's docstring names them)."""
    missing = [f"{' '.join(path) or 'wikipairs'} {'/'.join(param.opts)}"
               for path, command in all_commands() for param in command.params
               if isinstance(param, click.Option) and not param.hidden
               and not (param.help or "").strip()]
    assert missing == []
    for path, command in all_commands():  # and every command has its one-line description
        assert (command.help or "").strip(), path
