#!/usr/bin/env python3
"""WARC and CDXJ checks for `simcrawl crawl --warc DIR` and `simcrawl export --format cdxj`.

Run by scripts/warc-check.sh inside its virtualenv (warcio + pywb, pinned in
scripts/warc-requirements.txt). Subcommands:

  sample OUT_DIR CDXJ_OUT   write two small gzip-per-record WARC/1.1 files with warcio's writer
                            (warcinfo, request/response pairs, an identical-payload-digest revisit
                            in the second file pointing at a response in the first, a near-duplicate
                            metadata record) and the CDXJ simcrawl is expected to write for them.
                            --bad-digest corrupts one payload digest (for the negative test).
  structure WARC...         an independent reader (zlib member by member, no warcio): one record per
                            gzip member, mandatory headers, Content-Length, sha1/base32 block and
                            payload digests (revisits too, which `warcio check` skips), revisit
                            profile and references, WARC-Concurrent-To targets.
  compare-cdxj CDXJ WARC... simcrawl's CDXJ against pywb's own indexer (what `wb-manager add`
                            writes) and `warcio index`: the same (urlkey, timestamp, offset,
                            filename, digest) set, the same url/length/mime/status, sorted bytewise.
  replay BASE COLL WARC...  fetch captures from a running pywb through id_ replay and compare the
                            bodies with the payloads in the WARCs (a revisit with its original's).
  surt [URL...]             print "URL<TAB>pywb's urlkey" (URLs from the arguments, else stdin,
                            else a built-in list of tricky cases): golden vectors for a Rust port.
  free-port                 print a free TCP port on 127.0.0.1.

Every check prints "FAIL ..." lines for problems and "warn ..." for doubtful things, and exits 1
when anything failed.
"""
import argparse
import base64
import hashlib
import io
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import zlib
from collections import Counter, OrderedDict

REVISIT_PROFILE_11 = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
REVISIT_PROFILE_10 = "http://netpreserve.org/warc/1.0/revisit/identical-payload-digest"
DIGEST_RE = re.compile(r"^sha1:[A-Z2-7]{32}$")
DATE_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$")

failures = []
warnings = []


def fail(msg):
    failures.append(msg)
    print("FAIL " + msg)


def warn(msg):
    warnings.append(msg)
    print("warn " + msg)


def finish(what):
    print(f"{what}: {len(failures)} failure(s), {len(warnings)} warning(s)")
    return 1 if failures else 0


def sha1_b32(data):
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode("ascii")


def warc_files(paths):
    out = []
    for p in paths:
        if os.path.isdir(p):
            out += sorted(
                os.path.join(p, f) for f in os.listdir(p) if f.endswith((".warc.gz", ".warc"))
            )
        else:
            out.append(p)
    return out


# --------------------------------------------------------------------------------------------
# An independent reader: one gzip member at a time, records parsed by hand.


class Rec:
    def __init__(self, path, offset, length, version, headers, block):
        self.path, self.filename = path, os.path.basename(path)
        self.offset, self.length = offset, length
        self.version, self.headers, self.block = version, headers, block

    def get(self, name, default=None):
        name = name.lower()
        for k, v in self.headers:
            if k.lower() == name:
                return v
        return default

    def get_all(self, name):
        name = name.lower()
        return [v for k, v in self.headers if k.lower() == name]

    @property
    def type(self):
        return self.get("WARC-Type")

    def where(self):
        return f"{self.filename}@{self.offset} {self.type} {self.get('WARC-Target-URI', '')}"

    def http_split(self):
        """(status-or-request line, [(name, value)], payload) of an application/http block."""
        head, sep, payload = self.block.partition(b"\r\n\r\n")
        if not sep:
            return None, [], b""
        lines = head.decode("iso-8859-1").split("\r\n")
        hdrs = []
        for line in lines[1:]:
            k, _, v = line.partition(":")
            hdrs.append((k.strip(), v.strip()))
        return lines[0], hdrs, payload


def hget(hdrs, name):
    name = name.lower()
    for k, v in hdrs:
        if k.lower() == name:
            return v
    return None


