//! `simcrawl skipped`, `tune`, `clusters`, `mirrors`, `stats` and `export`: a crawl's store, read back
//! through [`simcrawl_crawl::inspect::Inspector`] and formatted for a terminal (aligned tables) or for
//! machines (JSON lines, CSV).
//!
//! Output goes through one locked, buffered standard output. A reader that goes away early
//! (`simcrawl skipped | head`) ends the command quietly with success, not with a panic or an error.

use crate::flags::{
    ClustersArgs, ExportArgs, ExportFormat, FailedArgs, Format, ReportArgs, SkippedArgs, StatsArgs,
    StoresArgs, TemplateArgs, TuneArgs,
};
use crate::output::clip;
use anyhow::{Result, anyhow};
use serde_json::{Value, json};
use simcrawl_crawl::inspect::{Inspector, SkipQuery};
use simcrawl_crawl::layout::RuleRecord;
use simcrawl_crawl::output::page_json;
use simcrawl_crawl::{SkipReason, SkipRecord};
use std::borrow::Cow;
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

/// Widest a URL gets in a table column before it is clipped in the middle.
const URL_WIDTH: usize = 56;

/// The columns of `simcrawl skipped --format csv`, in order; the JSON lines carry the same fields.
const SKIP_COLUMNS: [&str; 12] = [
    "url", "reason", "original", "distance", "jaccard", "rule", "host", "depth", "referrer",
    "time", "evidence", "rule_id",
];

/// Opens a crawl's store to read it; a store that could only be read through a temporary copy
/// (it cannot be written) is said so on standard error.
/// [`open_store`] of each of `paths` (the stores of a sharded crawl's processes, read together).
pub fn open_stores(paths: &[std::path::PathBuf]) -> Result<Vec<Inspector>> {
    paths.iter().map(|p| open_store(p)).collect()
}

pub fn open_store(path: &std::path::Path) -> Result<Inspector> {
    let inspector = Inspector::open(path)?;
    if let Some(original) = inspector.store().snapshot_of() {
        eprintln!(
            "note: {} cannot be written; reading a temporary copy of it",
            original.display()
        );
    }
    Ok(inspector)
}

pub fn skipped(args: SkippedArgs) -> Result<ExitCode> {
    // The flags first: a bad --reason is refused before the store is opened.
    let reason = args
        .reason
        .as_deref()
        .map(str::parse::<SkipReason>)
        .transpose()
        .map_err(|e| anyhow!("--reason: {e}"))?;
    // Several stores (the shards of one crawl, or crawls side by side) are listed one after the
    // other, under one --limit.
    let mut in_log = 0;
    let mut rows = Vec::new();
    let mut shown = 0usize;
    to_stdout(|out| {
        if args.format == Format::Csv {
            writeln!(out, "{}", csv_line(SKIP_COLUMNS))?;
        }
        for store in &args.stores {
            let inspector = open_store(store)?;
            in_log += inspector.skip_log_len()?;
            let limit = args.limit.map(|l| l.saturating_sub(shown));
            if limit == Some(0) {
                continue;
            }
            let query = SkipQuery {
                reason,
                host: args.host.clone(),
                limit,
            };
            for entry in inspector.skips(&query)? {
                let (_, record) = entry?;
                shown += 1;
                match args.format {
                    Format::Jsonl => writeln!(out, "{}", skip_json(&record))?,
                    Format::Csv => writeln!(out, "{}", csv_line(skip_fields(&record)))?,
                    Format::Table => rows.push(skip_row(&record)),
                }
            }
        }
        if args.format == Format::Table {
            if !rows.is_empty() {
                let lines = table(
                    &["REASON", "URL", "ORIGINAL", "EVIDENCE"],
                    &rows,
                    &[false; 4],
                );
                for line in lines {
                    writeln!(out, "{line}")?;
                }
            }
            if args.reason.is_some() || args.host.is_some() {
                // The log's count is of every reason and host: not the number that matched.
                writeln!(
                    out,
                    "{} skipped shown (the log holds {in_log}, of every reason and host)",
                    rows.len()
                )?;
            } else {
                writeln!(out, "{} skipped shown (of {in_log} in the log)", rows.len())?;
            }
        }
        Ok(())
    })
}

