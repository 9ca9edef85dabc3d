#!/usr/bin/env python3
"""Crash soak for simcrawl: SIGKILL a crawl of the real-page web again and again, resume it, and
check that the finished index is the one an uninterrupted crawl builds.

    python3 scripts/crash_soak.py                   # 20 kills, seed 1
    python3 scripts/crash_soak.py --kills 50 --seed 7 --json

What it does (from the repository root; it only runs the built binaries, never cargo):

1. Serves the real-page web (tests/realweb) with `simcrawl-bench realweb --serve`, one fresh
   instance per crawl, so that each crawl has its own request log.
2. Reference crawl A: `simcrawl crawl <seed> --store A --delay 0 --scope any --include ...`,
   uninterrupted.
3. Soak crawl B: the same command into a fresh store; after a random delay (uniform 0.1-1.5 s,
   from --seed) SIGKILL it and restart it without seeds (which resumes the store); --kills times;
   then the last run finishes. A run that ends by itself before its kill is counted and restarted;
   a resumed run that finishes at once having fetched nothing means the crawl is complete.
4. Compares B with A: indexed URLs (ports replaced by host names), indexed documents (manual,
   relpath), URLs indexed twice, requests the server saw (robots.txt excluded), the most requests
   of one target, kills that landed, panics, and unclean-resume reports.

A document one crawl did not index but skipped as a copy of a page it indexed (its skip log has
the comparison) is listed apart, not counted as a difference: which of two near-identical pages
(Clang 15's and Clang 16's index) is met first moves with the order of fetches, which the kills
change, and the skip log says so.

Exit status: 1 if B lacks a document of A's that it did not skip as a copy (or has one A neither
indexed nor skipped as a copy), a URL is indexed twice in B, a run
panicked, or the soak could not finish (a run kept failing or timed out); 0 otherwise; 2 on a
setup error.

Request logs. `simcrawl-bench realweb --serve --requests-out FILE` is meant to write the request
log on SIGINT. The script probes that once at start; if the served web writes no log (the flag is
accepted but, in the build this was written against, not acted on), it falls back to the bench's
own crawl mode, which writes run-1/requests.jsonl after its crawl: a copy of simcrawl-bench in the
work directory runs next to a stand-in `simcrawl` that only holds the web open until this script
releases it, and the real crawls are run by this script as above. --requests-via picks one.

Every server listens on 127.0.0.1 and the crawls only follow ^http://127\\.0\\.0\\.1: URLs; proxy
variables are removed from the children's environment so nothing leaves the machine.

Standard library only (Python 3.11).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import posixpath
import random
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from urllib.parse import unquote, urlsplit

REPO = Path(__file__).resolve().parent.parent
INCLUDE = r"^http://127\.0\.0\.1:"
CRAWL_FLAGS = ["--delay", "0", "--scope", "any", "--include", INCLUDE]
LOOPBACK = "127.0.0.1"
UNCLEAN_STDOUT = re.compile(r"^\s*resumed\s+after an unclean stop", re.M)
UNCLEAN_STDERR = "was not closed cleanly"
RESUMED_FROM = re.compile(r"was not closed cleanly.*?pages=(\d+) queued=(\d+)")
LIST_CAP = 25  # longest list in the markdown output (--json has them all)


class SoakError(Exception):
    """A setup or harness failure (exit 2)."""


def log(args, msg):
    if not args.quiet:
        print(f"[crash_soak {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def child_env(extra=None):
    """The environment for every child: no proxy, so loopback requests stay on loopback."""
    env = {k: v for k, v in os.environ.items()
           if k.lower() not in ("http_proxy", "https_proxy", "all_proxy", "no_proxy")}
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    env.pop("RUST_LOG", None)
    if extra:
        env.update(extra)
    return env


def check_loopback(desc):
    """Refuses a web description with any URL off 127.0.0.1."""
    urls = [desc.get("seed", "")] + [h.get("base", "") for h in desc.get("hosts", [])]
    for u in urls:
        p = urlsplit(u)
        if p.scheme != "http" or p.hostname != LOOPBACK:
            raise SoakError(f"the web description has a URL off {LOOPBACK}: {u!r}")


def parse_requests(path):
    """The request log: a list of (host, target, status), one per request."""
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line:
                r = json.loads(line)
                out.append((r["host"], r["target"], r.get("status")))
    return out


def read_json_object(proc, timeout):
    """Reads the child's stdout until what it printed parses as one JSON object."""
    fd = proc.stdout.fileno()
    buf = b""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise SoakError(f"the web printed no description within {timeout:.0f} s")
        ready, _, _ = select.select([fd], [], [], min(left, 0.5))
        if not ready:
            if proc.poll() is not None:
                raise SoakError(f"the web server exited ({proc.returncode}) before describing itself")
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            raise SoakError("the web server closed its stdout before describing itself")
        buf += chunk
        try:
            return json.loads(buf.decode("utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError):
            continue


# ---------------------------------------------------------------------------------------------
# The served web, two ways
# ---------------------------------------------------------------------------------------------

class ServeWeb:
    """`simcrawl-bench realweb --serve --requests-out FILE`; the log is written on SIGINT."""

    via = "serve"

    def __init__(self, ctx, name):
        self.log_path = ctx.work / f"{name}.requests.jsonl"
        self.err = open(ctx.work / f"{name}.server.err", "w")
        self.proc = subprocess.Popen(
            [str(ctx.bench), "realweb", "--serve", "--slice", str(ctx.slice),
             "--requests-out", str(self.log_path)],
            cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self.err,
            env=child_env())
        ctx.procs.append(self.proc)
        try:
            self.desc = read_json_object(self.proc, 60)
            check_loopback(self.desc)
        except BaseException:
            self.abort()
            raise

    def stop(self):
        """Stops the server; returns its request log, or None if it wrote none."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.abort()
        self.err.close()
        return parse_requests(self.log_path) if self.log_path.exists() else None

    def abort(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.err.close()


HOLDER = r'''#!{python}
# Stand-in for simcrawl next to a copy of simcrawl-bench (written by scripts/crash_soak.py):
# `crawl` holds the bench's web open until crash_soak.py creates the release file; every other
# command prints nothing. It gives up if its parent goes away or after six hours.
import os, sys, time
hold = os.environ.get("CRASH_SOAK_HOLD")
if hold and len(sys.argv) > 1 and sys.argv[1] == "crawl":
    with open(os.path.join(hold, "started"), "w") as f:
        f.write(" ".join(sys.argv))
    parent, end = os.getppid(), time.monotonic() + 6 * 3600
    while not os.path.exists(os.path.join(hold, "release")):
        if os.getppid() != parent or time.monotonic() > end:
            sys.exit(1)
        time.sleep(0.05)
sys.exit(0)
'''


class HarnessWeb:
    """The bench's crawl mode with a stand-in simcrawl that holds the web open: the bench writes
    run-1/requests.jsonl once the stand-in is released."""

    via = "harness"

    @staticmethod
    def prepare(ctx):
        bindir = ctx.work / "harness-bin"
        bindir.mkdir(exist_ok=True)
        shutil.copy2(ctx.bench, bindir / "simcrawl-bench")
        holder = bindir / "simcrawl"
        holder.write_text(HOLDER.format(python=sys.executable))
        holder.chmod(0o755)
        return bindir / "simcrawl-bench"

    def __init__(self, ctx, name):
        if ctx.harness_bench is None:
            ctx.harness_bench = HarnessWeb.prepare(ctx)
        self.hold = ctx.work / f"{name}.hold"
        self.hold.mkdir()
        self.out = ctx.work / f"{name}.bench"
        self.err = open(ctx.work / f"{name}.server.err", "w")
        self.proc = subprocess.Popen(
            [str(ctx.harness_bench), "realweb", "--slice", str(ctx.slice), "--out", str(self.out)],
            cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.err,
            env=child_env({"CRASH_SOAK_HOLD": str(self.hold)}), start_new_session=True)
        ctx.procs.append(self.proc)
        try:
            deadline = time.monotonic() + 60
            while not (self.hold / "started").exists():
                if self.proc.poll() is not None:
                    raise SoakError(f"simcrawl-bench realweb exited ({self.proc.returncode}) "
                                    f"before serving; see {self.err.name}")
                if time.monotonic() > deadline:
                    raise SoakError("simcrawl-bench realweb did not start its crawl in 60 s")
                time.sleep(0.05)
            # web.json is written before the crawl starts, so it is complete now.
            self.desc = json.loads((self.out / "run-1" / "web.json").read_text())
            check_loopback(self.desc)
        except BaseException:
            self.abort()
            raise

    def stop(self):
        (self.hold / "release").touch()
        try:
            self.proc.wait(120)  # it writes the log, then runs the truth script over the slice
        except subprocess.TimeoutExpired:
            self.abort()
        self.err.close()
        path = self.out / "run-1" / "requests.jsonl"
        return parse_requests(path) if path.exists() else None

    def abort(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)  # the bench, its stand-in, its scorer
            except ProcessLookupError:
                pass
            self.proc.wait()
        self.err.close()


def probe_serve_log(ctx):
    """True if `--serve --requests-out` writes the request log: one GET of the seed, SIGINT."""
    web = ServeWeb(ctx, "probe")
    try:
        seed = urlsplit(web.desc["seed"])
        conn = http.client.HTTPConnection(LOOPBACK, seed.port, timeout=10)
        conn.request("GET", seed.path or "/")
        conn.getresponse().read()
        conn.close()
    finally:
        reqs = web.stop()
    return bool(reqs)


# ---------------------------------------------------------------------------------------------
# Crawl runs
# ---------------------------------------------------------------------------------------------

class Ctx:
    def __init__(self, args):
        self.args = args
        self.bin = Path(args.bin_dir).resolve()
        self.simcrawl = self.bin / "simcrawl"
        self.bench = self.bin / "simcrawl-bench"
        self.slice = Path(args.slice).resolve()
        self.work = None
        self.procs = []
        self.harness_bench = None
        self.web_class = None


def start_crawl(ctx, store, seed, tag):
    cmd = [str(ctx.simcrawl), "crawl"] + ([seed] if seed else []) + ["--store", str(store)]
    cmd += CRAWL_FLAGS
    out = ctx.work / f"{tag}.out"
    err = ctx.work / f"{tag}.err"
    with open(out, "w") as fo, open(err, "w") as fe:
        proc = subprocess.Popen(cmd, cwd=REPO, stdin=subprocess.DEVNULL, stdout=fo, stderr=fe,
                                env=child_env())
    ctx.procs.append(proc)
    return proc, out, err


def run_record(index, seeded, proc, out, err, started, killed, delay):
    stdout = out.read_text(errors="replace")
    stderr = err.read_text(errors="replace")
    m = re.search(r"^\s*fetched\s+(\d+)", stdout, re.M)
    resumed = RESUMED_FROM.search(stderr)
    rc = proc.returncode
    return {
        "index": index,
        "seeded": seeded,
        "delay": round(delay, 3) if delay is not None else None,
        "seconds": round(time.monotonic() - started, 3),
        "rc": rc,
        "killed": killed and rc == -signal.SIGKILL,  # the kill landed while it was running
        "ended_by_itself": rc is not None and rc != -signal.SIGKILL,
        "finished": bool(re.search(r"^crawl finished", stdout, re.M)),
        "fetched": int(m.group(1)) if m else None,
        "unclean_stdout": bool(UNCLEAN_STDOUT.search(stdout)),
        "unclean_stderr": UNCLEAN_STDERR in stderr,
        # what the store held from its last commit, as the unclean-stop warning says
        "resumed_from": ({"pages": int(resumed.group(1)), "queued": int(resumed.group(2))}
                         if resumed else None),
        "panicked": "panicked" in stderr,
        "stderr": stderr if "panicked" in stderr else None,
        "error": (None if rc in (0, -signal.SIGKILL) or "crawl finished" in stdout
                  else (stderr.strip().splitlines() or [f"exit {rc}"])[-1][:300]),
        "stdout_file": str(out),
        "stderr_file": str(err),
    }


def reference_crawl(ctx):
    args = ctx.args
    web = ctx.web_class(ctx, "A")
    t0 = time.monotonic()
    try:
        log(args, f"reference crawl A of {web.desc['seed']}")
        proc, out, err = start_crawl(ctx, ctx.work / "storeA", web.desc["seed"], "A-run00")
        try:
            proc.wait(args.run_timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise SoakError(f"the reference crawl took over {args.run_timeout} s")
        rec = run_record(0, True, proc, out, err, t0, False, None)
    finally:
        reqs = web.stop()
    return {"desc": web.desc, "runs": [rec], "requests": reqs,
            "wall": time.monotonic() - t0, "store": ctx.work / "storeA"}


def soak_crawl(ctx):
    args = ctx.args
    rng = random.Random(args.seed)
    web = ctx.web_class(ctx, "B")
    store = ctx.work / "storeB"
    runs, landed, aborted = [], 0, None
    t0 = time.monotonic()
    try:
        log(args, f"soak crawl B of {web.desc['seed']}: {args.kills} kills, seed {args.seed}")
        while True:
            index = len(runs)
            last = landed >= args.kills
            seed = web.desc["seed"] if index == 0 else None
            started = time.monotonic()
            proc, out, err = start_crawl(ctx, store, seed, f"B-run{index:02d}")
            delay, killed = None, False
            if not last:
                delay = rng.uniform(args.min_delay, args.max_delay)
                try:
                    proc.wait(delay)
                except subprocess.TimeoutExpired:
                    proc.send_signal(signal.SIGKILL)
                    proc.wait()
                    killed = True
            else:
                try:
                    proc.wait(args.run_timeout)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
                    aborted = f"the last run took over {args.run_timeout} s"
            rec = run_record(index, seed is not None, proc, out, err, started, killed, delay)
            runs.append(rec)
            if rec["killed"]:
                landed += 1
            state = ("killed" if rec["killed"] else
                     f"ended by itself rc={rec['rc']} fetched={rec['fetched']}")
            log(args, f"  run {index:2d} after {rec['seconds']:5.2f} s: {state}"
                      f"{'  PANICKED' if rec['panicked'] else ''}")
            if aborted:
                break
            if rec["ended_by_itself"]:
                if last:
                    break
                if rec["finished"] and rec["fetched"] == 0 and index > 0:
                    break  # a resumed crawl with nothing left to do: complete
                recent = runs[-3:]
                if len(recent) == 3 and all(r["ended_by_itself"] and not r["finished"]
                                            for r in recent):
                    aborted = "three runs in a row ended without finishing (see their stderr)"
                    break
            if len(runs) > args.kills + 25:
                aborted = f"{len(runs)} runs and still not complete"
                break
    finally:
        reqs = web.stop()
    return {"desc": web.desc, "runs": runs, "requests": reqs, "landed": landed,
            "aborted": aborted, "wall": time.monotonic() - t0, "store": store}


# ---------------------------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------------------------

def export_urls(ctx, store):
    p = subprocess.run([str(ctx.simcrawl), "export", "--store", str(store), "--format", "jsonl"],
                       cwd=REPO, capture_output=True, text=True, env=child_env(), timeout=300)
    if p.returncode != 0:
        raise SoakError(f"simcrawl export --store {store} failed: {p.stderr.strip()[-500:]}")
    return [json.loads(l)["url"] for l in p.stdout.splitlines() if l.strip()]


COPY_REASONS = ("exact-duplicate", "text-duplicate", "near-duplicate", "canonical")


def copy_skips(ctx, store):
    """The skips of `store` as a copy of an indexed page, decided after a fetch on the evidence
    of a comparison: {url: skip record}."""
    p = subprocess.run([str(ctx.simcrawl), "skipped", "--store", str(store), "--format", "jsonl",
                        "-q"], cwd=REPO, capture_output=True, text=True, env=child_env(),
                       timeout=300)
    if p.returncode != 0:
        raise SoakError(f"simcrawl skipped --store {store} failed: {p.stderr.strip()[-500:]}")
    skips = {}
    for line in p.stdout.splitlines():
        if line.strip():
            r = json.loads(line)
            if r.get("reason") in COPY_REASONS and r.get("original"):
                skips[r["url"]] = r
    return skips


def copies_of(docs, skips, indexed, mapper):
    """Of `docs` (documents one crawl did not index), those it skipped as a copy of a page it
    indexed (which copy of two a crawl meets first moves with fetch order): {doc: skip}."""
    found = {}
    for url, r in skips.items():
        d = mapper.document(url)
        if d in docs and r["original"] in indexed:
            found.setdefault(d, r)
    return found


class Mapper:
    """URLs of one web instance to port-free names and to documents."""

    def __init__(self, desc):
        self.hosts = {}
        for h in desc["hosts"]:
            b = urlsplit(h["base"])
            self.hosts[(b.scheme, b.netloc)] = h

    def _host(self, url):
        p = urlsplit(url)
        return p, self.hosts.get((p.scheme, p.netloc))

    def name(self, url):
        """`host/path?query`, the URL with its base replaced by the host's name."""
        p, h = self._host(url)
        where = h["name"] if h else p.netloc
        return where + (p.path or "/") + (f"?{p.query}" if p.query else "")

    def document(self, url):
        """(manual, relpath) of the file the URL shows; the hub's pages are ("hub", path)."""
        p, h = self._host(url)
        path = unquote(p.path or "/")
        if h is None:
            return (f"?{p.netloc}", path)
        prefix = h.get("prefix") or ""
        if prefix and (path == prefix or path.startswith(prefix + "/")):
            path = path[len(prefix):] or "/"
        if path.endswith("/"):
            path += "index.html"
        rel = posixpath.normpath(path.lstrip("/")) if path.strip("/") else "index.html"
        return (h.get("manual") or h["name"], rel)


def request_counts(reqs):
    """Requests per (host, target), robots.txt excluded."""
    c = Counter()
    for host, target, _ in reqs or []:
        if urlsplit(target).path != "/robots.txt":
            c[(host, target)] += 1
    return c


def compare(ctx, a, b):
    ma, mb = Mapper(a["desc"]), Mapper(b["desc"])
    urls_a, urls_b = export_urls(ctx, a["store"]), export_urls(ctx, b["store"])
    names_a = Counter(ma.name(u) for u in urls_a)
    names_b = Counter(mb.name(u) for u in urls_b)
    docs_a = Counter(ma.document(u) for u in urls_a)
    docs_b = Counter(mb.document(u) for u in urls_b)
    dup_a = sorted(u for u, n in Counter(urls_a).items() if n > 1)
    dup_b = sorted(u for u, n in Counter(urls_b).items() if n > 1)
    fmt_doc = lambda d: f"{d[0]}:{d[1]}"
    missing_docs = sorted(set(docs_a) - set(docs_b))
    extra_docs = sorted(set(docs_b) - set(docs_a))
    # A document missing in one manual and extra in another at the same relpath is most likely
    # a near-duplicate (e.g. two versions of a page) indexed in the other copy: flag it.
    swaps = sorted(fmt_doc(d) for d in missing_docs if any(e[1] == d[1] for e in extra_docs))
    # A document one crawl skipped as a copy of a page it indexed (its skip log has the evidence)
    # is decided, not lost: which of two copies comes first moves with the order of fetches,
    # which kills change. The rest are lost (missing) or unexplained (extra).
    by_order_b = copies_of(set(missing_docs), copy_skips(ctx, b["store"]), set(urls_b), mb)
    by_order_a = copies_of(set(extra_docs), copy_skips(ctx, a["store"]), set(urls_a), ma)
    lost = [d for d in missing_docs if d not in by_order_b]
    unexplained = [d for d in extra_docs if d not in by_order_a]
    copy_note = lambda d, r, m: (f"{fmt_doc(d)}: {r['reason']} of "
                                 f"{fmt_doc(m.document(r['original']))} "
                                 f"({(r.get('evidence') or {}).get('text', 'same bytes')})")

    ca, cb = request_counts(a["requests"]), request_counts(b["requests"])
    have_requests = a["requests"] is not None and b["requests"] is not None
    tot_a, tot_b = sum(ca.values()), sum(cb.values())
    top = lambda c: max(c.items(), key=lambda kv: (kv[1], kv[0]), default=(("-", "-"), 0))
    (ha, ta), na = top(ca)
    (hb, tb), nb = top(cb)
    hot_b = sorted(((n, h, t, ca.get((h, t), 0)) for (h, t), n in cb.items() if n >= 3),
                   key=lambda x: (-x[0], x[1], x[2]))
    runs_b = b["runs"]
    restarts = runs_b[1:]
    after_kill = [r for prev, r in zip(runs_b, runs_b[1:]) if prev["killed"]]
    reported = [r for r in restarts if r["finished"]]
    panics = [dict(r, crawl=name) for name, x in (("A", a), ("B", b)) for r in x["runs"]
              if r["panicked"]]
    landed = b["landed"]
    failures = []
    if lost or unexplained:
        failures.append(f"B's indexed documents differ from A's ({len(lost)} missing, "
                        f"{len(unexplained)} extra, not skipped as a copy of an indexed page)")
    if dup_b:
        failures.append(f"{len(dup_b)} URL(s) indexed twice in B")
    if panics:
        failures.append(f"{len(panics)} run(s) panicked")
    if b["aborted"]:
        failures.append(f"the soak did not finish: {b['aborted']}")
    return {
        "ok": not failures,
        "failures": failures,
        "kills_requested": ctx.args.kills,
        "seed": ctx.args.seed,
        "request_log_via": ctx.web_class.via,
        "work_dir": str(ctx.work),
        "urls": {
            "A": sum(names_a.values()), "B": sum(names_b.values()),
            "equal": set(names_a) == set(names_b),
            "missing_in_B": sorted(set(names_a) - set(names_b)),
            "extra_in_B": sorted(set(names_b) - set(names_a)),
        },
        "documents": {
            "A": len(docs_a), "B": len(docs_b),
            "equal": not missing_docs and not extra_docs,
            "missing_in_B": [fmt_doc(d) for d in missing_docs],
            "extra_in_B": [fmt_doc(d) for d in extra_docs],
            "possible_copy_swaps": swaps,
            "lost_in_B": [fmt_doc(d) for d in lost],
            "unexplained_extra_in_B": [fmt_doc(d) for d in unexplained],
            "skipped_as_copy_in_B": [copy_note(d, r, mb) for d, r in sorted(by_order_b.items())],
            "skipped_as_copy_in_A": [copy_note(d, r, ma) for d, r in sorted(by_order_a.items())],
            "indexed_more_than_once_A": sorted(fmt_doc(d) for d, n in docs_a.items() if n > 1),
            "indexed_more_than_once_B": sorted(fmt_doc(d) for d, n in docs_b.items() if n > 1),
        },
        "urls_indexed_twice": {"A": dup_a, "B": dup_b},
        "requests": None if not have_requests else {
            "A": tot_a, "B": tot_b, "extra": tot_b - tot_a,
            "extra_per_kill": round((tot_b - tot_a) / landed, 2) if landed else None,
            "targets_A": len(ca), "targets_B": len(cb),
            "max_per_target_A": {"count": na, "host": ha, "target": ta},
            "max_per_target_B": {"count": nb, "host": hb, "target": tb},
            "times_requested_A": {str(k): v for k, v in sorted(Counter(ca.values()).items())},
            "times_requested_B": {str(k): v for k, v in sorted(Counter(cb.values()).items())},
            "targets_3_or_more_B": [{"count": n, "host": h, "target": t, "count_A": n_a}
                                    for n, h, t, n_a in hot_b],
        },
        "runs": {
            "A": len(a["runs"]), "B": len(runs_b),
            "kills_landed": landed,
            "ended_before_kill": sum(1 for r in runs_b[:-1] if r["ended_by_itself"]),
            "errors": [{"crawl": "B", "run": r["index"], "rc": r["rc"], "error": r["error"]}
                       for r in runs_b if r["error"]]
                      + [{"crawl": "A", "run": 0, "rc": r["rc"], "error": r["error"]}
                         for r in a["runs"] if r["error"]],
            "restarts": len(restarts),
            "restarts_after_kill": len(after_kill),
            "restarts_that_reported": len(reported),
            "unclean_resume_stdout": sum(r["unclean_stdout"] for r in restarts),
            "unclean_warning_stderr": sum(r["unclean_stderr"] for r in restarts),
            "unclean_warning_stderr_after_kill": sum(r["unclean_stderr"] for r in after_kill),
            "exit_codes_B": dict(Counter(str(r["rc"]) for r in runs_b)),
            "last_run_B": {k: runs_b[-1][k] for k in ("rc", "seconds", "fetched", "finished")}
                          if runs_b else None,
            "reference_rc": a["runs"][0]["rc"],
        },
        "panics": [{"crawl": p["crawl"], "run": p["index"], "stderr": p["stderr"][-8000:],
                    "stderr_file": p["stderr_file"]} for p in panics],
        "aborted": b["aborted"],
        "wall_seconds": {"A": round(a["wall"], 1), "B": round(b["wall"], 1)},
        "runs_B": [{k: r[k] for k in ("index", "seeded", "delay", "seconds", "rc", "killed",
                                      "fetched", "unclean_stdout", "unclean_stderr",
                                      "resumed_from", "panicked")}
                   for r in runs_b],
    }


def print_markdown(rep):
    u, d, q, r = rep["urls"], rep["documents"], rep["requests"], rep["runs"]
    rows = [("measure", "reference A", "soak B", "")]
    rows.append(("indexed URLs", u["A"], u["B"],
                 "equal" if u["equal"] else
                 f"{len(u['missing_in_B'])} missing, {len(u['extra_in_B'])} extra in B"))
    rows.append(("indexed documents (decides)", d["A"], d["B"],
                 "equal" if d["equal"] else
                 f"{len(d['missing_in_B'])} missing, {len(d['extra_in_B'])} extra in B"))
    rows.append(("URLs indexed twice", len(rep["urls_indexed_twice"]["A"]),
                 len(rep["urls_indexed_twice"]["B"]), ""))
    if q:
        per = f", {q['extra_per_kill']:+} per landed kill" if q["extra_per_kill"] is not None else ""
        rows.append(("requests (no robots.txt)", q["A"], q["B"], f"{q['extra']:+}{per}"))
        rows.append(("distinct targets", q["targets_A"], q["targets_B"], ""))
        ma, mb = q["max_per_target_A"], q["max_per_target_B"]
        rows.append(("max requests of one target", ma["count"], mb["count"],
                     f"B: {mb['host']} {mb['target']}"))
        rows.append(("targets requested >= 3 times", "", len(q["targets_3_or_more_B"]), ""))
        hist = lambda h: ", ".join(f"{n}x: {t}" for n, t in h.items())
        rows.append(("targets by times requested", hist(q["times_requested_A"]),
                     hist(q["times_requested_B"]), ""))
    else:
        rows.append(("requests", "n/a", "n/a", "no request log"))
    rows.append(("crawl runs", r["A"], r["B"], ""))
    rows.append(("kills landed mid-crawl", "", r["kills_landed"], f"of {rep['kills_requested']} asked"))
    rows.append(("runs ended before their kill", "", r["ended_before_kill"], ""))
    rows.append(("restarts with the unclean-resume report line (stdout)", "",
                 r["unclean_resume_stdout"],
                 f"of {r['restarts_that_reported']} restarts that lived to print a report"))
    rows.append(("restarts with the unclean-stop warning (stderr)", "", r["unclean_warning_stderr"],
                 f"of {r['restarts']} restarts ({r['restarts_after_kill']} after a kill)"))
    froms = [x["resumed_from"] for x in rep["runs_B"] if x["resumed_from"]]
    if froms:
        span = lambda k: f"{min(f[k] for f in froms)}-{max(f[k] for f in froms)}"
        rows.append(("store at restart (last commit)", "", f"{span('pages')} pages",
                     f"{span('queued')} queued URLs"))
    rows.append(("runs that panicked", sum(p["crawl"] == "A" for p in rep["panics"]),
                 sum(p["crawl"] == "B" for p in rep["panics"]), ""))
    rows.append(("runs that ended with an error", sum(e["crawl"] == "A" for e in r["errors"]),
                 sum(e["crawl"] == "B" for e in r["errors"]), ""))
    rows.append(("wall time (s)", rep["wall_seconds"]["A"], rep["wall_seconds"]["B"], ""))
    rows = [tuple(str(c) for c in row) for row in rows]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    line = lambda row: "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |"
    print(line(rows[0]))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in rows[1:]:
        print(line(row))

    def listing(title, items):
        if items:
            print(f"\n{title}:")
            for it in items[:LIST_CAP]:
                print(f"  - {it}")
            if len(items) > LIST_CAP:
                print(f"  - ... and {len(items) - LIST_CAP} more (--json lists them all)")

    listing("URLs missing in B", u["missing_in_B"])
    listing("URLs extra in B", u["extra_in_B"])
    listing("documents missing in B", d["missing_in_B"])
    listing("documents extra in B", d["extra_in_B"])
    listing("of those, same relpath in another manual (a copy indexed instead?)",
            d["possible_copy_swaps"])
    listing("missing in B, skipped there as a copy of a page B indexed (fetch order)",
            d["skipped_as_copy_in_B"])
    listing("extra in B, skipped in A as a copy of a page A indexed (fetch order)",
            d["skipped_as_copy_in_A"])
    listing("missing in B and not skipped as a copy: LOST", d["lost_in_B"])
    listing("extra in B and not skipped in A as a copy", d["unexplained_extra_in_B"])
    listing("URLs indexed twice in B", rep["urls_indexed_twice"]["B"])
    listing("documents indexed under more than one URL in B (A had: "
            f"{', '.join(d['indexed_more_than_once_A']) or 'none'})",
            d["indexed_more_than_once_B"])
    if q:
        listing("targets requested 3 or more times in B (count in B / in A)",
                [f"{x['count']} / {x['count_A']}  {x['host']} {x['target']}"
                 for x in q["targets_3_or_more_B"]])
    listing("runs that ended with an error",
            [f"{e['crawl']} run {e['run']} (exit {e['rc']}): {e['error']}" for e in r["errors"]])
    for p in rep["panics"]:
        print(f"\n{p['crawl']} run {p['run']} panicked ({p['stderr_file']}):\n```\n"
              f"{p['stderr'].rstrip()}\n```")
    if rep["aborted"]:
        print(f"\nsoak aborted: {rep['aborted']}")
    q_note = (f"; requests {q['B']} vs {q['A']} ({q['extra']:+})" if q else "")
    verdict = "PASS" if rep["ok"] else "FAIL: " + "; ".join(rep["failures"])
    print(f"\n{verdict} -- {r['kills_landed']} kills landed in {r['B']} runs, documents "
          f"{'equal' if d['equal'] else 'differ'}, URLs {'equal' if u['equal'] else 'differ'}"
          f"{q_note}, max {q['max_per_target_B']['count'] if q else '?'} requests of one target "
          f"(request log via {rep['request_log_via']}"
          f"{'; files in ' + rep['work_dir'] if rep['work_dir'] else ''})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kills", type=int, default=20, help="SIGKILLs that must land (default 20)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the kill delays (default 1)")
    ap.add_argument("--min-delay", type=float, default=0.1, help="shortest kill delay, s (0.1)")
    ap.add_argument("--max-delay", type=float, default=1.5, help="longest kill delay, s (1.5)")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead")
    ap.add_argument("--bin-dir", default=str(REPO / "target" / "release"),
                    help="where simcrawl and simcrawl-bench are (default target/release)")
    ap.add_argument("--slice", default=str(REPO / "tests" / "realweb"),
                    help="the real-page slice to serve (default tests/realweb)")
    ap.add_argument("--requests-via", choices=("auto", "serve", "harness"), default="auto",
                    help="how to get the request log (default: probe --serve --requests-out, "
                         "fall back to the bench's crawl mode)")
    ap.add_argument("--run-timeout", type=float, default=600,
                    help="longest a run may take when it is not being killed, s (600)")
    ap.add_argument("--work-dir", help="keep stores and logs here (default: a temp dir, removed "
                                       "unless the soak fails or --keep)")
    ap.add_argument("--keep", action="store_true", help="keep the temp work directory")
    ap.add_argument("--quiet", action="store_true", help="no progress on stderr")
    args = ap.parse_args()
    if args.kills < 0 or not 0 < args.min_delay <= args.max_delay:
        ap.error("need --kills >= 0 and 0 < --min-delay <= --max-delay")

    ctx = Ctx(args)
    for exe in (ctx.simcrawl, ctx.bench):
        if not os.access(exe, os.X_OK):
            print(f"crash_soak: {exe} is missing (build it first)", file=sys.stderr)
            return 2
    if args.work_dir:
        ctx.work = Path(args.work_dir).resolve()
        ctx.work.mkdir(parents=True, exist_ok=False)
    else:
        ctx.work = Path(tempfile.mkdtemp(prefix="crash-soak-"))
    rep = None
    try:
        if args.requests_via == "serve":
            ctx.web_class = ServeWeb
        elif args.requests_via == "harness":
            ctx.web_class = HarnessWeb
        else:
            ok = probe_serve_log(ctx)
            ctx.web_class = ServeWeb if ok else HarnessWeb
            log(args, "the served web writes its request log" if ok else
                "`realweb --serve --requests-out` wrote no request log: using the bench's "
                "crawl mode for the logs")
        a = reference_crawl(ctx)
        log(args, f"  A: rc={a['runs'][0]['rc']} in {a['wall']:.1f} s")
        b = soak_crawl(ctx)
        rep = compare(ctx, a, b)
    except SoakError as e:
        print(f"crash_soak: {e} (files in {ctx.work})", file=sys.stderr)
        return 2
    finally:
        for p in ctx.procs:  # only what this script started, by pid
            if p.poll() is None:
                p.kill()
                p.wait()
    remove = rep["ok"] and not args.keep and not args.work_dir
    if remove:
        rep["work_dir"] = None
    if args.json:
        print(json.dumps(rep, indent=None))
    else:
        print_markdown(rep)
    if remove:
        shutil.rmtree(ctx.work, ignore_errors=True)
    return 0 if rep["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