def read_records(path):
    """Yield Rec for each gzip member; a member holding more or less than one record fails."""
    data = open(path, "rb").read()
    gz = path.endswith(".gz")
    if not gz:
        fail(f"{path}: not gzip-compressed (expected .warc.gz, one gzip member per record)")
        return
    pos = 0
    while pos < len(data):
        d = zlib.decompressobj(wbits=31)
        try:
            raw = d.decompress(data[pos:]) + d.flush()
        except zlib.error as e:
            fail(f"{path}@{pos}: gzip error {e}")
            return
        if not d.eof:
            fail(f"{path}@{pos}: truncated gzip member")
            return
        length = len(data) - pos - len(d.unused_data)
        head, sep, rest = raw.partition(b"\r\n\r\n")
        if not sep:
            fail(f"{path}@{pos}: no end of WARC headers in member")
            return
        lines = head.decode("utf-8", "replace").split("\r\n")
        version, hdrs = lines[0], []
        for line in lines[1:]:
            if not line or line[0] in " \t":
                fail(f"{path}@{pos}: folded or empty header line {line!r}")
                continue
            k, colon, v = line.partition(":")
            if not colon:
                fail(f"{path}@{pos}: header line without colon {line!r}")
                continue
            hdrs.append((k.strip(), v.strip()))
        rec = Rec(path, pos, length, version, hdrs, b"")
        try:
            clen = int(rec.get("Content-Length", "x"))
        except ValueError:
            fail(f"{path}@{pos}: missing or bad Content-Length")
            return
        rec.block = rest[:clen]
        tail = rest[clen:]
        if len(rec.block) != clen:
            fail(f"{rec.where()}: block shorter ({len(rec.block)}) than Content-Length {clen}")
        elif tail != b"\r\n\r\n":
            if tail.startswith(b"\r\n\r\n") and b"WARC/" in tail:
                fail(f"{rec.where()}: several records in one gzip member (not gzip-per-record)")
            else:
                fail(f"{rec.where()}: block not followed by exactly CRLF CRLF (got {tail[:20]!r})")
        yield rec
        pos += length


# --------------------------------------------------------------------------------------------
# structure


