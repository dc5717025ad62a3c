"""Bad input and hostile requests: every one is answered in the one error shape, never a 500 or a
traceback. The reproductions of what was found by hand come first, then fuzzing of the request
vocabulary with hypothesis (every form, text and typed values, the CLI and the API alike)."""

from __future__ import annotations

import io
import json
import math
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vramplan.cli.main import main
from vramplan.errors import VramplanError
from vramplan.requests.answers import fit_answer, inference_answer, lora_answer, seed_answer
from vramplan.requests.fields import (
    ChoiceField,
    DecimalField,
    Field,
    FlagField,
    IntField,
    ListField,
    NameField,
)
from vramplan.requests.reading import read
from vramplan.requests.vocabulary import FIT, INFERENCE, LORA, SEED, Form
from vramplan.web.app import BODY_LIMIT_BYTES, SECURITY_HEADERS, create_app


@pytest.fixture(scope="module")
def server() -> Iterator[TestClient]:
    """The app as a server sees it: an unexpected error is answered, not raised to the test."""
    with TestClient(create_app(), raise_server_exceptions=False) as client:
        yield client


def _error(response: Any, status: int = 422) -> dict[str, Any]:
    assert response.status_code == status, response.text[:300]
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "field", "value", "message", "lang"}
    assert len(body["error"]["value"]) <= 81
    return body["error"]  # type: ignore[no-any-return]


# --- what was found by hand ----------------------------------------------------------------------

def test_a_large_body_is_refused_before_it_is_read(server: TestClient) -> None:
    body = b'{"model": "llama-2-7b", "lora_targets": [' + b'"q",' * 40_000 + b'"v"]}'
    response = server.post("/api/v1/lora", content=body,
                           headers={"content-type": "application/json"})
    assert _error(response, 413)["code"] == "body_too_large"
    assert all(response.headers[name] == value for name, value in SECURITY_HEADERS)


