//! Text normalisation for fingerprints.
//!
//! Shingles and SimHash features are words; two copies of a page should yield the same words even
//! when their timestamps, dates, session ids, letter case or punctuation differ, and two different
//! pages should not look alike because they differ *only* in their numbers (release notes of two
//! versions, tables of figures, register sizes). [`normalize_text`] turns extracted text into a
//! single line of words separated by single spaces, dropping the numbers that are noise
//! ([`is_noise_number`]) and keeping the ones that are content.

/// What [`normalize_text`] does besides collapsing white space.
///
/// The [`Default`] is [`NormalizeOptions::FINGERPRINT`]: lowercase, drop noise numbers, strip
/// punctuation. That is the setting the dedup pipeline uses. The literature removes every
/// integer before shingling, which kills counters, dates and ids, but on real pages it also
/// makes the release notes of 2.2.25 and 3.1.14 one text: numbers that are content stay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NormalizeOptions {
    /// Lowercase every letter (full Unicode lowercasing).
    pub lowercase: bool,
    /// Remove every numeric character (`char::is_numeric`: ASCII and other scripts' digits,
    /// superscripts, fractions). `page10` becomes `page`; a token that was all digits disappears.
    pub strip_digits: bool,
    /// Drop whole tokens that are numeric noise: times, dates, long digit runs and id-like
    /// mixtures of letters and digits (see [`is_noise_number`]). Other numbers stay.
    pub strip_noise_numbers: bool,
    /// Treat punctuation as white space, except apostrophes, which are removed so that `don't`
    /// becomes `dont`. Punctuation here is ASCII punctuation plus the Latin-1, General Punctuation,
    /// CJK and full-width punctuation blocks; symbols such as `©`, `€` or emoji stay. A token
    /// of ASCII punctuation alone (`+=`, `&&`, `-`) stays whole: an operator's name is a word.
    pub strip_punctuation: bool,
    /// Make each Chinese or Japanese ideograph and each kana a word of its own
    /// ([`is_ideograph`]): those scripts put no spaces between words, so a whole sentence was
    /// one word, and a page of Chinese a handful of words, fingerprinted on a handful of
    /// shingles. Characters are the unit Chinese and Japanese near-duplicate detection shingles.
    pub split_ideographs: bool,
}

impl NormalizeOptions {
    /// Lowercase, drop noise numbers, strip punctuation, split ideographs: the setting for
    /// fingerprints.
    pub const FINGERPRINT: NormalizeOptions = NormalizeOptions {
        lowercase: true,
        strip_digits: false,
        strip_noise_numbers: true,
        strip_punctuation: true,
        split_ideographs: true,
    };

    /// Only collapse white space.
    pub const WHITESPACE_ONLY: NormalizeOptions = NormalizeOptions {
        lowercase: false,
        strip_digits: false,
        strip_noise_numbers: false,
        strip_punctuation: false,
        split_ideographs: false,
    };
}

impl Default for NormalizeOptions {
    fn default() -> Self {
        Self::FINGERPRINT
    }
}

