"""What a shell says when its foreground program dies of a signal.

An agent started from an interactive shell is the shell's child, not tmux's: Pitcrew cannot
read its exit status, and the pane does not die. The shell, though, reports a program killed
by a signal on the line after its last output (bash and dash: `Killed`, `Segmentation fault
(core dumped)`; zsh: `zsh: killed  claude`; fish: `… terminated by signal SIGKILL`). Read
from the last lines above the shell's prompt, that report is the signal — so an agent killed
by the OOM killer is a crash to resume, and one ended with `kill` (SIGTERM) a person's stop.
Pure: the lines are an argument.
"""

from __future__ import annotations

import re
import signal as signals

# the words each shell prints, per signal (bash/dash first, then zsh's lower-case forms)
_WORDS: tuple[tuple[int, str], ...] = (
    (signals.SIGKILL, r"killed"),
    (signals.SIGTERM, r"terminated"),
    (signals.SIGSEGV, r"segmentation fault"),
    (signals.SIGABRT, r"abort(?:ed)?"),
    (signals.SIGBUS, r"bus error"),
    (signals.SIGHUP, r"hangup"),
    (signals.SIGFPE, r"floating point exception"),
    (signals.SIGILL, r"illegal (?:hardware )?instruction"),
    (signals.SIGQUIT, r"quit"),
)
# bash's word may follow the program's last output on the same row (a spinner drawn with \r)
_BASH = [(sig, re.compile(rf"{words.capitalize()}(?: \(core dumped\))?\s*$"))
         for sig, words in _WORDS]
# zsh's may too ("⠹ working 29s · esc to interruptzsh: killed     claude")
_ZSH = [(sig, re.compile(rf"(?:^|(?<=\S))zsh: {words}(?: \(core dumped\))?\s+\S"))
        for sig, words in _WORDS]
_FISH = re.compile(r"terminated by signal SIG([A-Z]+)")
LOOK_AT = 3      # the shell's report sits right above its new prompt
# the shell's new prompt: bare, or drawn over a dead TUI's rule (remains of a full-screen
# program killed before it could restore the screen may stay below it)
_PROMPT = re.compile(r"^\s*(\(\S+\)\s*)?(\S+@[\w.-]+(:.*?)?\s*)?[$#%](\s*$|\s+[─━═]{5,})")


def shell_signal(tail: tuple[str, ...]) -> int | None:
    """The signal a shell reported for its foreground program in `tail` (the last non-blank
    lines of the screen, the prompt last — or the prompt above a dead TUI's leftovers), or
    None when it reported none."""
    end = next((k + 1 for k in range(len(tail) - 1, -1, -1) if _PROMPT.match(tail[k])),
               len(tail))
    for line in reversed(tail[max(0, end - LOOK_AT):end]):
        text = line.rstrip()
        if m := _FISH.search(text):
            found = getattr(signals, f"SIG{m.group(1)}", None)
            if found is not None:
                return int(found)
        for sig, pattern in (*_ZSH, *_BASH):
            if pattern.search(text):
                return int(sig)
    return None


_REPORT = [re.compile(rf"{words.capitalize()}(?: \(core dumped\))?") for _, words in _WORDS] + [
    re.compile(rf"zsh: {words}(?: \(core dumped\))?\s+\S.*") for _, words in _WORDS] + [
    re.compile(r".*terminated by signal SIG[A-Z]+.*")]


def is_report(text: str) -> bool:
    """Whether `text` (what one row holds) is nothing but a shell's report of a signal.

    The shell prints it where the dead program left its cursor: in a full-screen CLI's input
    box (`❯ Killed` under Claude Code 2.1.197's rule, killed at a bash prompt), where it looks
    like a prompt typed and sent. It is the shell's word, never a prompt."""
    line = text.strip()
    return any(pattern.fullmatch(line) for pattern in _REPORT)
