"""`redact`: credentials blanked out before text is raised, traced, logged or shown, and
`logger`, every logger of this library, each redacting the records logged to it.

One concept, "no secret leaves the process in our text": what a secret looks like (shapes
of known keys, values taught at run time by the ``remember_*`` functions and fields named
like credentials at any depth), and the loggers that apply it to every record.
"""

from __future__ import annotations

import base64
import itertools
import logging
import os
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import cast
from urllib.parse import parse_qsl, quote, unquote, urlsplit

# `redact`: blank out credentials in text before it is raised, traced, logged or shown.
#
# One function, used wherever the library writes text that may echo a request: model
# errors (server bodies, base URLs), an MCP server's errors and stderr, trace lines, log
# messages, eval reports and the consoles. It replaces, with ``[REDACTED]``:
#
# - the userinfo of a URL: ``https://user:key@host`` → ``https://[REDACTED]@host``;
# - the value of an ``Authorization``, ``Proxy-Authorization``, ``X-Api-Key``,
#   ``Api-Key`` or ``X-Goog-Api-Key`` header, as ``Name: value`` or ``"name": "value"``;
# - a bearer token: ``Bearer abc.def`` → ``Bearer [REDACTED]``;
# - the value of a query parameter or assignment (``?api-key=…``, ``&sig=…``,
#   ``password=…``) or a quoted field (``"client_secret": "…"``) whose name reads like a
#   credential: a part (split at ``_ - .``) ending in key, token, secret, password,
#   signature or credential(s), or one of sig, auth, pwd, passwd;
#   ``max_tokens=64`` keeps its value, ``access_token=…`` does not;
# - API keys by their shape: ``sk-…`` (OpenAI, Anthropic ``sk-ant-…``, DeepSeek,
#   OpenRouter ``sk-or-…``), ``gsk_…`` (Groq), ``hf_…`` (Hugging Face), ``AIza…``
#   (Google), ``xai-…`` (xAI), AWS access key ids (``AKIA…``, ``ASIA…``), GitHub tokens
#   (``ghp_``, ``gho_``, ``ghu_``, ``ghs_``, ``ghr_``, ``github_pat_``), GitLab's
#   ``glpat-…``, npm's ``npm_…``, Slack's ``xoxb-``/``xoxa-``/``xoxp-``/``xoxr-``/``xoxs-``/
#   ``xoxo-``, Stripe secret and restricted keys (``sk_live_``, ``rk_live_``, their
#   ``_test_`` twins) and webhook secrets (``whsec_``), and JSON Web Tokens
#   (``eyJ….eyJ….…``).
#   A 40-character hex string (a git commit, a SHA-1) and a UUID are left alone: they
#   have no shape of their own that tells a token from a digest or an id.
#
# It also blanks, wherever they appear, the values we know we sent: `remember_secret`
# records them, and every model adapter does so when it is built (its API key, the user
# and password of its base URL and the Basic token made of them, credential query
# parameters) and when a call sends a credential header (``GenerateOptions.headers``
# named like ``Authorization`` or ``X-Api-Key``). The process's own credentials are
# remembered too, once, the first time `redact` runs: the values of its environment
# variables named like credentials (``OPENAI_API_KEY``, ``GITHUB_TOKEN``, ``DB_PASSWORD``,
# ``AWS_SECRET_ACCESS_KEY`` …; see `is_secret_name`) and the userinfo of any URL in its
# environment (``DATABASE_URL=postgres://app:pw@db/x``); `remember_environment` reads them
# again (after loading a ``.env`` file, say). So a key of no known shape that a 401 body,
# a reply or a tool's exception repeats is blanked in errors, logs, traces, spans and eval
# reports alike. A caller may also pass the secrets of one connection as ``known``
# (`credential_values` collects those of an MCP server: its URL, headers, environment and
# flags).
#
# It is idempotent (``redact(redact(t)) == redact(t)``) and linear in the text's length.
# It blanks what looks like a credential, so it can blank a little more than one (a
# ``?monkey=`` parameter); it cannot know a secret of no recognisable shape that was
# neither named as one nor sent by us.
#
# >>> redact("HTTP 401: Incorrect API key provided: sk-proj-abcdefghijklmnopqrstuvwx")
# 'HTTP 401: Incorrect API key provided: [REDACTED]'
# >>> redact("could not talk to https://me:hunter2@example.com/v1?api-key=abc&model=x")
# 'could not talk to https://[REDACTED]@example.com/v1?api-key=[REDACTED]&model=x'
# >>> redact("Authorization: Bearer abc.def")
# 'Authorization: [REDACTED]'
# >>> redact("max_tokens=64 is too many")
# 'max_tokens=64 is too many'

