"""`redact`: blank out credentials in text before it is raised, traced, logged or shown.

One function, used wherever the library writes text that may echo a request: model
errors (server bodies, base URLs), an MCP server's errors and stderr, trace lines, log
messages, eval reports and the consoles. It replaces, with ``[REDACTED]``:

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

It also blanks, wherever they appear, the values we know we sent: `remember_secret`
records them, and every model adapter does so when it is built (its API key, the user
and password of its base URL and the Basic token made of them, credential query
parameters) and when a call sends a credential header (``GenerateOptions.headers``
named like ``Authorization`` or ``X-Api-Key``). So a key of no known shape that a 401
body or a reply repeats is blanked in errors, logs, traces and eval reports alike. A
caller may also pass the secrets of one connection as ``known`` (`credential_values`
collects those of an MCP server: its URL, headers, environment and flags).

It is idempotent (``redact(redact(t)) == redact(t)``) and linear in the text's length.
It blanks what looks like a credential, so it can blank a little more than one (a
``?monkey=`` parameter); it cannot know a secret of no recognisable shape that was
neither named as one nor sent by us.

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

import base64
import itertools
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import cast
from urllib.parse import parse_qsl, quote, unquote, urlsplit

__all__ = [
    "MAX_SECRETS",
    "REDACTED",
    "SHORTEST_SECRET",
    "credential_values",
    "is_secret_name",
    "redact",
    "redact_data",
    "remember_header_secrets",
    "remember_secret",
    "remember_url_secrets",
]

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


def is_secret_name(name: str) -> bool:
    """Whether a parameter, header or variable named ``name`` holds a credential.

    >>> is_secret_name("OPENAI_API_KEY"), is_secret_name("max_tokens")
    (True, False)
    """
    parts = _NAME_PARTS.split(name.lower())
    return any(part.endswith(_SECRET_ENDINGS) or part in _SECRET_NAMES for part in parts)


def _named_values(text: str) -> str:
    pieces: list[str] = []
    done = 0
    for match in _NAMED.finditer(text):
        name = match.group("name")
        if match.start() < done or not is_secret_name(name or match.group("field")):
            continue
        reader = _PLAIN_VALUE if name is not None else _QUOTED_VALUE[match.group("open")]
        value = reader.match(text, match.end())
        if value is not None:
            pieces += [text[done : match.end()], REDACTED]
            done = value.end()
    return "".join([*pieces, text[done:]]) if pieces else text


# -- values we sent ------------------------------------------------------------------------

SHORTEST_SECRET = 8
"""A shorter value is not remembered: blanking it everywhere would blank ordinary words
(local servers take placeholder keys such as ``EMPTY`` or ``ollama``)."""
MAX_SECRETS = 256
"""How many values are remembered; past it the least recently remembered is forgotten."""

_secrets_lock = threading.Lock()
_secrets: dict[str, None] = {}  # an ordered set: the oldest first
_known: re.Pattern[str] | None = None  # replaced whole, never mutated: read without the lock
_CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})
_SCHEMES = ("bearer ", "basic ", "token ", "digest ")


def remember_secret(*values: str | None) -> None:
    """Blank each value (a key, a token we send) wherever `redact` runs from now on.

    Values shorter than `SHORTEST_SECRET` characters are ignored; the registry is
    process-wide and holds at most `MAX_SECRETS` values.

    >>> remember_secret("zq7Plk3VvXw9RtYu")
    >>> redact("Incorrect API key provided: zq7Plk3VvXw9RtYu.")
    'Incorrect API key provided: [REDACTED].'
    """
    fresh: list[str] = []
    for value in values:
        if value is None:
            continue
        value = value.strip()
        # A value overlapping our marker could make `redact` blank its own output.
        if len(value) >= SHORTEST_SECRET and value not in REDACTED and REDACTED not in value:
            fresh.append(value)
    if not fresh:
        return
    global _known
    with _secrets_lock:
        added = False
        for value in fresh:
            if value in _secrets:
                del _secrets[value]  # remembered again: now the most recent
            else:
                added = True
            _secrets[value] = None
        while len(_secrets) > MAX_SECRETS:
            del _secrets[next(iter(_secrets))]
            added = True
        if added:
            # Longest first, so that a secret containing another is blanked whole.
            ordered = sorted(_secrets, key=len, reverse=True)
            _known = re.compile("|".join(map(re.escape, ordered))) if ordered else None


def remember_url_secrets(url: str | None) -> None:
    """Remember the credentials in a URL: its user and password (as written and decoded),
    the Basic token an HTTP client makes of them, and credential query parameters.

    >>> remember_url_secrets("http://alice:s3cretPassw0rd@127.0.0.1:1/v1")
    >>> redact("Basic YWxpY2U6czNjcmV0UGFzc3cwcmQ= was refused")
    'Basic [REDACTED] was refused'
    """
    if not url:
        return
    try:
        parts = urlsplit(url.strip())
        query = parse_qsl(parts.query, keep_blank_values=False)
    except ValueError:
        return
    userinfo = parts.netloc.rpartition("@")[0] if "@" in parts.netloc else ""
    found: list[str] = [value for name, value in query if is_secret_name(name)]
    if userinfo:
        user, _, password = userinfo.partition(":")
        plain_user, plain_password = unquote(user), unquote(password)
        pair = f"{plain_user}:{plain_password}"
        token = base64.b64encode(pair.encode("utf-8")).decode("ascii")
        found += [userinfo, pair, password, plain_password, token]
    remember_secret(*found)


def remember_header_secrets(headers: Mapping[str, object] | None) -> None:
    """Remember the values of headers named like credentials (``Authorization``,
    ``X-Api-Key``, ``Cookie`` …), without their scheme (``Bearer``).

    >>> remember_header_secrets({"X-Api-Key": "k-91f0ae77c2", "X-Request-Id": "r-0042aa19"})
    >>> redact("key k-91f0ae77c2, request r-0042aa19")
    'key [REDACTED], request r-0042aa19'
    """
    if not headers:
        return
    found: list[str] = []
    for name, value in headers.items():
        if not isinstance(value, str):
            continue  # an SDK's "omit" marker, say
        if name.lower() in _CREDENTIAL_HEADERS or is_secret_name(name):
            # ``Bearer k``: the credential is ``k``, and only it must be long enough.
            scheme = value.lower().startswith(_SCHEMES)
            found.append(value.partition(" ")[2] if scheme else value)
    remember_secret(*found)


def redact_data(value: object) -> object:
    """``value`` (plain JSON-like data) with every string redacted, keys included;
    other values (numbers, bytes) stay as they are.

    >>> redact_data({"args": ["Bearer abc.def", 3]})
    {'args': ['Bearer [REDACTED]', 3]}
    """
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        pairs = cast("Mapping[object, object]", value).items()
        return {
            redact(key) if isinstance(key, str) else key: redact_data(item) for key, item in pairs
        }
    if isinstance(value, list | tuple):
        return [redact_data(item) for item in cast("Iterable[object]", value)]
    return value


def redact(text: str, known: Iterable[str] = ()) -> str:
    """``text`` with credentials replaced by ``[REDACTED]``; see the module doc.

    ``known``: secrets of this one caller (a connection's), blanked like remembered ones.

    >>> redact('{"error": {"message": "bad key", "api_key": "abc123"}}')
    '{"error": {"message": "bad key", "api_key": "[REDACTED]"}}'
    >>> redact("denied for tenant 7f3k-99", known=["7f3k-99"])
    'denied for tenant [REDACTED]'
    """
    # Known values first: blanking one can open a word boundary that a pattern then
    # needs (``<key>Bearer x``), and the patterns never write a known value back.
    for value in sorted(set(known), key=len, reverse=True):  # a longer one may hold another
        if len(value) >= _MIN_KNOWN and value in text:
            text = text.replace(value, REDACTED)
    remembered = _known
    if remembered is not None:
        text = remembered.sub(REDACTED, text)
    text = _USERINFO.sub(rf"\1{REDACTED}@", text)
    text = _HEADER.sub(rf"\1\2{REDACTED}", text)
    text = _BEARER.sub(rf"\1{REDACTED}", text)
    text = _named_values(text)
    return _KEY.sub(REDACTED, text)


_MIN_KNOWN = 4  # shorter values ("1", "on") would blank ordinary words, not secrets


def credential_values(
    url: str | None = None,
    headers: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
    args: Sequence[str] = (),
) -> frozenset[str]:
    """The secrets a connection sends, to pass to ``redact`` as ``known``: a URL's
    userinfo and credential query values, credential headers, credential environment
    variables and the value after a credential flag (``--api-key VALUE``).

    >>> sorted(credential_values("http://me:pw12@h/x?token=t0k3n&page=2", {"X-Api-Key": "k-77"},
    ...                          {"DB_PASSWORD": "hunter2", "HOME": "/root"}, ["--token", "abcd"]))
    ['abcd', 'hunter2', 'k-77', 'me:pw12', 'pw12', 't0k3n']
    """
    found: set[str] = set()
    if url:
        parts = urlsplit(url)
        if "@" in parts.netloc:  # as written and as decoded: a message may show either
            userinfo = parts.netloc.rsplit("@", 1)[0]
            password = userinfo.partition(":")[2]
            found.update((userinfo, unquote(userinfo), password, unquote(password)))
        for name, value in parse_qsl(parts.query, keep_blank_values=False):
            if is_secret_name(name):
                found.update((value, quote(value, safe="")))
    for name, value in (headers or {}).items():
        if is_secret_name(name) or name.lower() in _SECRET_HEADERS:
            found.add(value)
            found.add(value.split(" ", 1)[-1])  # "Bearer xyz": xyz alone, too
    for name, value in (env or {}).items():
        if is_secret_name(name):
            found.add(value)
    for flag, value in itertools.pairwise(args):
        if flag.startswith("-") and is_secret_name(flag.lstrip("-")):
            found.add(value)
    return frozenset(value for value in found if len(value) >= _MIN_KNOWN)


_SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})
