"""Capture real Qoder CLI (`qodercli`) screens into tests/fixtures/screens/qoder/.

Qoder CLI needs a Qoder account before it shows its input box, and this machine cannot reach
qoder.com, so only the pre-login screens can be captured: the trust-folder picker, the sign-in
welcome picker, the auth-method picker, the browser-login wait, and the "Failed to sign in"
screen a Personal Access Token gets when the network is unreachable. Also records the process
tree (node running bundle/qodercli.js).

Install first (npm registry only; the postinstall is not needed):

    NPM_CONFIG_PREFIX=/tmp/realcli4/qoder/prefix npm install -g @qoder-ai/qodercli

Then: python tests/capture/capture_qoder.py [--prefix /tmp/realcli4/qoder/prefix]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import capkit

PROVIDER = "qoder"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--prefix", default="/tmp/realcli4/qoder/prefix")
    ap.add_argument("--socket", default="pitcrew-res4")
    args = ap.parse_args()
    bindir = Path(args.prefix) / "bin"
    exe = bindir / "qodercli"
    if not exe.exists():
        print(f"qodercli not found at {exe}; install it first (see docstring)", file=sys.stderr)
        return 2
    version = subprocess.run([str(exe), "--version"], capture_output=True, text=True,
                             env={**os.environ, "HOME": str(capkit.throwaway_home("qoder-v"))}
                             ).stdout.strip()
    src = f"qodercli {version} (@qoder-ai/qodercli), tests/capture/capture_qoder.py"

    tmux = capkit.Tmux(args.socket, 120, 40)
    home = capkit.throwaway_home("qoder")
    work = home / "work"
    work.mkdir()
    env = {"HOME": str(home), "DISABLE_AUTOUPDATER": "1",
           "NPM_CONFIG_PREFIX": str(Path(args.prefix)), "TERM": "xterm-256color"}
    path = f"{bindir}:/usr/local/bin:/usr/bin:/bin"
    try:
        # 1. First run: trust folder -> sign-in welcome -> auth method picker -> browser wait
        pane = tmux.new_pane(f"PATH={path} exec {exe}", str(work), env, name="qoder1")
        tmux.wait_for(pane, "Do you trust the files in this folder?", 60)
        time.sleep(1)
        capkit.save_screen(PROVIDER, "trust_folder", tmux.capture(pane), state="picker",
                           ansi=tmux.capture(pane, ansi=True),
                           source=src + ", first start in a new folder",
                           evidence="Do you trust the files in this folder?")
        rows = capkit.process_tree(tmux.pane_pid(pane))
        capkit.save_processes(PROVIDER, rows,
                              f"{src}; pane started as `exec qodercli` "
                              "(node runs bundle/qodercli.js)")
        tmux.send_keys(pane, "Enter")
        tmux.wait_for(pane, "Sign in to get started", 30)
        time.sleep(1)
        capkit.save_screen(PROVIDER, "sign_in_welcome", tmux.capture(pane),
                           state="login_required", ansi=tmux.capture(pane, ansi=True),
                           source=src + ", no account: picker shown after trusting the folder",
                           evidence="Sign in to get started")
        tmux.send_keys(pane, "Enter")
        tmux.wait_for(pane, "How would you like to authenticate", 30)
        time.sleep(1)
        capkit.save_screen(PROVIDER, "auth_method_picker", tmux.capture(pane),
                           state="login_required", ansi=tmux.capture(pane, ansi=True),
                           source=src + ", 'Sign in to continue' chosen",
                           evidence="How would you like to authenticate for this project?")
        tmux.send_keys(pane, "Enter")
        tmux.wait_for(pane, "Waiting for authorization", 30)
        time.sleep(1)
        capkit.save_screen(PROVIDER, "browser_login_waiting", tmux.capture(pane),
                           state="login_required", ansi=tmux.capture(pane, ansi=True),
                           source=src + ", browser login chosen, no browser on the machine",
                           evidence="Waiting for authorization",
                           notes="the URL's challenge/nonce/machine_id come from a throwaway HOME")
        tmux.run("kill-session", "-t", "qoder1")

        # 2. A Personal Access Token with no network: "Failed to sign in" + sign-in picker
        pane = tmux.new_pane(f"PATH={path} exec {exe}", str(work),
                             {**env, "QODER_PERSONAL_ACCESS_TOKEN": "pt-not-a-real-token"},
                             name="qoder2")
        tmux.wait_for(pane, "Failed to sign in", 90)
        time.sleep(2)
        capkit.save_screen(PROVIDER, "pat_sign_in_failed_offline", tmux.capture(pane),
                           state="login_required", ansi=tmux.capture(pane, ansi=True),
                           source=src + ", QODER_PERSONAL_ACCESS_TOKEN set, qoder.com unreachable",
                           evidence="Failed to sign in",
                           notes="'Network attempt failed at dns' is the offline cause; the "
                                 "screen is the sign-in picker, so login_required wins")
        # choose "Exit the application": the pane dies with status 0
        tmux.send_keys(pane, "Down")
        time.sleep(0.5)
        tmux.send_keys(pane, "Enter")
        deadline = time.monotonic() + 20
        status = ""
        while time.monotonic() < deadline:
            out = tmux.run("display-message", "-p", "-t", pane,
                           "#{pane_dead} #{pane_dead_status}").split()
            if out and out[0] == "1" and len(out) > 1:
                status = out[1]
                break
            time.sleep(0.5)
        print(f"exit from the sign-in picker: pane_dead_status={status!r}")
    finally:
        tmux.kill()
        shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
