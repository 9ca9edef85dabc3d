//! Turning text into features: the modelling choices of shingling made explicit.
//!
//! A document becomes a stream of 64-bit feature hashes. Each occurrence is emitted, so a feature that
//! occurs three times is emitted three times: SimHash, which adds one weight per occurrence, therefore
//! weighs features by term frequency, and MinHash, which keeps minimums, sees the set.
//!
//! The choices, each an option of [`FeatureOptions`]:
//! - **case folding** (`lowercase`): "The" and "the" are one word;
//! - **punctuation** (`strip_punctuation`): when on, words are runs of letters and digits and everything
//!   else separates them; when off, words are split on white space only, and "end." differs from "end";
//! - **integers** (`strip_digits`): digits are removed before shingling, which kills counters, dates,
//!   prices and ids: the usual noise between two copies of a page;
//! - **stop words** (`stop_words`): drop about 170 frequent English function words;
//! - **word n-grams** (`word_ngram`): a feature is w consecutive words ("super-tokens", shingles of
//!   width w);
//! - **character shingles** (`char_shingle`): a feature is q consecutive characters of the normalised
//!   text instead of words, for scripts written without spaces.
//!
//! The defaults differ by use, and each is argued in `docs/ARCHITECTURE.md`:
//! [`FeatureOptions::simhash`] (single words, stop words dropped, weighted by frequency) and
//! [`FeatureOptions::minhash`] (3-word shingles as a set).

use crate::error::DedupError;
use crate::stopwords::StopWords;
use xxhash_rust::xxh3::xxh3_64;

/// The widest word n-gram accepted.
pub const MAX_WORD_NGRAM: usize = 16;
/// The widest character shingle accepted.
pub const MAX_CHAR_SHINGLE: usize = 32;

/// How text becomes features. See the module documentation for what each choice does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeatureOptions {
    /// Fold case (Unicode lowercase).
    pub lowercase: bool,
    /// Split words on anything that is not a letter or digit, and drop the punctuation.
    pub strip_punctuation: bool,
    /// Remove digits before shingling ("remove integers").
    pub strip_digits: bool,
    /// Drop common English stop words.
    pub stop_words: bool,
    /// Words per feature (1 = single words).
    pub word_ngram: usize,
    /// When set, features are character shingles of this width instead of words.
    pub char_shingle: Option<usize>,
}

impl FeatureOptions {
    /// The defaults for SimHash: folded case, no punctuation, no digits, no stop words, single words.
    /// Frequency-weighted words make small edits move few bits, while the removal of stop words keeps
    /// two different texts from agreeing on the heavy words every English text shares.
    pub fn simhash() -> Self {
        FeatureOptions {
            lowercase: true,
            strip_punctuation: true,
            strip_digits: true,
            stop_words: true,
            word_ngram: 1,
            char_shingle: None,
        }
    }

    /// The defaults for MinHash: folded case, no punctuation, no digits, stop words kept, 3-word
    /// shingles. Shingles carry word order, which is what makes resemblance precise; three words is
    /// wide enough that two unrelated texts share few shingles and narrow enough that one changed word
    /// costs only three.
    pub fn minhash() -> Self {
        FeatureOptions {
            stop_words: false,
            word_ngram: 3,
            ..FeatureOptions::simhash()
        }
    }

    /// Checks the widths.
    pub fn validate(&self) -> Result<(), DedupError> {
        if self.word_ngram == 0 || self.word_ngram > MAX_WORD_NGRAM {
            return Err(DedupError::Width {
                what: "word_ngram",
                value: self.word_ngram,
                max: MAX_WORD_NGRAM,
            });
        }
        if let Some(q) = self.char_shingle
            && (q == 0 || q > MAX_CHAR_SHINGLE)
        {
            return Err(DedupError::Width {
                what: "char_shingle",
                value: q,
                max: MAX_CHAR_SHINGLE,
            });
        }
        Ok(())
    }
}

impl Default for FeatureOptions {
    fn default() -> Self {
        FeatureOptions::simhash()
    }
}

/// A validated feature extractor. Cheap to share; holds no per-document state.
#[derive(Debug, Clone)]
pub struct Features {
    options: FeatureOptions,
    stop: Option<StopWords>,
}

/// Byte classes for the ASCII fast path.
const OTHER: u8 = 0;
const ALPHA: u8 = 1;
const DIGIT: u8 = 2;
const SPACE: u8 = 3;

