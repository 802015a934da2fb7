"""Installing Pitcrew's hooks into Claude Code's settings without touching the user's own.

Claude Code runs `hooks.<Event>[].hooks[].command` on each event with a JSON payload on
stdin (session_id, transcript_path, cwd, prompt …). Pitcrew adds one matcher group per event
running `pitcrew hook <Event>`; its entries are recognised by that command and nothing else.
Installing twice changes nothing; every change backs the file up first; uninstalling removes
only Pitcrew's entries (and groups it emptied).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

from pitcrew.supervisor.core.errors import PitcrewError

EVENTS = ("UserPromptSubmit", "Stop", "Notification", "SessionStart", "SessionEnd")
MARK = " hook "


def settings_path() -> Path:
    base = os.environ.get("CLAUDE_CONFIG_DIR")
    return (Path(base).expanduser() if base else Path.home() / ".claude") / "settings.json"


def _load(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except ValueError as exc:
        raise PitcrewError(
            f"{path}: not valid JSON ({exc}); fix it before installing hooks") from None
    if not isinstance(data, dict):
        raise PitcrewError(f"{path}: expected a JSON object")
    return data


def _ours(entry: Any, event: str) -> bool:
    command = entry.get("command", "") if isinstance(entry, dict) else ""
    if not isinstance(command, str) or not command.endswith(f"{MARK}{event}"):
        return False
    program = command[: -len(f"{MARK}{event}")]
    # `-m supervisor`: how hooks were installed before the `pitcrew` package
    return "pitcrew" in program or program.endswith(" -m supervisor")


def install(pitcrew: str) -> str:
    path = settings_path()
    data = _load(path)
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise PitcrewError(f"{path}: 'hooks' is not an object; not touching it")
    added = []
    for event in EVENTS:
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise PitcrewError(f"{path}: hooks.{event} is not a list; not touching it")
        if any(_ours(h, event) for g in groups if isinstance(g, dict)
               for h in g.get("hooks", [])):
            continue
        group: dict[str, Any] = {"hooks": [{"type": "command",
                                            "command": f"{pitcrew}{MARK}{event}"}]}
        if event == "Notification":
            group["matcher"] = ""
        groups.append(group)
        added.append(event)
    if not added:
        return f"Pitcrew's hooks are already installed in {path}"
    _write(path, data)
    return f"Installed Pitcrew's hooks ({', '.join(added)}) in {path}"


def uninstall() -> str:
    path = settings_path()
    data = _load(path)
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return f"No Pitcrew hooks in {path}"
    removed = 0
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept_groups = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                kept = [h for h in group["hooks"] if not _ours(h, event)]
                removed += len(group["hooks"]) - len(kept)
                if not kept:
                    continue
                group = {**group, "hooks": kept}
            kept_groups.append(group)
        if kept_groups:
            hooks[event] = kept_groups
        else:
            del hooks[event]
    if not removed:
        return f"No Pitcrew hooks in {path}"
    if not hooks:
        del data["hooks"]
    _write(path, data)
    return f"Removed {removed} Pitcrew hook(s) from {path}"


def _write(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        backup = path.with_name(f"{path.name}.pitcrew-backup-{int(time.time())}")
        shutil.copy2(path, backup)
    tmp = path.with_name(f".{path.name}.pitcrew-tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)
