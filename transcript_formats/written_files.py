"""The files an agent wrote, as its log leaves them: above all the final kernel.

An upload may carry only the agent's log; the kernel graded is then the last content the agent
wrote to its solution file. The log's writes are replayed file by file in the order they ran (a
subagent's where it was spawned): whole writes, edits applied to the text known so far,
apply_patch envelopes, the parser's diffs, shell heredocs, copies and moves. A file whose text
the log stops showing (an edit of a file the log never wrote whole, `sed -i`, a script that
names it) has unknown content until its next whole write, and the result says why. Abandoned
branches are not replayed: a rewind may have restored the files, a retried response never ran
its tools.

The files the agent found in its folder (`known`: the task's starter, say) are where the replay
starts: an agent that copies `starter/solution.py` and then edits the copy leaves known text.
"""

from __future__ import annotations

import fnmatch
import json
import posixpath
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace

from .apply_patch import FileDiff, envelope_to_diffs, parse_envelope
from .diffs import TrackedFiles, apply_unified_diff
from .file_writes import FileOp, Replacement, ops_of_call, ops_of_change
from .schema import Event, EventKind, Thread, Transcript, Turn

# What arena/workspace.py collects (SOLUTION_FILES) and every task's PROMPT.md tells the agent
# to write; copied here because this package sits below the arena.
SOLUTION_NAMES = ("solution.py",)
# The workspace's starter/solution.py is where an agent starts, never its answer.
STARTER_FOLDERS = ("starter",)
# A KernelBench solution defines this class: the fallback when no file has a solution's name.
SOLUTION_CLASS = "ModelNew"
# A program that names a file and holds one of these may have rewritten it; a shell script's
# markers differ from other code's (where `>` compares).
_SCRIPT_WRITE_MARKERS = ("write", "copy", "rename", "move(", "os.replace", "truncate")
_SHELL_WRITE_MARKERS = (">", "tee ", "sed -i", "perl -i", "perl -pi", "cp ", "mv ", "patch", "dd ")
_SHELL_SCRIPTS = (".sh", ".bash", ".zsh")
_GLOB = re.compile(r"[*?[]")
_VARIABLE = re.compile(r"[$`]")
_NAME_TOKENS = re.compile(r"[\w.-]+")


@dataclass(frozen=True, slots=True)
class WrittenFile:
    """A file as the log leaves it. `content` is None where the log does not hold it (then
    `reason` says why) or where the file was deleted (`deleted`). `turn` is the Turn.index of
    the last write, the number the transcript page shows and anchors (`#t-<thread>-<turn>`);
    `event_id` is that write's event (the tool call, or the file change a parser recorded
    without one)."""

    path: str  # as the agent named it in that write
    content: str | None
    reason: str | None
    turn: int
    event_id: str
    thread_id: str
    thread_kind: str  # "main" | "subagent"
    tool_name: str | None
    deleted: bool = False


class FileNotWritten(LookupError):
    """A file asked for by name that the log never writes; the message says whether the log
    names it at all."""


def written_files(
    transcript: Transcript,
    *,
    names: Iterable[str] = SOLUTION_NAMES,
    known: Mapping[str, str] | None = None,
) -> list[WrittenFile]:
    """Every file the log writes, as it stands at the end, the last written last. `names` are
    files a script or a glob may write before the log ever names them otherwise; `known` holds
    the files in the agent's folder before it started (path relative to that folder -> text),
    which copies and edits start from but which are not listed unless the log writes them."""
    replay = _replay(transcript, tuple(names), dict(known or {}))
    return [_public(f) for f in sorted(replay.files.values(), key=lambda f: f.order)]


def solution_from_transcript(
    transcript: Transcript,
    *,
    names: Iterable[str] = SOLUTION_NAMES,
    task_slug: str | None = None,
    skip_folders: Iterable[str] = STARTER_FOLDERS,
    defining: str | None = SOLUTION_CLASS,
    known: Mapping[str, str] | None = None,
) -> WrittenFile | None:
    """The solution file as the log leaves it, or None where the log writes none.

    A solution is a file named one of `names` (by its last path part), outside `skip_folders`;
    with `task_slug`, one in a folder named for the task is preferred (a log of several tasks).
    The last written wins, a deleted one only where no other is left. Where no file has such a
    name, the last written file whose known content defines class `defining` is taken. `known`:
    as for written_files.
    """
    wanted, skipped = tuple(names), frozenset(skip_folders)
    files = written_files(transcript, names=wanted, known=known)
    found = [f for f in files if posixpath.basename(f.path) in wanted and not _under(f, skipped)]
    if not found and defining:
        pattern = re.compile(rf"^class\s+{re.escape(defining)}\b", re.MULTILINE)
        found = [
            f
            for f in files
            if f.content is not None and pattern.search(f.content) and not _under(f, skipped)
        ]
    if task_slug:
        found = [f for f in found if _in_task_folder(f.path, task_slug)] or found
    alive = [f for f in found if not f.deleted] or found
    return alive[-1] if alive else None