pub fn tune(args: TuneArgs) -> Result<ExitCode> {
    let stores = open_stores(&args.stores)?;
    let view = simcrawl_crawl::inspect::tune_of(&stores, args.samples, args.k)?;
    let by_k: Vec<_> = view.replay.by_k.iter().zip(&view.would_index).collect();
    if args.json {
        let obj = json!({
            "pages": view.replay.pages,
            "near_skips": view.near_skips,
            "canonical_skips": view.canonical_skips,
            "by_k": by_k.iter().map(|(s, would_index)| json!({
                "k": s.k,
                "would_skip": s.would_skip,
                "clusters": s.clusters,
                "clustered_pages": s.clustered_pages,
                "would_index": would_index,
            })).collect::<Vec<_>>(),
            "samples": view.replay.samples.iter().map(|s| json!({
                "distance": s.distance,
                "a": {"id": s.a.id, "url": s.a.url},
                "b": {"id": s.b.id, "url": s.b.url},
                "diff": s.diff,
            })).collect::<Vec<_>>(),
        });
        return to_stdout(|out| Ok(writeln!(out, "{obj}")?));
    }
    to_stdout(|out| {
        writeln!(
            out,
            "replayed {}; {} by SimHash distance in the log ({} near-duplicate, {} canonical)\n",
            plural(view.replay.pages as u64, "indexed page", "indexed pages"),
            plural(view.near_skips, "skip", "skips"),
            view.near_skips - view.canonical_skips,
            view.canonical_skips,
        )?;
        let rows: Vec<Vec<String>> = by_k
            .iter()
            .map(|(s, would_index)| {
                vec![
                    s.k.to_string(),
                    s.would_skip.to_string(),
                    s.clusters.to_string(),
                    s.clustered_pages.to_string(),
                    would_index.to_string(),
                ]
            })
            .collect();
        let headers = [
            "k",
            "would skip",
            "clusters",
            "clustered pages",
            "would index",
        ];
        for line in table(&headers, &rows, &[true; 5]) {
            writeln!(out, "  {line}")?;
        }
        writeln!(
            out,
            "\n  would skip:  indexed pages a crawl at k would skip as copies of an earlier one\n  \
             would index: skips of the crawl by distance (near-duplicate, canonical) above k"
        )?;
        if view.replay.pages < 2 {
            return Ok(());
        }
        writeln!(out, "\nsample pairs (up to {} per distance):", args.samples)?;
        let mut without = Vec::new();
        for d in 0..=args.k {
            let pairs: Vec<_> = view
                .replay
                .samples
                .iter()
                .filter(|s| s.distance == d)
                .collect();
            if pairs.is_empty() {
                without.push(d.to_string());
                continue;
            }
            writeln!(out, "\ndistance {d}:")?;
            for s in pairs {
                writeln!(out, "  #{:<6} {}", s.a.id, clip_middle(&s.a.url, 90))?;
                writeln!(out, "  #{:<6} {}", s.b.id, clip_middle(&s.b.url, 90))?;
                writeln!(out, "          {}", diff_line(&s.diff, 100))?;
            }
        }
        if !without.is_empty() {
            writeln!(out, "\nno pairs at distance {}", without.join(", "))?;
        }
        Ok(())
    })
}

pub fn clusters(args: ClustersArgs) -> Result<ExitCode> {
    let stores = open_stores(&args.stores)?;
    let several = stores.len() > 1;
    let listing = simcrawl_crawl::inspect::clusters_of(&stores, args.k, args.limit)?;
    // With several stores a page is named by its store's number and its id there.
    let name = |p: &simcrawl_crawl::inspect::PageSummary| {
        if several {
            format!("{}#{}", p.store, p.id)
        } else {
            format!("#{}", p.id)
        }
    };
    to_stdout(|out| {
        if args.json {
            for (i, cluster) in listing.clusters.iter().enumerate() {
                let obj = json!({
                    "cluster": i + 1,
                    "k": listing.k,
                    "size": cluster.len(),
                    "pages": cluster.iter().map(|p| json!({
                        "id": p.id,
                        "store": args.stores[p.store],
                        "url": p.url,
                        "title": p.title,
                    })).collect::<Vec<_>>(),
                });
                writeln!(out, "{obj}")?;
            }
            return Ok(());
        }
        for (i, cluster) in listing.clusters.iter().enumerate() {
            writeln!(
                out,
                "cluster {} ({})",
                i + 1,
                plural(cluster.len() as u64, "page", "pages")
            )?;
            let rows: Vec<Vec<String>> = cluster
                .iter()
                .map(|p| {
                    vec![
                        name(p),
                        clip_middle(&p.url, 70),
                        cell(p.title.as_deref().unwrap_or("(no title)"), 50),
                    ]
                })
                .collect();
            for line in table_rows(&rows, &[true, false, false]) {
                writeln!(out, "  {line}")?;
            }
            writeln!(out)?;
        }
        if listing.total == 0 {
            writeln!(out, "no near-duplicate clusters at k = {}", listing.k)?;
        } else {
            let shown = if listing.clusters.len() < listing.total {
                format!(" ({} shown)", listing.clusters.len())
            } else {
                String::new()
            };
            writeln!(
                out,
                "{} at k = {}{shown}, {} in them",
                plural(listing.total as u64, "cluster", "clusters"),
                listing.k,
                plural(listing.clustered_pages as u64, "page", "pages")
            )?;
        }
        Ok(())
    })
}

