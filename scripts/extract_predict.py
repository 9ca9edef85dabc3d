#!/usr/bin/env python3
"""Writes trafilatura's main text for every page of an extract-eval folder into PRED_DIR/<id>.txt.

Run by scripts/extract-compare.sh inside its virtualenv. One process for all pages (an import of
trafilatura per page would cost more than the extraction). Settings: trafilatura's defaults, with
comments left out (the gold main text has no comments), and the page's URL when the gold has one.
"""
import json
import os
import sys

import trafilatura


def main():
    data, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(data, "gold.jsonl"), encoding="utf-8") as gold:
        for line in gold:
            rec = json.loads(line)
            with open(os.path.join(data, "pages", rec["id"] + ".html"), "rb") as f:
                html = f.read()
            text = trafilatura.extract(html, url=rec.get("url") or None, include_comments=False)
            with open(os.path.join(out, rec["id"] + ".txt"), "w", encoding="utf-8") as f:
                f.write(text or "")


if __name__ == "__main__":
    main()