def test_a_large_streamed_body_is_refused_while_it_is_read(server: TestClient) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"model": "llama-2-7b", "lora_targets": ['
        for _ in range(BODY_LIMIT_BYTES // 4 + 1):
            yield b'"q",'
        yield b'"v"]}'

    response = server.post("/api/v1/lora", content=chunks(),
                           headers={"content-type": "application/json"})
    assert _error(response, 413)["code"] == "body_too_large"


@pytest.mark.parametrize("path", [
    "/api/v1/fit?model=llama-2-7b&gpu=h200&batch=1000000&seq_len=10000000",
    "/api/v1/activations?model=llama-2-7b&batch=1000000&seq_len=10000000",
    "/api/v1/inference?model=llama-3.1-405b&context=10000000&batch=1000000&kv_dtype=fp32",
])
def test_valid_but_huge_inputs_are_refused_by_name(server: TestClient, path: str) -> None:
    assert _error(server.get(path))["code"] == "too_many_tokens"


def test_integers_of_thousands_of_digits(server: TestClient) -> None:
    huge = "9" * 5000
    assert _error(server.get(f"/api/v1/fit?model=llama-2-7b&gpu=h100&batch={huge}"))[
        "code"] == "out_of_range"
    out, err = io.StringIO(), io.StringIO()
    assert main(["fit", "--model", "llama-2-7b", "--gpu", "h100", "--batch", huge], out, err) == 2
    assert "Traceback" not in err.getvalue() and len(err.getvalue()) < 400


def test_a_lone_surrogate_in_a_json_string(server: TestClient) -> None:
    response = server.post("/api/v1/estimate", content=b'{"params": 7, "optimizer": "\\ud800"}',
                           headers={"content-type": "application/json"})
    assert _error(response)["field"] == "optimizer"


@pytest.mark.parametrize(("query", "field"), [
    ("/api/v1/lora?model=llama-2-7b&dora=abc", "dora"),
    ("/api/v1/lora?model=llama-2-7b&rslora=nan", "rslora"),
    ("/api/v1/inference?model=llama-2-7b&limits=maybe", "limits"),
    ("/api/v1/estimate?params=7&params=8", "params"),
    ("/api/v1/fit?model=llama-2-7b&gpu=h100&tp=1024", "tensor_parallel"),
    ("/api/v1/fit?model=llama-2-7b&gpu=h100&pp=100000", "pipeline_parallel"),
    ("/api/v1/estimate?params=1e-300", "params"),
    ("/api/v1/lora?model=llama-2-7b&lora_targets=all,all", "lora_targets"),
    ("/api/v1/lora?model=llama-2-7b&lora_targets=q,v,,", "lora_targets"),
    ("/api/v1/fit?model=llama-2-7b&gpu=h100&lora_targets=abc", "lora_targets"),
    ("/api/v1/fit?model=llama-2-7b&gpu=h100&lora_targets=q", "lora_targets"),
])
def test_nonsense_is_refused(server: TestClient, query: str, field: str) -> None:
    assert _error(server.get(query))["field"] == field


def test_an_unexpected_error_is_a_500_in_the_error_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    from vramplan.web.api import catalogue

    def broken() -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(catalogue, "_models_json", broken)
    with TestClient(create_app(), raise_server_exceptions=False) as client:
        response = client.get("/api/v1/models")
        assert _error(response, 500)["code"] == "internal"
        assert all(response.headers[name] == value for name, value in SECURITY_HEADERS)
        assert "boom" not in response.text
        assert client.get("/api/v1/health").status_code == 200  # still serving


def test_control_characters_are_not_printed_raw() -> None:
    out, err = io.StringIO(), io.StringIO()
    assert main(["fit", "--model", "\x1b[31mred", "--gpu", "h100"], out, err) == 2
    assert "\x1b" not in err.getvalue() and "\\x1b" in err.getvalue()


# --- fuzzing the request vocabulary --------------------------------------------------------------

def _text(field: Field[Any]) -> st.SearchStrategy[str]:  # noqa: PLR0911 - one per field kind
    """Text a user could type in the field: its own values, numbers of every size, junk."""
    junk = st.text(max_size=30)
    numbers = st.one_of(st.integers(-10**30, 10**30).map(str),
                        st.floats(allow_nan=True, allow_infinity=True).map(repr),
                        st.sampled_from(["0", "1", "-1", "1e400", "nan", "7,5", " 3 "]))
    if isinstance(field, ChoiceField):
        return st.one_of(st.sampled_from([m.value for m in field.choices]), junk)
    if isinstance(field, ListField):
        names = st.sampled_from([m.value for m in field.item.choices] + ["", "x"])
        return st.one_of(st.lists(names, max_size=4).map(",".join), junk)
    if isinstance(field, FlagField):
        return st.one_of(st.sampled_from(["true", "false", "1", "0", "yes"]), junk)
    if isinstance(field, IntField | DecimalField):
        return st.one_of(numbers, junk)
    if field.name == "model":
        return st.one_of(st.sampled_from(["llama-2-7b", "qwen2.5-0.5b", "mixtral-8x7b"]), junk)
    if field.name == "gpu":
        return st.one_of(st.sampled_from(["h100-80gb", "rtx-4090", "l4"]), junk)
    if field.name == "weights":
        return st.one_of(st.sampled_from(["bf16", "nf4", "q4_k_m", "awq-4bit-g128"]), junk)
    return junk


def _typed(field: Field[Any]) -> st.SearchStrategy[Any]:
    """JSON values of every type, the field's own among them."""
    anything = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20),
                         st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=20),
                         st.lists(st.text(max_size=5), max_size=3))
    if isinstance(field, NameField):
        return st.one_of(_text(field), anything)
    if isinstance(field, IntField):
        return st.one_of(st.integers(-10, 10**12), anything)
    return st.one_of(_text(field), anything)