pub fn template(args: TemplateArgs) -> Result<ExitCode> {
    let inspectors = open_stores(&args.stores)?;
    let Some(host) = args.host else {
        // A sharded crawl's hosts are each in one store: their rows one store after the other.
        let mut hosts = Vec::new();
        for inspector in &inspectors {
            hosts.extend(inspector.templates()?);
        }
        return to_stdout(|out| {
            let rows: Vec<Vec<String>> = hosts
                .iter()
                .filter(|(_, _, lines)| *lines > 0)
                .map(|(host, pages, lines)| {
                    vec![host.clone(), pages.to_string(), lines.to_string()]
                })
                .collect();
            if rows.is_empty() {
                writeln!(
                    out,
                    "no host has a template yet ({} hosts counted)",
                    hosts.len()
                )?;
                return Ok(());
            }
            for line in table(
                &["HOST", "PAGES COUNTED", "TEMPLATE LINES"],
                &rows,
                &[false, true, true],
            ) {
                writeln!(out, "{line}")?;
            }
            Ok(())
        });
    };
    // The store of the process that crawled the host.
    let store = simcrawl_crawl::inspect::store_of_host_name(&inspectors, &host)?;
    let template = store.unwrap_or(&inspectors[0]).template(&host)?;
    to_stdout(|out| {
        writeln!(
            out,
            "{host}: {} pages counted, {} template lines (on at least half of them; never a page's evidence)",
            template.pages,
            template.lines.len()
        )?;
        for line in &template.lines {
            writeln!(out, "  {:>4} pages  {}", line.pages, clip(&line.text, 100))?;
        }
        Ok(())
    })
}

pub fn mirrors(args: StoresArgs) -> Result<ExitCode> {
    let several = args.stores.len() > 1;
    let inspectors = open_stores(&args.stores)?;
    to_stdout(|out| {
        for (n, (path, inspector)) in args.stores.iter().zip(&inspectors).enumerate() {
            if several {
                // A sharded crawl's rules live with the process that owns their host.
                if n > 0 {
                    writeln!(out)?;
                }
                writeln!(out, "== {}", path.display())?;
            }
            write_rules(out, inspector)?;
        }
        Ok(())
    })
}

/// One store's learned rules with their evidence, as `simcrawl mirrors` prints them.
fn write_rules(out: &mut dyn Write, inspector: &Inspector) -> Result<()> {
    let rules = inspector.rules()?;
    let stats = inspector.stats()?;
    let (learned, revoked) = (stats.rules_learned, stats.rules_revoked);
    if rules.is_empty() {
        writeln!(out, "no rules learned")?;
        return Ok(());
    }
    let rows: Vec<Vec<String>> = rules.iter().map(rule_row).collect();
    let lines = table(
        &["ID", "KIND", "RULE", "EVIDENCE", "STATE", "SKIPPED"],
        &rows,
        &[true, false, false, false, false, true],
    );
    writeln!(out, "{}", lines[0])?;
    for (line, record) in lines[1..].iter().zip(&rules) {
        writeln!(out, "{line}")?;
        if let Some((copy, original)) = &record.example {
            writeln!(
                out,
                "    e.g. {} copies {}",
                clip_middle(copy, 70),
                clip_middle(original, 70)
            )?;
        }
    }
    let active = rules.iter().filter(|r| r.active).count();
    write!(
        out,
        "{}: {active} active, {} revoked",
        plural(rules.len() as u64, "rule", "rules"),
        rules.len() - active
    )?;
    // `stats` counts the store's own events: in a sharded crawl process 0 counts the
    // learnings and revocations, and a store from before rule ids kept one row per rule.
    // Say so when the two differ.
    if learned != rules.len() as u64 || revoked != (rules.len() - active) as u64 {
        write!(
            out,
            " (this store counted {learned} learnings and {revoked} revocations)"
        )?;
    }
    writeln!(out)?;
    Ok(())
}

/// The counts of the store at `path`; while a crawl runs in it (the store locked), the figures the
/// crawl wrote at its last checkpoint, said on standard error.
fn store_stats(path: &std::path::Path) -> Result<simcrawl_crawl::inspect::CrawlStats> {
    match Inspector::open(path) {
        Ok(inspector) => {
            if let Some(original) = inspector.store().snapshot_of() {
                eprintln!(
                    "note: {} cannot be written; reading a temporary copy of it",
                    original.display()
                );
            }
            if inspector.store().opened_after_unclean_stop() {
                eprintln!(
                    "note: {} was not closed cleanly (a crawl crashed or was killed): these are the figures of its last commit; the next crawl in it resumes from there",
                    path.display()
                );
            }
            Ok(inspector.stats()?)
        }
        Err(locked) if locked.is_locked() => {
            let Some(live) = simcrawl_crawl::live::LiveStats::read(path)? else {
                return Err(locked.into());
            };
            let now_ms = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64);
            let age = now_ms.saturating_sub(live.as_of_unix_ms) as f64 / 1000.0;
            eprintln!(
                "note: a crawl (process {}) is running in {}: its figures as of its last checkpoint, {age:.1} s ago",
                live.pid,
                path.display()
            );
            Ok(live.stats)
        }
        Err(e) => Err(e.into()),
    }
}