def file_from_transcript(
    transcript: Transcript, path: str, *, known: Mapping[str, str] | None = None
) -> WrittenFile:
    """The file `path` (a path, or a bare name matched on the last path part) as the log leaves
    it; raises FileNotWritten when the log never writes it. `known`: as for written_files."""
    name = posixpath.basename(path)
    if not name:
        raise FileNotWritten(f"{path!r}: not a file's name")
    files = written_files(transcript, names=(name,), known=known)
    if "/" in path:
        same = [f for f in files if _same_path(f.path, path, transcript.cwd)]
    else:
        same = [f for f in files if posixpath.basename(f.path) == name]
    if same:
        return same[-1]
    if log_names(transcript, name):
        raise FileNotWritten(f"{path}: the log names this file but never writes it")
    raise FileNotWritten(f"{path}: the log never names this file")


def log_names_task(transcript: Transcript, *, slug: str, file_names: Iterable[str] = ()) -> bool:
    """Whether the log ever names the task: its slug (with - or _) or one of its files."""
    words = {slug, slug.replace("-", "_"), *file_names}
    return any(log_names(transcript, word) for word in words if word)


def log_names(transcript: Transcript, word: str) -> bool:
    """Whether `word` appears anywhere in the log (case folded): its folder, what was said,
    tool arguments and outputs, paths and diffs."""
    needle = word.casefold()
    texts = (_event_texts(e) for e in transcript.events())
    heads = [transcript.cwd or "", *(t.title for t in transcript.all_threads())]
    return any(needle in t.casefold() for t in heads) or any(
        needle in text.casefold() for event_texts in texts for text in event_texts
    )


def _event_texts(event: Event) -> Iterator[str]:
    yield event.text
    yield event.path or ""
    yield event.diff or ""
    if event.arguments is not None:
        yield json.dumps(event.arguments, ensure_ascii=False, default=str)


def _under(file: WrittenFile, folders: frozenset[str]) -> bool:
    return any(part in folders for part in file.path.split("/")[:-1])


def _in_task_folder(path: str, slug: str) -> bool:
    parts = path.split("/")[:-1]
    return slug in parts or slug.replace("-", "_") in parts


def _same_path(path: str, wanted: str, cwd: str | None) -> bool:
    return _absolute(path, cwd) == _absolute(wanted, cwd)


def _absolute(path: str, cwd: str | None) -> str:
    if path.startswith("/") or not cwd:
        return posixpath.normpath(path)
    return posixpath.normpath(posixpath.join(cwd, path))


# -- the order writes ran in ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Site:
    thread: Thread
    turn: Turn
    event: Event


def _in_order(transcript: Transcript) -> list[_Site]:
    """Events as they ran: a subagent's where its spawn event is, a subagent no event spawned
    where its first time falls (else last)."""
    if not transcript.threads:
        return []
    threads = {t.id: t for t in transcript.threads}
    seen = {transcript.main.id}
    out = list(_walk(transcript.main, threads, seen))
    for thread in transcript.threads:
        if thread.id not in seen and thread.kind != "branch":
            seen.add(thread.id)
            _insert_by_time(out, list(_walk(thread, threads, seen)))
    return out


def _walk(thread: Thread, threads: dict[str, Thread], seen: set[str]) -> Iterator[_Site]:
    # Iterative, so a hostile log nesting subagents deeply cannot overflow the stack.
    stack = [_sites(thread)]
    while stack:
        site = next(stack[-1], None)
        if site is None:
            stack.pop()
            continue
        yield site
        child = site.event.child_thread if site.event.kind == EventKind.SUBAGENT_SPAWN else None
        if child in threads and child not in seen:
            seen.add(child)
            stack.append(_sites(threads[child]))


def _sites(thread: Thread) -> Iterator[_Site]:
    return (_Site(thread, turn, event) for turn in thread.turns for event in turn.events)


