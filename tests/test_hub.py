"""Any model on the Hugging Face Hub: a repo id that is not a preset is read through
huggingface_hub, against a loopback server that answers as the Hub does (its `resolve` endpoint,
`X-Repo-Commit`, `ETag`, `X-Error-Code`), reached through `HF_ENDPOINT`. Never the network.

Each test gets an empty cache (`HF_HUB_CACHE`); the server counts the requests it answers.
"""

from __future__ import annotations

import hashlib
import io
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

pytest.importorskip("huggingface_hub")

from vramplan.cli.main import main
from vramplan.i18n import Lang
from vramplan.model.hub import HubError, RepoRef, fetch_config, parse_repo_ref
from vramplan.model.resolve import UnknownModel, resolve_model

COMMIT = "0123456789abcdef0123456789abcdef01234567"
TOKEN = "hf_loopback_test_token"
QWEN3_TINY = {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 64,
              "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 4,
              "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 100,
              "max_position_embeddings": 256, "tie_word_embeddings": True}
TINY_COUNT = 100 * 64 + 2 * (4 * 16 * 64 * 2 + 2 * 2 * 16 * 64 + 2 * 16 + 3 * 64 * 96
                             + 2 * 64) + 64
"""Qwen3 with a tied head: embedding, per block q/o (64 x 64 each), k/v (32 x 64 each), the q/k
norms (16 each), the MLP (3 x 64 x 96) and two norms; the final norm."""

REPOS: dict[str, dict[str, object]] = {
    "acme/tiny-qwen3": {"config": QWEN3_TINY},
    "acme/gated-qwen3": {"config": QWEN3_TINY, "gated": True},
    "acme/gguf-only": {"config": None},
    "acme/slow": {"config": QWEN3_TINY, "delay": 3.0},
    "acme/not-a-model": {"config": {"model_type": "bert", "hidden_size": 8}},
}


class _Hub(BaseHTTPRequestHandler):
    """`/{org}/{name}/resolve/{revision}/{file}`, as huggingface.co answers it."""

    protocol_version = "HTTP/1.1"
    requests: list[str] = []  # noqa: RUF012 - shared with the tests, reset by the fixture

    def log_message(self, format: str, *args: object) -> None:
        return

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def do_GET(self) -> None:
        self._answer(body=True)

    def _answer(self, body: bool) -> None:
        _Hub.requests.append(f"{self.command} {self.path}")
        parts = self.path.split("?")[0].strip("/").split("/")
        if len(parts) != 5 or parts[2] != "resolve":
            self._error(404, "RepoNotFound")
            return
        repo, revision, filename = f"{parts[0]}/{parts[1]}", parts[3], parts[4]
        entry = REPOS.get(repo)
        if entry is None:
            self._error(401, "RepoNotFound")
            return
        if entry.get("gated") and self.headers.get("authorization") != f"Bearer {TOKEN}":
            self._error(401, "GatedRepo")
            return
        if revision not in ("main", COMMIT):
            self._error(404, "RevisionNotFound")
            return
        time.sleep(float(entry.get("delay", 0.0)))  # type: ignore[arg-type]
        if filename != "config.json" or entry["config"] is None:
            self._error(404, "EntryNotFound", commit=True)
            return
        data = json.dumps(entry["config"]).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("ETag", f'"{hashlib.sha1(data).hexdigest()}"')
        self.send_header("X-Repo-Commit", COMMIT)
        self.end_headers()
        if body:
            self.wfile.write(data)

    def _error(self, status: int, code: str, commit: bool = False) -> None:
        self.send_response(status)
        self.send_header("X-Error-Code", code)
        self.send_header("Content-Length", "0")
        if commit:
            self.send_header("X-Repo-Commit", COMMIT)
        self.end_headers()


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        return  # a client that gave up (the timeout test) closes its connection mid-answer


