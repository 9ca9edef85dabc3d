//! MinHash sketches (Broder): the share of equal positions in two sketches estimates the Jaccard
//! resemblance of the two feature sets.
//!
//! All permutations are derived from one 64-bit feature hash. The hash is folded to 32 bits `x`, and
//! permutation i maps it to `hi32(a_i * x + b_i mod 2^64)` with random 64-bit `a_i` (odd) and `b_i`:
//! Dietzfelbinger's multiply-add-shift family, which is strongly universal on 32-bit keys and needs no
//! `mod p` (nothing overflows: all arithmetic is modulo 2^64 by design). The product is computed as
//! `hi32(a_lo * x + b) + lo32(a_hi * x)`, one 32x32->64 and one 32x32->32 multiply per permutation, a
//! loop the compiler vectorises (AVX-512 or AVX2 chosen at run time where the CPU has it), a block of
//! permutations at a time with the block's minima in registers.

use crate::error::DedupError;
use crate::features::{FeatureOptions, Features, mix64};

/// The default number of permutations (sketch length).
pub const DEFAULT_PERMUTATIONS: usize = 200;
/// The default seed of the permutation family. Sketches are comparable only under the same seed.
pub const DEFAULT_SEED: u64 = 0x5eed_0f51_c7a3_1e57;
/// The most permutations accepted.
pub const MAX_PERMUTATIONS: usize = 4096;

/// Computes MinHash sketches with a fixed family of permutations and fixed features.
#[derive(Debug, Clone)]
pub struct MinHasher {
    features: Features,
    seed: u64,
    a_lo: Vec<u32>,
    a_hi: Vec<u32>,
    b: Vec<u64>,
}

/// A MinHash sketch: for each permutation, the smallest permuted value over the document's features.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Sketch {
    seed: u64,
    values: Vec<u32>,
}

impl MinHasher {
    /// A hasher with `permutations` permutations drawn from `seed`, over the given features.
    pub fn new(
        permutations: usize,
        options: FeatureOptions,
        seed: u64,
    ) -> Result<Self, DedupError> {
        if permutations == 0 || permutations > MAX_PERMUTATIONS {
            return Err(DedupError::MinHash(format!(
                "{permutations} permutations: the sketch length must be between 1 and {MAX_PERMUTATIONS}"
            )));
        }
        let features = Features::new(options)?;
        let mut state = seed;
        let mut next = || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            mix64(state)
        };
        let mut a_lo = Vec::with_capacity(permutations);
        let mut a_hi = Vec::with_capacity(permutations);
        let mut b = Vec::with_capacity(permutations);
        for _ in 0..permutations {
            let a = next() | 1;
            a_lo.push(a as u32);
            a_hi.push((a >> 32) as u32);
            b.push(next());
        }
        Ok(MinHasher {
            features,
            seed,
            a_lo,
            a_hi,
            b,
        })
    }

    /// The number of permutations.
    pub fn permutations(&self) -> usize {
        self.b.len()
    }

    /// The feature extractor in use.
    pub fn features(&self) -> &Features {
        &self.features
    }

    /// The sketch of a text.
    pub fn sketch(&self, text: &str) -> Sketch {
        let mut folded = Vec::with_capacity(text.len() / 6);
        self.features.for_each(text, |h| folded.push(fold(h)));
        self.sketch_folded(&folded)
    }

    /// The sketch of a set given as 64-bit feature hashes.
    pub fn sketch_hashes(&self, hashes: impl IntoIterator<Item = u64>) -> Sketch {
        let folded: Vec<u32> = hashes.into_iter().map(fold).collect();
        self.sketch_folded(&folded)
    }

    pub(crate) fn sketch_folded(&self, xs: &[u32]) -> Sketch {
        let mut mins = vec![u32::MAX; self.b.len()];
        update_dispatch(&mut mins, &self.a_lo, &self.a_hi, &self.b, xs);
        Sketch {
            seed: self.seed,
            values: mins,
        }
    }
}

impl Default for MinHasher {
    fn default() -> Self {
        MinHasher::new(
            DEFAULT_PERMUTATIONS,
            FeatureOptions::minhash(),
            DEFAULT_SEED,
        )
        .expect("the default MinHash parameters are valid")
    }
}

