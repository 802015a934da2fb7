"""`pitcrew secret set|delete|status`: secrets in the OS keyring (never in argv or files)."""

from __future__ import annotations

import argparse
import getpass
import sys

from pitcrew.supervisor.adapters import secrets
from pitcrew.supervisor.core.errors import PitcrewError


def _read_value(name: str) -> str:
    if sys.stdin is not None and sys.stdin.isatty():
        return getpass.getpass(f"Value for {name} (not shown): ")
    data = sys.stdin.read() if sys.stdin is not None else ""
    return data[:-1] if data.endswith("\n") else data


def secret(args: argparse.Namespace) -> int:
    if args.action == "status":
        if args.name:
            value = secrets.get_secret(args.name)
            print(f"{args.name}: {'set' if value is not None else 'not set'}")
        print(secrets.status())
        return 0
    if not args.name:
        raise PitcrewError(f"`pitcrew secret {args.action}` needs the secret's NAME")
    if args.action == "set":
        secrets.set_secret(args.name, _read_value(args.name))
        print(f"Stored {args.name} in the keyring.")
        return 0
    if secrets.delete_secret(args.name):
        print(f"Deleted {args.name} from the keyring.")
    else:
        print(f"{args.name} was not in the keyring.")
    return 0
