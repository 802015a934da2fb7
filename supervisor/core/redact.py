"""Secrets out of screen text before it leaves the machine.

A stuck agent's screen is sent to a checker CLI (and through it to a model provider) only
after `redact` has replaced every secret it recognises with `[redacted]`. What it recognises:

* token shapes that identify themselves: OpenAI/Anthropic `sk-…`, GitHub `ghp_…`/`github_pat_…`,
  Google `AIza…`, xAI `xai-…`, Slack `xox?-…`, AWS `AKIA…`, JWTs, and a few more;
* `Authorization: …`, `Bearer …` and `Basic …` credentials, `user:pass@` in URLs, `-u user:pass`;
* assignments: an env-style NAME (upper case) containing KEY, TOKEN, SECRET, PASSWORD, PASS,
  CREDENTIAL or AUTH loses its value whatever it is (`OPENAI_API_KEY=[redacted]`, the name kept
  so the checker still sees what was there); a mixed-case `password`/`passwd` loses any value;
  a `token`/`secret`/`key` name loses a value that looks generated (long, letters and digits);
* `--password …`, `--token …`, `--api-key …` style flags;
* whole private-key blocks, including a block cut off by the screen's edge (the key lines
  next to a lone BEGIN or END line go too).

Safety contract: every pattern starts at a token boundary (a negative lookbehind on its own
character class) and uses possessive or bounded repeats, so no position is scanned more than a
bounded number of times and a 5,000-line screen costs linear time. `redact` never raises: if
something unexpected goes wrong the whole text is withheld rather than sent unredacted.
Redaction over-reaches on purpose (a `KEYBOARD=us` loses its value): a lost word costs the
checker little, a leaked key costs the user a lot.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable

log = logging.getLogger(__name__)

MASK = "[redacted]"

# -- self-identifying token shapes ---------------------------------------------------------
# The lookbehind keeps a match from starting inside a longer word ("task-…" is not "sk-…") and
# makes each run of token characters a single start position: linear time.
_TOKEN_BODY = r"[A-Za-z0-9_-]"
_TOKENS = re.compile(
    r"(?<![A-Za-z0-9_-])(?:"
    r"sk-" + _TOKEN_BODY + r"{16,}+"                       # OpenAI, Anthropic (sk-ant-…, sk-proj-…)
    r"|(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}+"         # GitHub tokens
    r"|github_pat_[A-Za-z0-9_]{20,}+"                     # GitHub fine-grained tokens
    r"|glpat-" + _TOKEN_BODY + r"{16,}+"                  # GitLab
    r"|AIza[A-Za-z0-9_-]{30,}+"                           # Google API keys
    r"|xai-" + _TOKEN_BODY + r"{20,}+"                    # xAI
    r"|xox[abposr]-[A-Za-z0-9-]{10,}+"                    # Slack
    r"|hf_[A-Za-z0-9]{30,}+"                              # Hugging Face
    r"|npm_[A-Za-z0-9]{30,}+"                             # npm
    r"|pypi-AgE[A-Za-z0-9_-]{30,}+"                       # PyPI
    r"|(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[A-Z0-9]{16}(?![A-Za-z0-9])"  # AWS access key ids
    r"|eyJ[A-Za-z0-9_-]{4,}+\.eyJ[A-Za-z0-9_-]{4,}+\.[A-Za-z0-9_-]*+"  # JWT (header.payload.sig)
    r")"
)

# -- credentials in headers, URLs and flags ------------------------------------------------
_AUTH_HEADER = re.compile(
    r"(?i)(?<![\w-])((?:proxy-)?authorization[\"']?[ \t]{0,3}[:=][ \t]{0,3}[\"']?)"
    r"(?:(bearer|basic|token|digest|negotiate|ntlm)[ \t]{1,3})?[^\s\"',;]++"
)
# A credential after Bearer/Basic is not a plain word ("Bearer authentication", "Basic Setup"):
# the lookahead lets a capitalised or lower-case word through.
_WORD = r"(?![A-Za-z][a-z]+\b)"
_BEARER = re.compile(
    r"(?<![\w-])(Bearer|bearer|BEARER)([ \t]{1,3})" + _WORD + r"[A-Za-z0-9._~+/=-]{8,}+")
_BASIC = re.compile(r"(?<![\w-])(Basic[ \t]{1,3})" + _WORD + r"[A-Za-z0-9+/]{8,}+={0,2}")
_URL_USERINFO = re.compile(
    r"(?i)(?<![a-z0-9+.-])([a-z][a-z0-9+.-]{0,20}://[^\s/:@]{0,200}+:)[^\s/@]{1,400}+(?=@)"
)
_CURL_USER = re.compile(r"(?<!\S)((?:-u|--user|--proxy-user)[ \t]{1,3}[^\s:]{1,100}+:)\S{1,400}+")
_FLAG = re.compile(
    r"(?i)(?<![\w-])(--?(?:[a-z0-9]{1,40}[-_])?"
    r"(?:password|passwd|passphrase|pass|pwd|token|secret|api[-_]?key|access[-_]?key|"
    r"secret[-_]key|auth[-_]token|client[-_]secret)"
    r"(?:=|[ \t]{1,3}))[^\s\"'`]++"
)

# -- assignments: NAME=value, name: value --------------------------------------------------
# The lookahead keeps names without a secret-ish word inside the regex engine: on an ordinary
# screen (`word: word: …`) no name ever reaches the Python loop below.
_NAME = re.compile(
    r"(?<![\w.-])(?=[\w.-]{0,80}?(?i:key|token|secret|pass|pwd|pw|credential|auth|bearer|pat))"
    r"([A-Za-z_][\w.-]{0,80}+)([\"']?[ \t]{0,3}[=:][ \t]{0,3})(?=\S)"
)
# A value is judged by its first 256 characters (bounding the work per name, so `a:a:a:…` stays
# linear); a bare value found secret is then redacted to the end of its run.
_VALUE = re.compile(r"\"[^\"\n]{1,400}\"|'[^'\n]{1,400}'|[\"']?[^\s\"'`]{1,256}+")
_RUN = re.compile(r"[^\s\"'`]*+")
_ENV_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASS", "CREDENTIAL", "AUTH")
_PASSWORD_PARTS = frozenset({"password", "passwd", "pwd", "passphrase", "pw"})
_SECRET_PARTS = frozenset({
    "key", "apikey", "token", "secret", "credential", "credentials", "auth", "bearer",
    "privatekey", "accesskey", "secretkey", "authtoken", "pat",
})
# A name whose last part says the value is about a secret, not the secret itself.
_NOT_THE_SECRET = frozenset({
    "file", "path", "dir", "id", "name", "names", "count", "size", "type", "length", "len",
    "limit", "usage", "env", "var", "prefix", "url", "expires", "expiry", "at", "hint",
    "format", "mode", "provider", "cmd", "command", "helper", "source", "store", "location",
    "header", "field", "kind", "scope", "scopes", "status", "required", "tokens",
})
_PARTS = re.compile(r"[_.\-\s]+|(?<=[a-z0-9])(?=[A-Z])")
_GENERATED = re.compile(r"[A-Za-z0-9+/=_.~:-]{16,}")

# -- private keys --------------------------------------------------------------------------
_PEM = re.compile(r"-----(BEGIN|END)[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_KEY_LINE = re.compile(
    r"[\s│┃|]*+(?:[A-Za-z0-9+/=]{4,}+|(?:Proc-Type|DEK-Info|Comment|Version|Hash): .*)[\s│┃|]*+"
)


def redact(text: str) -> str:
    """`text` with every recognised secret replaced by `[redacted]`. Never raises."""
    try:
        out = _private_keys(text)
        out = _URL_USERINFO.sub(rf"\1{MASK}", out)
        out = _CURL_USER.sub(rf"\1{MASK}", out)
        out = _AUTH_HEADER.sub(_auth_header, out)
        out = _BEARER.sub(rf"\1\2{MASK}", out)
        out = _BASIC.sub(rf"\1{MASK}", out)
        out = _FLAG.sub(rf"\1{MASK}", out)
        out = _assignments(out)
        return _TOKENS.sub(MASK, out)
    except Exception:  # a redaction bug must never send the text out unredacted
        log.exception("redaction failed; the screen text is withheld")
        return MASK


def _auth_header(m: re.Match[str]) -> str:
    scheme = f"{m.group(2)} " if m.group(2) else ""
    return f"{m.group(1)}{scheme}{MASK}"


def _assignments(text: str) -> str:
    """Redact values of secret-named assignments, scanning left to right once.

    Written as a loop rather than `re.sub` so that a non-secret `name=` gives up only its
    name: the value after it is still scanned (`--env=OPENAI_API_KEY=…`).
    """
    pieces: list[str] = []
    pos = 0
    while (m := _NAME.search(text, pos)) is not None:
        value = _VALUE.match(text, m.end())
        decide = _judge(m.group(1))
        if value is None or decide is None or not decide(_unquote(value.group())):
            pieces.append(text[pos:m.end(1)])
            pos = m.end(1)
            continue
        pieces.append(text[pos:m.end()])
        pieces.append(MASK)
        pos = value.end()
        if not value.group().endswith(("\"", "'")):
            run = _RUN.match(text, pos)
            pos = run.end() if run else pos
    pieces.append(text[pos:])
    return "".join(pieces)


def _unquote(value: str) -> str:
    return value.strip("\"'")


@functools.lru_cache(maxsize=512)
def _judge(name: str) -> Callable[[str], bool] | None:
    """How to tell whether the value of `name` is a secret, or None when it never is."""
    letters = [c for c in name if c.isalpha()]
    if letters and all(c.isupper() for c in letters):
        # An env-style NAME: the user's own convention says it holds a secret.
        return _anything if any(word in name for word in _ENV_WORDS) else None
    parts = [p.lower() for p in _PARTS.split(name) if p]
    if not parts or parts[-1] in _NOT_THE_SECRET:
        return None
    if any(p in _PASSWORD_PARTS for p in parts):
        return _anything
    if any(p in _SECRET_PARTS for p in parts):
        return _generated
    return None


def _anything(value: str) -> bool:
    return value != MASK


def _generated(value: str) -> bool:
    """Long, and mixes letters and digits: a key, not a word (`auth: required` survives)."""
    return (
        _GENERATED.fullmatch(value) is not None
        and any(c.isdigit() for c in value)
        and any(c.isalpha() for c in value)
    )


def _private_keys(text: str) -> str:
    """Replace private-key blocks; a block with one end missing takes its key lines along.

    One left-to-right pass: each BEGIN searches forward for its END once, and when none exists
    no later BEGIN searches again.
    """
    pieces: list[str] = []
    pos = 0
    no_end_after = -1  # an END search from here on already came back empty
    while (m := _PEM.search(text, pos)) is not None:
        if m.group(1) == "END":  # an END whose BEGIN is above the screen's edge
            start = _key_lines_above(text, pos, m.start())
            pieces.append(text[pos:start])
            pieces.append(MASK)
            pos = m.end()
            continue
        pieces.append(text[pos:m.start()])
        pieces.append(MASK)
        end = None if no_end_after >= 0 else _find_end(text, m.end())
        if end is not None:
            pos = end
            continue
        no_end_after = m.end()
        pos = _key_lines_below(text, m.end())
    pieces.append(text[pos:])
    return "".join(pieces)


def _find_end(text: str, start: int) -> int | None:
    pos = start
    while (m := _PEM.search(text, pos)) is not None:
        if m.group(1) == "END":
            return m.end()
        pos = m.end()
    return None


def _key_lines_below(text: str, start: int) -> int:
    """End of the key material after a lone BEGIN: the rest of its line, then key lines."""
    newline = text.find("\n", start)
    if newline < 0:
        return len(text)
    pos = newline
    while pos < len(text):
        nxt = text.find("\n", pos + 1)
        line_end = len(text) if nxt < 0 else nxt
        line = text[pos + 1:line_end]
        if not line.strip() or _KEY_LINE.fullmatch(line) is None:
            return pos
        pos = line_end
    return pos


def _key_lines_above(text: str, floor: int, end: int) -> int:
    """Start of the key material before a lone END (never before `floor`)."""
    newline = text.rfind("\n", floor, end)
    line_start = floor if newline < 0 else newline + 1
    # The END line's own prefix is key material too (a wrapped last line).
    pos = line_start
    while pos > floor:
        prev_start = text.rfind("\n", floor, pos - 1)
        prev_start = floor if prev_start < 0 else prev_start + 1
        line = text[prev_start:pos - 1]
        if not line.strip() or _KEY_LINE.fullmatch(line) is None:
            break
        pos = prev_start
    return pos
