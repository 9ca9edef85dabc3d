//! The report as HTML: sections, tables, the inline SVG chart and the side-by-side pairs.

use std::fmt::Write;

use simcrawl_crawl::SkipReason;
use simcrawl_crawl::tune::{WordOp, align_words};

use crate::ReportData;

/// Escapes text for HTML element content and attribute values.
pub(crate) fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && c != '\n' && c != '\t' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A link to `url` when it is http(s), else its text.
fn url_cell(url: &str) -> String {
    if url.starts_with("http://") || url.starts_with("https://") {
        format!("<a href=\"{0}\" rel=\"noreferrer\">{0}</a>", esc(url))
    } else {
        esc(url)
    }
}

const STYLE: &str = r#"
:root { --fg: #1d2430; --muted: #5b6473; --line: #d9dee6; --bg: #ffffff; --band: #f4f6f9;
        --a: #b3261e; --b: #1a7f37; --bar1: #4063d8; --bar2: #d97706; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
       background: var(--bg); margin: 0; }
header { padding: 20px 32px; background: var(--band); border-bottom: 1px solid var(--line); }
header h1 { margin: 0 0 4px; font-size: 22px; }
header p { margin: 0; color: var(--muted); }
nav { padding: 8px 32px; border-bottom: 1px solid var(--line); position: sticky; top: 0;
      background: var(--bg); z-index: 1; }
