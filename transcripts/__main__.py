"""`python -m transcripts inspect|render ...` (see transcripts/cli.py)."""

import sys

from transcripts.cli import main

sys.exit(main())
