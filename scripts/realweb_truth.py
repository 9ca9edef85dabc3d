#!/usr/bin/env python3
"""Score a simcrawl crawl of the "real-page test web" against ground truth computed from files.

The test web serves real HTML manuals (unpacked Debian doc packages) on several loopback hosts
with roles (origin, exact and prefix mirrors, noisy, tracking, session, alias, versions, an
unrelated manual); the server describes them in web.json. This script reads the manual files
directly and computes, with its own simple definitions and none of simcrawl's code or settings:

* document identity: a URL maps to (manual, relpath) of an existing HTML file, or to nothing;
* visible text (html.parser, head/script/style dropped, block elements break lines) with
  "template" lines removed (a normalised line in > 20% and >= 3 of a manual's reachable pages);
* resemblance: Jaccard of 3-word shingle sets of that template-free text (word sets if short);
* reachable documents: breadth-first over href links from every manual's start page (a sampled
  manual's files are the ones web.json lists; a link to any other file is a broken link);
* distinct documents: reachable documents united when resemblance >= 0.9 (candidates: equal
  text, the same relpath in several manuals, and a one-permutation MinHash/LSH pass). Found and
  lost count these groups. Fetches per distinct document counts a manual's groups apart from
  every other manual's: two versions' files are two documents (a crawler must fetch both to know
  they are alike), while two copies of one file behind two hosts are one.

It then scores requests.jsonl (what the server answered), skips.jsonl (the crawler's skip log)
and pages.jsonl (what the crawler indexed), and optionally the crawler's rules (`simcrawl
mirrors`): fetches per distinct document, distinct documents found, each skip classified by the
true resemblance of the skipped page and its "original", and fetches per host, per site (a manual
and the hosts that serve it) and in total. Exit status 0 (it is a report); 2 on bad input.

Why it is independent of simcrawl: it reads the files, not what the server sent or the crawler
stored; it never talks to the server or the crawler; its text extraction, template rule and
resemblance (exact shingle Jaccard, not simhash distances) are its own. So a crawler bug cannot
make its own score look good. Nothing is cached; a run parses ~1,700 files in a few seconds.
"""
import argparse, hashlib, json, os, posixpath, re, sys, time
from collections import Counter, defaultdict, deque
from html.parser import HTMLParser
from urllib.parse import unquote, urlsplit

SKIP_TAGS = {"script", "style", "noscript", "template", "head"}  # their contents are not visible
BLOCK_TAGS = ("p div li tr td th h1 h2 h3 h4 h5 h6 pre br dt dd dl section article table ul ol "
              "blockquote nav header footer main aside form fieldset figure figcaption caption "
              "hr html tbody thead tfoot title address details summary").split()
WORD = re.compile(r"\w+")
CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([\w:.-]+)""", re.I)
# html.parser is slow and syntax-highlighted code has ~1M tags, so before parsing, regexes drop
# comments, turn block tags into line breaks and cut out inline tags (span, em, code, img...); the
# parser then sees only the tags that matter (SKIP_TAGS, a, area, body). This was checked to give
# the same text and links as handling every tag in the parser, on all 1,639 files.
COMMENT = re.compile(r"<!--.*?-->", re.S)
TAG = re.compile(r"</?([a-zA-Z][\w-]*)(?:[\s/][^<>]*)?>")
BLOCK_SET, KEEP_SET = set(BLOCK_TAGS), SKIP_TAGS | {"a", "area", "body"}


META = re.compile(r"<meta\b[^>]*>", re.I)
ROBOTS_NAME = re.compile(r"""\bname\s*=\s*["']?robots\b""", re.I)


def simplify(html):
    """The page with comments dropped, block tags as line breaks and inline tags cut out."""
    def tag(m):
        name = m.group(1).lower()
        return m.group(0) if name in KEEP_SET else "\n" if name in BLOCK_SET else ""
    return TAG.sub(tag, COMMENT.sub("", html))


CLASSES = [(0.9, "near-duplicate"), (0.8, "similar"), (0.5, "changed"), (0.0, "distinct")]


def fail(msg):
    print(f"realweb_truth: {msg}", file=sys.stderr)
    sys.exit(2)


