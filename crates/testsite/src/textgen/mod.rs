//! A deterministic generator of English-like text: words, sentences, paragraphs, titles, names.
//!
//! The text is word salad with the statistics of prose: words are drawn from a ranked
//! vocabulary of 4,000 words (about 150 English function words on top, then common English
//! words among pronounceable made-up ones) with a Zipf distribution, so that about half the
//! tokens are words like "the" and "of" and the rest spread over a long tail. Each generator
//! also has a small **topic** (two dozen mid-frequency words it favours), which is what makes
//! two texts from different seeds clearly different, as two articles on different subjects
//! are: the word sets of two 400-word texts overlap by well under a third (Jaccard), and
//! their SimHash fingerprints are far apart.
//!
//! Sentences run from 5 to 23 words, with occasional commas, numbers, questions and
//! exclamations; paragraphs hold 3 to 7 sentences. Output is plain ASCII text: letters,
//! digits, spaces and `, . ? !`, never markup characters.
//!
//! # Determinism
//!
//! The same seed gives the same sequence of calls the same results, on every platform and
//! every run (integer arithmetic only). Different seeds give unrelated texts.
//!
//! ```
//! use simcrawl_testsite::textgen::TextGen;
//!
//! let mut a = TextGen::new(42);
//! let mut b = TextGen::new(42);
//! assert_eq!(a.title(), b.title());
//! let article = a.article(300);
//! assert_eq!(article, b.article(300));
//! let words: usize = article.iter().map(|p| p.split_whitespace().count()).sum();
//! assert_eq!(words, 300);
//! ```

mod vocab;

use crate::rng::{Rng, label};
use vocab::{Vocabulary, vocabulary};

/// How many words a generator's topic holds.
const TOPIC_WORDS: usize = 24;
/// Per mille of words drawn from the topic instead of the whole vocabulary.
const TOPIC_SHARE: u32 = 220;
/// Per mille of words that are numbers.
const NUMBER_SHARE: u32 = 8;

/// A seeded generator of English-like text. See the [module documentation](self).
#[derive(Debug, Clone)]
pub struct TextGen {
    rng: Rng,
    /// Ranks of the words this generator favours.
    topic: Vec<usize>,
}

impl TextGen {
    /// A generator whose whole output is determined by `seed`.
    pub fn new(seed: u64) -> Self {
        let mut rng = Rng::derive(seed, label::TEXT, 0);
        let vocab = vocabulary();
        let lo = vocab.function_words + 50;
        let mut topic = Vec::with_capacity(TOPIC_WORDS);
        while topic.len() < TOPIC_WORDS {
            let rank = rng.range(lo, vocab.words.len() - 1);
            if !topic.contains(&rank) {
                topic.push(rank);
            }
        }
        TextGen { rng, topic }
    }

    /// One lower-case word (or, rarely, a number).
    pub fn word(&mut self) -> String {
        self.token(vocabulary()).to_string()
    }

    fn token<'v>(&mut self, vocab: &'v Vocabulary) -> std::borrow::Cow<'v, str> {
        if self.rng.chance(NUMBER_SHARE) {
            let n = if self.rng.chance(500) {
                self.rng.range(1850, 2030)
            } else {
                self.rng.range(2, 400)
            };
            return n.to_string().into();
        }
        let rank = if self.rng.chance(TOPIC_SHARE) {
            self.topic[self.rng.below(self.topic.len())]
        } else {
            vocab.zipf_rank(self.rng.next_u64())
        };
        vocab.words[rank].as_str().into()
    }

    /// The natural length of the next sentence, 5 to 23 words.
    fn sentence_len(&mut self) -> usize {
        5 + self.rng.below(10) + self.rng.below(10)
    }

    /// One sentence: capitalised, with occasional commas, ending in `.`, `?` or `!`.
    pub fn sentence(&mut self) -> String {
        let n = self.sentence_len();
        self.sentence_of(n)
    }

    /// A sentence of exactly `words` words (`words >= 1`).
    pub(crate) fn sentence_of(&mut self, words: usize) -> String {
        let vocab = vocabulary();
        let mut s = String::with_capacity(words * 7);
        let mut commas = 0;
        let mut previous = String::new();
        for i in 0..words.max(1) {
            let mut w = self.token(vocab);
            if w == previous {
                w = self.token(vocab);
            }
            if i == 0 {
                let mut chars = w.chars();
                if let Some(first) = chars.next() {
                    s.extend(first.to_uppercase());
                    s.push_str(chars.as_str());
                }
            } else {
                s.push(' ');
                s.push_str(&w);
            }
            if i >= 2 && i + 2 < words && commas < 2 && self.rng.chance(70) {
                s.push(',');
                commas += 1;
            }
            previous.clear();
            previous.push_str(&w);
        }
        s.push(match self.rng.below(100) {
            0..=2 => '!',
            3..=8 => '?',
            _ => '.',
        });
        s
    }

    /// The sentences of one paragraph (3 to 7).
    pub(crate) fn paragraph_sentences(&mut self) -> Vec<String> {
        let n = self.rng.range(3, 7);
        (0..n).map(|_| self.sentence()).collect()
    }

    /// One paragraph of 3 to 7 sentences.
    pub fn paragraph(&mut self) -> String {
        self.paragraph_sentences().join(" ")
    }

    /// The paragraphs of an article of exactly `words` words, as sentences.
    pub(crate) fn article_sentences(&mut self, words: usize) -> Vec<Vec<String>> {
        let mut paragraphs = Vec::new();
        let mut remaining = words;
        while remaining > 0 {
            let sentences = self.rng.range(3, 7);
            let mut paragraph = Vec::with_capacity(sentences);
            while paragraph.len() < sentences && remaining > 0 {
                let mut n = self.sentence_len();
                // Never leave a stub of fewer than four words for the last sentence.
                if n > remaining || remaining - n < 4 {
                    n = remaining;
                }
                paragraph.push(self.sentence_of(n));
                remaining -= n;
            }
            paragraphs.push(paragraph);
        }
        paragraphs
    }

    /// An article body of exactly `words` words (numbers count as words), as paragraphs.
    pub fn article(&mut self, words: usize) -> Vec<String> {
        self.article_sentences(words)
            .into_iter()
            .map(|p| p.join(" "))
            .collect()
    }

    /// A title of two to six words in title case, without a number.
    pub fn title(&mut self) -> String {
        let vocab = vocabulary();
        let n = self.rng.range(2, 6);
        let mut words: Vec<String> = Vec::with_capacity(n);
        while words.len() < n {
            let first_or_last = words.is_empty() || words.len() + 1 == n;
            let rank = if self.rng.chance(300) {
                self.topic[self.rng.below(self.topic.len())]
            } else {
                vocab.zipf_rank(self.rng.next_u64())
            };
            let small = rank < vocab.function_words;
            if small && (first_or_last || !matches!(rank, 0..=5)) {
                // Only "the", "of", "and", "to", "a", "in" inside a title, in lower case.
                continue;
            }
            let w = &vocab.words[rank];
            words.push(if small { w.clone() } else { capitalise(w) });
        }
        words.join(" ")
    }

    /// A person's name: two capitalised words from the less frequent half of the vocabulary.
    pub fn name(&mut self) -> String {
        let vocab = vocabulary();
        let half = vocab.words.len() / 2;
        let first = capitalise(&vocab.words[self.rng.range(half, vocab.words.len() - 1)]);
        let last = capitalise(&vocab.words[self.rng.range(half, vocab.words.len() - 1)]);
        format!("{first} {last}")
    }

    /// A uniform number in `lo..=hi`, from the same stream (for callers that build on the text).
    pub(crate) fn number(&mut self, lo: usize, hi: usize) -> usize {
        self.rng.range(lo, hi)
    }
}

