//! Locality-sensitive hashing over MinHash sketches: b bands of r rows. Two documents become candidates
//! when all r values of some band agree, which happens with probability `1 - (1 - J^r)^b` for
//! resemblance J: an S-curve whose steepest point is near `(1/b)^(1/r)`.

use crate::error::DedupError;
use crate::features::mix64;
use crate::minhash::Sketch;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Passes an already well-mixed 64-bit key through unchanged.
#[derive(Default)]
struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// A banding index: band key -> ids of the documents with that band.
#[derive(Debug, Clone)]
pub struct LshIndex {
    bands: usize,
    rows: usize,
    buckets: HashMap<u64, Vec<u32>, BuildHasherDefault<PassThrough>>,
}

impl LshIndex {
    /// An index of `bands` bands of `rows` rows; `bands * rows` must fit in the sketches it will see.
    pub fn new(bands: usize, rows: usize) -> Result<Self, DedupError> {
        if bands == 0 || rows == 0 {
            return Err(DedupError::MinHash(format!(
                "LSH needs at least one band of one row, got {bands} x {rows}"
            )));
        }
        Ok(LshIndex {
            bands,
            rows,
            buckets: HashMap::default(),
        })
    }

    /// The banding for `permutations` values whose S-curve is steepest nearest `threshold`, using all
    /// or nearly all of the sketch.
    pub fn for_threshold(permutations: usize, threshold: f64) -> Result<Self, DedupError> {
        let mut best: Option<(usize, usize, f64)> = None;
        for rows in 1..=permutations {
            let bands = permutations / rows;
            if bands == 0 {
                break;
            }
            let t = (1.0 / bands as f64).powf(1.0 / rows as f64);
            let error = (t - threshold).abs();
            if best.is_none_or(|(_, _, e)| error < e) {
                best = Some((bands, rows, error));
            }
        }
        let (bands, rows, _) = best.ok_or_else(|| {
            DedupError::MinHash(format!("no banding fits {permutations} permutations"))
        })?;
        LshIndex::new(bands, rows)
    }

    /// Bands and rows.
    pub fn shape(&self) -> (usize, usize) {
        (self.bands, self.rows)
    }

    /// The resemblance at which a pair has about even odds of becoming a candidate.
    pub fn threshold(&self) -> f64 {
        (1.0 / self.bands as f64).powf(1.0 / self.rows as f64)
    }

    fn band_keys<'a>(
        &'a self,
        sketch: &'a Sketch,
    ) -> Result<impl Iterator<Item = u64> + 'a, DedupError> {
        let needed = self.bands * self.rows;
        if sketch.values().len() < needed {
            return Err(DedupError::MinHash(format!(
                "{} bands x {} rows need {needed} sketch values, the sketch has {}",
                self.bands,
                self.rows,
                sketch.values().len()
            )));
        }
        Ok(sketch
            .values()
            .chunks_exact(self.rows)
            .take(self.bands)
            .enumerate()
            .map(|(band, values)| {
                values
                    .iter()
                    .fold(mix64(band as u64 + 1), |h, &v| mix64(h ^ u64::from(v)))
            }))
    }

    /// Adds a document. Empty sketches are not indexed: an empty page resembles nothing.
    pub fn insert(&mut self, id: u32, sketch: &Sketch) -> Result<(), DedupError> {
        if sketch.is_empty() {
            return Ok(());
        }
        let keys: Vec<u64> = self.band_keys(sketch)?.collect();
        for key in keys {
            self.buckets.entry(key).or_default().push(id);
        }
        Ok(())
    }

    /// The ids sharing at least one band with `sketch`, sorted, each once.
    pub fn candidates(&self, sketch: &Sketch) -> Result<Vec<u32>, DedupError> {
        let mut out = Vec::new();
        if sketch.is_empty() {
            return Ok(out);
        }
        for key in self.band_keys(sketch)? {
            if let Some(ids) = self.buckets.get(&key) {
                out.extend_from_slice(ids);
            }
        }
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MinHasher;

    fn set(range: std::ops::Range<u64>) -> Vec<u64> {
        range.map(|i| mix64(i ^ 0x77)).collect()
    }

    #[test]
    fn near_copies_collide_and_strangers_do_not() {
        let hasher = MinHasher::default();
        let mut lsh = LshIndex::new(20, 10).unwrap();
        let a = hasher.sketch_hashes(set(0..1000));
        lsh.insert(1, &a).unwrap();
        lsh.insert(2, &hasher.sketch_hashes(set(5000..6000)))
            .unwrap();
        // J(a, b) = 950 / 1050 = 0.905: far above the ~0.74 threshold of 20 x 10.
        let b = hasher.sketch_hashes(set(50..1050));
        assert_eq!(lsh.candidates(&b).unwrap(), vec![1]);
        let c = hasher.sketch_hashes(set(20_000..21_000));
        assert!(lsh.candidates(&c).unwrap().is_empty());
    }

    #[test]
    fn banding_for_a_threshold() {
        let lsh = LshIndex::for_threshold(200, 0.8).unwrap();
        let (b, r) = lsh.shape();
        assert!(b * r <= 200);
        assert!((lsh.threshold() - 0.8).abs() < 0.05, "{b} x {r}");
    }

    #[test]
    fn bands_larger_than_the_sketch_are_an_error() {
        let hasher = MinHasher::default();
        let mut lsh = LshIndex::new(30, 10).unwrap();
        let err = lsh.insert(1, &hasher.sketch("a b c d e")).unwrap_err();
        assert!(err.to_string().contains("need 300"), "{err}");
        assert!(LshIndex::new(0, 5).is_err());
    }
}
