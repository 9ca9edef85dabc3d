//! Servers that misbehave. Each scenario is served on 127.0.0.1 by a small thread of the test's
//! own; the crawl must finish with a clear outcome, never a panic.

use crate::util::{Dir, assert_success, crawl};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::thread;

/// The paths a test server was asked for, in order.
type Requests = Arc<Mutex<Vec<String>>>;

/// Serves `answer(path)` for every request, each connection on its own thread, until the test
/// ends. Every answer closes its connection. Returns the base URL and the request log.
pub fn serve(answer: impl Fn(&str) -> String + Send + Sync + 'static) -> (String, Requests) {
    serve_at("127.0.0.1", answer)
}

/// [`serve`] on another loopback address (`127.0.0.2`: another host on this machine).
pub fn serve_at(
    ip: &str,
    answer: impl Fn(&str) -> String + Send + Sync + 'static,
) -> (String, Requests) {
    let listener = TcpListener::bind((ip, 0)).expect("a loopback port");
    let base = format!("http://{}", listener.local_addr().expect("its address"));
    let log: Requests = Arc::default();
    let (answer, requests) = (Arc::new(answer), Arc::clone(&log));
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let (answer, requests) = (Arc::clone(&answer), Arc::clone(&requests));
            thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().expect("a clone"));
                let mut line = String::new();
                if reader.read_line(&mut line).is_err() {
                    return;
                }
                let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
                requests
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(path.clone());
                loop {
                    let mut header = String::new();
                    match reader.read_line(&mut header) {
                        Ok(n) if n > 2 => continue,
                        _ => break,
                    }
                }
                let _ = stream.write_all(answer(&path).as_bytes());
                let _ = stream.flush();
                let _ = stream.shutdown(std::net::Shutdown::Write);
            });
        }
    });
    (base, log)
}

