//! The built-in vocabulary: English function words, common English content words and
//! pronounceable made-up words, ranked for a Zipf distribution.
//!
//! The vocabulary is the same for every seed (it is built once, from a fixed seed): a seed picks
//! which words a text uses, not which language it is written in.

use std::collections::HashSet;
use std::sync::OnceLock;

use crate::rng::{Rng, label};

/// How many words the vocabulary holds.
pub(crate) const SIZE: usize = 4000;

/// The most frequent words of English, most frequent first: they take the top ranks.
const FUNCTION_WORDS: &str = "\
    the of and to a in is that it was for on are as with by at this from be or have an they \
    which one you were her all she there would their we him been has when who will more no if \
    out so said what up its about into than them can only other new some could time these two \
    may then do first any my now such like our over man me even most made after also did many \
    before must through back years where much your way well down should because each just \
    those people how too little state good very make world still own see men work long get \
    here between both life being under never day same another know while last might us great \
    old year off come since against go came right used take three";

/// Common English content words: two in three of the ranks right below the function words.
const CONTENT_WORDS: &str = "\
    water river harbour stone bridge market village winter summer garden morning evening \
    letter window engine island forest valley mountain station library council teacher farmer \
    doctor sailor painter archive record season weather harvest festival journey history \
    museum theatre railway factory workshop kitchen bread copper silver timber cotton paper \
    signal machine voyage lantern compass anchor canal meadow orchard cellar tower castle \
    chapel street square corner border coast shore cliff storm thunder rain snow frost wind \
    cloud sun moon star light shadow colour music song story poem novel chapter page word \
    voice question answer reason method measure number figure pattern surface edge centre \
    circle line field road path gate door wall roof floor table chair glass bottle basket \
    wheel hammer needle thread rope knot sail boat ship cargo trade price coin debt profit \
    wage labour guild craft skill habit custom law court judge witness claim treaty empire \
    province county parish harbourmaster ferry lighthouse tide current depth channel reef sand \
    clay salt iron coal steam smoke fire ash oven kettle lamp candle clock bell hour minute \
    week month decade century age era origin source branch root seed leaf flower grain wheat \
    barley apple pear plum cherry honey milk cheese butter wine beer tea coffee sugar spice \
    pepper recipe dish meal supper guest host friend neighbour stranger family child mother \
    father sister brother cousin uncle widow merchant clerk porter miner weaver baker smith \
    carpenter mason builder surveyor engineer scholar student writer reader editor printer \
    press journal report survey study theory model sample result error rule limit scale weight \
    balance speed distance height width length volume pressure heat cold dust quiet noise echo \
    memory dream hope fear doubt trust promise secret mystery puzzle riddle map chart plan \
    design draft sketch careful narrow broad steep shallow distant ancient modern early late \
    quick slow bright dark warm heavy simple strange common rare public private local foreign \
    northern southern eastern western open closed hidden plain rough smooth sharp gentle build \
    carry follow gather close remember forget travel return describe explain discover change \
    repair support collect divide observe publish arrive depart wander settle";

/// A ranked vocabulary with its cumulative Zipf weights.
pub(crate) struct Vocabulary {
    /// Words by rank, most frequent first.
    pub(crate) words: Vec<String>,
    /// `cumulative[r]` is the sum of the weights of ranks `0..=r`.
    pub(crate) cumulative: Vec<u64>,
    /// How many of the top ranks are function words.
    pub(crate) function_words: usize,
}

/// The vocabulary, built on first use.
pub(crate) fn vocabulary() -> &'static Vocabulary {
    static VOCAB: OnceLock<Vocabulary> = OnceLock::new();
    VOCAB.get_or_init(build)
}