def cmd_structure(args):
    files = warc_files(args.warcs)
    if not files:
        fail("no WARC files given")
        return finish("structure")
    recs = []
    for f in files:
        file_recs = list(read_records(f))
        if not file_recs:
            fail(f"{f}: no records")
            continue
        if file_recs[0].type != "warcinfo":
            fail(f"{f}: first record is {file_recs[0].type}, not warcinfo")
        recs += file_recs
    ids = Counter(r.get("WARC-Record-ID") for r in recs)
    for rid, n in ids.items():
        if n > 1:
            fail(f"WARC-Record-ID {rid} used {n} times")
    by_id = {r.get("WARC-Record-ID"): r for r in recs}
    concurrent_targets = {c for r in recs for c in r.get_all("WARC-Concurrent-To")}
    responses = {}
    for r in recs:
        if r.type == "response":
            responses.setdefault((r.get("WARC-Target-URI"), r.get("WARC-Date")), r)

    for r in recs:
        w = r.where()
        if r.version != "WARC/1.1":
            fail(f"{w}: version line {r.version!r}, expected WARC/1.1")
        for h in ("WARC-Record-ID", "WARC-Date", "WARC-Type", "Content-Length"):
            if r.get(h) is None:
                fail(f"{w}: missing {h}")
        for h in ("WARC-Type", "WARC-Record-ID", "WARC-Date", "WARC-Target-URI", "Content-Length",
                  "Content-Type", "WARC-Payload-Digest", "WARC-Block-Digest", "WARC-Profile",
                  "WARC-Refers-To-Target-URI", "WARC-Refers-To-Date", "WARC-Truncated"):
            if len(r.get_all(h)) > 1:
                fail(f"{w}: {h} repeated")
        rid = r.get("WARC-Record-ID", "")
        if not re.match(r"^<[a-z][a-z0-9+.-]*:[^\s<>]+>$", rid):
            fail(f"{w}: WARC-Record-ID {rid!r} is not <uri>")
        if not DATE_RE.match(r.get("WARC-Date", "")):
            fail(f"{w}: WARC-Date {r.get('WARC-Date')!r} is not YYYY-MM-DDThh:mm:ss[.f]Z")
        if r.block and not r.get("Content-Type"):
            fail(f"{w}: non-empty block without Content-Type")
        for h in ("WARC-Block-Digest", "WARC-Payload-Digest"):
            v = r.get(h)
            if v is not None and not DIGEST_RE.match(v):
                fail(f"{w}: {h} {v!r} is not sha1:<32 base32 chars>")
        bd = r.get("WARC-Block-Digest")
        if bd is None and r.type in ("request", "response", "revisit", "metadata"):
            fail(f"{w}: no WARC-Block-Digest")
        elif bd is not None and DIGEST_RE.match(bd) and bd != sha1_b32(r.block):
            fail(f"{w}: WARC-Block-Digest {bd} != {sha1_b32(r.block)} (sha1 of the whole block)")
        for cto in r.get_all("WARC-Concurrent-To"):
            if cto not in by_id:
                fail(f"{w}: WARC-Concurrent-To {cto} is not a record in these files")

        t = r.type
        if t == "warcinfo":
            if r.get("WARC-Target-URI"):
                fail(f"{w}: warcinfo must not have WARC-Target-URI")
            if r.get("Content-Type") != "application/warc-fields":
                warn(f"{w}: warcinfo Content-Type {r.get('Content-Type')!r}")
            if r.get("WARC-Filename") not in (r.filename, None):
                warn(f"{w}: WARC-Filename {r.get('WARC-Filename')!r} != file name {r.filename!r}")
        elif t in ("response", "request", "revisit"):
            if not r.get("WARC-Target-URI"):
                fail(f"{w}: missing WARC-Target-URI")
            msgtype = "request" if t == "request" else "response"
            ct = (r.get("Content-Type") or "").replace(" ", "")
            if r.block and ct != f"application/http;msgtype={msgtype}":
                fail(f"{w}: Content-Type {r.get('Content-Type')!r}, expected "
                     f"'application/http; msgtype={msgtype}'")
            first, hdrs, payload = r.http_split()
            if first is None:
                fail(f"{w}: block has no end of HTTP headers")
                continue
            if t == "request":
                if not re.match(r"^[A-Z]+ \S+ HTTP/\d(\.\d)?$", first):
                    fail(f"{w}: bad request line {first!r}")
                if not r.get_all("WARC-Concurrent-To") and rid not in concurrent_targets:
                    warn(f"{w}: request not linked by WARC-Concurrent-To to any record")
            else:
                if not re.match(r"^HTTP/\d(\.\d)? \d{3}( .*)?$", first):
                    fail(f"{w}: bad status line {first!r}")
            te = hget(hdrs, "Transfer-Encoding")
            if te and t != "request":
                fail(f"{w}: stored HTTP header Transfer-Encoding: {te}; store the de-chunked body "
                     "and drop the header (warcio check digests the stored bytes, the spec the "
                     "transfer-decoded ones: only a de-chunked record satisfies both)")
            if t == "response":
                pd = r.get("WARC-Payload-Digest")
                if pd is None:
                    fail(f"{w}: no WARC-Payload-Digest")
                elif DIGEST_RE.match(pd) and pd != sha1_b32(payload):
                    fail(f"{w}: WARC-Payload-Digest {pd} != {sha1_b32(payload)} "
                         "(sha1 of the bytes after the HTTP headers)")
                cl = hget(hdrs, "Content-Length")
                if cl is not None and cl.isdigit() and int(cl) != len(payload) \
                        and r.get("WARC-Truncated") is None:
                    fail(f"{w}: HTTP Content-Length {cl} != stored payload {len(payload)} bytes")
                ce = (hget(hdrs, "Content-Encoding") or "").lower()
                if ce in ("gzip", "x-gzip") and payload[:2] != b"\x1f\x8b":
                    fail(f"{w}: Content-Encoding {ce} but the payload is not gzip (decoded body "
                         "stored with the header kept?)")
                elif ce in ("br", "deflate", "zstd"):
                    warn(f"{w}: Content-Encoding {ce} kept: is the payload really encoded?")
            if t == "revisit":
                prof = r.get("WARC-Profile")
                if prof != REVISIT_PROFILE_11:
                    (warn if prof == REVISIT_PROFILE_10 else fail)(
                        f"{w}: WARC-Profile {prof!r}, expected {REVISIT_PROFILE_11}")
                pd = r.get("WARC-Payload-Digest")
                if pd is None:
                    fail(f"{w}: revisit without WARC-Payload-Digest")
                if payload:
                    fail(f"{w}: revisit block has {len(payload)} bytes after the HTTP headers "
                         "(identical-payload-digest keeps the headers only)")
                if r.block and r.get("WARC-Truncated") != "length":
                    fail(f"{w}: revisit with a block but no 'WARC-Truncated: length' "
                         "(WARC 1.1 section 6.7.2: shall be used for identical-digest truncation)")
                ref_uri, ref_date = r.get("WARC-Refers-To-Target-URI"), r.get("WARC-Refers-To-Date")
                if not ref_uri or not ref_date:
                    fail(f"{w}: missing WARC-Refers-To-Target-URI or WARC-Refers-To-Date")
                    continue
                orig = responses.get((ref_uri, ref_date))
                if orig is None:
                    fail(f"{w}: no response record with WARC-Target-URI {ref_uri} and WARC-Date "
                         f"{ref_date} in these files (pywb could not resolve the revisit)")
                elif orig.get("WARC-Payload-Digest") != pd:
                    fail(f"{w}: payload digest {pd} != original's "
                         f"{orig.get('WARC-Payload-Digest')}")
                elif r.get("WARC-Refers-To") and r.get("WARC-Refers-To") != orig.get("WARC-Record-ID"):
                    fail(f"{w}: WARC-Refers-To {r.get('WARC-Refers-To')} is not the original's id")
        elif t == "metadata":
            # simcrawl's metadata record stands alone when nothing was fetched (a URL skipped
            # before fetching), the payload was not kept (--warc-dups revisit), or it says that
            # an earlier skip of the URL was withdrawn (its rule revoked); it says so.
            alone_ok = (b"simcrawl-fetched: no\r\n" in r.block
                        or b"simcrawl-payload: not kept\r\n" in r.block
                        or b"simcrawl-verdict: withdrawn\r\n" in r.block)
            if not r.get_all("WARC-Concurrent-To") and not r.get("WARC-Refers-To") \
                    and not alone_ok:
                fail(f"{w}: metadata record without WARC-Concurrent-To (and not a skip decided "
                     "before fetching)")
            if r.get("Content-Type") != "application/warc-fields":
                warn(f"{w}: metadata Content-Type {r.get('Content-Type')!r}: pywb indexes metadata "
                     "records unless they are application/warc-fields, and could replay this "
                     "record as the page")
        else:
            warn(f"{w}: record type {t!r} not expected from simcrawl")
    kinds = Counter(r.type for r in recs)
    for t in filter(None, args.require.split(",")):
        if not kinds.get(t):
            fail(f"no {t} record in these files")
    for t in filter(None, args.expect.split(",")):
        if not kinds.get(t):
            warn(f"no {t} record in these files")
    print(f"structure: {len(files)} file(s), {len(recs)} record(s): "
          + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())))
    return finish("structure")


