//! `<meta>` directives: robots and refresh.

use url::Url;

/// Indexing and link-following directives from `<meta name="robots" content="...">`.
///
/// Directives are comma- or space-separated and case-insensitive. `none` means `noindex, nofollow`;
/// `all`, `index` and `follow` are the defaults and set nothing. Several robots `<meta>` tags
/// combine: any one that says `noindex` makes the page `noindex`.
///
/// Besides `name="robots"`, the tag named after the crawler's own agent
/// ([`ExtractOptions::robots_agent`](crate::ExtractOptions::robots_agent), `simcrawl` by default)
/// is honoured the same way. Tags for other agents (`googlebot`, `bingbot`...) are ignored: they
/// are not addressed to us. The `X-Robots-Tag` HTTP header is the fetcher's to read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct MetaRobots {
    /// Do not index this page (`noindex` or `none`).
    pub noindex: bool,
    /// Do not follow this page's links (`nofollow` or `none`).
    pub nofollow: bool,
    /// Do not keep a cached copy (`noarchive`).
    pub noarchive: bool,
}

impl MetaRobots {
    /// Adds the directives of one `content` attribute.
    pub(crate) fn apply(&mut self, content: &str) {
        for token in content
            .split(|c: char| c == ',' || c.is_ascii_whitespace())
            .filter(|t| !t.is_empty())
        {
            if token.eq_ignore_ascii_case("noindex") {
                self.noindex = true;
            } else if token.eq_ignore_ascii_case("nofollow") {
                self.nofollow = true;
            } else if token.eq_ignore_ascii_case("none") {
                self.noindex = true;
                self.nofollow = true;
            } else if token.eq_ignore_ascii_case("noarchive") {
                self.noarchive = true;
            }
        }
    }
}

/// A `<meta http-equiv="refresh" content="5; url=...">` directive.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MetaRefresh {
    /// Seconds before the refresh (fractions dropped, saturating).
    pub delay_secs: u32,
    /// Where it goes, resolved against the base URL. `None` when the content names no URL (the page
    /// reloads itself) or names one that is not an `http`/`https` URL.
    pub url: Option<Url>,
}

/// A parsed refresh `content` value, before URL resolution.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct RawRefresh<'a> {
    pub(crate) delay_secs: u32,
    pub(crate) target: Option<&'a str>,
}

/// Parses a refresh `content` value, following the HTML standard's "shared declarative refresh
/// steps", made more forgiving:
///
/// - `5`, `5;url=/x`, `5; URL='/x'`, `5, url="/x"`, `0.5;url=/x`, `5 url=/x` and `5; /x` all parse;
/// - a quoted URL ends at its closing quote; an unquoted one is trimmed;
/// - `url` without `=` (`5; urlfoo`) is read as a bare URL rather than the standard's quirk of
///   eating the letters `u`, `r`, `l`.
///
/// Returns `None` when the content does not start with a number (after white space).
pub(crate) fn parse_refresh(content: &str) -> Option<RawRefresh<'_>> {
    let s = content.trim_start_matches(is_html_space);
    let digits_end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (digits, rest) = s.split_at(digits_end);
    if digits.is_empty() && !rest.starts_with('.') {
        return None;
    }
    let delay_secs = digits.bytes().fold(0u32, |acc, d| {
        acc.saturating_mul(10).saturating_add(u32::from(d - b'0'))
    });
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
    if let Some(c) = rest.chars().next()
        && c != ';'
        && c != ','
        && !is_html_space(c)
    {
        // "5x": not a refresh directive at all.
        return None;
    }
    let rest = rest.trim_start_matches(is_html_space);
    let rest = rest
        .strip_prefix([';', ','])
        .unwrap_or(rest)
        .trim_start_matches(is_html_space);
    if rest.is_empty() {
        return Some(RawRefresh {
            delay_secs,
            target: None,
        });
    }
    let rest = strip_url_label(rest).unwrap_or(rest);
    let target = unquote(rest).trim_matches(is_html_space);
    Some(RawRefresh {
        delay_secs,
        target: (!target.is_empty()).then_some(target),
    })
}

/// Strips a leading `url =` label (case-insensitive, spaces allowed around `=`).
fn strip_url_label(s: &str) -> Option<&str> {
    let label = s.get(..3)?;
    if !label.eq_ignore_ascii_case("url") {
        return None;
    }
    let after = s[3..].trim_start_matches(is_html_space);
    let after = after.strip_prefix('=')?;
    Some(after.trim_start_matches(is_html_space))
}

/// A URL in single or double quotes ends at the closing quote; otherwise it runs to the end.
fn unquote(s: &str) -> &str {
    match s.chars().next() {
        Some(q @ ('"' | '\'')) => {
            let inner = &s[1..];
            inner.find(q).map_or(inner, |end| &inner[..end])
        }
        _ => s,
    }
}

fn is_html_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0c' | '\r')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(content: &str) -> Option<(u32, Option<&str>)> {
        parse_refresh(content).map(|r| (r.delay_secs, r.target))
    }

    #[test]
    fn refresh_forms() {
        assert_eq!(parsed("5"), Some((5, None)));
        assert_eq!(parsed("  0 ; "), Some((0, None)));
        assert_eq!(parsed("5;url=/next"), Some((5, Some("/next"))));
        assert_eq!(parsed("5; URL = '/a b'  trailing"), Some((5, Some("/a b"))));
        assert_eq!(parsed("3, url=\"/q?x=1\""), Some((3, Some("/q?x=1"))));
        assert_eq!(parsed("0.5;url=/x"), Some((0, Some("/x"))));
        assert_eq!(parsed(".5;url=/x"), Some((0, Some("/x"))));
        assert_eq!(parsed("5 url=/x"), Some((5, Some("/x"))));
        assert_eq!(parsed("5; /bare"), Some((5, Some("/bare"))));
        assert_eq!(parsed("5; urlish"), Some((5, Some("urlish"))));
        assert_eq!(
            parsed("5;url='unterminated"),
            Some((5, Some("unterminated")))
        );
        assert_eq!(parsed("5;url="), Some((5, None)));
        assert_eq!(
            parsed("99999999999999;url=/x"),
            Some((u32::MAX, Some("/x")))
        );
    }

    #[test]
    fn refresh_rejects_non_numbers() {
        assert_eq!(parsed(""), None);
        assert_eq!(parsed("url=/x"), None);
        assert_eq!(parsed("5x;url=/x"), None);
        assert_eq!(parsed("-1;url=/x"), None);
    }

    #[test]
    fn robots_directives_combine() {
        let mut robots = MetaRobots::default();
        robots.apply("INDEX, Follow");
        assert_eq!(robots, MetaRobots::default());
        robots.apply("noarchive,nofollow");
        assert!(robots.nofollow && robots.noarchive && !robots.noindex);
        let mut none = MetaRobots::default();
        none.apply(" none ");
        assert!(none.noindex && none.nofollow && !none.noarchive);
        let mut spaced = MetaRobots::default();
        spaced.apply("noindex nofollow");
        assert!(spaced.noindex && spaced.nofollow);
    }
}
