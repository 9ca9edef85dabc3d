//! `simcrawl report`: one HTML page that stands alone, with every section, for a real crawl.

use crate::util::{Dir, Web, assert_success, crawl, simcrawl};

#[test]
fn the_report_has_every_section_and_loads_nothing() {
    let web = Web::small();
    let dir = Dir::new();
    assert_success(&crawl(&dir.store(), &web.web.seeds(), &[]));
    let out_file = dir.path("report.html");
    let out = simcrawl()
        .args(["report", "--store"])
        .arg(dir.store())
        .arg("--out")
        .arg(&out_file)
        .output()
        .expect("report runs");
    assert_success(&out);
    let html = std::fs::read_to_string(&out_file).expect("the report was written");
    assert!(html.starts_with("<!DOCTYPE html>"));
    for id in [
        "summary", "hosts", "rules", "clusters", "tune", "pairs", "skips",
    ] {
        assert!(html.contains(&format!("id=\"{id}\"")), "section {id}");
    }
    for loads in ["<script", "<link ", "<img", " src="] {
        assert!(
            !html.contains(loads),
            "the report must stand alone: {loads}"
        );
    }
    assert!(html.contains("<svg"), "the k chart");
    // The small web has mirrors: learned rules are listed with their evidence.
    assert!(html.contains("mirror"), "rules");
    assert!(html.contains(" agree, "), "evidence");
    // Text from the web is escaped: no raw markup from a page reaches the report.
    assert_eq!(html.matches("<html").count(), 1);

    // `--out -` is standard output, not a file named `-`.
    let out = simcrawl()
        .current_dir(dir.dir.path())
        .args(["report", "--out", "-", "--store"])
        .arg(dir.store())
        .output()
        .expect("report runs");
    assert_success(&out);
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("<!DOCTYPE html>"));
    assert!(!dir.path("-").exists(), "a file named -");
}