# --------------------------------------------------------------------------------------------
# CDXJ


def parse_cdxj(path):
    lines = open(path, "rb").read().split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    entries = []
    for i, line in enumerate(lines, 1):
        parts = line.split(b" ", 2)
        if len(parts) != 3:
            fail(f"{path}:{i}: not 'urlkey timestamp {{json}}': {line[:120]!r}")
            continue
        key, ts, js = parts
        try:
            obj = json.loads(js)
            assert isinstance(obj, dict)
        except Exception:
            fail(f"{path}:{i}: bad JSON {js[:120]!r}")
            continue
        if not re.match(rb"^\d{14}$", ts):
            fail(f"{path}:{i}: timestamp {ts!r} is not 14 digits")
        entries.append((key.decode("utf-8"), ts.decode(), obj, line))
    raw = [e[3] for e in entries]
    if raw != sorted(raw):
        first = next(i for i in range(len(raw) - 1) if raw[i] > raw[i + 1])
        fail(f"{path}: not sorted bytewise (LC_ALL=C sort) at line {first + 2}; pywb binary-searches "
             "its indexes")
    if len(set(raw)) != len(raw):
        warn(f"{path}: duplicate lines")
    return entries


def pywb_index(files):
    """pywb's own CDXJ (what `wb-manager add` writes), filename = basename."""
    from pywb.indexer.cdxindexer import write_cdx_index

    out = []
    for f in files:
        buf = io.BytesIO()
        with open(f, "rb") as fh:
            write_cdx_index(buf, fh, os.path.basename(f), cdxj=True, sort=True, surt_ordered=True)
        out += buf.getvalue().decode("utf-8").splitlines()
    out.sort()
    entries = []
    for line in out:
        key, ts, js = line.split(" ", 2)
        entries.append((key, ts, json.loads(js), line.encode()))
    return entries


def warcio_index(files, warcio_bin):
    fields = "warc-type,warc-target-uri,warc-date,warc-payload-digest,offset,length,filename"
    res = subprocess.run([warcio_bin, "index", "-f", fields] + files, capture_output=True, text=True)
    if res.returncode != 0:
        fail(f"warcio index exited {res.returncode}: {res.stderr.strip()[:500]}")
        return []
    return [json.loads(l) for l in res.stdout.splitlines() if l.strip()]


