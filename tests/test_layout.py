"""The floors of the house (README, "Layout"): what each folder may import.

- `wikipairs/` core (every module but the CLI): neither apache_beam nor TensorFlow/Keras/JAX, and
  nothing of `wikipairs.pipelines` or `wikipairs.trainer`, even after it has parsed a dump;
- `wikipairs.pipelines`: Beam and the core, never the trainer;
- `wikipairs.trainer`: reads shards; never Beam or the pipelines;
- the CLI (the roof) imports all three openly; a missing extra is one line naming the extra.

Each check runs in a fresh interpreter, so what another test imported does not count.
"""
from __future__ import annotations

import dataclasses
import json
import pkgutil
import subprocess
import sys
import textwrap

import pytest

import wikipairs
from conftest import SAMPLE_DUMP
from wikipairs.records import Negative, Pair
from wikipairs.schemas import HARD_NEGATIVES, PAIR

RUNTIMES = ("apache_beam", "tensorflow", "keras", "jax")


def core_modules() -> list[str]:
    """Every module of the core, in its stage folders too (not the CLI, not the upper floors)."""
    upper = ("wikipairs.pipelines", "wikipairs.schemas", "wikipairs.trainer", "wikipairs.cli",
             "wikipairs.__main__")  # `python -m wikipairs`: the CLI too
    return sorted(m.name for m in pkgutil.walk_packages(wikipairs.__path__, "wikipairs.")
                  if not m.name.startswith(upper))


def loaded_after(code: str) -> list[str]:
    """Top-level runtimes and wikipairs subpackages in sys.modules after running `code`."""
    probe = textwrap.dedent(code) + textwrap.dedent("""
        import json, sys
        print(json.dumps(sorted({m.split(".")[0] for m in sys.modules} & set(RUNTIMES)
                                | {".".join(m.split(".")[:2]) for m in sys.modules
                                   if m.startswith(("wikipairs.pipelines", "wikipairs.trainer"))})))
    """)
    done = subprocess.run([sys.executable, "-c", f"RUNTIMES = {RUNTIMES!r}\n" + probe],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_core_imports_no_runtime_and_no_upper_floor():
    modules = core_modules()
    assert {"wikipairs.parse", "wikipairs.fileio", "wikipairs.reading.page_reader",
            "wikipairs.text.wikitext", "wikipairs.pairs.tasks", "wikipairs.shards.tfrecord",
            "wikipairs.download.http"} <= set(modules)
    imports = "\n".join(f"import {m}" for m in modules)
    assert loaded_after(imports) == []


def test_parsing_a_dump_loads_no_runtime(tmp_path):
    code = f"""
        from wikipairs.parse import ParseConfig, parse_dump
        parse_dump(ParseConfig(inputs=[{str(SAMPLE_DUMP)!r}], output={str(tmp_path)!r}, quiet=True))
    """
    assert loaded_after(code) == []
    assert (tmp_path / "manifest.json").exists()


def test_pipelines_do_not_import_the_trainer():
    loaded = loaded_after("import wikipairs.pipelines.driver, wikipairs.pipelines.transforms")
    assert "apache_beam" in loaded
    assert not any(m.startswith("wikipairs.trainer") for m in loaded), loaded
    assert not {"tensorflow", "keras", "jax"} & set(loaded), loaded


def test_trainer_does_not_import_beam_or_the_pipelines():
    loaded = loaded_after("import wikipairs.trainer.cli, wikipairs.trainer.reqa.cli, "
                          "wikipairs.trainer.data, wikipairs.trainer.reqa.data")
    assert "apache_beam" not in loaded and "wikipairs.pipelines" not in loaded, loaded


def test_pair_record_is_the_pair_schema():
    """`Pair` (the core's dataclass) and schemas/pair.py declare the same fields in one order;
    the last, `negatives`, holds the Negatives that become the HARD_NEGATIVES lists."""
    assert [f.name for f in dataclasses.fields(Pair)] == [f.name for f in PAIR] + ["negatives"]
    assert {f.name for f in dataclasses.fields(Negative)} | {"page_id", "passage_id"} >= {
        f.name.removeprefix("neg_") for f in HARD_NEGATIVES}


@pytest.mark.parametrize("module", ["keras", "tensorflow"])
def test_a_missing_extra_is_one_line_naming_it(tmp_path, module):
    """With the train extra's module made unimportable, `wikipairs train pretrain` on a folder
    that passes the data and settings checks (made before Keras loads: a real vocabulary) fails
    with one line naming the extra, and status 2."""
    from wikipairs.pairs.vocab import train_vocab

    (tmp_path / "data" / "ict").mkdir(parents=True)
    (tmp_path / "data" / "ict" / "part-00000-of-00001.tfrecord.gz").write_bytes(b"")
    vocab = tmp_path / "spm.model"
    train_vocab([f"sentence {k} of a small vocabulary for the check" for k in range(200)],
                str(vocab), vocab_size=60)
    command = ["train", "pretrain", "--data", str(tmp_path / "data"), "--vocab", str(vocab),
               "--output", str(tmp_path / "out")]
    done = run_without(module, command)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr[-3000:]
    assert len(lines) == 1 and "pip install 'wikipairs[train]'" in lines[0], lines
    assert lines[0].startswith("wikipairs: error: 'wikipairs train' needs "), lines


def run_without(module: str, command: list[str]) -> subprocess.CompletedProcess:
    """`wikipairs COMMAND` in a fresh interpreter where `module` cannot be imported."""
    code = textwrap.dedent(f"""
        import sys
        class Missing:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] == {module!r}:
                    raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        sys.meta_path.insert(0, Missing())
        from wikipairs.cli import main
        main({command!r}, prog_name="wikipairs")
    """)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)


