"""Capture real aider screens into tests/fixtures/screens/aider/ (re-runnable, offline).

aider talks to an OpenAI-compatible API; here it is pointed at the local stand-in in
standin_aider.py (127.0.0.1 only), whose first path segment picks the scenario. Every run
uses a throwaway HOME and a throwaway work dir. The model-price cache that aider would fetch
from the internet is pre-seeded from litellm's bundled copy, so no offline-only noise shows.

Install first (PyPI only):

    python3 -m venv /tmp/realcli4/aider/venv && /tmp/realcli4/aider/venv/bin/pip install aider-chat
    # optional, for the upgrade prompt: an older release in a second venv
    python3 -m venv /tmp/realcli4/aider/venv-old && \
        /tmp/realcli4/aider/venv-old/bin/pip install aider-chat==0.86.1

Then: python tests/capture/capture_aider.py [--venv DIR] [--old-venv DIR] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import glob
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import capkit
import standin_aider

PROVIDER = "aider"
MODEL = "openai/gpt-4o"


class Run:
    def __init__(self, args: argparse.Namespace) -> None:
        self.venv = Path(args.venv)
        self.old_venv = Path(args.old_venv) if args.old_venv else None
        self.tmux = capkit.Tmux(args.socket, 120, 40)
        self.server = standin_aider.serve(0)
        self.port = self.server.server_address[1]
        self.only = set(args.only or [])
        self.long = args.long
        self.version = subprocess.run([str(self.venv / "bin" / "aider"), "--version"],
                                      capture_output=True, text=True).stdout.strip()
        self.homes: list[Path] = []
        self.n = 0

    # -- helpers ---------------------------------------------------------------------------
    def home(self, seed_prices: bool = True) -> Path:
        home = capkit.throwaway_home("aider")
        self.homes.append(home)
        if seed_prices:
            caches = home / ".aider" / "caches"
            caches.mkdir(parents=True)
            backup = glob.glob(str(self.venv / "lib" / "python3*" / "site-packages" / "litellm"
                                   / "model_prices_and_context_window_backup.json"))
            if backup:
                shutil.copy(backup[0], caches / "model_prices_and_context_window.json")
        return home

    def workdir(self, home: Path, git: bool = True, gitignore: bool = True) -> Path:
        work = home / "proj"
        work.mkdir()
        (work / "hello.py").write_text('def main():\n    print("hello")\n\n\nmain()\n')
        if git:
            (home / ".gitconfig").write_text("[user]\n\tname = Pat Example\n"
                                             "\temail = pat@example.com\n")
            files = ["hello.py"]
            if gitignore:
                (work / ".gitignore").write_text(".aider*\n")
                files.append(".gitignore")
            env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
            for cmd in (["git", "init", "-q"], ["git", "add", *files],
                        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com",
                         "commit", "-qm", "init"]):
                subprocess.run(cmd, cwd=work, env=env, check=True)
        return work

    def start(self, mode: str | None, home: Path, work: Path, extra: str = "",
              venv: Path | None = None, base: str | None = None) -> str:
        self.n += 1
        exe = (venv or self.venv) / "bin" / "aider"
        if base is None:
            base = f"http://127.0.0.1:{self.port}/{mode}/v1"
        cmd = (f"{exe} --model {MODEL} --openai-api-key sk-standin-key "
               f"--openai-api-base {base} {extra}")
        return self.tmux.new_pane(cmd, str(work), {"HOME": str(home), "TERM": "xterm-256color"},
                                  name=f"aider{self.n}")

    def save(self, pane: str, name: str, state: str, why: str, **extra: object) -> None:
        time.sleep(0.5)
        capkit.save_screen(PROVIDER, name, self.tmux.capture(pane), state=state,
                           ansi=self.tmux.capture(pane, ansi=True),
                           source=f"{self.version} (aider-chat), "
                                  f"tests/capture/capture_aider.py, {why}", **extra)
        print(f"saved {state}__{name}")

    def type_and_send(self, pane: str, text: str) -> None:
        self.tmux.send_text(pane, text)
        time.sleep(0.3)
        self.tmux.send_keys(pane, "Enter")

    def wait_dead(self, pane: str, timeout: float = 20) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            out = self.tmux.run("display-message", "-p", "-t", pane,
                                "#{pane_dead} #{pane_dead_status}").split()
            if out and out[0] == "1" and len(out) > 1:
                return out[1]
            time.sleep(0.3)
        return ""

    # -- scenarios -------------------------------------------------------------------------
    def first_run(self) -> None:
        """Fresh HOME, folder without git: git-repo question, release notes, idle, draft, answer."""
        home = self.home()
        work = self.workdir(home, git=False)
        pane = self.start("ok", home, work, "--no-check-update --analytics-disable")
        self.tmux.wait_for(pane, "(Y)es/(N)o [Yes]:", 60)
        self.save(pane, "create_git_repo", "question",
                  "first start in a folder without git (onboarding yes/no)",
                  evidence="No git repo found, create one to track aider's changes (recommended)?")
        rows = capkit.process_tree(self.tmux.pane_pid(pane))
        capkit.save_processes(PROVIDER, rows,
                              f"{self.version} from a venv: python runs the venv's "
                              "bin/aider console script; process name is 'aider'")
        self.tmux.send_keys(pane, "Enter")
        self.tmux.wait_for(pane, "Would you like to see what's new", 60)
        self.save(pane, "release_notes_offer", "question",
                  "first start of this aider version (onboarding yes/no)",
                  evidence="Would you like to see what's new in this version?")
        self.tmux.send_text(pane, "n")
        self.tmux.send_keys(pane, "Enter")
        time.sleep(2)
        self.save(pane, "empty_prompt_after_banner", "idle", "banner, then the empty '>' prompt")
        self.tmux.send_text(pane, "what does hello.py print?")
        time.sleep(1)
        self.save(pane, "typed_not_sent", "draft", "text typed at the '>' prompt, not sent")
        self.tmux.send_keys(pane, "Enter")
        self.tmux.wait_for(pane, "Tokens:", 60)
        time.sleep(1)
        self.save(pane, "after_answer", "idle",
                  "stand-in answered; Tokens/Cost line, then the empty prompt")
        pid = self.tmux.pane_pid(pane)
        self.type_and_send(pane, "/exit")
        t0 = time.monotonic()
        status = self.wait_dead(pane, timeout=90)
        if status:
            self.save(pane, "after_slash_exit", "crashed",
                      f"after /exit: pane dead, exit status {status!r} "
                      f"({time.monotonic() - t0:.0f} s after Enter)",
                      notes="a normal user exit (status 0), not a crash: the screen alone shows "
                            "only that aider is gone. Offline, aider took 10-20 s to exit after "
                            "/exit")
        else:
            print("aider did not exit within 90 s of /exit; not saved. Screen tail:")
            print("\n".join(self.tmux.capture(pane).rstrip().splitlines()[-6:]))
            print(self.tmux.run("display-message", "-p", "-t", pane,
                                "pane_dead=#{pane_dead} status=#{pane_dead_status} "
                                "pid=#{pane_pid}"))
            print(subprocess.run(["ps", "-o", "pid,stat,etime,cmd", "-p", str(pid)],
                                 capture_output=True, text=True).stdout)
        # restore the same folder's chat history into a new process
        pane = self.start("ok", home, work,
                          "--no-check-update --analytics-disable --restore-chat-history")
        self.tmux.wait_for(pane, "> ", 60)
        time.sleep(3)
        self.save(pane, "restored_chat_history", "idle",
                  "relaunched with --restore-chat-history in the same folder",
                  notes="--restore-chat-history re-reads .aider.chat.history.md of this folder; "
                        "it is not a session id resume")

    def busy(self) -> None:
        home = self.home()
        work = self.workdir(home, gitignore=False)
        pane = self.start("slow", home, work, "--no-check-update --analytics-disable "
                          "--no-show-release-notes")
        self.tmux.wait_for(pane, "(Y)es/(N)o [Yes]:", 60)
        self.save(pane, "add_aider_to_gitignore", "question",
                  "git repo without .aider* in .gitignore (onboarding yes/no)",
                  evidence="Add .aider* to .gitignore (recommended)?")
        self.tmux.send_keys(pane, "Enter")
        self.tmux.wait_for(pane, "Repo-map", 60)
        time.sleep(2)
        self.type_and_send(pane, "explain the greeting code")
        self.tmux.wait_for(pane, "Waiting for", 30)
        self.save(pane, "waiting_spinner", "busy", "request sent, no reply yet",
                  evidence="Waiting for openai/gpt-4o")
        self.tmux.wait_for(pane, "Thinking", 30)
        time.sleep(3)
        self.save(pane, "stream_stalled", "busy",
                  "stand-in streamed one word and then stalled (no new bytes)",
                  notes="aider shows no timer or retry while a stream stalls")
        self.tmux.send_keys(pane, "C-c")
        time.sleep(2)
        self.save(pane, "after_ctrl_c_interrupt", "idle",
                  "Ctrl-C during the stalled stream returns to the prompt")
        self.tmux.send_keys(pane, "C-c")
        time.sleep(1)
        self.tmux.send_keys(pane, "C-c")
        status = self.wait_dead(pane)
        self.save(pane, "after_ctrl_c_twice", "crashed",
                  f"Ctrl-C twice at the prompt: pane dead, exit status {status!r}",
                  notes="a normal user exit (status 0), not a crash")

    def add_file(self) -> None:
        home = self.home()
        work = self.workdir(home)
        pane = self.start("mention", home, work, "--no-check-update --analytics-disable "
                          "--no-show-release-notes")
        self.tmux.wait_for(pane, "Repo-map", 60)
        time.sleep(2)
        self.type_and_send(pane, "where is the greeting printed?")
        self.tmux.wait_for(pane, "(D)on't ask again", 60)
        self.save(pane, "add_file_to_chat", "question",
                  "the answer named a repo file, aider asks to add it",
                  evidence="Add file to the chat?")

    def errors(self) -> None:
        cases = [
            ("429", "rate_limit", "429_rate_limit_retrying", "HTTP 429 rate_limit_exceeded",
             "Retrying in", {"evidence": "The API provider has rate limited you"}),
            ("quota", "rate_limit", "429_insufficient_quota_retrying",
             "HTTP 429 insufficient_quota", "Retrying in",
             {"evidence": "You exceeded your current quota"}),
            ("503", "connection_lost", "503_overloaded_retrying", "HTTP 503 overloaded",
             "Retrying in", {"evidence": "servers are down or overloaded"}),
            ("500", "connection_lost", "500_server_error_retrying", "HTTP 500 server error",
             "Retrying in", {"evidence": "servers are down or overloaded"}),
            ("401", "login_required", "401_invalid_api_key", "HTTP 401 invalid_api_key",
             "authenticate you", {"evidence": "The API provider is not able to authenticate you",
                                  "notes": "no retry for auth errors; aider then asks 'Open URL "
                                           "for more info? (Y)es/(N)o/(D)on't ask again', but "
                                           "its still-running 'Waiting for' spinner overwrites "
                                           "the start of that line"}),
        ]
        for mode, state, name, why, needle, extra in cases:
            home = self.home()
            work = self.workdir(home)
            pane = self.start(mode, home, work, "--no-check-update --analytics-disable "
                              "--no-show-release-notes")
            self.tmux.wait_for(pane, "Repo-map", 60)
            time.sleep(2)
            self.type_and_send(pane, "hi")
            self.tmux.wait_for(pane, needle, 90)
            time.sleep(4 if needle == "Retrying in" else 3)
            self.save(pane, name, state, f"stand-in answered {why}", **extra)
            if mode == "401":
                # after the error aider offers to open the URL from the message
                try:
                    self.tmux.wait_for(pane, "Open URL for more info", 15)
                    self.save(pane, "401_open_url_offer", "question",
                              "after the 401 error aider offers to open the docs URL",
                              evidence="Open URL for more info?",
                              notes="follows an auth failure; the question itself is a yes/no")
                except TimeoutError:
                    pass
            self.tmux.run("kill-session", "-t", f"aider{self.n}", check=False)

    def unreachable(self) -> None:
        home = self.home()
        work = self.workdir(home)
        # port 9 (discard) on loopback: nothing listens, so the connect is refused
        pane = self.start(None, home, work, "--no-check-update --analytics-disable "
                          "--no-show-release-notes", base="http://127.0.0.1:9/v1")
        self.tmux.wait_for(pane, "Repo-map", 60)
        time.sleep(2)
        self.type_and_send(pane, "hi")
        self.tmux.wait_for(pane, "Retrying in", 90)
        time.sleep(4)
        self.save(pane, "connection_refused_retrying", "connection_lost",
                  "--openai-api-base points at a closed loopback port",
                  evidence="Connection error")
        if self.long:
            # aider stops after its retry delay passes 60 s (0.25 s doubling); wait it out
            deadline = time.monotonic() + 240
            while time.monotonic() < deadline:
                screen = self.tmux.capture(pane)
                tail = [ln for ln in screen.rstrip().splitlines() if ln.strip()]
                if tail and tail[-1].startswith(">") and "Retrying in 32.0" in screen:
                    break
                time.sleep(2)
            time.sleep(2)
            self.save(pane, "connection_refused_gave_up", "idle",
                      "after the last retry (32 s) aider gives up and shows the prompt",
                      notes="the error lines stay above an empty prompt: the screen is idle, "
                            "the last turn failed")

    def upgrade(self) -> None:
        if not self.old_venv or not (self.old_venv / "bin" / "aider").exists():
            print("skip upgrade: no --old-venv")
            return
        home = self.home()
        work = self.workdir(home)
        old = subprocess.run([str(self.old_venv / "bin" / "aider"), "--version"],
                             capture_output=True, text=True).stdout.strip()
        pane = self.start("ok", home, work, "--analytics-disable --no-show-release-notes",
                          venv=self.old_venv)
        self.tmux.wait_for(pane, "is available", 90)
        time.sleep(2)
        capkit.save_screen(PROVIDER, "newer_version_pip_install", self.tmux.capture(pane),
                           state="upgrade_prompt", ansi=self.tmux.capture(pane, ansi=True),
                           source=f"{old} (aider-chat, older release) with its default "
                                  "once-a-day update check against PyPI, "
                                  "tests/capture/capture_aider.py",
                           evidence="Newer aider version")
        print("saved upgrade_prompt__newer_version_pip_install")

    def close(self) -> None:
        self.tmux.kill()
        self.server.shutdown()
        for home in self.homes:
            shutil.rmtree(home, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--venv", default="/tmp/realcli4/aider/venv")
    ap.add_argument("--old-venv", default="/tmp/realcli4/aider/venv-old")
    ap.add_argument("--socket", default="pitcrew-res4")
    ap.add_argument("--only", nargs="*", help="scenario names (first_run busy add_file errors "
                    "unreachable upgrade)")
    ap.add_argument("--long", action="store_true",
                    help="also wait ~2 min for aider to give up retrying a refused connection")
    args = ap.parse_args()
    if not (Path(args.venv) / "bin" / "aider").exists():
        print(f"aider not found in {args.venv}; install it first (see docstring)",
              file=sys.stderr)
        return 2
    run = Run(args)
    try:
        for scenario in ("first_run", "busy", "add_file", "errors", "unreachable", "upgrade"):
            if run.only and scenario not in run.only:
                continue
            getattr(run, scenario)()
    finally:
        run.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
