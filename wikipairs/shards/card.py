"""The dataset card (DIR/README.md) of a `wikipairs build` or `wikipairs parse` output folder.

This module owns what the card says and the rule for when a run may replace a README.md. A card
is rendered from the dicts the run also writes (the manifest, stats.json or the parse counts) and
the wiki's siteinfo: what the records are, their schema, the counts, how they were made (command,
seed, inputs with sha256, language, sentence splitter, token measure) and the license. Its YAML
front matter names one Hugging Face `configs:` entry per Parquet folder (DIR/parquet/<task>),
so that `datasets.load_dataset(DIR, "ict")` reads a task's Parquet shards.

The card is written just before the manifest, which lists it (size and sha256) like any output.
"""
from __future__ import annotations

import json
import os
import re
import shlex

from .. import fileio
from .layout import SUFFIXES, shards_by_split, task_folder, train_shard_count
from .output import OutputError
from wikipairs.schemas import ARTICLE, REDIRECT, SCHEMA_VERSION, markdown_table, pair_fields

CARD = "README.md"
# The first line after the front matter: how a later run knows the README.md is its own.
_MARK = "<!-- Dataset card written by {tool}; the next run into this folder replaces it. -->"
_MARK_PREFIX = "<!-- Dataset card written by wikipairs"

PAPER = ('Wei-Cheng Chang, Felix X. Yu, Yin-Wen Chang, Yiming Yang and Sanjiv Kumar, '
         '"Pre-training Tasks for Embedding-based Large-scale Retrieval", ICLR 2020 '
         '([arXiv:2002.03932](https://arxiv.org/abs/2002.03932))')

_TASK_NAMES = {"ict": "Inverse Cloze Task (ICT)", "bfs": "Body First Selection (BFS)",
               "wlp": "Wiki Link Prediction (WLP)"}

# Dump files keep Wikimedia's names: enwiki-20240601-pages-articles-multistream1.xml-p1p41242.bz2
# and Enterprise HTML dumps theirs: frwiki-NS0-20231123-ENTERPRISE-HTML.json.tar.gz
_DUMP_NAME = re.compile(r"^([a-z][a-z0-9_]*)-(?:NS\d+-)?(\d{8}|latest)-")
_WIKI_WORD = re.compile(r"^([a-z][a-z0-9_]*(?:wiki|wiktionary|wikibooks|wikinews|wikiquote|"
                        r"wikisource|wikiversity|wikivoyage))(?=[-_.])")


# ---- the folder: may this run write README.md? ------------------------------------------------

def check_card(folder: str, tool: str) -> None:
    """OutputError, before anything is deleted, where `folder` holds a README.md that no wikipairs
    run wrote: a run writes its card there, and must not overwrite someone's own README."""
    path = fileio.join(folder, CARD)
    if fileio.exists(path) and not _is_card(fileio.read_text(path)):
        raise OutputError(f"{path}: not written by wikipairs, and {tool} writes its dataset card "
                          f"there: move it away or choose another output folder (nothing was "
                          f"deleted)")


def remove_card(folder: str) -> None:
    """Remove the previous run's card (checked by check_card), so that a run that fails leaves no
    card describing output that is no longer there."""
    path = fileio.join(folder, CARD)
    if fileio.exists(path):
        fileio.remove(path)


def write_card(folder: str, text: str) -> str:
    """Write the card (never half written); returns its path."""
    path = fileio.join(folder, CARD)
    fileio.write_atomic(path, text.encode("utf-8"))
    return path


def _is_card(text: str) -> bool:
    return text.startswith("---\n") and _MARK_PREFIX in text


# ---- the build card ---------------------------------------------------------------------------