def _queries(form: Form, values: Any) -> st.SearchStrategy[dict[str, Any]]:
    fields = [f for f in form.fields if f.name != "config"]
    return st.fixed_dictionaries({}, optional={f.name: values(f) for f in fields})


ANSWERS = ((SEED, seed_answer), (FIT, fit_answer), (INFERENCE, inference_answer),
           (LORA, lora_answer))


def _answered_or_refused(form: Form, answer: Any, raw: dict[str, Any], text: bool) -> None:
    try:
        payload = answer(read(form, raw, text=text))
    except VramplanError as error:
        for lang in ("fr", "en"):
            from vramplan.i18n import Lang

            message = error.message(Lang(lang))
            assert message and not message.rstrip().endswith((";", ":"))
        return
    encoded = orjson.dumps(payload)  # every integer within 64 bits, no NaN
    assert b"NaN" not in encoded and not any(
        isinstance(v, float) and not math.isfinite(v) for v in _numbers(payload))


def _numbers(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _numbers(item)
    elif isinstance(value, list):
        for item in value:
            yield from _numbers(item)
    else:
        yield value


FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))


@pytest.mark.parametrize(("form", "answer"), ANSWERS, ids=[f.name for f, _ in ANSWERS])
def test_any_text_is_answered_or_refused_by_name(form: Form, answer: Any) -> None:
    @FUZZ
    @given(_queries(form, _text))
    def check(raw: dict[str, Any]) -> None:
        _answered_or_refused(form, answer, raw, text=True)

    check()


@pytest.mark.parametrize(("form", "answer"), ANSWERS, ids=[f.name for f, _ in ANSWERS])
def test_any_json_value_is_answered_or_refused_by_name(form: Form, answer: Any) -> None:
    @FUZZ
    @given(_queries(form, _typed))
    def check(raw: dict[str, Any]) -> None:
        _answered_or_refused(form, answer, raw, text=False)

    check()


@FUZZ
@given(st.sampled_from(["estimate", "fit", "infer", "lora", "model", "gpus"]),
       st.lists(st.sampled_from(["--params", "--model", "--gpu", "--batch", "--seq-len",
                                 "--method", "--lora-r", "--tp", "--weights", "--context",
                                 "--limits", "--json", "7", "llama-2-7b", "h100", "0", "-1",
                                 "1e999", "x", "--lang", "fr", ""]), max_size=8))
def test_the_cli_answers_or_exits_2_without_a_traceback(command: str, args: list[str]) -> None:
    out, err = io.StringIO(), io.StringIO()
    try:
        status = main([command, *args], out, err)
    except SystemExit as exit_:  # argparse's own usage errors
        status = int(exit_.code or 0)
    assert status in (0, 2)
    assert "Traceback" not in err.getvalue()
    if status == 0 and "--json" in args:
        json.loads(out.getvalue())


# --- config.json files ---------------------------------------------------------------------------

LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64,
         "intermediate_size": 128, "num_attention_heads": 4, "num_key_value_heads": 4,
         "num_hidden_layers": 2, "vocab_size": 256, "max_position_embeddings": 512,
         "rms_norm_eps": 1e-5, "tie_word_embeddings": False}


@pytest.mark.parametrize(("text", "needle"), [
    (json.dumps({**LLAMA, "num_hidden_layers": 10**9}), "n_layers is 1000000000, outside 1 to"),
    (json.dumps({**LLAMA, "hidden_size": 10**18}), "hidden_size is 1000000000000000000"),
    (json.dumps({**LLAMA, "vocab_size": 10**29}), "vocab_size is 1" + "0" * 29 + ", outside"),
    (json.dumps({**LLAMA, "num_hidden_layers": 2}).replace(": 2,", ": " + "9" * 5000 + ",", 1),
     "'num_hidden_layers' is Infinity"),
    (json.dumps({**LLAMA, "num_key_value_heads": 8}), "8 key/value heads do not divide its 4"),
    ("[" * 100_000 + "]" * 100_000, "too deeply"),
])
def test_a_hostile_config_is_refused_by_name(tmp_path: Any, text: str, needle: str) -> None:
    """Sizes a reader would loop over or multiply are bounded (`vramplan.bounds` MODEL_*), and
    the file's JSON cannot exhaust the parser: each command answers at once, exit 2."""
    path = tmp_path / "config.json"
    path.write_text(text, encoding="utf-8")
    for command in (["lora"], ["model"], ["infer"], ["fit", "--gpu", "h100"]):
        out, err = io.StringIO(), io.StringIO()
        assert main([*command, "--config", str(path)], out, err) == 2
        assert needle in err.getvalue() and "--config" in err.getvalue()