const fn ascii_classes() -> [u8; 128] {
    let mut table = [OTHER; 128];
    let mut b = 0;
    while b < 128 {
        let c = b as u8;
        table[b] = if c.is_ascii_alphabetic() {
            ALPHA
        } else if c.is_ascii_digit() {
            DIGIT
        } else if c.is_ascii_whitespace() || c == 0x0b {
            SPACE
        } else {
            OTHER
        };
        b += 1;
    }
    table
}

static ASCII_CLASS: [u8; 128] = ascii_classes();

impl Features {
    /// Builds an extractor, checking the options.
    pub fn new(options: FeatureOptions) -> Result<Self, DedupError> {
        options.validate()?;
        let stop = options.stop_words.then(StopWords::english);
        Ok(Features { options, stop })
    }

    /// The options in use.
    pub fn options(&self) -> &FeatureOptions {
        &self.options
    }

    /// Calls `emit` with the hash of every feature of `text`, in order, once per occurrence.
    pub fn for_each(&self, text: &str, mut emit: impl FnMut(u64)) {
        match self.options.char_shingle {
            Some(q) => self.char_shingles(text, q, &mut emit),
            None if self.options.word_ngram == 1 => self.words(text, &mut |h, _| emit(h)),
            None => {
                let n = self.options.word_ngram;
                let mut ring = [0u64; MAX_WORD_NGRAM];
                let mut seen = 0usize;
                self.words(text, &mut |h, _| {
                    ring[seen % n] = h;
                    seen += 1;
                    if seen >= n {
                        emit(combine(&ring[..n], seen % n));
                    }
                });
                // A text shorter than one shingle still has one feature: all its words.
                if seen > 0 && seen < n {
                    emit(combine(&ring[..seen], 0));
                }
            }
        }
    }

    /// [`for_each`](Self::for_each) for word features, also calling `word` with the hash of every
    /// word it keeps, in the same pass: what lets two hashers that split words alike share it.
    pub(crate) fn for_each_with_words(
        &self,
        text: &str,
        mut emit: impl FnMut(u64),
        mut word: impl FnMut(u64),
    ) {
        debug_assert!(self.options.char_shingle.is_none());
        let n = self.options.word_ngram;
        let mut ring = [0u64; MAX_WORD_NGRAM];
        let mut seen = 0usize;
        self.words(text, &mut |h, _| {
            word(h);
            if n == 1 {
                emit(h);
                return;
            }
            ring[seen % n] = h;
            seen += 1;
            if seen >= n {
                emit(combine(&ring[..n], seen % n));
            }
        });
        // A text shorter than one shingle still has one feature: all its words.
        if n > 1 && seen > 0 && seen < n {
            emit(combine(&ring[..seen], 0));
        }
    }

    /// Whether the word whose hash is `h` is one of this extractor's stop words.
    pub(crate) fn is_stop(&self, h: u64) -> bool {
        self.stop.as_ref().is_some_and(|stop| stop.contains(h))
    }

    /// Whether `other` splits a text into the same words with the same hashes (case, punctuation
    /// and digits alike; word features both).
    pub(crate) fn splits_like(&self, other: &Features) -> bool {
        let (a, b) = (&self.options, &other.options);
        a.char_shingle.is_none()
            && b.char_shingle.is_none()
            && a.lowercase == b.lowercase
            && a.strip_punctuation == b.strip_punctuation
            && a.strip_digits == b.strip_digits
    }

    /// Collects the features of `text` as (hash, text) pairs, for explanations. Slow; not for the crawl.
    pub fn collect_with_text(&self, text: &str) -> Vec<(u64, String)> {
        let mut out = Vec::new();
        match self.options.char_shingle {
            Some(_) => {
                let normal = self.normalised_chars(text);
                let chars: Vec<char> = normal.chars().collect();
                let mut i = 0;
                self.for_each(text, |h| {
                    let q = self.options.char_shingle.unwrap_or(1).min(chars.len());
                    let s: String = chars[i.min(chars.len() - q)..][..q].iter().collect();
                    out.push((h, s));
                    i += 1;
                });
            }
            None => {
                let n = self.options.word_ngram;
                let mut words: Vec<String> = Vec::new();
                self.words(text, &mut |_, w| words.push(w.to_string()));
                let mut i = 0;
                self.for_each(text, |h| {
                    let end = (i + n).min(words.len());
                    out.push((h, words[i..end].join(" ")));
                    i += 1;
                });
            }
        }
        out
    }

