"""`redact`: blank out credentials in text before toolchain raises, shows or logs it.

The same rules as ``agents._redact`` (toolchain cannot import agents), for what the
toolchain quotes from outside: an MCP server's URL, its error answers and the end of a
stdio server's stderr. It replaces, with ``[REDACTED]``:

- the userinfo of a URL: ``https://user:key@host`` → ``https://[REDACTED]@host``;
- the value of an ``Authorization``, ``Proxy-Authorization``, ``X-Api-Key``,
  ``Api-Key`` or ``X-Goog-Api-Key`` header, as ``Name: value`` or ``"name": "value"``;
- a bearer token: ``Bearer abc.def`` → ``Bearer [REDACTED]``;
- the value of a query parameter or assignment (``?token=…``, ``&sig=…``,
  ``OPENAI_API_KEY=…``) or a quoted field (``"client_secret": "…"``) whose name reads
  like a credential: a part (split at ``_ - .``) ending in key, token, secret,
  password, signature or credential(s), or one of sig, auth, pwd, passwd;
- API keys by their shape: ``sk-…``, ``gsk_…``, ``hf_…``, ``AIza…``, ``xai-…``;
- and every value in ``known``: the secrets this process sent (a URL's password, a
  header's value, an environment variable given to a server), whatever their shape.

It is idempotent and linear in the text's length.

>>> redact("could not connect (at http://admin:pw@h:8000/mcp?token=abc&page=2)")
'could not connect (at http://[REDACTED]@h:8000/mcp?token=[REDACTED]&page=2)'
>>> redact("stderr: OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx")
'stderr: OPENAI_API_KEY=[REDACTED]'
>>> redact("denied for tenant 7f3k-99", known=["7f3k-99"])
'denied for tenant [REDACTED]'
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from urllib.parse import parse_qsl, quote, unquote, urlsplit

__all__ = ["REDACTED", "credential_values", "is_secret_name", "redact"]

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


def redact(text: str, known: Iterable[str] = ()) -> str:
    """``text`` with credentials replaced by ``[REDACTED]``; see the module doc.

    >>> redact('{"error": {"message": "bad key", "api_key": "abc123"}}')
    '{"error": {"message": "bad key", "api_key": "[REDACTED]"}}'
    """
    for value in sorted(set(known), key=len, reverse=True):  # a longer one may hold another
        if len(value) >= _MIN_KNOWN and value in text:
            text = text.replace(value, REDACTED)
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
