//! The page tools on URLs: `fingerprint` and `explain` fetch with the crawler's own fetcher.

use crate::util::{Web, simcrawl};
use simcrawl_testsite::HostKind;

#[test]
fn fingerprint_and_explain_read_urls() {
    let web = Web::small();
    let origin = web
        .web
        .url(HostKind::Origin, "/articles/3.html")
        .expect("an origin");
    let noisy = web
        .web
        .url(HostKind::Noisy, "/articles/3.html")
        .expect("a noisy host");
    let other = web
        .web
        .url(HostKind::Origin, "/articles/4.html")
        .expect("an origin");

    let out = simcrawl()
        .args(["fingerprint", "--json", &origin])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(json["simhash"].as_str().map(str::len), Some(16));
    assert_eq!(json["body_digest"].as_str().map(str::len), Some(32));
    assert_eq!(json["extraction"], "main");
    assert!(json["words"].as_u64().is_some_and(|w| w > 50));

    // The noisy copy: different bytes, the same main text.
    let out = simcrawl()
        .args(["explain", "--json", &origin, &noisy])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(json["verdict"], "text-duplicate", "{json}");
    // Another article on the same template.
    let out = simcrawl()
        .args(["explain", "--json", &origin, &other])
        .output()
        .expect("runs");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(json["verdict"], "distinct", "{json}");
    assert!(json["distance"].as_u64().is_some_and(|d| d > 10), "{json}");

    // A URL that does not answer is an error naming it.
    let out = simcrawl()
        .args(["fingerprint", "http://127.0.0.1:9/x"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("127.0.0.1:9"));
}

#[test]
fn explain_says_when_two_titles_are_one_only_as_normalised() {
    // Two bug reports of one host: the same text, titles a seven-digit id apart, which the
    // normalisation drops. The whole-pages line says so, and the verdict keeps them apart.
    let dir = tempfile::tempdir().expect("a temporary directory");
    let page = |id: &str| {
        format!(
            "<html><head><title>Bug {id} - Crash on startup</title></head><body><p>The app \
             crashes on startup when the config file is missing.</p></body></html>"
        )
    };
    let (a, b) = (dir.path().join("a.html"), dir.path().join("b.html"));
    std::fs::write(&a, page("2254801")).expect("written");
    std::fs::write(&b, page("2254804")).expect("written");
    let out = simcrawl()
        .arg("explain")
        .arg(&a)
        .arg(&b)
        .args([
            "--url-a",
            "http://bugs.example/show_bug.cgi?id=2254801",
            "--url-b",
            "http://bugs.example/show_bug.cgi?id=2254804",
        ])
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("same title as normalised, other titles as written"),
        "{text}"
    );
    assert!(text.contains("verdict:             distinct"), "{text}");
}
