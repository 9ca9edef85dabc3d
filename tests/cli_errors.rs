//! Bad input gets a clear outcome: bad seeds, an unusable store, a store locked by another process.

use crate::util::{Dir, Web, assert_success, simcrawl};
use simcrawl_testsite::HostKind;

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_bad_seed_line_is_an_error_naming_the_line() {
    let dir = Dir::new();
    let seeds = dir.path("seeds.txt");
    std::fs::write(
        &seeds,
        "# seeds\nhttp://127.0.0.1:9/\n\nmailto:someone@example.com\n",
    )
    .expect("write seeds");
    let out = simcrawl()
        .args(["crawl", "--store"])
        .arg(dir.store())
        .arg(&seeds)
        .output()
        .expect("simcrawl runs");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("seeds.txt:4"), "{err}");
    assert!(err.contains("--skip-bad-seeds"), "{err}");
}

#[test]
fn a_seeds_argument_that_is_no_list_of_urls_says_what_it_is() {
    let dir = Dir::new();
    let comments = dir.path("comments.txt");
    std::fs::write(&comments, "# to do\n\n   # later\n").expect("write");
    let binary = dir.path("image.png");
    std::fs::write(&binary, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").expect("write");
    let folder = dir.path("folder");
    std::fs::create_dir(&folder).expect("mkdir");
    for (arg, said) in [
        (&comments, "has no seed URL: only comments and blank lines"),
        (&binary, "is not a text file"),
        (&folder, "is a directory"),
    ] {
        let out = simcrawl()
            .args(["crawl", "--store"])
            .arg(dir.store())
            .arg(arg)
            .output()
            .expect("simcrawl runs");
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(said), "{err}");
        assert!(!dir.store().exists(), "no store is created for a bad seed");
    }
}

#[test]
fn a_seeds_file_that_does_not_exist_says_so() {
    let dir = Dir::new();
    let out = simcrawl()
        .args(["crawl", "--store"])
        .arg(dir.store())
        .arg("no-such-seeds.txt")
        .output()
        .expect("simcrawl runs");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("no-such-seeds.txt: no such file"), "{err}");
    assert!(!dir.store().exists(), "no store is created for a bad seed");
}

