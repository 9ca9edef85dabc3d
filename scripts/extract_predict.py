#!/usr/bin/env python3
"""Writes trafilatura's main text for every page of an extract-eval folder into PRED_DIR/<id>.txt,
and its time per page into PRED_DIR/times.jsonl.

Run by scripts/extract-compare.sh inside its virtualenv. One process for all pages (an import of
trafilatura per page would cost more than the extraction). Settings: trafilatura's defaults, with
comments left out (the gold main text has no comments), and the page's URL when the gold has one.
The time is of `trafilatura.extract` alone on the page's bytes (one run, one thread).
"""
import json
import os
import sys
import time

import trafilatura


def main():
    data, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(data, "gold.jsonl"), encoding="utf-8") as gold, \
            open(os.path.join(out, "times.jsonl"), "w", encoding="utf-8") as times:
        for line in gold:
            if not line.strip():
                continue
            rec = json.loads(line)
            with open(os.path.join(data, "pages", rec["id"] + ".html"), "rb") as f:
                html = f.read()
            start = time.perf_counter()
            text = trafilatura.extract(html, url=rec.get("url") or None, include_comments=False)
            seconds = time.perf_counter() - start
            with open(os.path.join(out, rec["id"] + ".txt"), "w", encoding="utf-8") as f:
                f.write(text or "")
            times.write(json.dumps({"id": rec["id"], "source": rec["source"], "bytes": len(html),
                                    "seconds": seconds}) + "\n")


if __name__ == "__main__":
    main()
