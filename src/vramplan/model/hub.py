"""A model's config.json from the Hugging Face Hub, by repository id (`org/name[@revision]`).

The only module of the core that does I/O besides reading local files: it calls `huggingface_hub`
(imported here, lazily, only when a repo id is resolved), which keeps its cache (`HF_HOME`,
`HF_HUB_CACHE`), sends `HF_TOKEN` for gated and private repositories and answers from the cache
when `HF_HUB_OFFLINE` is set. huggingface_hub reads those variables once, when it is imported;
`HF_ENDPOINT`, `HF_HUB_OFFLINE`, `HF_HUB_CACHE` and `HF_HUB_ETAG_TIMEOUT` are read again here at
each call and passed to it, so that a process that imported it earlier (the web server, a test run)
still follows them.

Every failure is one `HubError` naming the repository and what to do: a gated or missing repository,
a revision or a config.json that does not exist, no network, a server that does not answer in
time, offline mode without a cached copy.
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass
from typing import Any

from vramplan.errors import VramplanError

CONFIG_FILE = "config.json"
DEFAULT_ENDPOINT = "https://huggingface.co"
DEFAULT_TIMEOUT_S = 10.0
"""Seconds to wait for the Hub's answer, retries included: huggingface_hub's own default for one
answer (`DEFAULT_ETAG_TIMEOUT`), or `HF_HUB_ETAG_TIMEOUT`."""

_REPO_ID = re.compile(
    r"(?P<repo>[A-Za-z0-9][A-Za-z0-9_.-]{0,95}/[A-Za-z0-9][A-Za-z0-9_.-]{0,95})"
    r"(?:@(?P<revision>[A-Za-z0-9][A-Za-z0-9_./-]{0,199}))?")
"""`org/name[@revision]`: the Hub's repository names (letters, digits, `-`, `_`, `.`, at most 96
characters each side, huggingface_hub `validate_repo_id`), and a branch, tag or commit."""


@dataclass(frozen=True, slots=True)
class RepoRef:
    """A repository on the Hub and the revision asked for (None: the default branch)."""

    repo_id: str
    revision: str | None = None

    @property
    def label(self) -> str:
        return self.repo_id if self.revision is None else f"{self.repo_id}@{self.revision}"

    @property
    def config_url(self) -> str:
        """Where the config.json is shown on the Hub (for `source`)."""
        endpoint = _endpoint() or DEFAULT_ENDPOINT
        return f"{endpoint}/{self.repo_id}/blob/{self.revision or 'main'}/{CONFIG_FILE}"


def parse_repo_ref(text: str) -> RepoRef | None:
    """`text` as a repository reference, or None when it does not look like one."""
    match = _REPO_ID.fullmatch(text.strip())
    if match is None or ".." in match["repo"] or match["repo"].endswith((".git", ".")):
        return None
    return RepoRef(match["repo"], match["revision"])


# --- errors -----------------------------------------------------------------------------------


class HubError(VramplanError):
    """The config.json of a repository could not be read from the Hub."""

    def __init__(self, reason: str, ref: RepoRef, **params: object) -> None:
        self.key = f"error.hub_{reason}"
        self.reason = reason
        super().__init__("model", ref.label, **params)


# --- the call ---------------------------------------------------------------------------------


def fetch_config(ref: RepoRef) -> dict[str, Any]:
    """The JSON object of `ref`'s config.json, from huggingface_hub's cache or the Hub."""
    from pathlib import Path

    from vramplan.model.hf_common import ConfigFileError
    from vramplan.model.hf_config import read_json_file

    if _offline() or _endpoint_accepts_connections():
        path = _download_within(ref, _timeout())
    else:
        # no connection at all (no network, a name that does not resolve, nothing listening):
        # huggingface_hub would retry five times with backoff and log each try (`http_backoff`,
        # huggingface_hub/utils/_http.py), about 15 s; its cache answers at once, or nothing does
        path = _download(ref, cache_only=True)
    try:
        return read_json_file(Path(path))
    except ConfigFileError:
        raise HubError("not_json", ref) from None


def _download_within(ref: RepoRef, seconds: float) -> str:
    """`_download` with a deadline: huggingface_hub waits `etag_timeout` for the first answer,
    then retries once with 60 s and backoff (`_ETAG_RETRY_TIMEOUT`, file_download.py) before it
    gives up; a server that never answers would hold the user for minutes. The call runs in a
    daemon thread, left behind at the deadline (it ends with its own timeouts)."""
    outcome: list[str | BaseException] = []
    abandoned = threading.Event()

    def call() -> None:
        try:
            outcome.append(_download_with_fresh_connection_on_failure(ref, abandoned))
        except BaseException as error:  # handed to the caller's thread
            outcome.append(error)

    worker = threading.Thread(target=call, name=f"hub {ref.label}", daemon=True)
    worker.start()
    worker.join(seconds)
    if not outcome:
        abandoned.set()
        # huggingface_hub still retrying: a server that does not answer, or none at all
        if _endpoint_accepts_connections():
            raise HubError("timeout", ref, seconds=_format_seconds(seconds))
        raise HubError("unreachable", ref, endpoint=_endpoint() or DEFAULT_ENDPOINT)
    result = outcome[0]
    if isinstance(result, BaseException):
        raise result
    return result


TRANSPORT_ATTEMPTS = 3
"""Calls made for one config.json when the transport fails (at most)."""


def _download_with_fresh_connection_on_failure(ref: RepoRef, abandoned: threading.Event) -> str:
    """huggingface_hub keeps one HTTP client and its pooled connections for the process
    (`get_session`), and closes it whenever a request of any thread fails to connect
    (`http_backoff`: `close_session()` on `ConnectError`, huggingface_hub/utils/_http.py). So
    a call can fail at the transport level without any answer from the Hub: a pooled
    connection that died in between, or the client closed under it by another call still
    retrying a dead endpoint (an abandoned call of a server, a test). huggingface_hub then says
    it found no answer and no cached copy. While the endpoint accepts connections, the call is
    made again, on a fresh client, up to `TRANSPORT_ATTEMPTS` times in all. A call its caller
    gave up on (`abandoned`) stops there and leaves the client alone."""
    from huggingface_hub import close_session

    for _ in range(TRANSPORT_ATTEMPTS - 1):
        try:
            return _download(ref)
        except Exception as error:
            if abandoned.is_set() or not _transport_failure(error):
                raise
        close_session()
    return _download(ref)


def _transport_failure(error: Exception) -> bool:
    """No answer from the Hub, though its endpoint accepts connections: an httpx error, a
    closed client, or huggingface_hub's "no answer and no cached copy" for one of these."""
    if isinstance(error, HubError):
        return error.reason == "unreachable" and _endpoint_accepts_connections()
    closed_client = isinstance(error, RuntimeError) and "closed" in str(error)
    return closed_client or type(error).__module__.startswith(("httpx", "httpcore"))