def norm_digest(d):
    return d[5:] if d and d.startswith("sha1:") else d


def tup(key, ts, obj):
    return (key, ts, str(obj.get("offset")), obj.get("filename"), norm_digest(obj.get("digest")))


def cmd_compare_cdxj(args):
    import surt
    from warcio.timeutils import iso_date_to_timestamp

    files = warc_files(args.warcs)
    ours = parse_cdxj(args.cdxj)
    ref = pywb_index(files)
    if args.reference_out:
        with open(args.reference_out, "wb") as fh:
            fh.write(b"".join(e[3] + b"\n" for e in ref))

    # warcio index must agree with pywb's indexer on what pywb indexes (cross-check of offsets).
    wi = warcio_index(files, args.warcio)
    wi_set = set()
    for o in wi:
        if o.get("warc-type") in ("response", "revisit"):
            wi_set.add((surt.surt(o["warc-target-uri"]), iso_date_to_timestamp(o["warc-date"]),
                        o["offset"], o["filename"], norm_digest(o.get("warc-payload-digest"))))
    ref_rr = {tup(k, t, o) for k, t, o, _ in ref}
    if wi_set - ref_rr or (wi and not wi_set):
        fail(f"warcio index and pywb's indexer disagree: {sorted(wi_set - ref_rr)[:5]}")

    forms = Counter("prefixed" if str(o.get("digest", "")).startswith("sha1:") else "bare"
                    for _, _, o, _ in ours if o.get("digest"))
    if len(forms) > 1:
        fail(f"{args.cdxj}: digests written both with and without 'sha1:' ({dict(forms)}); pywb "
             "finds a revisit's original with a substring filter on the digest, so keep one form "
             "(pywb's own index writes them bare)")

    ours_map = {}
    for k, t, o, line in ours:
        ours_map.setdefault(tup(k, t, o), o)
    ref_map = {tup(k, t, o): o for k, t, o, _ in ref}
    missing = sorted(set(ref_map) - set(ours_map))
    extra = sorted(set(ours_map) - set(ref_map))
    for m in missing[:10]:
        fail(f"in pywb's index, not in simcrawl's: {m}")
    for m in extra[:10]:
        fail(f"in simcrawl's index, not in pywb's: {m}")
    if len(missing) > 10 or len(extra) > 10:
        fail(f"... {len(missing)} missing and {len(extra)} extra tuples in all")
    # The usual cause of missing/extra lines: a urlkey that is not pywb's SURT of the line's url.
    bad_keys = 0
    for k, t, o, _ in ours:
        if o.get("url") and surt.surt(o["url"]) != k:
            bad_keys += 1
            if bad_keys <= 5:
                fail(f"urlkey {k!r} of {o['url']} is not pywb's SURT {surt.surt(o['url'])!r}")
    if bad_keys > 5:
        fail(f"... {bad_keys} urlkeys differ from pywb's SURT in all")
    mismatched = 0
    for t in sorted(set(ref_map) & set(ours_map)):
        a, b = ref_map[t], ours_map[t]
        for field in ("url", "length", "mime"):
            if str(a.get(field)) != str(b.get(field)):
                mismatched += 1
                if mismatched <= 10:
                    fail(f"{t[0]} {t[1]}: {field} {b.get(field)!r} in simcrawl's, {a.get(field)!r} "
                         "in pywb's")
        if a.get("mime") == "warc/revisit":
            pass  # pywb leaves status out of revisit lines, cdxj-indexer writes the HTTP status
        elif str(a.get("status")) != str(b.get("status")):
            mismatched += 1
            if mismatched <= 10:
                fail(f"{t[0]} {t[1]}: status {b.get('status')!r} in simcrawl's, "
                     f"{a.get('status')!r} in pywb's")
    print(f"compare-cdxj: simcrawl {len(ours)} line(s), pywb {len(ref)} line(s), "
          f"warcio index {len(wi_set)} response/revisit record(s); {len(missing)} missing, "
          f"{len(extra)} extra, {mismatched} field mismatch(es)")
    return finish("compare-cdxj")


# --------------------------------------------------------------------------------------------
# replay through a running pywb