#[test]
fn skip_bad_seeds_warns_and_goes_on() {
    let web = Web::start(simcrawl_testsite::TestWebConfig {
        hosts: simcrawl_testsite::HostSet::origin_only(),
        ..simcrawl_testsite::TestWebConfig::small()
    });
    let dir = Dir::new();
    let seeds = dir.path("seeds.txt");
    let origin = web.web.url(HostKind::Origin, "/").expect("an origin");
    std::fs::write(&seeds, format!("not a url\n{origin}\n")).expect("write seeds");
    let out = simcrawl()
        .args([
            "crawl",
            "--delay",
            "0",
            "--max-pages",
            "5",
            "--skip-bad-seeds",
            "--store",
        ])
        .arg(dir.store())
        .arg(&seeds)
        .output()
        .expect("simcrawl runs");
    assert_success(&out);
    assert!(
        stderr(&out).contains("warning: skipping"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_store_path_that_is_a_file_is_a_clear_error() {
    let dir = Dir::new();
    let file = dir.path("not-a-dir");
    std::fs::write(&file, "x").expect("write");
    let out = simcrawl()
        .args(["crawl", "http://127.0.0.1:9/", "--store"])
        .arg(&file)
        .output()
        .expect("simcrawl runs");
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("not a directory") && err.contains("not-a-dir"),
        "{err}"
    );
    // A store under a directory that cannot be made: the cause said once.
    let out = simcrawl()
        .args(["crawl", "http://127.0.0.1:9/", "--store"])
        .arg(file.join("store"))
        .output()
        .expect("simcrawl runs");
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    let cause = err.rsplit(": ").next().unwrap_or_default().trim();
    assert_eq!(err.matches(cause).count(), 1, "{err}");
}

#[test]
fn a_store_locked_by_another_process_is_a_clear_error() {
    let dir = Dir::new();
    // Hold the store in a child process: a crawl that waits on a server that never answers.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let silent = format!("http://{}/", listener.local_addr().expect("addr"));
    let mut holder = simcrawl()
        .args(["crawl", "--delay", "0", "--store"])
        .arg(dir.store())
        .arg(&silent)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("simcrawl starts");
    // Wait until it holds the lock (the lock file has its pid) and the store is initialised.
    let lock = dir.store().join("simcrawl.lock");
    let marker = dir.store().join("simcrawl.store");
    for _ in 0..400 {
        if marker.exists()
            && std::fs::read_to_string(&lock).is_ok_and(|s| s.trim() == holder.id().to_string())
        {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    // `skipped`, not `stats`: `stats` answers for a running crawl with the figures it wrote at
    // its last checkpoint once it has written them (a race this test lost on a slow machine).
    let out = simcrawl()
        .args(["skipped", "--store"])
        .arg(dir.store())
        .output()
        .expect("simcrawl runs");
    let _ = holder.kill();
    let _ = holder.wait();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("simcrawl.lock") && err.contains(&holder.id().to_string()),
        "{err}"
    );
    drop(listener);
}

#[test]
fn a_bad_include_pattern_leaves_no_store_behind() {
    let dir = Dir::new();
    let out = simcrawl()
        .args(["crawl", "http://127.0.0.1:9/", "--include", "["])
        .arg("--store")
        .arg(dir.store())
        .output()
        .expect("simcrawl runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("does not compile"),
        "{}",
        stderr(&out)
    );
    assert!(!dir.store().exists(), "the store directory was created");
}

#[test]
fn a_closed_pipe_ends_quietly_without_a_panic() {
    use std::io::Read;
    use std::process::Stdio;
    let page =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/realweb/django/index.html");
    let mut child = simcrawl()
        .arg("extract")
        .arg(&page)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("simcrawl runs");
    // Read one byte, then close the pipe, as `| head -c 1` does.
    let mut stdout = child.stdout.take().expect("a pipe");
    let mut byte = [0u8; 1];
    let _ = stdout.read(&mut byte);
    drop(stdout);
    let out = child.wait_with_output().expect("simcrawl ends");
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
}

/// `http:///127.0.0.1:9/` is a typo, not the host `127.0.0.1:9` a browser would read in it: a bad
/// seed, exit 2, before any request. A seed of a megabyte fails the URL-length check with the
/// line that holds it.
#[test]
fn a_seed_without_its_host_or_too_long_is_a_bad_seed() {
    let dir = Dir::new();
    let out = simcrawl()
        .args([
            "crawl",
            "--robots-retry",
            "0.05",
            "--robots-attempts",
            "1",
            "--store",
        ])
        .arg(dir.store())
        .arg("http:///127.0.0.1:9/")
        .output()
        .expect("simcrawl runs");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no host after http://"),
        "{}",
        stderr(&out)
    );
    assert!(!dir.store().exists(), "no store is created for a bad seed");

    let seeds = dir.path("seeds.txt");
    let long = format!("http://127.0.0.1:9/{}", "x".repeat(1 << 20));
    std::fs::write(&seeds, format!("http://127.0.0.1:9/\n{long}\n")).expect("write seeds");
    let out = simcrawl()
        .args(["crawl", "--store"])
        .arg(dir.store())
        .arg(&seeds)
        .output()
        .expect("simcrawl runs");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("seeds.txt:2") && err.contains("over the 2048"),
        "{}",
        &err[..err.len().min(300)]
    );
}

/// A crawl does not write among the user's files: `--store` a directory that holds something and
/// is no store is an error naming it, and nothing is added to it. The demo's `--store` a file is
/// an error saying so.
#[test]
fn a_store_directory_of_someone_elses_files_is_refused() {
    let dir = Dir::new();
    let mine = dir.path("mine");
    std::fs::create_dir_all(&mine).expect("a directory");
    std::fs::write(mine.join("notes.txt"), "my notes\n").expect("a file");
    let out = simcrawl()
        .args(["crawl", "--store"])
        .arg(&mine)
        .arg("http://127.0.0.1:9/")
        .output()
        .expect("simcrawl runs");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("not a simcrawl store") && stderr(&out).contains("notes.txt"),
        "{}",
        stderr(&out)
    );
    let left: Vec<_> = std::fs::read_dir(&mine)
        .expect("the directory")
        .map(|e| e.expect("an entry").file_name())
        .collect();
    assert_eq!(left, ["notes.txt"]);

    let file = dir.path("a-file");
    std::fs::write(&file, "x").expect("a file");
    let out = simcrawl()
        .args(["demo", "--store"])
        .arg(&file)
        .output()
        .expect("simcrawl runs");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("is a file"), "{}", stderr(&out));
}

