"""The `wikipairs export` command (registered by wikipairs/cli.py)."""
from __future__ import annotations

import os

import click

from ..cli_options import check_storage
from . import TARGETS, TITLE_SEP, export_build


@click.command("export")
@click.argument("folder", type=click.Path(file_okay=False))
@click.option("--to", "target", required=True, type=click.Choice(list(TARGETS)),
              help="hf: datasets.save_to_disk, every column; sentence-transformers: (anchor, "
                   "positive) for SentenceTransformerTrainer; tevatron: train and corpus jsonl; "
                   "jsonl: every column; beir: corpus, queries, qrels.")
@click.option("--output", "-o", required=True, type=click.Path(file_okay=False),
              help="Folder to write (one subfolder per task); an export there is replaced, "
                   "any other non-empty folder refused.")
@click.option("--task", "tasks", default="all", show_default=True,
              help="Comma-separated tasks among ict,bfs,wlp, or all (those the build has).")
@click.option("--title-sep", default=TITLE_SEP, show_default=True,
              help="sentence-transformers: what stands between title and passage in "
                   "`positive` (the build's doc_ids are [CLS] title [SEP] passage [SEP]).")
def export(folder, target, output, tasks, title_sep):
    """Write a build's pairs for Hugging Face datasets, sentence-transformers, Tevatron, BEIR
    or as JSON lines."""
    check_storage(folder, output)
    info = export_build(folder, target, output, tasks, title_sep=title_sep)
    for task, counts in info["tasks"].items():
        click.echo(f"{task:<8}" + ", ".join(f"{v:,} {k}" for k, v in counts.items()))
    click.echo(f"{'output':<8}{os.path.abspath(output)} ({target})")
