"""Script-injection payloads, and a transcript that carries them in every field.

Each payload, if it ever ran, would set `window.__pwned` and open a dialog; the browser tests
listen for both.
"""

from __future__ import annotations

from transcript_formats.schema import (
    Event,
    EventKind,
    MalformedLine,
    Thread,
    Transcript,
    Turn,
    Usage,
)
from transcript_render import RunContext

RUN = "window.__pwned=1;alert(1)"

PAYLOADS = [
    f"<script>{RUN}</script>",
    f'"><script>{RUN}</script>',
    f"'><script>{RUN}</script>",
    f'<img src=x onerror="{RUN}">',
    f"<img src=x onerror={RUN}>",
    f"<svg onload={RUN}>",
    f"<svg><script>{RUN}</script></svg>",
    f"<body onload={RUN}>",
    '<iframe srcdoc="<script>parent.__pwned=1;parent.alert(1)</script>"></iframe>',
    '<iframe src="javascript:parent.__pwned=1;alert(1)"></iframe>',
    f'<a href="javascript:{RUN}" id="jslink">click</a>',
    f"[click me](javascript:{RUN})",
    f"</template><script>{RUN}</script>",
    f"</template></details><img src=x onerror={RUN}>",
    f"</textarea><script>{RUN}</script>",
    f"</pre></details></article></section><script>{RUN}</script>",
    f"</title><script>{RUN}</script>",
    f"</style><script>{RUN}</script>",
    f"</script><script>{RUN}</script>",
    f'" onmouseover="{RUN}" x="',
    f"' autofocus onfocus='{RUN}' x='",
    f'" autofocus onfocus="{RUN}',
    '<div style="background:url(javascript:alert(1))">css url</div>',
    '<div style="width: expression(alert(1))">css expression</div>',
    '<style>@import "https://evil.example/x.css"; b{background:url(javascript:alert(1))}</style>',
    '<link rel="stylesheet" href="https://evil.example/x.css">',
    '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
    '<object data="javascript:alert(1)"></object>',
    '<embed src="javascript:alert(1)">',
    f"<math><mtext><table><mglyph><style><img src=x onerror={RUN}>",
    "\\u003cscript\\u003ewindow.__pwned=1;alert(1)\\u003c/script\\u003e",
    f"&lt;script&gt;{RUN}&lt;/script&gt;",
    f"<scr<script>ipt>{RUN}</scr</script>ipt>",
    f"<details open ontoggle={RUN}>",
    f'<video><source onerror="{RUN}"></video>',
    f"<input autofocus onfocus={RUN}>",
    '<form action="javascript:alert(1)"><button id="formbtn">x</button></form>',
    '<base href="javascript:alert(1)//">',
    f"{{{{7*7}}}}{{% raw %}}<script>{RUN}</script>",
    f"\x00<script>{RUN}</script>",
    f"\u2028\u2029<script>{RUN}</script>",
    f"\ufeff<\u017fcript>{RUN}</\u017fcript>",
    f"\uff1cscript\uff1e{RUN}\uff1c/script\uff1e",
    f'<!--<img src="--><img src=x onerror={RUN}//">',
    f'<noscript><p title="</noscript><img src=x onerror={RUN}>">',
    f"<template><script>{RUN}</script></template>",
    '<a href="&#106;avascript:alert(1)">entity</a>',
    f"]]><script>{RUN}</script><![CDATA[",
    f'<img src="https://evil.example/p.png" onerror="{RUN}">',
]


def hostile_context(payload: str) -> RunContext:
    return RunContext(
        agent=payload,
        task=payload,
        run_status=payload,
        verdict=payload,
        solution=payload,
        solution_name=payload,
        grader_log=payload,
    )


def _events(n: int, p: str) -> list[Event]:
    k = EventKind
    return [
        Event(id=f"{n}u{p}", kind=k.USER_TEXT, text=p, timestamp=p),
        Event(id=f"{n}a{p}", kind=k.ASSISTANT_TEXT, text=p * 40),  # long: preview + all
        Event(id=f"{n}r{p}", kind=k.REASONING, text=p),
        Event(
            id=f"{n}c{p}",
            kind=k.TOOL_CALL,
            tool_name=p,
            call_id=p,
            arguments={p: p, "command": p, "nested": [p, {"x": p}]},
        ),
        Event(id=f"{n}C{p}", kind=k.TOOL_CALL, tool_name=p, arguments=p),
        Event(id=f"{n}t{p}", kind=k.TOOL_RESULT, tool_name=p, text=p, is_error=n % 2 == 0),
        Event(
            id=f"{n}f{p}",
            kind=k.FILE_CHANGE,
            tool_name=p,
            path=p,
            diff=f"--- a/{p}\n+++ b/{p}\n@@ -1 +1 @@\n-{p}\n+{p}\n",
        ),
        Event(id=f"{n}s{p}", kind=k.SUBAGENT_SPAWN, text=p, child_thread=f"sub{n}"),
        Event(id=f"{n}n{p}", kind=k.SYSTEM_NOTICE, text=p, is_error=True),
        Event(id=f"{n}k{p}", kind=k.COMPACTION, text=p),
        Event(id=f"{n}x{p}", kind=k.UNKNOWN, raw_type=p, raw={"type": p, p: [p]}, text=p),
    ]


def hostile_transcript(payloads: list[str] = PAYLOADS) -> Transcript:
    """One turn per payload with every kind of event, each spawning a subagent with a nested one."""
    main = Thread(id="main")
    threads = [main]
    for n, p in enumerate(payloads):
        usage = Usage(1, 2, 3, 4)
        main.turns.append(
            Turn(index=n + 1, events=_events(n, p), model=p, usage=usage, timestamp=p)
        )
        sub = Thread(id=f"sub{n}", kind="subagent", title=p, parent_event=f"{n}s{p}")
        sub.turns.append(
            Turn(
                index=1,
                model=p,
                events=[
                    Event(id=f"{n}su{p}", kind=EventKind.ASSISTANT_TEXT, text=p),
                    Event(id=f"{n}ss{p}", kind=EventKind.SUBAGENT_SPAWN, text=p),
                ],
            )
        )
        inner = Thread(id=f"{p}in{n}", kind="subagent", title=p, parent_event=f"{n}ss{p}")
        inner.turns.append(
            Turn(index=1, events=[Event(id=f"{n}iu{p}", kind=EventKind.TOOL_RESULT, text=p)])
        )
        threads += [sub, inner]

    def pick(i: int) -> str:
        return payloads[i % len(payloads)]

    orphan = Thread(id=pick(0), kind="subagent", title=pick(1), parent_event="missing")
    orphan.turns.append(Turn(index=1, events=[Event(id="orph", kind=EventKind.USER_TEXT, text=p)]))
    threads.append(orphan)
    return Transcript(
        format=pick(0),
        threads=threads,
        model=pick(2),
        cwd=pick(3),
        git_branch=pick(4),
        cli_version=pick(5),
        session_id=pick(6),
        started_at=pick(7),
        cost_usd=0.5,
        cost_computed=True,
        final_text=pick(8),
        malformed=[MalformedLine(source=p, line=i + 1, reason=p) for i, p in enumerate(payloads)],
        notes=list(payloads),
    )
