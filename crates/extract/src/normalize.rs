//! Text normalisation for fingerprints.
//!
//! Shingles and SimHash features are words; two copies of a page should yield the same words even
//! when their counters, dates, ids, letter case or punctuation differ. [`normalize_text`] turns
//! extracted text into a single line of words separated by single spaces.

/// What [`normalize_text`] does besides collapsing white space.
///
/// The [`Default`] is [`NormalizeOptions::FINGERPRINT`]: lowercase, strip digits, strip
/// punctuation. That is the setting the dedup pipeline should use; the sources advise removing
/// integers before shingling, which kills counters, dates and ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NormalizeOptions {
    /// Lowercase every letter (full Unicode lowercasing).
    pub lowercase: bool,
    /// Remove every numeric character (`char::is_numeric`: ASCII and other scripts' digits,
    /// superscripts, fractions). `page10` becomes `page`; a token that was all digits disappears.
    pub strip_digits: bool,
    /// Treat punctuation as white space, except apostrophes, which are removed so that `don't`
    /// becomes `dont`. Punctuation here is ASCII punctuation plus the Latin-1, General Punctuation,
    /// CJK and full-width punctuation blocks; symbols such as `©`, `€` or emoji stay.
    pub strip_punctuation: bool,
}

impl NormalizeOptions {
    /// Lowercase, strip digits, strip punctuation: the setting for fingerprints.
    pub const FINGERPRINT: NormalizeOptions = NormalizeOptions {
        lowercase: true,
        strip_digits: true,
        strip_punctuation: true,
    };

    /// Only collapse white space.
    pub const WHITESPACE_ONLY: NormalizeOptions = NormalizeOptions {
        lowercase: false,
        strip_digits: false,
        strip_punctuation: false,
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
/// assert_eq!(
///     normalize_text(text, NormalizeOptions::WHITESPACE_ONLY),
///     "Updated 10:32, 2024-05-01. It's RAINING again!"
/// );
/// ```
pub fn normalize_text(text: &str, options: NormalizeOptions) -> String {
    let mut out = String::with_capacity(text.len());
    // A separator was seen since the last character written.
    let mut gap = false;
    for c in text.chars() {
        if c.is_whitespace() || (options.strip_punctuation && is_separator_punctuation(c)) {
            gap = true;
            continue;
        }
        if is_invisible_format(c)
            || (options.strip_digits && c.is_numeric())
            || (options.strip_punctuation && is_apostrophe(c))
        {
            continue;
        }
        if gap && !out.is_empty() {
            out.push(' ');
        }
        gap = false;
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
    out
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
            "rendered at by node"
        );
    }
}
