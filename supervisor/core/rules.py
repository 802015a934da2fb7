"""The parts of a provider file the core reads: an argv template, and the rules of the CLI's
screen. Plain frozen data (the provider loader builds them from TOML); kept in the core so
the rules that read them import nothing outside it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from pitcrew.supervisor.core.screen import ScreenState

MODEL_SPLICE = "{model_args}"   # an argv element replaced by the model arguments (or dropped)


@dataclass(frozen=True, slots=True)
class Command:
    """An argv template with `{placeholder}` fields."""

    argv: tuple[str, ...]

    def render(self, model_args: tuple[str, ...] = (), **values: str) -> tuple[str, ...]:
        out: list[str] = []
        for part in self.argv:
            if part == MODEL_SPLICE:
                out.extend(model_args)
                continue
            out.append(part.format_map(values) if "{" in part else part)
        return tuple(out)


@dataclass(frozen=True, slots=True)
class ScreenRules:
    """What the CLI's own UI looks like, per state.

    Patterns are case-insensitive regexes matched against the last `chrome_lines` non-blank
    lines of the screen (the CLI's chrome: status line, dialogs, input box and the lines just
    above it). `input` finds the input line and captures the typed text as group `text`
    (when `input_frame` is set, only a line right under a line it matches counts);
    `placeholders` match hint text shown in an empty input box. `transcript` matches lines of
    the agent's own prose and tool output, which never count as a limit, connection error or
    crash (an agent explaining a 429 handler is not rate-limited). `turn` matches the echo of
    a submitted prompt: a limit or error above the newest one belongs to an earlier turn.
    `turn_end`, for CLIs that show no spinner while streaming, matches the line closing a
    turn: output under the newest prompt with no such line yet means it is still answering.
    `banners` match the CLI's background notices (a startup check, an update or plugin fetch
    that failed): never a connection error or crash of the agent's turn.
    `progress_ignore` matches the parts of the screen that move while nothing progresses
    (spinners, elapsed timers, rotating status phrases): a change confined to them is not
    progress for the idle timeout (`core.timeouts.progress_text`).
    `goodbye` matches what the CLI prints when it ends normally (its resume hint, "Resume this
    session with:", "To continue this session, run …"): read only once the agent is gone (a
    shell prompt back, a dead pane), below the line it was started from, it means the agent
    exited as a person asked it to — never a crash to resume.
    `fallback` holds weaker signals per state that decide only when the screen shows none of
    the CLI's chrome (no input box, status line or marker): a partial capture, a dead pane, a
    screen pasted into a bug report — e.g. a stack trace, an update notice asking to act.
    """

    chrome_lines: int = 15
    markers: Mapping[ScreenState, tuple[re.Pattern[str], ...]] = field(default_factory=dict)
    causes: Mapping[str, tuple[re.Pattern[str], ...]] = field(default_factory=dict)
    input: tuple[re.Pattern[str], ...] = ()
    input_frame: re.Pattern[str] | None = None     # the line right above the input line
    placeholders: tuple[re.Pattern[str], ...] = ()
    transcript: tuple[re.Pattern[str], ...] = ()   # the agent's own prose / tool output lines
    turn: tuple[re.Pattern[str], ...] = ()         # a submitted prompt's echo: a new turn
    turn_end: tuple[re.Pattern[str], ...] = ()     # the line a CLI prints when a turn is over
    input_last: bool = False       # the prompt is only ever the last line (above: echoes)
    overlay: tuple[re.Pattern[str], ...] = ()      # toasts drawn over a busy screen: they count
    continue_message: str | None = None
    fallback: Mapping[ScreenState, tuple[re.Pattern[str], ...]] = field(default_factory=dict)
    banners: tuple[re.Pattern[str], ...] = ()
    progress_ignore: tuple[re.Pattern[str], ...] = ()
    goodbye: tuple[re.Pattern[str], ...] = ()