pub fn stats(args: StatsArgs) -> Result<ExitCode> {
    let mut s = store_stats(&args.stores[0])?;
    for store in &args.stores[1..] {
        s.merge(&store_stats(store)?);
    }
    if args.json {
        let obj = s.to_json();
        return to_stdout(|out| Ok(writeln!(out, "{obj}")?));
    }
    let mut rows: Vec<(String, String)> = vec![
        ("fetched".into(), s.fetched.to_string()),
        ("indexed".into(), s.indexed.to_string()),
        ("pages in the index".into(), s.indexed_pages.to_string()),
        ("failed".into(), s.failed.to_string()),
    ];
    rows.extend(
        s.failed_by
            .iter()
            .map(|(name, n)| (format!("  {name}"), n.to_string())),
    );
    rows.extend([
        ("not HTML".into(), s.not_html.to_string()),
        ("HTTP errors".into(), s.http_errors.to_string()),
        ("noindex".into(), s.noindex.to_string()),
        ("bodies cut at the size cap".into(), s.truncated.to_string()),
        (
            "links not followed (cap)".into(),
            s.links_dropped.to_string(),
        ),
        (
            "redirects queued / refused".into(),
            format!("{} / {}", s.redirects.0, s.redirects.1),
        ),
        (String::new(), String::new()),
        ("skipped".into(), s.skipped_total().to_string()),
    ]);
    rows.extend(
        s.skipped
            .iter()
            .map(|(r, n)| (format!("  {r}"), n.to_string())),
    );
    rows.push(("skip log entries".into(), s.skip_log_entries.to_string()));
    let t = &s.templates;
    rows.extend([
        (String::new(), String::new()),
        ("hosts with a template".into(), t.hosts.to_string()),
        ("  pages short without it".into(), t.short.to_string()),
        (
            "  copies distinct without it".into(),
            t.distinct.to_string(),
        ),
        ("  skips judged again".into(), t.requeued.to_string()),
        (
            "  pages fingerprinted again".into(),
            t.refingerprinted.to_string(),
        ),
    ]);
    rows.push((String::new(), String::new()));
    rows.push((
        "excluded by the frontier".into(),
        s.excluded_total().to_string(),
    ));
    rows.extend(
        s.excluded
            .iter()
            .map(|(name, n)| (format!("  {name}"), n.to_string())),
    );
    rows.push((String::new(), String::new()));
    to_stdout(|out| {
        for line in key_values(&rows) {
            writeln!(out, "{line}")?;
        }
        writeln!(
            out,
            "rules: {} learned, {} revoked",
            s.rules_learned, s.rules_revoked
        )?;
        let robots = if s.robots_ignored {
            "IGNORED (--ignore-robots)"
        } else {
            "obeyed"
        };
        writeln!(out, "robots.txt: {robots}")?;
        Ok(())
    })
}

pub fn export(args: ExportArgs) -> Result<ExitCode> {
    let several = args.stores.len() > 1;
    let inspectors = open_stores(&args.stores)?;
    let stores = || args.stores.iter().zip(&inspectors).enumerate();
    match args.format {
        ExportFormat::Jsonl => to_stdout(|out| {
            for (_, (path, inspector)) in stores() {
                let index = inspector.pages()?;
                for record in index.own_records() {
                    let record = record?;
                    // With the MinHash sketch, for `simcrawl dedup --input` to confirm pairs with.
                    let sketch = index.sketch_of(&record)?.map(|s| s.to_bytes());
                    let mut line = page_json(&record, sketch.as_deref());
                    if several {
                        // Ids count from 0 in each store.
                        line["store"] = json!(path.display().to_string());
                    }
                    writeln!(out, "{line}")?;
                }
            }
            Ok(())
        }),
        ExportFormat::EsBulk => to_stdout(|out| {
            // Unique over the stores (a store's ids count from 0): a sharded crawl's page is
            // named by its process, whichever stores are exported together.
            let prefixes = simcrawl_crawl::inspect::store_prefixes(&inspectors)?;
            for (n, (_, inspector)) in stores() {
                let index = inspector.pages()?;
                for record in index.own_records() {
                    let record = record?;
                    let id = simcrawl_crawl::inspect::page_key(prefixes[n], record.id);
                    writeln!(
                        out,
                        "{}",
                        json!({"index": {"_index": args.es_index, "_id": id}})
                    )?;
                    writeln!(out, "{}", page_json(&record, None))?;
                }
            }
            Ok(())
        }),
        ExportFormat::Cdxj => {
            let mut dirs = Vec::new();
            for (_, (path, inspector)) in stores() {
                let dir = match args.warc.clone().or(inspector.warc_dir()?) {
                    Some(dir) => dir,
                    None => {
                        return Err(anyhow!(
                            "the crawl in {} wrote no WARC files (crawl with --warc DIR), and no --warc DIR was given",
                            path.display()
                        ));
                    }
                };
                if !dirs.contains(&dir) {
                    dirs.push(dir);
                }
            }
            let mut files = Vec::new();
            for dir in &dirs {
                files.extend(simcrawl_warc::files(dir)?);
            }
            // Sorted together: one index of the whole crawl.
            let lines = simcrawl_warc::index_files(&files)?;
            to_stdout(|out| {
                for line in &lines {
                    writeln!(out, "{}", line.0)?;
                }
                Ok(())
            })
        }
    }
}

