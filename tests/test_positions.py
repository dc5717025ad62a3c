"""A sequence past a learned position table is refused on every interface: the run would fail
(GPT-2's table holds 1,024 positions: its config.json `n_positions`; OPT's 2,048:
`max_position_embeddings`). Rotary models past their trained context are still estimated, and so
is a published row, whose run had the table it needed."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from vramplan.cli.main import main
from vramplan.validation import Outcome, parse_cases, score_cases, shipped_cases


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out, err)
    return status, out.getvalue(), err.getvalue()


def test_a_published_row_past_the_table_is_still_estimated() -> None:
    """A run that was measured had a table long enough (a config changed from the preset's):
    `vramplan validate` estimates it, where a request is refused."""
    header = shipped_cases("cases.csv").splitlines()[0]
    row = ("r,s,gpt2,full,mixed,adamw,foreach,none,,,1,4096,,none,eager,standard,1,a100-80gb,"
           "none,none,hf,allocated,10,GB,")
    parsed = parse_cases("\n".join((header, row)))
    (score,) = score_cases(parsed.cases).scores
    assert score.outcome is Outcome.SCORED


@pytest.mark.parametrize(("argv", "message"), [
    (("estimate", "--model", "gpt2", "--seq-len", "2048", "--lang", "en"),
     "--seq-len 2048: the model learns a table of 1024 positions; past it no token has a "
     "position and the model fails; give at most 1024"),
    (("estimate", "--model", "gpt2", "--seq-len", "2048", "--lang", "fr"),
     "--seq-len 2048 : le modèle apprend une table de 1024 positions ; au-delà, aucun jeton n'a "
     "de position et le modèle échoue ; donnez au plus 1024"),
    (("infer", "--model", "opt-1.3b", "--context", "4096", "--lang", "en"),
     "--context 4096: the model learns a table of 2048 positions"),
    (("fit", "--model", "gpt2", "--seq-len", "4096", "--gpu", "h100-80gb", "--lang", "en"),
     "--seq-len 4096: the model learns a table of 1024 positions"),
    (("trace", "--model", "gpt2", "--seq-len", "2048", "--lang", "en"),
     "--seq-len 2048: the model learns a table of 1024 positions"),
])
def test_the_cli_refuses_it_with_exit_2(argv: tuple[str, ...], message: str) -> None:
    status, out, err = run(*argv)
    assert (status, out) == (2, "")
    assert message in err and "Traceback" not in err


@pytest.mark.parametrize(("argv", "key", "tokens"), [
    (("fit", "--model", "gpt2", "--gpu", "h100-80gb"), "seq_len", 1024),
    (("fit", "--model", "gpt2", "--gpu", "h100-80gb", "--seq-len", "512"), "seq_len", 512),
    (("fit", "--model", "llama-2-7b", "--gpu", "h100-80gb"), "seq_len", 2048),
    (("infer", "--model", "opt-1.3b"), "context", 2048),
    (("infer", "--model", "llama-2-7b"), "context", 4096),
])
def test_a_default_past_the_table_is_cut_to_it(argv: tuple[str, ...], key: str,
                                                tokens: int) -> None:
    """Left out, the field's default (2,048 tokens to train, 4,096 of context) stops at a
    learned table; a rotary model keeps it. The answer states the tokens it counted."""
    status, out, _ = run(*argv, "--json")
    assert status == 0
    assert set(_values(json.loads(out), key)) == {tokens}


def _values(payload: Any, key: str) -> list[Any]:
    """Every value of `key` anywhere in a JSON answer."""
    if isinstance(payload, dict):
        return [v for k, v in payload.items() if k == key] + [
            found for v in payload.values() for found in _values(v, key)]
    if isinstance(payload, list):
        return [found for v in payload for found in _values(v, key)]
    return []


def test_a_rotary_model_past_its_context_is_still_estimated() -> None:
    status, _, _ = run("estimate", "--model", "llama-2-7b", "--seq-len", "8192")
    assert status == 0


@pytest.mark.parametrize(("path", "query", "field"), [
    ("/api/v1/estimate", {"model": "gpt2", "seq_len": "2048"}, "seq_len"),
    ("/api/v1/inference", {"model": "gpt2", "context": "1025"}, "context"),
    ("/api/v1/activations", {"model": "gpt2", "batch": "1", "seq_len": "1025"}, "seq_len"),
])
def test_the_api_answers_422(client: Any, path: str, query: dict[str, str], field: str) -> None:
    response = client.get(path, params=query)
    assert response.status_code == 422
    error = response.json()["error"]
    assert (error["code"], error["field"]) == ("conflict.learned_positions", field)
    assert "give at most 1024" in error["message"]