def test_beam_is_the_build_extra(tmp_path):
    """Without apache_beam, `wikipairs parse` runs and `wikipairs build` is one line naming the
    `beam` extra (status 2), leaving no output behind."""
    parsed = run_without("apache_beam", ["parse", "-o", str(tmp_path / "articles"), "--quiet"])
    assert parsed.returncode == 0, parsed.stderr[-3000:]
    assert (tmp_path / "articles" / "manifest.json").exists()
    built = run_without("apache_beam", ["build", "-o", str(tmp_path / "pairs")])
    lines = built.stderr.strip().splitlines()
    assert built.returncode == 2, built.stderr[-3000:]
    assert lines == ["wikipairs: error: 'wikipairs build' needs apache_beam, which is not "
                     "installed: pip install 'wikipairs[beam]'"], lines
    assert not (tmp_path / "pairs" / "manifest.json").exists()


def test_a_reader_only_install_pulls_neither_tensorflow_nor_beam():
    """`pip install wikipairs` without extras (parse, vocab, verify, stats, show, download,
    export to jsonl/tevatron/beir): the closure of its requirements, as this environment's
    installed metadata declares them, holds neither TensorFlow, Keras, JAX nor Apache Beam."""
    import importlib.metadata as metadata
    import re

    def name(requirement: str) -> str:
        return re.split(r"[\s;\[<>=!~(]", requirement, 1)[0].lower().replace("_", "-")

    def base(requirements) -> list[str]:  # those not under an extra marker
        return [r for r in requirements or () if "extra ==" not in r.replace('"', "'")
                and "extra==" not in r]

    seen, todo = set(), [name(r) for r in base(metadata.requires("wikipairs"))]
    while todo:
        package = todo.pop()
        if package in seen:
            continue
        seen.add(package)
        try:
            todo += [name(r) for r in base(metadata.requires(package))]
        except metadata.PackageNotFoundError:
            pass  # an environment marker left it out here (another platform's dependency)
    assert {"mwxml", "pyarrow", "numpy"} <= seen, seen  # the walk reaches transitive ones
    heavy = {"tensorflow", "tensorflow-text", "keras", "jax", "apache-beam", "torch"}
    assert not seen & heavy, sorted(seen & heavy)