/// Normalises `text` into words separated by single spaces, with no leading or trailing space.
///
/// Always: every run of Unicode white space (including no-break spaces and line breaks) becomes one
/// space, and invisible formatting characters (soft hyphen, zero-width space and joiners, word
/// joiner, byte-order mark) are removed. The rest depends on `options`.
///
/// ```
/// use simcrawl_extract::{normalize_text, NormalizeOptions};
///
/// let text = "Updated  10:32, 2024-05-01.\nIt's   RAINING\u{a0}again!";
/// assert_eq!(normalize_text(text, NormalizeOptions::FINGERPRINT), "updated its raining again");
/// // Numbers that are content stay; ids and timestamps do not.
/// assert_eq!(
///     normalize_text("Django 2.2.25 fixes 3 bugs (session 7736a42555420db9)", NormalizeOptions::FINGERPRINT),
///     "django 2 2 25 fixes 3 bugs session"
/// );
/// assert_eq!(
///     normalize_text(text, NormalizeOptions::WHITESPACE_ONLY),
///     "Updated 10:32, 2024-05-01. It's RAINING again!"
/// );
/// ```
pub fn normalize_text(text: &str, options: NormalizeOptions) -> String {
    let mut out = String::with_capacity(text.len());
    // A separator was seen since the last character written.
    let mut gap = true;
    if !options.strip_noise_numbers {
        for token in Tokens(text) {
            normalize_scanned(token, options, &mut out, &mut gap);
            gap = true;
        }
        return out;
    }
    // Dates written with a month name ("12 March 2024", "March 12, 2024"): the numbers next to
    // the month are noise too. One pass: a token is written once the next one has said whether
    // it is a month (which drops a date part before it); a token one or two after a month is
    // dropped if it is a date part.
    let mut pending: Option<(Scanned<'_>, bool)> = None;
    let (mut month_1, mut month_2) = (false, false); // the token one back, two back is a month
    for token in Tokens(text) {
        let month = is_month(token.text);
        let drop = token.digit
            && (is_noise_number(token.text) || ((month_1 || month_2) && is_date_part(token.text)));
        if let Some((before, drop_before)) = pending.take() {
            let drop_before = drop_before || (month && before.digit && is_date_part(before.text));
            if !drop_before {
                normalize_scanned(before, options, &mut out, &mut gap);
                gap = true;
            }
        }
        pending = Some((token, drop));
        (month_2, month_1) = (month_1, month);
    }
    if let Some((last, false)) = pending {
        normalize_scanned(last, options, &mut out, &mut gap);
    }
    out
}

/// The number of words of a text [`normalize_text`] or [`normalize_lines`] made: its tokens
/// between single spaces (the output holds no other white space, and none at either end), less
/// those of ASCII punctuation alone (an operator's name or a separator, which
/// [`NormalizeOptions::FINGERPRINT`] keeps): how much text a page has.
///
/// ```
/// use simcrawl_extract::{normalize_text, normalized_words, NormalizeOptions};
///
/// let text = normalize_text(" It's  2.2.25,\tagain! ", NormalizeOptions::FINGERPRINT);
/// assert_eq!(text, "its 2 2 25 again");
/// assert_eq!(normalized_words(&text), 5);
/// assert_eq!(normalized_words(""), 0);
/// // An operator's name is kept, as a word of its own, and not counted.
/// let text = normalize_text("Index - += and (-=)", NormalizeOptions::FINGERPRINT);
/// assert_eq!(text, "index - += and (-=)");
/// assert_eq!(normalized_words(&text), 2);
/// ```
pub fn normalized_words(normalized: &str) -> usize {
    // One pass over the bytes (the crawl counts every page's main text, its whole text and each
    // of its lines: `split(' ')` searched for each space anew, 8% of a crawl's CPU). A word ends
    // at a space or at the end; it counts unless every byte of it is operator punctuation.
    let mut words = 0;
    let mut in_word = false;
    let mut operator = true;
    for &b in normalized.as_bytes() {
        if b == b' ' {
            words += usize::from(in_word && !operator);
            in_word = false;
            operator = true;
        } else {
            in_word = true;
            operator &= is_operator_byte(b);
        }
    }
    words + usize::from(in_word && !operator)
}

/// A byte of an operator's name ([`is_operator_token`]).
fn is_operator_byte(b: u8) -> bool {
    b.is_ascii_punctuation() && b != b'\''
}

/// A token of ASCII punctuation alone, white space around it (`+=`, `&&`, `->`, `|`, `-`):
/// the name of an operator or a symbol, or a separator. [`NormalizeOptions::FINGERPRINT`] keeps
/// it as a word, where it strips the punctuation in and around words (`don't`, `(see`, `end.`),
/// so that two index pages of a manual that list `+` and `-`, or `<#` and `>#`, differ as their
/// readers see them. [`normalized_words`] does not count it: it says how much text a page has.
fn is_operator_token(token: &str) -> bool {
    !token.is_empty() && token.bytes().all(is_operator_byte)
}

/// [`normalize_text`] of `text`, and of each of its lines ([`str::lines`]) as `normalize_text`
/// of that line alone would give it, in one pass over the text: `line` is called with each
/// line's normalisation, in order (empty lines too). What the crawl needs for a page's main
/// text: the text to fingerprint, and the lines that host templates count.
///
/// ```
/// use simcrawl_extract::{normalize_lines, normalize_text, NormalizeOptions};
///
/// let text = "Released 12\nMarch 2024, at 10:32.\n\nIt's DONE!";
/// let mut lines = Vec::new();
/// let whole = normalize_lines(text, NormalizeOptions::FINGERPRINT, |l| lines.push(l.to_owned()));
/// assert_eq!(whole, normalize_text(text, NormalizeOptions::FINGERPRINT));
/// assert_eq!(whole, "released march at its done");
/// // Alone, the first line keeps its 12: no month follows it there.
/// assert_eq!(lines, ["released 12", "march at", "", "its done"]);
/// ```
pub fn normalize_lines(
    text: &str,
    options: NormalizeOptions,
    mut line: impl FnMut(&str),
) -> String {
    let mut scan = Scan::new(text, options);
    month_rule(&mut scan.tokens);
    emit(&scan.contents, &scan.tokens, 0..scan.line_count, &mut line)
}

/// What [`normalize_lines_spanned`] gives: the two normalised texts and where the main text's
/// words are in the whole text's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Within {
    /// The main text normalised, as [`normalize_lines`] of it alone.
    pub main: String,
    /// The whole text normalised, as [`normalize_lines`] of it alone.
    pub full: String,
    /// The stretches of `full` that hold the main text's words, in order, when they are the main
    /// text's words (the month rule decided their numbers alike in both): the words of
    /// `full[spans[0]]`, `full[spans[1]]`, ... are `main`'s. Each is cut between words, after a
    /// space when words come before it, so that `full` is the pieces around and between them and
    /// the spans, one after the other. Usually one span when `main` is a run of `full`'s lines
    /// (two or more when a line of it is also found earlier, [`line_match`]); an empty list when
    /// `main` has no words.
    pub spans: Option<Vec<std::ops::Range<usize>>>,
}

/// [`normalize_lines`] of `full` and of `main`, with one scan of `full`, when `main`'s lines are
/// some of `full`'s, in order (a page's main text is its whole text's lines less the menus and
/// footers around them and, often, a few blocks between them): both normalisations, and where
/// `main`'s words are in `full`'s ([`Within`]); `main_line` is called with each of `main`'s lines
/// and `full_line` with each of `full`'s, exactly as `normalize_lines` of each alone would.
/// `None` when `main` is empty or a line of it is not one of `full`'s after the one before
/// (then nothing was called).
///
/// The month rule looks across lines, so `main`'s lines are not judged within `full`: a date
/// part of a line after a month on the line before it in `full` but not in `main` stays in
/// `main`'s text and goes from `full`'s, and one next to a month on a line of `main` that a
/// line left out separates from it in `full` goes from `main`'s text and stays in `full`'s, as
/// each alone would have it (the spans are then `None`).
///
/// ```
/// use simcrawl_extract::{normalize_lines, normalize_lines_spanned, NormalizeOptions};
///
/// let full = "Menu\nReleased 12\nMarch 2024, at 10:32.\nIt's DONE!\nFooter";
/// let main = "March 2024, at 10:32.\nIt's DONE!";
/// let (mut a, mut b) = (Vec::new(), Vec::new());
/// let w = normalize_lines_spanned(full, main, NormalizeOptions::FINGERPRINT,
///     |l| a.push(l.to_owned()), |l| b.push(l.to_owned())).unwrap();
/// let (mut a2, mut b2) = (Vec::new(), Vec::new());
/// assert_eq!(w.main, normalize_lines(main, NormalizeOptions::FINGERPRINT, |l| a2.push(l.to_owned())));
/// assert_eq!(w.full, normalize_lines(full, NormalizeOptions::FINGERPRINT, |l| b2.push(l.to_owned())));
/// assert_eq!((a, b), (a2, b2));
/// assert!(normalize_lines_spanned(full, "It's DONE!\nMenu", NormalizeOptions::FINGERPRINT,
///     |_| {}, |_| {}).is_none());
///
/// // Lines left out between the main text's: two spans.
/// let w = normalize_lines_spanned("Menu\nThe tide\nAd\nturns.\nFooter", "The tide\nturns.",
///     NormalizeOptions::FINGERPRINT, |_| {}, |_| {}).unwrap();
/// assert_eq!(w.full, "menu the tide ad turns footer");
/// let spans = w.spans.unwrap();
/// let words: Vec<&str> = spans.iter().map(|s| w.full[s.clone()].trim_start()).collect();
/// assert_eq!(words.join(" "), w.main);
/// ```
pub fn normalize_lines_spanned(
    full: &str,
    main: &str,
    options: NormalizeOptions,
    mut main_line: impl FnMut(&str),
    mut full_line: impl FnMut(&str),
) -> Option<Within> {
    let lines = line_match(full, main)?;
    let mut scan = Scan::new(full, options);
    month_rule(&mut scan.tokens);
    let mut spans = Vec::new();
    let full_text = emit_marked(
        &scan.contents,
        &scan.tokens,
        0..scan.line_count,
        &mut full_line,
        Some((&lines, &mut spans)),
    );
    // The main text's tokens, each on its line of the main text.
    let mut run: Vec<Token> = Vec::new();
    for (index, &line) in lines.iter().enumerate() {
        let from = scan.tokens.partition_point(|t| t.line < line);
        let to = from + scan.tokens[from..].partition_point(|t| t.line == line);
        run.extend(scan.tokens[from..to].iter().map(|t| Token {
            line: index,
            ..t.clone()
        }));
    }
    let as_in_full: Vec<bool> = run.iter().map(|t| t.drop_whole).collect();
    month_rule(&mut run);
    let alike = run.iter().zip(&as_in_full).all(|(t, &d)| t.drop_whole == d);
    let main_text = emit(&scan.contents, &run, 0..lines.len(), &mut main_line);
    Some(Within {
        main: main_text,
        full: full_text,
        spans: alike.then_some(spans),
    })
}

