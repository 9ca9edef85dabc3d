//! The one rule of evidence: when what two pages' comparison showed supports skipping the later
//! page as a copy of the indexed one.
//!
//! Every text, near and canonical verdict of the crawl is [`judge`]d from a [`TextEvidence`]: the
//! two main texts as compared (a host's template lines set aside), their SimHash distance, their
//! MinHash Jaccard estimate, whether the normalised texts are identical, and what the whole pages
//! say (size, title, the whole page's fingerprint). The crawl decides with it, checks every skip
//! against it before the skip is written ([`check`]), and `simcrawl explain`, `skipped` and the
//! report print the same evidence, so a verdict never says what its numbers deny.
//!
//! The rule, in a few sentences:
//! - A page with no main text is a copy only of identical bytes.
//! - The two whole pages must be of comparable size (at most [`MAX_SIZE_RATIO`] times the words
//!   of each other), and two pages of one host with different titles are two pages, unless the
//!   page declares the other canonical.
//! - A **short** main text ([`MIN_MAIN_WORDS`] words, one the extractor called short, or one
//!   only its relaxed rules found, with blocks that named themselves boilerplate) is a
//!   copy only when it is the **same text** (a reference stub is its facts: `Size: 1 dword` and
//!   `Size: 2 dwords` are two pages), with the same title and the whole pages within k. A
//!   whole-page fingerprint may hold a verdict back, never make one.
//! - Otherwise the same normalised main text is a text duplicate; a main text within k bits of
//!   SimHash **and** at or above the Jaccard threshold is a near-duplicate (a canonical copy when
//!   the page names the original canonical).
//! - On **one host**, a main text under [`MIN_ONE_HOST_NEAR_WORDS`] words is a copy only when it
//!   is the same text (or names the other canonical): a generator's sibling pages (a method and
//!   the virtual method of its name) share their sentences and differ in the words they are about.
//! - What the pages name keeps two pages apart whatever their fingerprints say: numbers their
//!   URLs name ([`numbers_name_the_pages_apart`]), numbers alone on one host
//!   ([`texts_hold_other_numbers`]), words their URLs name ([`url_words_name_the_pages_apart`]),
//!   the figures of two data pages ([`data_pages_hold_other_numbers`]) and two versions of one
//!   document ([`urls_name_two_versions`]).
//!
//! ```
//! use simcrawl_crawl::evidence::{judge, NotACopy, Policy, TextEvidence};
//! use simcrawl_crawl::SkipReason;
//!
//! let policy = Policy { k: 3, jaccard: 0.8 };
//! let near = TextEvidence {
//!     words: [320, 318],
//!     whole_words: [420, 418],
//!     distance: 2,
//!     jaccard: Some(0.93),
//!     same_title: true,
//!     ..TextEvidence::default()
//! };
//! assert_eq!(judge(&near, &policy), Ok(SkipReason::NearDuplicate));
//! // Two 24-word stubs a few bits apart are two pages: their texts differ.
//! let stubs = TextEvidence { words: [24, 25], whole_words: [130, 131], distance: 18, jaccard: Some(0.02), ..near };
//! assert_eq!(judge(&stubs, &policy), Err(NotACopy::ShortTextsDiffer));
//! ```

use crate::skiplog::SkipReason;
use simcrawl_store::codec::{Codec, CodecError, Reader, write_element};
use std::fmt;

/// A main text with fewer words than this (once the host's template lines are set aside) is
/// short: it is a copy only of the same text (the extractor's own minimum for a main text).
pub const MIN_MAIN_WORDS: u32 = 50;

/// On one host, a main text with fewer words than this is a copy of another page of the host
/// only when it is the same text (or the page names the other canonical): a generator fills its
/// short pages with the same sentences, and the few words that differ are what the page is about
/// (GNU Pango's virtual method and method of one name, CMake's property of a target and of a
/// directory). Across hosts a near-copy is a copy with noise around the same document.
pub const MIN_ONE_HOST_NEAR_WORDS: u32 = 200;

/// A copy's whole page has at most this many times the words of its original's, and the other
/// way round.
pub const MAX_SIZE_RATIO: f64 = 2.0;

/// The thresholds a crawl judges with (`--k`, `--jaccard`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Policy {
    /// The largest SimHash distance of a near-duplicate.
    pub k: u32,
    /// The smallest MinHash Jaccard estimate of a near-duplicate (0: not required).
    pub jaccard: f64,
}

/// What comparing a page (`[0]`) with an indexed original (`[1]`) showed. The fields in pairs are
/// the page's first, then the original's.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TextEvidence {
    /// Words of each normalised main text as compared: without its host's template lines.
    pub words: [u32; 2],
    /// Words of each main text set aside as lines of its host's template.
    pub template_words: [u32; 2],
    /// Words of each whole page's normalised visible text (0: unknown, an old record).
    pub whole_words: [u32; 2],
    /// The extractor found no main block on the page (`[0]`) or the original (`[1]`): its main
    /// text is short whatever its length.
    pub short: [bool; 2],
    /// The two main texts as compared are the same normalised text.
    pub same_text: bool,
    /// SimHash distance of the two main texts as compared.
    pub distance: u32,
    /// MinHash Jaccard estimate of the two main texts as compared, when their sketches were read.
    pub jaccard: Option<f64>,
    /// SimHash distance of the two whole pages' visible texts (shown; a few bits say little: a
    /// table of contents that lists other entries can be 0 bits from the other).
    pub whole_distance: Option<u32>,
    /// The two whole pages' normalised visible texts are the same (`None`: not known, a page
    /// indexed before they were kept): a short main text is a copy only when they are.
    pub same_whole: Option<bool>,
    /// The two titles, normalised, are the same.
    pub same_title: bool,
    /// The two pages are on one host (`host[:port]`).
    pub same_host: bool,
    /// The page declares another URL canonical (rel=canonical, or a learned canonical rule): it
    /// says it is a copy, so one host's title rule does not hold it back (a print version).
    pub declares_copy: bool,
    /// The URL it declares canonical is the original's: a copy is a `canonical` skip.
    pub names_original: bool,
    /// The two pages declare canonical two URLs, neither its own, that differ (a book's page in
    /// two languages, each naming its language's URL on the publisher's site): two documents by
    /// the publisher's word, whatever their texts share. Never part of a skip's evidence (such a
    /// pair is no copy), so not written with it.
    pub canonicals_differ: bool,
    /// The two URLs end in other file names (their last path segments; a directory's index page
    /// named by its directory, [`file_name`]): not the same document under two hosts or two
    /// prefixes, as a mirror's copy is (see [`NotACopy::OtherNamesNumbersDiffer`]).
    pub other_name: bool,
    /// The two pages differ in a number their URLs name ([`numbers_name_the_pages_apart`], of
    /// their main texts as extracted and their titles): the dates and ids the normalisation
    /// drops as a copy's noise (a calendar's day pages differ in the date of their titles).
    pub numbers_differ: bool,
    /// The two pages' main texts and titles differ in their numbers alone
    /// ([`texts_hold_other_numbers`]: versions, defaults, an object's number, a date's digits, a
    /// price; clock times only where a text holds several). The normalisation drops dates as a copy's
    /// noise, and a number is one word of many: a copy elsewhere may change its dates, a copy on
    /// its own host has its original's numbers, where two versions of a manual's page (`Install
    /// version 2.0.1`, `1.0.4`; `Default: 30`, `60`) and a museum's objects (`1954.6.5`,
    /// `1954.12.3`) differ in them and nothing else; or their titles differ in a number alone (a
    /// package's page and one version's, `holidays-db` and `holidays-db 2022.3.24`). Not written
    /// with a skip's evidence (a skip has it only when the page names its original canonical).
    pub other_numbers: bool,
    /// Each URL names a word that its own page's text holds more often than the other's
    /// ([`url_words_name_the_pages_apart`]): a generator's siblings (`/api/users/list` and
    /// `/api/groups/list`, one title and most of their words alike). Not written with a skip's
    /// evidence (such a pair is no copy).
    pub url_words_differ: bool,
    /// Both main texts are a data page's, whose numbers are its facts, and they hold other
    /// numbers ([`data_pages_hold_other_numbers`]: a timetable of another station, a results table
    /// of another day). Not written with a skip's evidence (such a pair is no copy).
    pub data_differs: bool,
    /// The two URLs, on one host, name two versions of one document
    /// ([`urls_name_two_versions`]: `/1.0/` and `/1.1/`, `?h=v1.1.2` and `?h=main`). Not written
    /// with a skip's evidence (such a pair with other texts is no copy).
    pub other_versions: bool,
    /// The two URLs, on one host, are one path with one query value apart
    /// ([`urls_select_other_content`]: `?photo=3` and `?photo=4`, `?term=2255` and `?term=2258`).
    /// Not written with a skip's evidence (such a pair with other texts is no copy).
    pub other_selection: bool,
}

