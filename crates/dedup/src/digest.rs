//! Exact-duplicate fingerprints: 128-bit xxh3 digests for the crawl's own lookups, SHA-256 where a
//! fingerprint is published (exports, reports), because other tools can recompute it.

use sha2::{Digest as _, Sha256};
use std::fmt;
use xxhash_rust::xxh3::{Xxh3, xxh3_128};

/// A 128-bit xxh3 digest. Equal digests mean equal input (a collision needs ~2^64 pages).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Digest128(pub u128);

impl Digest128 {
    /// The digest of raw bytes, such as a response body.
    pub fn of_bytes(bytes: &[u8]) -> Self {
        Digest128(xxh3_128(bytes))
    }

    /// The digest of a text after whitespace normalisation: runs of Unicode white space become one
    /// space and leading and trailing space is ignored, so re-wrapped or re-indented copies of a text
    /// get the same digest. Case and everything else are kept: use it on text that the extractor has
    /// already normalised (for example with digits stripped).
    pub fn of_text(text: &str) -> Self {
        let bytes = text.as_bytes();
        // Text normalised already (words of ASCII between single spaces) is its own
        // normalisation: hashed in one go.
        let plain = bytes.is_ascii()
            && bytes.first() != Some(&b' ')
            && bytes.last() != Some(&b' ')
            && !bytes
                .iter()
                .any(|&b| b != b' ' && (b.is_ascii_whitespace() || b == 0x0b))
            && !bytes.windows(2).any(|w| w == b"  ");
        if plain {
            return Digest128(xxh3_128(bytes));
        }
        Self::of_words(text)
    }

    /// [`Digest128::of_text`] word by word, for any text.
    fn of_words(text: &str) -> Self {
        let mut hasher = Xxh3::new();
        let mut first = true;
        for word in text.split_whitespace() {
            if !first {
                hasher.update(b" ");
            }
            hasher.update(word.as_bytes());
            first = false;
        }
        Digest128(hasher.digest128())
    }

    /// The digest as 16 big-endian bytes, the form stored on disk.
    pub fn to_bytes(self) -> [u8; 16] {
        self.0.to_be_bytes()
    }

    /// The digest from its 16-byte form.
    pub fn from_bytes(bytes: [u8; 16]) -> Self {
        Digest128(u128::from_be_bytes(bytes))
    }
}

impl fmt::Display for Digest128 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

impl fmt::Debug for Digest128 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Digest128({self})")
    }
}

/// The SHA-256 of some bytes, as 64 lowercase hex digits: the published, cryptographic fingerprint.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for byte in digest.iter() {
        out.push(char::from(HEX[usize::from(byte >> 4)]));
        out.push(char::from(HEX[usize::from(byte & 0x0f)]));
    }
    out
}

const HEX: &[u8; 16] = b"0123456789abcdef";

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Text hashed in one go gets the digest it gets word by word.
        #[test]
        fn plain_text_gets_its_words_digest(
            text in "([a-z0-9']{1,5}| {1,2}|[\t\n\u{b}\u{a0}\u{3000}é]){0,12}",
        ) {
            proptest::prop_assert_eq!(Digest128::of_text(&text), Digest128::of_words(&text));
        }
    }

    #[test]
    fn text_digest_ignores_whitespace_layout_only() {
        let a = Digest128::of_text("  The quick\n\tbrown   fox ");
        let b = Digest128::of_text("The quick brown fox");
        assert_eq!(a, b);
        assert_ne!(a, Digest128::of_text("The quick brown fox."));
        assert_ne!(a, Digest128::of_text("the quick brown fox"));
        // Word boundaries matter: gluing two words is a different text.
        assert_ne!(
            Digest128::of_text("ab c"),
            Digest128::of_text("a bc"),
            "word boundaries must be part of the digest"
        );
    }

    #[test]
    fn byte_digest_round_trips_through_bytes() {
        let d = Digest128::of_bytes(b"hello");
        assert_eq!(Digest128::from_bytes(d.to_bytes()), d);
        assert_eq!(d.to_string().len(), 32);
        assert_ne!(d, Digest128::of_bytes(b"hello "));
    }

    #[test]
    fn sha256_matches_known_vectors() {
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
