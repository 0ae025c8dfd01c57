"""`redact`: blank out credentials in text before it is raised, traced or logged.

One function, used wherever the library writes text that may echo a request: model
errors (server bodies, base URLs), trace lines and log messages. It replaces, with
``[REDACTED]``:

- the userinfo of a URL: ``https://user:key@host`` → ``https://[REDACTED]@host``;
- the value of an ``Authorization``, ``Proxy-Authorization``, ``X-Api-Key``,
  ``Api-Key`` or ``X-Goog-Api-Key`` header, as ``Name: value`` or ``"name": "value"``;
- a bearer token: ``Bearer abc.def`` → ``Bearer [REDACTED]``;
- the value of a query parameter or assignment (``?api-key=…``, ``&sig=…``,
  ``password=…``) or a quoted field (``"client_secret": "…"``) whose name reads like a
  credential: a part (split at ``_ - .``) ending in key, token, secret, password,
  signature or credential(s), or one of sig, auth, pwd, passwd;
  ``max_tokens=64`` keeps its value, ``access_token=…`` does not;
- API keys by their shape: ``sk-…`` (OpenAI, Anthropic ``sk-ant-…``, DeepSeek,
  OpenRouter ``sk-or-…``), ``gsk_…`` (Groq), ``hf_…`` (Hugging Face), ``AIza…``
  (Google), ``xai-…`` (xAI).

It is idempotent (``redact(redact(t)) == redact(t)``) and linear in the text's length.
It blanks what looks like a credential, so it can blank a little more than one (a
``?monkey=`` parameter); it cannot know a secret of no recognisable shape that is not
named as one.

>>> redact("HTTP 401: Incorrect API key provided: sk-proj-abcdefghijklmnopqrstuvwx")
'HTTP 401: Incorrect API key provided: [REDACTED]'
>>> redact("could not talk to https://me:hunter2@example.com/v1?api-key=abc&model=x")
'could not talk to https://[REDACTED]@example.com/v1?api-key=[REDACTED]&model=x'
>>> redact("Authorization: Bearer abc.def")
'Authorization: [REDACTED]'
>>> redact("max_tokens=64 is too many")
'max_tokens=64 is too many'
"""

from __future__ import annotations

import re

__all__ = ["REDACTED", "redact"]

REDACTED = "[REDACTED]"

# Every value pattern starts with this, so a value already blanked is left alone.
_FRESH = r"(?!\[REDACTED\])"
# A value runs to whitespace, a quote or a separator, and leaves out a trailing ``.``
# or ``:`` (``could not talk to https://h/?key=abc: refused`` keeps its colon).
_VALUE = r"[^\s\"',;&#<>]*[^\s\"',;&#<>.:]"

_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^\s/?#@]+@")

_HEADER = re.compile(
    r"(?i)\b((?:proxy-)?authorization|x-api-key|api-key|x-goog-api-key)"
    r"([\"']?[ \t]*[:=][ \t]*[\"']?)"
    + _FRESH
    + r"(?:(?:bearer|basic|token|digest)[ \t]+)?"
    + _VALUE
)

_BEARER = re.compile(r"(?i)\b(bearer\s+)" + _FRESH + r"[A-Za-z0-9._~+/=-]*[A-Za-z0-9_~+/=-]")

# ``name=`` or ``"name": "``; the value after it is read only when the name is a secret's,
# so that ``url=https://h/?key=abc`` still finds ``key=`` inside the first value.
_NAMED = re.compile(
    r"(?<![\w.-])(?P<name>[A-Za-z_][\w.-]*)="
    r"|(?P<quote>[\"'])(?P<field>[A-Za-z_][\w.-]*)(?P=quote)[ \t]*:[ \t]*(?P<open>[\"'])"
)
_PLAIN_VALUE = re.compile(_FRESH + _VALUE)
_QUOTED_VALUE = {quote: re.compile(_FRESH + f"[^{quote}\r\n]+(?={quote})") for quote in "\"'"}

_KEY = re.compile(
    # A key glued to the word before it still counts when its body is long and unbroken.
    r"(?<![A-Za-z0-9])(?:sk-|xai-)[A-Za-z0-9_-]{16,}"
    r"|sk-[A-Za-z0-9]{20,}[A-Za-z0-9_-]*"
    r"|(?<![A-Za-z0-9])(?:gsk_|hf_)[A-Za-z0-9]{20,}"
    r"|(?<![A-Za-z0-9])AIza[A-Za-z0-9_-]{30,}"
)

_SECRET_ENDINGS = ("key", "token", "secret", "password", "signature", "credential", "credentials")
_SECRET_NAMES = frozenset({"sig", "auth", "pwd", "passwd"})
_NAME_PARTS = re.compile(r"[._-]")


def _is_secret_name(name: str) -> bool:
    parts = _NAME_PARTS.split(name.lower())
    return any(part.endswith(_SECRET_ENDINGS) or part in _SECRET_NAMES for part in parts)


def _named_values(text: str) -> str:
    pieces: list[str] = []
    done = 0
    for match in _NAMED.finditer(text):
        name = match.group("name")
        if match.start() < done or not _is_secret_name(name or match.group("field")):
            continue
        reader = _PLAIN_VALUE if name is not None else _QUOTED_VALUE[match.group("open")]
        value = reader.match(text, match.end())
        if value is not None:
            pieces += [text[done : match.end()], REDACTED]
            done = value.end()
    return "".join([*pieces, text[done:]]) if pieces else text


def redact(text: str) -> str:
    """``text`` with credentials replaced by ``[REDACTED]``; see the module doc.

    >>> redact('{"error": {"message": "bad key", "api_key": "abc123"}}')
    '{"error": {"message": "bad key", "api_key": "[REDACTED]"}}'
    """
    text = _USERINFO.sub(rf"\1{REDACTED}@", text)
    text = _HEADER.sub(rf"\1\2{REDACTED}", text)
    text = _BEARER.sub(rf"\1{REDACTED}", text)
    text = _named_values(text)
    return _KEY.sub(REDACTED, text)
