//! A host that copies another for its first pages, then diverges: the mirror rule learned from the
//! copies is revoked by a verification fetch, and every URL skipped under it is crawled after all.
//! Nothing distinct is lost to a rule that turned out wrong.

use crate::util::{Dir, assert_success, crawl, indexed, skip_log};
use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::TcpListener;

/// Articles on each host; the first `SHARED` are byte-identical on both.
const ARTICLES: usize = 40;
const SHARED: usize = 8;

/// A page of 150 words drawn from a seed: different seeds give unrelated texts.
fn article(seed: u64) -> String {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let words: Vec<String> = (0..150)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Letters only: fingerprints ignore digits.
            let mut n = x % 20_000;
            let mut word = String::new();
            for _ in 0..4 {
                word.push(char::from(b'a' + (n % 26) as u8));
                n /= 26;
            }
            word
        })
        .collect();
    format!(
        "<html><head><title>Article {seed}</title></head><body><article><p>{}</p></article></body></html>",
        words.join(" ")
    )
}

fn home() -> String {
    let links: String = (0..ARTICLES)
        .map(|i| format!("<li><a href=\"/p/{i}\">article {i}</a></li>"))
        .collect();
    format!("<html><head><title>Home</title></head><body><ul>{links}</ul></body></html>")
}

/// Serves the site on 127.0.0.1 (port 0) from a thread; `diverged` says whether this host's
/// articles from `SHARED` on are its own. Returns the seed URL.
fn serve(diverged: bool) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let port = listener.local_addr().expect("its address").port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request = Vec::new();
            let mut buf = [0u8; 1024];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&buf[..n]),
                }
            }
            let line = String::from_utf8_lossy(&request);
            let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
            let page = match path.strip_prefix("/p/").map(str::parse::<usize>) {
                None if path == "/" => Some(home()),
                Some(Ok(i)) if i < ARTICLES => {
                    let own = diverged && i >= SHARED;
                    Some(article(i as u64 + if own { 1_000 } else { 0 }))
                }
                _ => None,
            };
            let response = match page {
                Some(body) => format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                ),
                None => "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    .to_string(),
            };
            let _ = stream.write_all(response.as_bytes());
        }
    });
    format!("http://127.0.0.1:{port}/")
}