/// `simcrawl report`: the crawl's HTML report.
pub fn report(args: ReportArgs) -> Result<ExitCode> {
    let inspectors = open_stores(&args.stores)?;
    let names: Vec<String> = args
        .stores
        .iter()
        .map(|s| s.display().to_string())
        .collect();
    write_report(
        &inspectors,
        &names.join(" + "),
        &args.out,
        args.k,
        args.skips,
    )?;
    if args.out != std::path::Path::new("-") {
        println!("{}", args.out.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// Renders the report of the crawl in `inspectors` (one store, or a sharded crawl's) into `out`.
pub fn write_report(
    inspectors: &[Inspector],
    stores: &str,
    out: &std::path::Path,
    k: u32,
    skips: usize,
) -> Result<()> {
    let options = simcrawl_report::ReportOptions {
        k,
        skips_per_reason: skips,
        title: format!("simcrawl report: {stores}"),
        ..simcrawl_report::ReportOptions::default()
    };
    let html = simcrawl_report::render_stores(inspectors, &options)?;
    if out == std::path::Path::new("-") {
        use std::io::Write;
        let mut stdout = std::io::stdout().lock();
        return match stdout
            .write_all(html.as_bytes())
            .and_then(|()| stdout.flush())
        {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                Err(anyhow!("cannot write the report to standard output: {e}"))
            }
            _ => Ok(()),
        };
    }
    std::fs::write(out, html)
        .map_err(|e| anyhow!("cannot write the report to {}: {e}", out.display()))?;
    Ok(())
}

/// `simcrawl failed`: the failure log, oldest first.
pub fn failed(args: FailedArgs) -> Result<ExitCode> {
    let names: Vec<&str> = simcrawl_fetch::ErrorKind::NAMES
        .into_iter()
        .chain(["analysis", "out-of-scope", "trap"])
        .collect();
    // An HTTP error status is logged as `http-<status>` (`http-404`).
    let http_status = |r: &str| {
        r.strip_prefix("http-")
            .is_some_and(|s| s.len() == 3 && s.parse::<u16>().is_ok())
    };
    if let Some(r) = &args.reason
        && !names.contains(&r.as_str())
        && !http_status(r)
    {
        return Err(anyhow!(
            "--reason: unknown failure reason {r:?}: expected one of {}, or http-STATUS (http-404)",
            names.join(", ")
        ));
    }
    let mut records = Vec::new();
    for store in &args.stores {
        // One store after the other, as `skipped` lists several stores' skips.
        records.extend(open_store(store)?.failures(None)?);
    }
    let records: Vec<_> = records
        .into_iter()
        .filter(|f| args.reason.as_ref().is_none_or(|r| *r == f.reason))
        .take(args.limit.unwrap_or(usize::MAX))
        .collect();
    to_stdout(|out| {
        match args.format {
            Format::Jsonl => {
                for f in &records {
                    let line = json!({
                        "url": f.url, "reason": f.reason, "message": f.message,
                        "will_retry": f.will_retry, "depth": f.depth, "referrer": f.referrer,
                        "time_ms": f.time_ms,
                    });
                    writeln!(out, "{line}")?;
                }
            }
            Format::Csv => {
                writeln!(
                    out,
                    "{}",
                    csv_line(["url", "reason", "will_retry", "message"])
                )?;
                for f in &records {
                    let retry = f.will_retry.to_string();
                    writeln!(out, "{}", csv_line([&f.url, &f.reason, &retry, &f.message]))?;
                }
            }
            Format::Table => {
                let rows: Vec<Vec<String>> = records
                    .iter()
                    .map(|f| {
                        vec![
                            f.reason.clone(),
                            clip(&f.url, 60),
                            if f.will_retry { "retried" } else { "final" }.to_string(),
                            f.message.clone(),
                        ]
                    })
                    .collect();
                if rows.is_empty() {
                    writeln!(out, "no failed fetches")?;
                } else {
                    for line in table(&["REASON", "URL", "THEN", "ERROR"], &rows, &[false; 4]) {
                        writeln!(out, "{line}")?;
                    }
                }
            }
        }
        Ok(())
    })
}

/// Runs `write` on a locked, buffered standard output. A closed pipe is success: the reader has
/// what it wanted.
pub fn to_stdout(write: impl FnOnce(&mut dyn Write) -> Result<()>) -> Result<ExitCode> {
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let result = write(&mut out).and_then(|()| Ok(out.flush()?));
    closed_pipe_is_success(result)
}

fn closed_pipe_is_success(result: Result<()>) -> Result<ExitCode> {
    match result {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e)
            if e.chain().any(|cause| {
                cause
                    .downcast_ref::<io::Error>()
                    .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
            }) =>
        {
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => Err(e),
    }
}

/// A time in milliseconds since the Unix epoch as RFC 3339 UTC, to the second:
/// `2026-09-21T14:13:20Z`.
pub(crate) fn rfc3339(time_ms: u64) -> String {
    simcrawl_warc::WarcDate::from_unix_millis(time_ms).to_warc()
}

/// One CSV field: quoted when it holds a comma, a quote or a line break, with quotes doubled.
fn csv_field(field: &str) -> Cow<'_, str> {
    if field.contains([',', '"', '\n', '\r']) {
        Cow::Owned(format!("\"{}\"", field.replace('"', "\"\"")))
    } else {
        Cow::Borrowed(field)
    }
}

/// One CSV line (without its line break).
fn csv_line<S: AsRef<str>>(fields: impl IntoIterator<Item = S>) -> String {
    fields
        .into_iter()
        .map(|f| csv_field(f.as_ref()).into_owned())
        .collect::<Vec<_>>()
        .join(",")
}

/// `1 page`, `2 pages`.
fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn round3(x: f32) -> f64 {
    (f64::from(x) * 1000.0).round() / 1000.0
}

/// A skip record as one JSON object: the fields of [`SKIP_COLUMNS`].
fn skip_json(r: &SkipRecord) -> Value {
    json!({
        "url": r.url,
        "reason": r.reason.as_str(),
        "original": r.original,
        "distance": r.distance,
        "jaccard": r.jaccard.map(round3),
        "rule": r.rule,
        "rule_id": r.rule_id,
        "host": r.host,
        "depth": r.depth,
        "referrer": r.referrer,
        "time": rfc3339(r.time_ms),
        "evidence": r.evidence.as_ref().map(evidence_json),
    })
}

/// A comparison's evidence as one JSON object (pairs: the skipped page's, then the original's).
fn evidence_json(e: &simcrawl_crawl::evidence::TextEvidence) -> Value {
    json!({
        "same_text": e.same_text,
        "distance": e.distance,
        "jaccard": e.jaccard.map(|j| (j * 1000.0).round() / 1000.0),
        "words": e.words,
        "template_words": e.template_words,
        "whole_words": e.whole_words,
        "short": e.short(),
        "whole_distance": e.whole_distance,
        "same_whole": e.same_whole,
        "same_title": e.same_title,
        "same_host": e.same_host,
        "declares_canonical": e.declares_copy,
        "names_original": e.names_original,
        "text": e.describe(None),
    })
}

/// A skip record as CSV fields, in [`SKIP_COLUMNS`] order; absent values are empty.
fn skip_fields(r: &SkipRecord) -> [String; 12] {
    let opt = |s: &Option<String>| s.clone().unwrap_or_default();
    [
        r.url.clone(),
        r.reason.as_str().to_string(),
        opt(&r.original),
        r.distance.map(|d| d.to_string()).unwrap_or_default(),
        r.jaccard.map(|j| format!("{j:.3}")).unwrap_or_default(),
        opt(&r.rule),
        r.host.clone(),
        r.depth.to_string(),
        opt(&r.referrer),
        rfc3339(r.time_ms),
        r.evidence
            .as_ref()
            .map(|e| e.describe(None))
            .unwrap_or_default(),
        r.rule_id.map(|id| id.to_string()).unwrap_or_default(),
    ]
}

/// What a skip rests on, in words (see [`SkipRecord::evidence_text`]).
fn evidence(r: &SkipRecord) -> String {
    r.evidence_text()
}

fn skip_row(r: &SkipRecord) -> Vec<String> {
    // Clipped for a terminal's width only: piped to a file or a script, a URL is whole.
    let width = if io::IsTerminal::is_terminal(&io::stdout()) {
        URL_WIDTH
    } else {
        usize::MAX
    };
    vec![
        r.reason.as_str().to_string(),
        clip_middle(&r.url, width),
        r.original
            .as_deref()
            .map_or_else(|| "-".to_string(), |o| clip_middle(o, width)),
        cell(&evidence(r), 80),
    ]
}

fn rule_row(r: &RuleRecord) -> Vec<String> {
    let (kind, rule) = (r.rule.kind().name(), r.rule.kind().summary());
    vec![
        r.id.to_string(),
        kind.to_string(),
        cell(&rule, 80),
        format!(
            "{} agree, {} disagree",
            r.evidence.agree, r.evidence.disagree
        ),
        if r.active { "active" } else { "revoked" }.to_string(),
        r.skipped.to_string(),
    ]
}

/// A word diff on one line, clipped to `max` characters.
fn diff_line(diff: &[String], max: usize) -> String {
    if diff.is_empty() {
        return "(no word differences in the first 600 words)".into();
    }
    cell(&diff.join("  "), max)
}

/// Text for a table cell: control characters (line breaks, tabs) become spaces, then clipped.
fn cell(text: &str, max: usize) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    clip(&flat, max)
}

