#!/usr/bin/env python3
"""Keeps the README's figures true: each one is a figure of docs/BENCHMARKS.md's summary table.

    python3 scripts/readme_figures.py --check     # CI: exit 1 naming each figure that is not

A figure of the README is written in bold (`**0.71**`, `**2010 pages/s**`): every number in a bold
part must be a number of the summary table ("## Summary against the targets" in docs/BENCHMARKS.md),
where each figure stands once, with the command that measures it. A measurement outside bold (a
number with a unit such as ×, ms, MB/s, MiB, pages/s or %, or a decimal like 0.913) is an error: it
would escape the check, and two such copies of one figure drifted apart before (F1 0.933 in a table
and 0.913 under Performance). Code blocks and `code` are not prose and are left alone.

Standard library only.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
BENCHMARKS = REPO / "docs" / "BENCHMARKS.md"

NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
UNIT = re.compile(
    r"\d[\d,.]*(?:–\d[\d,.]*)?\s?(?:×|ms\b|µs\b|MB/s|MiB\b|KB\b|pages/s|B/page|%)"
)
DECIMAL = re.compile(r"(?<![\w.])\d+\.\d{2,}(?![\w.])")


def summary(text: str) -> str:
    """The summary table of BENCHMARKS.md, thousands separators dropped."""
    match = re.search(r"^## Summary against the targets\n(.*?)(?=^## )", text, re.S | re.M)
    if not match:
        sys.exit("docs/BENCHMARKS.md has no '## Summary against the targets' section")
    return match.group(1).replace(",", "")


def prose(text: str) -> list[tuple[int, str]]:
    """The README's lines outside code blocks, with `code` spans blanked."""
    lines, fenced = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            lines.append((number, re.sub(r"`[^`]*`", "``", line)))
    return lines


def problems(readme: str, benchmarks: str) -> list[str]:
    table = summary(benchmarks)
    found = []
    for number, line in prose(readme):
        for bold in re.findall(r"\*\*(.+?)\*\*", line):
            for figure in NUMBER.findall(bold):
                plain = figure.replace(",", "")
                if not re.search(rf"(?<![\d.]){re.escape(plain)}(?![\d]|\.\d)", table):
                    found.append(
                        f"README.md:{number}: {figure} (in **{bold}**) is no figure of docs/BENCHMARKS.md's summary table"
                    )
        outside = re.sub(r"\*\*(.+?)\*\*", "", line)
        for pattern in (UNIT, DECIMAL):
            for match in pattern.finditer(outside):
                found.append(
                    f"README.md:{number}: {match.group(0).strip()} is a figure outside bold: make it a figure of the summary table, in bold, or leave it out"
                )
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 on any figure that is not true")
    parser.parse_args()
    found = problems(README.read_text(), BENCHMARKS.read_text())
    for line in found:
        print(line)
    if found:
        print(f"readme-figures: {len(found)} figure(s) to fix")
        return 1
    print("readme-figures: every README figure is one of docs/BENCHMARKS.md's summary table")
    return 0


if __name__ == "__main__":
    sys.exit(main())