fn capitalise(w: &str) -> String {
    let mut chars = w.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The set of lower-cased words of a text (punctuation and digits dropped): what the Jaccard
/// comparisons in this crate's tests and documentation are computed over.
pub fn word_set(text: &str) -> std::collections::HashSet<String> {
    text.split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| !w.is_empty())
        .map(|w| w.to_ascii_lowercase())
        .collect()
}

/// The Jaccard resemblance of the word sets of two texts: |A ∩ B| / |A ∪ B|, 1.0 for two
/// empty texts.
pub fn jaccard(a: &str, b: &str) -> f64 {
    let (a, b) = (word_set(a), word_set(b));
    let union = a.union(&b).count();
    if union == 0 {
        return 1.0;
    }
    a.intersection(&b).count() as f64 / union as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(paragraphs: &[String]) -> usize {
        paragraphs
            .iter()
            .map(|p| p.split_whitespace().count())
            .sum()
    }

    #[test]
    fn same_seed_same_text_different_seed_different_text() {
        let run = |seed| {
            let mut g = TextGen::new(seed);
            (g.title(), g.name(), g.paragraph(), g.article(250))
        };
        assert_eq!(run(11), run(11));
        assert_ne!(run(11), run(12));
    }

    #[test]
    fn article_has_exactly_the_requested_words() {
        let mut g = TextGen::new(5);
        for n in [1, 3, 4, 17, 100, 333, 650] {
            let a = g.article(n);
            assert_eq!(words(&a), n, "{a:?}");
            assert!(a.iter().all(|p| !p.is_empty()));
        }
        assert!(g.article(0).is_empty());
    }

    #[test]
    fn text_is_plain_ascii_without_markup() {
        let mut g = TextGen::new(8);
        let text = g.article(2000).join("\n") + &g.title() + &g.name();
        assert!(
            text.chars()
                .all(|c| c.is_ascii_alphanumeric() || " ,.?!\n".contains(c)),
            "{text}"
        );
        // Sentences start with a capital letter and end with punctuation.
        for p in g.article(500) {
            assert!(p.starts_with(|c: char| c.is_ascii_uppercase() || c.is_ascii_digit()));
            assert!(p.ends_with(['.', '?', '!']));
        }
    }

    #[test]
    fn different_articles_share_under_a_third_of_their_words() {
        let texts: Vec<String> = (0..12)
            .map(|seed| TextGen::new(seed).article(400).join(" "))
            .collect();
        let mut worst: f64 = 0.0;
        for i in 0..texts.len() {
            for j in i + 1..texts.len() {
                worst = worst.max(jaccard(&texts[i], &texts[j]));
            }
        }
        assert!(worst < 0.3, "worst Jaccard {worst}");
        // A text is of course identical to itself.
        assert_eq!(jaccard(&texts[0], &texts[0]), 1.0);
    }

    #[test]
    fn titles_and_names_are_title_case() {
        let mut g = TextGen::new(21);
        for _ in 0..50 {
            let t = g.title();
            let n = t.split(' ').count();
            assert!((2..=6).contains(&n), "{t}");
            assert!(t.starts_with(|c: char| c.is_ascii_uppercase()), "{t}");
            let name = g.name();
            assert_eq!(name.split(' ').count(), 2);
            assert!(
                name.split(' ')
                    .all(|w| w.starts_with(|c: char| c.is_ascii_uppercase()))
            );
        }
    }
}
