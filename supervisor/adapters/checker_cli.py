"""The checker chain: another agent CLI, run headless and read-only, reads a stuck screen.

Theory of operation
-------------------
1. `chain` picks who may read the screen: the user's ordered choices (at most `MAX_CHECKERS`,
   candidates with a `[checker]` table, each provider once), never the stuck terminal's own
   provider (no agent grades itself). With no choice made, the first installed candidate.
2. `build_prompt` (supervisor/checker_text.py) wraps the screen as data: control characters
   stripped, secrets redacted (`supervisor.redact`), the tail capped, delimiter look-alikes
   neutralised, and fixed instructions around it asking for one line of JSON.
3. `run_checker` runs one checker as a real subprocess in a fresh empty temporary directory
   (never the project), with a minimal environment (no TMUX, no secrets it was not given), in
   its own process group, which is killed when its wall-clock budget passes: `[diagnosis]
   checker_timeout` (60 s), which a provider's own `[checker] timeout` can only shorten.
4. `parse_answer` (same module) accepts exactly `{"state", "reason", "reset_at"}` with a
   known state; any other shape is no answer. The answer only ever becomes a `Classification`.
5. `diagnose` walks the chain until one checker answers; a checker that is not installed, hits
   its own limit, errors, times out or answers out of schema hands over to the next. The whole
   chain has its own budget, `[diagnosis] chain_timeout` (150 s): a checker gets what is left
   of it when that is less than its own, and none starts with less than `MIN_RUN` left, so
   four hanging checkers hold a diagnosis for 150 s, not 4 × 120. Without the user's consent
   no process is started and the local classifier's verdict stands.

Nothing here types into a pane: the result is a `Diagnosis`, a record the core decides on.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import enum
import logging
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO

from pitcrew.supervisor.core.checker_text import Answer, build_prompt, one_line, parse_answer
from pitcrew.supervisor.core.classifier import classify
from pitcrew.supervisor.core.redact import redact
from pitcrew.supervisor.core.rules import ScreenRules
from pitcrew.supervisor.core.screen import Classification, ScreenState
from pitcrew.supervisor.providers.loader import Registry
from pitcrew.supervisor.providers.model import CHECKER_CANDIDATES, Provider

log = logging.getLogger(__name__)

CANDIDATES = CHECKER_CANDIDATES   # the CLIs that may be checkers, in the default order
MAX_CHECKERS = 4
LOCAL = "local classifier"
DETAIL_CHARS = 160
OUTPUT_TAIL = 64 * 1024     # bytes of a checker's stdout/stderr that are read back
KILL_GRACE = 2.0            # seconds between SIGTERM and SIGKILL for a checker past its time
CHECKER_TIMEOUT = 60.0      # default wall-clock budget of one checker ([diagnosis] checker_timeout)
CHAIN_TIMEOUT = 150.0       # default budget of a whole diagnosis ([diagnosis] chain_timeout)
MIN_RUN = 1.0               # a checker is not started with less of the chain's budget left
# Passed through when Pitcrew has them; a provider's `checker.env` adds its own names.
# What any CLI needs to run and reach its service: locale, home, temp, and the proxy and CA
# settings of a corporate network (without them every checker fails behind a proxy).
BASE_ENV = (
    "PATH", "HOME", "LANG", "LC_ALL", "TMPDIR",
    "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "ALL_PROXY", "https_proxy", "http_proxy",
    "no_proxy", "all_proxy", "SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
)


class Outcome(enum.StrEnum):
    ANSWERED = "answered"
    NOT_INSTALLED = "not_installed"
    LIMIT = "limit"                  # the checker itself is rate-limited
    ERROR = "error"
    TIMEOUT = "timeout"
    INVALID = "invalid"              # exit 0, but no answer in the schema


@dataclass(frozen=True, slots=True)
class CheckerChoice:
    provider: str
    model: str | None = None         # None: the CLI's default model


@dataclass(frozen=True, slots=True)
class Attempt:
    provider: str
    model: str | None
    outcome: Outcome
    seconds: float
    detail: str                      # one short line, never the checker's whole output


@dataclass(frozen=True, slots=True)
class Diagnosis:
    """What a stuck screen shows, and who said so.

    `by` is the checker's provider name, or `local classifier (no consent)` / `local classifier
    (every checker failed)` when the local verdict stands. `attempts` lists every checker tried.
    """

    screen: Classification
    by: str
    seconds: float
    attempts: tuple[Attempt, ...]
    consent: bool



# -- choosing checkers -----------------------------------------------------------------------


def chain(
    choices: Sequence[CheckerChoice],
    stuck_provider: str,
    registry: Registry,
    which: Callable[[str], str | None] = shutil.which,
) -> list[CheckerChoice]:
    """The checkers to try, in order.

    A provider appears once (the first choice wins): a CLI that hit its own limit with one
    model has usually hit it for the account. A user's choice that is not installed stays in
    the chain, so the attempt records why it was passed over.
    """
    def usable(name: str) -> Provider | None:
        provider = registry.get(name)
        if name == stuck_provider or provider is None:
            return None
        return provider if provider.can_check else None

    if not choices:
        for name in CANDIDATES:
            if usable(name) is not None and installed(registry, name, which):
                return [CheckerChoice(name)]
        return []
    picked: list[CheckerChoice] = []
    for choice in choices:
        if usable(choice.provider) and all(c.provider != choice.provider for c in picked):
            picked.append(choice)
    return picked[:MAX_CHECKERS]


def installed(registry: Registry, name: str,
              which: Callable[[str], str | None] = shutil.which) -> bool:
    """Whether `name` can check here: its provider has a [checker] table whose programs are
    on PATH."""
    provider = registry.get(name)
    if provider is None or provider.checker is None or not provider.can_check:
        return False
    return all(which(exe) for exe in executables(provider.checker.argv.argv))


def executables(argv: Sequence[str]) -> tuple[str, ...]:
    """The programs an argv runs: `env VAR=… cli …` runs `env` and then `cli`."""
    if not argv:
        return ()
    if os.path.basename(argv[0]) != "env":
        return (argv[0],)
    for part in argv[1:]:
        if part.startswith("-") or ("=" in part and not part.startswith("=")):
            continue
        return (argv[0], part)
    return (argv[0],)

# -- running one checker ---------------------------------------------------------------------


# A model is one word that cannot be read as a flag (`--model --yolo` must not turn one on).
_MODEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@+\[\]-]{0,120}")
_LIMIT_WORDS = re.compile(
    r"(?i)\b(?:usage|rate|session|weekly|daily|monthly|request)[ _-]?limit|quota|"
    r"too many requests|\b429\b|resource[_ ]exhausted|out of credits|insufficient[_ ]balance"
)


def checker_environment(names: Sequence[str], source: Mapping[str, str]) -> dict[str, str]:
    """The whole environment a checker gets: `BASE_ENV`, TERM=dumb and `names`, if set."""
    env = {key: source[key] for key in (*BASE_ENV, *names) if key in source}
    env.setdefault("PATH", os.defpath)
    if "LANG" not in env and "LC_ALL" not in env:
        env["LANG"] = "C.UTF-8"  # a UTF-8 locale, or the CLI may garble its answer
    env["TERM"] = "dumb"
    return env


def run_checker(
    choice: CheckerChoice,
    provider: Provider,
    prompt: str,
    timeout: float | None = None,
    environ: Mapping[str, str] | None = None,
    *,
    rules: ScreenRules | None = None,
) -> tuple[Attempt, Answer | None]:
    """Run one checker on `prompt`; what happened and its answer (None unless answered).

    `timeout` is the wall-clock budget (default `CHECKER_TIMEOUT`); the provider's
    `checker.timeout` can only shorten it. `environ` is where the passed-through
    variables come from (default: Pitcrew's own environment). `rules` read the checker's output
    for its own usage limit (default: the provider's screen rules). Never raises.
    """
    started = time.monotonic()

    def attempt(outcome: Outcome, detail: str) -> Attempt:
        found = Attempt(choice.provider, choice.model, outcome, time.monotonic() - started,
                        one_line(redact(detail), DETAIL_CHARS))
        log.info("checker %s: %s, %s (%.1f s)", choice.provider, outcome.value, found.detail,
                 found.seconds, extra={"pitcrew_checker": choice.provider,
                                       "pitcrew_checker_outcome": outcome.value})
        return found

    checker = provider.checker
    if checker is None:
        return attempt(Outcome.NOT_INSTALLED, f"{provider.name} cannot be a checker"), None
    if choice.model and not _MODEL.fullmatch(choice.model):
        return attempt(Outcome.ERROR, f"not a model name: {choice.model!r}"), None
    env = checker_environment(checker.env, os.environ if environ is None else environ)
    argv = checker.argv.render(checker.model_args(choice.model), prompt=prompt)
    for exe in executables(argv):
        if shutil.which(exe, path=env["PATH"]) is None:
            return attempt(Outcome.NOT_INSTALLED, f"{exe} is not on PATH"), None
    limit = min(CHECKER_TIMEOUT if timeout is None else timeout, checker.timeout)
    stdin = prompt if checker.prompt == "stdin" else None
    workdir = ""
    try:
        workdir = tempfile.mkdtemp(prefix="pitcrew-checker-")
        code, stdout, stderr = _run(argv, env, workdir, stdin, limit, choice.provider)
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        return attempt(Outcome.ERROR, f"cannot run {argv[0]}: {exc}"), None
    finally:
        if workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    if code is None:
        return attempt(Outcome.TIMEOUT, f"no answer within {limit:g} s"), None
    answer = parse_answer(stdout) if code == 0 else None
    if answer is not None:
        return attempt(Outcome.ANSWERED, answer[0].value), answer
    limited = _own_limit(f"{stdout}\n{stderr}", rules or provider.screen, code)
    if limited is not None:
        return attempt(Outcome.LIMIT, limited), None
    if code != 0:
        said = _last_line(stderr) or _last_line(stdout)
        return attempt(Outcome.ERROR, f"exit {code}: {said}"), None
    return attempt(Outcome.INVALID, f"no answer in the schema: {_last_line(stdout)}"), None


def _run(
    argv: Sequence[str], env: Mapping[str, str], cwd: str, stdin: str | None, timeout: float,
    name: str,
) -> tuple[int | None, str, str]:
    """Exit code (None after a timeout), stdout and stderr tails.

    Input and output go through unlinked temporary files, not pipes: a checker that never reads
    its stdin cannot block the write, and one that floods its output cannot fill our memory.
    """
    with tempfile.TemporaryFile() as inp, tempfile.TemporaryFile() as out, \
            tempfile.TemporaryFile() as err:
        if stdin is not None:
            inp.write(stdin.encode("utf-8"))
            inp.seek(0)
        proc = subprocess.Popen(
            list(argv), cwd=cwd, env=dict(env),
            stdin=inp if stdin is not None else subprocess.DEVNULL, stdout=out, stderr=err,
            start_new_session=True, close_fds=True,
        )
        code: int | None = None
        try:
            code = proc.wait(timeout)
        except subprocess.TimeoutExpired:
            _stop(proc, name, timeout)
        finally:
            if proc.poll() is None:  # interrupted while waiting: leave nothing running
                _signal_group(proc.pid, signal.SIGKILL)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(KILL_GRACE)
            _signal_group(proc.pid, signal.SIGKILL)  # helpers it left behind in its group
        return code, _tail(out), _tail(err)


def _stop(proc: subprocess.Popen[bytes], name: str, timeout: float) -> None:
    """SIGTERM the checker's process group, wait `KILL_GRACE`, then SIGKILL it."""
    log.info("checker %s: no answer after %g s; sending SIGTERM", name, timeout,
             extra={"pitcrew_checker": name})
    _signal_group(proc.pid, signal.SIGTERM)
    try:
        proc.wait(KILL_GRACE)
    except subprocess.TimeoutExpired:
        log.info("checker %s: still running after SIGTERM; sending SIGKILL", name,
                 extra={"pitcrew_checker": name})
    _signal_group(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(KILL_GRACE)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _tail(spool: IO[bytes]) -> str:
    size = spool.seek(0, os.SEEK_END)
    spool.seek(max(0, size - OUTPUT_TAIL))
    return spool.read().decode("utf-8", "backslashreplace")


def _own_limit(text: str, rules: ScreenRules, code: int) -> str | None:
    """The line saying the checker itself is rate-limited, or None."""
    verdict = classify(text, rules, dt.datetime.now(dt.UTC), dt.UTC)
    if verdict.state is ScreenState.RATE_LIMIT:
        return verdict.evidence or "usage limit"
    if code != 0:
        for line in reversed(text[-OUTPUT_TAIL:].splitlines()):
            if _LIMIT_WORDS.search(line):
                return line
    return None


def _last_line(text: str) -> str:
    return next((line for line in reversed(text.splitlines()) if line.strip()), "")

# -- the chain -------------------------------------------------------------------------------


def diagnose(
    screen_text: str,
    stuck_provider: str,
    choices: Sequence[CheckerChoice],
    registry: Registry,
    local: Classification,
    consent: bool,
    checker_timeout: float = CHECKER_TIMEOUT,
    chain_timeout: float = CHAIN_TIMEOUT,
    environ: Mapping[str, str] | None = None,
    clock: Callable[[], float] = time.monotonic,
    note: str = "",
    stalled_for: float = 0.0,
) -> Diagnosis:
    """Ask the checkers in order; the first answer wins, else the `local` verdict stands.

    Each checker gets `checker_timeout` seconds, or what is left of `chain_timeout` if that
    is less; once less than `MIN_RUN` is left, the rest are recorded as timed out, not run.

    Without `consent` no process is started and the screen goes nowhere. A checker's answer
    keeps the local reading's reset time, retry delay and cause when both name the same state
    (the local classifier parsed them from the screen itself).
    """
    start = clock()
    if not consent:
        return Diagnosis(local, f"{LOCAL} (no consent)", clock() - start, (), False)
    source = os.environ if environ is None else environ
    path = source.get("PATH", os.defpath)
    order = chain(choices, stuck_provider, registry,
                  which=lambda name: shutil.which(name, path=path))
    prompt = build_prompt(screen_text, stuck_provider, now=dt.datetime.now().astimezone(),
                          repeats=note, stalled_for=stalled_for)
    attempts: list[Attempt] = []
    for choice in order:
        provider = registry.get(choice.provider)
        if provider is None:  # chain() keeps only loaded providers; kept for the type checker
            continue
        left = chain_timeout - (clock() - start)
        if left < MIN_RUN:
            attempts.append(Attempt(choice.provider, choice.model, Outcome.TIMEOUT, 0.0,
                                    f"not run: the diagnosis' {chain_timeout:g} s were spent"))
            log.info("checker %s: not run, the diagnosis' %g s were spent", choice.provider,
                     chain_timeout, extra={"pitcrew_checker": choice.provider})
            continue
        try:
            attempt, answer = run_checker(choice, provider, prompt,
                                          min(checker_timeout, left), source,
                                          rules=registry.generic_screen)
        except Exception:  # a bug in one checker run must not cost the diagnosis
            log.exception("checker %s: failed unexpectedly", choice.provider)
            attempt, answer = Attempt(choice.provider, choice.model, Outcome.ERROR, 0.0,
                                      "internal error (see the log)"), None
        attempts.append(attempt)
        if answer is not None:
            screen = _from_answer(answer, choice.provider, local)
            return Diagnosis(screen, choice.provider, clock() - start, tuple(attempts), True)
    return Diagnosis(local, f"{LOCAL} (every checker failed)", clock() - start,
                     tuple(attempts), True)


def _from_answer(answer: Answer, by: str, local: Classification) -> Classification:
    state, reason, reset_at = answer
    same = state is local.state
    return Classification(
        state=state,
        evidence=f"checker {by}: {reason}" if reason else f"checker {by}",
        reset_at=reset_at or (local.reset_at if same else None),
        retry_after=local.retry_after if same else None,
        cause=local.cause if same else None,
    )