    /// Splits text into normalised words and calls `emit(hash, word)` for each kept word.
    fn words(&self, text: &str, emit: &mut dyn FnMut(u64, &str)) {
        let opts = &self.options;
        let mut buf: Vec<u8> = Vec::with_capacity(64);
        let bytes = text.as_bytes();
        let mut i = 0;
        let word = |word: &str, emit: &mut dyn FnMut(u64, &str)| {
            let h = xxh3_64(word.as_bytes());
            let keep = match &self.stop {
                Some(stop) => !stop.contains(h),
                None => true,
            };
            if keep {
                emit(h, word);
            }
        };
        let flush = |buf: &mut Vec<u8>, emit: &mut dyn FnMut(u64, &str)| {
            if !buf.is_empty() {
                // SAFETY-free: buf only ever receives whole UTF-8 sequences.
                word(std::str::from_utf8(buf).unwrap_or(""), emit);
                buf.clear();
            }
        };
        while i < bytes.len() {
            // Normalised text is mostly lower-case ASCII words between single spaces: at a
            // word's start, such a word is taken as it stands, as the loop below would take it
            // byte by byte.
            if buf.is_empty() {
                let run = bytes[i..]
                    .iter()
                    .position(|b| !b.is_ascii_lowercase())
                    .unwrap_or(bytes.len() - i);
                let end = i + run;
                if run > 0 && bytes.get(end).is_none_or(|&b| b == b' ') {
                    word(&text[i..end], emit);
                    i = end + 1;
                    continue;
                }
            }
            let b = bytes[i];
            if b < 0x80 {
                i += 1;
                match ASCII_CLASS[usize::from(b)] {
                    ALPHA => buf.push(if opts.lowercase {
                        b.to_ascii_lowercase()
                    } else {
                        b
                    }),
                    DIGIT => {
                        if !opts.strip_digits {
                            buf.push(b);
                        }
                    }
                    SPACE => flush(&mut buf, emit),
                    _ => {
                        if opts.strip_punctuation {
                            flush(&mut buf, emit);
                        } else {
                            buf.push(b);
                        }
                    }
                }
                continue;
            }
            // Non-ASCII: decode one char. `text` is a str, so this always succeeds.
            let ch = text[i..].chars().next().unwrap_or('\u{fffd}');
            i += ch.len_utf8();
            if ch.is_alphabetic() {
                if opts.lowercase {
                    for lower in ch.to_lowercase() {
                        push_char(&mut buf, lower);
                    }
                } else {
                    push_char(&mut buf, ch);
                }
            } else if ch.is_numeric() {
                if !opts.strip_digits {
                    push_char(&mut buf, ch);
                }
            } else if ch.is_whitespace() {
                flush(&mut buf, emit);
            } else if opts.strip_punctuation {
                // Combining marks belong to their letter; other symbols separate words.
                if is_mark(ch) {
                    push_char(&mut buf, ch);
                } else {
                    flush(&mut buf, emit);
                }
            } else {
                push_char(&mut buf, ch);
            }
        }
        flush(&mut buf, emit);
    }

    /// The text as the character shingler sees it: the kept characters of each word, words joined by
    /// one space.
    fn normalised_chars(&self, text: &str) -> String {
        let mut out = String::new();
        self.words(text, &mut |_, w| {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(w);
        });
        out
    }

    fn char_shingles(&self, text: &str, q: usize, emit: &mut dyn FnMut(u64)) {
        let mut ring = [0u64; MAX_CHAR_SHINGLE];
        let mut seen = 0usize;
        let mut push = |c: char, emit: &mut dyn FnMut(u64)| {
            ring[seen % q] = u64::from(c as u32);
            seen += 1;
            if seen >= q {
                emit(combine(&ring[..q], seen % q));
            }
        };
        let mut first = true;
        self.words(text, &mut |_, w| {
            if !first {
                push(' ', emit);
            }
            first = false;
            for c in w.chars() {
                push(c, emit);
            }
        });
        if seen > 0 && seen < q {
            emit(combine(&ring[..seen], 0));
        }
    }
}

fn push_char(buf: &mut Vec<u8>, ch: char) {
    let mut tmp = [0u8; 4];
    buf.extend_from_slice(ch.encode_utf8(&mut tmp).as_bytes());
}

/// Combining marks (accents written as separate code points) stay inside their word.
fn is_mark(ch: char) -> bool {
    matches!(ch as u32, 0x0300..=0x036f | 0x1ab0..=0x1aff | 0x1dc0..=0x1dff | 0x20d0..=0x20ff | 0xfe20..=0xfe2f)
}

/// Hashes a window of hashes held in a ring buffer, oldest first starting at `start`.
fn combine(ring: &[u64], start: usize) -> u64 {
    let mut h: u64 = 0x9e37_79b9_7f4a_7c15 ^ ring.len() as u64;
    for i in 0..ring.len() {
        let v = ring[(start + i) % ring.len()];
        h = (h.rotate_left(23) ^ v).wrapping_mul(0xff51_afd7_ed55_8ccd);
    }
    mix64(h)
}

