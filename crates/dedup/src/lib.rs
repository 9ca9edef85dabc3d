//! simcrawl-dedup decides "same page or not": exact digests, SimHash with an index that finds every
//! fingerprint within Hamming distance k, MinHash sketches with LSH and super-shingles, and union-find
//! clusters.
//!
//! It is pure and in memory: no I/O, no URLs, no store. The crawl pipeline feeds it text and decides
//! what to do with its answers; the store persists the fingerprints and sketches in their byte forms, and
//! the index is rebuilt from them at start.
//!
//! # Layout
//! - [`digest`]: 128-bit xxh3 digests of bytes and of whitespace-normalised text; SHA-256 for published
//!   fingerprints.
//! - [`features`]: text to feature hashes, with the modelling choices (case, punctuation, digits, stop
//!   words, word n-grams, character shingles) as options.
//! - [`simhash`]: Charikar's 64-bit SimHash over weighted features.
//! - [`index`]: Manku et al.'s permuted tables, with a planner, incremental inserts into sorted runs,
//!   removal, and a brute-force reference.
//! - [`minhash`]: MinHash sketches from one feature hash, Jaccard and containment estimates,
//!   super-shingles and the sorted-list pair finder.
//! - [`lsh`]: a b x r banding index over sketches.
//! - [`cluster`]: union-find for single-link clusters.
//!
//! # Example
//! ```
//! use simcrawl_dedup::{MinHasher, SimHashIndex, SimHasher};
//!
//! let simhash = SimHasher::default();
//! let minhash = MinHasher::default();
//! let original = "Rendered 2026-11-22 10:31. The permuted tables of Manku, Jain and Das Sarma find \
//!     all fingerprints within a few bits of a query among billions of pages.";
//! // The same page, rendered later and re-wrapped: digits are stripped before fingerprinting.
//! let copy = "Rendered 2026-11-23   08:02.\nThe permuted tables of Manku, Jain and Das Sarma find \
//!     all fingerprints within a few bits of a query among billions of pages.";
//! let other = "Sled keeps named trees of byte keys and values and recovers a prefix after a crash.";
//!
//! // Index the original under id 1, then ask about the copy and about another text.
//! let mut index = SimHashIndex::new(3, 1_000_000)?;
//! index.insert(simhash.fingerprint(original), 1);
//! let found = index.query(simhash.fingerprint(copy));
//! assert_eq!(found.len(), 1);
//! assert_eq!((found[0].id, found[0].distance), (1, 0));
//! assert!(index.query(simhash.fingerprint(other)).is_empty());
//!
//! // Confirm with shingles: SimHash gives speed, MinHash gives precision.
//! let resemblance = minhash.sketch(original).jaccard(&minhash.sketch(copy))?;
//! assert_eq!(resemblance, 1.0);
//! # Ok::<(), simcrawl_dedup::DedupError>(())
//! ```

#![deny(missing_docs)]

pub mod cluster;
pub mod digest;
pub mod error;
pub mod features;
pub mod index;
pub mod lsh;
pub mod minhash;
pub mod simhash;
mod stopwords;

pub use cluster::{Clusters, UnionFind};
pub use digest::{Digest128, sha256_hex};
pub use error::{DedupError, MAX_K};
pub use features::{FeatureOptions, Features};
pub use index::{IndexConfig, Match, Plan, SimHashIndex, brute_force};
pub use lsh::LshIndex;
pub use minhash::{MinHasher, Sketch};
pub use simhash::{SimCounts, SimHash, SimHasher};
