"""Fact extraction against a fake OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from brain.errors import ExtractorError
from brain.extract import (
    Extractor,
    NoExtractor,
    OpenAICompatibleExtractor,
    extract_facts,
    get_extractor,
)

FACTS = ["Ahmet Bey'in faturası ödendi.", "Ahmet Bey'in kargosu hasarlı geldi."]


@dataclass
class FakeServer:
    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    # What the next replies carry: (HTTP status, message content).
    status: int = 200
    content: str = json.dumps(FACTS, ensure_ascii=False)


@pytest.fixture()
def server() -> Iterator[FakeServer]:
    state = FakeServer(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            length = int(self.headers.get("Content-Length", "0"))
            state.requests.append(json.loads(self.rfile.read(length)))
            state.headers.append(dict(self.headers))
            if self.path != "/v1/chat/completions":
                self.send_error(404)
                return
            if state.status != 200:
                self.send_error(state.status, "boom")
                return
            body = json.dumps(
                {
                    "id": "chatcmpl-1",
                    "object": "chat.completion",
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": state.content},
                            "finish_reason": "stop",
                        }
                    ],
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)  # port 0: a free port
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


TEXT = "Ahmet Bey'in faturası ödendi ama kargosu hasarlı geldi."


def test_facts_parsed_and_request_carries_model_and_text(server: FakeServer) -> None:
    extractor = OpenAICompatibleExtractor(server.url + "/", "tiny-llm", api_key="sekret", timeout=5)
    assert isinstance(extractor, Extractor)
    assert extractor.extract(TEXT, lang_hint="tr") == FACTS
    (body,) = server.requests
    assert body["model"] == "tiny-llm"
    assert body["messages"][-1] == {"role": "user", "content": TEXT}
    assert "JSON" in body["messages"][0]["content"] and "tr" in body["messages"][0]["content"]
    assert server.headers[0]["Authorization"] == "Bearer sekret"


@pytest.mark.parametrize(
    "content",
    [
        "```json\n" + json.dumps(FACTS, ensure_ascii=False) + "\n```",
        "```\n" + json.dumps(FACTS, ensure_ascii=False) + "\n```",
        "Here are the facts:\n" + json.dumps(FACTS, ensure_ascii=False),
        json.dumps({"facts": FACTS + ["  "]}, ensure_ascii=False),
    ],
)
def test_tolerant_parsing(server: FakeServer, content: str) -> None:
    server.content = content
    assert OpenAICompatibleExtractor(server.url, "m").extract(TEXT) == FACTS


def test_http_error_raises(server: FakeServer) -> None:
    server.status = 500
    with pytest.raises(ExtractorError, match="HTTP 500"):
        OpenAICompatibleExtractor(server.url, "m").extract(TEXT)


@pytest.mark.parametrize("content", ["not json at all", '{"answer": 1}', "[1, 2]"])
def test_unparsable_reply_raises(server: FakeServer, content: str) -> None:
    server.content = content
    with pytest.raises(ExtractorError, match="JSON"):
        OpenAICompatibleExtractor(server.url, "m").extract(TEXT)


def test_unreachable_server_raises() -> None:
    # Port 9 on loopback ("discard") is closed on test machines: refused at once.
    with pytest.raises(ExtractorError, match="cannot reach"):
        OpenAICompatibleExtractor("http://127.0.0.1:9/v1", "m", timeout=2).extract(TEXT)


def test_tool_output_is_never_sent(server: FakeServer) -> None:
    extractor = OpenAICompatibleExtractor(server.url, "m")
    tool_text = "Kargo takip: 1234 numaralı gönderi teslim edildi."
    assert extract_facts(extractor, tool_text, is_tool_output=True) == [tool_text]
    assert server.requests == []
    assert extract_facts(extractor, TEXT, is_tool_output=False) == FACTS
    assert len(server.requests) == 1


def test_empty_extraction_keeps_the_text(server: FakeServer) -> None:
    server.content = "[]"
    extractor = OpenAICompatibleExtractor(server.url, "m")
    assert extract_facts(extractor, TEXT, is_tool_output=False) == [TEXT]
    assert extract_facts(extractor, "   ", is_tool_output=False) == ["   "]
    assert len(server.requests) == 1  # the blank text was not sent


def test_no_extractor_is_default(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("BRAIN_EXTRACTOR_URL", "BRAIN_EXTRACTOR_MODEL", "BRAIN_EXTRACTOR_KEY"):
        monkeypatch.delenv(name, raising=False)
    extractor = get_extractor()
    assert isinstance(extractor, NoExtractor)
    assert extract_facts(extractor, TEXT, is_tool_output=False) == [TEXT]


def test_get_extractor_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRAIN_EXTRACTOR_URL", "http://127.0.0.1:8080/v1")
    monkeypatch.delenv("BRAIN_EXTRACTOR_MODEL", raising=False)
    with pytest.raises(ExtractorError, match="BRAIN_EXTRACTOR_MODEL"):
        get_extractor()
    monkeypatch.setenv("BRAIN_EXTRACTOR_MODEL", "qwen")
    monkeypatch.setenv("BRAIN_EXTRACTOR_KEY", "k")
    extractor = get_extractor()
    assert isinstance(extractor, OpenAICompatibleExtractor)
    assert (extractor.url, extractor.model, extractor.api_key) == (
        "http://127.0.0.1:8080/v1/chat/completions",
        "qwen",
        "k",
    )


def test_rejects_non_http_urls() -> None:
    with pytest.raises(ExtractorError, match="http"):
        OpenAICompatibleExtractor("file:///etc", "m")