const ONSETS: &[&str] = &[
    "b", "br", "c", "ch", "cl", "d", "dr", "f", "fl", "g", "gr", "h", "j", "k", "l", "m", "n", "p",
    "pl", "pr", "r", "s", "sh", "sk", "st", "t", "th", "tr", "v", "w", "z", "",
];
const VOWELS: &[&str] = &["a", "e", "i", "o", "u", "ai", "ea", "ou", "io", "ee", "y"];
const CODAS: &[&str] = &[
    "", "", "", "n", "r", "s", "l", "m", "nd", "st", "th", "ck", "x", "ng",
];

/// A pronounceable made-up word of two or three syllables.
fn invented_word(rng: &mut Rng) -> String {
    let syllables = if rng.chance(200) { 3 } else { 2 };
    let mut w = String::new();
    for i in 0..syllables {
        let onset = *rng.pick(ONSETS);
        // A syllable after the first starts with a consonant, so vowels do not pile up.
        w.push_str(if i > 0 && onset.is_empty() {
            "l"
        } else {
            onset
        });
        let vowel = *rng.pick::<&str>(VOWELS);
        w.push_str(vowel);
        if i + 1 == syllables || rng.chance(150) {
            let coda = *rng.pick::<&str>(CODAS);
            w.push_str(coda);
        }
    }
    w
}

fn build() -> Vocabulary {
    let mut rng = Rng::derive(0x5EED_70CA, label::VOCABULARY, 0);
    let mut taken: HashSet<String> = HashSet::new();
    let mut words: Vec<String> = Vec::with_capacity(SIZE);
    for w in FUNCTION_WORDS.split_whitespace() {
        if taken.insert(w.to_string()) {
            words.push(w.to_string());
        }
    }
    let function_words = words.len();
    let mut content = CONTENT_WORDS.split_whitespace();
    while words.len() < SIZE {
        // Two real content words in three, until they run out; the rest are invented.
        let real = if !words.len().is_multiple_of(3) {
            content.by_ref().find(|w| !taken.contains(*w))
        } else {
            None
        };
        let word = match real {
            Some(w) => w.to_string(),
            None => loop {
                let w = invented_word(&mut rng);
                if w.len() >= 3 && !taken.contains(&w) {
                    break w;
                }
            },
        };
        taken.insert(word.clone());
        words.push(word);
    }
    // Zipf-Mandelbrot with s = 1 and q = 2.7, in integers so every platform agrees.
    let mut cumulative = Vec::with_capacity(words.len());
    let mut total = 0u64;
    for rank in 0..words.len() as u64 {
        total += (1u64 << 40) * 10 / (10 * rank + 27);
        cumulative.push(total);
    }
    Vocabulary {
        words,
        cumulative,
        function_words,
    }
}

impl Vocabulary {
    /// The rank drawn by the Zipf distribution for the random value `r`.
    pub(crate) fn zipf_rank(&self, r: u64) -> usize {
        let total = *self.cumulative.last().unwrap_or(&1);
        let x = r % total;
        self.cumulative.partition_point(|&c| c <= x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vocabulary_is_full_unique_and_lowercase_letters() {
        let v = vocabulary();
        assert_eq!(v.words.len(), SIZE);
        let unique: HashSet<&String> = v.words.iter().collect();
        assert_eq!(unique.len(), SIZE);
        assert!(
            v.words
                .iter()
                .all(|w| w.bytes().all(|b| b.is_ascii_lowercase()))
        );
        assert_eq!(v.words[0], "the");
        assert_eq!(v.function_words, FUNCTION_WORDS.split_whitespace().count());
        assert!(v.words.iter().any(|w| w == "lighthouse"));
    }

    #[test]
    fn zipf_favours_top_ranks() {
        let v = vocabulary();
        let mut rng = Rng::new(3);
        let mut top = 0;
        let n = 20_000;
        for _ in 0..n {
            let rank = v.zipf_rank(rng.next_u64());
            assert!(rank < SIZE);
            if rank < v.function_words {
                top += 1;
            }
        }
        // About half of all tokens are function words, as in English.
        assert!(top > n * 2 / 5 && top < n * 3 / 5, "{top} of {n}");
    }
}
