import sys

from evaluator.engine.cli import main

sys.exit(main(own_process=True))