def test_a_config_with_a_byte_order_mark_is_read(tmp_path: Any) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(LLAMA), encoding="utf-8-sig")
    out, err = io.StringIO(), io.StringIO()
    assert main(["model", "--config", str(path), "--json"], out, err) == 0
    assert json.loads(out.getvalue())["architecture"]["n_layers"] == 2


def test_paths_that_are_not_config_files(tmp_path: Any) -> None:
    """A FIFO would block a reader forever, a name too long raises OSError, a huge file would be
    read whole: each is refused by name."""
    import os

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (4 * 2**20 + 1))
    for path, needle in ((fifo, "not a regular file"), (tmp_path / ("a" * 300), "cannot be read"),
                         (big, "larger than 4 MiB")):
        out, err = io.StringIO(), io.StringIO()
        assert main(["model", "--config", str(path)], out, err) == 2
        assert needle in err.getvalue()


def test_a_hub_model_error_names_the_model_field(monkeypatch: pytest.MonkeyPatch) -> None:
    """Read from a repo id, a bad config.json is the `--model` option's error."""
    from vramplan.model import resolve

    def bad_repo(ref: Any) -> Any:
        from vramplan.model.hf_config import parse_config

        return resolve.ResolvedModel(ref.label, parse_config({**LLAMA, "num_key_value_heads": 3}),
                                     {})
    monkeypatch.setattr(resolve, "resolve_repo", bad_repo)
    out, err = io.StringIO(), io.StringIO()
    assert main(["model", "acme/broken"], out, err) == 2
    assert err.getvalue().startswith("vramplan: error: --model:")


# --- case files ----------------------------------------------------------------------------------

def test_case_files_that_cannot_be_read_are_refused_by_name(tmp_path: Any) -> None:
    """A FIFO (validate waited forever), a CSV field over the csv module's limit (a traceback), a
    file that is not UTF-8, a missing file: each is one line, exit 2."""
    import os

    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)
    big = tmp_path / "big.csv"
    big.write_text("id,model,method,measured,unit\na," + "x" * 200_000 + ",full,1,GB\n")
    latin = tmp_path / "latin.csv"
    latin.write_bytes("id,model,method,measured,unit\né,x,full,1,GB\n".encode("latin-1"))
    for path, needle in ((fifo, "not a regular file"), (big, "line 2: unreadable CSV"),
                         (latin, "is not UTF-8"), (tmp_path / "none.csv", "does not exist")):
        out, err = io.StringIO(), io.StringIO()
        assert main(["validate", str(path)], out, err) == 2
        assert needle in err.getvalue() and "Traceback" not in err.getvalue()


def test_a_file_that_is_no_case_file_is_not_quoted(tmp_path: Any) -> None:
    """`validate` on a link to a system file named its first line as an unknown column."""
    secret = tmp_path / "passwd"
    secret.write_text("root:x:0:0:root:/root:/bin/bash\n")
    link = tmp_path / "cases.csv"
    link.symlink_to(secret)
    out, err = io.StringIO(), io.StringIO()
    assert main(["validate", str(link)], out, err) == 2
    assert "root:x" not in err.getvalue() and "required column 'id'" in err.getvalue()