def build_card(manifest: dict, stats: dict, dbname: str = "", base: str = "") -> str:
    """The card of a build folder: `manifest` as the driver writes it (the card's own entry not
    yet in it), `stats` as in stats.json, `dbname` and `base` from the dump's siteinfo."""
    config = manifest["config"]
    tasks = [t for t in config["tasks"] if t in stats["tasks"]]
    wiki = _wiki(manifest, dbname)
    parquet = "parquet" in config["formats"]
    configs = [(t, files) for t in tasks if (files := _task_data_files(manifest, stats, t))] \
        if parquet else []
    total = sum(stats["tasks"][t]["pairs"] for t in tasks)
    title = f"Retrieval pre-training pairs from {wiki}: {', '.join(t.upper() for t in tasks)}"
    return "\n".join([
        _front_matter(stats["lang"], ["text-retrieval", "sentence-similarity"], total, title,
                      configs),
        _MARK.format(tool="wikipairs build"),
        "",
        f"# {title}",
        "",
        f"Query-document pairs for pre-training two-tower retrievers, made by "
        f"wikipairs {manifest['version']} (`wikipairs build`) from the "
        f"{_dump_phrase(manifest, wiki)}, following {PAPER}, Section 3.",
        "",
        "## The tasks",
        "",
        *_task_rules(config, tasks),
        "## Counts",
        "",
        *_counts_table(stats, manifest, tasks),
        "## Files",
        "",
        *_build_files(config, tasks, parquet, any("validation" in c for _, c in configs)),
        "## Schema",
        "",
        *_schema_intro(config["formats"]),
        markdown_table(pair_fields(config.get("vocab") is not None)),
        "",
        *_provenance(manifest, stats, [
            f"- Seed: {manifest['seed']} (every sampled choice is a stable hash of seed, task, "
            f"page and position: the same inputs and seed give the same pairs)",
            f"- Tokens: {_token_measure(stats['tokens'])}",
        ]),
        *_license(wiki, base, "pairs"),
    ])


def _task_data_files(manifest: dict, stats: dict, task: str) -> dict[str, list[str]]:
    """Hugging Face split -> a task's Parquet shard files that hold rows (`datasets` fails on a
    file with none): `train` the train shards, `validation` the eval shards after them
    (wikipairs/shards/layout.py); a split without rows is left out; a build without that layout,
    all files as `train`."""
    folder = task_folder("", "parquet", task)
    entries = [e for e in manifest["shards"]
               if os.path.dirname(e["path"]) == folder and e["path"].endswith(".parquet")]
    total = {int(os.path.basename(e["path"]).split("-of-")[1].split(".")[0]) for e in entries}
    train = train_shard_count(task, stats, total.pop()) if len(total) == 1 else None
    split = shards_by_split([e["path"] for e in entries if e.get("rows", 1)],
                            len(entries) if train is None else train)
    return {name: split[key] for name, key in (("train", "train"), ("validation", "eval"))
            if split[key]}


def _task_rules(config: dict, tasks: list[str]) -> list[str]:
    pairs = config["pairs"]
    passages = (f"A passage is consecutive sentences of one section, packed until the document "
                f"(`[CLS] title [SEP] passage [SEP]`) would pass {pairs['doc_max_tokens']} tokens.")
    keep = (f" A seeded {pairs['ict_keep_rate']:g} of documents keep the query sentence "
            f"(`query_in_doc`)." if pairs.get("ict_keep_rate") else "")
    queries = pairs.get("ict_queries", 1)
    each = ("one pair: a seeded sentence of it is the query" if queries == 1 else
            f"up to {queries} pairs, one per query sentence (a seeded choice, then other "
            f"sentences in a seeded order)")
    rules = {
        "ict": f"{passages} Each passage of at least two sentences gives {each}, and the "
               f"document is the page title with the rest of the passage.{keep}",
        "bfs": "The query is a seeded sentence of a page's lead section; the document is the "
               "title with a passage of the same page outside the lead, one pair per such "
               "passage.",
        "wlp": f"For each page B that links to page A (redirects resolved, A != B), the query is "
               f"a seeded lead sentence of A and the document is B's title with the first passage "
               f"of B holding the link (B's first passage where the link lies outside the text; "
               f"`link_in_doc` says which). At most {pairs['wlp_docs_per_page']} documents per "
               f"query page.",
    }
    lines = []
    for task in tasks:
        lines += [f"- **{_TASK_NAMES[task]}** (`{task}`): {rules[task]}"]
    return lines + [
        f"- Queries have at least {pairs['min_query_tokens']} tokens and fit "
        f"{pairs['query_max_tokens']} with `[CLS]` and `[SEP]`; documents over "
        f"{pairs['doc_max_tokens']} tokens have their passage cut."
        + (f" At most {pairs['pairs_per_page']} ICT and BFS pairs per page."
           if pairs.get("pairs_per_page") else ""),
        ""]