/// Cuts a URL to at most `max` characters by replacing its middle with `…`, keeping the scheme and
/// host at the start and the last path segment at the end, where URLs differ most.
fn clip_middle(url: &str, max: usize) -> String {
    let flat = cell(url, usize::MAX);
    let n = flat.chars().count();
    if n <= max || max < 3 {
        return clip(&flat, max);
    }
    // The origin (`scheme://host:port/`) whole when that leaves room for the end, else half and half.
    let origin = flat
        .find("://")
        .and_then(|i| flat[i + 3..].find('/').map(|j| i + 3 + j + 1))
        .map(|end| flat[..end].chars().count());
    let head = match origin {
        Some(origin) if origin + 1 + 12 <= max => origin,
        _ => max - 1 - (max - 1) / 2,
    };
    let tail = max - 1 - head;
    let start: String = flat.chars().take(head).collect();
    let end: String = flat.chars().skip(n - tail).collect();
    format!("{start}…{end}")
}

/// Aligned columns with a header line, two spaces apart. `right` says which columns are numbers
/// (right-aligned). The last column is not padded.
fn table<H: AsRef<str>>(headers: &[H], rows: &[Vec<String>], right: &[bool]) -> Vec<String> {
    let mut all = Vec::with_capacity(rows.len() + 1);
    all.push(headers.iter().map(|h| h.as_ref().to_string()).collect());
    all.extend(rows.iter().cloned());
    table_rows(&all, right)
}

