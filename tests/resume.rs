//! A crawl killed with SIGKILL resumes on the same store, and ends with the same index as a crawl that
//! was never interrupted: nothing indexed is lost or indexed twice.

use crate::util::{Dir, Web, assert_success, crawl, indexed, simcrawl};
use std::collections::BTreeSet;

#[test]
fn resume_after_kill_gives_the_same_index_as_an_uninterrupted_crawl() {
    let web = Web::small();
    let seeds = web.web.seeds();

    // The reference: one uninterrupted crawl.
    let reference = Dir::new();
    assert_success(&crawl(&reference.store(), &seeds, &[]));
    let expected: BTreeSet<String> = indexed(&reference.store())
        .into_iter()
        .map(|p| p.url)
        .collect();
    assert!(
        expected.len() > 20,
        "the reference crawl indexed too little: {}",
        expected.len()
    );

    // The same crawl, slowed down, killed mid-way, then run again until done.
    let dir = Dir::new();
    // Killed mid-way: once the web has answered 40 requests.
    crate::util::crawl_killed_after(&dir.store(), &web, &[], 40);
    // Resume: no seeds, the store remembers the frontier. The report says what the guide
    // promises, and no log line shouts it.
    let out = crawl(&dir.store(), &[], &[]);
    assert_success(&out);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        stdout.contains("resumed after an unclean stop: the store held"),
        "{stdout}"
    );
    assert!(!stderr.contains("WARN"), "{stderr}");
    let pages = indexed(&dir.store());
    let urls: Vec<String> = pages.iter().map(|p| p.url.clone()).collect();
    let unique: BTreeSet<String> = urls.iter().cloned().collect();
    assert_eq!(
        urls.len(),
        unique.len(),
        "a page was indexed twice after the resume"
    );
    // The first copy of a document can differ between runs (which copy is met first depends on timing),
    // so compare the documents, not the URLs.
    let manifest = web.web.manifest();
    let docs = |urls: &BTreeSet<String>| -> BTreeSet<_> {
        urls.iter()
            .filter_map(|u| manifest.document_of(u))
            .collect()
    };
    assert_eq!(docs(&unique), docs(&expected));
}

/// A resume with another `--k` says so; a crawl that is over, run again, says there is nothing
/// to do rather than print a summary of zeros.
#[test]
fn a_resume_says_what_changed_and_a_finished_crawl_that_nothing_is_left() {
    let web = Web::small();
    let dir = Dir::new();
    assert_success(&crawl(
        &dir.store(),
        &web.web.seeds(),
        &["--max-pages", "5"],
    ));
    let out = crawl(&dir.store(), &[], &["--k", "4"]);
    assert_success(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("4 in this run, 3 before"), "{stdout}");
    let again = crawl(&dir.store(), &[], &["--k", "4"]);
    assert_success(&again);
    let again = String::from_utf8_lossy(&again.stdout);
    assert!(again.starts_with("nothing to do"), "{again}");
    assert!(!again.contains("not closed cleanly"), "{again}");
    // Seeds known already and another k: said so, not 'give seeds'.
    let seeded = crawl(&dir.store(), &web.web.seeds(), &["--k", "6"]);
    assert_success(&seeded);
    let seeded = String::from_utf8_lossy(&seeded.stdout);
    assert!(
        seeded.contains("the seeds given were crawled already"),
        "{seeded}"
    );
    assert!(seeded.contains("k = 6 now, 4 before"), "{seeded}");
    // The pid a killed crawl leaves in the lock file: read by `stats` (which must keep it), then
    // a crawl with nothing left to do still says the store was not closed cleanly.
    std::fs::write(dir.store().join("simcrawl.lock"), "4242\n").expect("lock file");
    let stats = simcrawl()
        .args(["stats", "--store"])
        .arg(dir.store())
        .output()
        .expect("simcrawl runs");
    assert_success(&stats);
    let note = String::from_utf8_lossy(&stats.stderr);
    assert!(note.contains("was not closed cleanly"), "{note}");
    let after_crash = crawl(&dir.store(), &[], &[]);
    assert_success(&after_crash);
    let after_crash = String::from_utf8_lossy(&after_crash.stdout);
    assert!(after_crash.starts_with("nothing to do"), "{after_crash}");
    assert!(
        after_crash.contains("resumed after an unclean stop")
            && after_crash.contains("not closed cleanly (a crash or kill)"),
        "{after_crash}"
    );
}

