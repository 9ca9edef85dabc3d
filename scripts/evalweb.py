#!/usr/bin/env python3
"""The extract-eval pages as a web of copies: verdicts on 456 real pages from hundreds of page
generators, with the truth from their hand-made main texts.

The evaluation set (../shared/extract-eval, for evaluation only: nothing of it is written into the
repository) holds 456 real pages (2007-2024 news, blogs, forums, portals, 7 languages) and, for
each, the main text people marked. This script copies them into a temporary directory and serves
them on loopback, each on three hosts:

  origin   the pages as they are;
  notice   each page with one sentence inserted right after the body's start tag (a mirror that
           says it is one);
  noisy    each page with an ad block and a timestamp of its own injected at the body's start and
           end (a copy whose chrome changes from page to page);

and, on two more hosts, a stub of each page: its first 25 hand-made words (a reference stub's
size) inside one heavy template (a 120-link menu, a sidebar, a footer: about 450 words of
chrome), on "stubs" and byte for byte on "stubs-mirror". A stub is a document of its own: two
stubs of different pages are distinct pages whose chrome is nearly all of them.

Each host has an index.html that links to its pages; the crawl starts from the three indexes
(origin first) with --max-depth 1, so that the pages' own links (to sites that are not here) are
not followed. It then reads the skip log and the indexed pages, and counts, by the file behind
each URL:

  distinct skips  a page skipped as a copy of a page of another file whose hand-made main texts
                  differ (word 3-shingle Jaccard < 0.5): the worst bug, the goal is 0;
  changed skips   the same with Jaccard 0.5-0.8;
  files indexed   per file: once is right; more than once is a copy not recognised (fetched and
                  indexed again); never is a page lost, unless the page says noindex (two files
                  of the set whose main texts are the same, Jaccard >= 0.8, count as one
                  document).

With --explain, it also runs `simcrawl explain --store` on every skip made after comparing the page
with its original, and counts those to which explain gives the crawl's own verdict.

Usage:
  python3 scripts/evalweb.py --bin target/release/simcrawl [--eval DIR] [--keep DIR] [--json] [--explain]

Loopback only: every server binds 127.0.0.1, and the crawl is held to depth 1.
"""

import argparse
import functools
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

NOTICE = "This page is mirrored for offline reading; see the original site for updates."
BODY = re.compile(rb"<body[^>]*>", re.IGNORECASE)
END_BODY = re.compile(rb"</body\s*>", re.IGNORECASE)


# Chinese and Japanese put no spaces between words: each ideograph and kana is a word, as the
# crawler's fingerprints count them (simcrawl_extract::is_ideograph); other words are runs of
# what is not white space.
IDEOGRAPHS = ("\u3041-\u309f\u30a0-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
              "\uf900-\ufaff\uff66-\uff9d\U00020000-\U0003134f")
WORD = re.compile(f"[{IDEOGRAPHS}]|[^\\s{IDEOGRAPHS}]+")


def words(text):
    return WORD.findall(text)


def first_words(text, n):
    """The text up to the end of its n-th word, as written (its spaces, or none, kept)."""
    end = 0
    for count, m in enumerate(WORD.finditer(text), 1):
        end = m.end()
        if count == n:
            break
    return " ".join(text[:end].split())


def shingles(text, n=3):
    words_ = words(text.lower())
    return {tuple(words_[i : i + n]) for i in range(max(0, len(words_) - n + 1))} or {tuple(words_)}


def jaccard(a, b):
    return len(a & b) / max(1, len(a | b))


def insert_after_body(html, snippet):
    m = BODY.search(html)
    at = m.end() if m else 0
    return html[:at] + snippet + html[at:]


def noisy(html, i):
    # A different ad and timestamp on every page, as a copy with its own chrome serves them.
    ad = (
        f'<div class="ad-slot"><p>Sponsored: offer {i * 7919 % 100000} - save {i % 50 + 5}% today '
        f"at shop number {i * 104729 % 9973}.</p></div>"
    ).encode()
    stamp = f"<p>Served at 2026-11-{(i % 28) + 1:02d} {(i * 37) % 24:02d}:{(i * 11) % 60:02d} UTC, request {i * 65537 % 1000003}.</p>".encode()
    html = insert_after_body(html, ad)
    m = None
    for m in END_BODY.finditer(html):
        pass
    at = m.start() if m else len(html)
    return html[:at] + stamp + html[at:]


