//! Reading a page the user names on the command line.

use anyhow::{Context, Result, bail};
use simcrawl_crawl::{Analyzer, PageAnalysis};
use simcrawl_url::Url;
use std::io::Read;

/// The largest page file read (the crawl's default body cap).
const MAX_PAGE_BYTES: u64 = 10 << 20;

/// A page loaded from a file or standard input, analysed as the crawl would.
pub struct LoadedPage {
    pub source: String,
    pub url: Url,
    pub analysis: PageAnalysis,
    /// The stretches of its text left out of the main text, and why.
    pub dropped: Vec<simcrawl_crawl::Dropped>,
}

/// Reads `input` (a path, or `-` for standard input) and analyses it. HTML is recognised by its
/// content; anything else is treated as plain text. `url` is where the page is said to come from.
pub fn load(analyzer: &Analyzer, input: &str, url: Option<&str>) -> Result<LoadedPage> {
    let mut bytes = Vec::new();
    if input == "-" {
        std::io::stdin()
            .take(MAX_PAGE_BYTES)
            .read_to_end(&mut bytes)
            .context("cannot read standard input")?;
    } else {
        if input.starts_with("http://") || input.starts_with("https://") {
            return fetch(analyzer, input);
        }
        let file = std::fs::File::open(input).with_context(|| format!("cannot open {input}"))?;
        file.take(MAX_PAGE_BYTES)
            .read_to_end(&mut bytes)
            .with_context(|| format!("cannot read {input}"))?;
    }
    let url = match url {
        Some(u) => Url::parse(u).with_context(|| format!("--url {u:?} is not a URL"))?,
        None => file_url(input),
    };
    // Pages on disk are usually UTF-8; anything else is decoded lossily, never refused.
    let text = String::from_utf8_lossy(&bytes);
    let (analysis, dropped) = if looks_like_html(&text) {
        analyzer.analyze_html_explained(&bytes, &text, &url, None)
    } else {
        (analyzer.analyze_text(&bytes, &text, &url), Vec::new())
    };
    Ok(LoadedPage {
        source: input.to_string(),
        url,
        analysis,
        dropped,
    })
}

/// Fetches a page (with the crawler's fetcher: same caps, timeouts, charset detection and user agent)
/// and analyses it. The URL is a seed: it may be on a private address.
fn fetch(analyzer: &Analyzer, input: &str) -> Result<LoadedPage> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let fetcher = simcrawl_fetch::Fetcher::new(simcrawl_fetch::FetchConfig::default())
        .map_err(|e| anyhow::anyhow!("cannot build the fetcher: {e}"))?;
    let fetched = rt
        .block_on(fetcher.fetch(input, &simcrawl_fetch::FetchOptions::seed()))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    if fetched.status >= 400 {
        bail!("{input}: the server answered {}", fetched.status);
    }
    let url = fetched.final_url.clone();
    let link = (!fetched.headers.link.is_empty()).then(|| fetched.headers.link.join(", "));
    let (analysis, dropped) = match &fetched.body {
        simcrawl_fetch::Body::Text { text, .. } => {
            analyzer.analyze_html_explained(text.as_bytes(), text, &url, link.as_deref())
        }
        simcrawl_fetch::Body::Bytes(_) | simcrawl_fetch::Body::Skipped { .. } => {
            bail!(
                "{input} is not HTML ({}); simcrawl only reads HTML pages",
                fetched
                    .headers
                    .content_type
                    .as_deref()
                    .unwrap_or("no content type")
            )
        }
    };
    Ok(LoadedPage {
        source: input.to_string(),
        url,
        analysis,
        dropped,
    })
}

/// A stand-in URL for a file, so that relative links print as something readable.
fn file_url(input: &str) -> Url {
    let path = std::path::Path::new(input);
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    Url::from_file_path(&absolute)
        .unwrap_or_else(|()| Url::parse("file:///stdin").expect("a valid constant URL"))
}

fn looks_like_html(text: &str) -> bool {
    // The WHATWG MIME sniffing patterns for text/html, after white space: a comment or one of
    // the tags; and any of those tags in the first kilobyte (a page may open with comments
    // and blank lines before its `<html>`).
    const TAGS: [&str; 17] = [
        "<!doctype html",
        "<html",
        "<head",
        "<script",
        "<iframe",
        "<h1",
        "<div",
        "<font",
        "<table",
        "<a ",
        "<style",
        "<title",
        "<b>",
        "<body",
        "<br",
        "<p>",
        "<p ",
    ];
    let head: String = text
        .trim_start_matches(['\u{feff}', ' ', '\t', '\n', '\r', '\x0c'])
        .chars()
        .take(1024)
        .collect::<String>()
        .to_ascii_lowercase();
    head.starts_with("<!--")
        || head.starts_with("<?xml")
        || TAGS.iter().any(|tag| head.contains(tag))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_is_recognised_by_content() {
        assert!(looks_like_html("  <!DOCTYPE html><p>x"));
        assert!(looks_like_html("<div>hello</div>"));
        assert!(!looks_like_html("just some words"));
        assert!(looks_like_html("\u{feff}<!-- generated -->\n\n<html><p>x"));
        assert!(looks_like_html("<?php // ?>\n<!-- a -->\n<table><tr><td>x"));
        assert!(!looks_like_html("a < b and c > d, in plain text"));
    }
}
