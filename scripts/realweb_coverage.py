#!/usr/bin/env python3
"""How much of each page's own text the crawl took for its main text, on the real-page web.

    python3 scripts/realweb_coverage.py RUN_DIR [--list N] [--min-words W]

RUN_DIR is one run of `simcrawl-bench realweb --out DIR` (DIR/run-1: web.json and pages.jsonl, the
crawl's `simcrawl export`). For every page indexed from a manual's origin (or a version or unrelated
host), the words of its main text are set against the words of its file's reference text: the file's
visible lines less the manual's repeated lines (scripts/realweb_truth.py's definition, the same text
the skips are scored with). A page whose main text holds under half of its reference words was
partly extracted, or is a page of links (an index), whose main text is short by design. Two versions
of a page that differ only in the part left out have the same main text: a class of wrong skips.

Prints, per manual, the pages of at least W reference words (default 100), how many have under half,
and the median ratio; then the N lowest ratios (default 40).

Standard library only.
"""

import argparse
import json
import os
import re
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import realweb_truth as truth  # noqa: E402

WORD = re.compile(r"\w+")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", help="a run directory of simcrawl-bench realweb (web.json, pages.jsonl)")
    ap.add_argument("--list", type=int, default=40, help="lowest ratios listed")
    ap.add_argument("--min-words", type=int, default=100, help="smallest reference text counted")
    args = ap.parse_args()
    web = truth.Web(os.path.join(args.run, "web.json"))
    truth.compute_truth(web)  # sets each manual's repeated lines
    rows = []
    with open(os.path.join(args.run, "pages.jsonl"), encoding="utf-8") as f:
        for line in f:
            page = json.loads(line)
            doc = web.doc(page.get("url"))
            if not doc:
                continue
            parts = truth.urlsplit(page["url"])
            host = web.by_origin.get((parts.scheme.lower(), parts.netloc.lower()))
            if host.get("role") not in ("origin", "version", "unrelated"):
                continue
            reference = len(web.page(doc).words)
            if reference >= args.min_words:
                words = len(WORD.findall((page.get("text") or "").lower()))
                rows.append((words / reference, doc[0], doc[1], words, reference))
    rows.sort()
    by_manual = defaultdict(list)
    for r in rows:
        by_manual[r[1]].append(r[0])
    print(f"{'manual':10s} {'pages':>6s} {'under half':>11s} {'median':>7s}")
    for manual, ratios in sorted(by_manual.items()):
        low = sum(1 for x in ratios if x < 0.5)
        print(f"{manual:10s} {len(ratios):6d} {low:11d} {sorted(ratios)[len(ratios) // 2]:7.2f}")
    print()
    print(f"{'ratio':>5s} {'manual':10s} {'file':60s} {'main':>6s} {'reference':>9s}")
    for r in rows[: args.list]:
        print(f"{r[0]:5.2f} {r[1]:10s} {r[2]:60s} {r[3]:6d} {r[4]:9d}")


if __name__ == "__main__":
    main()
