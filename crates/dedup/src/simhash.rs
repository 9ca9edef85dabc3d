//! Charikar's SimHash: a 64-bit fingerprint in which similar documents differ in few bits.
//!
//! Each feature is hashed to 64 bits. For every bit position, the weights of the features whose hash has
//! that bit set are added and the weights of the others subtracted; the fingerprint has a 1 wherever the
//! sum is positive. Two documents that share most of their weight agree on most signs, so their
//! fingerprints are a small Hamming distance apart.
//!
//! The hot loop counts set bits rather than adding signed weights: with unit weights, the sum at bit i is
//! `2 * ones_i - n`. Ones are counted eight bit positions at a time in the bytes of a `u64` (a lookup
//! spreads each byte of the hash over eight counter bytes), and spilled to 32-bit counters every 255
//! features before a byte can overflow.

use crate::error::DedupError;
use crate::features::{FeatureOptions, Features};
use std::fmt;

/// A 64-bit SimHash fingerprint.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct SimHash(pub u64);

impl SimHash {
    /// The Hamming distance to another fingerprint: the number of bits in which they differ.
    #[inline]
    pub fn distance(self, other: SimHash) -> u32 {
        (self.0 ^ other.0).count_ones()
    }

    /// Builds a fingerprint from features with explicit weights, for callers with their own weighting
    /// (for example TF-IDF). A feature may appear several times; its weights add up.
    pub fn from_weighted(features: impl IntoIterator<Item = (u64, f64)>) -> SimHash {
        let mut sums = [0f64; 64];
        for (h, w) in features {
            for (i, sum) in sums.iter_mut().enumerate() {
                if (h >> i) & 1 == 1 {
                    *sum += w;
                } else {
                    *sum -= w;
                }
            }
        }
        let mut fp = 0u64;
        for (i, sum) in sums.iter().enumerate() {
            if *sum > 0.0 {
                fp |= 1 << i;
            }
        }
        SimHash(fp)
    }

    /// Parses 16 hex digits, the form printed by `Display`.
    pub fn from_hex(hex: &str) -> Result<SimHash, DedupError> {
        if hex.len() != 16 {
            return Err(DedupError::Decode {
                what: "SimHash",
                reason: format!("expected 16 hex digits, got {:?}", hex),
            });
        }
        u64::from_str_radix(hex, 16)
            .map(SimHash)
            .map_err(|e| DedupError::Decode {
                what: "SimHash",
                reason: format!("{hex:?}: {e}"),
            })
    }
}

impl fmt::Display for SimHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

impl fmt::Debug for SimHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SimHash({self})")
    }
}

/// Computes SimHash fingerprints of texts with a fixed choice of features.
#[derive(Debug, Clone)]
pub struct SimHasher {
    features: Features,
}

/// `SPREAD[b]` has byte j equal to bit j of `b`: adding it to a `u64` counts eight bit positions at once.
static SPREAD: [u64; 256] = spread_table();

const fn spread_table() -> [u64; 256] {
    let mut table = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let mut v = 0u64;
        let mut j = 0;
        while j < 8 {
            if (b >> j) & 1 == 1 {
                v |= 1 << (8 * j);
            }
            j += 1;
        }
        table[b] = v;
        b += 1;
    }
    table
}

/// Counts, for each of the 64 bit positions, how many feature hashes have that bit set.
struct BitCounter {
    /// Byte lanes: `packed[i]` byte j counts bit `8 * i + j`; at most 255 features before a spill.
    packed: [u64; 8],
    pending: u32,
    ones: [u32; 64],
    total: u64,
}

impl Default for BitCounter {
    fn default() -> Self {
        BitCounter {
            packed: [0; 8],
            pending: 0,
            ones: [0; 64],
            total: 0,
        }
    }
}

impl BitCounter {
    #[inline(always)]
    fn add(&mut self, h: u64) {
        for (i, lane) in self.packed.iter_mut().enumerate() {
            *lane += SPREAD[((h >> (8 * i)) & 0xff) as usize];
        }
        self.pending += 1;
        if self.pending == 255 {
            self.spill();
        }
    }

    fn spill(&mut self) {
        for (i, lane) in self.packed.iter_mut().enumerate() {
            for j in 0..8 {
                self.ones[8 * i + j] += ((*lane >> (8 * j)) & 0xff) as u32;
            }
            *lane = 0;
        }
        self.total += u64::from(self.pending);
        self.pending = 0;
    }

    fn counts(mut self) -> SimCounts {
        self.spill();
        SimCounts {
            ones: self.ones,
            total: self.total,
        }
    }
}

/// What a SimHash is made from: for each bit, how many of the text's features have it set, and
/// how many features there are. With single words as features ([`SimHasher::counts_add_up`]),
/// the counts of two texts add up to those of the two texts one after the other.
///
/// ```
/// use simcrawl_dedup::SimHasher;
///
/// let simhasher = SimHasher::default();
/// let mut counts = simhasher.counts("a tide table lists the times");
/// counts.add(&simhasher.counts("and heights of high and low water"));
/// assert!(simhasher.counts_add_up());
/// assert_eq!(
///     counts.fingerprint(),
///     simhasher.fingerprint("a tide table lists the times and heights of high and low water")
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimCounts {
    ones: [u32; 64],
    total: u64,
}

