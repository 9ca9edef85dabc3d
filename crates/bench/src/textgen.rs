//! Synthetic English-like text: words from a Zipf-distributed vocabulary of pronounceable words, with
//! sentence punctuation, capitals and the odd number, so that the tokenizer does realistic work.

use crate::rng::Rng;

const SYLLABLES: &[&str] = &[
    "ba", "re", "ti", "on", "ka", "ser", "lo", "ven", "di", "mar", "pu", "sto", "el", "an", "gri",
    "fu", "the", "ing", "tion", "com", "pro", "ex", "in", "de",
];

/// A vocabulary of `size` distinct words, most frequent first.
fn vocabulary(size: usize, rng: &mut Rng) -> Vec<String> {
    let mut words = std::collections::BTreeSet::new();
    let mut out = Vec::with_capacity(size);
    while out.len() < size {
        let syllables = 1 + rng.below(3) as usize + usize::from(out.len() > 100);
        let word: String = (0..syllables)
            .map(|_| SYLLABLES[rng.below(SYLLABLES.len() as u64) as usize])
            .collect();
        if words.insert(word.clone()) {
            out.push(word);
        }
    }
    out
}

/// About `bytes` of text.
pub fn text(bytes: usize, seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let vocab = vocabulary(20_000, &mut rng);
    // Zipf with s = 1 over the vocabulary, by inverse transform on the harmonic numbers.
    let harmonic: Vec<f64> = vocab
        .iter()
        .enumerate()
        .scan(0.0, |h, (i, _)| {
            *h += 1.0 / (i + 1) as f64;
            Some(*h)
        })
        .collect();
    let total = *harmonic.last().unwrap_or(&1.0);
    let mut out = String::with_capacity(bytes + 64);
    let mut in_sentence = 0;
    while out.len() < bytes {
        let u = rng.unit() * total;
        let i = harmonic.partition_point(|&h| h < u).min(vocab.len() - 1);
        let word = &vocab[i];
        if in_sentence == 0 {
            let mut chars = word.chars();
            if let Some(first) = chars.next() {
                out.extend(first.to_uppercase());
                out.push_str(chars.as_str());
            }
        } else {
            out.push_str(word);
        }
        in_sentence += 1;
        if rng.below(40) == 0 {
            out.push_str(&format!(" {}", rng.below(10_000)));
        }
        if in_sentence > 8 && rng.below(10) == 0 {
            out.push_str(". ");
            in_sentence = 0;
        } else if rng.below(15) == 0 {
            out.push_str(", ");
        } else {
            out.push(' ');
        }
    }
    out
}
