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
}

#[test]
fn ctrl_c_finishes_in_flight_fetches_flushes_and_reports() {
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
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let out = child.wait_with_output().expect("the crawl stops");
    assert_eq!(
        out.status.code(),
        Some(130),
        "{:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("crawl interrupted"), "{stdout}");
    let first = indexed(&dir.store()).len();
    assert!(first > 0, "nothing was indexed before the interrupt");
    // The next run resumes and finishes; what the first indexed is kept.
    assert_success(&crawl(&dir.store(), &[], &[]));
    assert!(indexed(&dir.store()).len() > first);
}