nav a { margin-right: 16px; color: var(--bar1); text-decoration: none; }
main { padding: 8px 32px 48px; max-width: 1400px; }
section { margin-top: 28px; }
h2 { font-size: 18px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
table { border-collapse: collapse; margin: 8px 0; font-size: 14px; }
th, td { border-bottom: 1px solid var(--line); padding: 4px 10px; text-align: left;
         vertical-align: top; }
th { background: var(--band); font-weight: 600; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
td a { color: inherit; word-break: break-all; }
.muted { color: var(--muted); }
.cards { display: flex; flex-wrap: wrap; gap: 12px; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: 10px 16px; min-width: 140px; }
.card b { display: block; font-size: 22px; }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: 16px; margin: 10px 0 24px; }
.pair > div { border: 1px solid var(--line); border-radius: 6px; padding: 10px; font-size: 13px;
              max-height: 360px; overflow: auto; }
.pair h4 { margin: 0 0 6px; font-size: 13px; word-break: break-all; }
del { background: #ffe4e1; color: var(--a); text-decoration: none; }
ins { background: #dcf5e3; color: var(--b); text-decoration: none; }
code { font-size: 13px; }
details { margin: 6px 0; }
summary { cursor: pointer; }
svg text { font: 12px system-ui, sans-serif; fill: var(--fg); }
"#;

/// The whole page.
pub(crate) fn page(d: &ReportData) -> String {
    let mut out = String::with_capacity(256 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><style>{STYLE}</style></head><body>",
        esc(&d.options.title)
    );
    let _ = write!(
        out,
        "<header><h1>{}</h1><p>What the crawl indexed, what it skipped as a copy and why, \
         and what each near-duplicate threshold k would have done.</p></header>\
         <nav><a href=\"#summary\">Summary</a><a href=\"#hosts\">Hosts</a>\
         <a href=\"#rules\">Rules</a><a href=\"#clusters\">Clusters</a><a href=\"#tune\">k chart</a>\
         <a href=\"#pairs\">Pairs</a><a href=\"#skips\">Skip log</a></nav><main>",
        esc(&d.options.title)
    );
    summary(&mut out, d);
    hosts(&mut out, d);
    rules(&mut out, d);
    clusters(&mut out, d);
    tune(&mut out, d);
    pairs(&mut out, d);
    skips(&mut out, d);
    out.push_str("</main></body></html>\n");
    out
}

fn summary(out: &mut String, d: &ReportData) {
    let s = &d.stats;
    let _ = write!(
        out,
        "<section id=\"summary\"><h2>Summary</h2><div class=\"cards\">"
    );
    for (label, n) in [
        ("fetched", s.fetched),
        ("indexed", s.indexed_pages as u64),
        ("skipped as copies", s.skipped_total()),
        ("failed", s.failed),
        ("excluded by the frontier", s.excluded_total()),
        ("rules learned", s.rules_learned),
        ("rules revoked", s.rules_revoked),
    ] {
        let _ = write!(out, "<div class=\"card\"><b>{n}</b>{label}</div>");
    }
    out.push_str("</div>");
    out.push_str("<h3>Skips by reason</h3><table><tr><th>reason</th><th>when</th><th class=\"n\">URLs</th></tr>");
    for (reason, n) in s.skipped.iter().filter(|(_, n)| *n > 0) {
        let when = if reason.before_fetch() {
            "before fetching"
        } else {
            "after fetching"
        };
        let _ = write!(
            out,
            "<tr><td>{}</td><td class=\"muted\">{when}</td><td class=\"n\">{n}</td></tr>",
            reason.as_str()
        );
    }
    out.push_str("</table>");
    if !s.failed_by.is_empty() {
        out.push_str(
            "<h3>Failures by kind</h3><table><tr><th>kind</th><th class=\"n\">URLs</th></tr>",
        );
        for (kind, n) in &s.failed_by {
            let _ = write!(out, "<tr><td>{kind}</td><td class=\"n\">{n}</td></tr>");
        }
        out.push_str("</table>");
        if !d.failures.is_empty() {
            let _ = write!(
                out,
                "<details><summary>The first {} failures</summary><table>\
                 <tr><th>URL</th><th>kind</th><th>message</th></tr>",
                d.failures.len()
            );
            for f in &d.failures {
                let _ = write!(
                    out,
                    "<tr><td>{}</td><td>{}</td><td class=\"muted\">{}</td></tr>",
                    url_cell(&f.url),
                    esc(&f.reason),
                    esc(&f.message)
                );
            }
            out.push_str("</table></details>");
        }
    }
    if s.robots_ignored {
        out.push_str("<p><b>robots.txt was ignored</b> in a crawl of this store.</p>");
    }
    out.push_str("</section>");
}

fn hosts(out: &mut String, d: &ReportData) {
    let _ = write!(out, "<section id=\"hosts\"><h2>Skips by host</h2>");
    if d.by_host.is_empty() {
        out.push_str("<p class=\"muted\">Nothing was skipped.</p></section>");
        return;
    }
    let reasons: Vec<SkipReason> = SkipReason::ALL
        .into_iter()
        .filter(|r| d.by_host.iter().any(|(_, m, _)| m.contains_key(r)))
        .collect();
    out.push_str("<table><tr><th>host</th>");
    for r in &reasons {
        let _ = write!(out, "<th class=\"n\">{}</th>", r.as_str());
    }
    out.push_str("<th class=\"n\">all</th></tr>");
    for (host, by_reason, total) in &d.by_host {
        let _ = write!(out, "<tr><td>{}</td>", esc(host));
        for r in &reasons {
            match by_reason.get(r) {
                Some(n) => {
                    let _ = write!(out, "<td class=\"n\">{n}</td>");
                }
                None => out.push_str("<td class=\"n muted\">·</td>"),
            }
        }
        let _ = write!(out, "<td class=\"n\"><b>{total}</b></td></tr>");
    }
    out.push_str("</table>");
    if d.hosts_total > d.by_host.len() {
        let _ = write!(
            out,
            "<p class=\"muted\">The {} most skipped of {} hosts; <code>simcrawl skipped --host HOST</code> lists any host's skips.</p>",
            d.by_host.len(),
            d.hosts_total
        );
    }
    out.push_str("</section>");
}

fn rules(out: &mut String, d: &ReportData) {
    let _ = write!(out, "<section id=\"rules\"><h2>Learned rules</h2>");
    if d.rules.is_empty() {
        out.push_str("<p class=\"muted\">No rule was learned: no host was seen to copy another, and no URL pattern was seen to make no difference.</p></section>");
        return;
    }
    out.push_str(
        "<table><tr><th>kind</th><th>rule</th><th>evidence</th><th>state</th>\
         <th class=\"n\">URLs skipped by it</th><th>example</th></tr>",
    );
    for r in &d.rules {
        let kind = r.rule.kind().name();
        let example = r
            .example
            .as_ref()
            .map_or(String::new(), |(copy, original)| {
                format!("{} = {}", url_cell(copy), url_cell(original))
            });
        let _ = write!(
            out,
            "<tr><td>{kind}</td><td><code>{}</code></td><td>{} agree, {} disagree</td>\
             <td>{}</td><td class=\"n\">{}</td><td class=\"muted\">{example}</td></tr>",
            esc(&r.rule.to_string()),
            r.evidence.agree,
            r.evidence.disagree,
            if r.active { "active" } else { "<b>revoked</b>" },
            r.skipped
        );
    }
    out.push_str("</table></section>");
}

fn clusters(out: &mut String, d: &ReportData) {
    let c = &d.clusters;
    let _ = write!(
        out,
        "<section id=\"clusters\"><h2>Near-duplicate clusters at k = {}</h2>\
         <p>Indexed pages whose fingerprints are within {} bits of each other, linked \
         transitively: {} clusters holding {} pages. They were indexed because their texts \
         differ more than the Jaccard check allows, or they were compared before a closer \
         page existed.</p>",
        c.k, c.k, c.total, c.clustered_pages
    );
    for (i, cluster) in c.clusters.iter().enumerate() {
        let _ = write!(
            out,
            "<details{}><summary>cluster {} — {} pages</summary><table>\
             <tr><th>URL</th><th>title</th><th class=\"n\">words</th><th>SimHash</th></tr>",
            if i == 0 { " open" } else { "" },
            i + 1,
            cluster.len()
        );
        for p in cluster {
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td><code>{:016x}</code></td></tr>",
                url_cell(&p.url),
                esc(p.title.as_deref().unwrap_or("")),
                p.words,
                p.simhash
            );
        }
        out.push_str("</table></details>");
    }
    if c.total > c.clusters.len() {
        let _ = write!(
            out,
            "<p class=\"muted\">The {} largest of {}; <code>simcrawl clusters --k {}</code> lists them all.</p>",
            c.clusters.len(),
            c.total,
            c.k
        );
    }
    out.push_str("</section>");
}

/// The `tune` table as a grouped bar chart: for each k, the indexed pages that k would have
/// skipped, and the skipped pages it would have indexed.
fn tune(out: &mut String, d: &ReportData) {
    let t = &d.tune;
    let _ = write!(
        out,
        "<section id=\"tune\"><h2>What each k would do</h2>\
         <p>Replayed from the stored fingerprints of {} indexed pages and {} skips by SimHash \
         distance (near-duplicate and canonical), without crawling. Blue: indexed pages a crawl at that k would have skipped as \
         near-duplicates. Orange: pages this crawl skipped that it would have indexed.</p>",
        t.replay.pages, t.near_skips
    );
    let skip: Vec<u64> = t.replay.by_k.iter().map(|s| s.would_skip as u64).collect();
    let index: Vec<u64> = t.would_index.clone();
    // Three grid steps of a whole number each.
    let step = skip
        .iter()
        .chain(&index)
        .copied()
        .max()
        .unwrap_or(0)
        .div_ceil(3)
        .max(1);
    let max = step * 3;
    let (w, h, left, bottom, top) = (720.0, 260.0, 48.0, 36.0, 12.0);
    let plot_h = h - bottom - top;
    let group = (w - left - 10.0) / 9.0;
    let bar = group * 0.36;
    let _ = write!(
        out,
        "<svg role=\"img\" aria-label=\"pages skipped or indexed at each k\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\">"
    );
    // Axis and three grid lines.
    for i in 0..=3u32 {
        let value = step * u64::from(i);
        let y = top + plot_h - plot_h * f64::from(i) / 3.0;
        let _ = write!(
            out,
            "<line x1=\"{left}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#d9dee6\"/>\
             <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{value}</text>",
            w - 10.0,
            left - 6.0,
            y + 4.0
        );
    }
    for k in 0..9usize {
        let x = left + group * k as f64 + group * 0.12;
        for (j, (values, color)) in [(&skip, "var(--bar1)"), (&index, "var(--bar2)")]
            .into_iter()
            .enumerate()
        {
            let v = values.get(k).copied().unwrap_or(0);
            let bh = plot_h * v as f64 / max as f64;
            let bx = x + bar * j as f64;
            let _ = write!(
                out,
                "<rect x=\"{bx:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{bh:.1}\" fill=\"{color}\"><title>k = {k}: {v}</title></rect>",
                top + plot_h - bh,
                bar - 2.0
            );
        }
        let marker = if k as u32 == d.options.k {
            " (this crawl)"
        } else {
            ""
        };
        let _ = write!(
            out,
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">k={k}{marker}</text>",
            x + bar,
            h - bottom + 16.0
        );
    }
    out.push_str("</svg>");
    out.push_str(
        "<table><tr><th class=\"n\">k</th><th class=\"n\">indexed pages it would skip</th>\
         <th class=\"n\">skips it would index</th><th class=\"n\">clusters</th></tr>",
    );
    for (i, s) in t.replay.by_k.iter().enumerate() {
        let _ = write!(
            out,
            "<tr><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            s.k,
            s.would_skip,
            index.get(i).copied().unwrap_or(0),
            s.clusters
        );
    }
    out.push_str("</table></section>");
}

/// Sample pairs at each distance, side by side, the words only one side has marked.
fn pairs(out: &mut String, d: &ReportData) {
    let _ = write!(
        out,
        "<section id=\"pairs\"><h2>Pairs side by side</h2>\
         <p>Indexed pages at each SimHash distance, to see what a distance means on these \
         pages. Words only the left page has are <del>marked</del>; words only the right has \
         are <ins>marked</ins> (the first {} words of each).</p>",
        d.options.pair_words
    );
    if d.tune.replay.samples.is_empty() {
        out.push_str(
            "<p class=\"muted\">No two indexed pages are within 8 bits of each other.</p>",
        );
    }
    for pair in &d.tune.replay.samples {
        let ops = align_words(&pair.a.text, &pair.b.text, d.options.pair_words);
        let (mut left, mut right) = (String::new(), String::new());
        for op in ops {
            match op {
                WordOp::Same(w) => {
                    left.push_str(&esc(w));
                    left.push(' ');
                    right.push_str(&esc(w));
                    right.push(' ');
                }
                WordOp::OnlyA(w) => {
                    let _ = write!(left, "<del>{}</del> ", esc(w));
                }
                WordOp::OnlyB(w) => {
                    let _ = write!(right, "<ins>{}</ins> ", esc(w));
                }
            }
        }
        let verdict = if pair.distance <= d.options.k {
            "within k, both indexed: the rule of evidence kept them apart (titles, sizes, Jaccard or a short text; simcrawl explain says which)"
        } else {
            "above k: distinct"
        };
        let _ = write!(
            out,
            "<h3>distance {} <span class=\"muted\">({verdict})</span></h3><div class=\"pair\">\
             <div><h4>{}</h4>{left}</div><div><h4>{}</h4>{right}</div></div>",
            pair.distance,
            url_cell(&pair.a.url),
            url_cell(&pair.b.url)
        );
    }
    out.push_str("</section>");
}

fn skips(out: &mut String, d: &ReportData) {
    let _ = write!(out, "<section id=\"skips\"><h2>Skip log</h2>");
    if d.samples.is_empty() {
        out.push_str("<p class=\"muted\">The skip log is empty.</p></section>");
        return;
    }
    for (reason, (records, count)) in &d.samples {
        let _ = write!(
            out,
            "<details><summary>{} — {count} entries{}</summary><table>\
             <tr><th>URL</th><th>original</th><th>evidence</th></tr>",
            reason.as_str(),
            if *count as usize > records.len() {
                format!(
                    " (the first {}; <code>simcrawl skipped --reason {}</code> lists all)",
                    records.len(),
                    reason.as_str()
                )
            } else {
                String::new()
            }
        );
        for r in records {
            let evidence = esc(&r.evidence_text());
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{}</td><td class=\"muted\">{evidence}</td></tr>",
                url_cell(&r.url),
                r.original.as_deref().map(url_cell).unwrap_or_default()
            );
        }
        out.push_str("</table></details>");
    }
    out.push_str("</section>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_covers_markup_and_controls() {
        assert_eq!(
            esc("<a href=\"x\">'&'</a>\u{7}"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt; "
        );
        assert_eq!(url_cell("javascript:alert(1)"), "javascript:alert(1)");
        assert!(url_cell("http://h/?a=<b>").contains("href=\"http://h/?a=&lt;b&gt;\""));
    }
}
