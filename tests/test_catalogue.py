"""The message catalogue: both languages for every key, with the same placeholders; every key the
code asks for exists; every field of the request vocabulary has its words, and no error ends with
an empty hint."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest

from vramplan.errors import MissingValue
from vramplan.i18n import Lang, translate
from vramplan.i18n.catalogue import CATALOG
from vramplan.parts import PartKind
from vramplan.planner.changes import ChangeKind, QualityCost, SpeedCost
from vramplan.presets.optimizers import OptimizerPreset
from vramplan.requests.fields import DecimalField, IntField
from vramplan.requests.vocabulary import all_fields
from vramplan.training.result import Phase
from vramplan.vocab import (
    Attention,
    Checkpointing,
    Engine,
    Framework,
    Generation,
    LoraTarget,
    Loss,
    Method,
    Metric,
    Offload,
    Optimizer,
    Precision,
    Quant,
    Scheme,
)

SOURCES = Path(__file__).resolve().parents[1] / "src" / "vramplan"
NAMESPACES = sorted({key.split(".", 1)[0] for key in CATALOG})
NAMESPACE = "|".join(NAMESPACES)
LITERAL_KEY = re.compile(rf"""["'](?P<key>(?:{NAMESPACE})\.[A-Za-z0-9_.]*[A-Za-z0-9])["']""")
"""A string literal that is a whole catalogue key: `"error.missing"`, `t('web.results')`; a
prefix the code completes (`'fit.col_' ~ col`) ends with `_` or `.` and is not one."""
FILE_NAMES = (".html", ".json")
DATA = ("presets",)
"""Folders of data, not messages: a model preset's strings are config.json values and module
names (`model.embed_tokens`)."""


def _placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


@pytest.mark.parametrize("key", sorted(CATALOG))
def test_both_languages_with_the_same_placeholders(key: str) -> None:
    messages = CATALOG[key]
    assert set(messages) == set(Lang), f"{key}: languages {sorted(messages)}"
    assert _placeholders(messages[Lang.FR]) == _placeholders(messages[Lang.EN]), key
    assert all(text.strip() for text in messages.values()), key


def _literal_keys() -> set[str]:
    found: set[str] = set()
    for path in SOURCES.rglob("*"):
        if path.suffix in (".py", ".html") and not {"i18n", *DATA} & set(path.parts):
            found |= {m["key"] for m in LITERAL_KEY.finditer(path.read_text(encoding="utf-8"))}
    return {key for key in found if not key.endswith(FILE_NAMES)}


def test_every_key_written_in_the_code_exists() -> None:
    literal = _literal_keys()
    assert len(literal) > 100  # the scan finds the keys the code names (a broken regex finds none)
    missing = sorted(key for key in literal if key not in CATALOG)
    assert not missing


@pytest.mark.parametrize(("prefix", "names"), [
    ("part.", [kind.value for kind in PartKind]),
    ("change.", [kind.value for kind in ChangeKind]),
    ("speed.", [cost.value for cost in SpeedCost]),
    ("quality.", [cost.value for cost in QualityCost]),
    ("training_phase.", [phase.value for phase in Phase]),
    ("optimizer.", [preset.value for preset in OptimizerPreset]),
    ("sister.infer.engine.", [engine.value for engine in Engine]),
    ("sister.lora.target.", [target.value for target in LoraTarget]),
    # the page's words for every option and setting (vramplan.web.labels)
    ("web_fit.method.", [m.value for m in Method if m is not Method.INFERENCE]),
    ("web_fit.precision.", [p.value for p in Precision]),
    ("web_fit.sharding.", [scheme.value for scheme in Scheme]),
    ("web_fit.offload.", [offload.value for offload in Offload]),
    ("web_fit.checkpointing.", [mode.value for mode in Checkpointing]),
    ("web_fit.attention.", [kernel.value for kernel in Attention]),
    ("web_fit.loss.", [loss.value for loss in Loss]),
    ("web_fit.optimizer.", [optimizer.value for optimizer in Optimizer]),
    ("web_fit.quant.", [quant.value for quant in Quant]),
    ("web_fit.metric.", [metric.value for metric in Metric]),
    ("web_fit.framework.", [framework.value for framework in Framework]),
    ("web_fit.source.", [kind.value for kind in ChangeKind]),
    ("web_fit.generation.", [generation.value for generation in Generation]),
], ids=lambda value: value if isinstance(value, str) else "")
def test_every_key_built_from_an_enum_exists(prefix: str, names: list[str]) -> None:
    """Keys the code builds as `prefix + member` (f-strings, templates' `~`)."""
    assert not [name for name in names if prefix + name not in CATALOG]


@pytest.mark.parametrize("field", all_fields(), ids=lambda field: field.name)
def test_every_field_has_its_words_and_a_hint(field: object) -> None:
    from vramplan.requests.fields import Field

    assert isinstance(field, Field)
    for lang in Lang:
        assert translate(field.help_key, lang).strip()
        hint = field.accepted(lang)
        assert hint.strip() and "{" not in hint
        if isinstance(field, IntField | DecimalField):
            assert translate(f"what.{field.name}", lang) in hint
        message = MissingValue(field.name).message(lang)
        assert not message.rstrip().endswith((";", ":")), message
        assert message.rstrip().endswith(hint.rstrip()), message
