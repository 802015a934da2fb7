"""Reading what an agent did from its own session transcript (for a task brief, and as the
steps the loop detector watches).

Lenient by contract: a missing, unreadable or unknown file gives `EMPTY`, never an error, and
every item is passed through `core.brief.clean` before it can reach another agent.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shlex
import stat
from collections.abc import Callable, Iterator

from pitcrew.supervisor.core.brief import EMPTY, ITEM_MAX, NO_TRANSCRIPT, Progress, clean
from pitcrew.supervisor.core.loops import LABEL_CHARS, Step
from pitcrew.supervisor.providers.model import RecordPick, TranscriptSpec

log = logging.getLogger(__name__)

TAIL_BYTES = 2 * 1024 * 1024  # read at most the last 2 MB of a transcript
MAX_FILES = 40                # files touched kept in a Progress (newest last)

Json = dict[str, object]
Event = tuple[str, list[str]]  # (step, files touched); either may be empty

__all__ = ["EMPTY", "NO_TRANSCRIPT", "TAIL_BYTES", "read_progress", "read_steps"]

def _d(value: object) -> Json:  # JSON read leniently: the wrong type reads as empty
    return value if isinstance(value, dict) else {}


def _l(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _s(value: object) -> str:
    return value if isinstance(value, str) else ""


def _json_args(value: object) -> Json:
    """Tool arguments, which some CLIs store as a JSON string and others as an object."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {"input": value}
    return _d(value)


_EDIT_TOOLS = frozenset({  # Claude Code; Gemini CLI and Qwen Code; Copilot CLI and others
    "edit", "write", "multiedit", "notebookedit", "write_file", "replace", "edit_file",
    "create", "str_replace", "create_file"})
_PATH_KEYS = ("file_path", "notebook_path", "absolute_path", "filePath", "path")
_DETAIL_KEYS = ("command", "cmd", *_PATH_KEYS, "pattern", "url", "query", "description")
_PATCH_FILE = re.compile(r"^\*\*\* (?:(?:Update|Add|Delete) File|Move to): (.+?)\s*$", re.M)
_EXEC_PRAGMA = re.compile(r"^\s*// @exec:[^\n]*\n")


def _patch_files(text: str) -> list[str]:
    """Files named by a Codex `apply_patch` envelope (also when run through a shell heredoc)."""
    return _PATCH_FILE.findall(text) if "*** " in text else []


def _command_text(value: object) -> str:
    if isinstance(value, list) and all(isinstance(part, str) for part in value):
        parts = [str(part) for part in value]
        # ["bash", "-lc", "pytest -q"] is how Codex's `shell` tool wraps a command
        if len(parts) == 3 and parts[1] in ("-c", "-lc"):
            return parts[2]
        return shlex.join(parts)
    return _s(value)


def _tool(name: str, args: Json) -> Event:
    """One tool call as a step ("Bash: pytest -q", "Edit: src/a.py") and the files it wrote."""
    name = name or "tool"
    if name == "apply_patch":  # Codex: the patch text names every file it touches
        files = _patch_files(_s(args.get("input")))
        return " ".join(["apply_patch", ", ".join(files)]).strip(), files
    files = []
    if name.lower() in _EDIT_TOOLS:
        files.extend([p for k in _PATH_KEYS if (p := _s(args.get(k)))][:1])
    detail = next((t for k in _DETAIL_KEYS if (t := _command_text(args.get(k)).strip())), "")
    files.extend(_patch_files(detail))
    return (f"{name}: {detail}" if detail else name), files


def _claude(records: list[Json]) -> Iterator[Event]:
    """Claude Code and Qwen Code: `assistant` records (user records hold prompts and results).

    Claude's `message.content` holds `tool_use` blocks; Qwen keeps Claude's envelope but its
    `message.parts` hold Gemini-style `functionCall`s.
    """
    for rec in records:
        if rec.get("type") != "assistant":
            continue
        msg = _d(rec.get("message"))
        for block in map(_d, _l(msg.get("content")) + _l(msg.get("parts"))):
            if block.get("type") == "tool_use":
                yield _tool(_s(block.get("name")), _d(block.get("input")))
            elif call := _d(block.get("functionCall")):
                yield _tool(_s(call.get("name")), _json_args(call.get("args")))


def _codex(records: list[Json]) -> Iterator[Event]:
    """Codex rollouts: `response_item` payloads that are function, custom or shell calls."""
    for rec in records:
        if rec.get("type") != "response_item":
            continue
        item = _d(rec.get("payload"))
        kind, name = item.get("type"), _s(item.get("name"))
        if kind == "function_call":
            yield _tool(name, _json_args(item.get("arguments")))
        elif kind == "custom_tool_call":  # free-form input: a patch, or `exec`'s JavaScript
            text = _s(item.get("input"))
            yield _tool(name, {"input": text, "command": _EXEC_PRAGMA.sub("", text, count=1)})
        elif kind == "local_shell_call":
            yield _tool("shell", _d(item.get("action")))


