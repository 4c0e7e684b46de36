"""`python -m model_server --script solve-vector-add [--host H] [--port P]`: serve a script
until interrupted, printing each call as a JSON line, so an operator can point an agent CLI at
this host (docs/agents.md says how for each) and see it work a task end to end. A request for
a model named like another script (`endless`, `broken-kernel`...) plays that one."""

import argparse
import json
import sys
import time

from model_server.script import SCRIPTS_DIR, ScriptError, script_load
from model_server.server import ScriptedModelServer


def main(argv: list[str] | None = None) -> int:
    names = sorted(p.stem for p in SCRIPTS_DIR.glob("*.json"))
    parser = argparse.ArgumentParser(prog="python -m model_server", description=__doc__)
    parser.add_argument(
        "--script",
        default="solve-vector-add",
        help=f"a script's name ({', '.join(names)}) or a JSON file's path",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args(argv)
    try:
        script = script_load(args.script)
    except ScriptError as exc:
        parser.error(str(exc))
    others = [script_load(name) for name in names if name != script.name]
    with ScriptedModelServer(script, others=others, host=args.host, port=args.port) as server:
        print(f"model_server: playing {script.name} at {server.base_url}", file=sys.stderr)
        seen = 0
        try:
            while True:
                time.sleep(0.2)
                for entry in server.served[seen:]:
                    print(json.dumps(entry), flush=True)
                seen = len(server.served)
        except KeyboardInterrupt:
            return 0


if __name__ == "__main__":
    sys.exit(main())
