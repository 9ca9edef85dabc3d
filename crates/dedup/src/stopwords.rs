//! A small English stop-word list, looked up by the hash of the lowercased word.

use xxhash_rust::xxh3::xxh3_64;

/// The words: function words that every English text is full of and that say nothing about which
/// text it is. Kept short on purpose: content words must never be dropped.
const ENGLISH: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "even",
    "few",
    "for",
    "from",
    "further",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "me",
    "more",
    "most",
    "much",
    "must",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "same",
    "she",
    "should",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "upon",
    "us",
    "very",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
    "s",
    "t",
    "d",
    "ll",
    "m",
    "re",
    "ve",
    "don",
    "didn",
    "doesn",
    "isn",
    "wasn",
    "aren",
    "won",
    "shall",
    "may",
    "might",
    "yet",
    "via",
    "per",
    "etc",
];

/// An open-addressing set of word hashes. 512 slots for ~170 words keeps probes short.
#[derive(Debug, Clone)]
pub(crate) struct StopWords {
    slots: Box<[u64; 512]>,
}

impl StopWords {
    pub(crate) fn english() -> Self {
        let mut slots = Box::new([0u64; 512]);
        for word in ENGLISH {
            // Zero marks an empty slot; no real xxh3 of a word is zero in this list.
            let h = xxh3_64(word.as_bytes());
            let mut i = (h as usize) & 511;
            while slots[i] != 0 && slots[i] != h {
                i = (i + 1) & 511;
            }
            slots[i] = h;
        }
        StopWords { slots }
    }

    /// Whether the word with this hash is a stop word.
    #[inline]
    pub(crate) fn contains(&self, h: u64) -> bool {
        let mut i = (h as usize) & 511;
        loop {
            let slot = self.slots[i];
            if slot == h {
                return h != 0;
            }
            if slot == 0 {
                return false;
            }
            i = (i + 1) & 511;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_word_is_found_and_content_words_are_not() {
        let stop = StopWords::english();
        for word in ENGLISH {
            assert!(stop.contains(xxh3_64(word.as_bytes())), "{word}");
        }
        for word in ["crawler", "mirror", "page", "rust", "thee"] {
            assert!(!stop.contains(xxh3_64(word.as_bytes())), "{word}");
        }
    }
}
