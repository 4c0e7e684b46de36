"""Which files a shell command writes, read as the shell would read it."""

from __future__ import annotations

from transcript_formats.shell_writes import MAX_NESTING, ShellWrite, shell_script, shell_writes


def kinds(script: str) -> list[tuple[str, str, str | None]]:
    """(kind, path, text written or file copied) of each write."""
    return [(w.kind, w.path, w.source or w.text) for w in shell_writes(script)]


def test_heredocs_write_their_body_whatever_the_order_of_redirect_and_delimiter():
    assert kinds("cat > a.py <<'EOF'\nx = 1\nEOF") == [("write", "a.py", "x = 1\n")]
    assert kinds('cat <<"EOF" >b.py\ny\nEOF\n') == [("write", "b.py", "y\n")]
    assert kinds("cat >> c.py << EOF\nz\nEOF") == [("append", "c.py", "z\n")]
    assert kinds("tee d.py >/dev/null <<'X'\nw\nX") == [("write", "d.py", "w\n")]
    assert kinds("cat <<'EOF' | tee -a e.py\nv\nEOF") == [("append", "e.py", "v\n")]


def test_a_quoted_delimiter_keeps_the_body_as_written():
    body = 'x = "$HOME" + `date` + "\\\\n"\n'
    assert kinds(f"cat > a.py <<'EOF'\n{body}EOF") == [("write", "a.py", body)]


def test_an_unquoted_body_is_unescaped_and_an_expansion_makes_it_unknown():
    assert kinds("cat > a.py <<EOF\ncost = \\$5\npath = 'a\\\\b'\nEOF") == [
        ("write", "a.py", "cost = $5\npath = 'a\\b'\n")
    ]
    assert kinds("cat > a.py <<EOF\nhome = $HOME\nEOF") == [("unknown", "a.py", None)]


def test_tab_stripped_heredocs_and_an_unterminated_body():
    assert kinds("cat > a.py <<-EOF\n\tx\n\tEOF\necho done") == [("write", "a.py", "x\n")]
    # bash warns and takes the rest of the script as the body
    assert kinds("cat > a.py <<EOF\nx\ny") == [("write", "a.py", "x\ny\n")]


def test_a_script_inside_bash_c_is_read_and_nesting_is_bounded():
    assert kinds("bash -lc 'echo hi > a.txt'") == [("write", "a.txt", "hi\n")]
    assert shell_script(["bash", "-lc", "echo hi"]) == "echo hi"
    assert shell_script(["python", "-c", "print(1)"]) == "python -c 'print(1)'"
    script = "echo deep > z.txt"
    for _ in range(MAX_NESTING + 2):
        script = "sh -c '" + script.replace("'", "'\\''") + "'"
    [write] = shell_writes(script)
    assert write.kind == "script"  # past the bound the inner script is not read


def test_output_of_other_programs_is_written_with_unknown_text():
    assert kinds("python gen.py > a.py 2>&1") == [
        ("unknown", "a.py", None),
        ("script", "", "gen.py"),
    ]
    assert kinds("make 2>/dev/null >/dev/null; ls >&2") == []
    assert kinds("sed -i 's/a/b/' a.py b.py") == [
        ("unknown", "a.py", None),
        ("unknown", "b.py", None),
    ]
    assert kinds("sed -n '1,5p' a.py") == []
    assert kinds("perl -pi -e 's/a/b/' a.py") == [("unknown", "a.py", None)]
    assert kinds("git checkout -- a.py && git checkout main") == [("unknown", "a.py", None)]


def test_copies_moves_and_removals():
    assert kinds("cp starter/solution.py . && mv a.py b.py && rm -f c.py") == [
        ("copy", "./solution.py", "starter/solution.py"),
        ("move", "b.py", "a.py"),
        ("delete", "a.py", None),
        ("delete", "c.py", None),
    ]
    assert kinds("cat v2.py > solution.py") == [("copy", "solution.py", "v2.py")]
    [glob] = shell_writes("cp starter/* .")
    assert (glob.kind, glob.path, glob.pattern) == ("unknown", "./*", True)


def test_cd_moves_later_paths_and_a_subshell_keeps_its_cd():
    assert kinds("cd /w && echo a > x.txt") == [("write", "/w/x.txt", "a\n")]
    assert kinds("(cd sub && echo a > x.txt); echo b > y.txt") == [
        ("write", "sub/x.txt", "a\n"),
        ("write", "y.txt", "b\n"),
    ]


def test_python_code_and_script_files_are_reported_for_the_caller_to_judge():
    [inline] = shell_writes("python3 -c \"open('a.py','w').write('x')\"")
    assert inline == ShellWrite(
        "script", "", text="open('a.py','w').write('x')", command=inline.command
    )
    [stdin] = shell_writes("python - <<'EOF'\nprint(1)\nEOF")
    assert stdin.text == "print(1)\n"
    [program] = shell_writes("python tune.py --fast")
    assert program.source == "tune.py"
    assert shell_writes("python -m pytest -q") == []


def test_broken_quoting_is_read_without_error():
    assert kinds("echo 'unclosed > a.txt") == []
    assert kinds('echo "x $(date" > a.txt') == []
    assert kinds("cat <<") == []