def _counts_table(stats: dict, manifest: dict, tasks: list[str]) -> list[str]:
    # The columns of the paper's Table 1, as `wikipairs stats` prints them.
    lines = ["The columns of the paper's Table 1, from `stats.json`:", "",
             "| task | pairs | tokens | mean query tokens | mean doc tokens | shards |",
             "|---|---:|---:|---:|---:|---:|"]
    for task in tasks:
        s = stats["tasks"][task]
        shards = sorted({os.path.basename(e["path"]).split(".")[0] for e in manifest["shards"]
                         if os.path.basename(os.path.dirname(e["path"])) == task})
        lines.append(f"| {task} | {s['pairs']:,} | {s['tokens']:,} | "
                     f"{s['mean_query_tokens']:.2f} | {s['mean_doc_tokens']:.2f} | "
                     f"{len(shards)} |")
    counters = stats.get("counters", {})
    read = ", ".join(f"{counters[k]:,} {k.replace('_', ' ')}"
                     for k in ("pages_read", "articles", "redirects") if k in counters)
    return lines + ["", f"From {read}." if read else "", "", *_split_lines(stats, tasks),
                    *_excluded_lines(stats, tasks)]


def _split_lines(stats: dict, tasks: list[str]) -> list[str]:
    """Both splits' counts (schema version 3 builds; nothing for older stats)."""
    if not all("splits" in stats["tasks"][t] for t in tasks):
        return []
    percent = stats.get("eval_percent")
    lines = ["## Splits", "", f"Column `split`: a pair is `eval` when its query page is one of the "
             f"{percent:g}% of pages a stable hash of the page id picks (the same page on the "
             f"same side in every task, under any seed); an eval pair whose query text is also a "
             f"train pair's query is left out (`dropped`). Hugging Face: `train` and "
             f"`validation`." if percent is not None else "Column `split`.", "",
             "| task | train | eval | dropped |", "|---|---:|---:|---:|"]
    for task in tasks:
        s = stats["tasks"][task]
        lines.append(f"| {task} | {s['splits']['train']:,} | {s['splits']['eval']:,} | "
                     f"{s.get('eval_dropped_query_on_train_page', 0):,} |")
    return lines + [""]


def _excluded_lines(stats: dict, tasks: list[str]) -> list[str]:
    """`build --exclude`: the eval sets left out, and what that dropped per reason."""
    excluded = stats.get("excluded")
    if not excluded:
        return []
    counters = stats.get("counters", {})
    dropped = [f"{counters.get('pages_excluded_eval_title', 0):,} pages by title"] + [
        f"{counters.get(f'{t}_excluded_eval_ngram', 0):,} {t.upper()} pairs sharing a "
        f"13-token n-gram and {counters.get(f'{t}_excluded_eval_answer', 0):,} whose query is "
        f"an answer sentence" for t in tasks]
    return ["## Decontamination", "", f"`--exclude` against {', '.join(excluded['files'])} "
            f"({excluded['titles']:,} titles, {excluded['ngrams']:,} n-grams): left out "
            + ", ".join(dropped) + ".", ""]


def _build_files(config: dict, tasks: list[str], parquet: bool, validation: bool) -> list[str]:
    kinds = {"parquet": "Parquet (zstd)",
             "tfrecord": "TFRecord (gzip, one `tf.train.Example` per pair)"}
    lines = [f"- `{task_folder('', f, '<task>')}/part-NNNNN-of-MMMMM{SUFFIXES[f]}`: the pairs, as "
             f"{kinds[f]}." for f in config["formats"]]
    if validation:
        lines.append("- A task's shards are its train shards, then its eval shards: the pairs of "
                     "the held-out query pages (`split` = `eval`) are in the last shard files "
                     "of each task.")
    if parquet:
        splits = ("splits `train` (the train shards) and `validation` (the eval shards), each "
                  "file named" if validation else "all rows in split `train`")
        lines.append(f'- `datasets.load_dataset("DIR", "{tasks[0]}")` reads the Parquet shards of '
                     f"a task (the `configs:` of this card's metadata): {splits}. Any Parquet "
                     f"reader takes a task's folder as it is, both splits together (filter on "
                     f"column `split`): `pandas.read_parquet(\"DIR/parquet/{tasks[0]}\")`, "
                     f"`datasets.load_dataset(\"parquet\", data_dir=\"DIR/parquet/{tasks[0]}\")`.")
    if config.get("vocab"):
        lines.append(f"- `spm.model`: the SentencePiece model of the token ids (a copy of "
                     f"`{os.path.basename(config['vocab'])}`, with its pieces in `spm.vocab` "
                     f"where that was beside it).")
    return lines + [
        "- `stats.json`: the counts above and the pipeline's counters (skips by reason).",
        "- `manifest.json`: command, configuration, package versions, and every file with its "
        "size and sha256; `wikipairs verify DIR` checks them.",
        ""]


