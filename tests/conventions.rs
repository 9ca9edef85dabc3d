//! What a user of command-line tools expects: shell completions and manual pages generated from
//! the same flags, `-q` and `-v`.

use crate::util::{Dir, Web, assert_success, simcrawl};

#[test]
fn completions_and_man_pages_come_from_the_flags() {
    for shell in ["bash", "zsh", "fish"] {
        let out = simcrawl()
            .args(["completions", shell])
            .output()
            .expect("runs");
        assert_success(&out);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("warc-dups"),
            "{shell}: a crawl flag is completed"
        );
    }
    let out = simcrawl().arg("man").output().expect("runs");
    assert_success(&out);
    let page = String::from_utf8_lossy(&out.stdout);
    assert!(page.contains(".TH simcrawl 1"), "{page}");
    let dir = Dir::new();
    let out = simcrawl()
        .args(["man", "--out-dir"])
        .arg(dir.path("man1"))
        .output()
        .expect("runs");
    assert_success(&out);
    let crawl = std::fs::read_to_string(dir.path("man1").join("simcrawl-crawl.1"))
        .expect("a page per command");
    assert!(
        crawl.contains("max\\-crawl\\-delay"),
        "the crawl page lists its flags"
    );
}

#[test]
fn quiet_prints_no_progress_or_warnings_and_verbose_prints_more() {
    let web = Web::small();
    let dir = Dir::new();
    let quiet = simcrawl()
        .args(["crawl", "-q", "--delay", "0", "--store"])
        .arg(dir.store())
        .args(web.web.seeds())
        .output()
        .expect("runs");
    assert_success(&quiet);
    assert_eq!(
        String::from_utf8_lossy(&quiet.stderr),
        "",
        "-q: nothing on stderr"
    );
    assert!(String::from_utf8_lossy(&quiet.stdout).contains("crawl finished"));

    let dir = Dir::new();
    let verbose = simcrawl()
        .args(["crawl", "-v", "--delay", "0", "--store"])
        .arg(dir.store())
        .args(web.web.seeds())
        .env_remove("RUST_LOG")
        .output()
        .expect("runs");
    assert_success(&verbose);
    assert!(
        String::from_utf8_lossy(&verbose.stderr).contains(" INFO "),
        "-v shows info lines"
    );
}
