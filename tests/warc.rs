//! `--warc`: the crawl's web archive. Every fetched page is a response (or a revisit when its
//! payload was archived before), every skip a metadata record with its reason, the CDXJ export
//! indexes what the files hold, and a kill -9 leaves files that read whole after the resume.

use crate::util::{Dir, Web, assert_success, crawl, indexed, simcrawl};
use simcrawl_warc::{ReadRecord, files, index_files, scan};
use std::collections::{BTreeSet, HashMap};

pub(crate) fn records(dir: &std::path::Path) -> Vec<ReadRecord> {
    let mut out = Vec::new();
    for file in files(dir).expect("WARC files") {
        let scan = scan(&file, true).expect("scan");
        assert_eq!(
            scan.valid_len,
            scan.file_len,
            "{} ends in a partial record",
            file.display()
        );
        out.extend(scan.records);
    }
    out
}

/// Checks that every page the store indexed is the target of a response or revisit record.
fn every_indexed_page_is_captured(records: &[ReadRecord], store: &std::path::Path) {
    let captured: BTreeSet<&str> = records
        .iter()
        .filter(|r| matches!(r.field("WARC-Type"), Some("response" | "revisit")))
        .filter_map(|r| r.field("WARC-Target-URI"))
        .collect();
    for page in indexed(store) {
        assert!(
            captured.contains(page.url.as_str()),
            "{} not archived",
            page.url
        );
    }
}

/// The block's `name: value` fields (metadata records).
pub(crate) fn block_field(record: &ReadRecord, name: &str) -> Option<String> {
    let text = String::from_utf8_lossy(&record.block_head);
    text.split("\r\n")
        .find_map(|l| l.strip_prefix(&format!("{name}: ")).map(str::to_owned))
}

#[test]
fn every_fetch_and_every_skip_is_in_the_archive() {
    let web = Web::small();
    let dir = Dir::new();
    let warc = dir.path("warc");
    let out = crawl(
        &dir.store(),
        &web.web.seeds(),
        &[
            "--warc",
            warc.to_str().expect("utf-8 path"),
            "--warc-max-size",
            "200K",
        ],
    );
    assert_success(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("archive "), "{stdout}");

    let records = records(&warc);
    assert!(
        files(&warc).expect("files").len() >= 2,
        "files roll at --warc-max-size"
    );
    let of = |kind: &'static str| {
        records
            .iter()
            .filter(move |r| r.field("WARC-Type") == Some(kind))
    };
    // Every indexed page has a response record (or a revisit of an identical payload).
    every_indexed_page_is_captured(&records, &dir.store());
    // A revisit points at a response with the same payload digest, URL and date.
    let responses: HashMap<(&str, &str), &ReadRecord> = of("response")
        .map(|r| {
            (
                (
                    r.field("WARC-Target-URI").expect("target"),
                    r.field("WARC-Date").expect("date"),
                ),
                r,
            )
        })
        .collect();
    let mut revisits = 0;
    for revisit in of("revisit") {
        revisits += 1;
        let original = responses
            .get(&(
                revisit
                    .field("WARC-Refers-To-Target-URI")
                    .expect("refers-to URI"),
                revisit
                    .field("WARC-Refers-To-Date")
                    .expect("refers-to date"),
            ))
            .expect("the revisit's original is a response in the archive");
        assert_eq!(
            original.field("WARC-Payload-Digest"),
            revisit.field("WARC-Payload-Digest")
        );
    }
    assert!(revisits > 0, "the test web has exact copies");
    // Every skip in the log has a metadata record with its reason; those decided after fetching
    // are concurrent to a record of the archive.
    let ids: BTreeSet<&str> = records
        .iter()
        .filter_map(|r| r.field("WARC-Record-ID"))
        .collect();
    let (metadata, withdrawn): (Vec<&ReadRecord>, Vec<&ReadRecord>) = of("metadata")
        .partition(|r| block_field(r, "simcrawl-verdict").as_deref() != Some("withdrawn"));
    // Withdrawn entries too: the archive is the crawl's history (and says which were
    // withdrawn, each after its skip).
    let skips = crate::util::skip_log(&dir.store());
    assert_eq!(metadata.len(), skips.len());
    for record in &withdrawn {
        assert!(block_field(record, "simcrawl-reason").is_some());
    }
    for record in &metadata {
        let reason = block_field(record, "simcrawl-reason").expect("a reason");
        let fetched = block_field(record, "simcrawl-fetched").expect("fetched or not");
        match record.field("WARC-Concurrent-To") {
            Some(id) => {
                assert_eq!(fetched, "yes", "{reason}");
                assert!(ids.contains(id), "concurrent to a record of the archive");
            }
            None => assert_eq!(fetched, "no", "{reason}"),
        }
    }
    // The CDXJ export is the index of the files: one line per response and revisit.
    let export = simcrawl()
        .args(["export", "--format", "cdxj", "--store"])
        .arg(dir.store())
        .output()
        .expect("export runs");
    assert_success(&export);
    let lines: Vec<String> = String::from_utf8_lossy(&export.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(lines.len(), of("response").count() + revisits);
    let mut sorted = lines.clone();
    sorted.sort();
    assert_eq!(lines, sorted, "CDXJ lines are sorted");
    let direct: Vec<String> = index_files(&files(&warc).expect("files"))
        .expect("index")
        .into_iter()
        .map(|l| l.0)
        .collect();
    assert_eq!(lines, direct);
}

#[test]
fn a_killed_crawl_resumes_with_whole_warc_files() {
    let web = Web::small();
    let dir = Dir::new();
    let warc = dir.path("warc");
    // Killed mid-way: once the web has answered 40 requests.
    crate::util::crawl_killed_after(
        &dir.store(),
        &web,
        &["--warc", warc.to_str().expect("utf-8")],
        40,
    );
    // A kill can cut a record in half; simulate the worst case on top of whatever it left.
    let last = files(&warc).expect("files").pop().expect("a WARC file");
    {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&last)
            .expect("append");
        f.write_all(&[0x1f, 0x8b, 0x08, 0, 0, 0])
            .expect("a partial gzip header");
    }
    let out = crawl(
        &dir.store(),
        &[],
        &["--warc", warc.to_str().expect("utf-8")],
    );
    assert_success(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("archive repair"), "{stdout}");
    let records = records(&warc);
    every_indexed_page_is_captured(&records, &dir.store());
}