/// Which of `full`'s lines ([`str::lines`]) `main`'s lines are, in order: for each, the first of
/// `full`'s lines after the one before that is the same (the earliest such lines, which a run of
/// `full`'s lines is unless a line of it comes earlier too). Any lines that are the same give
/// `main`'s text alike; the spans only when the month rule took their numbers alike there too.
/// `None` when `main` is empty or a line of it is not found so.
fn line_match(full: &str, main: &str) -> Option<Vec<usize>> {
    if main.is_empty() {
        return None;
    }
    let mut theirs = full.lines().enumerate();
    main.lines()
        .map(|line| theirs.find(|(_, l)| *l == line).map(|(index, _)| index))
        .collect()
}

/// One token: its normalised content in `contents`, its line, and whether the whole text's
/// rule and its line's rule drop it.
#[derive(Clone)]
struct Token {
    content: std::ops::Range<usize>,
    line: usize,
    month: bool,
    date_part: bool,
    /// A noise number: dropped by both rules, whatever is around it.
    noise: bool,
    drop_whole: bool,
    drop_line: bool,
}

/// A text's tokens, normalised, in order, with the line each is on.
struct Scan {
    contents: String,
    tokens: Vec<Token>,
    line_count: usize,
}

impl Scan {
    fn new(text: &str, options: NormalizeOptions) -> Scan {
        let mut contents = String::with_capacity(text.len());
        // About one token per seven bytes of prose: most texts never grow the vector.
        let mut tokens: Vec<Token> = Vec::with_capacity(text.len() / 7 + 1);
        let mut line_count = 0;
        for (index, text_line) in text.lines().enumerate() {
            line_count = index + 1;
            for token in Tokens(text_line) {
                let mut start = contents.len();
                let mut gap = true;
                normalize_scanned(token, options, &mut contents, &mut gap);
                // The space that separates it from the token before is not part of its content.
                if contents.as_bytes().get(start) == Some(&b' ') {
                    start += 1;
                }
                let noise =
                    options.strip_noise_numbers && token.digit && is_noise_number(token.text);
                let (month, date_part) = if options.strip_noise_numbers {
                    (
                        is_month(token.text),
                        token.digit && is_date_part(token.text),
                    )
                } else {
                    (false, false)
                };
                tokens.push(Token {
                    content: start..contents.len(),
                    line: index,
                    month,
                    date_part,
                    noise,
                    drop_whole: noise,
                    drop_line: noise,
                });
            }
        }
        Scan {
            contents,
            tokens,
            line_count,
        }
    }
}

/// The month rule over `tokens` (and none around them): a date part just before a month, or one
/// or two after it, is dropped; in the whole text across lines, in a line only within it.
fn month_rule(tokens: &mut [Token]) {
    for t in tokens.iter_mut() {
        t.drop_whole = t.noise;
        t.drop_line = t.noise;
    }
    for i in 0..tokens.len() {
        if !tokens[i].month {
            continue;
        }
        for j in [i.wrapping_sub(1), i + 1, i + 2] {
            if j >= tokens.len() || !tokens[j].date_part {
                continue;
            }
            tokens[j].drop_whole = true;
            if tokens[j].line == tokens[i].line {
                tokens[j].drop_line = true;
            }
        }
    }
}

/// The whole text of `lines` (each line's tokens in `tokens`, in order), and each line's own
/// normalisation to `line`.
fn emit(
    contents: &str,
    tokens: &[Token],
    lines: std::ops::Range<usize>,
    line: &mut impl FnMut(&str),
) -> String {
    emit_marked(contents, tokens, lines, line, None)
}

/// [`emit`], and the stretches of the whole text that hold the words of the lines of `mark`
/// (their indices, ascending), each from before the space that separates it from the words
/// before; lines of `mark` next to each other (or with only wordless lines between) make one.
fn emit_marked(
    contents: &str,
    tokens: &[Token],
    lines: std::ops::Range<usize>,
    line: &mut impl FnMut(&str),
    mut mark: Option<(&[usize], &mut Vec<std::ops::Range<usize>>)>,
) -> String {
    // Every token's content and a space before it: the most the text can take, so that it is
    // never copied as it grows.
    let mut whole = String::with_capacity(contents.len() + tokens.len());
    let mut scratch = String::new();
    let mut next = 0;
    for index in lines {
        let first = next;
        while next < tokens.len() && tokens[next].line == index {
            next += 1;
        }
        let line_tokens = &tokens[first..next];
        let before = whole.len();
        let line_start = whole.len() + usize::from(!whole.is_empty());
        let mut line_end = line_start;
        for token in line_tokens
            .iter()
            .filter(|t| !t.drop_whole && !t.content.is_empty())
        {
            push_word(&mut whole, &contents[token.content.clone()]);
            line_end = whole.len();
        }
        if let Some((marked, spans)) = &mut mark
            && let Some((&head, rest)) = marked.split_first()
            && head == index
        {
            *marked = rest;
            if whole.len() > before {
                match spans.last_mut() {
                    Some(last) if last.end == before => last.end = whole.len(),
                    _ => spans.push(before..whole.len()),
                }
            }
        }
        if line_tokens.iter().all(|t| t.drop_whole == t.drop_line) {
            line(whole.get(line_start..line_end).unwrap_or(""));
        } else {
            scratch.clear();
            for token in line_tokens
                .iter()
                .filter(|t| !t.drop_line && !t.content.is_empty())
            {
                push_word(&mut scratch, &contents[token.content.clone()]);
            }
            line(&scratch);
        }
    }
    whole
}