/// The numbers of a text: its tokens of ASCII digits alone between other characters than
/// letters, digits and `:`, without leading zeros (`06` is `6`). A clock time (`10:32`) and the
/// digits of an id (`7736a425`, `MD4`) are no number of it: a copy's timestamp or session id
/// changes with every response.
fn numbers(t: &str) -> impl Iterator<Item = &str> {
    t.split(|c: char| !c.is_alphanumeric() && c != ':')
        .filter(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()))
        .map(|r| match r.trim_start_matches('0') {
            "" => "0",
            n => n,
        })
}

/// The year, month and day of each date a text writes compactly (`20240418`, iCalendar's
/// `DTSTART:20240418T183000`): a run of eight digits that reads as a date between 1900 and 2099,
/// as [`numbers`] gives a date written with dashes (`2024`, `4`, `18`).
fn compact_date_parts(t: &str) -> impl Iterator<Item = &str> {
    let bytes = t.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        if i - start != 8 {
            continue;
        }
        let run = &t[start..i];
        let num = |r: &str| r.parse::<u32>().unwrap_or(0);
        let (year, month, day) = (&run[..4], &run[4..6], &run[6..]);
        if (1900..2100).contains(&num(year))
            && (1..=12).contains(&num(month))
            && (1..=31).contains(&num(day))
        {
            out.push(year);
            out.push(month.trim_start_matches('0'));
            out.push(day.trim_start_matches('0'));
        }
    }
    out.into_iter()
}

/// [`numbers`] with their signs: a `-` or `+` right before a number, itself after something
/// other than a letter or a digit (`return -1;`, `-5 degrees`; not the hyphens of `2024-05-01`
/// or `page-2`), is the number's.
fn signed_numbers(t: &str) -> Vec<&str> {
    let bytes = t.as_bytes();
    // A letter, a digit or `:`: what glues a run of digits into a word, a time or an id
    // (`numbers` splits at anything else, a currency's sign among them: `£30000`, `€37`).
    let glue = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == ':');
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_digit() || glue(t[..i].chars().next_back()) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        if glue(t[i..].chars().next()) {
            continue;
        }
        let digits = match t[start..i].trim_start_matches('0') {
            "" => &t[i - 1..i],
            n => n,
        };
        let signed = start > 0
            && matches!(bytes[start - 1], b'-' | b'+')
            && (start == 1 || !bytes[start - 2].is_ascii_alphanumeric());
        out.push(if signed {
            // The sign and the digits, leading zeros and all: `-05` and `-5` are rare enough.
            &t[start - 1..i]
        } else {
            digits
        });
    }
    out
}

/// The clock times a text writes (`08:39`, `10:32:07`), in order.
fn clock_times(t: &str) -> impl Iterator<Item = &str> {
    t.split(|c: char| !c.is_ascii_digit() && c != ':')
        .filter(|w| holds_a_clock_time(w))
}

use simcrawl_extract::holds_a_clock_time;

/// `t` with the colons between digits that are no clock time ([`holds_a_clock_time`]: a score
/// `3:1`, a verse `1:3`, a section `12:104`) written as spaces, so that [`numbers`] and
/// [`signed_numbers`] read their numbers (a colon glues a clock time's digits into no number).
fn colons_apart(t: &str) -> std::borrow::Cow<'_, str> {
    let bytes = t.as_bytes();
    let apart = |i: usize| {
        bytes[i] == b':'
            && i > 0
            && i + 1 < bytes.len()
            && bytes[i - 1].is_ascii_digit()
            && bytes[i + 1].is_ascii_digit()
            && {
                // The run of digits and colons around it.
                let start = bytes[..i]
                    .iter()
                    .rposition(|b| !b.is_ascii_digit() && *b != b':')
                    .map_or(0, |p| p + 1);
                let end = bytes[i..]
                    .iter()
                    .position(|b| !b.is_ascii_digit() && *b != b':')
                    .map_or(bytes.len(), |p| i + p);
                !holds_a_clock_time(&t[start..end])
            }
    };
    if !(0..bytes.len()).any(apart) {
        return std::borrow::Cow::Borrowed(t);
    }
    let mut out = bytes.to_vec();
    for (i, b) in out.iter_mut().enumerate() {
        if apart(i) {
            *b = b' ';
        }
    }
    // Only ASCII colons were replaced by ASCII spaces.
    std::borrow::Cow::Owned(String::from_utf8(out).unwrap_or_else(|_| t.to_owned()))
}

/// Whether two titles name other ids or stamps: the tokens the normalisation drops as noise
/// numbers ([`simcrawl_extract::is_noise_number`]: hashes, runs of seven digits and more, dates),
/// clock times aside, counted, differ. Two pages of one host whose titles differ there name two
/// pages (`Index of /pub/nightly/8866da009/` and `…/642ebcdbd/`, `Bug 2254801` and `Bug
/// 2254804`): a title is no place for a copy's session id.
///
/// ```
/// use simcrawl_crawl::evidence::titles_name_other_ids;
/// assert!(titles_name_other_ids("Index of /pub/nightly/8866da009/", "Index of /pub/nightly/642ebcdbd/"));
/// assert!(!titles_name_other_ids("Status at 10:32", "Status at 11:05"));
/// assert!(!titles_name_other_ids("Guide", "Guide"));
/// ```
pub fn titles_name_other_ids(a: &str, b: &str) -> bool {
    fn ids(t: &str) -> Vec<&str> {
        let mut ids: Vec<&str> = t
            .split(|c: char| c.is_whitespace() || c == '/')
            .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
            .filter(|w| !holds_a_clock_time(w) && simcrawl_extract::is_noise_number(w))
            .collect();
        ids.sort_unstable();
        ids
    }
    ids(a) != ids(b)
}

/// Whether two pages differ in a number their URLs name: a number of one page's text (its main
/// text and title, `a` and `b`) that the other's text lacks, and that its own URL holds (a day's
/// date in `/calendar/day/2024-04-10`, an event's in `/events/choir/2024-03-20`, an id). A
/// copy's timestamp, which the normalisation drops, is no number of its URL.
///
/// ```
/// use simcrawl_crawl::evidence::numbers_name_the_pages_apart;
/// let a = ("Wednesday 06 March, 18:30", "http://c.example/events/choir/2024-03-06");
/// let b = ("Wednesday 20 March, 19:00", "http://c.example/events/choir/2024-03-20");
/// assert!(numbers_name_the_pages_apart(a.0, a.1, b.0, b.1));
/// // The same occurrences as iCalendar writes them.
/// let ical = |d: &str| format!("BEGIN:VEVENT DTSTART:{d}T183000 SUMMARY:Choir");
/// assert!(numbers_name_the_pages_apart(
///     &ical("20240306"), "http://c.example/events/choir/2024-03-06/?ical=1",
///     &ical("20240320"), "http://c.example/events/choir/2024-03-20/?ical=1"));
/// // The same article with another timestamp and session, under another URL: no number of
/// // a URL, though the time holds 23.
/// let c = ("Updated 10:32 (sid 19ab). The tide", "http://a.example/articles/19.html");
/// let d = ("Updated 11:23 (sid 23cd). The tide", "http://a.example/articles/23.html");
/// assert!(!numbers_name_the_pages_apart(c.0, c.1, d.0, d.1));
/// // Two verses of one text, their references like clock times that their URLs name.
/// let e = ("Proverbs 14:12 (KJV). There is a way", "http://s.example/kjv/proverbs/14/12");
/// let f = ("Proverbs 16:25 (KJV). There is a way", "http://s.example/kjv/proverbs/16/25");
/// assert!(numbers_name_the_pages_apart(e.0, e.1, f.0, f.1));
/// // Two builds of one day, named by their commits.
/// let g = ("Development build. Commit c143869838.", "http://d.example/builds/c143869838/");
/// let h = ("Development build. Commit 49d59b90c1.", "http://d.example/builds/49d59b90c1/");
/// assert!(numbers_name_the_pages_apart(g.0, g.1, h.0, h.1));
/// // A session id in the query is no name of the page.
/// let i = ("Guide. Session 7736a42555.", "http://a.example/guide?sid=7736a42555");
/// let j = ("Guide. Session 19ab23cd45.", "http://a.example/guide?sid=19ab23cd45");
/// assert!(!numbers_name_the_pages_apart(i.0, i.1, j.0, j.1));
/// ```
pub fn numbers_name_the_pages_apart(a: &str, a_url: &str, b: &str, b_url: &str) -> bool {
    let (a, b) = (colons_apart(a), colons_apart(b));
    let (a, b) = (a.as_ref(), b.as_ref());
    let differs = |this: &str, this_url: &str, other: &str| {
        let theirs: std::collections::HashSet<&str> =
            numbers(other).chain(compact_date_parts(other)).collect();
        let url_numbers: Vec<&str> = numbers(this_url).collect();
        let url: std::collections::HashSet<&str> = url_numbers.iter().copied().collect();
        // A pair that reads as a clock time and that the URL names, its two numbers one after
        // the other (`Proverbs 14:12` at `/proverbs/14/12`): a verse, a chapter and section, no
        // copy's stamp, which no URL names.
        let url_pairs: std::collections::HashSet<String> = url_numbers
            .windows(2)
            .map(|w| format!("{}:{}", w[0], w[1]))
            .collect();
        let their_pairs: std::collections::HashSet<String> = clock_pairs(other).collect();
        // An id of its text that its URL's path names (a build's commit, `/builds/c143869838/`):
        // a copy's session id is no part of a path its copy shares.
        let path_ids: std::collections::HashSet<&str> = ids(url_path(this_url)).collect();
        let their_ids: std::collections::HashSet<&str> = ids(other).collect();
        numbers(this)
            .chain(compact_date_parts(this))
            .any(|n| !theirs.contains(n) && url.contains(n))
            || clock_pairs(this).any(|p| url_pairs.contains(&p) && !their_pairs.contains(&p))
            || (!path_ids.is_empty()
                && ids(this).any(|id| path_ids.contains(id) && !their_ids.contains(id)))
    };
    differs(a, a_url, b) || differs(b, b_url, a)
}