class Visible(HTMLParser):
    """Collects visible text and <a>/<area> hrefs of one page (block tags already "\\n")."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts, self.hrefs, self.skip = [], [], Counter()

    def handle_starttag(self, tag, attrs):
        if tag in ("a", "area"):
            self.hrefs.extend(v for k, v in attrs if k == "href" and v)
        elif tag == "body":
            self.skip["head"] = 0  # an unclosed <head> ends at <body>
            self.parts.append("\n")
        elif tag in SKIP_TAGS:
            self.skip[tag] += 1

    def handle_startendtag(self, tag, attrs):
        if tag in ("a", "area"):
            self.hrefs.extend(v for k, v in attrs if k == "href" and v)

    def handle_endtag(self, tag):
        if tag in SKIP_TAGS and self.skip[tag] > 0:
            self.skip[tag] -= 1

    def handle_data(self, data):
        if not any(self.skip.values()):
            self.parts.append(data)


def norm_line(line):
    return " ".join(line.lower().split())


class Page:
    """One HTML file: normalised visible lines, links, and (after templates) words/shingles."""
    __slots__ = ("lines", "links", "raw", "words", "shingles", "key", "noindex")


class Manual:
    def __init__(self, name, root, start, only=None):
        self.name, self.root, self.start = name, root, start
        if not os.path.isdir(root):
            fail(f"web.json: manual {name!r}: root {root!r} is not a directory")
        self.files = set()  # relpaths of every .html/.htm file under root (a sample's only)
        for d, _, names in os.walk(root):
            for n in names:
                if n.lower().endswith((".html", ".htm")):
                    self.files.add(os.path.relpath(os.path.join(d, n), root).replace(os.sep, "/"))
        if only is not None:
            self.files &= set(only)
        self.pages, self.template = {}, None  # template lines: set by compute_truth

    def resolve(self, relpath, href):
        """The relpath an href in file `relpath` points to, if it is a file of this manual."""
        try:
            parts = urlsplit(href)
        except ValueError:  # an href no URL parser takes (`http://[user@host]`): no file
            return None
        if parts.scheme or parts.netloc or not parts.path:
            return None
        path = unquote(parts.path)
        if path.startswith("/"):
            target = path[1:]
        else:
            target = posixpath.join(posixpath.dirname(relpath), path)
        return self.lookup(target)

    def lookup(self, target):
        index = target == "" or target.endswith("/")
        target = posixpath.normpath(target + ("index.html" if index else ""))
        return target if target in self.files else None

    def page(self, relpath):
        """Parses one file on first use (template removal applies once self.template is set)."""
        p = self.pages.get(relpath)
        if p is None:
            with open(os.path.join(self.root, relpath), "rb") as f:
                data = f.read()
            m = CHARSET.search(data[:4096])
            try:
                text = data.decode(m.group(1).decode() if m else "utf-8", errors="replace")
            except LookupError:
                text = data.decode("utf-8", errors="replace")
            v = Visible()
            v.feed(simplify(text))
            v.close()
            p = self.pages[relpath] = Page()
            p.lines = [l for l in map(norm_line, "".join(v.parts).split("\n")) if l]
            p.raw = "\n".join(p.lines)
            p.links = [t for t in (self.resolve(relpath, h) for h in v.hrefs) if t]
            # <meta name=robots content="noindex,follow">: a page no crawler may index.
            p.noindex = any(ROBOTS_NAME.search(t) and "noindex" in t.lower()
                            for t in META.findall(text))
            p.words = None
        if p.words is None and self.template is not None:
            p.words = WORD.findall(" ".join(l for l in p.lines if l not in self.template))
            p.shingles = (set(zip(p.words, p.words[1:], p.words[2:])) if len(p.words) >= 3
                          else set(p.words))
            p.key = hashlib.sha1(("T" + " ".join(p.words) if p.words else "R" + p.raw)
                                 .encode()).hexdigest()
        return p


def resemblance(a, b):
    """Reference resemblance of two different pages (see module docstring)."""
    if not a.words and not b.words:
        return 1.0 if a.raw == b.raw else 0.0
    sa, sb = (a.shingles, b.shingles) if len(a.words) >= 3 and len(b.words) >= 3 \
        else (set(a.words), set(b.words))
    return len(sa & sb) / len(sa | sb) if sa or sb else 0.0


def classify(j):
    return next(name for lo, name in CLASSES if j >= lo)


def read_jsonl(path, required):
    rows = []
    try:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as e:
                    fail(f"{path}:{n}: invalid JSON: {e}")
                if not isinstance(row, dict) or any(k not in row for k in required):
                    fail(f"{path}:{n}: expected an object with keys {', '.join(required)}")
                rows.append(row)
    except OSError as e:
        fail(f"{path}: {e}")
    return rows


class Web:
    def __init__(self, path):
        try:
            with open(path, encoding="utf-8") as f:
                web = json.load(f)
            self.manuals = {n: Manual(n, m["root"], m["start"], m.get("files"))
                            for n, m in web["manuals"].items()}
            self.hosts = web["hosts"]
            self.by_origin = {}
            for h in self.hosts:
                b = urlsplit(h["base"])
                self.by_origin[(b.scheme.lower(), b.netloc.lower())] = h
                if h.get("manual") is not None and h["manual"] not in self.manuals:
                    fail(f"{path}: host {h['name']!r} names unknown manual {h['manual']!r}")
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
            fail(f"{path}: bad web description: {e!r}")
        self.by_name = {h["name"]: h for h in self.hosts}

    def doc(self, url):
        """(manual, relpath) shown at url, or None."""
        if not isinstance(url, str):
            return None
        u = urlsplit(url)
        return self.doc_on(self.by_origin.get((u.scheme.lower(), u.netloc.lower())), u.path)

    def doc_on(self, host, path):
        if not host or not host.get("manual"):
            return None
        path, prefix = unquote(path), host.get("prefix") or ""
        if not path.startswith(prefix + "/"):
            return None
        rel = self.manuals[host["manual"]].lookup(path[len(prefix) + 1:])
        return (host["manual"], rel) if rel else None

    def page(self, doc):
        return self.manuals[doc[0]].page(doc[1])


def compute_truth(web):
    """Reachable documents, template lines, and distinct-document groups (union-find)."""
    reach, parents = {}, defaultdict(list)
    for m in web.manuals.values():
        start = m.lookup(m.start)
        if start is None:
            fail(f"web.json: manual {m.name!r}: start page {m.start!r} does not exist")
        seen, queue = {start}, deque([start])
        while queue:
            rel = queue.popleft()
            for t in m.page(rel).links:
                if t != rel and len(parents[(m.name, t)]) < 2 and rel not in parents[(m.name, t)]:
                    parents[(m.name, t)].append(rel)
                if t not in seen:
                    seen.add(t)
                    queue.append(t)
        reach[m.name] = sorted(seen)
        df = Counter(l for r in seen for l in set(m.page(r).lines))
        m.template = {l for l, c in df.items() if c >= 3 and c > 0.2 * len(seen)}
    docs = [(n, r) for n, rels in reach.items() for r in rels]
    parent = {d: d for d in docs}
    mparent = {d: d for d in docs}  # the same, only within a manual

    def find(d, parent=parent):
        while parent[d] != d:
            parent[d] = d = parent[parent[d]]
        return d

    def union(a, b):
        cross, within = find(a) != find(b), a[0] == b[0] and find(a, mparent) != find(b, mparent)
        if (cross or within) and (web.page(a).key == web.page(b).key
                                  or resemblance(web.page(a), web.page(b)) >= 0.9):
            parent[find(a)] = find(b)
            if within:
                mparent[find(a, mparent)] = find(b, mparent)

    # Candidates: equal text; same relpath in several manuals; LSH bands of a one-permutation
    # MinHash (64 bins of hash(shingle) mod 64, 16 bands of 4), confirmed by the exact Jaccard.
    buckets = defaultdict(list)
    for d in docs:
        p = web.page(d)
        buckets[("key", p.key)].append(d)
        buckets[("rel", d[1])].append(d)
        if len(p.words) >= 3:
            bins = [None] * 64
            for s in p.shingles:
                h = hash(s) & 0xFFFFFFFFFFFFFFFF  # consistent within one run
                if bins[h & 63] is None or h < bins[h & 63]:
                    bins[h & 63] = h
            for b in range(16):
                band = tuple(bins[4 * b:4 * b + 4])
                if any(x is not None for x in band):
                    buckets[("lsh", b, band)].append(d)
    for members in buckets.values():
        for i in range(1, len(members)):
            for j in range(i):
                union(members[i], members[j])
    group = {d: find(d) for d in docs}
    mgroup = {d: find(d, mparent) for d in docs}
    return reach, parents, group, mgroup


COPY_ROLES = ("exact-mirror", "prefix-mirror", "noisy", "tracking", "session", "alias", "notice")
AUTHORITY = re.compile(r"127\.0\.0\.1:\d+")


def read_rules(path, web):
    """`simcrawl mirrors` rows: (manual of the rule's first host or None, active)."""
    rules = []
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        fail(f"{path}: {e}")
    for line in lines[1:]:
        # A rule's example line is indented; a rule's own row may start with a space too (its
        # ID, right-aligned).
        if line.lstrip().startswith("e.g.") or not line.strip() or "active," in line or line == "no rules learned":
            continue
        words = line.split()
        state = "active" if "active" in words else "revoked" if "revoked" in words else None
        if state is None:
            continue
        hosts = [web.by_origin.get(("http", a)) for a in AUTHORITY.findall(line)]
        manual = next((h.get("manual") for h in hosts if h), None)
        rules.append((manual, state == "active"))
    return rules


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--web", required=True)
    ap.add_argument("--requests", required=True)
    ap.add_argument("--skips", required=True)
    ap.add_argument("--pages", required=True)
    ap.add_argument("--rules", help="the crawler's rules as `simcrawl mirrors` prints them")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    ap.add_argument("--detail", type=int, default=0, metavar="N", help="examples per list")
    args = ap.parse_args()
    t0 = time.time()
    web = Web(args.web)
    requests = read_jsonl(args.requests, ["host", "target"])
    skips = read_jsonl(args.skips, ["url", "reason"])
    pages = read_jsonl(args.pages, ["url"])
    reach, parents, group, mgroup = compute_truth(web)
    # A document every file of which says `noindex` is one no crawler may index: not expected.
    noindex_groups = {g for g in group.values()} - {
        g for d, g in group.items() if not web.page(d).noindex}
    groups = set(group.values()) - noindex_groups
    documents = len(set(mgroup.values()))
    rules = read_rules(args.rules, web) if args.rules else None
    manual_of_host = {h["name"]: h.get("manual") for h in web.hosts}

    # 1. fetches per distinct document.
    path_of = lambda r: urlsplit(str(r["target"])).path
    # A link that names no file (a 404) costs one fetch that no crawler can avoid: it is not
    # counted, but fetching the same broken URL twice is.
    counted = [r for r in requests if path_of(r) not in ("/robots.txt", "/sitemap.xml")]
    broken = [(r["host"], r["target"]) for r in counted if int(r.get("status", 200)) >= 400]
    broken_repeats = len(broken) - len(set(broken))
    fetches = len(counted) - len(set(broken))
    fpd = fetches / documents if documents else 0.0
    site_fetches = Counter(manual_of_host.get(r["host"]) for r in counted)
    # Files that are not pages (CMake's Sphinx sources, `_sources/*.rst.txt`, images) answered
    # 200: real fetches, but of no document; shown apart so that a manual's cost in pages shows.
    is_page = lambda r: path_of(r).lower().endswith((".html", ".htm", "/"))
    non_html = Counter(manual_of_host.get(r["host"]) for r in counted
                       if int(r.get("status", 200)) < 400 and not is_page(r))
    for host, _ in set(broken):
        site_fetches[manual_of_host.get(host)] -= 1
    # A document is a file of a package: a file that is not a page (a Sphinx source, an image)
    # and answered 200 is one too, once per manual whichever host served it (its path less the
    # host's prefix).
    prefix_of = {h["name"]: (h.get("prefix") or "").rstrip("/") for h in web.hosts}
    non_html_files = defaultdict(set)
    for r in counted:
        n = manual_of_host.get(r["host"])
        if n is None or int(r.get("status", 200)) >= 400 or is_page(r):
            continue
        path, pre = path_of(r), prefix_of.get(r["host"], "")
        non_html_files[n].add(path[len(pre):] if pre and path.startswith(pre + "/") else path)
    file_documents = {n: len(v) for n, v in non_html_files.items()}

    # 2. distinct documents found.
    found = {group[d] for d in map(web.doc, (p["url"] for p in pages)) if d in group}
    per_manual = {}
    for n, rels in reach.items():
        gs = {group[(n, r)] for r in rels} - noindex_groups
        missing = sorted(r for r in rels if group[(n, r)] not in found | noindex_groups)
        per_manual[n] = {"reachable": len(rels), "distinct": len(gs), "found": len(gs & found),
                         "missing": [{"relpath": r, "linked_from": parents[(n, r)]}
                                     for r in missing[:args.detail]]}

    # 3. skips scored by the true resemblance of the skipped page and its original.
    # A skip is "lost" when the skipped URL shows a reachable document whose group is not indexed.
    by_class, by_reason, examples = Counter(), defaultdict(Counter), defaultdict(list)
    # The finer bands, per site (the manual of the skipped URL's host).
    site_skips = defaultdict(Counter)
    lost, lost_by_reason = Counter(), Counter()
    # Documents not indexed themselves but skipped against an indexed page at a reference
    # resemblance of 0.8 or more: a near-duplicate of theirs stands in the index (the skips the
    # issue's bands accept).
    near_found = set()
    indexed_urls = {p["url"] for p in pages}
    for s in skips:
        d, o = web.doc(s["url"]), web.doc(s.get("original"))
        if s["url"] in indexed_urls:
            # Skipped under a rule that was revoked later: fetched again and indexed.
            cls, j = "undone", None
        elif d is None:
            cls, j = "not-a-document", None
        elif o is None:
            cls, j = "unverifiable", None
        elif d == o:
            cls, j = "same", 1.0
        else:
            pd, po = web.page(d), web.page(o)
            j = 1.0 if pd.key == po.key else resemblance(pd, po)
            cls = classify(j)
        is_lost = d in group and group[d] not in found
        if is_lost and j is not None and j >= 0.8 and o in group and group[o] in found:
            near_found.add(group[d])
        site = d[0] if d else manual_of_host.get(
            (web.by_origin.get((urlsplit(s["url"]).scheme.lower(),
                                urlsplit(s["url"]).netloc.lower())) or {}).get("name"))
        band = None if j is None else ("distinct" if j < 0.5 else "changed" if j < 0.7
                                       else "band" if j < 0.8 else None)
        # The bands' denominator: skips of a URL that shows a document (not a broken link's,
        # nor one fetched again later).
        site_skips[site]["skips"] += cls not in ("not-a-document", "undone")
        site_skips[site]["all"] += 1
        if band:
            site_skips[site][band] += 1
        by_class[cls] += 1
        by_reason[s["reason"]][cls] += 1
        lost[cls] += is_lost
        lost_by_reason[s["reason"]] += is_lost
        if cls in ("changed", "distinct") and len(examples[cls]) < args.detail:
            examples[cls].append({
                "url": s["url"], "original": s.get("original"), "reason": s["reason"],
                "jaccard": round(j, 3), "distance": s.get("distance"),
                "crawler_jaccard": s.get("jaccard"), "rule": s.get("rule"),
                "words": [len(web.page(d).words), len(web.page(o).words)]})
        if band == "band" and len(examples["band 0.7-0.8"]) < args.detail:
            examples["band 0.7-0.8"].append({
                "url": s["url"], "original": s.get("original"), "reason": s["reason"],
                "jaccard": round(j, 3), "distance": s.get("distance"),
                "crawler_jaccard": s.get("jaccard"), "rule": s.get("rule"),
                "words": [len(web.page(d).words), len(web.page(o).words)]})

    # 4. fetches per host.
    per_host = Counter(r["host"] for r in requests if path_of(r) != "/robots.txt")
    broken_on = Counter(r["host"] for r in counted if int(r.get("status", 200)) >= 400)
    hosts = [{"name": h["name"], "role": h.get("role"), "fetches": per_host.get(h["name"], 0),
              "broken": broken_on.get(h["name"], 0),
              "manual": h.get("manual"),
              "documents": len(reach[h["manual"]]) if h.get("manual") else None}
             for h in web.hosts]
    for name in sorted(set(per_host) - set(web.by_name)):
        hosts.append({"name": name, "role": "unknown", "fetches": per_host[name],
                      "broken": broken_on.get(name, 0),
                      "manual": None, "documents": None})
    role_fetches = lambda role: sum(h["fetches"] for h in hosts if h["role"] == role)
    copy_hosts = [h for h in hosts if h["role"] in COPY_ROLES]
    # Which of two byte-identical hosts is the original is the crawl's first fetch, not the web's
    # roles: of a manual's origin and copy hosts, the one that took the most fetches is the one
    # crawled as the original, and every other is a copy (the origin too, when a mirror came first).
    crawled_as_copy = []
    for n in web.manuals:
        serving = [h for h in hosts if h["manual"] == n and (h["role"] in COPY_ROLES
                                                            or h["role"] == "origin")]
        if any(h["role"] in COPY_ROLES for h in serving):
            serving.sort(key=lambda h: -h["fetches"])
            crawled_as_copy.extend(serving[1:])
    worst_copy = max(crawled_as_copy, key=lambda h: h["fetches"], default=None)

    # 5. per site: a manual and the hosts that serve it (the table, one row each).
    sites = {}
    for n in web.manuals:
        pages_n = len({mgroup[(n, r)] for r in reach[n]})
        docs = pages_n + file_documents.get(n, 0)
        near_n = len({group[(n, r)] for r in reach[n]} & near_found)
        mine = [h for h in hosts if h["manual"] == n]
        by_role = lambda role: [h["fetches"] for h in mine if h["role"] == role]
        sk = site_skips.get(n, Counter())
        site_rules = [a for m, a in rules if m == n] if rules is not None else None
        sites[n] = {
            "hosts": [h["name"] for h in mine], "documents": docs, "fetches": site_fetches[n],
            "fetches_per_distinct_document": round(site_fetches[n] / docs, 4) if docs else None,
            "non_html_fetches": non_html[n],
            "file_documents": file_documents.get(n, 0),
            "page_fetches_per_distinct_document":
                round((site_fetches[n] - non_html[n]) / pages_n, 4) if pages_n else None,
            "distinct": per_manual[n]["distinct"], "found": per_manual[n]["found"],
            "found_percent": round(100.0 * per_manual[n]["found"]
                                   / max(per_manual[n]["distinct"], 1), 2),
            "found_or_near_percent": round(100.0 * (per_manual[n]["found"] + near_n)
                                           / max(per_manual[n]["distinct"], 1), 2),
            "tracking_fetches": sum(by_role("tracking")) if by_role("tracking") else None,
            "session_fetches": sum(by_role("session")) if by_role("session") else None,
            "copy_hosts": {h["name"]: h["fetches"] for h in mine if h["role"] in COPY_ROLES},
            "copy_hosts_broken": {h["name"]: h["broken"] for h in mine if h["role"] in COPY_ROLES},
            "skips": sk["skips"], "skips_all": sk["all"], "skips_distinct": sk["distinct"],
            "skips_changed": sk["changed"], "skips_band": sk["band"],
            "rules": len(site_rules) if site_rules is not None else None,
            "rules_revoked": sum(not a for a in site_rules) if site_rules is not None else None}
    total_skips = sum(c["skips"] for c in site_skips.values())
    fine = {k: sum(c[k] for c in site_skips.values()) for k in ("distinct", "changed", "band")}
    band_pct = 100.0 * fine["band"] / total_skips if total_skips else 0.0
    tracking, session = role_fetches("tracking"), role_fetches("session")
    worst_ts = max((h["fetches"] for h in hosts if h["role"] in ("tracking", "session")),
                   default=0)

    total = len(groups)
    pct = 100.0 * len(found) / total if total else 0.0
    near_pct = 100.0 * (len(found) + len(near_found - found)) / total if total else 0.0
    page_fpd = (fetches - sum(non_html.values())) / documents if documents else 0.0
    files = sum(file_documents.values())
    fpd = fetches / (documents + files) if documents + files else 0.0
    worst_fpd = max((x["fetches_per_distinct_document"] or 0 for x in sites.values()), default=0)
    worst_found = min((x["found_or_near_percent"] for x in sites.values()), default=100.0)
    goals = [("fetches per distinct document (files that are not pages too)", f"{fpd:.2f}",
              "<= 1.05", fpd <= 1.05),
             ("the same, of pages only", f"{page_fpd:.2f}", "<= 1.05", page_fpd <= 1.05),
             ("the same, the worst site", f"{worst_fpd:.2f}", "<= 1.05", worst_fpd <= 1.05),
             ("distinct documents found", f"{pct:.1f}%", ">= 99%", pct >= 99.0),
             ("found, or a near-duplicate (J >= 0.8) indexed for it", f"{near_pct:.1f}%",
              ">= 99%", near_pct >= 99.0),
             ("the same, the worst site", f"{worst_found:.1f}%", ">= 99%", worst_found >= 99.0),
             ("utm / session-id copy fetches", f"{tracking} / {session}", "<= 60 a host",
              worst_ts <= 60),
             ("fetches on the busiest host crawled as a copy" + (f" ({worst_copy['name']})" if worst_copy
                                                     else ""),
              str(worst_copy["fetches"] if worst_copy else 0), "<= 60",
              worst_copy is None or worst_copy["fetches"] <= 60),
             ("fetches on the noisy hosts", str(role_fetches("noisy")), "<= 60 a host",
              all(h["fetches"] <= 60 for h in hosts if h["role"] == "noisy")),
             ("skips of distinct pages (J < 0.5)", str(fine["distinct"]), "0",
              fine["distinct"] == 0),
             ("skips of changed pages (0.5-0.7)", str(fine["changed"]), "0",
              fine["changed"] == 0),
             ("skips in the band 0.7-0.8 (of skips of documents)",
              f"{fine['band']} of {total_skips}", "under 1%",
              band_pct < 1.0)]
    if rules is not None:
        goals.append(("rules (revoked)", f"{len(rules)} ({sum(not active for _, active in rules)})", "-",
                      True))
    report = {"seconds": round(time.time() - t0, 2), "fetches": fetches,
              "requests": len(counted), "broken_link_fetches": len(set(broken)),
              "broken_link_repeats": broken_repeats,
              "distinct_documents": total, "documents": documents, "file_documents": files,
              "noindex_documents": len(noindex_groups),
              "found_or_near": len(found) + len(near_found - found),
              "found_or_near_percent": round(near_pct, 2),
              "fetches_per_distinct_document": round(fpd, 4), "found": len(found),
              "non_html_fetches": sum(non_html.values()),
              "page_fetches_per_distinct_document": round(page_fpd, 4),
              "found_percent": round(pct, 2), "manuals": per_manual,
              "skips": {"by_class": dict(by_class), "lost_by_class": dict(lost),
                        "lost_by_reason": dict(lost_by_reason),
                        "by_reason": {r: dict(c) for r, c in by_reason.items()},
                        "examples": dict(examples)},
              "hosts": hosts, "sites": sites,
              "busiest_crawled_as_copy": None if worst_copy is None else
              [worst_copy["name"], worst_copy["fetches"]],
              "skips_by_band": {"skips": total_skips, **fine},
              "rules": None if rules is None else {"count": len(rules),
                                                   "revoked": sum(not active for _, active in rules)},
              "goals": [{"measure": m, "value": v, "goal": g, "met": ok} for m, v, g, ok in goals]}
    if args.json:
        print(json.dumps(report, indent=1))
        return
    print(f"truth computed in {report['seconds']} s; {len(counted)} requests, of which "
          f"{len(set(broken))} broken links (4xx, not counted; {broken_repeats} repeats, counted); "
          f"{fetches} fetches for {total} distinct documents\n")
    print(f"{'manual':<12}{'reachable':>10}{'distinct':>10}{'found':>8}{'%':>8}")
    for n, m in per_manual.items():
        print(f"{n:<12}{m['reachable']:>10}{m['distinct']:>10}{m['found']:>8}"
              f"{100.0 * m['found'] / max(m['distinct'], 1):>8.1f}")
        for x in m["missing"]:
            print(f"    missing {x['relpath']}  <- {', '.join(x['linked_from']) or '(start)'}")
    classes = ["same", "near-duplicate", "similar", "changed", "distinct", "unverifiable",
               "not-a-document", "undone"]
    print(f"\n{'skip reason':<20}" + "".join(f"{c[:9]:>10}" for c in classes) + f"{'lost':>8}")
    for r, c in sorted(by_reason.items()):
        print(f"{r:<20}" + "".join(f"{c[k]:>10}" for k in classes) + f"{lost_by_reason[r]:>8}")
    print(f"{'(all)':<20}" + "".join(f"{by_class[k]:>10}" for k in classes)
          + f"{sum(lost.values()):>8}")
    for cls, rows in examples.items():
        print(f"\n{cls} skips:")
        for x in rows:
            print(f"  J={x['jaccard']:.3f} dist={x['distance']} words={x['words']} [{x['reason']}]"
                  f"\n    {x['url']}\n    <- {x['original']}")
    print(f"\n{'host':<18}{'role':<15}{'fetches':>8}{'documents':>10}")
    for h in hosts:
        docs = h["documents"] if h["documents"] is not None else "-"
        print(f"{h['name']:<18}{str(h['role']):<15}{h['fetches']:>8}{docs:>10}")
    print_sites(sites, report)
    print(f"\n| {'measure':<48} | {'value':>9} | {'goal':<10} | met |")
    for m, v, g, ok in goals:
        print(f"| {m:<48} | {v:>9} | {g:<10} | {'yes' if ok else 'NO':<3} |")


def print_sites(sites, report):
    """The issue's table per site and in total: one row a site."""
    head = ["site", "docs", "fetch", "non-HTML", "f/doc", "page f/doc", "found%", "found~%",
            "utm/sess", "copy hosts (fetches)", "J<0.5", "0.5-0.7", "0.7-0.8", "skips", "rules"]
    rows = []
    for n, x in sites.items():
        ts = "-" if x["tracking_fetches"] is None and x["session_fetches"] is None else \
            f"{x['tracking_fetches'] if x['tracking_fetches'] is not None else '-'}/" \
            f"{x['session_fetches'] if x['session_fetches'] is not None else '-'}"
        copies = ", ".join(f"{h.split('-')[-1] if '-' in h else h} {f}"
                           + (f" ({x['copy_hosts_broken'][h]} 4xx)"
                              if x["copy_hosts_broken"][h] else "")
                           for h, f in x["copy_hosts"].items()) or "-"
        rules = "-" if x["rules"] is None else (
            f"{x['rules']}" + (f" ({x['rules_revoked']} rev.)" if x["rules_revoked"] else ""))
        fpd = "-" if x["fetches_per_distinct_document"] is None else \
            f"{x['fetches_per_distinct_document']:.2f}"
        pfpd = "-" if x["page_fetches_per_distinct_document"] is None else \
            f"{x['page_fetches_per_distinct_document']:.2f}"
        rows.append([n, str(x["documents"]), str(x["fetches"]), str(x["non_html_fetches"]), fpd,
                     pfpd, f"{x['found_percent']:.1f}", f"{x['found_or_near_percent']:.1f}",
                     ts, copies, str(x["skips_distinct"]), str(x["skips_changed"]),
                     str(x["skips_band"]), str(x["skips"]), rules])
    b, r = report["skips_by_band"], report["rules"]
    tracking = sum(x["tracking_fetches"] or 0 for x in sites.values())
    session = sum(x["session_fetches"] or 0 for x in sites.values())
    busiest = report.get("busiest_crawled_as_copy") or ("-", 0)
    rows.append(["(total)", str(report["documents"] + report["file_documents"]),
                 str(report["fetches"]),
                 str(report["non_html_fetches"]), f"{report['fetches_per_distinct_document']:.2f}",
                 f"{report['page_fetches_per_distinct_document']:.2f}",
                 f"{report['found_percent']:.1f}", f"{report['found_or_near_percent']:.1f}",
                 f"{tracking}/{session}",
                 f"busiest crawled as a copy: {busiest[0]} {busiest[1]}", str(b["distinct"]), str(b["changed"]),
                 str(b["band"]), str(b["skips"]),
                 "-" if r is None else f"{r['count']}" + (f" ({r['revoked']} rev.)"
                                                          if r["revoked"] else "")])
    widths = [max(len(row[i]) for row in rows + [head]) for i in range(len(head))]
    line = lambda row: "| " + " | ".join(
        c.ljust(w) if i in (0, 9) else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))) + " |"
    print("\nper site (a manual and its hosts; fetch: requests less one per distinct broken link, "
          "the hub's in the total; copy hosts: every request, of which 4xx; skips classified by "
          "the reference Jaccard of the two main texts):")
    print(line(head))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in rows:
        print(line(row))


if __name__ == "__main__":
    main()
