"""Which files a shell command writes, and with what text where the command itself holds it.

Agents without a file tool (Codex's shell, any harness's Bash) write files with heredocs:
`cat > solution.py <<'EOF' ... EOF`, `cat <<EOF > path`, `tee path <<EOF`. This reads a command
as the shell would (quotes, escapes, heredoc bodies, `cd`, pipelines, `bash -c` inside) far
enough to say which files it writes and, for heredocs, `echo`, copies and moves, what they then
hold. Anything else that may write a file (`sed -i`, a program's output sent to it, a Python
script that names it) is a write of unknown content, so that a reader never trusts a stale copy.
Nothing is run.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

# A hostile command can nest `bash -c` without end; real ones nest once or twice.
MAX_NESTING = 4
# Messages quote the command; a heredoc's whole body does not belong in one.
COMMAND_QUOTE_CHARS = 120

_OPERATORS = (
    "&&", "||", ";;", "|&", "&>>", "&>", ">>", ">|", ">&", "<<<", "<<-", "<<", "<&", "<>",
    ";", "|", "&", ">", "<", "(", ")",
)  # fmt: skip
_SEPARATORS = frozenset({"&&", "||", ";;", ";", "|", "|&", "&", "(", ")", "\n"})
_WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", ">&"})
_APPENDING = frozenset({">>", "&>>"})
_NOT_FILES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
_WORD_END = frozenset(" \t\n;&|<>()")
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
_INTERPRETERS = re.compile(r"^(python[0-9.]*|pypy[0-9.]*|node|ruby)$")
# Words that start a command without being its program.
_PREFIXES = frozenset({"sudo", "env", "time", "nohup", "command", "exec", "builtin", "!"})
_KEYWORDS = frozenset(
    {"{", "}", "then", "do", "else", "elif", "if", "while", "until", "fi", "done"}
)
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_EXPANSION_START = re.compile(r"[A-Za-z0-9_{(@*#?$!-]")


@dataclass(frozen=True, slots=True)
class ShellWrite:
    """One file a command writes.

    kind: "write" / "append" (`text` is what is written), "copy" / "move" (from `source`),
    "delete", "unknown" (written with text the command does not hold), "script" (a program
    that may write any file it names: its code in `text`, or the file it runs in `source`).
    `path` is as the command names it, joined to the folder a `cd` moved to; `pattern` says it
    holds a glob or a variable, so only its last part can be matched.
    """

    kind: str
    path: str
    text: str | None = None
    source: str | None = None
    command: str = ""
    pattern: bool = False


@dataclass(slots=True)
class _Word:
    text: str
    dynamic: bool = False  # holds a $variable, a $(command), `backquotes` or a glob
    quoted: bool = False


@dataclass(slots=True)
class _Op:
    text: str
    fd: str = ""
    delimiter: _Word | None = None  # heredoc
    strip_tabs: bool = False
    body: str | None = None
    body_dynamic: bool = False


@dataclass(slots=True)
class _Command:
    words: list[_Word] = field(default_factory=list)
    redirects: list[tuple[_Op, _Word | None]] = field(default_factory=list)
    piped_from: _Command | None = None
    source: str = ""  # the command's text, for messages
    group: str = ""  # "(" or ")": where a subshell begins or ends

    def stdin(self) -> tuple[str | None, bool]:
        """The heredoc or here-string the command reads, and whether the shell expanded it."""
        for op, target in self.redirects:
            if op.body is not None:
                return op.body, op.body_dynamic
            if op.text == "<<<" and target is not None:
                return target.text + "\n", target.dynamic
        return None, False


def shell_script(command: Any) -> str | None:
    """The script a shell tool ran: `["bash", "-lc", script]` gives the script, another list
    its words joined, a string itself."""
    if isinstance(command, str):
        return command
    if not isinstance(command, list) or not all(isinstance(w, str) for w in command):
        return None
    if len(command) == 3 and _program(command[0]) in _SHELLS and _runs_string(command[1]):
        return str(command[2])
    return " ".join(_quoted(word) for word in command)


def _quoted(word: str) -> str:
    return (
        word
        if re.fullmatch(r"[A-Za-z0-9_./=:+-]+", word)
        else "'" + word.replace("'", "'\\''") + "'"
    )


def _program(word: str) -> str:
    return posixpath.basename(word)


def _runs_string(option: str) -> bool:
    # -c, -lc, -ec, -xc ...: the option that makes a shell run its next word as a script.
    return option.startswith("-") and not option.startswith("--") and "c" in option


def shell_writes(script: str, *, depth: int = 0) -> list[ShellWrite]:
    """Every file `script` writes, in order."""
    writes: list[ShellWrite] = []
    folders: list[str] = [""]  # the `cd` in effect; a subshell's `cd` ends with it
    for command in _commands(_Lexer(script).tokens()):
        if command.group == "(":
            folders.append(folders[-1])
            continue
        if command.group == ")":
            if len(folders) > 1:
                folders.pop()
            continue
        folder = folders[-1]
        writes.extend(_join(w, folder) for w in _command_writes(command, depth))
        folders[-1] = _after_cd(command, folder)
    return writes


def _join(write: ShellWrite, folder: str) -> ShellWrite:
    if not folder:
        return write
    path = _in(folder, write.path) if write.path else ""
    source = _in(folder, write.source) if write.source else write.source
    return ShellWrite(write.kind, path, write.text, source, write.command, write.pattern)


def _in(folder: str, path: str) -> str:
    return path if path.startswith("/") else posixpath.join(folder, path)


def _after_cd(command: _Command, folder: str) -> str:
    words = _program_words(command)
    if not words or words[0].text != "cd" or len(words) != 2 or words[1].dynamic:
        return folder
    target = words[1].text
    if target in ("-", "~") or target.startswith("~"):
        return folder
    return posixpath.normpath(_in(folder, target)) if folder else target


# -- what one command writes -------------------------------------------------------------------


def _command_writes(command: _Command, depth: int) -> list[ShellWrite]:
    words = _program_words(command)
    quote = _cut(command.source)
    writes = list(_redirect_writes(command, words, quote))
    if not words or words[0].dynamic:
        return writes
    program, args = _program(words[0].text), words[1:]
    handler = _HANDLERS.get(program)
    if handler is not None:
        writes.extend(handler(program, command, args, quote))
    elif program in _SHELLS:
        writes.extend(_shell_writes(command, args, quote, depth))
    elif _INTERPRETERS.match(program):
        writes.extend(_script_writes(program, command, args, quote))
    elif "/" in words[0].text:  # ./tune.sh: a program of the agent's own, run by its path
        writes.append(ShellWrite("script", "", source=words[0].text, command=quote))
    return writes


def _program_words(command: _Command) -> list[_Word]:
    words = list(command.words)
    while words and (
        words[0].text in _PREFIXES or words[0].text in _KEYWORDS or _ASSIGNMENT.match(words[0].text)
    ):
        words.pop(0)
    return words


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= COMMAND_QUOTE_CHARS else text[: COMMAND_QUOTE_CHARS - 3] + "..."


def _redirect_writes(command: _Command, words: list[_Word], quote: str) -> Iterator[ShellWrite]:
    for op, target in command.redirects:
        if op.text not in _WRITE_REDIRECTS or target is None or target.text in _NOT_FILES:
            continue
        if op.text == ">&" and (target.text.isdigit() or target.text == "-"):
            continue  # 2>&1: a descriptor, not a file
        text = _stdout(command, words) if op.fd in ("", "1") else None
        kind = "append" if op.text in _APPENDING else "write"
        copied = _cat_of_one_file(words) if kind == "write" and op.fd in ("", "1") else None
        if copied is not None:
            yield ShellWrite("copy", target.text, source=copied, command=quote)
        elif text is None:
            yield _unknown(target, quote)
        else:
            yield ShellWrite(kind, target.text, text=text, command=quote, pattern=target.dynamic)


def _unknown(target: _Word, quote: str) -> ShellWrite:
    return ShellWrite("unknown", target.text, command=quote, pattern=target.dynamic)


def _stdout(command: _Command, words: list[_Word]) -> str | None:
    """What the command prints, where the command alone says it (cat of a heredoc, echo)."""
    if not words or words[0].dynamic:
        return None
    program, args = _program(words[0].text), words[1:]
    if program == "cat" and all(a.text == "-" for a in args):
        body, dynamic = command.stdin()
        if body is None and command.piped_from is not None:
            return _stdout(command.piped_from, _program_words(command.piped_from))
        return None if dynamic else body
    if program == "echo":
        return _echo(args)
    return None


def _cat_of_one_file(words: list[_Word]) -> str | None:
    """`cat FILE > OTHER` copies FILE."""
    if len(words) != 2 or words[0].text != "cat" or any(w.dynamic for w in words):
        return None
    return None if words[1].text.startswith("-") else words[1].text


def _echo(args: list[_Word]) -> str | None:
    newline = "\n"
    if args and args[0].text == "-n":
        newline, args = "", args[1:]
    if any(a.dynamic or a.text.startswith("-") for a in args):
        return None
    return " ".join(a.text for a in args) + newline


def _tee(program: str, command: _Command, args: list[_Word], quote: str) -> Iterator[ShellWrite]:
    files = [a for a in args if not a.text.startswith("-")]
    append = any(a.text in ("-a", "--append") for a in args)
    body, dynamic = command.stdin()
    if body is None and command.piped_from is not None:
        body = _stdout(command.piped_from, _program_words(command.piped_from))
    for target in files:
        if target.text in _NOT_FILES:
            continue
        if body is None or dynamic:
            yield _unknown(target, quote)
        else:
            kind = "append" if append else "write"
            yield ShellWrite(kind, target.text, text=body, command=quote, pattern=target.dynamic)


def _copy(program: str, command: _Command, args: list[_Word], quote: str) -> Iterator[ShellWrite]:
    move = program == "mv"
    paths = _operands(args)
    if len(paths) < 2:
        return
    *sources, dest = paths
    into = len(sources) > 1 or dest.text.endswith("/") or dest.text in (".", "..", "~")
    for source in sources:
        name = posixpath.basename(source.text.rstrip("/"))
        path = posixpath.join(dest.text, name) if into else dest.text
        dynamic = source.dynamic or dest.dynamic
        if dynamic:
            yield ShellWrite("unknown", path, command=quote, pattern=True)
        else:
            yield ShellWrite("move" if move else "copy", path, source=source.text, command=quote)
        if move:
            yield ShellWrite("delete", source.text, command=quote, pattern=source.dynamic)


def _operands(args: list[_Word]) -> list[_Word]:
    """Arguments that are not options (everything after `--` is an operand)."""
    out: list[_Word] = []
    options = True
    for arg in args:
        if options and arg.text == "--":
            options = False
        elif not (options and arg.text.startswith("-") and arg.text != "-"):
            out.append(arg)
    return out


def _remove(program: str, command: _Command, args: list[_Word], quote: str) -> Iterator[ShellWrite]:
    for target in _operands(args):
        yield ShellWrite("delete", target.text, command=quote, pattern=target.dynamic)


def _in_place(
    program: str, command: _Command, args: list[_Word], quote: str
) -> Iterator[ShellWrite]:
    """sed -i / perl -pi: every file operand is rewritten. An option ending in e or f takes
    the program as its next word; else the first operand is the program."""
    if not any(
        a.text.startswith("-i") or a.text.startswith("--in-place") or _perl_i(a) for a in args
    ):
        return
    operands: list[_Word] = []
    program_given = False
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg.text.startswith("-") and not arg.text.startswith("--"):
            skip = arg.text.endswith(("e", "f", "E"))
            program_given = program_given or skip
        elif not arg.text.startswith("--"):
            operands.append(arg)
    for target in operands if program_given else operands[1:]:
        yield _unknown(target, quote)


def _perl_i(arg: _Word) -> bool:
    return arg.text.startswith("-") and not arg.text.startswith("--") and "i" in arg.text[1:3]


def _overwrite(
    program: str, command: _Command, args: list[_Word], quote: str
) -> Iterator[ShellWrite]:
    """truncate FILE, dd of=FILE, patch FILE: rewritten with text the command does not hold."""
    if program == "dd":
        targets = [_Word(a.text[3:], a.dynamic) for a in args if a.text.startswith("of=")]
    elif program == "patch":
        targets = _operands(args)[:1] + _patched_files(command)
    else:
        targets = _operands(args)
    for target in targets:
        yield _unknown(target, quote)


def _git(program: str, command: _Command, args: list[_Word], quote: str) -> Iterator[ShellWrite]:
    """git checkout/restore -- FILE, git apply/am of a heredoc, git mv, git rm."""
    verb, rest = (args[0].text, args[1:]) if args else ("", [])
    if verb in ("mv", "rm"):
        handler = _copy if verb == "mv" else _remove
        yield from handler(verb, command, rest, quote)
    elif verb in ("checkout", "restore"):
        # `git checkout main` names a branch: only what looks like a file is a file.
        for target in _operands(rest):
            if "." in target.text or "/" in target.text:
                yield _unknown(target, quote)
    elif verb in ("apply", "am"):
        for target in _patched_files(command):
            yield _unknown(target, quote)


def _patched_files(command: _Command) -> list[_Word]:
    body, _ = command.stdin()
    names = re.findall(r"^\+\+\+ (?:[ab]/)?(\S+)", body or "", re.MULTILINE)
    return [_Word(name) for name in names if name != "/dev/null"]


def _shell_writes(
    command: _Command, args: list[_Word], quote: str, depth: int
) -> Iterator[ShellWrite]:
    for i, arg in enumerate(args):
        if _runs_string(arg.text) and i + 1 < len(args):
            if args[i + 1].dynamic or depth >= MAX_NESTING:
                yield ShellWrite("script", "", text=args[i + 1].text, command=quote)
            else:
                yield from shell_writes(args[i + 1].text, depth=depth + 1)
            return
        if not arg.text.startswith("-"):
            yield ShellWrite("script", "", source=arg.text, command=quote, pattern=arg.dynamic)
            return
    body, _ = command.stdin()
    if body is not None and depth < MAX_NESTING:
        yield from shell_writes(body, depth=depth + 1)


def _script_writes(
    program: str, command: _Command, args: list[_Word], quote: str
) -> Iterator[ShellWrite]:
    """python -c CODE, python - <<EOF, python file.py: a program that may write what it names."""
    for i, arg in enumerate(args):
        if arg.text in ("-c", "-e", "-E"):
            if i + 1 < len(args):
                yield ShellWrite("script", "", text=args[i + 1].text, command=quote)
            return
        if arg.text == "-m":
            return  # a module we cannot see
        if arg.text == "-":
            break  # the program comes on stdin
        if not arg.text.startswith("-"):
            yield ShellWrite("script", "", source=arg.text, command=quote, pattern=arg.dynamic)
            return
    body, _ = command.stdin()
    if body is not None:
        yield ShellWrite("script", "", text=body, command=quote)


def _perl(program: str, command: _Command, args: list[_Word], quote: str) -> Iterator[ShellWrite]:
    if any(_perl_i(a) for a in args):
        yield from _in_place(program, command, args, quote)
    else:
        yield from _script_writes(program, command, args, quote)


_HANDLERS = {
    "tee": _tee,
    "cp": _copy,
    "mv": _copy,
    "install": _copy,
    "rm": _remove,
    "unlink": _remove,
    "sed": _in_place,
    "perl": _perl,
    "truncate": _overwrite,
    "dd": _overwrite,
    "git": _git,
    "patch": _overwrite,
}


# -- commands from tokens ----------------------------------------------------------------------


def _commands(tokens: list[_Word | _Op]) -> list[_Command]:
    commands: list[_Command] = []
    current = _Command()
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if isinstance(token, _Word):
            current.words.append(token)
        elif token.text in _SEPARATORS:
            if current.words or current.redirects:
                commands.append(current)
            if token.text in ("(", ")"):
                commands.append(_Command(group=token.text))
            piped = current if token.text in ("|", "|&") else None
            current = _Command(piped_from=piped)
        elif token.delimiter is not None:
            current.redirects.append((token, None))
        else:
            target = tokens[i] if i < len(tokens) and isinstance(tokens[i], _Word) else None
            i += target is not None
            current.redirects.append((token, target if isinstance(target, _Word) else None))
    if current.words or current.redirects:
        commands.append(current)
    for command in commands:
        command.source = " ".join(w.text for w in command.words) + "".join(
            f" {op.fd}{op.text}{(t or op.delimiter or _Word('')).text}"
            for op, t in command.redirects
        )
    return commands


# -- the lexer ---------------------------------------------------------------------------------


class _Lexer:
    """Splits a script into words and operators as the shell does, reading heredoc bodies."""

    def __init__(self, script: str) -> None:
        self.s = script.replace("\r\n", "\n")
        self.i = 0
        self.out: list[_Word | _Op] = []
        self.pending: list[_Op] = []

    def tokens(self) -> list[_Word | _Op]:
        s = self.s
        while self.i < len(s):
            c = s[self.i]
            if c in " \t":
                self.i += 1
            elif s.startswith("\\\n", self.i):
                self.i += 2
            elif c == "\n":
                self.i += 1
                self.out.append(_Op("\n"))
                self._bodies()
            elif c == "#":
                end = s.find("\n", self.i)
                self.i = len(s) if end < 0 else end
            else:
                self._token()
        return self.out

    def _token(self) -> None:
        op = self._operator()
        if op is not None:
            self._op(op, "")
            return
        word = self._word()
        op = self._operator() if word.text.isdigit() and not word.quoted else None
        if op is not None and op[0] in "<>":
            self._op(op, word.text)
        else:
            self.out.append(word)

    def _operator(self) -> str | None:
        return next((op for op in _OPERATORS if self.s.startswith(op, self.i)), None)

    def _op(self, text: str, fd: str) -> None:
        self.i += len(text)
        op = _Op(text, fd=fd)
        self.out.append(op)
        if text in ("<<", "<<-"):
            while self.i < len(self.s) and self.s[self.i] in " \t":
                self.i += 1
            op.delimiter = self._word()
            op.strip_tabs = text == "<<-"
            self.pending.append(op)

    def _word(self) -> _Word:
        s, parts = self.s, []
        word = _Word("")
        while self.i < len(s) and s[self.i] not in _WORD_END:
            c = s[self.i]
            if c == "'":
                end = s.find("'", self.i + 1)
                end = len(s) if end < 0 else end
                parts.append(s[self.i + 1 : end])
                word.quoted, self.i = True, end + 1
            elif c == '"':
                parts.append(self._double(word))
            elif c == "\\":
                if s.startswith("\\\n", self.i):
                    self.i += 2
                    continue
                parts.append(s[self.i + 1 : self.i + 2])
                word.quoted, self.i = True, self.i + 2
            elif c in "$`" and self._expands():
                parts.append(self._expansion())
                word.dynamic = True
            else:
                word.dynamic = word.dynamic or c in "*?["
                parts.append(c)
                self.i += 1
        word.text = "".join(parts)
        return word

    def _double(self, word: _Word) -> str:
        """A double-quoted string from its opening quote, escapes applied."""
        s, parts = self.s, []
        word.quoted = True
        self.i += 1
        while self.i < len(s) and s[self.i] != '"':
            c = s[self.i]
            if c == "\\" and s[self.i + 1 : self.i + 2] in ('"', "\\", "$", "`", "\n"):
                parts.append(s[self.i + 1] if s[self.i + 1] != "\n" else "")
                self.i += 2
            elif c in "$`" and self._expands(quoted=True):
                parts.append(self._expansion())
                word.dynamic = True
            else:
                parts.append(c)
                self.i += 1
        self.i += 1
        return "".join(parts)

    def _expands(self, *, quoted: bool = False) -> bool:
        c, nxt = self.s[self.i], self.s[self.i + 1 : self.i + 2]
        ansi_c = nxt == "'" and not quoted  # $'...' outside double quotes
        return c == "`" or ansi_c or bool(nxt and _EXPANSION_START.match(nxt))

    def _expansion(self) -> str:
        """$name, ${...}, $(...), $'...' or `...`, kept as written."""
        s, start = self.s, self.i
        if s[start] == "`":
            end = s.find("`", start + 1)
            self.i = len(s) if end < 0 else end + 1
        elif s.startswith("$(", start) or s.startswith("${", start):
            self.i = _closing(s, start + 1)
        elif s.startswith("$'", start):
            end = s.find("'", start + 2)
            self.i = len(s) if end < 0 else end + 1
        else:
            match = re.compile(r"\$(?:[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])?").match(s, start)
            self.i = match.end() if match else start + 1
        return s[start : self.i]

    def _bodies(self) -> None:
        for op in self.pending:
            op.body, op.body_dynamic = self._body(op)
        self.pending = []

    def _body(self, op: _Op) -> tuple[str, bool]:
        assert op.delimiter is not None
        lines: list[str] = []
        s = self.s
        while self.i < len(s):
            end = s.find("\n", self.i)
            line = s[self.i : end] if end >= 0 else s[self.i :]
            self.i = end + 1 if end >= 0 else len(s)
            if op.strip_tabs:
                line = line.lstrip("\t")
            if line == op.delimiter.text:
                break
            lines.append(line + "\n")
        body = "".join(lines)
        if op.delimiter.quoted:
            return body, False
        return _expand_body(body)


def _closing(s: str, open_at: int) -> int:
    """The index after the bracket that closes the one at `open_at` (quotes skipped)."""
    pairs = {"(": ")", "{": "}"}
    opener, closer = s[open_at], pairs[s[open_at]]
    depth, i = 0, open_at
    while i < len(s):
        c = s[i]
        if c in "'\"":
            end = s.find(c, i + 1)
            i = len(s) if end < 0 else end + 1
            continue
        depth += (c == opener) - (c == closer)
        i += 1
        if depth == 0:
            return i
    return len(s)


def _expand_body(body: str) -> tuple[str, bool]:
    """An unquoted heredoc's text as the shell writes it: `\\$`, `\\``, `\\\\` and a
    backslash-newline unescaped; any expansion left makes the text unknown (dynamic)."""
    out: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        nxt = body[i + 1 : i + 2]
        if c == "\\" and nxt in ("$", "`", "\\", "\n"):
            out.append(nxt if nxt != "\n" else "")
            i += 2
            continue
        if c == "`" or (c == "$" and nxt and _EXPANSION_START.match(nxt)):
            return body, True
        out.append(c)
        i += 1
    return "".join(out), False