def _download(ref: RepoRef, *, cache_only: bool = False) -> str:
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        HFValidationError,
        LocalEntryNotFoundError,
        RemoteEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    try:
        return str(hf_hub_download(
            ref.repo_id, CONFIG_FILE, revision=ref.revision, endpoint=_endpoint(),
            cache_dir=os.environ.get("HF_HUB_CACHE") or None,
            local_files_only=cache_only or _offline(), etag_timeout=_timeout()))
    except LocalEntryNotFoundError as error:  # no answer, and no cached copy
        raise _unreachable(error, ref) from None
    except GatedRepoError:
        raise HubError("gated", ref) from None
    except RevisionNotFoundError:
        raise HubError("revision_not_found", ref, revision=ref.revision or "") from None
    except RepositoryNotFoundError:
        raise HubError("repo_not_found", ref) from None
    except RemoteEntryNotFoundError:
        # the repository exists without a config.json (GGUF-only or adapter repositories)
        raise HubError("no_config", ref) from None
    except HFValidationError:
        raise HubError("repo_not_found", ref) from None
    except HfHubHTTPError as error:
        status = error.response.status_code if error.response is not None else 0
        raise HubError("http", ref, status=status) from None


def _unreachable(error: BaseException, ref: RepoRef) -> HubError:
    """No answer and no cached copy: offline mode, a timeout, or no connection."""
    if _offline():
        return HubError("offline", ref)
    causes = _causes(error)
    if any(type(cause).__name__.endswith("TimeoutException") or isinstance(cause, TimeoutError)
           for cause in causes):
        return HubError("timeout", ref, seconds=_format_seconds(_timeout()))
    return HubError("unreachable", ref, endpoint=_endpoint() or DEFAULT_ENDPOINT)


def _endpoint_accepts_connections(seconds: float = 1.0) -> bool:
    """Whether a TCP connection to the endpoint's host opens (name resolved, port listening)."""
    import socket
    from urllib.parse import urlsplit

    url = urlsplit(_endpoint() or DEFAULT_ENDPOINT)
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        with socket.create_connection((url.hostname or "", port), timeout=seconds):
            return True
    except OSError:
        return False


def _causes(error: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and current not in seen:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def _endpoint() -> str | None:
    value = os.environ.get("HF_ENDPOINT", "").strip().rstrip("/")
    return value or None


def _offline() -> bool:
    """huggingface_hub's `HF_HUB_OFFLINE` (or `TRANSFORMERS_OFFLINE`) rule: 1, ON, YES, TRUE."""
    value = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE") or ""
    return value.strip().upper() in {"1", "ON", "YES", "TRUE"}


def _timeout() -> float:
    raw = os.environ.get("HF_HUB_ETAG_TIMEOUT", "").strip()
    try:
        value = float(raw)
    except ValueError:
        return DEFAULT_TIMEOUT_S
    return value if value > 0 else DEFAULT_TIMEOUT_S


def _format_seconds(seconds: float) -> str:
    return f"{seconds:g}"
