"""Options every `wikipairs` command shares, one owner for their names and help: -q/--quiet and
-v/--verbose (`verbosity_options`), and the commands' common check of gs:// folders
(`check_storage`). Imports click only (the rest when a check runs)."""
from __future__ import annotations

import functools

import click

QUIET_HELP = "No progress lines (the result, warnings and errors still print)."
VERBOSE_HELP = ("Native library logs (TensorFlow, absl, CUDA, Beam) on the terminal, and extra "
                "detail.")


def verbosity_options(quiet_default: bool | None = False):
    """-q/--quiet and -v/--verbose (the command gets `quiet` and `verbose`); giving both is a
    usage error. `quiet_default` None: not given (a --config file may set it)."""
    def decorate(f):
        @functools.wraps(f)
        def checked(*args, **kwargs):
            if kwargs.get("quiet") and kwargs.get("verbose"):
                raise click.UsageError("--quiet and --verbose contradict each other: give one")
            return f(*args, **kwargs)

        checked = click.option("--verbose", "-v", is_flag=True, help=VERBOSE_HELP)(checked)
        return click.option("--quiet", "-q", is_flag=True, default=quiet_default,
                            help=QUIET_HELP)(checked)

    return decorate


def add_missing_verbosity_options(command: click.Command) -> None:
    """-q/--quiet and -v/--verbose on every leaf command below `command` that lacks them (a
    command with nothing to silence or to add: accepted, so the convention holds everywhere)."""
    subcommands = getattr(command, "commands", None)
    if subcommands is not None:
        for subcommand in subcommands.values():
            add_missing_verbosity_options(subcommand)
        return
    names = {param.name for param in command.params}
    for name, short, help_text in (("quiet", "-q", QUIET_HELP), ("verbose", "-v", VERBOSE_HELP)):
        if name not in names:
            command.params.append(click.Option([f"--{name}", short], is_flag=True,
                                               expose_value=False, help=help_text))


# Options of the same name in several commands share their help (build, reqa pairs; parse,
# build, vocab).
QUERY_MAX_TOKENS_HELP = "Most tokens of a query, [CLS] and [SEP] included."
DOC_MAX_TOKENS_HELP = ("Most tokens of a document, title and [CLS]/[SEP] included; longer text is "
                       "cut at a token boundary.")
NAMESPACES_HELP = "Namespaces whose pages become articles, comma-separated."
ALLOW_TRUNCATED_HELP = ("Keep the complete pages of a dump that ends mid-page instead of "
                        "failing.")
KEEP_TABLES_HELP = "Keep table cell text as paragraphs."


def check_storage(*paths: str) -> None:
    """A gs:// path whose storage host does not answer (or, on GCS, no Application Default
    Credentials): one line in seconds, not a minute of retries per request."""
    from . import fileio
    if any(fileio.is_url(p) for p in paths):
        from .pipelines.offline import check_storage as check
        check(list(paths))