/// `simcrawl man --out-dir` writes every page its pages name (`simcrawl-url-canon(1)` was named
/// and never written, and `simcrawl-help(1)` too), and `report --out -` writes to standard output.
#[test]
fn man_pages_name_only_pages_that_are_written() {
    let dir = Dir::new();
    let out = simcrawl()
        .args(["man", "--out-dir"])
        .arg(dir.path("man"))
        .output()
        .expect("simcrawl runs");
    assert_success(&out);
    let pages: Vec<std::path::PathBuf> = std::fs::read_dir(dir.path("man"))
        .expect("the pages")
        .map(|e| e.expect("an entry").path())
        .collect();
    assert!(
        pages.iter().any(|p| p.ends_with("simcrawl-url-canon.1")),
        "{pages:?}"
    );
    for page in &pages {
        let text = std::fs::read_to_string(page)
            .expect("a page")
            .replace("\\-", "-");
        for (at, _) in text.match_indices("(1)") {
            let before = &text[..at];
            let name: String = before
                .trim_end_matches("\\fR")
                .chars()
                .rev()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            if name.starts_with("simcrawl") {
                assert!(
                    dir.path("man").join(format!("{name}.1")).exists(),
                    "{} names {name}(1), which is not written",
                    page.display()
                );
            }
        }
    }
}

/// A cleanly closed store whose page records file was cut short is damaged, not a crash's torn
/// tail: `stats` and `export` name the file and exit 2, and a resume refuses to write over it.
#[test]
fn a_damaged_record_file_in_a_clean_store_is_named_and_never_written_over() {
    let web = Web::start(simcrawl_testsite::TestWebConfig {
        hosts: simcrawl_testsite::HostSet::origin_only(),
        ..simcrawl_testsite::TestWebConfig::small()
    });
    let dir = Dir::new();
    assert_success(&crate::util::crawl(&dir.store(), &web.web.seeds(), &[]));
    let records = dir.store().join("page_records.records");
    let len = std::fs::metadata(&records).expect("the page records").len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&records)
        .expect("open")
        .set_len(len / 2)
        .expect("cut");
    let before = std::fs::read(&records).expect("read");
    for args in [&["stats"][..], &["export"][..], &["crawl"][..]] {
        let out = simcrawl()
            .args(args)
            .arg("--store")
            .arg(dir.store())
            .output()
            .expect("simcrawl runs");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("page_records.records") && stderr(&out).contains("damaged"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    assert!(
        std::fs::read(&records).expect("read") == before,
        "written over"
    );
}

/// The top-level help's examples start with what a new user runs first: the demo, then a crawl;
/// each example names a command that exists (issue 42, item 14).
#[test]
fn the_top_level_help_starts_its_examples_with_the_demo_and_a_crawl() {
    let out = simcrawl().arg("--help").output().expect("simcrawl runs");
    assert_success(&out);
    let help = String::from_utf8_lossy(&out.stdout);
    let examples: Vec<&str> = help
        .split("Examples:")
        .nth(1)
        .expect("the help has examples")
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("simcrawl "))
        .collect();
    assert!(examples.len() >= 3, "{help}");
    assert!(examples[0].starts_with("simcrawl demo"), "{examples:?}");
    assert!(examples[1].starts_with("simcrawl crawl "), "{examples:?}");
    for example in &examples {
        let command = example.split_whitespace().nth(1).expect("a command");
        let sub = simcrawl()
            .args([command, "--help"])
            .output()
            .expect("simcrawl runs");
        assert_success(&sub);
    }
}

/// A negative k or Jaccard threshold is out of range, not a stray seed (clap would read `-1` as
/// an unknown flag and suggest `-- -1`, which makes it a seed).
#[test]
fn a_negative_threshold_is_out_of_range() {
    for (flag, value) in [("--k", "-1"), ("--jaccard", "-0.1")] {
        let out = simcrawl()
            .args(["explain", "a.html", "b.html", flag, value])
            .output()
            .expect("simcrawl runs");
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains(flag) && !err.contains("unexpected argument"),
            "{err}"
        );
    }
}

#[test]
fn a_sharded_crawl_without_its_process_index_is_refused_before_it_waits() {
    let dir = Dir::new();
    let hosts = dir.path("hosts.txt");
    std::fs::write(&hosts, "127.0.0.1:9\n127.0.0.1:10\n").expect("write the hostfile");
    let crawl = |extra: &[&str]| {
        simcrawl()
            .args(["crawl", "--store"])
            .arg(dir.store())
            .arg("--hostfile")
            .arg(&hosts)
            .args(extra)
            .arg("http://127.0.0.1:9/")
            .output()
            .expect("simcrawl runs")
    };
    // Without --process, a second process 0 would take the first's port and its store's share.
    let out = crawl(&["--processes", "2"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("needs --process I"),
        "{}",
        stderr(&out)
    );
    let out = crawl(&["--processes", "2", "--process", "2"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("not one of 0 to 1"),
        "{}",
        stderr(&out)
    );
}