def _schema_intro(formats: list[str]) -> list[str]:
    version = (f" Pair schema version {SCHEMA_VERSION} (`schema_version` in manifest.json): "
               f"`passage_id` names a page passage in every task, `doc_id` an exact document, "
               f"for corpora and qrels.")
    if "tfrecord" not in formats:
        return ["One row per pair." + version, ""]
    return ["One row per pair, the same fields in each format (in a `tf.train.Example`, strings "
            "are `bytes_list`, integers and booleans `int64_list`)." + version, ""]


def _token_measure(tokens: str) -> str:
    if tokens.startswith("sentencepiece:"):
        return f"SentencePiece pieces of `{tokens.split(':', 1)[1]}` (`{tokens}`)"
    return (f"words and punctuation marks, script-aware: scripts without spaces are cut into "
            f"short runs (`{tokens}`, wikipairs/text/tokens.py)")


# ---- the parse card ---------------------------------------------------------------------------

def parse_card(manifest: dict, dbname: str = "", base: str = "") -> str:
    """The card of a parse folder: `manifest` as parse writes it (the card's own entry not yet
    in it; its `counts` are parse_stats.json)."""
    counts = manifest["counts"]
    wiki = _wiki(manifest, dbname)
    title = f"Parsed articles of {wiki}"
    return "\n".join([
        _front_matter(counts["lang"], ["text-retrieval"], counts["articles"], title,
                      [("articles", {"train": "articles/*.parquet"}),
                       ("redirects", {"train": "redirects.parquet"})]),
        _MARK.format(tool="wikipairs parse"),
        "",
        f"# {title}",
        "",
        f"The articles of the {_dump_phrase(manifest, wiki)}, parsed by wikipairs "
        f"{manifest['version']} (`wikipairs parse`): markup removed, "
        f"sections and paragraphs split into sentences, links with their anchors and "
        f"redirect-resolved targets; and the wiki's redirect table. `wikipairs build` makes "
        f"retrieval pre-training pairs from the same parse ({PAPER}).",
        "",
        "## Counts",
        "",
        *_parse_counts(counts),
        "## Files",
        "",
        "- `articles/part-NNNNN-of-MMMMM.parquet`: one row per article "
        '(`datasets.load_dataset("DIR", "articles")`).',
        '- `redirects.parquet`: one row per redirect (`datasets.load_dataset("DIR", '
        '"redirects")`).',
        "- `parse_stats.json`: the counts above.",
        "- `manifest.json`: command, configuration, and every file with its size and sha256; "
        "`wikipairs verify DIR` checks them.",
        "",
        "## Schema",
        "",
        "### Article",
        "",
        markdown_table(ARTICLE),
        "",
        "### Redirect",
        "",
        markdown_table(REDIRECT),
        "",
        *_provenance(manifest, counts, []),
        *_license(wiki, base, "articles"),
    ])


def _parse_counts(counts: dict) -> list[str]:
    lines = ["| | count |", "|---|---:|"]
    for key in ("pages", "articles", "redirects", "sentences", "links"):
        lines.append(f"| {key} | {counts[key]:,} |")
    for reason, n in counts.get("skipped", {}).items():
        lines.append(f"| pages skipped: {reason} | {n:,} |")
    return lines + [""]


# ---- parts of both cards ----------------------------------------------------------------------

def _front_matter(lang: str, categories: list[str], rows: int, title: str,
                  configs: list[tuple[str, dict[str, str | list[str]]]]) -> str:
    """Hugging Face's card metadata, `configs` as (config name, split -> a glob pattern or a list
    of files). Written by hand, not by a YAML library (the core has none): strings as JSON, which
    YAML reads as double-quoted scalars."""
    q = json.dumps
    lines = ["---", "license: cc-by-sa-4.0", "language:", f"- {q(lang)}", "task_categories:",
             *[f"- {c}" for c in categories], "size_categories:", f"- {_size_category(rows)}",
             f"pretty_name: {q(title)}", "tags:", "- wikipedia", "- wikipairs"]
    if configs:
        lines.append("configs:")
    for name, splits in configs:
        lines += [f"- config_name: {name}", "  data_files:"]
        for split, path in splits.items():  # a glob pattern, or a list of files
            files = [f"    path: {q(path)}"] if isinstance(path, str) else \
                ["    path:", *[f"    - {q(p)}" for p in path]]
            lines += [f"  - split: {split}", *files]
    return "\n".join(lines + ["---"])