#[test]
fn ctrl_c_finishes_in_flight_fetches_flushes_and_reports() {
    interrupted_by("-INT", 130);
}

#[test]
fn sigterm_stops_the_crawl_as_ctrl_c_does() {
    interrupted_by("-TERM", 143);
}

/// A crawl sent `signal` mid-way finishes its fetches in flight, flushes, reports and exits
/// with `code`; the next run resumes and keeps what the first indexed.
fn interrupted_by(signal: &str, code: i32) {
    let web = Web::small();
    let dir = Dir::new();
    let child = simcrawl()
        .args(["crawl", "--delay", "0.05", "--concurrency", "2", "--store"])
        .arg(dir.store())
        .args(web.web.seeds())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("simcrawl starts");
    // Interrupted mid-way: once the web has answered 20 requests.
    crate::util::wait_for_requests(&web, 0, 20);
    let status = std::process::Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let out = child.wait_with_output().expect("the crawl stops");
    assert_eq!(
        out.status.code(),
        Some(code),
        "{:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("crawl interrupted"), "{stdout}");
    let first = indexed(&dir.store()).len();
    assert!(first > 0, "nothing was indexed before the interrupt");
    // Closed cleanly: the next run resumes without a crash's note, and finishes.
    let next = crawl(&dir.store(), &[], &[]);
    assert_success(&next);
    let next = String::from_utf8_lossy(&next.stdout);
    assert!(!next.contains("not closed cleanly"), "{next}");
    assert!(indexed(&dir.store()).len() > first);
}

#[test]
fn stats_while_a_crawl_runs_reads_its_last_checkpoint() {
    let web = Web::small();
    let dir = Dir::new();
    let child = simcrawl()
        .args(["crawl", "--delay", "0.3", "--concurrency", "2", "--store"])
        .arg(dir.store())
        .args(web.web.seeds())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("simcrawl starts");
    crate::util::wait_for_requests(&web, 0, 5);
    // The store is locked by the crawl; `stats` reads the figures of its last checkpoint (one
    // at the start, then one every five seconds) until they show pages fetched.
    let started = std::time::Instant::now();
    let live = loop {
        let out = simcrawl()
            .args(["stats", "--json", "--store"])
            .arg(dir.store())
            .output()
            .expect("simcrawl stats runs");
        assert_success(&out);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&format!("a crawl (process {}) is running in", child.id())),
            "{stderr}"
        );
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        let fetched = json["fetched"].as_u64().expect("fetched");
        if fetched > 0 {
            break json;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "no checkpoint with a page fetched: {json}"
        );
        std::thread::sleep(std::time::Duration::from_millis(300));
    };
    // Other reads still say the store is in use.
    let out = simcrawl()
        .args(["skipped", "--store"])
        .arg(dir.store())
        .output()
        .expect("simcrawl skipped runs");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("store is in use"));
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    child.wait_with_output().expect("the crawl stops");
    // Stopped, the store is read itself, and holds at least what the checkpoint said.
    let out = simcrawl()
        .args(["stats", "--json", "--store"])
        .arg(dir.store())
        .output()
        .expect("simcrawl stats runs");
    assert_success(&out);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("is running in"));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    for key in ["fetched", "indexed", "indexed_pages", "skipped_total"] {
        assert!(
            json[key].as_u64() >= live[key].as_u64(),
            "{key}: {} after the crawl, {} at its checkpoint",
            json[key],
            live[key]
        );
    }
}

/// Every file under `dir`: its bytes and its modification time.
fn files(
    dir: &std::path::Path,
) -> std::collections::BTreeMap<std::path::PathBuf, (Vec<u8>, std::time::SystemTime)> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).expect("read a directory") {
            let entry = entry.expect("an entry");
            let meta = entry.metadata().expect("metadata");
            if meta.is_dir() {
                stack.push(entry.path());
            } else {
                let bytes = std::fs::read(entry.path()).expect("read a file");
                out.insert(entry.path(), (bytes, meta.modified().expect("mtime")));
            }
        }
    }
    out
}