@pytest.fixture(scope="module")
def hub_url() -> Iterator[str]:
    server = _QuietServer(("127.0.0.1", 0), _Hub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture
def hub(hub_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The loopback Hub as HF_ENDPOINT, an empty cache, no token, online."""
    monkeypatch.setenv("HF_ENDPOINT", hub_url)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub-cache"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    for name in ("HF_TOKEN", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_ETAG_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)
    _Hub.requests = []
    return hub_url


@pytest.fixture
def abandoned_calls_end() -> Iterator[None]:
    """A test whose call is abandoned at its deadline waits, when it ends, for that call's thread
    (`hub._download_within`): huggingface_hub keeps retrying a refused or silent endpoint, and each
    failed connection closes its shared client (`close_session`), which would fail the next
    test's call in flight."""
    yield
    for thread in threading.enumerate():
        if thread.name.startswith("hub ") and thread is not threading.current_thread():
            thread.join(timeout=120)


def _hub_error(ref: str) -> HubError:
    with pytest.raises(HubError) as raised:
        fetch_config(parse_repo_ref(ref) or RepoRef(ref))
    return raised.value


# --- repo ids -------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "repo", "revision"), [
    ("Qwen/Qwen3-8B", "Qwen/Qwen3-8B", None),
    (" acme/tiny-qwen3@v1.0 ", "acme/tiny-qwen3", "v1.0"),
    ("org/name@" + COMMIT, "org/name", COMMIT),
])
def test_repo_ids_are_recognised(text: str, repo: str, revision: str | None) -> None:
    assert parse_repo_ref(text) == RepoRef(repo, revision)


@pytest.mark.parametrize("text", ["llama-3.1-8b", "a/b/c", "/name", "org/", "org/../x",
                                  "org/name@", "path/to/config.json/"])
def test_other_text_is_no_repo_id(text: str) -> None:
    assert parse_repo_ref(text) is None


# --- the Hub through huggingface_hub ----------------------------------------------------------


def test_a_repo_id_is_read_from_the_hub_and_counted(hub: str) -> None:
    resolved = resolve_model("acme/tiny-qwen3")
    assert resolved.preset is None
    assert resolved.name == "acme/tiny-qwen3"
    assert resolved.config == QWEN3_TINY
    assert resolved.arch.family == "qwen3"
    assert resolved.arch.params_total == TINY_COUNT
    assert resolved.source == f"{hub}/acme/tiny-qwen3/blob/main/config.json"
    assert any(request.startswith("GET /acme/tiny-qwen3/resolve/main/config.json")
               for request in _Hub.requests)


def test_a_revision_is_asked_for(hub: str) -> None:
    resolve_model(f"acme/tiny-qwen3@{COMMIT}")
    assert any(f"/resolve/{COMMIT}/config.json" in request for request in _Hub.requests)


def test_the_cache_answers_offline(hub: str, monkeypatch: pytest.MonkeyPatch) -> None:
    resolve_model("acme/tiny-qwen3")
    _Hub.requests = []
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert resolve_model("acme/tiny-qwen3").arch.params_total == TINY_COUNT
    assert _Hub.requests == []