def _size_category(rows: int) -> str:
    """Hugging Face's size_categories bucket: n<1K, 1K<n<10K, ..., n>1T."""
    bounds = ["1K", "10K", "100K", "1M", "10M", "100M", "1B", "10B", "100B", "1T"]
    if rows < 1000:
        return "n<1K"
    for i, upper in enumerate(bounds[1:], 1):
        if rows < 10 ** (i + 3):
            return f"{bounds[i - 1]}<n<{upper}"
    return "n>1T"


def _wiki(manifest: dict, dbname: str) -> str:
    """The wiki's dbname (siteinfo), else the one in the dump's file name."""
    if dbname:
        return dbname
    for entry in manifest["inputs"]:
        match = _DUMP_NAME.match(os.path.basename(entry["path"]))
        if match:
            return match.group(1)
    return "a Wikimedia wiki"


def _dump_phrase(manifest: dict, wiki: str) -> str:
    """The dump, as in "`enwiki` dump of 2024-06-01 (files below)": the date where the file
    names carry one."""
    dates = sorted({dump_date(e["path"]) for e in manifest["inputs"]} - {None})
    when = f" of {' and '.join(dates)}" if dates else ""
    return f"`{wiki}` dump{when} (files below)"


def wiki_name(paths: list[str], lang: str = "") -> str:
    """The wiki of a run's input files when only their names are known: the dbname in
    Wikimedia's file names (enwiki-20240601-...), else a leading xxwiki- word (enwiki-sample...),
    else the language's Wikipedia."""
    for path in paths:
        match = _DUMP_NAME.match(os.path.basename(path)) or _WIKI_WORD.match(
            os.path.basename(path))
        if match:
            return match.group(1)
    return f"{lang}wiki" if lang else "a Wikimedia wiki"


def dump_date(path: str) -> str | None:
    """The dump date in a Wikimedia file name (YYYY-MM-DD, or latest), else None."""
    match = _DUMP_NAME.match(os.path.basename(path))
    if match is None:
        return None
    day = match.group(2)
    return day if day == "latest" else f"{day[:4]}-{day[4:6]}-{day[6:]}"


def _provenance(manifest: dict, stats: dict, extra: list[str]) -> list[str]:
    lines = ["## How it was made", "",
             f"- Command: `{_command(manifest.get('command') or [])}`",
             *extra,
             f"- Language: `{stats['lang']}`",
             f"- Sentence splitter: `{stats['sentence_splitter']}`",
             f"- wikipairs {manifest['version']}",
             "", "Input dump files:", "", "| file | bytes | sha256 |", "|---|---:|---|"]
    for entry in manifest["inputs"]:
        lines.append(f"| `{os.path.basename(entry['path'])}` | {entry['bytes']:,} | "
                     f"`{entry['sha256']}` |")
    return lines + [""]


def _command(argv: list[str]) -> str:
    # argv[0] is wherever the program was started from (a venv, `python -m wikipairs.cli`).
    return shlex.join(["wikipairs", *argv[1:]]) if argv else "(not recorded)"


def _license(wiki: str, base: str, what: str) -> list[str]:
    site = re.sub(r"(https?://[^/]+).*", r"\1", base) if base else ""
    source = f"[{wiki}]({site})" if site else f"`{wiki}`"
    return [
        "## License and attribution",
        "",
        f"The text comes from {source}, written by its contributors, whose text is available "
        f"under the [Creative Commons Attribution-ShareAlike 4.0 License]"
        f"(https://creativecommons.org/licenses/by-sa/4.0/) (CC BY-SA 4.0) and the "
        f"[GNU Free Documentation License](https://www.gnu.org/licenses/fdl-1.3.html) (GFDL). "
        f"These {what} are adapted from it (markup removed, text split and recombined) and are "
        f"shared under CC BY-SA 4.0: reuse them with attribution to the wiki's contributors "
        f"(page titles and ids are in every row; each page's history lists its authors) and "
        f"under the same license.",
        "",
    ]