/// The ids of a text: its runs of letters and digits that the normalisation drops as a copy's
/// noise ([`simcrawl_extract::is_noise_number`]) and that are neither a clock time, a date nor
/// digits alone (which [`numbers`] reads): hashes and other ids mixing letters and digits.
fn ids(t: &str) -> impl Iterator<Item = &str> {
    t.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| {
        !w.is_empty()
            && !w.bytes().all(|b| b.is_ascii_digit())
            && simcrawl_extract::is_noise_number(w)
    })
}

/// The path of a serialised absolute URL (`http://h/a/b?q` → `/a/b`).
fn url_path(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let path = rest.find('/').map_or("", |i| &rest[i..]);
    path.split(['?', '#']).next().unwrap_or("")
}

/// The clock times of a text as their first two numbers without leading zeros (`09:05:30` is
/// `9:5`), as [`numbers`] writes a URL's.
fn clock_pairs(t: &str) -> impl Iterator<Item = String> + '_ {
    clock_times(t).filter_map(|time| {
        let mut parts =
            time.split(':')
                .filter(|p| !p.is_empty())
                .map(|p| match p.trim_start_matches('0') {
                    "" => "0",
                    n => n,
                });
        Some(format!("{}:{}", parts.next()?, parts.next()?))
    })
}

/// Whether two texts (a page's title and main text, as extracted) differ in their numbers
/// alone: the same words once every number is set aside, and other numbers as written, counted
/// (a list's order is no difference; `2.0.1` is 2, 0 and 1; dates, prices and phone numbers
/// among them), or other clock times where times are what the texts hold. See
/// [`TextEvidence::other_numbers`].
///
/// A number is then all that tells the two apart, and it is their fact: two versions of a
/// manual's page (`Install version 2.0.1`, `1.0.4`; `Default: 30`, `60`), a museum's objects
/// (`1954.6.5`, `1954.12.3`), two calendar versions' notes, two ads' prices (`1250000`,
/// `1275000`). An article's second version, a sentence rewritten and a new date, is its
/// near-duplicate: its words differ too. A clock time or two is a copy's stamp (`Updated
/// 10:32`), which changes from one response to the next; a timetable's departures are its text:
/// clock times count when the two texts hold other numbers of them, or three or more each.
///
/// ```
/// use simcrawl_crawl::evidence::texts_hold_other_numbers;
/// assert!(texts_hold_other_numbers("Install version 2.0.1", "Install version 1.0.4"));
/// assert!(texts_hold_other_numbers("Object 1954.6.5. Untitled", "Object 1954.12.3. Untitled"));
/// assert!(texts_hold_other_numbers("Price 1250000 EUR", "Price 1275000 EUR"));
/// assert!(texts_hold_other_numbers("Salary £30000", "Salary £37000"));
/// // The same numbers in another order, a clock time: the same numbers.
/// assert!(!texts_hold_other_numbers("1 then 2", "2 then 1"));
/// // But not a date's: a nightly build of 4 March and one of 3 April. And a score is numbers.
/// assert!(texts_hold_other_numbers("Nightly 2025-03-04 for Linux", "Nightly 2025-04-03 for Linux"));
/// assert!(texts_hold_other_numbers("Final score 3:1", "Final score 2:1"));
/// assert!(texts_hold_other_numbers("See R.S. 12:104.", "See R.S. 12:210."));
/// assert!(!texts_hold_other_numbers("Updated 10:32", "Updated 11:05"));
/// // A timetable's departures.
/// assert!(texts_hold_other_numbers("dep 08:39 09:09 09:39", "dep 08:40 09:10 09:40"));
/// assert!(texts_hold_other_numbers("dep 08:39 09:09 09:39", "dep 08:39 09:09"));
/// // A sign is the number's.
/// assert!(texts_hold_other_numbers("return -1;", "return 1;"));
/// assert!(texts_hold_other_numbers("DTSTART:20240418T183000 Meetup", "DTSTART:20240307T183000 Meetup"));
/// // An edited text with a new date: the date is the edit's stamp.
/// assert!(!texts_hold_other_numbers(
///     "Published 2024-03-05. The tide came in at 80 knots.",
///     "Published 2024-03-07. The tide came in early."
/// ));
/// ```
pub fn texts_hold_other_numbers(a: &str, b: &str) -> bool {
    let (a, b) = (colons_apart(a), colons_apart(b));
    let (a, b) = (a.as_ref(), b.as_ref());
    fn counted(t: &str) -> Vec<&str> {
        let mut n = signed_numbers(t);
        // A date written compactly, glued to letters (iCalendar's `DTSTART:20240418T183000`).
        n.extend(compact_date_parts(t));
        // And each date whole, as written: its numbers alone, counted, are the same for
        // 2025-03-04 and 2025-04-03.
        n.extend(
            t.split_whitespace()
                .filter(|w| simcrawl_extract::holds_a_date(w))
                .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric())),
        );
        n.sort_unstable();
        n
    }
    /// Its clock times, sorted.
    fn clocks(t: &str) -> Vec<&str> {
        let mut c: Vec<&str> = clock_times(t).collect();
        c.sort_unstable();
        c
    }
    const WORDS: simcrawl_extract::NormalizeOptions = simcrawl_extract::NormalizeOptions {
        strip_digits: true,
        ..simcrawl_extract::NormalizeOptions::FINGERPRINT
    };
    let numbers_differ = counted(a) != counted(b) || {
        let (ca, cb) = (clocks(a), clocks(b));
        ca.len() != cb.len() || (ca.len() >= 3 && ca != cb)
    };
    numbers_differ
        && simcrawl_extract::normalize_text(a, WORDS) == simcrawl_extract::normalize_text(b, WORDS)
}

/// A text is a data page's when at least this many of its tokens are numbers
/// ([`data_pages_hold_other_numbers`]).
pub const MIN_DATA_NUMBERS: usize = 12;

/// Whether two texts (a page's title and main text, as extracted) are both a data page's, whose
/// numbers are its facts, and hold other numbers: each text's numbers (signed numbers and clock
/// times, as [`texts_hold_other_numbers`] reads them) are at least [`MIN_DATA_NUMBERS`] and a fifth
/// of its words, and at least three of them, and a tenth, are not the other's (counted).
///
/// A timetable's rows repeat their words (`S1 Flughafen Platform 1`) and differ in their times;
/// a results table, a price history or a weather page repeats its labels and differs in its
/// figures. The fingerprints drop digits as a copy's noise, so two such pages are one text to
/// them, and the words that tell them apart (a station's name in a title both share) are a few of
/// hundreds. A copy of a data page has its numbers; a copy's stamp (`Updated 10:32`, a counter)
/// is one or two numbers of many.
///
/// ```
/// use simcrawl_crawl::evidence::data_pages_hold_other_numbers;
/// let rows = |start: u32| {
///     (0..16)
///         .map(|i| format!("{:02}:{:02} S1 Airport platform 1", 6 + i, (start + i * 7) % 60))
///         .collect::<Vec<_>>()
///         .join(" ")
/// };
/// assert!(data_pages_hold_other_numbers(&rows(12), &rows(15)));
/// // The same timetable with a stamp of its own is the same data.
/// let stamped = |at: &str| format!("Updated {at} {}", rows(12));
/// assert!(!data_pages_hold_other_numbers(&stamped("10:32"), &stamped("11:05")));
/// // An article whose few numbers differ is no data page.
/// assert!(!data_pages_hold_other_numbers(
///     "In 2019 the 3 rivers rose by 12 metres and the town of 4000 people left",
///     "In 2021 the 5 rivers rose by 14 metres and the town of 4300 people left"
/// ));
/// ```
pub fn data_pages_hold_other_numbers(a: &str, b: &str) -> bool {
    let (a, b) = (colons_apart(a), colons_apart(b));
    let (a, b) = (a.as_ref(), b.as_ref());
    fn facts(t: &str) -> Vec<&str> {
        let mut n = signed_numbers(t);
        n.extend(clock_times(t));
        n.sort_unstable();
        n
    }
    let is_data = |t: &str, facts: &[&str]| {
        facts.len() >= MIN_DATA_NUMBERS && facts.len() * 5 >= t.split_whitespace().count()
    };
    let (fa, fb) = (facts(a), facts(b));
    if !is_data(a, &fa) || !is_data(b, &fb) {
        return false;
    }
    // The numbers both hold, counted: a merge of the two sorted lists.
    let (mut i, mut j, mut shared) = (0, 0, 0);
    while i < fa.len() && j < fb.len() {
        match fa[i].cmp(fb[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                shared += 1;
                i += 1;
                j += 1;
            }
        }
    }
    let most = fa.len().max(fb.len());
    let other = most - shared;
    other >= 3 && other * 10 >= most
}