STUB_WORDS = 25


def stub_page(ids, i, text, plain=False):
    """A heavy template around a short main text: a 120-link menu, a sidebar of 30 other pages,
    a footer of about 80 words, the same on every stub; the main text is the first STUB_WORDS
    words of page i's hand-made main text (its own facts, a reference stub's size)."""
    menu = "".join(f'<li><a href="{j}.html">{j.replace("-", " ")}</a></li>' for j in ids[:120])
    side = "".join(f'<li><a href="{j}.html">Read also: {j.replace("-", " ")}</a></li>' for j in ids[-30:])
    footer = (
        "Copyright the publishers of these pages. All rights reserved. This site uses cookies to "
        "measure its audience and to show you relevant offers; by continuing to browse you accept "
        "their use. Terms of use, privacy policy, contact us, advertise with us, careers, press "
        "room, accessibility statement, sitemap, help centre, newsletters, subscriptions, RSS "
        "feeds, mobile apps, about us, corrections, ethics policy and editorial standards."
    )
    if plain:
        # The same without a tag that names its part: tables and divs, as older generators wrote.
        return (
            f"<html><head><title>Reference: {i}</title></head><body><table><tr><td>"
            f'<div class="top"><ul>{menu}</ul></div></td></tr><tr><td><div class="c">'
            f"<b>Reference: {i}</b><br>{text}</div></td><td><div>More pages<ul>{side}</ul></div>"
            f"</td></tr></table><div>{footer}</div></body></html>"
        )
    return (
        f"<!doctype html><html><head><title>Reference: {i}</title></head><body>"
        f'<header><nav><ul class="menu">{menu}</ul></nav></header>'
        f"<main><article><h1>Reference: {i}</h1><p>{text}</p></article></main>"
        f'<aside><h2>More pages</h2><ul>{side}</ul></aside>'
        f"<footer><p>{footer}</p></footer></body></html>"
    )


class Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(directory):
    handler = functools.partial(Quiet, directory=directory)
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(here, "..", "target", "release", "simcrawl"))
    ap.add_argument("--eval", default=os.path.join(here, "..", "..", "shared", "extract-eval"))
    ap.add_argument("--keep", help="work in this directory and keep it (default: a temporary one)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--k", type=int, help="--k for the crawl (default: the crawl's)")
    ap.add_argument("--stub-words", type=int, default=STUB_WORDS, help="words of main text per stub")
    ap.add_argument("--plain-stubs", action="store_true", help="stubs in tables and divs, no <main>, <nav> or <article>")
    ap.add_argument(
        "--explain",
        action="store_true",
        help="run `simcrawl explain --store` on every skip after a comparison and count those it gives the crawl's verdict",
    )
    args = ap.parse_args()

    gold = {}
    with open(os.path.join(args.eval, "gold.jsonl"), encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            gold[d["id"]] = d["text"]
    ids = sorted(os.path.basename(p)[:-5] for p in glob.glob(os.path.join(args.eval, "pages", "*.html")))
    ids = [i for i in ids if i in gold]
    if not ids:
        sys.exit(f"no pages with gold text under {args.eval}")
    sh = {i: shingles(gold[i]) for i in ids}
    # The stubs: the first STUB_WORDS words of each main text, on one heavy template.
    stub_text = {i: first_words(gold[i], args.stub_words) for i in ids}
    for i in ids:
        sh["stub:" + i] = shingles(stub_text[i])

    work = args.keep or tempfile.mkdtemp(prefix="simcrawl-evalweb-")
    if args.keep:
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
    roots = {}
    for role in ("stubs", "stubs-mirror"):
        root = os.path.join(work, role)
        os.makedirs(root)
        roots[role] = root
        for i in ids:
            with open(os.path.join(root, f"{i}.html"), "w", encoding="utf-8") as f:
                f.write(stub_page(ids, i, stub_text[i], args.plain_stubs))
        links = "".join(f'<li><a href="{i}.html">{i}</a></li>' for i in ids)
        with open(os.path.join(root, "index.html"), "w", encoding="utf-8") as f:
            f.write(f"<!doctype html><html><head><title>{role}</title></head><body><ul>{links}</ul></body></html>")
    for role in ("origin", "notice", "noisy"):
        root = os.path.join(work, role)
        os.makedirs(root)
        roots[role] = root
        for n, i in enumerate(ids):
            with open(os.path.join(args.eval, "pages", f"{i}.html"), "rb") as f:
                html = f.read()
            if role == "notice":
                html = insert_after_body(html, f"<p>{NOTICE}</p>".encode())
            elif role == "noisy":
                html = noisy(html, n)
            with open(os.path.join(root, f"{i}.html"), "wb") as f:
                f.write(html)
        links = "".join(f'<li><a href="{i}.html">{i}</a></li>' for i in ids)
        with open(os.path.join(root, "index.html"), "w", encoding="utf-8") as f:
            f.write(f"<!doctype html><html><head><title>{role}</title></head><body><ul>{links}</ul></body></html>")

    servers = {role: serve(root) for role, root in roots.items()}
    bases = {role: base for role, (_, base) in servers.items()}
    store = os.path.join(work, "store")
    cmd = [args.bin, "crawl", "--store", store, "--delay", "0", "--concurrency", "8", "--max-depth", "1"]
    if args.k is not None:
        cmd += ["--k", str(args.k)]
    cmd += [f"{bases[r]}/index.html" for r in ("origin", "notice", "noisy", "stubs", "stubs-mirror")]
    crawl = subprocess.run(cmd, capture_output=True, text=True)
    if crawl.returncode != 0:
        sys.exit(f"the crawl failed ({crawl.returncode}):\n{crawl.stderr[-2000:]}")
    skipped = subprocess.run(
        [args.bin, "skipped", "--store", store, "--format", "jsonl"], capture_output=True, text=True, check=True
    ).stdout
    exported = subprocess.run([args.bin, "export", "--store", store], capture_output=True, text=True, check=True).stdout
    stats = json.loads(
        subprocess.run([args.bin, "stats", "--json", "--store", store], capture_output=True, text=True, check=True).stdout
    )
    explained = None
    if args.explain:
        # While the web still serves: `explain --store` on every skip after a comparison (text,
        # near, canonical, and a rule's skip after its fetch) gives the crawl's own verdict.
        same, checked, disagree = 0, 0, []
        for line in skipped.splitlines():
            s = json.loads(line)
            compared = s["reason"] in ("text-duplicate", "near-duplicate", "canonical") or (
                s["reason"] in ("mirror", "learned-rule") and s.get("distance") is not None
            )
            if not compared or not s.get("original"):
                continue
            k_flag = ["--k", str(args.k)] if args.k is not None else []
            run = subprocess.run(
                [args.bin, "explain", "--json", "--store", store, *k_flag, s["original"], s["url"]],
                capture_output=True,
                text=True,
            )
            checked += 1
            try:
                verdict = json.loads(run.stdout).get("verdict")
            except json.JSONDecodeError:
                verdict = None
            if verdict == s["reason"]:
                same += 1
            else:
                disagree.append({"url": s["url"], "original": s["original"], "crawl": s["reason"],
                                 "explain": verdict, "stderr": run.stderr[-300:]})
        explained = {"same": same, "checked": checked, "disagree": disagree}
    for server, _ in servers.values():
        server.shutdown()

    def file_of(url):
        m = re.match(r"http://127\.0\.0\.1:(\d+)/([^?#]*)", url or "")
        if not m:
            return None, None
        port_base = f"http://127.0.0.1:{m.group(1)}"
        role = next((r for r, b in bases.items() if b == port_base), None)
        name = m.group(2)
        doc = name[:-5] if name.endswith(".html") and name[:-5] in gold else None
        if doc is not None and role in ("stubs", "stubs-mirror"):
            doc = "stub:" + doc
        return role, doc

    # Two files whose hand-made texts are the same are one document.
    parent = {i: i for i in sh}

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    keys = sorted(sh)
    for n, a in enumerate(keys):
        for b in keys[n + 1 :]:
            if jaccard(sh[a], sh[b]) >= 0.8:
                parent[find(b)] = find(a)

    wrong, changed, right = [], [], 0
    skips_by_role = {}
    for line in skipped.splitlines():
        s = json.loads(line)
        role, doc = file_of(s["url"])
        _, orig = file_of(s.get("original"))
        skips_by_role[role] = skips_by_role.get(role, 0) + 1
        if doc is None or orig is None:
            continue
        if find(doc) == find(orig):
            right += 1
            continue
        j = jaccard(sh[doc], sh[orig])
        row = {"url": s["url"], "original": s["original"], "reason": s["reason"], "gold_jaccard": round(j, 3),
               "evidence": (s.get("evidence") or {}).get("text")}
        if j < 0.5:
            wrong.append(row)
        elif j < 0.8:
            changed.append(row)
        else:
            right += 1
    indexed = {}
    for line in exported.splitlines():
        p = json.loads(line)
        role, doc = file_of(p.get("url"))
        if doc is not None:
            indexed[find(doc)] = indexed.get(find(doc), 0) + 1
    docs = sorted({find(i) for i in sh})
    once = sum(1 for d in docs if indexed.get(d, 0) == 1)
    twice = sum(1 for d in docs if indexed.get(d, 0) > 1)
    never = [d for d in docs if indexed.get(d, 0) == 0]
    noindex_re = re.compile(rb"<meta[^>]+noindex", re.IGNORECASE)

    def says_noindex(doc):
        if doc.startswith("stub:"):
            return False
        with open(os.path.join(args.eval, "pages", f"{doc}.html"), "rb") as f:
            return bool(noindex_re.search(f.read()))

    noindex = [d for d in never if says_noindex(d)]
    lost = [d for d in never if d not in noindex]
    fetched = stats.get("fetched", 0)
    out = {
        "pages": len(ids),
        "documents": len(docs),
        "fetched": fetched,
        "fetches_per_document": round(fetched / max(1, len(docs)), 3),
        "indexed_once": once,
        "indexed_more_than_once": twice,
        "extra_copies_indexed": sum(max(0, indexed.get(d, 0) - 1) for d in docs),
        "never_indexed_noindex": len(noindex),
        "never_indexed_lost": len(lost),
        "skips_right": right,
        "skips_distinct": len(wrong),
        "skips_changed": len(changed),
        "skips_by_host": {r or "other": n for r, n in sorted(skips_by_role.items(), key=lambda x: str(x[0]))},
        "rules_learned": stats.get("rules_learned"),
        "skipped": stats.get("skipped"),
    }
    if explained is not None:
        out["explain_gives_the_crawls_verdict"] = f"{explained['same']} of {explained['checked']}"
    if args.json:
        if explained is not None:
            out["explain_disagrees"] = explained["disagree"]
        out["distinct"] = wrong
        out["changed"] = changed
        out["lost"] = lost
        out["more_than_once"] = [d for d in docs if indexed.get(d, 0) > 1]
        print(json.dumps(out))
        return
    for k, v in out.items():
        print(f"{k:>24}  {v}")
    for title, rows in (("DISTINCT (wrong) skips", wrong), ("CHANGED skips", changed)):
        if rows:
            print(f"\n{title}:")
            for r in rows:
                print(f"  {r['reason']:<15} J(gold)={r['gold_jaccard']:<5} {r['url']}\n      of {r['original']}\n      {r['evidence']}")
    if explained and explained["disagree"]:
        print("\nexplain disagrees with the crawl:")
        for r in explained["disagree"]:
            print(f"  {r['crawl']:<15} explain: {r['explain']}  {r['url']}\n      of {r['original']}")
    if lost:
        print("\nlost (never indexed, no noindex):", " ".join(lost[:40]))
    if args.keep:
        print(f"\nstore: {store}")


if __name__ == "__main__":
    main()