/// Appends `word` to `out`, after a space unless `out` is empty.
fn push_word(out: &mut String, word: &str) {
    if !out.is_empty() {
        out.push(' ');
    }
    out.push_str(word);
}

/// The white-space-free tokens of a text, split at Unicode white space as
/// `str::split(char::is_whitespace)` does, empty ones left out; ASCII bytes are classified
/// without decoding.
struct Tokens<'a>(&'a str);

/// A token and what the scan that found it learned of its bytes, so that the rules after it
/// need not read it again to tell a word from a number.
#[derive(Clone, Copy)]
struct Scanned<'a> {
    text: &'a str,
    /// It holds an ASCII digit (no digit: no noise number, no date part).
    digit: bool,
    /// It is ASCII letters only (the common word: copied and lower-cased as it stands).
    letters: bool,
}

impl<'a> Iterator for Tokens<'a> {
    type Item = Scanned<'a>;

    fn next(&mut self) -> Option<Scanned<'a>> {
        let text = self.0;
        let bytes = text.as_bytes();
        // Skip white space.
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if b < 0x80 {
                if !b.is_ascii_whitespace() && b != 0x0b {
                    break;
                }
                i += 1;
            } else {
                let c = text[i..].chars().next().unwrap_or(' ');
                if !c.is_whitespace() {
                    break;
                }
                i += c.len_utf8();
            }
        }
        if i == bytes.len() {
            self.0 = "";
            return None;
        }
        let start = i;
        let (mut digit, mut letters) = (false, true);
        while i < bytes.len() {
            let b = bytes[i];
            if b < 0x80 {
                if b.is_ascii_whitespace() || b == 0x0b {
                    break;
                }
                digit |= b.is_ascii_digit();
                letters &= b.is_ascii_alphabetic();
                i += 1;
            } else {
                let c = text[i..].chars().next().unwrap_or(' ');
                if c.is_whitespace() {
                    break;
                }
                letters = false;
                i += c.len_utf8();
            }
        }
        self.0 = &text[i..];
        Some(Scanned {
            text: &text[start..i],
            digit,
            letters,
        })
    }
}

/// An English month name or its abbreviation, with punctuation around it.
fn is_month(token: &str) -> bool {
    // Most tokens are told apart by their first two letters: a month name's first letter is the
    // token's first ASCII letter (a letter outside ASCII before it would make the word no month),
    // and the next byte is its second.
    let bytes = token.as_bytes();
    let Some(first) = bytes.iter().position(u8::is_ascii_alphabetic) else {
        return false;
    };
    let pair = (
        bytes[first] | 0x20,
        bytes.get(first + 1).map_or(0, |b| b | 0x20),
    );
    if !matches!(
        pair,
        (b'j', b'a' | b'u')
            | (b'f', b'e')
            | (b'm', b'a')
            | (b'a', b'p' | b'u')
            | (b's', b'e')
            | (b'o', b'c')
            | (b'n', b'o')
            | (b'd', b'e')
    ) {
        return false;
    }
    // Trimmed of what is not a letter at either end; a month name is 3 to 9 ASCII letters.
    let word = if token.is_ascii() {
        let bytes = token.as_bytes();
        let Some(start) = bytes.iter().position(u8::is_ascii_alphabetic) else {
            return false;
        };
        let end = bytes
            .iter()
            .rposition(u8::is_ascii_alphabetic)
            .unwrap_or(start)
            + 1;
        &bytes[start..end]
    } else {
        token.trim_matches(|c: char| !c.is_alphabetic()).as_bytes()
    };
    if word.len() < 3 || word.len() > 9 || !word.is_ascii() {
        return false;
    }
    let mut lower = [0u8; 9];
    for (l, b) in lower.iter_mut().zip(word) {
        *l = b.to_ascii_lowercase();
    }
    matches!(
        &lower[..word.len()],
        b"jan"
            | b"feb"
            | b"mar"
            | b"apr"
            | b"may"
            | b"jun"
            | b"jul"
            | b"aug"
            | b"sep"
            | b"sept"
            | b"oct"
            | b"nov"
            | b"dec"
            | b"january"
            | b"february"
            | b"march"
            | b"april"
            | b"june"
            | b"july"
            | b"august"
            | b"september"
            | b"october"
            | b"november"
            | b"december"
    )
}

/// A day (1 to 31, `12th`) or a year (four digits) next to a month name.
fn is_date_part(token: &str) -> bool {
    // Most tokens are words: no digit, no date part.
    if !token.bytes().any(|b| b.is_ascii_digit()) {
        return false;
    }
    let t = token.trim_matches(|c: char| !c.is_alphanumeric());
    let digits = t.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let suffix = &t[digits.len()..];
    let day = digits.len() <= 2
        && digits.parse::<u32>().is_ok_and(|d| (1..=31).contains(&d))
        && matches!(suffix, "" | "st" | "nd" | "rd" | "th");
    let year = digits.len() == 4 && suffix.is_empty();
    day || year
}

/// Appends one white-space-free token to `out`, by the path its scan chose.
fn normalize_scanned(
    token: Scanned<'_>,
    options: NormalizeOptions,
    out: &mut String,
    gap: &mut bool,
) {
    if token.letters {
        push_letters(token.text, options, out, gap);
    } else {
        normalize_other(token.text, options, out, gap);
    }
}

/// Appends a token of ASCII letters (or an empty one) to `out`.
fn push_letters(token: &str, options: NormalizeOptions, out: &mut String, gap: &mut bool) {
    // Most tokens are words of ASCII letters: nothing in them is dropped or separates.
    if token.is_empty() {
        return;
    }
    if *gap && !out.is_empty() {
        out.push(' ');
    }
    *gap = false;
    let start = out.len();
    out.push_str(token);
    if options.lowercase {
        out[start..].make_ascii_lowercase();
    }
}

