//! The one error type of this crate: a bad parameter. Verdicts such as "near-duplicate at distance 2" are
//! values ([`crate::Match`]), never errors.

use thiserror::Error;

/// The largest Hamming distance the fingerprint index accepts. Beyond 8 bits out of 64 the permuted-table
/// scheme needs so many tables, or scans so many candidates, that a brute-force scan is the honest answer.
pub const MAX_K: u32 = 8;

/// A parameter that this crate cannot work with. Each variant names the parameter and its limit.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum DedupError {
    /// The Hamming distance threshold is above [`MAX_K`].
    #[error(
        "k = {k} is too large: the near-duplicate index supports Hamming distances 0 to {max} (of 64 bits)"
    )]
    KTooLarge {
        /// The k that was asked for.
        k: u32,
        /// The largest k supported, [`MAX_K`].
        max: u32,
    },
    /// A query asked for a larger distance than the index was planned for.
    #[error(
        "k = {asked} is larger than the k = {planned} this index was planned for; rebuild it with a larger k"
    )]
    KAbovePlan {
        /// The k of the query.
        asked: u32,
        /// The k the index was built for.
        planned: u32,
    },
    /// A word n-gram or character shingle width of zero, or one too large to be useful.
    #[error("{what} = {value} is out of range: it must be between 1 and {max}")]
    Width {
        /// Which width: `word_ngram` or `char_shingle`.
        what: &'static str,
        /// The value given.
        value: usize,
        /// The largest value accepted.
        max: usize,
    },
    /// A MinHash sketch size of zero or an LSH banding that does not fit in the sketch.
    #[error("MinHash parameters are inconsistent: {0}")]
    MinHash(String),
    /// Two MinHash sketches from different hashers cannot be compared.
    #[error(
        "MinHash sketches are incompatible: one has {left} values from seed {left_seed:#x}, the other {right} values from seed {right_seed:#x}"
    )]
    IncompatibleSketches {
        /// Length of the left sketch.
        left: usize,
        /// Seed of the left sketch's hasher.
        left_seed: u64,
        /// Length of the right sketch.
        right: usize,
        /// Seed of the right sketch's hasher.
        right_seed: u64,
    },
    /// Bytes that do not decode as the serialised form they claim to be.
    #[error("cannot decode {what}: {reason}")]
    Decode {
        /// What was being decoded.
        what: &'static str,
        /// Why it failed.
        reason: String,
    },
}

/// Checks a Hamming distance threshold against [`MAX_K`].
pub fn check_k(k: u32) -> Result<(), DedupError> {
    if k > MAX_K {
        Err(DedupError::KTooLarge { k, max: MAX_K })
    } else {
        Ok(())
    }
}
