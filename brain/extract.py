"""Optional fact extraction: split free text into short standalone facts.

Off by default (``NoExtractor`` keeps the text whole). Set BRAIN_EXTRACTOR_URL
and BRAIN_EXTRACTOR_MODEL to use any OpenAI-compatible chat endpoint instead.
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Protocol, runtime_checkable

from brain.errors import ExtractorError

__all__ = [
    "SYSTEM_PROMPT",
    "Extractor",
    "NoExtractor",
    "OpenAICompatibleExtractor",
    "extract_facts",
    "get_extractor",
]

ENV_URL = "BRAIN_EXTRACTOR_URL"
ENV_MODEL = "BRAIN_EXTRACTOR_MODEL"
ENV_KEY = "BRAIN_EXTRACTOR_KEY"

SYSTEM_PROMPT = (
    "You split a text into atomic facts. Return ONLY a JSON array of strings, "
    "one short standalone fact per string, nothing else. Each fact must be "
    "understandable on its own: replace pronouns with the names they refer to. "
    "Keep names, numbers, amounts, dates and identifiers exactly as written. "
    "Write every fact in the same language as the text; never translate. "
    "Do not add anything the text does not say. If the text states no fact, "
    "return []."
)


@runtime_checkable
class Extractor(Protocol):
    """Turns free text into a list of atomic fact sentences."""

    def extract(self, text: str, *, lang_hint: str | None = None) -> list[str]: ...


class NoExtractor:
    """The default: the text is kept as one fact, unchanged."""

    def extract(self, text: str, *, lang_hint: str | None = None) -> list[str]:
        return [text]


_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.DOTALL)


def _parse_fact_list(content: str) -> list[str]:
    """The list of strings in a model reply; tolerates ```json fences and chatter."""
    fenced = _FENCE.search(content)
    body = (fenced.group(1) if fenced else content).strip()
    try:
        data: Any = json.loads(body)
    except json.JSONDecodeError:
        # Models sometimes wrap the array in a sentence: take the outermost [...].
        start, end = body.find("["), body.rfind("]")
        if start < 0 or end <= start:
            raise ExtractorError(
                f"extractor reply is not a JSON list of facts: {content[:200]!r}"
            ) from None
        try:
            data = json.loads(body[start : end + 1])
        except json.JSONDecodeError as exc:
            raise ExtractorError(
                f"extractor reply is not valid JSON ({exc}): {content[:200]!r}"
            ) from exc
    if isinstance(data, dict) and isinstance(data.get("facts"), list):
        data = data["facts"]  # some models insist on an object; accept {"facts": [...]}
    if not isinstance(data, list) or not all(isinstance(item, str) for item in data):
        raise ExtractorError(
            f"extractor reply must be a JSON list of strings, got: {content[:200]!r}"
        )
    return [item.strip() for item in data if item.strip()]


class OpenAICompatibleExtractor:
    """Fact extraction through ``POST {base_url}/chat/completions`` (stdlib only).

    Works with any server speaking the OpenAI chat API (llama.cpp, vLLM, Ollama,
    a hosted one). Temperature 0 so the same text gives the same facts.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 30,
    ) -> None:
        scheme = urllib.parse.urlsplit(base_url).scheme
        # urllib would also open file:// and ftp:// URLs; only a web API makes sense here.
        if scheme not in ("http", "https"):
            raise ExtractorError(
                f"extractor URL must start with http:// or https://, got {base_url!r} "
                f"(set {ENV_URL} to e.g. http://127.0.0.1:8080/v1)"
            )
        if not model.strip():
            raise ExtractorError(f"extractor model name is empty; set {ENV_MODEL}")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.timeout = timeout

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def _request_body(self, text: str, lang_hint: str | None) -> dict[str, Any]:
        system = SYSTEM_PROMPT
        if lang_hint:
            system += f" The text is most likely in this language: {lang_hint}."
        return {
            "model": self.model,
            "temperature": 0,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": text},
            ],
        }

    def _post(self, body: dict[str, Any]) -> Any:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(
            self.url,
            data=json.dumps(body, ensure_ascii=False).encode("utf-8"),
            headers=headers,
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:300].decode("utf-8", errors="replace")
            raise ExtractorError(
                f"extractor at {self.url} answered HTTP {exc.code} {exc.reason}: {detail}"
            ) from exc
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise ExtractorError(
                f"cannot reach the extractor at {self.url} ({reason}); check {ENV_URL} "
                f"or unset it to store texts without extraction"
            ) from exc
        try:
            return json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ExtractorError(
                f"extractor at {self.url} did not answer JSON: {raw[:200]!r}"
            ) from exc

    def extract(self, text: str, *, lang_hint: str | None = None) -> list[str]:
        reply = self._post(self._request_body(text, lang_hint))
        try:
            content = reply["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise ExtractorError(
                f"extractor at {self.url} answered without choices[0].message.content: "
                f"{str(reply)[:200]}"
            ) from exc
        if not isinstance(content, str):
            raise ExtractorError(f"extractor message content is not text: {content!r}")
        return _parse_fact_list(content)


def get_extractor() -> Extractor:
    """The extractor configured by env; ``NoExtractor`` when BRAIN_EXTRACTOR_URL is unset."""
    url = os.environ.get(ENV_URL, "").strip()
    if not url:
        return NoExtractor()
    model = os.environ.get(ENV_MODEL, "").strip()
    if not model:
        raise ExtractorError(
            f"{ENV_URL} is set but {ENV_MODEL} is not: name the model to ask, "
            f"or unset {ENV_URL} to turn extraction off"
        )
    key = os.environ.get(ENV_KEY, "").strip() or None
    return OpenAICompatibleExtractor(url, model, api_key=key)


def extract_facts(
    extractor: Extractor,
    text: str,
    *,
    is_tool_output: bool,
    lang_hint: str | None = None,
) -> list[str]:
    """The facts to store for ``text``.

    Hard rule: tool output is returned as ``[text]`` and the extractor is NOT
    called. A rewrite would turn what a tool reported into a sentence in the
    member's own voice; provenance must stay exact. Blank text is not sent either,
    and if the extractor finds no fact the text is kept whole, so nothing a
    member said is silently dropped.
    """
    if is_tool_output or not text.strip():
        return [text]
    facts = extractor.extract(text, lang_hint=lang_hint)
    return facts or [text]