def http_get(url, timeout=20):
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    req = urllib.request.Request(url, headers={"Accept-Encoding": "identity"})
    try:
        with opener.open(req, timeout=timeout) as resp:
            return resp.status, resp.geturl(), resp.read()
    except urllib.error.HTTPError as e:
        return e.code, url, e.read()


def cmd_wait(args):
    deadline = time.time() + args.timeout
    while time.time() < deadline:
        try:
            status, _, _ = http_get(args.url, timeout=2)
            if status < 500:
                print(f"up: {args.url} answered {status}")
                return 0
        except Exception:
            pass
        time.sleep(0.25)
    print(f"FAIL {args.url} did not answer within {args.timeout} s")
    return 1


def cmd_replay(args):
    files = warc_files(args.warcs)
    recs = [r for f in files for r in read_records(f)]
    responses = {}
    for r in recs:
        if r.type == "response":
            responses[(r.get("WARC-Target-URI"), r.get("WARC-Date"))] = r
    from warcio.timeutils import iso_date_to_timestamp

    def status_of(r):
        first = r.http_split()[0] or ""
        m = re.match(r"^HTTP/\S+ (\d{3})", first)
        return m.group(1) if m else None

    plain = [r for r in recs if r.type == "response" and status_of(r) == "200"]
    revisits = []
    for r in recs:
        if r.type == "revisit" and status_of(r) == "200":
            orig = responses.get((r.get("WARC-Refers-To-Target-URI"), r.get("WARC-Refers-To-Date")))
            if orig is not None:
                revisits.append((r, orig))
    if not plain:
        fail("no 200 response record to replay")
    if args.need_revisit and not revisits:
        fail("no 200 revisit record with its original in these files to replay")
    checks = [(r, r) for r in plain[: args.limit]] + revisits[: args.limit]
    # A replay names a capture by URL and a timestamp of one-second resolution: a URL fetched
    # twice within a second (a mirror rule's verification, say) has two captures pywb cannot
    # tell apart, and either payload is a right answer.
    same_second = {}
    for r in plain:
        key = (r.get("WARC-Target-URI"), iso_date_to_timestamp(r.get("WARC-Date")))
        same_second.setdefault(key, []).append(r.http_split()[2])
    ok = 0
    for rec, orig in checks:
        ts = iso_date_to_timestamp(rec.get("WARC-Date"))
        url = rec.get("WARC-Target-URI")
        replay = f"{args.base}/{args.coll}/{ts}id_/{url}"
        try:
            status, final, body = http_get(replay)
        except Exception as e:
            fail(f"{args.coll}: {replay}: {e}")
            continue
        want = orig.http_split()[2]
        kind = "revisit" if rec is not orig else "response"
        twins = same_second.get((orig.get("WARC-Target-URI"),
                                 iso_date_to_timestamp(orig.get("WARC-Date"))), [want])
        if body != want and body in twins:
            warn(f"{args.coll}: {replay} replayed another capture of the same URL and second")
            want = body
        if status != 200:
            fail(f"{args.coll}: {kind} {replay}: HTTP {status}: {body[:200]!r}")
        elif body != want:
            fail(f"{args.coll}: {kind} {replay}: body of {len(body)} bytes differs from the "
                 f"original payload ({len(want)} bytes) in {orig.where()}")
        else:
            if final != replay:
                warn(f"{args.coll}: {replay} was redirected to {final}")
            ok += 1
    print(f"replay {args.coll}: {ok}/{len(checks)} captures replayed byte-identical "
          f"({min(len(plain), args.limit)} response(s), {min(len(revisits), args.limit)} "
          "revisit(s))")
    return finish(f"replay {args.coll}")


# --------------------------------------------------------------------------------------------
# sample WARCs written with warcio's writer (to test this tooling before simcrawl writes WARCs)