def test_offline_without_a_cached_copy_says_so(hub: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    error = _hub_error("acme/tiny-qwen3")
    assert error.reason == "offline"
    assert "HF_HUB_OFFLINE" in error.message(Lang.EN)
    assert _Hub.requests == []


def test_a_gated_repo_needs_a_token(hub: str, monkeypatch: pytest.MonkeyPatch) -> None:
    error = _hub_error("acme/gated-qwen3")
    assert error.reason == "gated"
    assert error.message(Lang.EN) == (
        "model: acme/gated-qwen3 is gated on the Hugging Face Hub; accept its conditions on its "
        "page, then set HF_TOKEN to a token of that account")
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    assert resolve_model("acme/gated-qwen3").arch.params_total == TINY_COUNT


def test_a_missing_repo_revision_or_config_each_say_what_is_wrong(hub: str) -> None:
    assert _hub_error("acme/nothing-here").reason == "repo_not_found"
    assert _hub_error("acme/tiny-qwen3@no-such-branch").reason == "revision_not_found"
    error = _hub_error("acme/gguf-only")
    assert error.reason == "no_config"
    assert "GGUF" in error.message(Lang.EN)


def test_an_unsupported_model_type_from_the_hub_names_it(hub: str) -> None:
    from vramplan.model.hf_config import UnsupportedModelType

    with pytest.raises(UnsupportedModelType) as raised:
        resolve_model("acme/not-a-model")
    assert "'bert' is not supported" in raised.value.message(Lang.EN)


def test_a_server_that_does_not_answer_in_time_times_out(
        hub: str, monkeypatch: pytest.MonkeyPatch, abandoned_calls_end: None) -> None:
    monkeypatch.setenv("HF_HUB_ETAG_TIMEOUT", "0.5")
    started = time.monotonic()
    error = _hub_error("acme/slow")
    assert time.monotonic() - started < 2.5
    assert error.reason == "timeout"
    assert error.message(Lang.EN) == (
        "model: the Hub did not answer within 0.5 s for acme/slow; try again, or raise "
        "HF_HUB_ETAG_TIMEOUT")


def _dead_endpoint() -> str:
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_no_server_at_the_endpoint_is_unreachable_at_once(
        hub: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    dead = _dead_endpoint()
    monkeypatch.setenv("HF_ENDPOINT", dead)
    started = time.monotonic()
    error = _hub_error("acme/tiny-qwen3")
    # huggingface_hub alone retries a refused connection five times with backoff, logging each
    assert time.monotonic() - started < 2.0
    assert not any("Retrying" in record.getMessage() for record in caplog.records)
    assert error.reason == "unreachable"
    assert dead in error.message(Lang.EN)


def test_the_cache_answers_when_nothing_listens(hub: str, monkeypatch: pytest.MonkeyPatch) -> None:
    resolve_model("acme/tiny-qwen3")
    monkeypatch.setenv("HF_ENDPOINT", _dead_endpoint())
    assert resolve_model("acme/tiny-qwen3").arch.params_total == TINY_COUNT


# --- names that are neither -----------------------------------------------------------------


def test_an_unknown_name_gets_close_names_and_a_hint() -> None:
    with pytest.raises(UnknownModel) as raised:
        resolve_model("qwen3-7b")
    # the three closest names (qwen-7b and qwen-72b, Qwen v1, presets since the remote-code
    # families were read)
    assert raised.value.suggestions == ("qwen-7b", "qwen3-1.7b", "qwen-72b")
    message = raised.value.message(Lang.EN)
    assert "close names: qwen-7b, qwen3-1.7b, qwen-72b" in message
    assert "repo id (org/name) or a config.json" in message
    assert "tinyllama" not in message  # not the whole registry


def test_a_preset_is_resolved_without_the_hub(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # would fail if it were called
    resolved = resolve_model("Qwen/Qwen3-8B")
    assert resolved.preset is not None and resolved.name == "qwen3-8b"
    assert resolved.config["model_type"] == "qwen3"


# --- through the CLI ------------------------------------------------------------------------


def test_model_json_of_a_hub_repo_has_its_config_and_exact_count(hub: str) -> None:
    out = io.StringIO()
    assert main(["model", "acme/tiny-qwen3", "--json"], out, out) == 0, out.getvalue()
    payload = json.loads(out.getvalue())
    assert payload["config"] == QWEN3_TINY
    assert payload["counts"]["params"] == TINY_COUNT
    assert payload["source"] == f"{hub}/acme/tiny-qwen3/blob/main/config.json"


def test_a_hub_failure_is_one_line_and_exit_status_2(hub: str) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert main(["model", "acme/gated-qwen3", "--lang", "en"], out, err) == 2
    assert err.getvalue().count("\n") == 1
    assert "gated on the Hugging Face Hub" in err.getvalue()


def test_model_json_of_a_preset_has_the_config_it_was_read_from() -> None:
    from vramplan.presets.models import find_model

    out = io.StringIO()
    assert main(["model", "deepseek-v3", "--json"], out, out) == 0
    payload = json.loads(out.getvalue())
    assert payload["config"] == dict(find_model("deepseek-v3").config)
    assert payload["counts"]["params"] == 671_026_404_352
    assert payload["source"] == "https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json"


def test_a_client_closed_under_a_call_does_not_fail_it(
        hub: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """huggingface_hub closes its shared client whenever any call fails to connect (an
    abandoned call still retrying a dead endpoint, in a server): the calls in flight then fail
    without an answer, and are made again on a fresh client."""
    from vramplan.model import hub as hub_module

    real, calls = hub_module._download, []

    def closed_once(ref: RepoRef) -> str:
        calls.append(ref)
        if len(calls) == 1:
            raise RuntimeError("Cannot send a request, as the client has been closed.")
        if len(calls) == 2:
            raise HubError("unreachable", ref, endpoint=hub)  # no answer, no cached copy
        return real(ref)

    monkeypatch.setattr(hub_module, "_download", closed_once)
    assert fetch_config(RepoRef("acme/tiny-qwen3")) == QWEN3_TINY
    assert len(calls) == 3