/// The splitmix64 finaliser: a bijective avalanche of 64 bits.
pub(crate) fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The words read as they stand (lower-case ASCII between spaces) are the words the byte
        /// loop makes: with tabs for the spaces, only a last word can take the quick way.
        #[test]
        fn quick_words_are_the_byte_loops_words(
            text in "([a-z]{1,6}|[A-Z0-9'.é\u{301} -]{1,3}| ){0,20}",
            simhash in proptest::bool::ANY,
        ) {
            let opts = if simhash { FeatureOptions::simhash() } else { plain() };
            let tabbed = text.replace(' ', "\t");
            proptest::prop_assert_eq!(words(opts.clone(), &text), words(opts, &tabbed));
        }
    }

    fn words(opts: FeatureOptions, text: &str) -> Vec<String> {
        let f = Features::new(opts).unwrap();
        f.collect_with_text(text)
            .into_iter()
            .map(|(_, w)| w)
            .collect()
    }

    fn plain() -> FeatureOptions {
        FeatureOptions {
            stop_words: false,
            ..FeatureOptions::simhash()
        }
    }

    #[test]
    fn words_are_folded_and_stripped() {
        assert_eq!(
            words(plain(), "The Price: $1,299 (2024 model)!"),
            ["the", "price", "model"]
        );
        let keep_digits = FeatureOptions {
            strip_digits: false,
            ..plain()
        };
        assert_eq!(words(keep_digits, "Price 1,299"), ["price", "1", "299"]);
        let keep_punct = FeatureOptions {
            strip_punctuation: false,
            ..plain()
        };
        assert_eq!(words(keep_punct, "end. End"), ["end.", "end"]);
        let keep_case = FeatureOptions {
            lowercase: false,
            ..plain()
        };
        assert_eq!(words(keep_case, "Rust rust"), ["Rust", "rust"]);
    }

    #[test]
    fn unicode_words_are_folded() {
        assert_eq!(
            words(plain(), "ÉCOLE Straße, naïve"),
            ["école", "straße", "naïve"]
        );
        // A decomposed accent stays in its word.
        assert_eq!(words(plain(), "cafe\u{301} noir"), ["cafe\u{301}", "noir"]);
    }

    #[test]
    fn stop_words_are_dropped_when_asked() {
        assert_eq!(
            words(FeatureOptions::simhash(), "The cat and the hat"),
            ["cat", "hat"]
        );
    }

    #[test]
    fn word_ngrams_slide_one_word_at_a_time() {
        let opts = FeatureOptions {
            word_ngram: 3,
            ..plain()
        };
        assert_eq!(
            words(opts.clone(), "a b c d e"),
            ["a b c", "b c d", "c d e"]
        );
        // Shorter than one shingle: one feature of all words.
        assert_eq!(words(opts, "a b"), ["a b"]);
    }

    #[test]
    fn ngram_hash_depends_on_order() {
        let f = Features::new(FeatureOptions {
            word_ngram: 2,
            ..plain()
        })
        .unwrap();
        let mut a = Vec::new();
        f.for_each("x y", |h| a.push(h));
        let mut b = Vec::new();
        f.for_each("y x", |h| b.push(h));
        assert_ne!(a, b);
    }

    #[test]
    fn char_shingles_cover_the_normalised_text() {
        let opts = FeatureOptions {
            char_shingle: Some(3),
            ..plain()
        };
        assert_eq!(words(opts.clone(), "Ab, cd"), ["ab ", "b c", " cd"]);
        assert_eq!(words(opts, "東京都庁"), ["東京都", "京都庁"]);
    }

    #[test]
    fn empty_and_symbol_only_text_has_no_features() {
        let f = Features::new(FeatureOptions::simhash()).unwrap();
        let mut n = 0;
        f.for_each("", |_| n += 1);
        f.for_each(" \n\t -- 123 !!", |_| n += 1);
        assert_eq!(n, 0);
    }

    #[test]
    fn bad_widths_are_errors_naming_the_limit() {
        let err = Features::new(FeatureOptions {
            word_ngram: 0,
            ..plain()
        })
        .unwrap_err();
        assert!(err.to_string().contains("word_ngram = 0"), "{err}");
        let err = Features::new(FeatureOptions {
            char_shingle: Some(99),
            ..plain()
        })
        .unwrap_err();
        assert!(err.to_string().contains("between 1 and 32"), "{err}");
    }
}