def _insert_by_time(out: list[_Site], sites: list[_Site]) -> None:
    start = next((stamp for stamp in map(_stamp, sites) if stamp), None)
    at = len(out)
    if start:
        at = next((i for i, s in enumerate(out) if (_stamp(s) or "") > start), len(out))
    out[at:at] = sites


def _stamp(site: _Site) -> str | None:
    return site.event.timestamp or site.turn.timestamp


# -- the replay ----------------------------------------------------------------------------


@dataclass(slots=True)
class _File:
    path: str
    content: str | None
    reason: str | None
    site: _Site
    order: int
    deleted: bool = False


def _public(file: _File) -> WrittenFile:
    site = file.site
    return WrittenFile(
        path=file.path,
        content=file.content,
        reason=file.reason,
        turn=site.turn.index,
        event_id=site.event.id,
        thread_id=site.thread.id,
        thread_kind=site.thread.kind,
        tool_name=site.event.tool_name,
        deleted=file.deleted,
    )


def _replay(transcript: Transcript, names: tuple[str, ...], known: dict[str, str]) -> _Replay:
    sites = _in_order(transcript)
    links = _call_links(sites)
    calls = {links[id(s.event)] for s in sites if s.event.kind == EventKind.TOOL_CALL}
    results = {links[id(s.event)]: s.event for s in _linked(sites, links, EventKind.TOOL_RESULT)}
    changes: dict[tuple[str, str], list[Event]] = {}
    for site in _linked(sites, links, EventKind.FILE_CHANGE):
        changes.setdefault(links[id(site.event)], []).append(site.event)
    replay = _Replay(transcript.cwd, names, known)
    for site in sites:
        event, link = site.event, links.get(id(site.event))
        if event.kind == EventKind.TOOL_CALL and link is not None:
            ops = ops_of_call(event, results.get(link), changes.get(link, []))
        elif event.kind == EventKind.FILE_CHANGE and link not in calls:
            ops = ops_of_change(event)  # recorded without its call (Codex's exec stream)
        else:
            continue
        for op in ops:
            replay.apply(op, site)
    return replay


def _linked(sites: list[_Site], links: dict[int, tuple[str, str]], kind: EventKind) -> list[_Site]:
    return [s for s in sites if s.event.kind == kind and id(s.event) in links]


def _call_links(sites: list[_Site]) -> dict[int, tuple[str, str]]:
    """The call each call, result and file change belongs to, as (thread, call id). A log
    without call ids (Cursor's agent transcripts) places a call's result and change right after
    it: they belong to the last call of the thread with their tool's name."""
    links: dict[int, tuple[str, str]] = {}
    last_anonymous: dict[str, Event] = {}
    for site in sites:
        event, thread = site.event, site.thread.id
        if event.kind not in (EventKind.TOOL_CALL, EventKind.TOOL_RESULT, EventKind.FILE_CHANGE):
            continue
        if event.call_id:
            links[id(event)] = (thread, event.call_id)
        elif event.kind == EventKind.TOOL_CALL:
            last_anonymous[thread] = event
            links[id(event)] = (thread, "#" + event.id)
        else:
            call = last_anonymous.get(thread)
            if call is not None and event.tool_name in (None, call.tool_name):
                links[id(event)] = (thread, "#" + call.id)
    return links