__all__ = [
    "MAX_SECRETS",
    "REDACTED",
    "SHORTEST_SECRET",
    "RedactingFilter",
    "credential_values",
    "is_secret_name",
    "logger",
    "redact",
    "redact_data",
    "remember_environment",
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

# A scheme starts where a run of scheme characters does, and neither part gives back what
# it read: else each letter after a dot in ``a.a.a.…`` would start a scheme that reads to
# the run's end, and redacting would take quadratic time.
_USERINFO = re.compile(r"(?i)(?<![a-z0-9+.-])([a-z][a-z0-9+.-]*+://)[^\s/?#@]++@")

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

# API keys by their shape. Each is (a guard, its start, the rest); the guard (nothing a
# key's first character may follow) keeps a key-like tail of an ordinary word alone:
# ``risk-management-overview`` holds no ``sk-`` key.
_NOT_AFTER_WORD = r"(?<![A-Za-z0-9])"
_KEY_SHAPES = (
    (_NOT_AFTER_WORD, r"sk-|xai-", r"[A-Za-z0-9_-]{16,}"),
    # A key glued to the word before it still counts when its body is long and unbroken.
    ("", r"sk-", r"[A-Za-z0-9]{20,}[A-Za-z0-9_-]*"),
    (_NOT_AFTER_WORD, r"gsk_|hf_", r"[A-Za-z0-9]{20,}"),
    (_NOT_AFTER_WORD, r"AIza", r"[A-Za-z0-9_-]{30,}"),
    (_NOT_AFTER_WORD, r"AKIA|ASIA", r"[A-Z0-9]{16}"),  # AWS: an access key id is 20 long
    (_NOT_AFTER_WORD, r"gh[oprsu]_", r"[A-Za-z0-9]{30,}"),  # GitHub
    (_NOT_AFTER_WORD, r"github_pat_", r"[A-Za-z0-9_]{30,}"),
    (_NOT_AFTER_WORD, r"glpat-", r"[A-Za-z0-9_-]{20,}"),  # GitLab
    (_NOT_AFTER_WORD, r"npm_", r"[A-Za-z0-9]{30,}"),
    (_NOT_AFTER_WORD, r"xox[abposr]-", r"[A-Za-z0-9-]{10,}"),  # Slack
    (_NOT_AFTER_WORD, r"sk_live_|rk_live_|sk_test_|rk_test_", r"[A-Za-z0-9]{16,}"),  # Stripe
    (_NOT_AFTER_WORD, r"whsec_", r"[A-Za-z0-9]{20,}"),
    # A JWT: a header and a payload (JSON, so base64url of ``{"``) and a signature. It can
    # fail after reading a whole run of its characters (no dot), so it starts only where
    # a run does and never gives back what it read: else a run of ``eyJeyJ…`` would be
    # read again from each ``eyJ`` in it, and redacting would take quadratic time.
    (
        r"(?<![A-Za-z0-9_-])",
        r"eyJ",
        r"[A-Za-z0-9_-]{6,}+\.eyJ[A-Za-z0-9_-]{6,}+\.[A-Za-z0-9_-]*+",
    ),
)
# Where a key may start: one search for these literals finds the few places worth
# trying the shapes at (trying every shape at every character cost ten times as much).
_KEY_START = re.compile("|".join(start for _, start, _ in _KEY_SHAPES))
_KEY = re.compile("|".join(f"{guard}(?:{start}){rest}" for guard, start, rest in _KEY_SHAPES))
# A key that starts where another one ended: blanked with it. Searching on after the
# first would see it follow a word character and skip it, and only a second pass, over
# the ``]`` of the blank, would find it (so redacting again would change the text).
_GLUED_KEY = re.compile("|".join(f"(?:{start}){rest}" for _, start, rest in _KEY_SHAPES))


def _keys(text: str) -> str:
    """``text`` with every key of a known shape blanked, keys glued together as one."""
    start = _KEY_START.search(text)
    if start is None:
        return text
    pieces: list[str] = []
    done = 0
    while start is not None:
        at = start.start()
        found = _KEY.match(text, at)  # its guard still sees the text before ``at``
        if found is None:
            start = _KEY_START.search(text, at + 1)
            continue
        end = found.end()
        while (glued := _GLUED_KEY.match(text, end)) is not None and glued.end() > end:
            end = glued.end()
        pieces += [text[done:at], REDACTED]
        done = end
        start = _KEY_START.search(text, end)
    return "".join([*pieces, text[done:]])


_SECRET_ENDINGS = (
    *("key", "token", "secret", "password", "passphrase"),
    *("signature", "credential", "credentials"),
)
_SECRET_NAMES = frozenset({"sig", "auth", "pwd", "passwd", "authorization", "cookie"})
_NAME_PARTS = re.compile(r"[._-]")


def is_secret_name(name: str) -> bool:
    """Whether a parameter, header, field or variable named ``name`` holds a credential:
    a part of it (split at ``_ - .``) ends in key, token, secret, password, passphrase,
    signature or credential(s), or is sig, auth, pwd, passwd, authorization or cookie.

    >>> is_secret_name("OPENAI_API_KEY"), is_secret_name("x-api-key"), is_secret_name("max_tokens")
    (True, True, False)
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
_environment: frozenset[str] = frozenset()  # the process's own: never forgotten
_environment_read = False
_known: re.Pattern[str] | None = None  # replaced whole, never mutated: read without the lock
_CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})
_SCHEMES = ("bearer ", "basic ", "token ", "digest ")


def _worth_remembering(values: Iterable[str | None]) -> list[str]:
    fresh: list[str] = []
    for value in values:
        if value is None:
            continue
        value = value.strip()
        # A value overlapping our marker could make `redact` blank its own output.
        if len(value) >= SHORTEST_SECRET and value not in REDACTED and REDACTED not in value:
            fresh.append(value)
    return fresh


def _compile_known() -> None:
    """Make the one pattern of every value remembered; under ``_secrets_lock``."""
    global _known
    # Longest first, so that a secret containing another is blanked whole.
    ordered = sorted(_environment.union(_secrets), key=len, reverse=True)
    _known = re.compile("|".join(map(re.escape, ordered))) if ordered else None


def remember_secret(*values: str | None) -> None:
    """Blank each value (a key, a token we send) wherever `redact` runs from now on.

    Values shorter than `SHORTEST_SECRET` characters are ignored; the registry is
    process-wide and holds at most `MAX_SECRETS` values (besides the environment's, see
    `remember_environment`).

    >>> remember_secret("zq7Plk3VvXw9RtYu")
    >>> redact("Incorrect API key provided: zq7Plk3VvXw9RtYu.")
    'Incorrect API key provided: [REDACTED].'
    """
    fresh = _worth_remembering(values)
    if not fresh:
        return
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
            _compile_known()


def remember_environment(environ: Mapping[str, str] | None = None) -> None:
    """Remember the credentials the process was given: the values of its environment
    variables named like credentials (`is_secret_name`: ``OPENAI_API_KEY``,
    ``GITHUB_TOKEN``, ``PGPASSWORD``, ``AWS_SECRET_ACCESS_KEY`` …) and the credentials of
    every URL among them (``DATABASE_URL=postgres://app:pw@db/x``: see
    `remember_url_secrets`). A value naming a file or socket that exists is a path to a
    secret, not one (``SSH_AUTH_SOCK``, ``GOOGLE_APPLICATION_CREDENTIALS``); values
    shorter than `SHORTEST_SECRET` are left out as always.

    `redact` calls it once, the first time it runs; call it again after changing the
    environment (loading a ``.env`` file). These values are never forgotten, and each
    call replaces those of the last (``environ``: another mapping than ``os.environ``).

    >>> remember_environment({"ACME_API_KEY": "acme-8ad1e0f9c2", "HOME": "/home/ada"})
    >>> redact("acme said: bad key acme-8ad1e0f9c2 for /home/ada")
    'acme said: bad key [REDACTED] for /home/ada'
    >>> remember_environment()  # back to the process's own
    """
    global _environment, _environment_read
    found: list[str] = []
    for name, value in (os.environ if environ is None else environ).items():
        if "://" in value and "@" in value:
            found += _url_secrets(value)
        if is_secret_name(name) and not _names_a_file(value):
            found.append(value)
    values = frozenset(_worth_remembering(found))
    with _secrets_lock:
        _environment_read = True
        if values != _environment:
            _environment = values
            _compile_known()


def _names_a_file(value: str) -> bool:
    if not value.startswith(("/", "~", ".")) and not (len(value) > 2 and value[1] == ":"):
        return False  # not a path: spare the file system a look-up
    try:
        return os.path.exists(os.path.expanduser(value))
    except (OSError, ValueError):  # a NUL in it, a name too long: not a file
        return False


def remember_url_secrets(url: str | None) -> None:
    """Remember the credentials in a URL: its user and password (as written and decoded),
    the Basic token an HTTP client makes of them, and credential query parameters.

    >>> remember_url_secrets("http://alice:s3cretPassw0rd@127.0.0.1:1/v1")
    >>> redact("Basic YWxpY2U6czNjcmV0UGFzc3cwcmQ= was refused")
    'Basic [REDACTED] was refused'
    """
    if url:
        remember_secret(*_url_secrets(url))


def _url_secrets(url: str) -> list[str]:
    """The credentials in a URL (see `remember_url_secrets`)."""
    try:
        parts = urlsplit(url.strip())
        query = parse_qsl(parts.query, keep_blank_values=False)
    except ValueError:
        return []
    userinfo = parts.netloc.rpartition("@")[0] if "@" in parts.netloc else ""
    found: list[str] = [value for name, value in query if is_secret_name(name)]
    if userinfo:
        user, _, password = userinfo.partition(":")
        plain_user, plain_password = unquote(user), unquote(password)
        pair = f"{plain_user}:{plain_password}"
        # ``https://<token>@host`` sends Basic base64("<token>:"): the pair, password or not.
        token = base64.b64encode(pair.encode("utf-8")).decode("ascii")
        found += [userinfo, pair, password, plain_password, token]
    return found


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


def redact_data(value: object, *, by_name: bool = True) -> object:
    """``value`` (plain JSON-like data) with every string redacted, keys included, and,
    ``by_name``, the value of every field named like a credential (`is_secret_name`:
    ``password``, ``db_password``, ``x-api-key``, ``token``, ``authorization`` …) blanked
    whole, at any depth, whatever its type (a number, a list, a mapping): only ``None``
    and booleans, which hold no secret, stay. Other values (numbers, bytes) stay as they
    are. Pass ``by_name=False`` for data that names fields without holding their values
    (a JSON Schema, whose ``properties`` may well include a ``password``).

    >>> redact_data({"args": ["Bearer abc.def", 3], "db": {"db_password": 1234, "ssl": True}})
    {'args': ['Bearer [REDACTED]', 3], 'db': {'db_password': '[REDACTED]', 'ssl': True}}
    >>> redact_data({"properties": {"password": {"type": "string"}}}, by_name=False)
    {'properties': {'password': {'type': 'string'}}}
    """
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        pairs = cast("Mapping[object, object]", value).items()
        return {
            redact(key) if isinstance(key, str) else key: (
                REDACTED
                if by_name and isinstance(key, str) and _holds_secret(item) and is_secret_name(key)
                else redact_data(item, by_name=by_name)
            )
            for key, item in pairs
        }
    if isinstance(value, list | tuple):
        return [redact_data(item, by_name=by_name) for item in cast("Iterable[object]", value)]
    return value


def _holds_secret(value: object) -> bool:
    return value is not None and not isinstance(value, bool)


def redact(text: str, known: Iterable[str] = ()) -> str:
    """``text`` with credentials replaced by ``[REDACTED]``; see the module doc.

    ``known``: secrets of this one caller (a connection's), blanked like remembered ones.

    >>> redact('{"error": {"message": "bad key", "api_key": "abc123"}}')
    '{"error": {"message": "bad key", "api_key": "[REDACTED]"}}'
    >>> redact("denied for tenant 7f3k-99", known=["7f3k-99"])
    'denied for tenant [REDACTED]'
    """
    if not _environment_read:
        remember_environment()
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
    return _keys(text)


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


# `logger`: every logger of this library, each redacting the records logged to it.
#
# A record's text may quote what a tool raised, what a server answered or what a model
# wrote, and any of them may hold a key. So every logger of ours (``toolchain``,
# ``toolchain.mcp``, ``agents``, ``agents.otel``, ``agents.durable`` …) is made here, with
# `RedactingFilter` on it: a filter on a logger sees only the records logged to that very
# logger, never those its children pass up, so each logger needs its own (a test holds
# the code to it: no module of ours calls ``logging.getLogger``). A module of its own
# because both packages need it, and ``toolchain`` is the one ``agents`` may import.


_formatter = logging.Formatter()  # how a handler's formatter writes a traceback


class RedactingFilter(logging.Filter):
    """Blanks credentials (`toolchain._redact.redact`) in a record before any handler
    sees it: its message, its traceback and its stack.

    A message that held one becomes the redacted text (its arguments merged in). The
    traceback is written once, redacted, into ``exc_text``, which every
    ``logging.Formatter`` prints instead of writing its own; when it held a credential,
    ``exc_info`` is dropped too, so that no handler can write the original from the
    exception. A record with nothing to blank keeps its template, arguments and
    exception as they were.

    >>> key = "sk-" + "x" * 24
    >>> record = logging.LogRecord("agents", logging.INFO, "", 1, "key %s", (key,), None)
    >>> RedactingFilter().filter(record), record.getMessage()
    (True, 'key [REDACTED]')
    """

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # arguments that do not fit: logging reports it, as ever
            return True
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:
            written = _formatter.formatException(record.exc_info)
            record.exc_text = redact(written)
            if record.exc_text != written:
                record.exc_info = None
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


_FILTER = RedactingFilter()


def logger(name: str) -> logging.Logger:
    """The logger ``name`` (``toolchain`` or ``agents``, or one under them), redacting.

    >>> any(isinstance(f, RedactingFilter) for f in logger("toolchain.mcp").filters)
    True
    """
    found = logging.getLogger(name)
    if _FILTER not in found.filters:
        found.addFilter(_FILTER)
    return found