/// Appends a token that is not ASCII letters only to `out`.
fn normalize_other(token: &str, options: NormalizeOptions, out: &mut String, gap: &mut bool) {
    if push_operator(token, options, out, gap) {
        return;
    }
    if token.is_ascii() {
        // The same decisions for ASCII, a byte at a time: no ASCII character is invisible, and
        // the only numeric ones are the digits.
        for &b in token.as_bytes() {
            if options.strip_punctuation && b.is_ascii_punctuation() && b != b'\'' {
                *gap = true;
                continue;
            }
            if (options.strip_digits && b.is_ascii_digit())
                || (options.strip_punctuation && b == b'\'')
            {
                continue;
            }
            if *gap && !out.is_empty() {
                out.push(' ');
            }
            *gap = false;
            out.push(char::from(if options.lowercase {
                b.to_ascii_lowercase()
            } else {
                b
            }));
        }
        return;
    }
    normalize_chars(token, options, out, gap);
}

/// [`normalize_token`] a character at a time: for any token (the ASCII path makes the same
/// decisions faster).
fn normalize_chars(token: &str, options: NormalizeOptions, out: &mut String, gap: &mut bool) {
    if push_operator(token, options, out, gap) {
        return;
    }
    for c in token.chars() {
        if options.split_ideographs && is_ideograph(c) {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push(c);
            *gap = true;
            continue;
        }
        if options.strip_punctuation && is_separator_punctuation(c) {
            *gap = true;
            continue;
        }
        if is_invisible_format(c)
            || (options.strip_digits && c.is_numeric())
            || (options.strip_punctuation && is_apostrophe(c))
        {
            continue;
        }
        if *gap && !out.is_empty() {
            out.push(' ');
        }
        *gap = false;
        if options.lowercase {
            if c.is_ascii() {
                out.push(c.to_ascii_lowercase());
            } else {
                out.extend(c.to_lowercase());
            }
        } else {
            out.push(c);
        }
    }
}

/// Appends `token` whole when it is a name made of punctuation that `options` keep
/// ([`is_operator_token`]): the word itself, not a gap. Pages that differ only in such names (an
/// index page per operator) are different pages.
fn push_operator(token: &str, options: NormalizeOptions, out: &mut String, gap: &mut bool) -> bool {
    if !options.strip_punctuation || !is_operator_token(token) {
        return false;
    }
    if !out.is_empty() {
        out.push(' ');
    }
    out.push_str(token);
    *gap = true;
    true
}

/// A Chinese or Japanese ideograph (CJK Unified Ideographs and their extensions and
/// compatibility blocks) or a kana (hiragana, katakana, half-width katakana): a character that is
/// a word, or part of one, in scripts written without spaces. Hangul is written with spaces and is
/// not one.
///
/// ```
/// use simcrawl_extract::is_ideograph;
/// assert!(is_ideograph('東') && is_ideograph('を') && is_ideograph('イ'));
/// assert!(!is_ideograph('a') && !is_ideograph('한') && !is_ideograph('。'));
/// ```
pub fn is_ideograph(c: char) -> bool {
    matches!(c,
        '\u{3041}'..='\u{309F}'        // hiragana
        | '\u{30A0}'..='\u{30FF}'      // katakana
        | '\u{31F0}'..='\u{31FF}'      // katakana phonetic extensions
        | '\u{3400}'..='\u{4DBF}'      // CJK extension A
        | '\u{4E00}'..='\u{9FFF}'      // CJK unified ideographs
        | '\u{F900}'..='\u{FAFF}'      // CJK compatibility ideographs
        | '\u{FF66}'..='\u{FF9D}'      // half-width katakana
        | '\u{20000}'..='\u{3134F}') // CJK extensions B to G, compatibility supplement
}

/// Words of `text` counted as [`normalize_text`] with
/// [`split_ideographs`](NormalizeOptions::split_ideographs) would count them: each ideograph
/// and kana a word, and each white-space-free run of other characters a word.
///
/// ```
/// use simcrawl_extract::text_words;
/// assert_eq!(text_words("two words"), 2);
/// assert_eq!(text_words("東京で Rust を"), 5);
/// ```
pub fn text_words(text: &str) -> usize {
    let mut words = 0;
    let mut in_word = false;
    for c in text.chars() {
        if c.is_whitespace() {
            in_word = false;
        } else if is_ideograph(c) {
            words += 1;
            in_word = false;
        } else if !in_word {
            words += 1;
            in_word = true;
        }
    }
    words
}

/// The runs of digits of `bytes`, each with the byte after it (0 at the end), and the longest.
fn digit_groups(bytes: &[u8]) -> (Vec<(usize, u8)>, usize) {
    let mut groups: Vec<(usize, u8)> = Vec::new();
    let mut run = 0usize;
    let mut longest = 0usize;
    for &b in bytes {
        if b.is_ascii_digit() {
            run += 1;
            longest = longest.max(run);
        } else if run > 0 {
            groups.push((run, b));
            run = 0;
        }
    }
    if run > 0 {
        groups.push((run, 0));
    }
    (groups, longest)
}

/// A date among digit groups: three joined by one separator, with a year of four digits (or
/// two, for d/m/y and m-d-y).
fn groups_hold_a_date(groups: &[(usize, u8)]) -> bool {
    groups.windows(3).any(|w| {
        let (a, sa) = w[0];
        let (b, sb) = w[1];
        let (c, _) = w[2];
        if sa != sb || !matches!(sa, b'-' | b'/' | b'.') || a > 4 || b > 2 || c > 4 {
            return false;
        }
        let year_first = a == 4 && c <= 2;
        let year_last = a <= 2 && (c == 4 || (c == 2 && sa != b'.'));
        year_first || year_last
    })
}

/// Whether a token holds a date written with separators (`2024-05-01`, `01/05/2024`,
/// `1.5.2024`, `2024-05-01T10:32:07Z`), as [`is_noise_number`] reads one.
///
/// ```
/// use simcrawl_extract::holds_a_date;
/// assert!(holds_a_date("2025-03-04") && holds_a_date("(04/03/2025),") && holds_a_date("1.5.2024"));
/// assert!(!holds_a_date("2.2.25") && !holds_a_date("10:32") && !holds_a_date("2025"));
/// ```
pub fn holds_a_date(token: &str) -> bool {
    groups_hold_a_date(&digit_groups(token.as_bytes()).0)
}

