"""Run the toyagent script as this package's main module (so argv is `python -m toyagent_pkg`)."""

import runpy
from pathlib import Path

runpy.run_path(str(Path(__file__).resolve().parent.parent / "toyagent"), run_name="__main__")
