"""`wikipairs build`: the Beam pipeline that turns dumps into ICT, BFS and WLP pair shards.

The driver does what must happen once, before the workers start: plan the splits, read each
file's siteinfo, pick (or train) the Punkt model, load the vocabulary. Then it runs the pipeline
(pipelines/build.py wires the transforms) and, when the run succeeded, writes stats.json and
then manifest.json, last. A failed or interrupted run leaves no manifest.
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import re
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass, field, replace

import apache_beam as beam
from apache_beam.metrics.metric import MetricsFilter
from apache_beam.options.pipeline_options import PipelineOptions

from wikipairs import __version__, fileio
from wikipairs.records import SiteInfo
from wikipairs.schemas import SCHEMA_VERSION
from wikipairs.errors import WikipairsError
from wikipairs.shards.layout import FORMATS, remove_empty_format_folders, replaced_folders
from wikipairs.pairs.tasks import TASKS, PairConfig
from wikipairs.parse import ParseConfig, check_one_wiki, open_header, training_text
from wikipairs.progress import LineWriter, ProgressLines
from wikipairs.text import template_drops
from wikipairs.text.sentences import SentenceSplitter
from wikipairs.text.tokens import token_measure
from wikipairs.shards.card import CARD, build_card, check_card, write_card
from wikipairs.shards.output import (MANIFEST, OWN_SHARD_FILE, TMP_SUFFIX, copy_vocab, file_entry,
                              prepare_output, sha256_file, write_json)
from wikipairs.reading import expand_inputs
from wikipairs.reading.splits import (PARTS_PER_FILE, STREAMS_PER_SPLIT, auto_workers,
                                     input_work_bytes, plan_splits)

from .build import build_pipeline, eval_shards
from .notes import NOTES, read_notes
from .offline import (check_credentials, check_dataflow_reachable, check_names, check_reachable,
                      check_runner, cloud_error, dry_run_plan, validation_error)
from .transforms import NAMESPACE

LOG = "build.log"
WORKDIR = ".work"  # plain copies of compressed dumps without an index; removed at the end
BYTES_PER_SHARD = 128 << 20  # automatic shard count: one shard per this much compressed input
# A DirectRunner worker process takes ~3 s of a core to start (Beam's and wikipairs' imports)
# and each stage then runs on every worker: on 2 cores a second worker pays for itself from
# ~8 MB of bz2 dump (benchmarks/build_workers.py).
BYTES_PER_WORKER = 8 << 20


@dataclass
class BuildConfig:
    inputs: list[str]
    output: str
    tasks: tuple[str, ...] = TASKS
    formats: tuple[str, ...] = FORMATS
    vocab: str | None = None
    pairs: PairConfig = field(default_factory=PairConfig)
    parse: ParseConfig | None = None  # namespaces, language, truncation, tables, skips
    num_shards: int = 0  # WLP shards; 0: from the input size (ICT, BFS: one shard per split)
    streams_per_split: int = STREAMS_PER_SPLIT
    parts_per_file: int = PARTS_PER_FILE
    redirects: str = "auto"  # "memory" | "join" | "auto" (see redirects_in_memory)
    runner: str = "DirectRunner"
    workers: int = 0  # DirectRunner processes (0: auto_workers) or Dataflow workers
    dry_run: bool = False
    beam_args: list[str] = field(default_factory=list)
    quiet: bool = False
    log_to_file: bool = False  # Beam's and its workers' stderr go to DIR/build.log
    command: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)  # eval sets (shards.audit.Exclusion)


class BuildError(WikipairsError):
    pass


def title_capacity(input_bytes: int) -> int:
    """Titles the Bloom filter is sized for: enwiki has about one per KB of compressed dump."""
    return max(100_000, input_bytes // 1000)


# Below this much compressed input (~0.5M redirects at English Wikipedia's ratio, ~100 MB as a
# Python dict) WLP resolves link targets through one in-memory redirect table, a side input;
# above it, by keyed joins that never hold the table (enwiki: ~11M redirects, ~24 GB of input).
REDIRECTS_IN_MEMORY_MAX_BYTES = 1 << 30


def redirects_in_memory(config: "BuildConfig", input_bytes: int) -> bool:
    if config.redirects not in ("auto", "memory", "join"):
        raise BuildError(f"--redirects must be auto, memory or join, not {config.redirects!r}")
    if config.redirects != "auto":
        return config.redirects == "memory"
    return input_bytes <= REDIRECTS_IN_MEMORY_MAX_BYTES


def auto_shards(input_bytes: int) -> int:
    return max(1, math.ceil(input_bytes / BYTES_PER_SHARD))


def limit_malloc_arenas(arenas: int = 2) -> None:
    """Fewer glibc malloc arenas for this process (the DirectRunner's runner) and, through the
    environment, for the worker processes it starts. Beam's gRPC threads each get an arena by
    default (up to 8 per core), and memory freed in one stays mapped: with 2 the peak RSS of a
    build is ~10% lower and grows ~1.1x instead of ~1.2x for a 2x larger dump, at the same
    speed (benchmarks/build_throughput.py). A no-op off glibc or where MALLOC_ARENA_MAX is set."""
    if "MALLOC_ARENA_MAX" in os.environ or not sys.platform.startswith("linux"):
        return
    os.environ["MALLOC_ARENA_MAX"] = str(arenas)  # read by glibc when a worker starts
    try:
        import ctypes
        ctypes.CDLL("libc.so.6").mallopt(-8, arenas)  # M_ARENA_MAX, for this running process
    except (OSError, AttributeError):
        pass


def _runner_args(config: BuildConfig) -> list[str]:
    args = [f"--runner={config.runner}"]
    if config.runner in ("DirectRunner", "direct"):
        workers = config.workers or os.cpu_count() or 1
        args += [f"--direct_num_workers={workers}",
                 "--direct_running_mode=" + ("multi_processing" if workers > 1 else "in_memory")]
    elif config.runner == "DataflowRunner":
        if config.workers:
            args.append(f"--num_workers={config.workers}")
        given = " ".join(config.beam_args)
        if "--setup_file" not in given and "--extra_package" not in given:
            args.append(f"--setup_file={staging_file()}")
        if config.dry_run:
            args += ["--dry_run=True", "--no_auth"]
    return args + list(config.beam_args)


def staging_file() -> str:
    """pyproject.toml of the source tree wikipairs runs from, for Dataflow to stage the package."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.path.join(root, "pyproject.toml")
    if not os.path.exists(path):
        raise BuildError("DataflowRunner needs the package staged for workers: run from a source "
                         "checkout or pass --extra_package wikipairs-<version>.whl")
    return path


def _clean_output(config: BuildConfig) -> None:
    try:
        # Refuses, deleting nothing, where a task folder (this layout's or an older build's)
        # holds files no build wrote there (or README.md or spm.model is someone's own); then
        # the old manifest goes first.
        check_card(config.output, "wikipairs build")
        shard_folders = replaced_folders(TASKS)
        prepare_output(config.output, "wikipairs build",
                       {**{sub: OWN_SHARD_FILE for sub in shard_folders}, NOTES: None,
                        WORKDIR: None}, vocab=config.vocab)
        for sub in shard_folders + [NOTES, WORKDIR]:
            fileio.rmtree(fileio.join(config.output, sub))
        remove_empty_format_folders(config.output)
        for name in ("stats.json", "stats.json" + TMP_SUFFIX, CARD, LOG):
            if fileio.exists(fileio.join(config.output, name)):
                fileio.remove(fileio.join(config.output, name))
    except OSError as e:
        raise BuildError(f"{config.output}: cannot write the output there "
                         f"({e.strerror or e})") from None


def build(config: BuildConfig) -> dict:
    """Run the build; returns the stats (or the dry run's job summary). Raises WikipairsError."""
    parse = config.parse or ParseConfig(inputs=config.inputs, output=config.output)
    config = preflight(config)
    if config.dry_run:  # reads no bucket and no input: one split per input, as given
        splits, sites = dry_run_plan(config.inputs, parse.lang)
    else:
        splits = plan_splits(config.inputs, config.streams_per_split, config.parts_per_file)
    paths = sorted({s.path for s in splits}, key=[s.path for s in splits].index)
    if not config.dry_run:
        readers = {p: open_header(p, lang=parse.lang) for p in paths}  # XML, HTML, passages
        # (as given: a path given twice is one split but still an error)
        check_one_wiki([(p, readers[p]) for p in expand_inputs(config.inputs) if p in readers])
        sites = {p: reader.site for p, reader in readers.items()}
    lang = sites[paths[0]].lang
    method = parse.sentence_splitter
    texts = (training_text(paths, parse.lang, parse.allow_truncated)
             if SentenceSplitter.needs_training_text(method) and not config.dry_run else [])
    splitter = SentenceSplitter.for_language(lang, texts, method=method)
    tokenizer = None
    if config.vocab:
        from wikipairs.pairs.vocab import Tokenizer
        if not os.path.exists(config.vocab):
            raise BuildError(f"{config.vocab}: no such SentencePiece model")
        tokenizer = Tokenizer(config.vocab)
    exclude = None
    if config.exclude:
        from wikipairs.shards.audit import load_exclusion
        from wikipairs.text.titles import TitleParser
        exclude = load_exclusion(config.exclude, TitleParser(sites[paths[0]]).normalize)
    input_bytes = 0 if config.dry_run else sum(fileio.size(p) for p in paths)  # one look each
    num_shards = config.num_shards or auto_shards(input_bytes)
    in_memory = redirects_in_memory(config, input_bytes)
    if not config.dry_run:
        _clean_output(config)
    local = not fileio.is_url(config.output) and not config.dry_run
    progress_dir = os.path.join(config.output, WORKDIR, "progress") if local and not config.quiet \
        else None
    if config.runner in ("DirectRunner", "direct") and not config.dry_run:
        limit_malloc_arenas()
        if not config.workers:
            config = replace(config, workers=auto_workers(
                os.cpu_count() or 1, input_work_bytes(paths), BYTES_PER_WORKER, units=len(splits)))
    options = PipelineOptions(_runner_args(config))
    try:
        pipeline = beam.Pipeline(options=options)
    except ValueError as e:  # Beam's option validation, its reasons on one line
        raise validation_error(e) or e
    build_pipeline(pipeline, splits=splits, sites=sites, splitter=splitter, parse=parse,
                   pairs=config.pairs, tasks=config.tasks, formats=config.formats,
                   tokenizer=tokenizer, num_shards=num_shards, output=config.output,
                   title_capacity=title_capacity(input_bytes),
                   redirects_in_memory=in_memory, exclude=exclude,
                   workdir=fileio.join(config.output, WORKDIR), progress_dir=progress_dir)
    if config.dry_run and config.runner != "DataflowRunner":  # only Dataflow has a dry run
        return {"dry_run": True, "runner": config.runner, "splits": len(splits), "job": None}
    started = time.monotonic()
    try:
        with _stderr_to(_log_path(config)) as terminal, \
                _progress_lines(progress_dir, terminal, config.runner):
            result = pipeline.run()
            result.wait_until_finish()
    except Exception as e:  # a worker's DumpError comes back wrapped by the runner
        with contextlib.suppress(OSError):
            fileio.rmtree(fileio.join(config.output, WORKDIR))
        raise _input_error(e) or cloud_error(e) or validation_error(e) or e
    if config.dry_run:
        return {"dry_run": True, "runner": config.runner, "splits": len(splits),
                "job": getattr(result, "job", None)}
    counters = _counters(result)
    stats = _stats(config, read_notes(config.output), counters, time.monotonic() - started)
    stats.update(lang=lang, sentence_splitter=splitter.source,
                 tokens=token_measure(config.vocab), num_shards=num_shards, splits=len(splits),
                 redirects="memory" if in_memory else "join",
                 eval_percent=config.pairs.eval_percent)
    if exclude is not None:
        stats["excluded"] = {**exclude.summary(), **{
            k: v for k, v in stats["counters"].items() if "excluded_eval" in k}}
    write_json(fileio.join(config.output, "stats.json"), stats)
    _write_manifest(config, paths, num_shards, len(splits), stats, sites[paths[0]])
    for folder in (NOTES, WORKDIR):
        with contextlib.suppress(OSError):
            fileio.rmtree(fileio.join(config.output, folder))
    return stats


def preflight(config: BuildConfig) -> BuildConfig:
    """The config with the runner's canonical name, after the checks made before any input is
    read (pipelines/offline.py): the runner, the project ID, every gs:// bucket name, all
    without a request; then, for a real run on GCS or Dataflow, whether the storage host
    answers (seconds, rather than a minute of retries per request). Raises WikipairsError."""
    runner, warning = check_runner(config.runner)
    if warning and warning not in _WARNED:
        _WARNED.add(warning)
        print(f"wikipairs: warning: {warning}", file=sys.stderr)
    config = replace(config, runner=runner)
    from apache_beam.options.pipeline_options import GoogleCloudOptions
    cloud = PipelineOptions(config.beam_args).view_as(GoogleCloudOptions)
    locations = [(f"--{name}", getattr(cloud, name)) for name in
                 ("temp_location", "staging_location", "template_location")
                 if getattr(cloud, name, None)]
    check_names([("--input", p) for p in config.inputs] + [("--output", config.output)]
                + locations, cloud.project if runner == "DataflowRunner" else None)
    if config.dry_run and runner == "DataflowRunner" and not any(
            re.match(r"gs://[^/]+/", loc or "") for loc in (cloud.temp_location,
                                                            cloud.staging_location)):
        # Without one usable location Beam looks up (or creates) a default bucket, online.
        raise BuildError("a DataflowRunner dry run needs --temp_location gs://BUCKET/PATH (a "
                         "dry run reads no bucket, so it cannot look up a default one)")
    remote = any(fileio.is_url(p) for p in [*config.inputs, config.output])
    if not config.dry_run and (runner == "DataflowRunner" or remote):
        check_reachable()
        if runner == "DataflowRunner":
            check_dataflow_reachable(cloud.dataflow_endpoint)
        if runner == "DataflowRunner" or not os.environ.get("STORAGE_EMULATOR_HOST"):
            check_credentials()  # the emulator is anonymous; Dataflow's API is not
    return config


_WARNED: set[str] = set()


_WORKER_ERROR = re.compile(r"(?:wikipairs\.errors\.)?(?:Truncated)?DumpError: (.+)")


def _input_error(error: Exception) -> WikipairsError | None:
    """The input error a worker raised (bad or truncated dump), if that is what failed the run."""
    if isinstance(error, WikipairsError):  # raised in-process; the runner added its stage name
        return type(error)(str(error).split(" [while running")[0])
    match = _WORKER_ERROR.search(str(error))
    if match is None:
        return None
    message = match.group(1).split(" [while running")[0].strip().strip("'\"")
    return BuildError(message)


def _log_path(config: BuildConfig) -> str | None:
    if not config.log_to_file:
        return None
    if fileio.is_url(config.output) or config.dry_run:  # Beam's log stays on this machine
        return os.path.join(tempfile.gettempdir(), f"wikipairs-build-{os.getpid()}.log")
    return os.path.join(config.output, LOG)


@contextlib.contextmanager
def _stderr_to(path: str | None):
    """Send file descriptor 2 (inherited by Beam's worker processes, which print their own
    tracebacks) to `path` for the duration; yields a file descriptor of the real stderr."""
    if path is None:
        yield 2
        return
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    sys.stderr.flush()
    saved = os.dup(2)
    with open(path, "ab") as log:
        os.dup2(log.fileno(), 2)
        try:
            yield saved
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)