def _gemini(records: list[Json]) -> Iterator[Event]:
    """Gemini CLI chat JSONL, replayed in order.

    A message is appended again under its id when its tool calls grow, `$set.messages`
    replaces the list, `$rewindTo` drops a message and all after it. A legacy `.json`
    session is one document with `messages` at the top.
    """
    messages: dict[str, Json] = {}
    for rec in records:
        listed = _d(rec.get("$set")).get("messages", rec.get("messages"))
        if isinstance(listed, list):
            messages = {_s(m.get("id")) or str(i): m for i, m in enumerate(map(_d, listed))}
        elif isinstance(rec.get("$rewindTo"), str):
            ids = list(messages)
            cut = ids.index(rec["$rewindTo"]) if rec["$rewindTo"] in ids else 0
            messages = {k: messages[k] for k in ids[:cut]}
        elif isinstance(rec.get("id"), str) and "type" in rec:
            messages[_s(rec["id"])] = rec
    for msg in messages.values():
        if msg.get("type") == "gemini":
            for call in map(_d, _l(msg.get("toolCalls"))):
                yield _tool(_s(call.get("name")), _json_args(call.get("args")))


def _copilot(records: list[Json]) -> Iterator[Event]:
    """Copilot CLI `events.jsonl`: `assistant.message` tool requests; files from the shutdown."""
    for rec in records:
        data = _d(rec.get("data"))
        if rec.get("type") == "assistant.message":
            for req in map(_d, _l(data.get("toolRequests"))):
                name = _s(req.get("name")) or _s(req.get("toolName"))
                yield _tool(name, _json_args(req.get("arguments", req.get("args"))))
        elif rec.get("type") == "session.shutdown":
            changed = _l(_d(data.get("codeChanges")).get("filesModified"))
            yield "", [path for path in changed if isinstance(path, str)]


def _fakeagent(records: list[Json]) -> Iterator[Event]:
    """The test suite's fake agent: its `done` and `crash` records are the steps."""
    for rec in records:
        if rec.get("type") == "done":
            yield f'done: "{_s(rec.get("text"))}"', []
        elif rec.get("type") == "crash":
            yield f"crash (exit {rec.get('code')})", []


_PARSERS: dict[str, Callable[[list[Json]], Iterator[Event]]] = {
    "claude": _claude, "qwen": _claude, "codex": _codex, "gemini": _gemini,
    "copilot": _copilot, "fakeagent": _fakeagent,
}


def _sniff(records: list[Json]) -> str | None:
    """The transcript format of a provider without a known one (a user's own provider file)."""
    for rec in records:
        kind, msg = _s(rec.get("type")), _d(rec.get("message"))
        if kind in ("response_item", "session_meta"):
            return "codex"
        if "$set" in rec or "$rewindTo" in rec or "projectHash" in rec or kind == "gemini":
            return "gemini"
        if kind.startswith(("session.", "assistant.", "user.")):
            return "copilot"
        if kind in ("user", "assistant") and msg:
            return "qwen" if "parts" in msg else "claude"
        if kind in ("prompt", "done", "crash"):
            return "fakeagent"
    return None


def _records(path: str, since: int = 0) -> list[Json]:
    """The JSON objects in the last TAIL_BYTES of `path` (and after byte `since`); [] when it
    is not a readable file."""
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        return []  # a FIFO or device would block or never end
    with open(path, "rb") as fh:
        start = max(st.st_size - TAIL_BYTES, 0, since if since <= st.st_size else 0)
        fh.seek(start)
        raw = fh.read(TAIL_BYTES)
    if start and start != since:   # `since` is a line boundary: where the file ended
        raw = raw[raw.find(b"\n") + 1:] if b"\n" in raw else b""  # drop the torn first line
    text = raw.decode("utf-8", "replace")
    out: list[Json] = []
    for line in text.split("\n"):  # "\n" only: U+2028 or \x85 may sit raw inside a string
        try:
            value = json.loads(line)
        except ValueError:
            continue  # blank, torn or foreign line
        if isinstance(value, dict):
            out.append(value)
    if not out and not start:
        try:  # one pretty-printed document (Gemini's legacy .json sessions)
            value = json.loads(text)
        except ValueError:
            return []
        out = [value] if isinstance(value, dict) else []
    return out