class _Replay:
    """File contents as the writes leave them, keyed by path relative to the log's folder."""

    def __init__(self, cwd: str | None, names: tuple[str, ...], known: dict[str, str]) -> None:
        self.cwd = posixpath.normpath(cwd) if cwd else None
        self.names = names
        # The folder's files before the agent started, by path relative to it: never listed.
        self.initial = {posixpath.normpath(path): text for path, text in known.items()}
        self.files: dict[str, _File] = {}
        self.by_name: dict[str, set[str]] = {}  # last path part -> keys, for lookups by name
        self.order = 0

    def apply(self, op: FileOp, site: _Site) -> None:
        if op.kind == "patch":
            self._patch(op, site)
        elif op.kind == "script":
            self._script(op, site)
        elif op.pattern and _VARIABLE.search(posixpath.basename(op.path)):
            # `cat > "$OUT"`, `rm $f`: any file the log wrote may be the one.
            unknown = FileOp("unknown", op.path, how=op.how)
            for key in [k for k, f in self.files.items() if not f.deleted]:
                self._one(replace(unknown, path=self.files[key].path), key, site)
        elif op.pattern and _GLOB.search(posixpath.basename(op.path)):
            for key in self._matching(op):
                self._one(op, key, site)
        elif op.path:
            self._one(op, self.key(op.path, op.folder), site)

    # -- paths -----------------------------------------------------------------------------

    def key(self, path: str, folder: str | None) -> str:
        base = folder or self.cwd
        if not path.startswith("/") and base:
            path = posixpath.join(base, path)
        path = posixpath.normpath(path)
        if self.cwd and path.startswith(self.cwd.rstrip("/") + "/"):
            path = path[len(self.cwd.rstrip("/")) + 1 :]
        return self._known_as(path)

    def _known_as(self, key: str) -> str:
        """Without the log's folder, `/w/k.py` and `k.py` are one file when nothing else in the
        log ends so."""
        if key in self.files or self.cwd:
            return key
        keys = self.by_name.get(posixpath.basename(key), set())
        if key.startswith("/"):
            same = [k for k in keys if not k.startswith("/") and key.endswith("/" + k)]
        else:
            same = [k for k in keys if k.endswith("/" + key)]
        return same[0] if len(same) == 1 else key

    def _matching(self, op: FileOp) -> list[str]:
        """Files a glob reaches: those written so far, and the solution's names."""
        folder, pattern = posixpath.split(op.path)
        keys = [k for k in self.files if fnmatch.fnmatchcase(posixpath.basename(k), pattern)]
        for name in self.names:
            key = self.key(posixpath.join(folder, name), op.folder)
            if fnmatch.fnmatchcase(name, pattern) and key not in keys and op.kind != "delete":
                keys.append(key)
        return keys

    def content(self, key: str) -> str | None:
        """The text of the file at `key` so far: as last written, else as the agent found it."""
        file = self.files.get(key)
        if file is not None:
            return None if file.deleted else file.content
        if key in self.initial:
            return self.initial[key]
        # Without the log's folder, an absolute path ends with the known file's.
        same = [text for path, text in self.initial.items() if key.endswith("/" + path)]
        return same[0] if len(same) == 1 else None

    # -- one change of one file ------------------------------------------------------------

    def _one(self, op: FileOp, key: str, site: _Site) -> None:
        name = posixpath.basename(op.path) or op.path
        where = _where(site, op)
        before = self.files.get(key)
        if op.kind == "delete":
            self._set(key, op.path, None, f"{name} is deleted at {where}", site, deleted=True)
        elif op.kind in ("write", "append", "edit", "insert", "diff"):
            self._change(op, key, site, before)
        elif op.kind in ("copy", "move"):
            self._copy(op, key, site)
        else:
            reason = f"{name} is written at {where}, with text the log does not hold"
            self._set(key, op.path, None, reason, site)

    def _change(self, op: FileOp, key: str, site: _Site, before: _File | None) -> None:
        known = self.content(key)
        if op.kind == "write" or (op.kind == "append" and before is not None and before.deleted):
            content: str | None = op.text
        else:
            content = _changed(known, op)
        if content is not None:
            self._set(key, op.path, content, None, site)
            return
        name = posixpath.basename(op.path)
        if known is None and before is not None and before.reason and not before.deleted:
            reason = before.reason  # still unknown, for the reason first given
        elif known is None:
            reason = f"{name} is edited at {_where(site, op)} but never written whole in the log"
        else:
            reason = (
                f"{name} is edited at {_where(site, op)} with text that is not in what the log "
                "wrote of it before: the file changed in a way the log does not show"
            )
        self._set(key, op.path, None, reason, site)

    def _copy(self, op: FileOp, key: str, site: _Site) -> None:
        content = self.content(self.key(op.source or "", op.folder))
        if content is not None:
            self._set(key, op.path, content, None, site)
            return
        reason = (
            f"{posixpath.basename(op.path)} is copied at {_where(site, op)} from {op.source}, "
            "whose content the log does not hold"
        )
        self._set(key, op.path, None, reason, site)

    def _set(
        self,
        key: str,
        path: str,
        content: str | None,
        reason: str | None,
        site: _Site,
        *,
        deleted: bool = False,
    ) -> None:
        self.order += 1
        self.files[key] = _File(path, content, reason, site, self.order, deleted)
        self.by_name.setdefault(posixpath.basename(key), set()).add(key)

    # -- apply_patch envelopes -------------------------------------------------------------

    def _patch(self, op: FileOp, site: _Site) -> None:
        """An envelope replayed as Codex applies it, against the contents known so far."""
        assert op.text is not None
        tracked = self._tracked(op.text, op.folder)
        for found in envelope_to_diffs(op.text, tracked):
            change = None if found.kind == "delete" else _patched(op, found, tracked)
            if found.kind == "delete" or found.move_to:
                gone = FileOp("delete", found.path, folder=op.folder, how=op.how)
                self._one(gone, self.key(found.path, op.folder), site)
            if change is not None:
                self._one(change, self.key(change.path, op.folder), site)

    def _tracked(self, envelope: str, folder: str | None) -> TrackedFiles:
        tracked = TrackedFiles()
        for file_op in parse_envelope(envelope):
            for path in filter(None, (file_op.path, file_op.move_to)):
                known = self.content(self.key(path, folder))
                if known is not None:
                    tracked.set(path, known)
        return tracked

    # -- scripts ---------------------------------------------------------------------------

    def _script(self, op: FileOp, site: _Site) -> None:
        """A program that names a file and writes something may have rewritten that file."""
        code = op.text
        if code is None and op.source:
            program = self.files.get(self.key(op.source, op.folder))
            code = program.content if program is not None else None
        shell = (op.source or "").endswith(_SHELL_SCRIPTS)
        markers = _SHELL_WRITE_MARKERS if shell else _SCRIPT_WRITE_MARKERS
        if code is None or not any(marker in code for marker in markers):
            return
        # A name counts where it stands alone: `solution.py` in 'solution.py', not in
        # 'solution.py.bak'.
        mentioned = set(_NAME_TOKENS.findall(code))
        for name in sorted(mentioned & (set(self.by_name) | set(self.names))):
            reason = f"{name} may be rewritten at {_where(site, op)}, a script that names it"
            for key in self._keys_named(name) or [self.key(name, op.folder)]:
                path = self.files[key].path if key in self.files else name
                self._set(key, path, None, reason, site)

    def _keys_named(self, name: str) -> list[str]:
        keys = self.by_name.get(name, set())
        return sorted(k for k in keys if not self.files[k].deleted)