/// Whether a URL's path segment or query value names a release or a branch: `1.0`, `v1.1.2`,
/// `3.x`, `2.0-rc1`, `v2`, or a channel (`latest`, `stable`, `main`, `master`, `trunk`, `dev`,
/// `nightly`, `next`, `current`, `lts`, `head`). A bare number (`15`) is an id or a page, not one.
pub(crate) fn names_a_version(token: &str) -> bool {
    let t = token.to_ascii_lowercase();
    if matches!(
        t.as_str(),
        "latest"
            | "stable"
            | "main"
            | "master"
            | "trunk"
            | "dev"
            | "devel"
            | "nightly"
            | "next"
            | "current"
            | "lts"
            | "head"
            | "tip"
    ) {
        return true;
    }
    let (v, rest) = match t.strip_prefix('v') {
        Some(rest) => (true, rest),
        None => (false, t.as_str()),
    };
    // Numbers joined by dots, the last part may be `x` or carry a pre-release (`0-rc1`, `0b2`).
    let mut parts = rest.split('.');
    let Some(first) = parts.next() else {
        return false;
    };
    if first.is_empty() || !first.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let mut dotted = false;
    for part in parts {
        dotted = true;
        let digits = part.bytes().take_while(u8::is_ascii_digit).count();
        let tail = &part[digits..];
        let tail_ok = tail.is_empty()
            || (digits == 0 && tail == "x")
            || (digits > 0
                && [
                    "rc", "-rc", "a", "b", "-alpha", "-beta", "alpha", "beta", "-dev", "-pre",
                ]
                .iter()
                .any(|p| {
                    tail.strip_prefix(p)
                        .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
                }));
        if (digits == 0 && tail != "x") || !tail_ok {
            return false;
        }
    }
    dotted || v
}

/// Whether two URLs of one host name two versions of one document: the same URL but for one
/// path segment or one query value, each naming a release or a branch (`1.0`, `v1.1.2`, `3.x`,
/// `main`; not a bare number):
/// `/1.0/geom/struct.Rect.html` and `/1.1/geom/struct.Rect.html`, `tree/src/cache.rs?h=v1.1.2` and
/// `?h=main`. A version that changed a signature, a limit or a sentence is the page of that
/// version: its few changed words are what a reader of it looks for.
///
/// ```
/// use simcrawl_crawl::evidence::urls_name_two_versions;
/// assert!(urls_name_two_versions("http://d.example/1.0/geom/rect.html", "http://d.example/1.1/geom/rect.html"));
/// assert!(urls_name_two_versions("http://g.example/r/tree/a.rs?h=v1.1.2", "http://g.example/r/tree/a.rs?h=main"));
/// assert!(!urls_name_two_versions("http://n.example/articles/87.html", "http://n.example/articles/87-v2.html"));
/// assert!(!urls_name_two_versions("http://n.example/page/2/", "http://n.example/page/3/"));
/// assert!(!urls_name_two_versions("http://d.example/1.0/a.html", "http://d.example/1.1/b.html"));
/// ```
pub fn urls_name_two_versions(a: &str, b: &str) -> bool {
    let (Ok(a), Ok(b)) = (url::Url::parse(a), url::Url::parse(b)) else {
        return false;
    };
    if a.host_str() != b.host_str() || a.port_or_known_default() != b.port_or_known_default() {
        return false;
    }
    let segments = |u: &url::Url| -> Vec<String> {
        u.path_segments()
            .map(|s| s.map(str::to_owned).collect())
            .unwrap_or_default()
    };
    let (sa, sb) = (segments(&a), segments(&b));
    let (qa, qb) = (a.query().unwrap_or(""), b.query().unwrap_or(""));
    let one_apart = |x: &[String], y: &[String]| -> Option<(String, String)> {
        if x.len() != y.len() {
            return None;
        }
        let mut apart = x.iter().zip(y).filter(|(p, q)| p != q);
        let first = apart.next()?;
        apart
            .next()
            .is_none()
            .then(|| (first.0.clone(), first.1.clone()))
    };
    let pair = if qa == qb {
        one_apart(&sa, &sb)
    } else if sa == sb {
        let pairs = |q: &str| -> Vec<String> { q.split('&').map(str::to_owned).collect() };
        let (pa, pb) = (pairs(qa), pairs(qb));
        one_apart(&pa, &pb).and_then(|(x, y)| {
            let (kx, vx) = x.split_once('=')?;
            let (ky, vy) = y.split_once('=')?;
            (kx == ky).then(|| (vx.to_owned(), vy.to_owned()))
        })
    } else {
        None
    };
    pair.is_some_and(|(x, y)| names_a_version(&x) && names_a_version(&y))
}

/// Whether two URLs of one host are one path whose query has the same parameters, one of them
/// with another value (`/gallery/harbour?photo=3` and `?photo=4`, `/course/cs101?term=2255` and
/// `?term=2258`, `/live/election?update=12` and `?update=13`). Such a parameter chooses what the
/// page shows: with other texts, the two are two pages (another photo's caption, another term's
/// sections, a live page's next entry), however much of the text they share. A tracking or
/// session parameter never gets here: the URL's key drops it, and its variants are skipped
/// unfetched.
///
/// ```
/// use simcrawl_crawl::evidence::urls_select_other_content;
/// assert!(urls_select_other_content("http://n.example/gallery/harbour?photo=3", "http://n.example/gallery/harbour?photo=4"));
/// assert!(urls_select_other_content("http://u.example/course?id=cs101&term=2255", "http://u.example/course?id=cs101&term=2258"));
/// assert!(!urls_select_other_content("http://u.example/a?x=1", "http://u.example/b?x=2"));
/// assert!(!urls_select_other_content("http://u.example/a?x=1", "http://u.example/a?x=1&y=2"));
/// assert!(!urls_select_other_content("http://n.example/gallery/harbour", "http://n.example/gallery/harbour?photo=4"));
/// assert!(!urls_select_other_content("http://u.example/a?x=1&y=1", "http://u.example/a?x=2&y=2"));
/// assert!(!urls_select_other_content("http://u.example/a?x=1", "http://v.example/a?x=2"));
/// ```
pub fn urls_select_other_content(a: &str, b: &str) -> bool {
    let split = |u: &str| -> Option<(String, Vec<(String, String)>)> {
        let u = u.split('#').next()?;
        let (base, query) = u.split_once('?')?;
        let mut pairs: Vec<(String, String)> = query
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (k, v) = p.split_once('=').unwrap_or((p, ""));
                (k.to_owned(), v.to_owned())
            })
            .collect();
        pairs.sort();
        Some((base.to_owned(), pairs))
    };
    let (Some((base_a, qa)), Some((base_b, qb))) = (split(a), split(b)) else {
        return false;
    };
    // Not one parameter more: a page and its variant under a parameter no rule knows
    // (`?from=feed`), whose per-response noise (an ad) makes other text, are one page.
    if base_a != base_b || qa.len() != qb.len() {
        return false;
    }
    let names = |q: &[(String, String)]| q.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>();
    if names(&qa) != names(&qb) {
        return false;
    }
    qa.iter().zip(&qb).filter(|(x, y)| x.1 != y.1).count() == 1
}

/// The words of a URL that may name its page: its path's segments and its query's values, split
/// at what is not a letter, lowercased, of three letters or more, less the file extensions and
/// index names every page has.
fn url_words(url: &str) -> std::collections::HashSet<String> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let path = rest.find('/').map_or("", |i| &rest[i..]);
    let path = path.split('#').next().unwrap_or("");
    path.split(|c: char| !c.is_alphabetic())
        .filter(|w| w.chars().count() >= 3)
        .map(str::to_lowercase)
        .filter(|w| {
            !matches!(
                w.as_str(),
                "html" | "htm" | "php" | "asp" | "aspx" | "index"
            )
        })
        .collect()
}

