"""The `wikipairs` command line. Usage and input errors: one line on stderr, exit status 2."""
from __future__ import annotations

import os
import sys
import traceback
from importlib import resources

import click

from . import __version__
from .errors import WikipairsError

EXIT_USAGE = 2


def sample_dump() -> str:
    """Path of the small dump bundled with the package (written for the project, CC0)."""
    return str(resources.files("wikipairs") / "data" / "sample.xml.bz2")


class _OneLineUsageError(click.UsageError):
    """A usage error shown as one line on stderr (click shows the usage, a hint and the error)."""

    def show(self, file=None):
        hint = f" (see '{self.ctx.command_path} --help')" if self.ctx is not None else ""
        message = self.format_message().strip().splitlines()
        click.echo(f"wikipairs: error: {message[0] if message else 'bad usage'}{hint}",
                   file=file, err=True)


# `wikipairs` alone shows the help (click >= 8.2 raises this UsageError for it): keep that.
_HELP_ERRORS = tuple(e for e in (getattr(click.exceptions, "NoArgsIsHelpError", None),) if e)


def _one_line(error: click.UsageError) -> click.UsageError:
    if isinstance(error, (_OneLineUsageError, *_HELP_ERRORS)):
        return error
    one = _OneLineUsageError(error.format_message(), ctx=error.ctx)
    one.exit_code = error.exit_code
    return one


class _Group(click.Group):
    """Turns every error into one line on stderr (a traceback only with --debug)."""

    def make_context(self, info_name, args, parent=None, **extra):
        try:  # errors in the group's own options (`wikipairs --bogus`)
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as e:
            raise _one_line(e) from None

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except click.UsageError as e:  # unknown command, a subcommand's bad option or value
            raise _one_line(e) from None
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except WikipairsError as e:  # --debug: the traceback too, and the same exit status
            if ctx.obj and ctx.obj.get("debug"):
                traceback.print_exc()
            _fail(str(e))
        except KeyboardInterrupt:
            click.echo("wikipairs: interrupted", err=True)
            sys.exit(130)
        except Exception as e:  # a bug, not bad input: still one line unless --debug
            if ctx.obj and ctx.obj.get("debug"):
                traceback.print_exc()
            _fail(f"internal error: {type(e).__name__}: {e} (run with --debug for the traceback)",
                  status=1)


def _fail(message: str, status: int = EXIT_USAGE):
    click.echo(f"wikipairs: error: {message.splitlines()[0] if message else 'failed'}", err=True)
    sys.exit(status)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="wikipairs")
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
@click.pass_context
def main(ctx, debug):
    """Wikipedia dumps to retrieval pre-training pairs, and a two-tower retriever."""
    ctx.obj = {"debug": debug}


def _namespaces(value: str) -> tuple[int, ...]:
    try:
        return tuple(sorted({int(v) for v in value.split(",") if v.strip()}))
    except ValueError:
        raise click.BadParameter("expected comma-separated namespace numbers, e.g. 0 or 0,14",
                                 param_hint="'--namespaces'") from None


@main.command()
@click.option("--input", "-i", "inputs", multiple=True, metavar="DUMP",
              help="Dump file or glob (.xml, .xml.bz2, .xml.gz, .xml.xz); repeatable. "
                   "Default: the bundled sample dump.")
@click.option("--output", "-o", required=True, type=click.Path(file_okay=False),
              help="Output folder (articles/*.parquet, redirects.parquet, manifest.json).")
@click.option("--namespaces", default="0", show_default=True,
              help="Namespaces whose pages become articles, comma-separated.")
@click.option("--lang", default=None, help="Language code, overriding the dump's siteinfo.")
@click.option("--allow-truncated", is_flag=True,
              help="Keep the complete pages of a dump that ends mid-page instead of failing.")
@click.option("--keep-tables", is_flag=True, help="Keep table cell text as paragraphs.")
@click.option("--keep-disambiguation", is_flag=True, help="Keep disambiguation pages.")
@click.option("--keep-lists", is_flag=True, help="Keep list and index pages.")
@click.option("--rows-per-shard", default=50_000, show_default=True, type=click.IntRange(1))
@click.option("--quiet", "-q", is_flag=True, help="No progress lines.")
def parse(inputs, output, namespaces, lang, allow_truncated, keep_tables, keep_disambiguation,
          keep_lists, rows_per_shard, quiet):
    """Parse dumps into articles (sections, sentences, links) as Parquet shards."""
    from .parse import ParseConfig, parse_dump

    config = ParseConfig(
        inputs=list(inputs) or [sample_dump()], output=output, namespaces=_namespaces(namespaces),
        lang=lang, allow_truncated=allow_truncated, keep_tables=keep_tables,
        keep_disambiguation=keep_disambiguation, keep_lists=keep_lists,
        rows_per_shard=rows_per_shard, quiet=quiet, command=sys.argv[:])
    summary = parse_dump(config)
    _print_summary(summary, output)


def _print_summary(summary: dict, output: str) -> None:
    rows = [("pages read", summary["pages"], ""), ("articles written", summary["articles"], ""),
            ("redirects", summary["redirects"],
             f"{summary['redirect_cycles_or_too_deep']:,} in cycles or too deep")]
    rows += [(f"skipped: {reason}", n, "") for reason, n in summary["skipped"].items()]
    if summary["truncated_files"]:
        rows.append(("truncated files", summary["truncated_files"],
                     "complete pages before the cut kept"))
    rows += [("sentences", summary["sentences"], ""), ("links", summary["links"], "")]
    for label, value, note in rows:
        click.echo(f"{label:<24}{value:>10,}" + (f"   ({note})" if note else ""))
    click.echo(f"{'language':<24}{summary['lang']:>10}   sentences: {summary['sentence_splitter']}")
    click.echo(f"{'output':<24}{os.path.abspath(output)}")


if __name__ == "__main__":  # python -m wikipairs.cli: same messages as the installed command
    main(prog_name="wikipairs")
