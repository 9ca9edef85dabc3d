#!/usr/bin/env python3
"""Prints scripts/extract-compare.sh's table: per subset, F1, precision, recall and time per page of
each extractor, from score.py's --per-page files and the extractors' times.

    extract_table.py DIR    # DIR/<name>.pp.jsonl (score.py --per-page) and DIR/<name>.times.jsonl
"""
import collections
import json
import os
import sys

NAMES = ["simcrawl", "trafilatura", "rs-trafilatura"]


def load(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    d = sys.argv[1]
    scores = {n: load(os.path.join(d, n + ".pp.jsonl")) for n in NAMES}
    times = {n: {r["id"]: r["seconds"] for r in load(os.path.join(d, n + ".times.jsonl"))}
             for n in NAMES}
    subsets = sorted({r["source"] for r in scores["simcrawl"]}) + ["all"]

    def rows(name, subset):
        return [r for r in scores[name] if subset == "all" or r["source"] == subset]

    def mean(xs):
        return sum(xs) / len(xs) if xs else 0.0

    head = "| subset | pages |"
    rule = "|---|---|"
    for n in NAMES:
        head += " %s F1 | P | R | ms/page |" % n
        rule += "---|---|---|---|"
    head += " rs-trafilatura ÷ simcrawl time | trafilatura ÷ simcrawl time |"
    rule += "---|---|"
    print(head)
    print(rule)
    for s in subsets:
        line = "| %s | %d |" % (s, len(rows("simcrawl", s)))
        ms = {}
        for n in NAMES:
            rs = rows(n, s)
            ms[n] = 1e3 * mean([times[n].get(r["id"], 0.0) for r in rs])
            f1 = "%.4f" % mean([r["f1"] for r in rs])
            if n == "simcrawl":
                f1 = "**%s**" % f1
            line += " %s | %.4f | %.4f | %.3f |" % (
                f1, mean([r["precision"] for r in rs]), mean([r["recall"] for r in rs]), ms[n])
        for n in ("rs-trafilatura", "trafilatura"):
            line += " %.1f× |" % (ms[n] / ms["simcrawl"] if ms["simcrawl"] else 0.0)
        print(line)


if __name__ == "__main__":
    main()
