//! `simcrawl search` and `simcrawl index`: the full-text index of the pages a crawl kept.

use crate::flags::{SearchArgs, SearchFormat, StoreArgs};
use crate::output::clip;
use anyhow::Result;
use serde_json::json;
use std::process::ExitCode;

/// `simcrawl search QUERY`: ranked hits with a snippet and the copies skipped against each.
pub fn search(args: SearchArgs) -> Result<ExitCode> {
    let mut indexes = Vec::with_capacity(args.stores.len());
    for store in &args.stores {
        if !store.exists() {
            anyhow::bail!(
                "no crawl store at {}; run `simcrawl crawl` first, or pass --store",
                store.display()
            );
        }
        let dir = simcrawl_search::index_dir(store);
        indexes.push(simcrawl_search::SearchIndex::open_read_only(&dir)?);
    }
    let several = indexes.len() > 1;
    let (hits, total) = simcrawl_search::search_across(&indexes, &args.query, args.limit)?;
    let pages: u64 = indexes.iter().map(|i| i.len()).sum();
    super::inspect::to_stdout(|out| {
        match args.format {
            SearchFormat::Jsonl => {
                for (n, hit) in &hits {
                    let mut line = json!({
                        "score": (f64::from(hit.score) * 1000.0).round() / 1000.0,
                        "id": hit.id,
                        "url": hit.url,
                        "title": hit.title,
                        "host": hit.host,
                        "simhash": format!("{:016x}", hit.simhash),
                        "snippet": hit.snippet,
                        "copies_skipped": hit.copies_total,
                        "copies": hit.copies,
                    });
                    if several {
                        // Ids count from 0 in each store.
                        line["store"] = json!(args.stores[*n].display().to_string());
                    }
                    writeln!(out, "{line}")?;
                }
            }
            SearchFormat::Table => {
                for (rank, (_, hit)) in hits.iter().enumerate() {
                    let title = if hit.title.is_empty() {
                        "(no title)"
                    } else {
                        &hit.title
                    };
                    writeln!(
                        out,
                        "{:>2}. {}  [{:.2}]",
                        rank + 1,
                        clip(title, 70),
                        hit.score
                    )?;
                    writeln!(out, "    {}", hit.url)?;
                    writeln!(out, "    {}", clip(&hit.snippet, 160))?;
                    match hit.copies_total {
                        0 => {}
                        n => {
                            let shown: Vec<&str> =
                                hit.copies.iter().take(3).map(String::as_str).collect();
                            let more = if n as usize > shown.len() {
                                format!(", and {} more", n as usize - shown.len())
                            } else {
                                String::new()
                            };
                            writeln!(
                                out,
                                "    {n} {} skipped: {}{more}",
                                if n == 1 { "copy" } else { "copies" },
                                shown.join(", ")
                            )?;
                        }
                    }
                }
                // The query as typed: in double quotes, or in single ones when it has double
                // quotes of its own (a phrase), never escaped.
                let quoted = if args.query.contains('"') {
                    format!("'{}'", args.query)
                } else {
                    format!("\"{}\"", args.query)
                };
                writeln!(
                    out,
                    "{} for {quoted} among {} pages",
                    // Every page that matches, not the ones shown (`--limit 3`).
                    match (hits.len(), total) {
                        (shown, total) if shown < total => format!("{shown} of {total} hits"),
                        (_, 1) => "1 hit".to_owned(),
                        (_, n) => format!("{n} hits"),
                    },
                    pages
                )?;
            }
        }
        Ok(())
    })
}

/// `simcrawl index`: the search index built again from the store.
pub fn index(args: StoreArgs) -> Result<ExitCode> {
    let inspector = super::inspect::open_store(&args.store)?;
    let bar = (!crate::output::quiet() && std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .then(|| {
            let bar = indicatif::ProgressBar::new(0);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{bar:40} {pos}/{len} pages  {per_sec}  eta {eta}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            bar
        });
    let started = std::time::Instant::now();
    let done = simcrawl_crawl::search::rebuild(inspector.store(), &args.store, |done, total| {
        if let Some(bar) = &bar {
            bar.set_length(total);
            bar.set_position(done);
        }
    })?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    println!(
        "indexed {done} pages into {} in {:.1} s",
        simcrawl_search::index_dir(&args.store).display(),
        started.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}