@contextlib.contextmanager
def _progress_lines(folder: str | None, fd: int, runner: str, every: float = 5.0):
    """Progress lines on `fd` while the pipeline runs (when: wikipairs.progress): pages parsed,
    pages/s, pairs written so far (ICT and BFS; WLP pairs come after the join), summed over the
    splits' progress notes. A thread of its own, since the runner blocks this one."""
    if folder is None:
        yield
        return
    stop, lines = threading.Event(), ProgressLines(LineWriter.to_fd(fd), every)

    def report():
        while True:
            last = stop.wait(lines.throttle.seconds_left())
            pages, pairs = _summed_progress_notes(folder)
            lines.report(pages, lambda rate: _progress_line(pages, rate, pairs), final=last)
            if last:  # the final line is written: the run has ended
                return

    thread = threading.Thread(target=report, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def _summed_progress_notes(folder: str) -> tuple[int, Counter]:
    """Pages read and pairs written per task, summed over the splits' notes
    (transforms.SplitProgress)."""
    pages, pairs = 0, Counter()
    for name in (os.listdir(folder) if os.path.isdir(folder) else []):
        try:
            with open(os.path.join(folder, name)) as f:
                note = json.load(f)
        except (OSError, ValueError):
            continue
        pages += note["pages"]
        pairs.update(note["pairs"])
    return pages, pairs


def _progress_line(pages: int, rate: float, pairs: Counter) -> str:
    done = ", ".join(f"{t.upper()} {n:,}" for t, n in sorted(pairs.items()))
    return f"  {pages:,} pages parsed ({rate:,.0f}/s), pairs written: {done or 'none yet'}"


def _counters(result) -> dict[str, int]:
    """The pipeline's "wikipairs" counters (committed values where the runner has them)."""
    totals: dict[str, int] = {}
    query = result.metrics().query(MetricsFilter().with_namespace(NAMESPACE))
    for counter in query["counters"]:
        value = counter.committed if counter.committed is not None else counter.attempted
        totals[counter.key.metric.name] = totals.get(counter.key.metric.name, 0) + value
    return totals


def _stats(config: BuildConfig, notes: list[dict], counters: dict, seconds: float) -> dict:
    tasks = {}
    for task in config.tasks:
        mine = [n for n in notes if n["task"] == task]
        pairs = sum(n["pairs"] for n in mine)
        q = sum(n["query_tokens"] for n in mine)
        d = sum(n["doc_tokens"] for n in mine)
        tasks[task] = {"pairs": pairs, "tokens": q + d,
                       "mean_query_tokens": round(q / pairs, 2) if pairs else 0.0,
                       "mean_doc_tokens": round(d / pairs, 2) if pairs else 0.0,
                       "splits": {s: sum(n.get("splits", {}).get(s, 0) for n in mine)
                                  for s in ("train", "eval")},
                       "eval_dropped_query_on_train_page":
                           counters.get(f"{task}_eval_dropped_query_on_train_page", 0)}
    return {"tasks": tasks,
            "counters": dict(sorted(template_drops.without_per_name(counters).items())),
            # the wikitext path's templates dropped in running text, per name (top names)
            "templates_dropped_inline": template_drops.summary(counters),
            "seconds": round(seconds, 1)}


def _write_manifest(config: BuildConfig, paths: list[str], num_shards: int, splits: int,
                    stats: dict, site: SiteInfo) -> None:
    """The copied vocabulary and the dataset card (README.md), then manifest.json, which lists
    them, last."""
    notes = read_notes(config.output)
    files = [f for n in sorted(notes, key=lambda n: (n["task"], n["shard"])) for f in n["files"]]
    train = {task: num_shards if task == "wlp" else splits for task in config.tasks}
    expected = sum(len(config.formats) * (n + eval_shards(n, config.pairs.eval_percent))
                   for n in train.values())  # each task's train shards, then its eval shards
    if len(files) != expected:
        raise BuildError(f"{config.output}: {len(files)} shard files written, expected {expected}")
    manifest = {
        "tool": "wikipairs build", "version": __version__, "schema_version": SCHEMA_VERSION,
        "command": config.command,
        "config": _config_dict(config), "seed": config.pairs.seed, "versions": _versions(),
        "inputs": [{"path": fileio.abspath(p), "bytes": fileio.size(p),
                    "sha256": sha256_file(p)} for p in paths],
        "shards": files,
        "stats": {"path": "stats.json", "sha256": sha256_file(fileio.join(config.output,
                                                                          "stats.json"))},
    }
    if config.vocab:  # config.vocab keeps the path given, for reference
        manifest.update(copy_vocab(config.output, config.vocab))
    card = write_card(config.output, build_card(manifest, stats, site.dbname, site.base))
    manifest["card"] = file_entry(config.output, card)
    write_json(fileio.join(config.output, MANIFEST), manifest)


def _config_dict(config: BuildConfig) -> dict:
    out = asdict(config)
    for key in ("command", "quiet", "output"):
        out.pop(key, None)
    if out.get("parse"):
        out["parse"] = {k: v for k, v in out["parse"].items()
                        if k not in ("inputs", "output", "command", "quiet")}
    return out


def _versions() -> dict:
    from importlib import metadata
    versions = {"python": sys.version.split()[0]}
    for package in ("wikipairs", "apache-beam", "mwxml", "mwparserfromhell", "nltk", "pyarrow",
                    "sentencepiece", "protobuf"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            pass
    return versions


__all__ = ["BuildConfig", "build", "preflight", "auto_shards", "staging_file"]
