"""Localized MediaWiki names of every Wikipedia: namespace aliases and image options.

A dump's siteinfo gives each namespace's main name only, not the aliases its wiki also accepts
(Vietnamese `Hình:` for `Tập tin:`, Japanese `画像:` for `ファイル:`, Chinese `分類:`), nor the
localized image options (`nhỏ`, `trái`, `mini`, `links`, `250ピクセル`). Both come from the
`mwconstants` package (Wikimedia Research), which records what each wiki's siteinfo API says.

Only mwconstants' data modules are loaded, from their files: the package's own `__init__` imports
`requests` and the modules that call the web API, which wikipairs never needs.
"""
from __future__ import annotations

import functools
import importlib.util
import os
import re
from dataclasses import dataclass
from types import ModuleType

# Codes a dump may carry (dbname or xml:lang) for wikis that mwconstants files under another code.
_CODE_ALIASES = {"be-tarask": "be-x-old", "nb": "no", "yue": "zh-yue", "lzh": "zh-classical",
                 "nan": "zh-min-nan", "sgs": "bat-smg", "rup": "roa-rup", "vro": "fiu-vro"}


@functools.lru_cache(maxsize=None)
def _constants(name: str) -> ModuleType:
    """mwconstants.constants.<name>, executed alone (the package __init__ is not run)."""
    package = importlib.util.find_spec("mwconstants")  # a top-level find_spec imports nothing
    if package is None or not package.submodule_search_locations:
        raise ImportError("wikipairs needs the mwconstants package (pip install mwconstants)")
    path = os.path.join(list(package.submodule_search_locations)[0], "constants", f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"wikipairs._mwconstants_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _wiki_code(lang: str) -> str:
    lang = (lang or "en").lower().replace("_", "-")
    return _CODE_ALIASES.get(lang, lang)


@dataclass(frozen=True)
class LocalNamespace:
    """One namespace of a wiki as mwconstants lists it: the wiki's own name for it, its canonical
    (English) name where that differs, and the other names the wiki accepts for it."""

    local: str
    canonical: str
    aliases: tuple[str, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return (self.local, self.canonical, *self.aliases)


@functools.lru_cache(maxsize=None)
def local_namespaces(lang: str) -> tuple[LocalNamespace, ...]:
    """The namespaces of the `lang` Wikipedia with their names and aliases; () for a wiki that
    mwconstants does not know. mwconstants leaves "canonical" out where the local name is it."""
    table = _constants("c_namespaces").NAMESPACE_ALIASES.get(_wiki_code(lang), {})
    return tuple(LocalNamespace(local, entry.get("canonical") or local,
                                tuple(entry.get("aliases") or ()))
                 for local, entry in table.items())


@dataclass(frozen=True)
class ImageOptionWords:
    """The words that make a part of `[[File:X.jpg|...|...]]` a display option rather than the
    caption, in one wiki's language plus English (MediaWiki accepts both). Case-sensitive, as
    MediaWiki's image magic words are."""

    keywords: frozenset[str]  # whole options: thumb, nhỏ, trái, mini, links, サムネイル
    params: frozenset[str]  # names of name=value options: alt, link, upright, verweis, リンク
    prefixes: tuple[str, ...]  # options that start so: "page ", "upright ", "seite_"
    suffixes: tuple[str, ...]  # size units after a number: px, ピクセル, 像素

    def is_option(self, part: str) -> bool:
        """Whether `part` (one |-separated part after the file name) is a display option."""
        part = part.strip()
        if part in self.keywords:
            return True
        name, equals, _ = part.partition("=")
        if equals and name.strip() in self.params:
            return True
        if any(part.startswith(prefix) and len(part) > len(prefix) for prefix in self.prefixes):
            return True
        size, unit = _SIZE.match(part).groups()
        # A unit counts only after a number ("250px", "x200px"): mwconstants' Arabic "endswith"
        # forms are plain word endings that captions have too.
        return bool(unit) and any(ch.isdigit() for ch in size) and unit.strip() in self.suffixes


_SIZE = re.compile(r"(\d*(?:\s*x\s*\d+)?)\s*(.*)", re.S)


@functools.lru_cache(maxsize=None)
def image_option_words(lang: str) -> ImageOptionWords:
    """The image display options of the `lang` Wikipedia (English ones included), from
    mwconstants' IMG_OPTION_ALIASES and DEF_OPTION_TAGS."""
    media = _constants("c_media")
    local = media.IMG_OPTION_ALIASES.get(_wiki_code(lang), {})

    def words(kind: str) -> list[str]:
        return [*media.DEF_OPTION_TAGS.get(kind, ()), *local.get(kind, ())]

    return ImageOptionWords(keywords=frozenset(words("keywords")), params=frozenset(words("params")),
                            prefixes=tuple(dict.fromkeys(words("startswith"))),
                            suffixes=tuple(dict.fromkeys(words("endswith"))))


__all__ = ["ImageOptionWords", "LocalNamespace", "image_option_words", "local_namespaces"]
