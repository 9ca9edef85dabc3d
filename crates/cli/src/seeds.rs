//! Reading seeds: a file with one URL per line (`#` comments and blank lines allowed), or URLs given
//! on the command line.

use anyhow::{Result, bail};

/// A line of a seeds file that is not a URL simcrawl can crawl.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadSeed {
    pub file: String,
    pub line: usize,
    pub text: String,
    pub reason: String,
}

impl std::fmt::Display for BadSeed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // A line of a megabyte is named by its start.
        let text = match self.text.char_indices().nth(100) {
            Some((end, _)) => format!("{:?}…", &self.text[..end]),
            None => format!("{:?}", self.text),
        };
        write!(
            f,
            "{}:{}: {text} is not a seed URL: {}",
            self.file, self.line, self.reason
        )
    }
}

fn check(text: &str) -> Result<String, String> {
    let max = simcrawl_frontier::TrapLimits::default().max_url_len;
    simcrawl_crawl::seeds::check(text, max).map_err(|e| e.to_string())
}

/// Parses a seeds file's contents. Bad lines are returned apart, each with its line number.
pub fn parse(file: &str, contents: &str) -> (Vec<String>, Vec<BadSeed>) {
    let mut seeds = Vec::new();
    let mut bad = Vec::new();
    // A file saved with a UTF-8 byte-order mark (Windows editors) starts with U+FEFF.
    let contents = contents.strip_prefix('\u{feff}').unwrap_or(contents);
    for (i, raw) in contents.lines().enumerate() {
        let text = raw.split_once('#').map_or(raw, |(before, _)| before).trim();
        if text.is_empty() {
            continue;
        }
        match check(text) {
            Ok(url) => seeds.push(url),
            Err(reason) => bad.push(BadSeed {
                file: file.to_string(),
                line: i + 1,
                text: text.to_string(),
                reason,
            }),
        }
    }
    (seeds, bad)
}

/// The seeds named by the command line: each argument is a seeds file if such a file exists, else a
/// URL. Bad lines stop with an error naming the line, unless `skip_bad` (then each is a warning).
pub fn collect(args: &[String], skip_bad: bool) -> Result<Vec<String>> {
    let mut seeds = Vec::new();
    for arg in args {
        let path = std::path::Path::new(arg);
        if path.is_dir() {
            bail!(
                "{arg} is a directory (a seed is a seeds file, one URL per line, or an absolute URL such as https://example.com/)"
            );
        }
        if path.is_file() {
            let contents = std::fs::read(path)
                .map_err(|e| anyhow::anyhow!("cannot read seeds file {arg}: {e}"))?;
            if contents.contains(&0) {
                bail!("{arg} is not a text file (a seeds file has one URL per line)");
            }
            let contents = String::from_utf8_lossy(&contents);
            let (good, bad) = parse(arg, &contents);
            if good.is_empty() && bad.is_empty() {
                bail!("{arg} has no seed URL: only comments and blank lines");
            }
            if let Some(first) = bad.first() {
                if !skip_bad {
                    let more = if bad.len() > 1 {
                        format!(" (and {} more bad lines)", bad.len() - 1)
                    } else {
                        String::new()
                    };
                    bail!(
                        "{first}{more}; fix the line, or pass --skip-bad-seeds to skip bad lines"
                    );
                }
                for b in &bad {
                    eprintln!("warning: skipping {b}");
                }
            }
            seeds.extend(good);
        } else {
            match check(arg) {
                Ok(url) => seeds.push(url),
                // No scheme: the user most likely meant a file.
                Err(_) if !arg.contains("://") && !path.exists() => {
                    bail!(
                        "{arg}: no such file (a seed is a seeds file, one URL per line, or an absolute URL such as https://example.com/)"
                    )
                }
                Err(reason) => bail!("{arg:?} is neither a seeds file nor a seed URL: {reason}"),
            }
        }
    }
    Ok(seeds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_byte_order_mark_is_not_part_of_the_first_seed() {
        let (good, bad) = parse(
            "seeds.txt",
            "\u{feff}http://a.example/\nhttp://b.example/\n",
        );
        assert_eq!(good, ["http://a.example/", "http://b.example/"]);
        assert!(bad.is_empty());
    }

    #[test]
    fn comments_blank_lines_and_bad_lines_with_numbers() {
        let (good, bad) = parse(
            "seeds.txt",
            "# my seeds\n\nhttp://a.example/  # the first\nftp://b.example/\n  https://c.example/x\nnot a url\n",
        );
        assert_eq!(good, ["http://a.example/", "https://c.example/x"]);
        assert_eq!(bad.len(), 2);
        assert_eq!(bad[0].line, 4);
        assert_eq!(bad[1].line, 6);
        assert!(
            bad[1].to_string().starts_with("seeds.txt:6: \"not a url\""),
            "{}",
            bad[1]
        );
    }

    #[test]
    fn a_bad_argument_is_an_error() {
        assert!(collect(&["nowhere-such-file".into()], false).is_err());
        assert_eq!(
            collect(&["http://x.example/".into()], false).unwrap(),
            ["http://x.example/"]
        );
    }
}