#[test]
fn urls_skipped_under_a_revoked_mirror_rule_are_crawled_after_all() {
    let origin = serve(false);
    let copy = serve(true);
    let dir = Dir::new();
    let warc = dir.path("warc");
    let out = crawl(
        &dir.store(),
        &[origin.clone(), copy.clone()],
        &[
            "--warc",
            warc.to_str().expect("a UTF-8 path"),
            "--min-evidence",
            "3",
            "--verify-every",
            "2",
            "--verify-every-max",
            "2",
        ],
    );
    assert_success(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    // The scenario happened: a mirror rule was learned from the shared articles, then revoked.
    assert!(
        stdout.contains("rule revoked"),
        "no rule was revoked:\n{stdout}"
    );
    // (Those skips were withdrawn when the rule was revoked: they are in the log's history.)
    assert!(
        skip_log(&dir.store())
            .iter()
            .any(|s| s.rule.as_deref().is_some_and(|r| r.starts_with("mirror"))),
        "nothing was skipped under the mirror rule:\n{stdout}"
    );

    // Every distinct article is indexed: each host's own ones, and one copy of each shared one.
    let urls: BTreeSet<String> = indexed(&dir.store()).into_iter().map(|p| p.url).collect();
    // The archive says so too: a URL archived as skipped under the rule and fetched since (the
    // revocation queued it again) has a record saying that skip was withdrawn, after the skip.
    let records = crate::warc::records(&warc);
    let verdict = |r: &simcrawl_warc::ReadRecord| crate::warc::block_field(r, "simcrawl-verdict");
    let mut by_url: std::collections::BTreeMap<&str, Vec<&simcrawl_warc::ReadRecord>> =
        Default::default();
    for r in &records {
        if let Some(url) = r.field("WARC-Target-URI") {
            by_url.entry(url).or_default().push(r);
        }
    }
    let mut checked = 0;
    for (url, of_url) in &by_url {
        let Some(skipped) = of_url.iter().position(|r| {
            verdict(r).as_deref() == Some("skipped")
                && crate::warc::block_field(r, "simcrawl-reason").as_deref() == Some("mirror")
        }) else {
            continue;
        };
        let after = &of_url[skipped..];
        let Some(fetched) = after
            .iter()
            .position(|r| matches!(r.field("WARC-Type"), Some("response" | "revisit")))
        else {
            continue;
        };
        checked += 1;
        assert!(
            after[..fetched]
                .iter()
                .any(|r| verdict(r).as_deref() == Some("withdrawn")),
            "{url}: archived as skipped, fetched after, never withdrawn"
        );
    }
    assert!(
        checked > 0,
        "no URL skipped under the rule was fetched after all"
    );
    for i in 0..ARTICLES {
        let on_origin = format!("{origin}p/{i}");
        let on_copy = format!("{copy}p/{i}");
        if i < SHARED {
            assert!(
                urls.contains(&on_origin) || urls.contains(&on_copy),
                "shared article {i} is not indexed: {urls:?}\n{stdout}"
            );
        } else {
            assert!(
                urls.contains(&on_origin) && urls.contains(&on_copy),
                "article {i} is missing from one host: {urls:?}\n{stdout}"
            );
        }
    }
}

/// The indexed URLs of the crawl in `stores`, and whether every article of the two hosts is one
/// of them: each host's own, and one copy of each shared one.
fn every_article_indexed(stores: &[std::path::PathBuf], origin: &str, copy: &str) -> Vec<String> {
    let urls: BTreeSet<String> = stores
        .iter()
        .flat_map(|s| indexed(s))
        .map(|p| p.url)
        .collect();
    (0..ARTICLES)
        .filter(|&i| {
            let (on_origin, on_copy) = (format!("{origin}p/{i}"), format!("{copy}p/{i}"));
            if i < SHARED {
                !urls.contains(&on_origin) && !urls.contains(&on_copy)
            } else {
                !urls.contains(&on_origin) || !urls.contains(&on_copy)
            }
        })
        .map(|i| format!("article {i}"))
        .collect()
}

/// A mirror that its schedule never verifies (`--verify-every 1000`) has its skips fetched as
/// verifications when the crawl runs dry, so that the diverged articles it skipped are found: by
/// one process, and by two (every process checks the rules' skips it logged at the first round in
/// which all are idle, and the crawl ends at the next such round).
#[test]
fn a_mirror_its_schedule_never_checks_is_checked_before_the_crawl_ends_on_one_process_and_two() {
    let origin = serve(false);
    let copy = serve(true);
    let seeds = [origin.clone(), copy.clone()];
    let flags = ["--min-evidence", "3", "--verify-every", "1000"];

    let dir = Dir::new();
    let out = crawl(&dir.store(), &seeds, &flags);
    assert_success(&out);
    let missing = every_article_indexed(&[dir.store()], &origin, &copy);
    assert!(
        missing.is_empty(),
        "one process: {missing:?} not indexed\n{}",
        String::from_utf8_lossy(&out.stdout)
    );

    let dir = Dir::new();
    let hosts = crate::sharded::hostfile(&dir, 2);
    let mut extra = vec!["--delay", "0", "--concurrency", "8"];
    extra.extend(flags);
    let outputs: Vec<_> = (0..2)
        .map(|i| crate::sharded::start(&dir, &hosts, 2, i, &seeds, &extra))
        .collect::<Vec<_>>()
        .into_iter()
        .map(|c| c.wait_with_output().expect("simcrawl ends"))
        .collect();
    for out in &outputs {
        assert_success(out);
    }
    let stores = [dir.path("shard0"), dir.path("shard1")];
    let missing = every_article_indexed(&stores, &origin, &copy);
    assert!(
        missing.is_empty(),
        "two processes: {missing:?} not indexed\n{}\n{}",
        String::from_utf8_lossy(&outputs[0].stdout),
        String::from_utf8_lossy(&outputs[1].stdout)
    );
}