def read_progress(provider_name: str, session_file: str | None, max_steps: int = 8) -> Progress:
    """What `session_file` (the provider's own transcript) says was done; never raises.

    Steps come in file order, the newest `max_steps` kept; files touched are unique, ordered by
    their latest touch, the newest `MAX_FILES` kept. A missing, unreadable or unrecognised
    file gives `EMPTY` (source "no transcript").
    """
    if not session_file:
        return EMPTY
    try:
        records = _records(session_file)
        fmt = provider_name if provider_name in _PARSERS else _sniff(records)
        if not records or fmt is None:
            return EMPTY
        steps: list[str] = []
        files: dict[str, None] = {}  # an ordered set
        for step, touched in _PARSERS[fmt](records):
            if step := clean(step, ITEM_MAX):
                steps.append(step)
            for path in touched:
                if path := clean(path, ITEM_MAX):
                    files.pop(path, None)
                    files[path] = None
        return Progress(tuple(list(files)[-MAX_FILES:]),
                        tuple(steps[-max_steps:]) if max_steps > 0 else (),
                        f"{fmt} transcript {os.path.basename(session_file)}")
    except Exception as exc:  # lenient by contract: a brief without progress beats no failover
        log.info("cannot read progress from %s: %s", session_file, exc)
        return EMPTY




# -- tool calls as steps, for loop detection (core.loops) --------------------------------------


def _path(value: object, path: str) -> object:
    """A dotted path into JSON; `a|b` takes the first alternative present."""
    for alt in path.split("|"):
        cur: object = value
        for part in alt.split(".") if alt else ():
            cur = _d(cur).get(part)
        if cur is not None:
            return cur
    return None


def _meets(value: object, conditions: tuple[tuple[str, tuple[str, ...]], ...]) -> bool:
    return all(str(_path(value, key)) in allowed for key, allowed in conditions)


def _items(rec: Json, pick: RecordPick) -> Iterator[Json]:
    if not _meets(rec, pick.record):
        return
    found = _path(rec, pick.items) if pick.items else rec
    for item in (found if isinstance(found, list) else [found]):
        if isinstance(item, dict) and _meets(item, pick.item):
            yield item


def _failed(item: Json, pick: RecordPick) -> bool:
    if pick.error.startswith("regex:"):
        output = _path(item, pick.output)
        text = output if isinstance(output, str) else json.dumps(output)
        return re.search(pick.error[6:], text, re.I | re.M) is not None
    return bool(_path(item, pick.error))


def steps_of(spec: TranscriptSpec, records: list[Json]) -> list[Step]:
    """Each tool call as a `Step`: its key holds the call's full arguments and, when the
    transcript records results, whether it failed; a call still waiting for its result is
    left out (it has not happened yet)."""
    calls: list[tuple[str, str, str]] = []   # (id, key, label)
    outcome: dict[str, bool] = {}
    for rec in records:
        for item in _items(rec, spec.call):
            name = _s(_path(item, spec.call.name)) or "tool"
            args = _path(item, spec.call.args)
            label, _ = _tool(name, _json_args(args))
            digest = hashlib.sha1(json.dumps(args, sort_keys=True, default=str).encode(),
                                  usedforsecurity=False).hexdigest()[:16]
            calls.append((str(_path(item, spec.call.id) or len(calls)), f"{name}:{digest}",
                          clean(label, LABEL_CHARS)))
        if spec.result is not None:
            for item in _items(rec, spec.result):
                outcome[str(_path(item, spec.result.id))] = _failed(item, spec.result)
    steps: list[Step] = []
    for call_id, key, label in calls:
        if spec.result is None:
            steps.append(Step(key, label))
        elif call_id in outcome:
            error = outcome[call_id]
            steps.append(Step(f"{key}:{'error' if error else 'ok'}",
                              label + (" (error)" if error else ""), error))
    return steps


def size_of(path: str | None) -> int | None:
    """Where a transcript ends now (steps after it belong to a task starting now)."""
    try:
        return os.stat(path).st_size if path else None
    except OSError:
        return None


def read_steps(spec: TranscriptSpec | None, session_file: str | None, since: int = 0,
               max_steps: int = 1000) -> tuple[Step, ...] | None:
    """The newest tool calls in `session_file` written after byte `since`, or None when there
    is no transcript to read (no spec, no file, unreadable): then the caller watches the
    screen instead."""
    if spec is None or not session_file:
        return None
    try:
        return tuple(steps_of(spec, _records(session_file, since))[-max_steps:])
    except Exception as exc:  # lenient by contract
        log.info("cannot read steps from %s: %s", session_file, exc)
        return None