impl SimCounts {
    /// Adds `other`'s counts.
    pub fn add(&mut self, other: &SimCounts) {
        for (mine, theirs) in self.ones.iter_mut().zip(&other.ones) {
            *mine += theirs;
        }
        self.total += other.total;
    }

    /// The fingerprint of these counts.
    pub fn fingerprint(&self) -> SimHash {
        let mut fp = 0u64;
        for (i, ones) in self.ones.iter().enumerate() {
            // Sum of +1/-1 over features is 2*ones - total; the bit is set when it is positive.
            if 2 * u64::from(*ones) > self.total {
                fp |= 1 << i;
            }
        }
        SimHash(fp)
    }
}

impl SimHasher {
    /// A hasher with the given feature options.
    pub fn new(options: FeatureOptions) -> Result<Self, DedupError> {
        Ok(SimHasher {
            features: Features::new(options)?,
        })
    }

    /// The feature extractor in use.
    pub fn features(&self) -> &Features {
        &self.features
    }

    /// The fingerprint of a text. A text without features (empty, or only stop words and digits) gets
    /// fingerprint 0.
    pub fn fingerprint(&self, text: &str) -> SimHash {
        self.counts(text).fingerprint()
    }

    /// `(self.fingerprint(text), minhasher.sketch(text))`, in one pass over the text's words when
    /// the two hashers split words alike (the crawl's do: single words without stop words for
    /// SimHash, 3-word shingles of every word for MinHash), else in two.
    ///
    /// ```
    /// use simcrawl_dedup::{MinHasher, SimHasher};
    ///
    /// let (simhasher, minhasher) = (SimHasher::default(), MinHasher::default());
    /// let text = "a tide table lists the times and heights of high and low water";
    /// let (simhash, sketch) = simhasher.fingerprint_and_sketch(&minhasher, text);
    /// assert_eq!(simhash, simhasher.fingerprint(text));
    /// assert_eq!(sketch, minhasher.sketch(text));
    /// ```
    pub fn fingerprint_and_sketch(
        &self,
        minhasher: &crate::MinHasher,
        text: &str,
    ) -> (SimHash, crate::Sketch) {
        let (simhash, sketch, _) = self.fingerprint_sketch_and_counts(minhasher, text);
        (simhash, sketch)
    }

    /// The counts the fingerprint of a text is made from.
    pub fn counts(&self, text: &str) -> SimCounts {
        let mut counter = BitCounter::default();
        self.features.for_each(text, |h| counter.add(h));
        counter.counts()
    }

    /// Whether the [`SimCounts`] of texts add up to those of the texts joined by a space: the
    /// features are single words.
    pub fn counts_add_up(&self) -> bool {
        let options = self.features.options();
        options.word_ngram == 1 && options.char_shingle.is_none()
    }

    /// [`SimHasher::fingerprint_and_sketch`], and the counts of the fingerprint.
    pub fn fingerprint_sketch_and_counts(
        &self,
        minhasher: &crate::MinHasher,
        text: &str,
    ) -> (SimHash, crate::Sketch, SimCounts) {
        let words = minhasher.features();
        let one_pass = self.features.options().word_ngram == 1
            && !words.options().stop_words
            && self.features.splits_like(words);
        if !one_pass {
            let counts = self.counts(text);
            return (counts.fingerprint(), minhasher.sketch(text), counts);
        }
        let mut counter = BitCounter::default();
        let mut folded = Vec::with_capacity(text.len() / 6);
        words.for_each_with_words(
            text,
            |shingle| folded.push(crate::minhash::fold(shingle)),
            |word| {
                if !self.features.is_stop(word) {
                    counter.add(word);
                }
            },
        );
        let counts = counter.counts();
        (
            counts.fingerprint(),
            minhasher.sketch_folded(&folded),
            counts,
        )
    }

    /// The fingerprint of a text together with its feature count.
    pub fn fingerprint_counted(&self, text: &str) -> (SimHash, u64) {
        let counts = self.counts(text);
        (counts.fingerprint(), counts.total)
    }
}

