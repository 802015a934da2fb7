"""The Orchestration Dashboard: agents overview, activity and Advanced → AI Diagnosis."""

from pitcrew.desktop.dashboard.window import TITLE, Dashboard

__all__ = ["TITLE", "Dashboard"]
