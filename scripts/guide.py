#!/usr/bin/env python3
"""Keeps docs/GUIDE.md true: runs every `console` block's commands with the built binary.

    python3 scripts/guide.py --check            # CI: every command runs, its output has the guide's shape
    python3 scripts/guide.py --update           # rewrite the outputs in the guide from real runs
    python3 scripts/guide.py --bin target/debug --check

A `console` block holds one or more commands (lines starting with `$ `, continued with a trailing
backslash) each followed by its output. A block's output that ends with a line `...` was cut: an
update keeps as many lines as the guide shows. A block right after the line `<!-- guide: not run -->`
is left alone (it needs a server the script does not start); after `<!-- guide: exit N -->` the
command must exit with N.

Ports: the demo web listens on fresh ports each run. The origin's address is read from the first
demo's output, and every `127.0.0.1:PORT` in later commands is replaced by it before they run (and
in the guide, on --update).

Shape (--check): every output line of the guide, with URLs, numbers and runs of spaces made
generic, must appear in the new output, but for at most a fifth of them (which samples a crawl lists
changes with timing). Standard library only.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GUIDE = REPO / "docs" / "GUIDE.md"


class Block:
    def __init__(self, start: int, end: int, lines: list[str], directive: str | None):
        self.start, self.end = start, end  # line indexes of the fences
        self.lines = lines
        self.directive = directive

    def commands(self) -> list[tuple[list[str], list[str]]]:
        """[(command lines, output lines)]"""
        out: list[tuple[list[str], list[str]]] = []
        i = 0
        while i < len(self.lines):
            line = self.lines[i]
            if not line.startswith("$ "):
                i += 1
                continue
            cmd = [line]
            while cmd[-1].endswith("\\") and i + 1 < len(self.lines):
                i += 1
                cmd.append(self.lines[i])
            i += 1
            output = []
            while i < len(self.lines) and not self.lines[i].startswith("$ "):
                output.append(self.lines[i])
                i += 1
            out.append((cmd, output))
        return out


def parse(text: str) -> tuple[list[str], list[Block]]:
    lines = text.split("\n")
    blocks = []
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```console":
            j = i + 1
            while j < len(lines) and lines[j].strip() != "```":
                j += 1
            prev = lines[i - 1].strip() if i > 0 else ""
            m = re.fullmatch(r"<!-- guide: (.*) -->", prev)
            blocks.append(Block(i, j, lines[i + 1:j], m.group(1) if m else None))
            i = j
        i += 1
    return lines, blocks


def shell_command(cmd_lines: list[str]) -> str:
    text = "\n".join(cmd_lines)[2:]  # drop "$ "
    return text


def generic(line: str) -> str:
    line = re.sub(r"https?://\S+", "URL", line)
    line = re.sub(r"^\S+\)/\S*", "SURT", line)  # a CDXJ key
    line = re.sub(r"\b[A-Za-z0-9]{16,}\b", "ID", line)
    line = re.sub(r"\d+(\.\d+)?", "#", line)
    line = re.sub(r"\s+", " ", line).strip()
    return line


def run(cmd: str, bin_dir: Path) -> tuple[int, str]:
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}:{env.get('PATH', '')}"
    env.pop("RUST_LOG", None)
    env["NO_COLOR"] = "1"
    proc = subprocess.run(["bash", "-c", cmd], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=600)
    return proc.returncode, proc.stdout.rstrip("\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--update", action="store_true")
    ap.add_argument("--bin", default=str(REPO / "target" / "release"),
                    help="directory holding the simcrawl binary (default target/release)")
    args = ap.parse_args()
    bin_dir = Path(args.bin).resolve()
    if not (bin_dir / "simcrawl").exists():
        print(f"no simcrawl binary in {bin_dir}: build it first", file=sys.stderr)
        return 2
    lines, blocks = parse(GUIDE.read_text())
    origin: str | None = None
    failures = 0
    replacements: dict[int, list[str]] = {}  # block start -> new block lines
    for block in blocks:
        if block.directive == "not run":
            continue
        want_exit = 0
        if block.directive and block.directive.startswith("exit "):
            want_exit = int(block.directive.split()[1])
        new_lines: list[str] = []
        for cmd_lines, output in block.commands():
            if origin:
                cmd_lines = [re.sub(r"127\.0\.0\.1:\d+", origin, c) for c in cmd_lines]
            cmd = shell_command(cmd_lines)
            code, out = run(cmd, bin_dir)
            label = cmd_lines[0][:90]
            if code != want_exit:
                print(f"FAIL  {label}\n      exit {code}, expected {want_exit}")
                failures += 1
            if origin is None:
                m = re.search(r"^\s*origin\s+http://(127\.0\.0\.1:\d+)/", out, re.M)
                if m:
                    origin = m.group(1)
            got = out.split("\n") if out else []
            shown = [l for l in output if l.strip() != "..."]
            cut = any(l.strip() == "..." for l in output)
            if args.check:
                have = {generic(l) for l in got}
                missing = [l for l in shown if l.strip() and generic(l) not in have]
                allowed = len([l for l in shown if l.strip()]) // 5
                if len(missing) > allowed:
                    print(f"FAIL  {label}\n      {len(missing)} of {len(shown)} lines of the "
                          f"guide's output are not in the new output (at most {allowed} may "
                          "differ); the first:")
                    for l in missing[:5]:
                        print(f"        {l}")
                    failures += 1
                else:
                    print(f"ok    {label}")
            new_lines.extend(cmd_lines)
            if cut:
                new_lines.extend(got[:len(shown)])
                new_lines.append("...")
            else:
                new_lines.extend(got)
        replacements[block.start] = new_lines
    if args.update:
        out_lines: list[str] = []
        i = 0
        by_start = {b.start: b for b in blocks}
        while i < len(lines):
            if i in by_start and i in replacements:
                block = by_start[i]
                out_lines.append(lines[i])
                out_lines.extend(replacements[i])
                out_lines.append(lines[block.end])
                i = block.end + 1
                continue
            out_lines.append(lines[i])
            i += 1
        GUIDE.write_text("\n".join(out_lines))
        print(f"updated {GUIDE.relative_to(REPO)}: {len(replacements)} blocks")
    if failures:
        print(f"guide: {failures} failure(s)")
        return 1
    print("guide: all commands ran" + (" with the guide's shape" if args.check else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