/// Aligned columns, without a header line.
fn table_rows(rows: &[Vec<String>], right: &[bool]) -> Vec<String> {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut widths = vec![0; columns];
    for row in rows {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    rows.iter()
        .map(|row| {
            let mut line = String::new();
            for (i, c) in row.iter().enumerate() {
                if i > 0 {
                    line.push_str("  ");
                }
                let pad = widths[i] - c.chars().count();
                let last = i + 1 == row.len();
                if right.get(i).copied().unwrap_or(false) {
                    line.push_str(&" ".repeat(pad));
                    line.push_str(c);
                } else {
                    line.push_str(c);
                    if !last {
                        line.push_str(&" ".repeat(pad));
                    }
                }
            }
            line
        })
        .collect()
}

/// Label and value pairs, values right-aligned in one column; an empty pair is a blank line.
fn key_values(rows: &[(String, String)]) -> Vec<String> {
    let label = rows
        .iter()
        .map(|(k, _)| k.chars().count())
        .max()
        .unwrap_or(0);
    let value = rows
        .iter()
        .map(|(_, v)| v.chars().count())
        .max()
        .unwrap_or(0);
    rows.iter()
        .map(|(k, v)| {
            if k.is_empty() && v.is_empty() {
                String::new()
            } else {
                format!("{k:<label$}  {v:>value$}")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_from_known_times() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(999), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_790_000_000_000), "2026-09-21T14:13:20Z");
        assert_eq!(rfc3339(951_782_400_000), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_709_210_096_000), "2024-02-29T12:34:56Z");
        assert_eq!(rfc3339(4_102_444_799_000), "2099-12-31T23:59:59Z");
        assert_eq!(rfc3339(86_399_999), "1970-01-01T23:59:59Z");
        // No panic at the far end.
        assert!(rfc3339(u64::MAX).ends_with('Z'));
    }

    #[test]
    fn csv_quotes_only_when_needed() {
        assert_eq!(csv_field("http://a/b"), "http://a/b");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("two\nlines"), "\"two\nlines\"");
        assert_eq!(csv_field(""), "");
        assert_eq!(csv_line(["a", "b,c", ""]), "a,\"b,c\",");
        assert_eq!(csv_line(SKIP_COLUMNS).split(',').count(), 12);
    }

    fn record() -> SkipRecord {
        SkipRecord {
            time_ms: 1_790_000_000_000,
            url: "http://127.0.0.1:8081/a.html?x=1,2".into(),
            reason: SkipReason::NearDuplicate,
            original: Some("http://127.0.0.1:8080/a.html".into()),
            distance: Some(2),
            jaccard: Some(0.91),
            rule: None,
            rule_id: None,
            host: "127.0.0.1:8081".into(),
            depth: 3,
            referrer: None,
            evidence: None,
        }
    }

    #[test]
    fn skip_records_as_json_and_csv() {
        let r = record();
        let v = skip_json(&r);
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        let mut expected = SKIP_COLUMNS.to_vec();
        expected.sort_unstable();
        assert_eq!(keys, expected);
        assert_eq!(v["time"], "2026-09-21T14:13:20Z");
        assert_eq!(v["jaccard"], 0.91);
        assert_eq!(v["distance"], 2);
        assert_eq!(v["rule"], Value::Null);
        assert_eq!(v["reason"], "near-duplicate");
        assert_eq!(
            csv_line(skip_fields(&r)),
            "\"http://127.0.0.1:8081/a.html?x=1,2\",near-duplicate,http://127.0.0.1:8080/a.html,2,\
             0.910,,127.0.0.1:8081,3,,2026-09-21T14:13:20Z,,"
        );
        assert_eq!(evidence(&r), "distance 2, Jaccard 0.91");
        let mirror = SkipRecord {
            distance: None,
            jaccard: None,
            original: None,
            rule: Some("mirror b -> a".into()),
            rule_id: None,
            ..r
        };
        assert_eq!(evidence(&mirror), "mirror b -> a");
        assert_eq!(skip_row(&mirror)[2], "-");
        // A record with its comparison prints that, and the JSON carries it whole.
        let compared = SkipRecord {
            evidence: Some(simcrawl_crawl::evidence::TextEvidence {
                words: [24, 24],
                whole_words: [130, 131],
                short: [true, false],
                same_text: true,
                whole_distance: Some(1),
                same_whole: Some(true),
                same_title: true,
                jaccard: Some(1.0),
                ..Default::default()
            }),
            reason: SkipReason::TextDuplicate,
            ..record()
        };
        assert_eq!(
            evidence(&compared),
            "same main text, distance 0, Jaccard 1.00, main texts 24 and 24 words, short: same title, whole pages the same"
        );
        let v = skip_json(&compared);
        assert_eq!(v["evidence"]["words"], json!([24, 24]));
        assert_eq!(v["evidence"]["short"], true);
        // The evidence, then the rule id (none).
        assert!(csv_line(skip_fields(&compared)).ends_with("whole pages the same\","));
    }

    #[test]
    fn tables_align_columns_and_leave_the_last_unpadded() {
        let rows = vec![
            vec!["near-duplicate".to_string(), "7".into(), "x".into()],
            vec!["mirror".to_string(), "123".into(), "longer".into()],
        ];
        assert_eq!(
            table(&["REASON", "N", "WHAT"], &rows, &[false, true, false]),
            [
                "REASON            N  WHAT",
                "near-duplicate    7  x",
                "mirror          123  longer",
            ]
        );
        assert_eq!(
            key_values(&[
                ("fetched".into(), "10".into()),
                (String::new(), String::new()),
                ("  near".into(), "3".into()),
            ]),
            ["fetched  10", "", "  near    3"]
        );
    }

    #[test]
    fn urls_are_clipped_in_the_middle() {
        let url = "http://127.0.0.1:8080/a/very/long/path/to/some/page-0042.html";
        let clipped = clip_middle(url, 40);
        assert_eq!(clipped.chars().count(), 40);
        assert!(clipped.starts_with("http://127.0.0.1:8080/…"), "{clipped}");
        assert!(clipped.ends_with("/page-0042.html"), "{clipped}");
        // Too narrow for the whole origin: half and half.
        let narrow = clip_middle(url, 21);
        assert_eq!(narrow, "http://127…-0042.html");
        assert_eq!(clip_middle("http://a/", 30), "http://a/");
        assert_eq!(cell("a\tb\nc", 10), "a b c");
    }

    #[test]
    fn a_closed_pipe_is_success_and_other_errors_are_not() {
        let broken = io::Error::new(io::ErrorKind::BrokenPipe, "closed");
        assert!(closed_pipe_is_success(Err(broken.into())).is_ok());
        let other = io::Error::other("disk full");
        assert!(closed_pipe_is_success(Err(other.into())).is_err());
        assert!(closed_pipe_is_success(Ok(())).is_ok());
        // Through a writer that fails the way a closed pipe does.
        struct Closed;
        impl Write for Closed {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::ErrorKind::BrokenPipe.into())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let result = (|| -> Result<()> { Ok(writeln!(Closed, "row")?) })();
        assert!(closed_pipe_is_success(result).is_ok());
    }
}