fn html(body: &str) -> String {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// `simcrawl failed --format jsonl` of the store at `store`: the failure log, a JSON object a line.
fn failed_jsonl(store: &std::path::Path) -> String {
    let out = crate::util::simcrawl()
        .args(["failed", "--format", "jsonl", "--store"])
        .arg(store)
        .output()
        .expect("simcrawl failed runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn status(code: &str, extra: &str) -> String {
    format!("HTTP/1.1 {code}\r\n{extra}Content-Length: 0\r\nConnection: close\r\n\r\n")
}

/// A site crawled alone without a delay gets one request at a time, also past its first pages,
/// where its next request is handed out while the last is open and waits for its answer: a
/// server that takes its time over every answer never has two of the crawl's requests at once,
/// and every page is fetched once.
#[test]
fn a_slow_site_crawled_without_a_delay_has_one_request_at_a_time() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    const PAGES: usize = 150;
    let open = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let (counted_open, counted_most) = (Arc::clone(&open), Arc::clone(&most));
    let (base, log) = serve(move |path| {
        let now = counted_open.fetch_add(1, Ordering::SeqCst) + 1;
        counted_most.fetch_max(now, Ordering::SeqCst);
        thread::sleep(std::time::Duration::from_millis(2));
        let answer = match path
            .strip_prefix("/p/")
            .and_then(|n| n.parse::<usize>().ok())
        {
            Some(n) if n < PAGES => {
                // Distinct words on every page, and links to the next three.
                let words: String = (0..60)
                    .map(|i| format!("w{}x{} ", (n * 7919 + i * 104_729) % 100_003, i))
                    .collect();
                let links: String = (n + 1..(n + 4).min(PAGES))
                    .map(|m| format!("<a href=\"/p/{m}\">page {m}</a> "))
                    .collect();
                html(&format!(
                    "<title>Page {n}</title><p>{words}</p><p>{links}</p>"
                ))
            }
            _ => status("404 Not Found", ""),
        };
        counted_open.fetch_sub(1, Ordering::SeqCst);
        answer
    });
    let dir = Dir::new();
    let out = crawl(&dir.store(), &[format!("{base}/p/0")], &[]);
    assert_success(&out);
    let requests = log.lock().unwrap_or_else(|e| e.into_inner()).clone();
    for n in 0..PAGES {
        let path = format!("/p/{n}");
        let times = requests.iter().filter(|p| **p == path).count();
        assert_eq!(times, 1, "{path} fetched {times} times");
    }
    assert_eq!(
        most.load(Ordering::SeqCst),
        1,
        "requests at once to the site"
    );
}

/// A `Retry-After` of 10^23 seconds (it once overflowed the clock, then held the host ten
/// minutes, stored, so every resume hung too) parks the host for the run: no second request goes
/// to it, not even while the 429 is decided, the report names it, and the crawl exits 1 with its
/// URLs left queued. The next run asks the host again, and finishes.
#[test]
fn an_absurd_retry_after_parks_the_host_for_the_run_and_the_next_run_goes_on() {
    let (base, log) = serve(|path| {
        match path {
        "/robots.txt" => status("404 Not Found", ""),
        "/" => html(
            "<title>home</title><p>Three pages behind a busy server.</p><a href=\"/a\">a</a> <a href=\"/b\">b</a> <a href=\"/c\">c</a>",
        ),
        "/a" => "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 100000000000000000000000\r\nContent-Length: 4\r\nConnection: close\r\n\r\nbusy".to_string(),
        p => html(&format!("<title>{p}</title><p>The page at {p}, with words enough.</p>")),
    }
    });
    let dir = Dir::new();
    let out = crawl(&dir.store(), &[format!("{base}/")], &[]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("parked")
            && stdout.contains("Retry-After")
            && stdout.contains("2 URL(s) left queued"),
        "{stdout}"
    );
    assert!(stderr.contains("Retry-After"), "{stderr}");
    let asked = log.lock().unwrap_or_else(|e| e.into_inner()).clone();
    assert_eq!(
        asked.last().map(String::as_str),
        Some("/a"),
        "nothing after the 429: {asked:?}"
    );
    assert_eq!(asked.iter().filter(|p| *p == "/a").count(), 1, "{asked:?}");

    let out = crawl(&dir.store(), &[], &[]);
    assert_success(&out);
    let asked = log.lock().unwrap_or_else(|e| e.into_inner()).clone();
    assert!(
        asked.contains(&"/b".to_owned()) && asked.contains(&"/c".to_owned()),
        "{asked:?}"
    );
}

/// A redirect hop is checked like a link: a link to an allowed host that redirects to a host
/// outside `--include` is not fetched there, and a redirect into a path the target's robots.txt
/// disallows is not fetched either (its robots.txt is asked first).
#[test]
fn redirects_pass_the_same_scope_and_robots_checks_as_links() {
    let (outside, outside_log) = serve(|path| match path {
        "/robots.txt" => status("404 Not Found", ""),
        _ => html("<title>outside</title><p>Nothing to see here, but it is outside the scope.</p>"),
    });
    let (closed, closed_log) = serve(|path| {
        match path {
        "/robots.txt" => "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 25\r\nConnection: close\r\n\r\nUser-agent: *\nDisallow: /\n".to_string(),
        _ => html("<title>closed</title><p>A page that robots.txt disallows.</p>"),
    }
    });
    let (outside_base, closed_base) = (outside.clone(), closed.clone());
    let (site, _) = serve(move |path| match path {
        "/robots.txt" => status("404 Not Found", ""),
        "/" => html(
            "<title>home</title><p>Two links that redirect.</p><a href=\"/out\">out</a> <a href=\"/closed\">closed</a>",
        ),
        "/out" => status(
            "302 Found",
            &format!("Location: {outside_base}/page.html\r\n"),
        ),
        "/closed" => status(
            "302 Found",
            &format!("Location: {closed_base}/page.html\r\n"),
        ),
        _ => status("404 Not Found", ""),
    });
    let port = |base: &str| base.rsplit(':').next().unwrap_or("").to_string();
    let include = format!(r"^http://127\.0\.0\.1:({}|{})/", port(&site), port(&closed));
    let dir = Dir::new();
    let out = crawl(
        &dir.store(),
        &[format!("{site}/")],
        &["--scope", "any", "--include", &include],
    );
    assert_success(&out);
    let asked = |log: &Requests| log.lock().unwrap_or_else(|e| e.into_inner()).clone();
    assert!(
        asked(&outside_log).is_empty(),
        "outside --include: {:?}",
        asked(&outside_log)
    );
    assert_eq!(
        asked(&closed_log),
        ["/robots.txt"],
        "robots.txt disallows /"
    );
}

/// A fetch that gets no response is logged with its reason (`simcrawl failed`, counted by kind in
/// `stats`), and a crawl that fetched nothing says so with exit code 1.
#[test]
fn http_error_answers_are_listed_with_their_status_and_a_crawl_of_only_them_exits_1() {
    let (base, _) = serve(|path| match path {
        "/robots.txt" => status("404 Not Found", ""),
        "/gone.html" => status("410 Gone", ""),
        _ => status("404 Not Found", ""),
    });
    let dir = Dir::new();
    let seeds = [format!("{base}/nope.html"), format!("{base}/gone.html")];
    let out = crawl(&dir.store(), &seeds, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("HTTP error status"), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("HTTP errors     2"), "{stdout}");
    let text = failed_jsonl(&dir.store());
    for (seed, reason) in seeds.iter().zip(["http-404", "http-410"]) {
        let line = text
            .lines()
            .find(|l| l.contains(&format!("\"url\":\"{seed}\"")))
            .unwrap_or_else(|| panic!("{seed} not listed: {text}"));
        assert!(line.contains(&format!("\"reason\":\"{reason}\"")), "{line}");
    }
    // And by that reason alone.
    let only = crate::util::simcrawl()
        .args([
            "failed", "--reason", "http-410", "--format", "jsonl", "--store",
        ])
        .arg(dir.store())
        .output()
        .expect("simcrawl failed runs");
    assert_eq!(String::from_utf8_lossy(&only.stdout).lines().count(), 1);
}

#[test]
fn a_body_past_the_size_cap_is_cut_counted_and_said() {
    let (base, _) = serve(|path| match path {
        "/robots.txt" => status("404 Not Found", ""),
        _ => {
            // 11 MiB, past the fetcher's 10 MiB cap: a paragraph, then a comment (cheap to
            // parse in a debug build).
            let body = format!(
                "<html><head><title>big</title></head><body><p>the start of a large page</p><!--{}--></body></html>",
                "x".repeat(11 << 20)
            );
            format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
        }
    });
    let dir = Dir::new();
    let out = crawl(&dir.store(), &[format!("{base}/big.html")], &[]);
    assert_success(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("truncated       1"), "{stdout}");
    let stats = crate::util::simcrawl()
        .args(["stats", "--json", "--store"])
        .arg(dir.store())
        .output()
        .expect("simcrawl stats runs");
    let stats = String::from_utf8_lossy(&stats.stdout);
    assert!(stats.contains("\"truncated\":1"), "{stats}");
}

/// A robots.txt that answers 500 every time: the host is given up, each attempt is listed by
/// `simcrawl failed` with its status, and `-q` keeps standard error quiet (the exit code says it).
#[test]
fn a_robots_txt_answering_500_is_listed_and_q_keeps_quiet() {
    let (base, _) = serve(|path| match path {
        "/robots.txt" => status("500 Internal Server Error", ""),
        _ => status("404 Not Found", ""),
    });
    let dir = Dir::new();
    let out = crawl(
        &dir.store(),
        &[format!("{base}/")],
        &["--robots-retry", "0.05", "--robots-attempts", "2", "-q"],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = failed_jsonl(&dir.store());
    let robots: Vec<&str> = text.lines().filter(|l| l.contains("/robots.txt")).collect();
    assert_eq!(robots.len(), 2, "{text}");
    assert!(
        robots.iter().all(|l| l.contains("\"reason\":\"http-500\"")),
        "{text}"
    );
    assert!(robots[1].contains("\"will_retry\":false"), "{text}");
}

#[test]
fn failures_have_reasons_and_a_crawl_of_nothing_exits_1() {
    let (base, _) = serve(|path| match path {
        "/robots.txt" => status("404 Not Found", ""),
        _ => String::new(), // the connection closes without a byte
    });
    let dir = Dir::new();
    let out = crawl(&dir.store(), &[format!("{base}/")], &[]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = failed_jsonl(&dir.store());
    assert!(text.contains(&format!("\"url\":\"{base}/\"")), "{text}");
    assert!(text.contains("\"reason\":\"http\""), "{text}");
    let stats = crate::util::simcrawl()
        .args(["stats", "--json", "--store"])
        .arg(dir.store())
        .output()
        .expect("simcrawl stats runs");
    let stats = String::from_utf8_lossy(&stats.stdout);
    assert!(stats.contains("\"failed_by\":{\"http\":"), "{stats}");

    // A seed host that refuses connections: its robots.txt is given up, nothing is fetched.
    let dead = {
        let l = TcpListener::bind("127.0.0.1:0").expect("a port");
        let addr = l.local_addr().expect("its address");
        drop(l);
        format!("http://{addr}/")
    };
    let dir = Dir::new();
    let out = crawl(
        &dir.store(),
        &[dead],
        &["--robots-retry", "0.05", "--robots-attempts", "2"],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("robots.txt"));
    // The report counts them where `simcrawl failed` lists them.
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        report.contains("robots.txt      2 attempts got no answer"),
        "{report}"
    );
    // Each robots.txt attempt is in the failure log: the first to be retried, the last final.
    let text = failed_jsonl(&dir.store());
    let robots: Vec<&str> = text.lines().filter(|l| l.contains("/robots.txt")).collect();
    assert_eq!(robots.len(), 2, "{text}");
    assert!(robots[0].contains("\"will_retry\":true"), "{text}");
    assert!(robots[1].contains("\"will_retry\":false"), "{text}");
    assert!(robots[1].contains("\"reason\":\"connect\""), "{text}");
}

/// A host whose robots.txt asks for a crawl-delay over the cap is parked: its URLs stay queued,
/// the report names the host and what is left, and a crawl that could fetch nothing else exits 1.
/// With the default cap (30 s) the same host is crawled, 2 s between requests.
#[test]
fn a_host_parked_for_its_crawl_delay_is_reported_with_what_it_left() {
    let (base, log) = serve(|path| match path {
        "/robots.txt" => format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
            "User-agent: *\nCrawl-delay: 2\n".len(),
            "User-agent: *\nCrawl-delay: 2\n"
        ),
        _ => html("<html><title>t</title><body><p>page</p></body></html>"),
    });
    let dir = Dir::new();
    let out = crawl(
        &dir.store(),
        &[format!("{base}/")],
        &["--max-crawl-delay", "1"],
    );
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("parked") && stdout.contains("1 URL(s) left queued"),
        "{stdout}"
    );
    assert!(stderr.contains("--max-crawl-delay"), "{stderr}");
    assert_eq!(*log.lock().expect("log"), vec!["/robots.txt".to_owned()]);

    let dir = Dir::new();
    let out = crawl(&dir.store(), &[format!("{base}/")], &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(log.lock().expect("log").contains(&"/".to_owned()));
}

/// Redirects are followed through the frontier, one hop at a time, and a chain still ends at the
/// redirect limit (10): a 15-hop chain is a `too-many-redirects` failure, its end never fetched.
#[test]
fn a_long_redirect_chain_ends_at_the_limit() {
    let (base, log) = serve(|path| {
        if path == "/robots.txt" {
            return status("404 Not Found", "");
        }
        let n: u32 = path.trim_start_matches("/hop").parse().unwrap_or(0);
        if n < 15 {
            status("302 Found", &format!("Location: /hop{}\r\n", n + 1))
        } else {
            html("<title>end</title><p>The end of a long chain of redirects.</p>")
        }
    });
    let dir = Dir::new();
    let out = crawl(&dir.store(), &[format!("{base}/hop0")], &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    let asked = log.lock().unwrap_or_else(|e| e.into_inner()).clone();
    assert!(!asked.contains(&"/hop15".to_string()), "{asked:?}");
    assert!(asked.contains(&"/hop10".to_string()), "{asked:?}");
    assert!(failed_jsonl(&dir.store()).contains("too-many-redirects"));
}

/// `[ ] | ^` and the backquote are allowed only encoded in paths and queries (RFC 3986): a
/// link written raw and one written encoded name one URL, fetched once.
#[test]
fn raw_and_encoded_spellings_of_one_url_are_fetched_once() {
    let (base, log) = serve(|path| match path {
        "/robots.txt" => status("404 Not Found", ""),
        "/" => html(
            "<title>pairs</title><p>Links written two ways each.</p>\
             <a href=\"/a|b\">1</a> <a href=\"/a%7Cb\">2</a>\
             <a href=\"/c[1]\">3</a> <a href=\"/c%5B1%5D\">4</a>\
             <a href=\"/d^e\">5</a> <a href=\"/d%5Ee\">6</a>\
             <a href=\"/q?x=`y`\">7</a> <a href=\"/q?x=%60y%60\">8</a>",
        ),
        p => html(&format!(
            "<title>{p}</title><p>The page at {p}, with enough words to be a page.</p>"
        )),
    });
    let dir = Dir::new();
    let out = crawl(&dir.store(), &[format!("{base}/")], &[]);
    assert_success(&out);
    let asked = log.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let pages: Vec<&String> = asked
        .iter()
        .filter(|p| *p != "/robots.txt" && *p != "/")
        .collect();
    assert_eq!(pages.len(), 4, "one fetch per URL: {pages:?}");
}

/// Ctrl-C while a fetch stalls: the crawl stops within the grace period (5 s) instead of waiting
/// for the request's timeout and retries, and the stalled URL stays queued for the next run.
#[test]
fn ctrl_c_does_not_wait_for_a_stalled_fetch() {
    let (base, log) = serve(|path| {
        if path == "/robots.txt" {
            return status("404 Not Found", "");
        }
        std::thread::sleep(std::time::Duration::from_secs(60));
        String::new()
    });
    let dir = Dir::new();
    let child = crate::util::simcrawl()
        .args(["crawl", "--delay", "0", "--store"])
        .arg(dir.store())
        .arg(format!("{base}/"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("simcrawl runs");
    // Wait until the page request is out (the server has seen it), then interrupt.
    for _ in 0..600 {
        if log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .any(|p| p == "/")
        {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let sent = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success());
    let out = child.wait_with_output().expect("simcrawl ends");
    // The outcome, not a clock: the stalled fetch was abandoned at the end of the grace period
    // (its 30 s timeout and two retries were not waited for).
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("abandoned"), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("interrupted"));
    assert_eq!(
        out.status.code(),
        Some(130),
        "Ctrl-C exits 130, as the guide says"
    );
}

/// A seed's redirect target is a new URL: a seed on 127.0.0.1 that redirects to 127.0.0.2 is not
/// followed there with `--include` naming 127.0.0.1, with `--exclude` naming 127.0.0.2, or with
/// `--scope host`; the other host gets no request at all, robots.txt included, and `simcrawl
/// failed` says where the seed went and why it was not followed.
#[test]
fn a_seeds_redirect_does_not_escape_the_scope_or_the_patterns() {
    let (other, other_log) = serve_at("127.0.0.2", |path| match path {
        "/robots.txt" => status("404 Not Found", ""),
        _ => html("<title>elsewhere</title><p>A page on another host than the seed's.</p>"),
    });
    let target = format!("{other}/plain/x");
    let (seed, _) = serve(move |path| match path {
        "/robots.txt" => status("404 Not Found", ""),
        _ => status("302 Found", &format!("Location: {target}\r\n")),
    });
    let cases: [&[&str]; 3] = [
        &["--include", r"^https?://127\.0\.0\.1:", "--scope", "host"],
        &["--scope", "any", "--exclude", r"^http://127\.0\.0\.2"],
        &["--scope", "host"],
    ];
    for flags in cases {
        let dir = Dir::new();
        let out = crawl(&dir.store(), &[format!("{seed}/")], flags);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{flags:?}: {stderr}");
        let asked = other_log.lock().unwrap_or_else(|e| e.into_inner()).clone();
        assert!(
            asked.is_empty(),
            "{flags:?}: 127.0.0.2 was asked for {asked:?}"
        );
        let failed = failed_jsonl(&dir.store());
        assert!(
            failed.contains("out-of-scope") && failed.contains("127.0.0.2"),
            "{flags:?}: {failed}"
        );
    }
}

/// `--max-pages N` fetches N pages: robots.txt is no page (`--max-pages 1` fetched robots.txt
/// and stopped; two seeds with `--max-pages 2` fetched one).
#[test]
fn max_pages_counts_pages_not_robots_txt() {
    let (base, log) = serve(|path| match path {
        "/robots.txt" => status("404 Not Found", ""),
        p => html(&format!(
            "<title>{p}</title><p>The page at {p}.</p><a href=\"/more{p}\">more</a>"
        )),
    });
    for (max, seeds) in [(1, 1), (2, 2), (3, 3)] {
        let seeds: Vec<String> = (0..seeds).map(|i| format!("{base}/s{max}-{i}")).collect();
        let dir = Dir::new();
        let before = log.lock().unwrap_or_else(|e| e.into_inner()).len();
        let out = crawl(&dir.store(), &seeds, &["--max-pages", &max.to_string()]);
        assert_success(&out);
        let asked = log.lock().unwrap_or_else(|e| e.into_inner())[before..].to_vec();
        let pages = asked.iter().filter(|p| *p != "/robots.txt").count();
        assert_eq!(pages, max, "--max-pages {max}: {asked:?}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains(&format!("fetched         {max}\n")),
            "{stdout}"
        );
    }
}

/// `simcrawl skipped` piped to a file or a script prints each URL whole (it clipped them with
/// `…` for a terminal's width, which left a script with URLs that do not exist).
#[test]
fn skipped_piped_prints_whole_urls() {
    let long = format!("/{}/copy.html", "a-rather-long-directory-name".repeat(4));
    let link = long.clone();
    let (base, _) = serve(move |path| match path {
        "/robots.txt" => status("404 Not Found", ""),
        "/" => html(&format!(
            "<title>home</title><p>Home page text here.</p><a href=\"/original.html\">o</a> <a href=\"{link}\">c</a>"
        )),
        _ => html("<title>same</title><p>The same page under two URLs, one of them long.</p>"),
    });
    let dir = Dir::new();
    assert_success(&crawl(&dir.store(), &[format!("{base}/")], &[]));
    let out = crate::util::simcrawl()
        .args(["skipped", "--store"])
        .arg(dir.store())
        .output()
        .expect("simcrawl skipped runs");
    assert_success(&out);
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains(&format!("{base}{long}")), "{table}");
    assert!(!table.contains('…'), "{table}");
}