def cmd_sample(args):
    import surt
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.timeutils import iso_date_to_timestamp
    from warcio.warcwriter import WARCWriter

    os.makedirs(args.out_dir, exist_ok=True)
    origin, mirror = "http://127.0.0.1:41001", "http://127.0.0.1:41002"
    page = (b"<!doctype html><html><head><title>Article 1</title></head><body><h1>Article 1</h1>"
            b"<p>The same bytes on the origin and on its exact mirror.</p></body></html>\n")
    other = b"<!doctype html><html><body><p>Article 2, whose query has unsorted parameters.</p></body></html>\n"
    cdxj = []
    base_date = "2026-10-20T10:00:0{}.123456Z"
    n = [0]

    def date():
        n[0] += 1
        return base_date.format(n[0])

    def req_record(w, url, dt):
        path = url.split("/", 3)[3] if url.count("/") >= 3 else ""
        host = url.split("/")[2]
        hh = StatusAndHeaders(f"GET /{path} HTTP/1.1",
                              [("Host", host), ("User-Agent", "simcrawl/sample"),
                               ("Accept", "*/*")], is_http_request=True)
        rec = w.create_warc_record(url, "request", http_headers=hh,
                                   warc_headers_dict=OrderedDict([("WARC-Date", dt)]))
        return rec

    def resp_headers(body):
        return StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8"),
                                           ("Content-Length", str(len(body)))], protocol="HTTP/1.1")

    def write(fh, w, rec, fname, index=True):
        off = fh.tell()
        w.write_record(rec)
        length = fh.tell() - off
        rid = rec.rec_headers.get_header("WARC-Record-ID")
        if index and rec.rec_type in ("response", "revisit"):
            url = rec.rec_headers.get_header("WARC-Target-URI")
            obj = OrderedDict(url=url)
            if rec.rec_type == "revisit":
                obj["mime"] = "warc/revisit"
            else:
                obj["mime"] = rec.http_headers.get_header("Content-Type").split(";")[0].strip()
                obj["status"] = rec.http_headers.get_statuscode()
            obj["digest"] = rec.rec_headers.get_header("WARC-Payload-Digest")[5:]
            obj["length"] = str(length)
            obj["offset"] = str(off)
            obj["filename"] = fname
            ts = iso_date_to_timestamp(rec.rec_headers.get_header("WARC-Date"))
            cdxj.append(f"{surt.surt(url)} {ts} {json.dumps(obj)}")
        return rid

    def warcinfo(w, fh, fname):
        rec = w.create_warcinfo_record(fname, OrderedDict(
            [("software", "simcrawl sample (warcio writer)"), ("format", "WARC File Format 1.1"),
             ("robots", "classic")]))
        write(fh, w, rec, fname)

    # file 1: warcinfo, request+response for the origin page, request+response for a query URL
    f1 = "sample-00000.warc.gz"
    with open(os.path.join(args.out_dir, f1), "wb") as fh:
        w = WARCWriter(fh, gzip=True, warc_version="1.1")
        warcinfo(w, fh, f1)
        url_a = origin + "/articles/1.html"
        dt_a = date()
        resp = w.create_warc_record(url_a, "response", payload=io.BytesIO(page), length=len(page),
                                    http_headers=resp_headers(page),
                                    warc_headers_dict=OrderedDict([("WARC-Date", dt_a),
                                                                   ("WARC-IP-Address", "127.0.0.1")]))
        if args.bad_digest:
            resp.rec_headers.replace_header("WARC-Payload-Digest", sha1_b32(b"not the payload"))
        resp_id = write(fh, w, resp, f1)
        req = req_record(w, url_a, dt_a)
        req.rec_headers.add_header("WARC-Concurrent-To", resp_id)
        write(fh, w, req, f1)
        digest_a = resp.rec_headers.get_header("WARC-Payload-Digest")

        url_q = origin + "/Search/?q=Two&b=1&a=2"
        dt_q = date()
        resp = w.create_warc_record(url_q, "response", payload=io.BytesIO(other), length=len(other),
                                    http_headers=resp_headers(other),
                                    warc_headers_dict=OrderedDict([("WARC-Date", dt_q)]))
        rid = write(fh, w, resp, f1)
        req = req_record(w, url_q, dt_q)
        req.rec_headers.add_header("WARC-Concurrent-To", rid)
        write(fh, w, req, f1)

    # file 2: warcinfo, an exact duplicate on the mirror as a revisit, a near-duplicate's metadata
    f2 = "sample-00001.warc.gz"
    with open(os.path.join(args.out_dir, f2), "wb") as fh:
        w = WARCWriter(fh, gzip=True, warc_version="1.1")
        warcinfo(w, fh, f2)
        url_b = mirror + "/articles/1.html"
        dt_b = date()
        rev = w.create_revisit_record(url_b, digest_a, url_a, dt_a, http_headers=resp_headers(page),
                                      warc_headers_dict=OrderedDict([("WARC-Date", dt_b)]))
        rev.rec_headers.add_header("WARC-Truncated", "length")
        rev_id = write(fh, w, rev, f2)
        req = req_record(w, url_b, dt_b)
        req.rec_headers.add_header("WARC-Concurrent-To", rev_id)
        write(fh, w, req, f2)

        url_c = mirror + "/articles/1-print.html"
        dt_c = date()
        req = req_record(w, url_c, dt_c)
        req_id = write(fh, w, req, f2)
        body = (f"near-duplicate-of: {url_a}\r\nnear-duplicate-of-date: {dt_a}\r\n"
                f"simhash-distance: 2\r\n").encode()
        meta = w.create_warc_record(url_c, "metadata", payload=io.BytesIO(body), length=len(body),
                                    warc_content_type="application/warc-fields",
                                    warc_headers_dict=OrderedDict([("WARC-Date", dt_c),
                                                                   ("WARC-Concurrent-To", req_id)]))
        write(fh, w, meta, f2)
    cdxj.sort(key=lambda s: s.encode())
    with open(args.cdxj_out, "w") as fh:
        fh.write("".join(l + "\n" for l in cdxj))
    print(f"sample: wrote {f1}, {f2} in {args.out_dir} and {len(cdxj)} CDXJ line(s) in {args.cdxj_out}")
    return 0