/// A finished crawl's store, read by every command that reads one: no file of it changes in
/// bytes or modification time, none is made or removed (sled's own files included), and no
/// copy of it is made.
#[test]
fn reading_a_finished_crawl_changes_no_file_of_its_store() {
    let web = Web::small();
    let dir = Dir::new();
    assert_success(&crawl(
        &dir.store(),
        &web.web.seeds(),
        &["--max-pages", "60"],
    ));
    let before = files(&dir.store());
    let temp_entries = || {
        std::fs::read_dir(std::env::temp_dir())
            .map(|d| {
                d.filter_map(Result::ok)
                    .filter(|e| {
                        e.file_name()
                            .to_string_lossy()
                            .starts_with("simcrawl-snapshot")
                    })
                    .count()
            })
            .unwrap_or(0)
    };
    let copies_before = temp_entries();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let report = dir.path("report.html");
    let report = report.to_str().expect("a UTF-8 path");
    for args in [
        &["stats"][..],
        &["skipped", "--limit", "5"],
        &["export", "--format", "jsonl"],
        &["report", "--out", report],
        &["search", "article"],
        &["tune"],
        &["clusters"],
        &["mirrors"],
    ] {
        let out = simcrawl()
            .args(args)
            .arg("--store")
            .arg(dir.store())
            .output()
            .expect("simcrawl runs");
        assert_success(&out);
        let after = files(&dir.store());
        let names = |m: &std::collections::BTreeMap<std::path::PathBuf, _>| {
            m.keys().cloned().collect::<Vec<_>>()
        };
        assert_eq!(
            names(&before),
            names(&after),
            "{args:?} made or removed files"
        );
        for (file, (bytes, time)) in &before {
            let (bytes_after, time_after) = &after[file];
            assert!(bytes == bytes_after, "{args:?} changed {}", file.display());
            assert_eq!(time, time_after, "{args:?} wrote {}", file.display());
        }
    }
    assert_eq!(
        temp_entries(),
        copies_before,
        "a read made a copy of the store"
    );
}

/// A crawl with `--out` killed mid-way, its file left as a crash leaves it (a line cut in the
/// middle, a line of a page the store did not keep, a page's line lost from the writer's
/// buffer): the resumed crawl's `--out` file has every indexed page once, as the store has it.
#[test]
fn the_out_file_of_a_killed_crawl_holds_each_indexed_page_once_after_the_resume() {
    let web = Web::small();
    let dir = Dir::new();
    let out_file = dir.path("pages.jsonl");
    let out_arg = out_file.to_str().expect("a UTF-8 path").to_owned();
    crate::util::crawl_killed_after(
        &dir.store(),
        &web,
        &["--output", "jsonl", "--out", &out_arg],
        40,
    );
    // What a crash can leave besides: the last whole line's page lost from the store (a line
    // naming an id the store will give another page), the line before it lost from the file,
    // and a line cut short.
    let text = std::fs::read_to_string(&out_file).unwrap_or_default();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    assert!(
        lines.len() >= 3,
        "too few lines written before the kill: {text}"
    );
    let last = lines.pop().expect("a line");
    lines.pop();
    lines.push(last.replace("\"url\":\"http", "\"url\":\"http://lost.invalid/#http"));
    lines.push(lines[0].clone());
    let torn = &lines[1][..lines[1].len() / 2];
    std::fs::write(&out_file, lines.join("\n") + "\n" + torn).expect("write");

    let out = crawl(&dir.store(), &[], &["--output", "jsonl", "--out", &out_arg]);
    assert_success(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("--out repaired"), "{stdout}");
    // The file as the kill left it is kept beside.
    let before = std::fs::read_to_string(dir.path("pages.jsonl.before-repair")).expect("kept");
    assert!(before.ends_with(torn), "{before}");
    let mut ids = BTreeSet::new();
    let mut pages = BTreeSet::new();
    for line in std::fs::read_to_string(&out_file).expect("read").lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("every line is JSON");
        let id = v["id"].as_u64().expect("an id");
        assert!(ids.insert(id), "page {id} is in the file twice");
        pages.insert((id, v["url"].as_str().expect("a URL").to_owned()));
    }
    let stored: BTreeSet<(u64, String)> = indexed(&dir.store())
        .into_iter()
        .map(|p| (u64::from(p.id), p.url))
        .collect();
    assert_eq!(pages, stored);
}