impl Default for SimHasher {
    fn default() -> Self {
        SimHasher {
            features: Features::new(FeatureOptions::simhash())
                .expect("the default feature options are valid"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_counter_equals_signed_sum() {
        // Compare the fast counter with the textbook definition on many features (several spills).
        let mut state = 1u64;
        let mut hashes = Vec::new();
        for _ in 0..1000 {
            state = crate::features::mix64(state.wrapping_add(0x9e37_79b9_7f4a_7c15));
            hashes.push(state);
        }
        let mut counter = BitCounter::default();
        for h in &hashes {
            counter.add(*h);
        }
        let fast = counter.counts().fingerprint();
        let slow = SimHash::from_weighted(hashes.iter().map(|h| (*h, 1.0)));
        assert_eq!(fast, slow);
    }

    /// A deterministic pseudo-text of `n` words drawn from a 5,000-word vocabulary of letter-only
    /// words (digits would be stripped).
    fn text(seed: u64, n: usize) -> String {
        let mut state = seed;
        (0..n)
            .map(|_| {
                state = crate::features::mix64(state.wrapping_add(1));
                let mut word_no = state % 5000;
                let mut word = String::from("w");
                while word_no > 0 {
                    word.push(char::from(b'a' + (word_no % 26) as u8));
                    word_no /= 26;
                }
                word
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn similar_texts_are_close_and_different_texts_far() {
        let hasher = SimHasher::default();
        let base = "Manku, Jain and Das Sarma showed how to find all fingerprints within a small \
            Hamming distance of a query among billions, by keeping several permuted copies of a sorted \
            table, each probed on a different block of bits. A crawler can then ask, for every page it \
            fetches, whether it has already indexed a near copy of it.";
        let other = "Sled is an embedded database written in Rust. It keeps named trees of byte keys \
            and byte values, flushes them to a log on disk, and recovers a consistent prefix after a \
            crash. Its cache is measured in bytes, and its memory use may exceed it with large batches.";
        let a = hasher.fingerprint(base);
        let short_edit = a.distance(hasher.fingerprint(&base.replace("billions", "eight billion")));
        let stranger = a.distance(hasher.fingerprint(other));
        // About 35 features: one edit moves several bits, a different text about half of them.
        assert!(short_edit < 12 && stranger > 20, "{short_edit} {stranger}");
        assert_eq!(a, hasher.fingerprint(&base.to_uppercase()));

        // A page-sized text (400 words): a two-word edit stays within k = 3.
        let long = text(1, 400);
        let mut words: Vec<&str> = long.split(' ').collect();
        words[100] = "replaced";
        words[300] = "another";
        let edited = words.join(" ");
        let d = hasher
            .fingerprint(&long)
            .distance(hasher.fingerprint(&edited));
        assert!(d <= 3, "{d}");
        let d = hasher
            .fingerprint(&long)
            .distance(hasher.fingerprint(&text(2, 400)));
        assert!(d > 10, "{d}");
    }

    #[test]
    fn hex_round_trips() {
        let fp = SimHash(0x0123_4567_89ab_cdef);
        assert_eq!(fp.to_string(), "0123456789abcdef");
        assert_eq!(SimHash::from_hex("0123456789abcdef").unwrap(), fp);
        assert!(SimHash::from_hex("xyz").is_err());
        assert!(SimHash::from_hex("0123456789abcdeg").is_err());
    }

    #[test]
    fn featureless_text_is_zero() {
        assert_eq!(SimHasher::default().fingerprint(""), SimHash(0));
        assert_eq!(SimHasher::default().fingerprint("the and 42"), SimHash(0));
    }

    mod one_pass {
        use super::*;
        use crate::{FeatureOptions, MinHasher};
        use proptest::prelude::*;

        fn keep_digits(options: FeatureOptions) -> FeatureOptions {
            FeatureOptions {
                strip_digits: false,
                ..options
            }
        }

        proptest! {
            #[test]
            fn one_pass_gives_both_fingerprints(
                words in prop::collection::vec(
                    prop::sample::select(vec![
                        "the", "and", "of", "Tide", "table", "x86_64", "2.2.25", "don't",
                        "Straße", "東京", "e\u{301}t\u{e9}", "42", "-", "a", "\n", "  ",
                    ]),
                    0..30,
                ),
                text in any::<String>(),
                digits: bool,
            ) {
                let (simhasher, minhasher) = if digits {
                    (
                        SimHasher::new(keep_digits(FeatureOptions::simhash())).unwrap(),
                        MinHasher::new(64, keep_digits(FeatureOptions::minhash()), 7).unwrap(),
                    )
                } else {
                    (SimHasher::default(), MinHasher::default())
                };
                for text in [words.join(" "), text] {
                    let (simhash, sketch) = simhasher.fingerprint_and_sketch(&minhasher, &text);
                    prop_assert_eq!(simhash, simhasher.fingerprint(&text));
                    prop_assert_eq!(sketch, minhasher.sketch(&text));
                }
            }
        }

        #[test]
        fn hashers_that_split_words_otherwise_take_two_passes() {
            let simhasher = SimHasher::default();
            let minhasher = MinHasher::new(64, keep_digits(FeatureOptions::minhash()), 7).unwrap();
            let text = "Django 2.2.25 fixes 3 bugs in the ORM";
            let (simhash, sketch) = simhasher.fingerprint_and_sketch(&minhasher, text);
            assert_eq!(simhash, simhasher.fingerprint(text));
            assert_eq!(sketch, minhasher.sketch(text));
        }
    }
}