/// Whether each of two pages' URLs names a word that its own text (title and main text) holds
/// more often than the other's: `/api/users/list` says `users`, `/api/groups/list` says
/// `groups`, and each page's text says its own; a line's departures from `/klinikum/` and from
/// `/flughafen/` each name their station once more than the other, which lists it among the
/// stops. Two copies have one text, and a copy under a longer URL (`/mirror/api/users/list`)
/// names no word its original's text holds less often.
///
/// ```
/// use simcrawl_crawl::evidence::url_words_name_the_pages_apart;
/// let users = ("List users. Returns the users of the account", "http://a.example/api/users/list");
/// let groups = ("List groups. Returns the groups of the account", "http://a.example/api/groups/list");
/// assert!(url_words_name_the_pages_apart(users.0, users.1, groups.0, groups.1));
/// let mirrored = "http://b.example/mirror/api/users/list";
/// assert!(!url_words_name_the_pages_apart(users.0, mirrored, users.0, users.1));
/// let from = |stop: &str| format!("Departures from {stop}. Stops: Airport, Harbour, Klinikum");
/// assert!(url_words_name_the_pages_apart(
///     &from("Klinikum"), "http://t.example/s1/klinikum/", &from("Harbour"), "http://t.example/s1/harbour/"));
/// ```
pub fn url_words_name_the_pages_apart(a: &str, a_url: &str, b: &str, b_url: &str) -> bool {
    let (a_words, b_words) = (url_words(a_url), url_words(b_url));
    type Counts = std::collections::HashMap<String, usize>;
    let text_words = |t: &str| -> Counts {
        let mut counts = Counts::new();
        for w in t
            .split(|c: char| !c.is_alphabetic())
            .filter(|w| w.chars().count() >= 3)
        {
            *counts.entry(w.to_lowercase()).or_default() += 1;
        }
        counts
    };
    let names_itself = |own: &std::collections::HashSet<String>,
                        other_url: &std::collections::HashSet<String>,
                        own_text: &Counts,
                        other_text: &Counts| {
        own.iter().any(|w| {
            !other_url.contains(w)
                && own_text.get(w).copied().unwrap_or(0) > other_text.get(w).copied().unwrap_or(0)
        })
    };
    if a_words == b_words {
        return false;
    }
    let (a_text, b_text) = (text_words(a), text_words(b));
    names_itself(&a_words, &b_words, &a_text, &b_text)
        && names_itself(&b_words, &a_words, &b_text, &a_text)
}

/// The file name a URL ends in, as [`TextEvidence::other_name`] compares them: its path's last
/// segment, without query or fragment; for a directory (`/a/b/`) or its index page
/// (`/a/b/index.html`), the directory's name.
///
/// ```
/// use simcrawl_crawl::evidence::file_name;
/// assert_eq!(file_name("http://a.example/man7/EVP_MD-MD4.html?x=1"), "EVP_MD-MD4.html");
/// assert_eq!(file_name("http://b.example/mirror/faq/index.html"), "faq");
/// assert_eq!(file_name("http://a.example/faq/"), "faq");
/// assert_eq!(file_name("http://a.example/"), "");
/// ```
pub fn file_name(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let path = rest.find('/').map_or("", |i| &rest[i..]);
    let path = path.split(['?', '#']).next().unwrap_or("");
    let mut segments = path.split('/').rev().filter(|s| !s.is_empty());
    match segments.next() {
        Some(last) if last.starts_with("index.") => segments.next().unwrap_or(""),
        Some(last) => last,
        None => "",
    }
}

/// Why a comparison does not support a skip: the page is indexed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotACopy {
    /// A main text as compared is empty (none, or all of it its host's template lines).
    NoText,
    /// One whole page has more than [`MAX_SIZE_RATIO`] times the words of the other.
    SizeDiffers,
    /// Two pages of one host with different titles.
    TitleDiffers,
    /// Two pages of two hosts with different titles whose whole pages are further than k apart
    /// (the same block on both, a license or a site's blurb, is not the page).
    TitlesAndWholeDiffer,
    /// A main text is short and the two texts are not the same.
    ShortTextsDiffer,
    /// A main text is short and the titles differ.
    ShortTitleDiffers,
    /// A main text is short and the whole pages' texts are not the same (or not known).
    ShortWholeDiffers,
    /// Two pages of one host whose main texts differ, one under
    /// [`MIN_ONE_HOST_NEAR_WORDS`] words: siblings of one generator, not copies.
    OneHostSiblings,
    /// The two pages declare two other URLs canonical (`TextEvidence::canonicals_differ`).
    CanonicalsDiffer,
    /// Each URL names a word its page's text holds more often than the other's
    /// ([`TextEvidence::url_words_differ`]).
    UrlWordsDiffer,
    /// Two pages of one host whose main texts and titles differ in their numbers alone
    /// ([`TextEvidence::other_numbers`]).
    OneHostNumbersDiffer,
    /// Two data pages that hold other numbers ([`TextEvidence::data_differs`]).
    DataDiffers,
    /// Two versions of one document whose texts differ ([`TextEvidence::other_versions`]).
    OtherVersions,
    /// One path's content under two values of one query parameter, the texts other
    /// ([`TextEvidence::other_selection`]).
    OtherSelection,
    /// Two pages of other file names that differ in a number their URLs name: a
    /// calendar's days, one weekly event's dates (the normalisation drops dates and times, so
    /// that a copy's timestamp is no difference).
    OtherNamesNumbersDiffer,
    /// The main texts are further than k apart.
    TooFar,
    /// The main texts are within k, but their Jaccard estimate is below the threshold (or was
    /// not read).
    JaccardLow,
}

impl fmt::Display for NotACopy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NotACopy::NoText => "a page has no main text (or only its host's template lines): an empty page is a copy only of identical bytes",
            NotACopy::SizeDiffers => "the whole pages differ in size (more than 2× the words)",
            NotACopy::TitleDiffers => "two pages of one host with different titles",
            NotACopy::TitlesAndWholeDiffer => {
                "the titles differ and the whole pages are more than k bits apart"
            }
            NotACopy::ShortTextsDiffer => {
                "a main text is short and the two texts differ: a short page is its facts"
            }
            NotACopy::ShortTitleDiffers => "a main text is short and the titles differ",
            NotACopy::ShortWholeDiffers => {
                "a main text is short and the whole pages' texts differ: the page is what surrounds it"
            }
            NotACopy::OneHostSiblings => {
                "two pages of one host whose main texts differ, one under 200 words: a generator's sibling pages differ in the few words they are about"
            }
            NotACopy::UrlWordsDiffer => {
                "each URL names a word its own page's text holds more often than the other's (`/api/users/`, `/api/groups/`): a generator's siblings, not copies"
            }
            NotACopy::OneHostNumbersDiffer => {
                "two pages of one host whose texts differ in their numbers alone (a version, a default, an object's number, a date): a copy on its own host has its original's"
            }
            NotACopy::OtherSelection => {
                "one path under two values of one query parameter (`?photo=3`, `?photo=4`) and the texts differ: the parameter chooses what the page shows"
            }
            NotACopy::OtherVersions => {
                "the URLs name two versions of one document (`/1.0/` and `/1.1/`) and the texts differ: a version's changed words are what its readers look for"
            }
            NotACopy::DataDiffers => {
                "two data pages (a timetable, a results table: a fifth of their words numbers) that hold other numbers: a data page is its figures"
            }
            NotACopy::OtherNamesNumbersDiffer => {
                "two pages of other file names that differ in a number their URLs name (a date, an id): a calendar's days, not copies"
            }
            NotACopy::CanonicalsDiffer => {
                "the two pages declare two different URLs canonical: two documents by their publisher's word"
            }
            NotACopy::TooFar => "the main texts' Hamming distance is above k",
            NotACopy::JaccardLow => "the main texts' Jaccard estimate is below the threshold",
        })
    }
}

impl TextEvidence {
    /// Whether either main text is short (see the module's rule).
    pub fn short(&self) -> bool {
        self.short[0] || self.short[1] || self.words[0].min(self.words[1]) < MIN_MAIN_WORDS
    }

    /// Whether the whole pages are of comparable size (unknown sizes agree).
    pub fn sizes_agree(&self) -> bool {
        let [a, b] = self.whole_words;
        if a == 0 || b == 0 {
            return true;
        }
        let (a, b) = (f64::from(a), f64::from(b));
        a.max(b) <= a.min(b) * MAX_SIZE_RATIO
    }