SURT_CASES = [
    "http://127.0.0.1:8080/a/B.html?b=2&a=1",
    "http://127.0.0.1/",
    "http://127.0.0.1:80/x",
    "https://127.0.0.1:443/x",
    "http://[::1]:9000/x",
    "http://localhost:8000/a//b/../c/./d",
    "https://www.Example.com/Path/?Z=1&a",
    "http://www2.example.com:80/x/#frag",
    "http://wwwx.example.com/x",
    "http://example.com",
    "http://example.com/",
    "http://EXAMPLE.com./x?",
    "http://user:pw@example.com/x",
    "http://example.com/x?a=1&a=0&b",
    "http://example.com/x?B=1&a=2",
    "http://example.com/%7Efoo/a%20b/%41",
    "http://example.com/a%2Fb?q=%41%2f",
    "http://example.com/caf\u00e9?q=\u00e9",
    "http://example.com/dir/",
    "http://example.com/x;jsessionid=0123456789abcdef0123456789abcdef",
    "http://example.com/about.html?sid=0123456789abcdef0123456789abcdef",
    "http://example.com/a?x=1&sid=0123456789ABCDEF0123456789abcdef&y=2",
    "http://example.com/a?x=1&foosid=0123456789abcdef0123456789abcdef",
    "http://example.com/a?PHPSESSID=0123456789abcdef0123456789abcdef&q=1",
    "http://example.com/a?sessionid=0123456789abcdef",
    "http://example.com/a?utm_source=x&id=3",
]


def cmd_surt(args):
    import surt

    urls = args.urls
    if not urls and not sys.stdin.isatty():
        urls = [l.strip() for l in sys.stdin if l.strip()]
    if not urls:
        urls = SURT_CASES
    for u in urls:
        print(f"{u}\t{surt.surt(u)}")
    return 0


def cmd_free_port(args):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    print(s.getsockname()[1])
    s.close()
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sample")
    s.add_argument("out_dir")
    s.add_argument("cdxj_out")
    s.add_argument("--bad-digest", action="store_true")
    s.set_defaults(func=cmd_sample)
    s = sub.add_parser("structure")
    s.add_argument("warcs", nargs="+")
    s.add_argument("--require", default="", help="record types that must occur (comma-separated)")
    s.add_argument("--expect", default="", help="record types whose absence is a warning")
    s.set_defaults(func=cmd_structure)
    s = sub.add_parser("compare-cdxj")
    s.add_argument("cdxj")
    s.add_argument("warcs", nargs="+")
    s.add_argument("--warcio", default="warcio")
    s.add_argument("--reference-out")
    s.set_defaults(func=cmd_compare_cdxj)
    s = sub.add_parser("wait")
    s.add_argument("url")
    s.add_argument("--timeout", type=float, default=60)
    s.set_defaults(func=cmd_wait)
    s = sub.add_parser("replay")
    s.add_argument("base")
    s.add_argument("coll")
    s.add_argument("warcs", nargs="+")
    s.add_argument("--limit", type=int, default=50)
    s.add_argument("--need-revisit", action="store_true")
    s.set_defaults(func=cmd_replay)
    s = sub.add_parser("surt")
    s.add_argument("urls", nargs="*")
    s.set_defaults(func=cmd_surt)
    s = sub.add_parser("free-port")
    s.set_defaults(func=cmd_free_port)
    args = p.parse_args()
    sys.exit(args.func(args))


if __name__ == "__main__":
    main()