def _patched(op: FileOp, found: FileDiff, tracked: TrackedFiles) -> FileOp:
    """The change an envelope made to one file: its text where the envelope could be placed,
    else the diff the log recorded for the file (Codex's patch_apply_end), if any."""
    target = found.move_to or found.path
    content = tracked.get(target) if found.exact else None
    if content is not None:
        return FileOp("write", target, text=content, folder=op.folder, how=op.how)
    recorded = tuple(
        (p, d) for p, d in op.diffs if _same_file(p, target) or _same_file(p, found.path)
    )
    return FileOp("diff", target, diffs=recorded, folder=op.folder, how=op.how)


def _changed(known: str | None, op: FileOp) -> str | None:
    """The text after an append, edit, insert or diff, or None where it cannot be known."""
    if op.kind == "append":
        return None if known is None else known + (op.text or "")
    if op.kind == "insert":
        return None if known is None else _insert(known, op.line, op.text or "")
    if op.kind == "edit":
        edited = _edited(known, op.edits)
        if edited is not None:
            return edited
    return _diffed(known, [d for _, d in op.diffs])


def _edited(known: str | None, edits: tuple[Replacement, ...]) -> str | None:
    text = known
    for edit in edits:
        if edit.old == "" and not text:
            text = edit.new  # an empty old text creates the file (Claude Code, Gemini CLI)
        elif text is None or edit.old == "" or edit.old not in text:
            return None
        else:
            text = text.replace(edit.old, edit.new, -1 if edit.every else 1)
    return text


def _insert(known: str, line: int, text: str) -> str:
    lines = known.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    block = text if text.endswith("\n") else text + "\n"
    return "".join(lines[:line]) + block + "".join(lines[line:])


def _diffed(known: str | None, diffs: list[str]) -> str | None:
    """Diffs applied in order (none: unknown); a diff of a new file needs nothing before it."""
    if not diffs:
        return None
    text = known
    for diff in diffs:
        if diff.startswith("--- /dev/null"):
            text = ""
        if text is None:
            return None
        try:
            after = apply_unified_diff(text, diff)
        except ValueError:
            return None
        # apply_unified_diff ends every line; keep a last line the diff left unended.
        if text and not text.endswith("\n") and after.endswith(text.rsplit("\n", 1)[-1] + "\n"):
            after = after[:-1]
        text = after
    return text


def _same_file(a: str, b: str) -> bool:
    a, b = a.removeprefix("./"), b.removeprefix("./")
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def _where(site: _Site, op: FileOp) -> str:
    where = f"turn {site.turn.index}"
    if site.thread.kind == "subagent":
        where += f" of subagent {site.thread.title or site.thread.id!r}"
    return f"{where} by {op.how}" if op.how else where