#[inline]
pub(crate) fn fold(h: u64) -> u32 {
    (h ^ (h >> 32)) as u32
}

/// Permutation `(a_lo, a_hi, b)` of folded feature `x`: `hi32(a·x + b mod 2^64)`, as
/// `hi32(a_lo·x + b) + lo32(a_hi·x)`.
#[inline(always)]
fn permute(a_lo: u32, a_hi: u32, b: u64, x: u32) -> u32 {
    let hi = ((u64::from(a_lo) * u64::from(x)).wrapping_add(b) >> 32) as u32;
    hi.wrapping_add(a_hi.wrapping_mul(x))
}

#[inline(always)]
fn update_generic(mins: &mut [u32], a_lo: &[u32], a_hi: &[u32], b: &[u64], xs: &[u32]) {
    let n = mins.len().min(a_lo.len()).min(a_hi.len()).min(b.len());
    let (mins, a_lo, a_hi, b) = (&mut mins[..n], &a_lo[..n], &a_hi[..n], &b[..n]);
    for &x in xs {
        for i in 0..n {
            mins[i] = mins[i].min(permute(a_lo[i], a_hi[i], b[i], x));
        }
    }
}

/// [`update_generic`] a block of `W` permutations at a time: the block's minima and
/// coefficients stay in registers while every feature passes, instead of each feature loading and
/// storing all the minima. The same arithmetic, so the same minima.
#[inline(always)]
fn update_blocked<const W: usize>(
    mins: &mut [u32],
    a_lo: &[u32],
    a_hi: &[u32],
    b: &[u64],
    xs: &[u32],
) {
    let n = mins.len().min(a_lo.len()).min(a_hi.len()).min(b.len());
    let full = n / W * W;
    for start in (0..full).step_by(W) {
        let block = start..start + W;
        let (Ok(mut m), Ok(lo), Ok(hi_a), Ok(add)) = (
            <[u32; W]>::try_from(&mins[block.clone()]),
            <[u32; W]>::try_from(&a_lo[block.clone()]),
            <[u32; W]>::try_from(&a_hi[block.clone()]),
            <[u64; W]>::try_from(&b[block.clone()]),
        ) else {
            unreachable!("each block is W long")
        };
        for &x in xs {
            for i in 0..W {
                m[i] = m[i].min(permute(lo[i], hi_a[i], add[i], x));
            }
        }
        mins[block].copy_from_slice(&m);
    }
    update_generic(
        &mut mins[full..n],
        &a_lo[full..n],
        &a_hi[full..n],
        &b[full..n],
        xs,
    );
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn update_avx512(mins: &mut [u32], a_lo: &[u32], a_hi: &[u32], b: &[u64], xs: &[u32]) {
    update_blocked::<64>(mins, a_lo, a_hi, b, xs)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn update_avx2(mins: &mut [u32], a_lo: &[u32], a_hi: &[u32], b: &[u64], xs: &[u32]) {
    update_blocked::<8>(mins, a_lo, a_hi, b, xs)
}

fn update_dispatch(mins: &mut [u32], a_lo: &[u32], a_hi: &[u32], b: &[u64], xs: &[u32]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU supports AVX-512F, checked just above; the function has no other
            // requirement.
            unsafe { update_avx512(mins, a_lo, a_hi, b, xs) };
            return;
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2, checked just above; the function has no other requirement.
            unsafe { update_avx2(mins, a_lo, a_hi, b, xs) };
            return;
        }
    }
    update_blocked::<8>(mins, a_lo, a_hi, b, xs)
}

impl Sketch {
    /// The sketch values, one per permutation.
    pub fn values(&self) -> &[u32] {
        &self.values
    }

    /// The seed of the hasher that made it.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Whether the document had no features at all.
    pub fn is_empty(&self) -> bool {
        self.values.iter().all(|&v| v == u32::MAX)
    }

    fn check(&self, other: &Sketch) -> Result<(), DedupError> {
        if self.seed != other.seed || self.values.len() != other.values.len() {
            return Err(DedupError::IncompatibleSketches {
                left: self.values.len(),
                left_seed: self.seed,
                right: other.values.len(),
                right_seed: other.seed,
            });
        }
        Ok(())
    }

