//! A link's anchor text as the decider weighs it against the page a learned rule maps the link
//! onto. A rule skips the link's URL unfetched because the URL maps onto an indexed page; but when
//! the link's own words name something else than that page's title (a mirror whose table of
//! contents lists "Release notes and migration" where the original's page is "Configuring the
//! cache"), the copy host may have rewritten that page, and the decider fetches it to check the
//! rule now rather than at the rule's next scheduled check. Generic anchors ("next", "read more")
//! and short ones say nothing and are never a reason.
//!
//! The anchor is kept as [`AnchorWords`]: how many content words it has and a 15-bit hash of each
//! of its first four, in one `u64`, small enough for every link of a page to travel with it to the
//! other processes of a sharded crawl and to wait in the frontier's queue with its URL. The page is
//! read as its title and the beginning of its main text: an anchor that shares none of its words
//! with them names something else.
//!
//! ```
//! use simcrawl_crawl::anchor::AnchorWords;
//!
//! let text = "The cache keeps the pages it fetched for an hour.";
//! let toc = AnchorWords::of("Release notes and migration");
//! assert!(toc.contradicts("Configuring the cache", text));
//! assert!(!AnchorWords::of("How long pages stay cached").contradicts("Configuring the cache", text));
//! // Two words, or generic ones, say nothing.
//! assert!(!AnchorWords::of("Release notes").contradicts("Configuring the cache", text));
//! assert!(!AnchorWords::of("Read more here").contradicts("Configuring the cache", text));
//! ```

use std::collections::HashSet;
use xxhash_rust::xxh3::xxh3_64;

/// Content words an anchor needs before it can contradict a page.
pub const MIN_ANCHOR_WORDS: u32 = 3;

/// Words of a page's main text read, from its start.
const TEXT_WORDS: usize = 200;

/// Words whose hashes an anchor keeps.
const SLOTS: u32 = 4;

/// Words that name no page: navigation, calls to action, function words.
const GENERIC: &[&str] = &[
    "about", "all", "also", "and", "are", "back", "but", "can", "click", "com", "continue", "for",
    "from", "full", "here", "home", "how", "htm", "html", "http", "https", "into", "its", "link",
    "more", "net", "next", "not", "now", "org", "our", "page", "php", "previous", "prev", "read",
    "related", "see", "story", "that", "the", "this", "top", "view", "was", "what", "with", "www",
    "you", "your",
];

/// A link's anchor text, reduced to what the decider compares (see the module).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct AnchorWords(u64);

/// The content words of `text`: runs of letters and digits, lower-cased, of three characters or
/// more, not generic.
fn content_words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3)
        .map(str::to_lowercase)
        .filter(|w| !GENERIC.contains(&w.as_str()))
}

/// A word's 15-bit hash.
fn hash(word: &str) -> u64 {
    xxh3_64(word.as_bytes()) & 0x7fff
}

impl AnchorWords {
    /// The anchor `text` of a link.
    pub fn of(text: &str) -> AnchorWords {
        Self::of_link(text, "")
    }

    /// The anchor `text` of a link to `url`, without the words its URL spells: an anchor that
    /// repeats its URL (`readability-working`, `https://example.com/notes`) describes nothing.
    pub fn of_link(text: &str, url: &str) -> AnchorWords {
        // Most anchors are a word or two ("Next", "Home", a name): too few to say anything, and
        // told so without allocating.
        let long_words = text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.len() >= 3)
            .take(MIN_ANCHOR_WORDS as usize)
            .count();
        if long_words < MIN_ANCHOR_WORDS as usize {
            return AnchorWords(0);
        }
        let url = url.to_lowercase();
        let mut bits = 0u64;
        let mut count = 0u64;
        for word in content_words(text).filter(|w| !url.contains(w.as_str())) {
            if count < u64::from(SLOTS) {
                bits |= hash(&word) << (4 + 15 * count);
            }
            count += 1;
        }
        AnchorWords(bits | count.min(15))
    }

    /// As it travels between processes and waits in a queue.
    pub fn from_bits(bits: u64) -> AnchorWords {
        AnchorWords(bits)
    }

    /// As it travels between processes and waits in a queue.
    pub fn to_bits(self) -> u64 {
        self.0
    }

    /// How many content words the anchor has (at most 15; 0 for an anchor of fewer than
    /// [`MIN_ANCHOR_WORDS`] words of three letters).
    pub fn words(self) -> u32 {
        (self.0 & 0xf) as u32
    }

    /// Whether the anchor has enough words to say what it links to, and none of its first four
    /// is a word of the page's `title` or of the start of its main `text` (a page of no content
    /// word is never contradicted). Words are compared by 15-bit hashes: two words can look the
    /// same, never two of the same word different, so a contradiction is sometimes missed and
    /// never invented.
    pub fn contradicts(self, title: &str, text: &str) -> bool {
        if self.words() < MIN_ANCHOR_WORDS {
            return false;
        }
        let page: HashSet<u64> = content_words(title)
            .chain(content_words(text).take(TEXT_WORDS))
            .map(|w| hash(&w))
            .collect();
        if page.is_empty() {
            return false;
        }
        (0..self.words().min(SLOTS)).all(|i| !page.contains(&((self.0 >> (4 + 15 * i)) & 0x7fff)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TITLE: &str = "Doc 25: Configuring the Cache | Example docs";
    const TEXT: &str = "Every fetched page stays in the cache for an hour; the size of the cache is set \
                        in megabytes.";

    #[test]
    fn anchors_that_name_their_page_agree_with_it() {
        for anchor in [
            "Configuring the cache",
            "cache configuration and CACHE sizes",
            "How long a fetched page stays",
            "25. Configuring",
        ] {
            assert!(
                !AnchorWords::of(anchor).contradicts(TITLE, TEXT),
                "{anchor}"
            );
        }
        for anchor in ["Release notes and migration", "Migrating from version two"] {
            assert!(AnchorWords::of(anchor).contradicts(TITLE, TEXT), "{anchor}");
        }
    }

    #[test]
    fn short_generic_and_empty_say_nothing() {
        for anchor in [
            "",
            "Next",
            "Release notes",
            "Click here to read more",
            "» next page",
            "Read also: release notes",
        ] {
            assert!(
                !AnchorWords::of(anchor).contradicts(TITLE, TEXT),
                "{anchor}"
            );
        }
        assert!(!AnchorWords::of("Release notes and migration").contradicts("", ""));
        assert!(!AnchorWords::of("Release notes and migration").contradicts("The page", ""));
    }

    #[test]
    fn an_anchor_that_spells_its_url_says_nothing() {
        let slug = "http://h.test/readability-lifehacker-working.html";
        assert_eq!(
            AnchorWords::of_link("readability lifehacker working", slug).words(),
            0
        );
        assert_eq!(AnchorWords::of_link(slug, slug).words(), 0);
        let toc = AnchorWords::of_link(
            "Release notes and migration",
            "http://h.test/guide/topic-25.html",
        );
        assert!(toc.contradicts(TITLE, TEXT));
    }

    #[test]
    fn the_bits_travel_whole() {
        let a = AnchorWords::of("Release notes and migration, from two to three");
        assert_eq!(AnchorWords::from_bits(a.to_bits()), a);
        assert_eq!(a.words(), 5);
        assert!(a.contradicts(TITLE, TEXT));
        // A word past the fourth is not kept, and cannot agree.
        assert!(AnchorWords::of("Release notes migration versions cache").contradicts(TITLE, TEXT));
    }
}
