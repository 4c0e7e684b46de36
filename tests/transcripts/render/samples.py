"""Hand-written transcripts that exercise what the page draws: Markdown, images, command tags,
ANSI output, durations with an idle gap, and enough turns for the outline to come in chunks."""

from __future__ import annotations

import base64
import struct
import zlib

from transcript_formats.schema import Event, EventKind, Image, Thread, Transcript, Turn, Usage


def png_bytes(width: int = 2, height: int = 2, rgb: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    """A valid PNG of one colour (written here, so that tests need no image file)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    row = b"\x00" + bytes(rgb) * width
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(row * height))
        + chunk(b"IEND", b"")
    )


def png_image(width: int = 2, height: int = 2) -> Image:
    data = png_bytes(width, height)
    return Image("image/png", base64.b64encode(data).decode(), len(data))


MARKDOWN_REPLY = """## Plan

1. Read `kernel.py`
2. **Tune** the block size, see [the docs](https://triton-lang.org/main/index.html)

```python
BLOCK = 128  # tuned
```

| shape | ms |
|---|---|
| 4096 | 0.21 |
"""

COMMAND_MESSAGE = (
    "<command-message>model</command-message>\n<command-name>/model</command-name>\n"
    "<command-args>opus</command-args>"
)
COMMAND_OUTPUT = "<local-command-stdout>Set model to \x1b[1mopus\x1b[22m</local-command-stdout>"
ANSI_OUTPUT = "\x1b[32m3 passed\x1b[0m, \x1b[31m1 failed\x1b[0m in 0.42s\n\x1b[2K\x1b[1Gdone"
NO_NEWLINE_DIFF = (
    "--- a/k.py\n+++ b/k.py\n@@ -1,2 +1,2 @@\n x = 1\n-y = 2\n\\ No newline at end of file\n"
    "+y = 3\n\\ No newline at end of file\n"
)


def stamp(seconds: int) -> str:
    day, rest = divmod(seconds, 86_400)
    hours, rest = divmod(rest, 3600)
    return f"2025-11-{20 + day:02d}T{hours:02d}:{rest // 60:02d}:{rest % 60:02d}.000Z"


def showcase(
    turns: int = 6, *, first_prompt: str = "Make the *softmax* kernel faster"
) -> Transcript:
    """A main thread: a prompt with an image, a command, a Markdown reply, tool calls with ANSI
    output and a diff, then filler turns; a day's idle gap sits before the last turn."""
    k = EventKind
    clock = 0

    def at(step: int) -> str:
        nonlocal clock
        clock += step
        return stamp(clock)

    main = Thread(id="main")
    main.turns = [
        Turn(
            index=1,
            events=[
                Event(
                    "prompt",
                    k.USER_TEXT,
                    text=first_prompt + "\n[image]",
                    timestamp=at(0),
                    images=(png_image(160, 90),),
                )
            ],
        ),
        Turn(index=2, events=[Event("cmd", k.USER_TEXT, text=COMMAND_MESSAGE, timestamp=at(5))]),
        Turn(index=3, events=[Event("cmdout", k.USER_TEXT, text=COMMAND_OUTPUT, timestamp=at(1))]),
        Turn(
            index=4,
            model="claude-x",
            usage=Usage(1, 2, 3, 4),
            events=[
                Event("reply", k.ASSISTANT_TEXT, text=MARKDOWN_REPLY, timestamp=at(20)),
                Event(
                    "call",
                    k.TOOL_CALL,
                    tool_name="Bash",
                    arguments={"command": "pytest -q"},
                    call_id="c1",
                    timestamp=at(1),
                ),
                Event("out", k.TOOL_RESULT, text=ANSI_OUTPUT, call_id="c1", timestamp=at(30)),
                Event("edit", k.FILE_CHANGE, path="k.py", diff=NO_NEWLINE_DIFF, timestamp=at(2)),
            ],
        ),
    ]
    for index in range(5, turns + 5):
        gap = 86_400 if index == turns + 4 else 10
        main.turns.append(
            Turn(
                index=index,
                events=[
                    Event(
                        f"step{index}",
                        k.ASSISTANT_TEXT,
                        text=f"Step {index}: measured the kernel again",
                        timestamp=at(gap),
                    )
                ],
            )
        )
    return Transcript(format="test", threads=[main])