    /// The Jaccard resemblance estimate: the share of positions where the sketches agree. Two empty
    /// documents resemble each other fully (1.0); an empty and a non-empty one not at all (0.0).
    pub fn jaccard(&self, other: &Sketch) -> Result<f64, DedupError> {
        self.check(other)?;
        match (self.is_empty(), other.is_empty()) {
            (true, true) => return Ok(1.0),
            (true, false) | (false, true) => return Ok(0.0),
            (false, false) => {}
        }
        let equal = self
            .values
            .iter()
            .zip(&other.values)
            .filter(|(a, b)| a == b)
            .count();
        Ok(equal as f64 / self.values.len() as f64)
    }

    /// The number of distinct features, estimated from the minimums: the k smallest of n uniform values
    /// average 1/(n+1).
    pub fn cardinality(&self) -> f64 {
        if self.is_empty() {
            return 0.0;
        }
        let scale = 4_294_967_296.0;
        let sum: f64 = self
            .values
            .iter()
            .map(|&v| (f64::from(v) + 0.5) / scale)
            .sum();
        (self.values.len() as f64 / sum - 1.0).max(1.0)
    }

    /// The containment estimate of this document in `other`: |A ∩ B| / |A|, from the Jaccard estimate
    /// and the two cardinality estimates. Useful when one page quotes another whole.
    pub fn containment_in(&self, other: &Sketch) -> Result<f64, DedupError> {
        let j = self.jaccard(other)?;
        let (a, b) = (self.cardinality(), other.cardinality());
        if a == 0.0 {
            return Ok(if b == 0.0 { 1.0 } else { 0.0 });
        }
        let intersection = j * (a + b) / (1.0 + j);
        Ok((intersection / a).clamp(0.0, 1.0))
    }

    /// Super-shingles: the sketch values sorted, then shingled in windows of `width`, each window hashed.
    /// Two documents that share a super-shingle are candidates for a full comparison; documents of low
    /// resemblance almost never share one. Empty when the sketch is shorter than `width` or empty.
    pub fn super_shingles(&self, width: usize) -> Vec<u64> {
        if width == 0 || self.values.len() < width || self.is_empty() {
            return Vec::new();
        }
        let mut sorted = self.values.clone();
        sorted.sort_unstable();
        sorted.dedup();
        sorted
            .windows(width)
            .map(|w| {
                w.iter().fold(width as u64, |h, &v| {
                    mix64(h.rotate_left(29) ^ u64::from(v))
                })
            })
            .collect()
    }

    /// The stable byte form: version byte 1, the seed (8 bytes, big-endian), the length (4 bytes), then
    /// the values (4 bytes each, big-endian).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(13 + 4 * self.values.len());
        out.push(1);
        out.extend_from_slice(&self.seed.to_be_bytes());
        out.extend_from_slice(&(self.values.len() as u32).to_be_bytes());
        for v in &self.values {
            out.extend_from_slice(&v.to_be_bytes());
        }
        out
    }

    /// Decodes [`Sketch::to_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Sketch, DedupError> {
        let bad = |reason: String| DedupError::Decode {
            what: "MinHash sketch",
            reason,
        };
        let (&version, rest) = bytes.split_first().ok_or_else(|| bad("no bytes".into()))?;
        if version != 1 {
            return Err(bad(format!("unknown version {version}")));
        }
        if rest.len() < 12 {
            return Err(bad(format!("header needs 12 bytes, got {}", rest.len())));
        }
        let (seed, rest) = rest.split_at(8);
        let (len, rest) = rest.split_at(4);
        let seed = u64::from_be_bytes(seed.try_into().map_err(|_| bad("seed".into()))?);
        let len = u32::from_be_bytes(len.try_into().map_err(|_| bad("length".into()))?) as usize;
        if len > MAX_PERMUTATIONS || rest.len() != 4 * len {
            return Err(bad(format!(
                "{len} values announced, {} bytes of values present",
                rest.len()
            )));
        }
        let values = rest
            .chunks_exact(4)
            .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        Ok(Sketch { seed, values })
    }
}

