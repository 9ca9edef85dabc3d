//! Shared helpers: fixtures, URLs, word sets.

use std::collections::HashSet;
use std::path::PathBuf;

use simcrawl_extract::{Document, NormalizeOptions, extract, normalize_text};
use url::Url;

/// Reads `tests/fixtures/<path>`.
pub fn fixture(path: &str) -> String {
    let full = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("fixture {}: {e}", full.display()))
}

/// Parses a URL written in a test.
pub fn url(s: &str) -> Url {
    Url::parse(s).unwrap_or_else(|e| panic!("test URL {s}: {e}"))
}

/// Extracts `html` as if fetched from `page_url`, with default options and no Link header.
pub fn doc(html: &str, page_url: &str) -> Document {
    extract(html, &url(page_url), None)
}

/// The main text as the fingerprints see it.
pub fn fingerprint_text(doc: &Document) -> String {
    normalize_text(&doc.main_text, NormalizeOptions::FINGERPRINT)
}

/// Jaccard resemblance of the word sets of two normalised texts.
pub fn word_jaccard(a: &str, b: &str) -> f64 {
    let a: HashSet<&str> = a.split(' ').filter(|w| !w.is_empty()).collect();
    let b: HashSet<&str> = b.split(' ').filter(|w| !w.is_empty()).collect();
    let union = a.union(&b).count();
    if union == 0 {
        return 1.0;
    }
    a.intersection(&b).count() as f64 / union as f64
}