/// Whether a token holds a clock time: one or two digits up to 24, a colon, and two digits up to 59
/// (`8:05`, `10:32`, `10:32:07`, `T18:30:00Z`, `(09:15)`), not glued to more digits. Digits on both
/// sides of a colon are not enough: a score (`3:1`), an aspect ratio (`16:9`), a verse (`1:3`), a
/// section (`R.S. 12:104`) or a port (`:8080`) is content, and a copy's stamp is a time of day.
///
/// ```
/// use simcrawl_extract::holds_a_clock_time;
/// assert!(holds_a_clock_time("10:32") && holds_a_clock_time("8:05,") && holds_a_clock_time("2024-05-01T10:32:07Z"));
/// assert!(!holds_a_clock_time("3:1") && !holds_a_clock_time("12:104") && !holds_a_clock_time("125:30"));
/// assert!(!holds_a_clock_time("16:9") && !holds_a_clock_time("25:00") && !holds_a_clock_time("10:75"));
/// ```
pub fn holds_a_clock_time(token: &str) -> bool {
    let bytes = token.as_bytes();
    let value = |digits: &[u8]| {
        digits
            .iter()
            .fold(0u32, |v, d| v * 10 + u32::from(d - b'0'))
    };
    bytes.iter().enumerate().any(|(colon, &b)| {
        if b != b':' {
            return false;
        }
        let (before, after) = (&bytes[..colon], &bytes[colon + 1..]);
        let hours = before
            .iter()
            .rev()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let minutes = after.iter().take_while(|b| b.is_ascii_digit()).count();
        (1..=2).contains(&hours)
            && minutes == 2
            && value(&before[colon - hours..]) <= 24
            && value(&after[..2]) <= 59
    })
}

/// Whether a white-space-free token is a number that varies between two copies of one page rather
/// than a number that says something: a clock time ([`holds_a_clock_time`]: `10:32`,
/// `2024-05-01T10:32:07Z`; not a score, a ratio, a verse or a section, `3:1`, `16:9`, `1:3`,
/// `12:104`), a date
/// (`2024-05-01`, `01/05/2024`, `1.5.2024`), a run of seven or more digits (counters, Unix times,
/// ids), or an id mixing letters and digits (`7736a42555420db9`, `a1b2c3d4e5f6`). Versions
/// (`2.2.25`), sizes (`64`), years alone (`2024`) and words with a digit (`utf8`, `x86_64`) are
/// content.
///
/// ```
/// use simcrawl_extract::is_noise_number;
/// assert!(is_noise_number("10:32:07,") && is_noise_number("(2024-05-01)") && is_noise_number("1700000000"));
/// assert!(is_noise_number("sessionid=7736a42555420db9"));
/// assert!(!is_noise_number("2.2.25") && !is_noise_number("64-bit") && !is_noise_number("utf8"));
/// assert!(!is_noise_number("3:1") && !is_noise_number("12:104") && !is_noise_number("25:00"));
/// ```
pub fn is_noise_number(token: &str) -> bool {
    let bytes = token.as_bytes();
    if !bytes.iter().any(u8::is_ascii_digit) {
        return false;
    }
    if holds_a_clock_time(token) {
        return true;
    }
    let (groups, longest_digits) = digit_groups(bytes);
    if longest_digits >= 7 || groups_hold_a_date(&groups) {
        return true;
    }
    // An id: a long alphanumeric stretch mixing letters and digits.
    let (mut letters, mut digits, mut len, mut hex_only) = (0usize, 0usize, 0usize, true);
    for &b in bytes.iter().chain(std::iter::once(&b' ')) {
        if b.is_ascii_alphanumeric() {
            len += 1;
            if b.is_ascii_digit() {
                digits += 1;
            } else {
                letters += 1;
                hex_only &= b.is_ascii_hexdigit();
            }
            continue;
        }
        let id =
            digits >= 2 && letters >= 1 && ((len >= 8 && hex_only) || (len >= 12 && digits >= 3));
        if id {
            return true;
        }
        (letters, digits, len, hex_only) = (0, 0, 0, true);
    }
    false
}

fn is_invisible_format(c: char) -> bool {
    matches!(
        c,
        '\u{ad}' | '\u{200b}'..='\u{200d}' | '\u{2060}' | '\u{feff}'
    )
}

fn is_apostrophe(c: char) -> bool {
    matches!(c, '\'' | '\u{2019}' | '\u{02bc}')
}