/// Candidate pairs of a batch by the sorted-list method: every (position, value) of every sketch in one
/// list sorted by value; documents that share a run of equal entries share that minimum. Returns each
/// pair `(a, b)` with `a < b` and the number of positions they share, for the pairs sharing at least
/// `min_shared`. Quadratic in the size of a group of equal values, so meant for batch jobs over
/// documents that are already distinct copies, not for raw crawls full of exact duplicates.
pub fn shared_positions(sketches: &[(u32, &Sketch)], min_shared: usize) -> Vec<(u32, u32, usize)> {
    let mut entries: Vec<(u32, u32, u32)> = Vec::new();
    for (id, sketch) in sketches {
        for (pos, &v) in sketch.values.iter().enumerate() {
            if v != u32::MAX {
                entries.push((pos as u32, v, *id));
            }
        }
    }
    entries.sort_unstable();
    let mut counts: std::collections::HashMap<(u32, u32), usize> = std::collections::HashMap::new();
    let mut start = 0;
    while start < entries.len() {
        let mut end = start + 1;
        while end < entries.len()
            && entries[end].0 == entries[start].0
            && entries[end].1 == entries[start].1
        {
            end += 1;
        }
        let group = &entries[start..end];
        for (i, x) in group.iter().enumerate() {
            for y in &group[i + 1..] {
                let pair = (x.2.min(y.2), x.2.max(y.2));
                if pair.0 != pair.1 {
                    *counts.entry(pair).or_default() += 1;
                }
            }
        }
        start = end;
    }
    let mut out: Vec<(u32, u32, usize)> = counts
        .into_iter()
        .filter(|&(_, c)| c >= min_shared)
        .map(|((a, b), c)| (a, b, c))
        .collect();
    out.sort_unstable();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(range: std::ops::Range<u64>) -> Vec<u64> {
        range.map(|i| mix64(i ^ 0xabc)).collect()
    }

    #[test]
    fn blocked_updates_agree_with_the_generic_one_at_every_length() {
        let hasher = MinHasher::new(203, FeatureOptions::minhash(), 7).unwrap();
        let xs: Vec<u32> = set(0..97).into_iter().map(fold).collect();
        for n in [0, 1, 7, 8, 15, 16, 17, 200, 203] {
            let (lo, hi, b) = (&hasher.a_lo[..n], &hasher.a_hi[..n], &hasher.b[..n]);
            let mut want = vec![u32::MAX; n];
            update_generic(&mut want, lo, hi, b, &xs);
            let mut got8 = vec![u32::MAX; n];
            update_blocked::<8>(&mut got8, lo, hi, b, &xs);
            let mut got16 = vec![u32::MAX; n];
            update_blocked::<16>(&mut got16, lo, hi, b, &xs);
            let mut dispatched = vec![u32::MAX; n];
            update_dispatch(&mut dispatched, lo, hi, b, &xs);
            assert_eq!(
                (&got8, &got16, &dispatched),
                (&want, &want, &want),
                "n = {n}"
            );
        }
    }

    #[test]
    fn generic_and_dispatched_updates_agree() {
        let hasher = MinHasher::default();
        let xs: Vec<u32> = set(0..500).into_iter().map(fold).collect();
        let mut a = vec![u32::MAX; 200];
        update_generic(&mut a, &hasher.a_lo, &hasher.a_hi, &hasher.b, &xs);
        let mut b = vec![u32::MAX; 200];
        update_dispatch(&mut b, &hasher.a_lo, &hasher.a_hi, &hasher.b, &xs);
        assert_eq!(a, b);
        // And the split multiply equals the plain 64-bit one.
        let x = xs[0];
        let a64 = u64::from(hasher.a_lo[0]) | (u64::from(hasher.a_hi[0]) << 32);
        let plain = (a64.wrapping_mul(u64::from(x)).wrapping_add(hasher.b[0]) >> 32) as u32;
        let mut one = vec![u32::MAX; 1];
        update_generic(
            &mut one,
            &hasher.a_lo[..1],
            &hasher.a_hi[..1],
            &hasher.b[..1],
            &[x],
        );
        assert_eq!(one[0], plain);
    }

    #[test]
    fn jaccard_estimate_is_close_to_the_truth() {
        let hasher = MinHasher::default();
        // |A| = |B| = 1000, |A ∩ B| = 600: J = 600 / 1400 = 0.4286.
        let a = hasher.sketch_hashes(set(0..1000));
        let b = hasher.sketch_hashes(set(400..1400));
        let j = a.jaccard(&b).unwrap();
        assert!((j - 0.4286).abs() < 0.1, "{j}");
        assert_eq!(a.jaccard(&a).unwrap(), 1.0);
        let c = hasher.sketch_hashes(set(5000..6000));
        assert!(a.jaccard(&c).unwrap() < 0.05);
    }

    #[test]
    fn cardinality_and_containment() {
        let hasher = MinHasher::default();
        let small = hasher.sketch_hashes(set(0..500));
        let big = hasher.sketch_hashes(set(0..2000));
        let n = big.cardinality();
        assert!((1500.0..2700.0).contains(&n), "{n}");
        let c = small.containment_in(&big).unwrap();
        assert!(c > 0.75, "{c}");
        let c = big.containment_in(&small).unwrap();
        assert!(c < 0.45, "{c}");
    }

    #[test]
    fn empty_documents() {
        let hasher = MinHasher::default();
        let empty = hasher.sketch("");
        assert!(empty.is_empty());
        assert_eq!(empty.jaccard(&empty).unwrap(), 1.0);
        let full = hasher.sketch("some words in a row");
        assert_eq!(empty.jaccard(&full).unwrap(), 0.0);
        assert!(empty.super_shingles(4).is_empty());
    }

    #[test]
    fn sketches_from_different_hashers_do_not_compare() {
        let a = MinHasher::default().sketch("a b c d");
        let other = MinHasher::new(100, FeatureOptions::minhash(), 1).unwrap();
        let b = other.sketch("a b c d");
        assert!(matches!(
            a.jaccard(&b),
            Err(DedupError::IncompatibleSketches { .. })
        ));
    }

    #[test]
    fn bad_sizes_are_errors() {
        assert!(MinHasher::new(0, FeatureOptions::minhash(), 1).is_err());
        assert!(MinHasher::new(MAX_PERMUTATIONS + 1, FeatureOptions::minhash(), 1).is_err());
    }

    #[test]
    fn bytes_round_trip_and_garbage_is_rejected() {
        let s = MinHasher::default().sketch("the quick brown fox jumps over the lazy dog");
        assert_eq!(Sketch::from_bytes(&s.to_bytes()).unwrap(), s);
        assert!(Sketch::from_bytes(&[]).is_err());
        assert!(Sketch::from_bytes(&[2, 0, 0]).is_err());
        let mut truncated = s.to_bytes();
        truncated.pop();
        assert!(Sketch::from_bytes(&truncated).is_err());
    }

    #[test]
    fn near_copies_share_super_shingles_and_strangers_do_not() {
        let hasher = MinHasher::default();
        let a = hasher.sketch_hashes(set(0..1000));
        let b = hasher.sketch_hashes(set(30..1030));
        let c = hasher.sketch_hashes(set(9000..10000));
        let sa = a.super_shingles(6);
        let shared = |x: &[u64], y: &[u64]| x.iter().filter(|h| y.contains(h)).count();
        assert!(shared(&sa, &b.super_shingles(6)) > 0);
        assert_eq!(shared(&sa, &c.super_shingles(6)), 0);
    }

    #[test]
    fn sorted_list_pairs_count_shared_positions() {
        let hasher = MinHasher::default();
        let a = hasher.sketch_hashes(set(0..1000));
        let b = hasher.sketch_hashes(set(50..1050));
        let c = hasher.sketch_hashes(set(7000..8000));
        let pairs = shared_positions(&[(1, &a), (2, &b), (3, &c)], 100);
        assert_eq!(pairs.len(), 1);
        assert_eq!((pairs[0].0, pairs[0].1), (1, 2));
        let exact = a
            .values()
            .iter()
            .zip(b.values())
            .filter(|(x, y)| x == y)
            .count();
        assert_eq!(pairs[0].2, exact);
    }
}
