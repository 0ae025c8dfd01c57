"""``python -m agents``."""

import sys

from agents.cli import main

sys.exit(main(prog="python -m agents"))
