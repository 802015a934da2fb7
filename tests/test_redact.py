"""Secrets never reach a checker: planted secrets go, ordinary screen text stays, fast."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pitcrew.supervisor.core.redact import MASK, redact

# A real-looking key body: letters and digits mixed, so no ordinary word can equal it.
ANT = "sk-ant-api03-" + "Xq7vR2mK9pL4sT8wN1zB6cF3hJ5dG0aE" * 3 + "-AbC_dEf12AA"
PEM = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACDxq8Rk1Wm0Zr3hYx7Q2nB9cV4tL6sP8aF0gJ2kD5eH1wAAAJg7Xq9vO3qv\n"
    "RgAAAAtzc2gtZWQyNTUxOQ==\n"
    "-----END OPENSSH PRIVATE KEY-----"
)

# (screen, secrets that must be gone, text that must stay)
PLANTED = [
    pytest.param(
        "╭──────────────────────────────────────────╮\n"
        "│ > echo $ANTHROPIC_API_KEY                 │\n"
        f"│ ANTHROPIC_API_KEY: {ANT} │\n"
        "╰──────────────────────────────────────────╯\n"
        "  ? for shortcuts",
        [ANT], ["ANTHROPIC_API_KEY: [redacted]", "? for shortcuts", "echo $ANTHROPIC_API_KEY"],
        id="claude-screen-anthropic-key",
    ),
    pytest.param("export OPENAI_API_KEY=sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56",
                 ["sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56"], ["OPENAI_API_KEY=[redacted]"],
                 id="openai-project-key"),
    pytest.param("key sk-Zx81Yw72Vu63Ts54Rq45Po36Nm27Lk18 leaked",
                 ["sk-Zx81Yw72Vu63Ts54Rq45Po36Nm27Lk18"], ["key", "leaked"], id="openai-bare"),
    pytest.param("⏺ Bash(git push https://ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8@github.com/o/r)",
                 ["ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"], ["@github.com/o/r"],
                 id="github-classic-in-url"),
    pytest.param("token: gho_16C7e42F292c6912E7710c838347Ae178B4a",
                 ["gho_16C7e42F292c6912E7710c838347Ae178B4a"], ["token: [redacted]"],
                 id="github-oauth"),
    pytest.param("GH=github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789",
                 ["github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789"],
                 [], id="github-fine-grained"),
    pytest.param('  "apiKey": "AIzaSyD4n8Xq2Lr5Tz9Wb1Kc7Mv3Pe6Hg0Js8Ua",',
                 ["AIzaSyD4n8Xq2Lr5Tz9Wb1Kc7Mv3Pe6Hg0Js8Ua"], ['"apiKey"'], id="google"),
    pytest.param("XAI_API_KEY=xai-Qw3Er5Ty7Ui9Op1As3Df5Gh7Jk9Lz1Xc3Vb5Nm7Qw9Er1",
                 ["xai-Qw3Er5Ty7Ui9Op1As3Df5Gh7Jk9Lz1Xc3Vb5Nm7Qw9Er1"], ["XAI_API_KEY="], id="xai"),
    pytest.param("slack: xoxb-2134567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
                 ["xoxb-2134567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"], ["slack:"],
                 id="slack-bot"),
    pytest.param("[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\n"
                 "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
                 ["AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"],
                 ["[default]", "aws_secret_access_key = [redacted]"], id="aws"),
    pytest.param("cookie eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
                 ["eyJzdWIiOiIxMjM0NTY3ODkwIn0", "dozjgNryP4J3jVmNHl0w5N"], ["cookie"], id="jwt"),
    pytest.param('curl -H "Authorization: Bearer abc123.def456-ghi789" https://api.example.com',
                 ["abc123.def456-ghi789"], ["Authorization: Bearer [redacted]",
                                            "https://api.example.com"], id="bearer-header"),
    pytest.param("Authorization: Basic dXNlcjpwYXNzd29yZA==", ["dXNlcjpwYXNzd29yZA=="],
                 ["Authorization: Basic [redacted]"], id="basic-header"),
    pytest.param("proxy sent Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ== upstream",
                 ["QWxhZGRpbjpvcGVuIHNlc2FtZQ=="], ["upstream"], id="basic-bare"),
    pytest.param("db password=hunter2!x and passwd: c0rrect-h0rse",
                 ["hunter2!x", "c0rrect-h0rse"], ["password=[redacted]", "passwd: [redacted]"],
                 id="passwords"),
    pytest.param("$ mysql-admin --password S3cr3t#Pw --user root", ["S3cr3t#Pw"],
                 ["--password [redacted]", "--user root"], id="password-flag"),
    pytest.param("$ tool --api-key=Kf93jd8sLq0Zx", ["Kf93jd8sLq0Zx"], ["--api-key=[redacted]"],
                 id="api-key-flag"),
    pytest.param("DATABASE_URL=postgres://app:Pg_s3cret!@db.internal:5432/app",
                 ["Pg_s3cret!"], ["postgres://app:[redacted]@db.internal:5432/app"],
                 id="url-userinfo"),
    pytest.param("$ curl -u admin:Adm1nPass https://x", ["Adm1nPass"], ["-u admin:[redacted]"],
                 id="curl-user"),
    pytest.param(f"$ cat ~/.ssh/id_ed25519\n{PEM}\n$ ", ["b3BlbnNzaC1rZXktdjEAAAAABG5vbm",
                                                       "RgAAAAtzc2gtZWQyNTUxOQ=="],
                 ["$ cat ~/.ssh/id_ed25519", "$ "], id="pem-block"),
    pytest.param("\n".join(PEM.split("\n")[2:]) + "\n> ", ["QyNTUxOQAAACDxq8Rk1Wm0Zr3hYx7Q2n",
                                                        "RgAAAAtzc2gtZWQyNTUxOQ=="],
                 ["> "], id="pem-cut-at-the-top"),
    pytest.param("\n".join(PEM.split("\n")[:3]), ["b3BlbnNzaC1rZXktdjEAAAAABG5vbm",
                                                 "QyNTUxOQAAACDxq8Rk1Wm0Zr3hYx7Q2n"],
                 [], id="pem-cut-at-the-bottom"),
    pytest.param('{"token": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}',
                 ["9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"],
                 ['{"token": '], id="generic-hex-after-token"),
    pytest.param("client_secret: GOCSPX-1a2B3c4D5e6F7g8H9i0J",
                 ["GOCSPX-1a2B3c4D5e6F7g8H9i0J"], ["client_secret: "], id="generic-secret"),
    pytest.param("DB_PASS=x  MY_CREDENTIALS=abc  AUTH_COOKIE=zzz  STRIPE_SECRET=s",
                 ["=x", "=abc", "=zzz", "=s "], ["DB_PASS=", "AUTH_COOKIE="], id="env-names"),
]


@pytest.mark.parametrize(("screen", "secrets", "kept"), PLANTED)
def test_planted_secrets_are_redacted(screen: str, secrets: list[str], kept: list[str]) -> None:
    out = redact(screen + " ")
    for secret in secrets:
        assert secret not in out
    for text in kept:
        assert text in out
    assert MASK in out


# Screen text that looks a little like a secret, and must reach the checker as it is.
NEGATIVES = [
    "The keyboard shortcut is ctrl+k; press esc to interrupt",
    "commit 3f786850e387550fdab836ed7e6dc881de23001b (HEAD -> main)",
    "Resume this session with: claude --resume 123e4567-e89b-12d3-a456-426614174000",
    "codex resume 0199a213-81c0-7800-8aa1-bbab2a035a53",
    "Read src/auth/token_store.py:42 and ~/.config/gcloud/application_default_credentials.json",
    "auth: required   tokens: 12345   passed: 31   key: value",
    "Token usage: total=81,234 input=70,000 (+ 1,234 cached) output=11,234",
    "✻ Thinking… (12s · ↓ 1.2k tokens · esc to interrupt)",
    "$ pytest --max-tokens 1000 --token-file ~/.cache/token",
    "Basic authentication is not supported; use a Bearer token instead.",
    "Bearer authentication and Basic Configuration are described in docs/Security.md",
    "Invalid API key · Please run /login",
    "task-management-system-overview and disk-usage-report-generator",
    "You've hit your session limit · resets 11:56pm (UTC)",
    "■ stream error: 429 Too Many Requests; retrying 3/5 in 2s…",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "https://github.com/openai/codex/blob/main/README.md",
    "│ > Try \"fix lint errors\"                                                        │",
]


@pytest.mark.parametrize("screen", NEGATIVES)
def test_ordinary_screen_text_survives(screen: str) -> None:
    assert redact(screen) == screen


def test_a_big_screen_of_ordinary_text_is_unchanged() -> None:
    screen = "\n".join(NEGATIVES * 300)
    assert redact(screen) == screen


PATHOLOGICAL = [
    "eyJ" * 40_000,
    "eyJabc." * 20_000,
    "a" * 200_000,
    "sk-" * 40_000,
    "KEY=" * 40_000,
    "a:" * 60_000,
    "a=b " * 40_000,
    "x-" * 60_000,
    "https://" + "a:" * 40_000,
    "-----BEGIN PRIVATE KEY-----\n" * 5_000,
    "-----END PRIVATE KEY-----\nAAAA\n" * 5_000,
    "Authorization: " * 20_000,
    "Bearer " * 30_000,
    "--password " * 20_000,
    "\n".join(["│ " + "word: " * 160 + "│"] * 5_000),       # 5,000 lines of ~1,000 chars
]


@pytest.mark.parametrize("text", PATHOLOGICAL, ids=lambda t: repr(t[:16]))
def test_pathological_input_takes_linear_time(text: str) -> None:
    started = time.monotonic()
    redact(text)
    assert time.monotonic() - started < 3.0


@pytest.mark.parametrize("unit", ["a:", "eyJ", "KEY=", "key:k", "sk-", "x=y ", "--pass "])
def test_work_grows_linearly_with_the_text(unit: str) -> None:
    def cost(repeat: int) -> float:
        started = time.perf_counter()
        redact(unit * repeat)
        return time.perf_counter() - started

    small, large = min(cost(5_000) for _ in range(3)), min(cost(40_000) for _ in range(3))
    assert large < 24 * max(small, 1e-3)   # 8x the text; quadratic would be 64x the time


def test_a_5000_line_screen_with_secrets_is_fast() -> None:
    lines = [f"{i:5} │ OPENAI_API_KEY=sk-proj-{i:08d}Ab12Cd34Ef56Gh78 ok password=p{i}"
             for i in range(5_000)]
    started = time.monotonic()
    out = redact("\n".join(lines))
    assert time.monotonic() - started < 1.5
    assert "sk-proj-" not in out and "password=p" not in out.replace("password=[redacted]", "")


# -- properties ---------------------------------------------------------------------------

_body = st.text(alphabet="ABCDEFGHJKLMNPQRSTUVWXYZ0123456789abcdefghjkmnpqrstuvwxyz",
                min_size=40, max_size=60)
_password = st.text(alphabet="ABCDEFGHJKLMNPQRSTUVWXYZ0123456789!#$%^&*+~", min_size=8,
                    max_size=24)


@st.composite
def planted(draw: st.DrawFn) -> tuple[str, str]:
    """(text as it would appear on a screen, the secret part that must not survive)."""
    body = draw(_body)
    pw = draw(_password)
    kind = draw(st.sampled_from(range(16)))
    return [
        (f"sk-ant-api03-{body}AA", f"sk-ant-api03-{body}AA"),
        (f"sk-proj-{body}", body),
        (f"sk-{body}", body),
        (f"ghp_{body}", body),
        (f"github_pat_{body}", body),
        (f"AIza{body}", body),
        (f"xai-{body}", body),
        (f"xoxp-{body}", body),
        (f"AKIA{body[:16].upper()}", f"AKIA{body[:16].upper()}"),
        (f"eyJ{body[:20]}.eyJ{body[20:]}.{body}", body),
        (f"Authorization: Bearer {body}", body),
        (f"password={pw}", pw),
        (f"--password {pw}", pw),
        (f"https://deploy:{pw}@example.com/", pw),
        (f"{draw(st.sampled_from(['GITHUB_TOKEN', 'DB_PASSWORD', 'X_AUTH', 'MY_KEY']))}={pw}",
         pw),
        (f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n{body[::-1]}\n-----END RSA PRIVATE KEY-----",
         body),
    ][kind]


_filler_line = st.one_of(
    st.sampled_from(NEGATIVES),
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz .,:;()│─╭╮>", max_size=60),
)
_separator = st.sampled_from([" ", "\n", "\t", '"', "'", "(", "[", ": ", "= ", " │ "])


@settings(max_examples=300, deadline=None)
@given(before=st.lists(_filler_line, max_size=8), after=st.lists(_filler_line, max_size=8),
       secret=planted(), left=_separator, right=_separator)
def test_no_planted_secret_survives(before: list[str], after: list[str],
                                    secret: tuple[str, str], left: str, right: str) -> None:
    shown, hidden = secret
    screen = "\n".join(before) + left + shown + right + "\n".join(after)
    assert hidden not in redact(screen)


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_never_raises_on_any_text(text: str) -> None:
    assert isinstance(redact(text), str)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(_filler_line, planted().map(lambda p: p[0])), max_size=12))
def test_redacting_twice_changes_nothing_more(lines: list[str]) -> None:
    once = redact("\n".join(lines))
    assert redact(once) == once
