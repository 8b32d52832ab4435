"""The options Beam's PipelineOptions know, so that `wikipairs build` can refuse the others.

PipelineOptions keeps any flag it does not know and ignores it, so a typo (--temp_locaton)
would silently leave a setting at its default. Here the flags go through the very parser
PipelineOptions parses with (every PipelineOptions subclass's options) before the build starts.
"""
from __future__ import annotations

import argparse

from apache_beam.options.pipeline_options import PipelineOptions


class BeamOptionError(ValueError):
    """A flag Beam knows with a value it refuses (--num_workers=many), or one lacking its value."""


def _beam_parser() -> argparse.ArgumentParser:
    """The parser of PipelineOptions.get_all_options, with every subclass's options added; the
    callback is its public way to hand the parser out."""
    parsers = []
    PipelineOptions([]).get_all_options(add_extra_args_fn=parsers.append)
    parser = parsers[-1]
    parser.error = _raise_option_error  # argparse would print its usage and exit the process
    return parser


def _raise_option_error(message: str):
    if message.startswith("ambiguous option: "):  # as Beam's parser: no prefix matching
        return
    raise BeamOptionError(message)


def beam_option_names() -> list[str]:
    """Every flag Beam knows (--project, --temp_location, --direct_num_workers, ...)."""
    return [flag for action in _beam_parser()._actions for flag in action.option_strings
            if flag.startswith("--")]


def unknown_beam_args(args: list[str]) -> list[str]:
    """The arguments of `args` Beam does not know (an unknown flag, then any value given to it).
    Raises BeamOptionError for a known flag with a bad or missing value."""
    _, unknown = _beam_parser().parse_known_args(args)
    return unknown


__all__ = ["BeamOptionError", "beam_option_names", "unknown_beam_args"]