fn is_separator_punctuation(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_punctuation() && c != '\'';
    }
    matches!(c,
        // Latin-1: ¡ § « ¶ · » ¿
        '\u{a1}' | '\u{a7}' | '\u{ab}' | '\u{b6}' | '\u{b7}' | '\u{bb}' | '\u{bf}'
        // General Punctuation: dashes, quotes (except the apostrophe), bullets, ellipsis...
        | '\u{2010}'..='\u{2018}' | '\u{201a}'..='\u{2027}' | '\u{2030}'..='\u{205e}'
        // CJK Symbols and Punctuation: ideographic comma, full stop, brackets.
        | '\u{3001}'..='\u{3003}' | '\u{3008}'..='\u{3011}' | '\u{3014}'..='\u{301f}'
        // Full-width ASCII punctuation.
        | '\u{ff01}'..='\u{ff0f}' | '\u{ff1a}'..='\u{ff20}' | '\u{ff3b}'..='\u{ff40}'
        | '\u{ff5b}'..='\u{ff65}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn months_are_told_by_their_names_whatever_surrounds_them() {
        for (token, month) in [
            ("March", true),
            ("(MARCH),", true),
            ("«sept.", true),
            ("12-Jun", true),
            ("éMarch", false),
            ("Mär", false),
            ("junior", false),
            ("Decembers", false),
            ("—oct—", true),
            ("a", false),
            ("", false),
        ] {
            assert_eq!(is_month(token), month, "{token:?}");
            assert_eq!(reference_is_month(token), month, "{token:?}");
        }
    }

    /// [`is_month`] as a list of names.
    fn reference_is_month(token: &str) -> bool {
        const MONTHS: [&str; 12] = [
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ];
        let word = token.trim_matches(|c: char| !c.is_alphabetic());
        if word.len() < 3 || word.len() > 9 || !word.is_ascii() {
            return false;
        }
        word.eq_ignore_ascii_case("sept")
            || MONTHS.iter().any(|m| {
                m.eq_ignore_ascii_case(word)
                    || (word.len() == 3 && m[..3].eq_ignore_ascii_case(word))
            })
    }

    /// The two-pass normalisation the one-pass [`normalize_text`] replaced, kept to check it.
    fn reference(text: &str, options: NormalizeOptions) -> String {
        let mut out = String::with_capacity(text.len());
        // A separator was seen since the last character written.
        let mut gap = true;
        if !options.strip_noise_numbers {
            for token in text.split(char::is_whitespace) {
                if !token.is_empty() {
                    normalize_chars(token, options, &mut out, &mut gap);
                    gap = true;
                }
            }
            return out;
        }
        // Dates written with a month name ("12 March 2024", "March 12, 2024"): the numbers next to
        // the month are noise too.
        let tokens: Vec<&str> = text
            .split(char::is_whitespace)
            .filter(|t| !t.is_empty())
            .collect();
        let mut drop: Vec<bool> = tokens.iter().map(|t| is_noise_number(t)).collect();
        for (i, token) in tokens.iter().enumerate() {
            if !reference_is_month(token) {
                continue;
            }
            for j in [i.wrapping_sub(1), i + 1, i + 2] {
                if let Some(t) = tokens.get(j)
                    && is_date_part(t)
                {
                    drop[j] = true;
                }
            }
        }
        for (token, drop) in tokens.iter().zip(drop) {
            if !drop {
                normalize_chars(token, options, &mut out, &mut gap);
                gap = true;
            }
        }
        out
    }

    #[test]
    fn whitespace_only_collapses_and_trims() {
        assert_eq!(
            normalize_text(
                "  a \t\n b\u{a0}\u{a0}c  ",
                NormalizeOptions::WHITESPACE_ONLY
            ),
            "a b c"
        );
        assert_eq!(normalize_text("", NormalizeOptions::WHITESPACE_ONLY), "");
        assert_eq!(normalize_text(" \n ", NormalizeOptions::FINGERPRINT), "");
    }

    #[test]
    fn digits_vanish_without_splitting_words() {
        let opts = NormalizeOptions {
            strip_digits: true,
            ..NormalizeOptions::WHITESPACE_ONLY
        };
        assert_eq!(normalize_text("page10 of 12 items", opts), "page of items");
        assert_eq!(normalize_text("١٢٣ done ²", opts), "done");
    }

    #[test]
    fn punctuation_separates_and_apostrophes_join() {
        let opts = NormalizeOptions {
            strip_punctuation: true,
            ..NormalizeOptions::WHITESPACE_ONLY
        };
        assert_eq!(
            normalize_text("«Hello»—world… don’t e-mail (me)!", opts),
            "Hello world dont e mail me"
        );
        assert_eq!(normalize_text("東京、大阪。", opts), "東京 大阪");
        assert_eq!(normalize_text("© 2024 €5", opts), "© 2024 €5");
    }

    #[test]
    fn ideographs_and_kana_are_words_of_their_own() {
        assert_eq!(
            normalize_text("東京で Rust を使う。", NormalizeOptions::FINGERPRINT),
            "東 京 で rust を 使 う"
        );
        // Hangul is written with spaces: its words stay whole.
        assert_eq!(
            normalize_text("서울에서 Rust", NormalizeOptions::FINGERPRINT),
            "서울에서 rust"
        );
        assert_eq!(
            normalize_text("東京で", NormalizeOptions::WHITESPACE_ONLY),
            "東京で"
        );
        let text = normalize_text("肉をくわえた 犬", NormalizeOptions::FINGERPRINT);
        assert_eq!(normalized_words(&text), 7);
        assert_eq!(text_words("肉をくわえた 犬"), 7);
    }

    #[test]
    fn lowercase_is_unicode_aware_and_invisible_characters_go() {
        let opts = NormalizeOptions {
            lowercase: true,
            ..NormalizeOptions::WHITESPACE_ONLY
        };
        assert_eq!(
            normalize_text("ÀÉÎ Straße co\u{ad}op\u{200b}", opts),
            "àéî straße coop"
        );
    }

    #[test]
    fn default_is_fingerprint() {
        assert_eq!(NormalizeOptions::default(), NormalizeOptions::FINGERPRINT);
        assert_eq!(
            normalize_text(
                "Rendered at 10:32:07 by node-7",
                NormalizeOptions::default()
            ),
            "rendered at by node 7"
        );
    }

    #[test]
    fn noise_numbers_go_and_content_numbers_stay() {
        for noise in [
            "10:32",
            "09:22:47.",
            "2026-11-25T09:22:47Z",
            "2024-05-01",
            "(01/05/2024)",
            "1.5.2024",
            "12-31-99",
            "1700000000",
            "7736a42555420db9",
            "a1b2c3d4e5f6",
            "sid=0123456789abcdef",
            "v3x9k2m7q8w1z4",
            "node-12345678",
        ] {
            assert!(is_noise_number(noise), "{noise}");
        }
        for content in [
            "2.2.25", "3.1.14", "1.11.28", "64", "2024", "64-bit", "utf8", "x86_64", "sha256",
            "3_19_1", "1,000", "42%", "v15", "word", "", "C++17", "deadbeef", "1.5",
        ] {
            assert!(!is_noise_number(content), "{content}");
        }
        let fp = NormalizeOptions::FINGERPRINT;
        assert_ne!(
            normalize_text("Django 2.2.25 release notes", fp),
            normalize_text("Django 3.1.14 release notes", fp)
        );
        assert_eq!(
            normalize_text(
                "Served 2026-11-25 09:22:47 by node-3, session 9f8e7d6c5b4a3921",
                fp
            ),
            normalize_text(
                "Served 2026-11-26 10:01:02 by node-3, session 0a1b2c3d4e5f6a7b",
                fp
            )
        );
    }

    /// Text made of what normalisation treats specially: month names, dates, times, ids,
    /// punctuation, apostrophes, invisible characters and Unicode white space.
    fn tricky_text() -> impl Strategy<Value = String> {
        let piece = prop::sample::select(vec![
            "東京大学",
            "をイヌが、",
            "March",
            "mar",
            "SEPT",
            "may",
            "Dec.",
            "12",
            "31st",
            "2024",
            "2024,",
            "1.5.2024",
            "10:32",
            "7736a42555420db9",
            "v15",
            "don\u{2019}t",
            "It's",
            "DON'T",
            "(Nov)",
            "Sept.",
            "JANUARY",
            "x9-Y8'z",
            "e-mail",
            "(12)",
            "«Hello»",
            "ÀÉÎ",
            "Straße",
            "co\u{ad}op",
            "東京、",
            "١٢٣",
            "²",
            "word",
            "Word",
            "x86_64",
            "",
            " ",
            "  ",
            "\n",
            "\t",
            "\u{a0}",
            "\u{85}",
            "\u{2003}",
            "\u{b}",
            "\u{c}",
            "\r\n",
            "\u{3000}",
        ]);
        prop::collection::vec(piece, 0..40).prop_map(|pieces| pieces.concat())
    }

    /// Lines are matched as lines, not as text: "a\na" in "ba\na\na" is lines 1 and 2.
    #[test]
    fn lines_are_found_as_lines_not_as_text() {
        let options = NormalizeOptions::FINGERPRINT;
        assert_eq!(line_match("ba\na\na", "a\na"), Some(vec![1, 2]));
        assert_eq!(line_match("ba\nxa\na", "a\na"), None);
        assert_eq!(line_match("a\nb\na\nc", "a\nc"), Some(vec![0, 3]));
        let within = normalize_lines_spanned("ba\na\na", "a\na", options, |_| {}, |_| {});
        assert_eq!(
            within,
            Some(Within {
                main: "a a".into(),
                full: "ba a a".into(),
                spans: Some(std::iter::once(2..6).collect()),
            })
        );
    }

    proptest! {
        #[test]
        fn words_are_counted_as_the_tokens_between_single_spaces(text in "[ a+\\-'é(.,]{0,24}") {
            let words = text
                .split(' ')
                .filter(|w| !w.is_empty() && !is_operator_token(w))
                .count();
            prop_assert_eq!(normalized_words(&text), words, "{:?}", text);
        }

        #[test]
        fn is_month_matches_the_list_of_names(token in "[(«—\\-.,éa-zA-Z0-9]{0,12}") {
            prop_assert_eq!(is_month(&token), reference_is_month(&token), "{:?}", token);
        }

        #[test]
        fn one_pass_matches_the_two_pass_reference(
            text in tricky_text(),
            lowercase: bool,
            strip_digits: bool,
            strip_noise_numbers: bool,
            strip_punctuation: bool,
            split_ideographs: bool,
        ) {
            let options = NormalizeOptions {
                lowercase,
                strip_digits,
                strip_noise_numbers,
                strip_punctuation,
                split_ideographs,
            };
            let normalized = normalize_text(&text, options);
            let words = normalized
                .split_whitespace()
                .filter(|w| w.chars().any(|c| !c.is_ascii_punctuation() || c == '\''))
                .count();
            prop_assert_eq!(normalized_words(&normalized), words);
            prop_assert_eq!(normalized, reference(&text, options));
        }

        #[test]
        fn lines_match_each_line_alone(
            lines in prop::collection::vec(tricky_text(), 0..6),
            crlf: bool,
            lowercase: bool,
            strip_noise_numbers: bool,
        ) {
            let options = NormalizeOptions { lowercase, strip_noise_numbers, ..NormalizeOptions::FINGERPRINT };
            let text = lines.join(if crlf { "\r\n" } else { "\n" });
            let mut got = Vec::new();
            let whole = normalize_lines(&text, options, |l| got.push(l.to_owned()));
            prop_assert_eq!(normalized_words(&whole), whole.split_whitespace().count());
            for line in &got {
                prop_assert_eq!(normalized_words(line), line.split_whitespace().count());
            }
            prop_assert_eq!(whole, normalize_text(&text, options));
            let want: Vec<String> = text.lines().map(|l| normalize_text(l, options)).collect();
            prop_assert_eq!(got, want);
        }

        #[test]
        fn some_lines_of_a_text_are_normalised_as_each_alone(
            lines in prop::collection::vec(tricky_text(), 1..8),
            from in 0usize..8,
            len in 0usize..8,
            left_out in prop::collection::vec(any::<bool>(), 8),
            crlf: bool,
            strip_noise_numbers: bool,
        ) {
            let options = NormalizeOptions { strip_noise_numbers, ..NormalizeOptions::FINGERPRINT };
            let sep = if crlf { "\r\n" } else { "\n" };
            let full = lines.join(sep);
            let from = from.min(lines.len() - 1);
            // A run of the lines, less some of them.
            let chosen: Vec<&String> = lines[from..(from + len).min(lines.len())]
                .iter()
                .zip(&left_out)
                .filter(|(_, out)| !**out)
                .map(|(l, _)| l)
                .collect();
            let main = chosen.iter().map(|l| l.as_str()).collect::<Vec<_>>().join(sep);
            let (mut main_lines, mut full_lines) = (Vec::new(), Vec::new());
            let within = normalize_lines_spanned(&full, &main, options,
                |l| main_lines.push(l.to_owned()), |l| full_lines.push(l.to_owned()));
            let (mut main_alone, mut full_alone) = (Vec::new(), Vec::new());
            let want = (
                normalize_lines(&main, options, |l| main_alone.push(l.to_owned())),
                normalize_lines(&full, options, |l| full_alone.push(l.to_owned())),
            );
            if let Some(within) = &within
                && let Some(spans) = within.spans.clone()
            {
                // The main text's words, cut between words, when the month rule took them alike.
                let words: Vec<&str> = spans.iter().map(|s| within.full[s.clone()].trim_start()).collect();
                prop_assert_eq!(words.join(" "), within.main.clone());
                let mut end = 0;
                for span in &spans {
                    prop_assert!(!span.is_empty() && span.start >= end);
                    prop_assert!(span.start == 0 || within.full[span.start..].starts_with(' '));
                    prop_assert!(span.end == within.full.len() || within.full[span.end..].starts_with(' '));
                    end = span.end;
                }
            }
            match within {
                Some(within) => {
                    prop_assert_eq!((within.main, within.full), want);
                    prop_assert_eq!(main_lines, main_alone);
                    prop_assert_eq!(full_lines, full_alone);
                }
                // The lines are none, or not lines as `str::lines` splits them (a piece ends in
                // a carriage return that joins it to the separator): nothing called.
                None => prop_assert!(main_lines.is_empty() && full_lines.is_empty()),
            }
        }

        #[test]
        fn any_text_matches_the_reference(text in any::<String>()) {
            let options = NormalizeOptions::FINGERPRINT;
            prop_assert_eq!(normalize_text(&text, options), reference(&text, options));
        }

        #[test]
        fn the_scan_tells_digits_and_letters_as_the_bytes_do(text in tricky_text()) {
            let tokens: Vec<Scanned<'_>> = Tokens(&text).collect();
            let split: Vec<&str> = text.split(char::is_whitespace).filter(|t| !t.is_empty()).collect();
            prop_assert_eq!(tokens.iter().map(|t| t.text).collect::<Vec<_>>(), split);
            for t in tokens {
                prop_assert_eq!(t.digit, t.text.bytes().any(|b| b.is_ascii_digit()), "{}", t.text);
                prop_assert_eq!(t.letters, t.text.bytes().all(|b| b.is_ascii_alphabetic()), "{}", t.text);
            }
        }
    }
}