    /// The evidence in words, as `explain`, `skipped` and the report print it: the main texts'
    /// comparison, with the thresholds when `policy` is given, and the whole pages' part when
    /// it counted (a short main text, a declared canonical).
    pub fn describe(&self, policy: Option<&Policy>) -> String {
        let mut parts = Vec::new();
        if self.same_text {
            parts.push(if self.template_words == [0, 0] {
                "same main text".to_owned()
            } else {
                "same main text as extracted".to_owned()
            });
        }
        parts.push(match policy {
            Some(p) => format!("distance {} (k = {})", self.distance, p.k),
            None => format!("distance {}", self.distance),
        });
        parts.push(match (self.jaccard, policy) {
            (Some(j), Some(p)) => format!("Jaccard {j:.3} (threshold {})", p.jaccard),
            (Some(j), None) => format!("Jaccard {j:.2}"),
            (None, _) => "Jaccard not read".to_owned(),
        });
        parts.push(format!(
            "main texts {} and {} words",
            self.words[0], self.words[1]
        ));
        if self.template_words != [0, 0] {
            parts.push(format!(
                "{} and {} template words set aside",
                self.template_words[0], self.template_words[1]
            ));
        }
        if self.short() {
            parts.push(format!(
                "short: {}, whole pages {}",
                if self.same_title {
                    "same title"
                } else {
                    "titles differ"
                },
                match self.same_whole {
                    Some(true) => "the same".to_owned(),
                    Some(false) => self.whole_distance.map_or_else(
                        || "differ".to_owned(),
                        |d| format!("differ ({d} bits apart)")
                    ),
                    None => "not compared".to_owned(),
                }
            ));
        }
        if !self.sizes_agree() {
            parts.push(format!(
                "whole pages {} and {} words",
                self.whole_words[0], self.whole_words[1]
            ));
        }
        if !self.same_title && !self.short() {
            parts.push(match (self.same_host, self.whole_distance) {
                (true, _) => "one host, titles differ".to_owned(),
                (false, Some(d)) => format!("titles differ, whole pages {d} apart"),
                (false, None) => "titles differ".to_owned(),
            });
        }
        if self.names_original {
            parts.push("names the original canonical".to_owned());
        } else if self.canonicals_differ {
            parts.push("the two declare different URLs canonical".to_owned());
        } else if self.declares_copy {
            parts.push("declares another URL canonical".to_owned());
        }
        parts.join(", ")
    }
}

impl TextEvidence {
    /// Adds the host templates' part: `page` and `original` are the two main texts without their
    /// hosts' template lines (normalised as for fingerprints). The words as compared are theirs;
    /// when either is short without them, the texts must be the same whole or the same without
    /// the templates (each host may set other lines aside). A text that is all template lines is
    /// no text ([`judge`]: [`NotACopy::NoText`]). The crawl and `simcrawl explain --store` both
    /// call it.
    pub fn set_aside_templates(&mut self, page: &str, original: &str) {
        let words = |t: &str| u32::try_from(t.split_whitespace().count()).unwrap_or(u32::MAX);
        let kept = [words(page), words(original)];
        self.template_words = [
            self.words[0].saturating_sub(kept[0]),
            self.words[1].saturating_sub(kept[1]),
        ];
        self.words = kept;
        if self.short() {
            self.same_text = self.same_text || page == original;
        }
    }
}

/// The verdict the evidence supports: the skip reason (text duplicate, near-duplicate or
/// canonical copy), or why the page is not a copy. The crawl's one rule (see the module).
pub fn judge(e: &TextEvidence, policy: &Policy) -> Result<SkipReason, NotACopy> {
    if e.words[0] == 0 || e.words[1] == 0 {
        return Err(NotACopy::NoText);
    }
    // A page that names the original canonical, with its main text and its title, says it is
    // that page in another form, whatever is around the text: a print version has no
    // navigation or comments (a short post's whole page a quarter of the original's).
    if e.names_original && e.same_text && e.same_title {
        return Ok(SkipReason::Canonical);
    }
    if e.canonicals_differ {
        return Err(NotACopy::CanonicalsDiffer);
    }
    if !e.sizes_agree() {
        return Err(NotACopy::SizeDiffers);
    }
    if !e.same_title && !e.declares_copy {
        if e.same_host {
            return Err(NotACopy::TitleDiffers);
        }
        if e.whole_distance.is_none_or(|d| d > policy.k) {
            return Err(NotACopy::TitlesAndWholeDiffer);
        }
    }
    if e.short() {
        if !e.same_text {
            return Err(NotACopy::ShortTextsDiffer);
        }
        if !e.same_title {
            return Err(NotACopy::ShortTitleDiffers);
        }
        if e.same_whole != Some(true) {
            return Err(NotACopy::ShortWholeDiffers);
        }
    }
    if e.same_host
        && !e.same_text
        && !e.declares_copy
        && e.words[0].min(e.words[1]) < MIN_ONE_HOST_NEAR_WORDS
    {
        return Err(NotACopy::OneHostSiblings);
    }
    if e.url_words_differ && !e.names_original {
        return Err(NotACopy::UrlWordsDiffer);
    }
    if e.same_host && e.other_numbers && !e.names_original {
        return Err(NotACopy::OneHostNumbersDiffer);
    }
    if e.other_versions && e.same_host && !e.same_text && !e.names_original {
        return Err(NotACopy::OtherVersions);
    }
    if e.data_differs && !e.names_original {
        return Err(NotACopy::DataDiffers);
    }
    if e.other_name && e.numbers_differ && !e.declares_copy {
        return Err(NotACopy::OtherNamesNumbersDiffer);
    }
    // The most general of the rules of URLs: a more telling reason above is given first.
    if e.other_selection && e.same_host && !e.same_text && !e.names_original && !e.declares_copy {
        return Err(NotACopy::OtherSelection);
    }
    let resembles = e.same_text
        || (e.distance <= policy.k
            && (policy.jaccard == 0.0 || e.jaccard.is_some_and(|j| j >= policy.jaccard)));
    if e.names_original && resembles {
        return Ok(SkipReason::Canonical);
    }
    if e.same_text {
        return Ok(SkipReason::TextDuplicate);
    }
    if e.distance > policy.k {
        return Err(NotACopy::TooFar);
    }
    if !resembles {
        return Err(NotACopy::JaccardLow);
    }
    Ok(SkipReason::NearDuplicate)
}

/// A verdict of [`judge`] in words with the numbers it rests on: what `simcrawl explain` prints
/// after the verdict's name.
pub fn verdict_in_words(
    verdict: &Result<SkipReason, NotACopy>,
    e: &TextEvidence,
    policy: &Policy,
) -> String {
    let k = policy.k;
    let short = |s: String| {
        if e.short() {
            format!(
                "{s}; the main text is short, and the titles and the whole pages' texts are the same"
            )
        } else {
            s
        }
    };
    match verdict {
        Ok(SkipReason::TextDuplicate) => {
            short("the normalised main texts are identical".to_owned())
        }
        Ok(SkipReason::Canonical)
            if e.same_text && (!e.sizes_agree() || (e.short() && e.same_whole != Some(true))) =>
        {
            format!(
                "it names the original canonical, and has its main text and title (whole pages of {} and {} words)",
                e.whole_words[0], e.whole_words[1]
            )
        }
        Ok(SkipReason::Canonical) if e.same_text => {
            short("it names the original canonical, and the main texts are identical".to_owned())
        }
        Ok(reason) => {
            let near = match e.jaccard {
                Some(j) if policy.jaccard > 0.0 => format!(
                    "distance {} <= k = {k} and Jaccard {j:.3} >= {}",
                    e.distance, policy.jaccard
                ),
                _ => format!("distance {} <= k = {k}", e.distance),
            };
            if *reason == SkipReason::Canonical {
                format!("it names the original canonical, and {near}")
            } else {
                near
            }
        }
        Err(NotACopy::TooFar) => format!("Hamming distance {} > k = {k}", e.distance),
        Err(NotACopy::JaccardLow) => match e.jaccard {
            Some(j) => format!(
                "distance {} <= k = {k}, but Jaccard {j:.3} < {}",
                e.distance, policy.jaccard
            ),
            None => format!(
                "distance {} <= k = {k}, but no Jaccard estimate",
                e.distance
            ),
        },
        Err(NotACopy::TitlesAndWholeDiffer) => format!(
            "the titles differ and the whole pages are {} > k = {k} bits apart",
            e.whole_distance
                .map_or_else(|| "?".to_owned(), |d| d.to_string())
        ),
        Err(NotACopy::OtherNamesNumbersDiffer) => NotACopy::OtherNamesNumbersDiffer.to_string(),
        Err(NotACopy::SizeDiffers) => format!(
            "{} (whole pages of {} and {} words)",
            NotACopy::SizeDiffers,
            e.whole_words[0],
            e.whole_words[1]
        ),
        Err(NotACopy::ShortTextsDiffer) => format!(
            "{} (main texts of {} and {} words)",
            NotACopy::ShortTextsDiffer,
            e.words[0],
            e.words[1]
        ),
        Err(NotACopy::OneHostSiblings) => format!(
            "{} (the shorter main text has {} words; distance {})",
            NotACopy::OneHostSiblings,
            e.words[0].min(e.words[1]),
            e.distance
        ),
        Err(NotACopy::ShortWholeDiffers) => match (e.same_whole, e.whole_distance) {
            (Some(false), Some(d)) => format!("{} ({d} bits apart)", NotACopy::ShortWholeDiffers),
            (Some(false), None) => NotACopy::ShortWholeDiffers.to_string(),
            _ => "a main text is short and the whole pages were not compared".to_owned(),
        },
        Err(other) => other.to_string(),
    }
}

/// The smallest k (0..=64) at which [`judge`] finds a copy with this Jaccard threshold, or
/// `None` at every k: what `simcrawl tune` replays.
pub fn min_k(e: &TextEvidence, jaccard: f64) -> Option<u32> {
    (0..=64).find(|&k| judge(e, &Policy { k, jaccard }).is_ok())
}

