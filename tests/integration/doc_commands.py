"""The shell commands shown in README.md, bench/README.md and docs/*.md: found in the pages'
code blocks (fenced ``sh`` / ``bash`` / unlabelled blocks and indented blocks), for
tests/integration/test_doc_commands.py, which proves that each one is run by a test."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^\s*```\s*(\w*)")
SHELL_LANGS = {"sh", "bash", "shell", "console", ""}
# what a shown command starts with, after VAR=value assignments: the project's scripts and
# tools, rtshell, the venv's programs, and the few shell words the pages use (an output line
# such as "rtcf-print: DCM0:qq: ..." is not one: a program name ends with a blank)
COMMAND = re.compile(r"(scripts/|\.venv/bin/|~/rtcf/|bench/|rtcf-[a-z]+(?=\s|$)|"
                     r"rt(ls|cat|conf|act|deact|reset|exit|find|print|inject|record|connect|"
                     r"disc|compose|doc|mgr|watch)(?=\s|$)|(cd|sed|python3?|pip)(?=\s|$))")
ASSIGN = re.compile(r"^([A-Z_][A-Z0-9_]*)=(\S+)(\s+|$)")


@dataclass(frozen=True)
class DocCommand:
    file: str        # "README.md", "docs/observing.md"
    line: int        # 1-based line of the command in that file
    text: str        # the command: comment stripped, continuation lines joined, blanks single
    setup: tuple[str, ...] = ()   # the assignments (M=...) before it in its block

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.text}"


def pages() -> list[Path]:
    """README.md, bench/README.md and every docs/*.md (pages added later are picked up)."""
    return [ROOT / "README.md", ROOT / "bench" / "README.md"] + \
        sorted((ROOT / "docs").glob("*.md"))


def strip_comment(line: str) -> str:
    """The line without a trailing ``# comment`` (a # outside quotes after a blank)."""
    quote = None
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line.rstrip()


def blocks(text: str):
    """(line of the block's first line, language, lines) of the fenced and the indented code
    blocks of a Markdown text (an indented block follows a blank line)."""
    lines = text.splitlines()
    i, prev_blank = 0, True
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m:
            lang, start, body = m.group(1), i + 2, []
            i += 1
            while i < len(lines) and not FENCE.match(lines[i]):
                body.append(lines[i])
                i += 1
            yield start, lang, body
            i += 1
            prev_blank = False
            continue
        if lines[i].startswith("    ") and prev_blank and lines[i].strip():
            start, body = i + 1, []
            while i < len(lines) and (lines[i].startswith("    ") or not lines[i].strip()):
                body.append(lines[i][4:])
                i += 1
            yield start, "indented", body
            prev_blank = False
            continue
        prev_blank = not lines[i].strip()
        i += 1


def is_command(text: str) -> bool:
    rest = text
    while True:
        m = ASSIGN.match(rest)
        if not m:
            break
        rest = rest[m.end():]
        if not rest:
            return True               # an assignment alone (M=...): the block's setup
    return bool(COMMAND.match(rest))


def commands_of(path: Path) -> list[DocCommand]:
    out = []
    for start, lang, body in blocks(path.read_text()):
        if lang not in SHELL_LANGS and lang != "indented":
            continue
        k, setup = 0, []
        while k < len(body):
            line, first = body[k], start + k
            while line.rstrip().endswith("\\") and k + 1 < len(body):
                k += 1
                line = line.rstrip()[:-1] + " " + body[k].strip()
            k += 1
            text = " ".join(strip_comment(line).split())
            if text and is_command(text):
                out.append(DocCommand(str(path.relative_to(ROOT)), first, text, tuple(setup)))
                if ASSIGN.match(text) and not ASSIGN.sub("", text, count=1).strip():
                    setup.append(text)
    return out


def doc_commands() -> list[DocCommand]:
    return [c for page in pages() for c in commands_of(page)]