/// The evidence a skip of the skip log rests on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Evidence {
    /// The bodies are byte for byte the same (their 128-bit digests compared in full).
    SameBytes,
    /// Two main texts compared (text, near and canonical duplicates).
    Text(TextEvidence),
}

/// A skip whose evidence does not support its reason.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("a {reason} verdict its evidence does not support ({evidence}): {why}")]
pub struct Contradiction {
    /// The reason the skip gave.
    pub reason: SkipReason,
    /// The evidence in words.
    pub evidence: String,
    /// What the rule says instead.
    pub why: String,
}

/// Checks a page skip's reason against its evidence by the one rule: `Ok` when the evidence
/// supports exactly this reason. Reasons decided before a fetch (a URL variant, a redirect, a
/// mirror or learned rule) rest on a rule, not on a comparison, and are not checked here.
pub fn check(
    reason: SkipReason,
    evidence: Option<&Evidence>,
    policy: &Policy,
) -> Result<(), Contradiction> {
    let contradiction = |evidence: String, why: String| Contradiction {
        reason,
        evidence,
        why,
    };
    match (reason, evidence) {
        (SkipReason::ExactDuplicate, Some(Evidence::SameBytes)) => Ok(()),
        (
            SkipReason::TextDuplicate | SkipReason::NearDuplicate | SkipReason::Canonical,
            Some(Evidence::Text(e)),
        ) => match judge(e, policy) {
            Ok(r) if r == reason => Ok(()),
            Ok(r) => Err(contradiction(
                e.describe(Some(policy)),
                format!("the evidence supports {r}"),
            )),
            Err(why) => Err(contradiction(e.describe(Some(policy)), why.to_string())),
        },
        (
            SkipReason::ExactDuplicate
            | SkipReason::TextDuplicate
            | SkipReason::NearDuplicate
            | SkipReason::Canonical,
            other,
        ) => Err(contradiction(
            format!("{other:?}"),
            "a skip after a fetch needs its comparison".to_owned(),
        )),
        _ => Ok(()),
    }
}

const EVIDENCE_VERSION: u8 = 1;

impl Codec for TextEvidence {
    fn encode_into(&self, out: &mut Vec<u8>) {
        write_element(&EVIDENCE_VERSION, out);
        for x in self
            .words
            .iter()
            .chain(&self.template_words)
            .chain(&self.whole_words)
        {
            write_element(x, out);
        }
        let flags = u8::from(self.short[0])
            | u8::from(self.short[1]) << 1
            | u8::from(self.same_text) << 2
            | u8::from(self.same_title) << 3
            | u8::from(self.same_host) << 4
            | u8::from(self.declares_copy) << 5
            | u8::from(self.jaccard.is_some()) << 6
            | u8::from(self.whole_distance.is_some()) << 7;
        write_element(&flags, out);
        write_element(&self.distance, out);
        if let Some(j) = self.jaccard {
            write_element(&j.to_bits(), out);
        }
        if let Some(w) = self.whole_distance {
            write_element(&w, out);
        }
        // Once a bool: its bit 0 still is; bit 1 says other file names, bit 2 numbers their URLs
        // name apart (0 in older records: as a mirror's copy, the verdict they were written with).
        write_element(
            &(u8::from(self.names_original)
                | u8::from(self.other_name) << 1
                | u8::from(self.numbers_differ) << 2),
            out,
        );
        write_element(&self.same_whole.map_or(0u8, |s| 1 + u8::from(s)), out);
    }

    fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        let mut r = Reader::new::<Self>(bytes);
        let version: u8 = r.element()?;
        if version != EVIDENCE_VERSION {
            return Err(CodecError::invalid::<Self>(format!(
                "unknown evidence version {version}"
            )));
        }
        let mut n = [0u32; 6];
        for x in &mut n {
            *x = r.element()?;
        }
        let flags: u8 = r.element()?;
        let bit = |i: u8| flags & (1 << i) != 0;
        let distance = r.element()?;
        let jaccard = if bit(6) {
            Some(f64::from_bits(r.element()?))
        } else {
            None
        };
        let whole_distance = if bit(7) { Some(r.element()?) } else { None };
        let names: u8 = r.element()?;
        if names > 7 {
            return Err(CodecError::invalid::<Self>(format!(
                "names byte {names:#04x}"
            )));
        }
        let (names_original, other_name, numbers_differ) =
            (names & 1 != 0, names & 2 != 0, names & 4 != 0);
        let same_whole = match r.element::<u8>()? {
            0 => None,
            n => Some(n == 2),
        };
        r.finish()?;
        Ok(TextEvidence {
            words: [n[0], n[1]],
            template_words: [n[2], n[3]],
            whole_words: [n[4], n[5]],
            short: [bit(0), bit(1)],
            same_text: bit(2),
            distance,
            jaccard,
            whole_distance,
            same_title: bit(3),
            same_host: bit(4),
            declares_copy: bit(5),
            names_original,
            canonicals_differ: false,
            other_name,
            numbers_differ,
            other_numbers: false,
            url_words_differ: false,
            data_differs: false,
            other_versions: false,
            other_selection: false,
            same_whole,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const POLICY: Policy = Policy { k: 3, jaccard: 0.8 };

    fn long() -> TextEvidence {
        TextEvidence {
            words: [300, 310],
            whole_words: [400, 410],
            distance: 1,
            jaccard: Some(0.9),
            whole_distance: Some(2),
            same_title: true,
            same_host: false,
            ..TextEvidence::default()
        }
    }

    #[test]
    fn a_long_near_copy_needs_distance_and_jaccard() {
        assert_eq!(judge(&long(), &POLICY), Ok(SkipReason::NearDuplicate));
        let far = TextEvidence {
            distance: 4,
            ..long()
        };
        assert_eq!(judge(&far, &POLICY), Err(NotACopy::TooFar));
        let low = TextEvidence {
            jaccard: Some(0.79),
            ..long()
        };
        assert_eq!(judge(&low, &POLICY), Err(NotACopy::JaccardLow));
        let unread = TextEvidence {
            jaccard: None,
            ..long()
        };
        assert_eq!(judge(&unread, &POLICY), Err(NotACopy::JaccardLow));
        // --jaccard 0 turns the confirmation off.
        assert_eq!(
            judge(&unread, &Policy { k: 3, jaccard: 0.0 }),
            Ok(SkipReason::NearDuplicate)
        );
    }

    #[test]
    fn the_issue_s_stubs_are_two_pages_whatever_their_whole_pages_say() {
        // `explain` printed "near-duplicate: distance 18 <= k = 3, Jaccard 0.020" for these.
        let stubs = TextEvidence {
            words: [24, 22],
            whole_words: [124, 122],
            distance: 18,
            jaccard: Some(0.02),
            whole_distance: Some(2),
            same_title: true,
            same_host: true,
            ..TextEvidence::default()
        };
        assert_eq!(judge(&stubs, &POLICY), Err(NotACopy::ShortTextsDiffer));
        // Even within k and above the threshold: a short text that is not the same is a page.
        let close = TextEvidence {
            distance: 0,
            jaccard: Some(0.95),
            ..stubs
        };
        assert_eq!(judge(&close, &POLICY), Err(NotACopy::ShortTextsDiffer));
        // The same short text, the same title, whole pages within k: a copy.
        let same = TextEvidence {
            same_text: true,
            same_whole: Some(true),
            distance: 0,
            jaccard: Some(1.0),
            ..stubs
        };
        assert_eq!(judge(&same, &POLICY), Ok(SkipReason::TextDuplicate));
        // Two tables of contents under the same heading that list other entries: 0 bits apart
        // by their whole pages' fingerprints, and two pages.
        let tocs = TextEvidence {
            same_whole: Some(false),
            whole_distance: Some(0),
            ..same
        };
        assert_eq!(judge(&tocs, &POLICY), Err(NotACopy::ShortWholeDiffers));
        let unknown = TextEvidence {
            same_whole: None,
            ..same
        };
        assert_eq!(judge(&unknown, &POLICY), Err(NotACopy::ShortWholeDiffers));
    }

    #[test]
    fn size_title_and_canonical() {
        let big = TextEvidence {
            whole_words: [400, 900],
            ..long()
        };
        assert_eq!(judge(&big, &POLICY), Err(NotACopy::SizeDiffers));
        let titled = TextEvidence {
            same_title: false,
            same_host: true,
            ..long()
        };
        assert_eq!(judge(&titled, &POLICY), Err(NotACopy::TitleDiffers));
        // Another host's title says nothing; a declared canonical overrides one host's title.
        let other_host = TextEvidence {
            same_host: false,
            ..titled
        };
        assert_eq!(judge(&other_host, &POLICY), Ok(SkipReason::NearDuplicate));
        // Two hosts, other titles, the same block (a license) as main text, other pages around.
        let licence = TextEvidence {
            same_text: true,
            distance: 0,
            whole_distance: Some(22),
            ..other_host
        };
        assert_eq!(
            judge(&licence, &POLICY),
            Err(NotACopy::TitlesAndWholeDiffer)
        );
        let declared = TextEvidence {
            declares_copy: true,
            ..titled
        };
        assert_eq!(judge(&declared, &POLICY), Ok(SkipReason::NearDuplicate));
        let declared = TextEvidence {
            names_original: true,
            canonicals_differ: false,
            other_name: false,
            numbers_differ: false,
            other_numbers: false,
            url_words_differ: false,
            data_differs: false,
            other_versions: false,
            other_selection: false,
            ..declared
        };
        assert_eq!(judge(&declared, &POLICY), Ok(SkipReason::Canonical));
        let declared_far = TextEvidence {
            distance: 20,
            jaccard: Some(0.1),
            ..declared
        };
        assert_eq!(judge(&declared_far, &POLICY), Err(NotACopy::TooFar));
        let empty = TextEvidence {
            words: [0, 300],
            ..long()
        };
        assert_eq!(judge(&empty, &POLICY), Err(NotACopy::NoText));
    }

    #[test]
    fn a_print_version_naming_its_page_with_its_text_and_title_is_a_copy_whatever_its_size() {
        // A short blog post and its print version: the same 20 words and title, the print page
        // without the navigation and comments (34 against 137 words of whole page).
        let print = TextEvidence {
            words: [20, 20],
            whole_words: [34, 137],
            same_text: true,
            distance: 0,
            jaccard: Some(1.0),
            same_title: true,
            same_host: true,
            same_whole: Some(false),
            declares_copy: true,
            names_original: true,
            canonicals_differ: false,
            other_name: false,
            numbers_differ: false,
            other_numbers: false,
            url_words_differ: false,
            data_differs: false,
            other_versions: false,
            other_selection: false,
            ..TextEvidence::default()
        };
        let verdict = judge(&print, &POLICY);
        assert_eq!(verdict, Ok(SkipReason::Canonical));
        assert!(
            verdict_in_words(&verdict, &print, &POLICY).contains("whole pages of 34 and 137"),
            "{}",
            verdict_in_words(&verdict, &print, &POLICY)
        );
        // Not naming it, another title or another text: the page is indexed.
        let unnamed = TextEvidence {
            names_original: false,
            canonicals_differ: false,
            other_name: false,
            numbers_differ: false,
            other_numbers: false,
            url_words_differ: false,
            data_differs: false,
            other_versions: false,
            other_selection: false,
            declares_copy: false,
            ..print
        };
        assert!(judge(&unnamed, &POLICY).is_err());
        let retitled = TextEvidence {
            same_title: false,
            ..print
        };
        assert!(judge(&retitled, &POLICY).is_err());
        let other_text = TextEvidence {
            same_text: false,
            distance: 2,
            ..print
        };
        assert!(judge(&other_text, &POLICY).is_err());
    }

    #[test]
    fn one_host_s_short_near_copies_are_siblings_and_other_hosts_copies() {
        let policy = Policy { k: 3, jaccard: 0.8 };
        // GNU Pango's virtual method and method `Font.describe`: 59 and 61 words, two differ.
        let siblings = TextEvidence {
            words: [59, 61],
            whole_words: [90, 95],
            distance: 3,
            jaccard: Some(0.87),
            same_title: true,
            same_host: true,
            ..TextEvidence::default()
        };
        assert_eq!(judge(&siblings, &policy), Err(NotACopy::OneHostSiblings));
        assert!(
            verdict_in_words(&judge(&siblings, &policy), &siblings, &policy)
                .contains("the shorter main text has 59 words")
        );
        // The same on two hosts is a near-copy (a mirror with noise around one document) ...
        let mirrored = TextEvidence {
            same_host: false,
            ..siblings
        };
        assert_eq!(judge(&mirrored, &policy), Ok(SkipReason::NearDuplicate));
        // ... and so is one host's page that names the other canonical, a long near-copy, and
        // one host's same text.
        let canonical = TextEvidence {
            declares_copy: true,
            names_original: true,
            canonicals_differ: false,
            other_name: false,
            numbers_differ: false,
            other_numbers: false,
            url_words_differ: false,
            data_differs: false,
            other_versions: false,
            other_selection: false,
            ..siblings
        };
        assert_eq!(judge(&canonical, &policy), Ok(SkipReason::Canonical));
        let long = TextEvidence {
            words: [280, 284],
            whole_words: [330, 334],
            ..siblings
        };
        assert_eq!(judge(&long, &policy), Ok(SkipReason::NearDuplicate));
        let same = TextEvidence {
            same_text: true,
            distance: 0,
            jaccard: Some(1.0),
            ..siblings
        };
        assert_eq!(judge(&same, &policy), Ok(SkipReason::TextDuplicate));
        assert_eq!(min_k(&siblings, 0.8), None);
    }

    #[test]
    fn check_refuses_a_reason_its_evidence_does_not_support() {
        let e = Evidence::Text(long());
        assert!(check(SkipReason::NearDuplicate, Some(&e), &POLICY).is_ok());
        let err = check(SkipReason::TextDuplicate, Some(&e), &POLICY).unwrap_err();
        assert!(err.why.contains("near-duplicate"), "{err}");
        assert!(check(SkipReason::NearDuplicate, None, &POLICY).is_err());
        assert!(
            check(
                SkipReason::NearDuplicate,
                Some(&Evidence::SameBytes),
                &POLICY
            )
            .is_err()
        );
        assert!(
            check(
                SkipReason::ExactDuplicate,
                Some(&Evidence::SameBytes),
                &POLICY
            )
            .is_ok()
        );
        assert!(check(SkipReason::Mirror, None, &POLICY).is_ok());
        let far = Evidence::Text(TextEvidence {
            distance: 18,
            jaccard: Some(0.02),
            ..long()
        });
        let err = check(SkipReason::NearDuplicate, Some(&far), &POLICY).unwrap_err();
        assert!(err.evidence.contains("distance 18 (k = 3)"), "{err}");
        assert!(err.why.contains("above k"), "{err}");
    }

    fn evidence() -> impl Strategy<Value = TextEvidence> {
        (
            (0u32..400, 0u32..400, 0u32..60, 0u32..60),
            (0u32..800, 0u32..800),
            any::<[bool; 2]>(),
            (any::<bool>(), 0u32..=64, proptest::option::of(0.0f64..=1.0)),
            (
                proptest::option::of(0u32..=64),
                proptest::option::of(any::<bool>()),
            ),
            any::<[bool; 4]>(),
        )
            .prop_map(
                |(
                    (w0, w1, t0, t1),
                    (f0, f1),
                    short,
                    (same_text, distance, jaccard),
                    (whole, same_whole),
                    flags,
                )| {
                    TextEvidence {
                        words: [w0, w1],
                        template_words: [t0, t1],
                        whole_words: [f0, f1],
                        short,
                        same_text,
                        distance,
                        jaccard,
                        whole_distance: whole,
                        same_whole,
                        same_title: flags[0],
                        same_host: flags[1],
                        declares_copy: flags[2] || flags[3],
                        names_original: flags[3],
                        canonicals_differ: false,
                        other_name: false,
                        numbers_differ: false,
                        other_numbers: false,
                        url_words_differ: false,
                        data_differs: false,
                        other_versions: false,
                        other_selection: false,
                    }
                },
            )
    }

    proptest! {
        /// No verdict contradicts its evidence: every copy the rule finds is within its own
        /// numbers, and the replay's k is exactly where the verdict starts.
        #[test]
        fn no_verdict_contradicts_its_evidence(e in evidence(), k in 0u32..=8, jaccard in 0.0f64..=1.0) {
            let policy = Policy { k, jaccard };
            let bytes = e.encode();
            prop_assert_eq!(TextEvidence::decode(&bytes).unwrap(), e);
            match judge(&e, &policy) {
                Ok(reason) => {
                    prop_assert!(check(reason, Some(&Evidence::Text(e)), &policy).is_ok());
                    prop_assert!(e.words[0] > 0 && e.words[1] > 0);
                    // A page that names the original canonical, with its text and title, is
                    // its copy whatever is around the text (a print version).
                    if e.names_original && e.same_text && e.same_title {
                        prop_assert_eq!(reason, SkipReason::Canonical);
                        return Ok(());
                    }
                    prop_assert!(e.sizes_agree());
                    if reason != SkipReason::TextDuplicate && !e.same_text {
                        prop_assert!(e.distance <= k);
                        prop_assert!(jaccard == 0.0 || e.jaccard.is_some_and(|j| j >= jaccard));
                    }
                    if !e.same_title && !e.declares_copy {
                        prop_assert!(!e.same_host && e.whole_distance.is_some_and(|d| d <= k));
                    }
                    if e.short() {
                        prop_assert!(e.same_text && e.same_title);
                        prop_assert_eq!(e.same_whole, Some(true));
                    }
                    prop_assert!(min_k(&e, jaccard).is_some_and(|m| m <= k));
                }
                Err(_) => prop_assert!(min_k(&e, jaccard).is_none_or(|m| m > k)),
            }
        }
    }
}
