//! A small, seedable, platform-independent pseudo-random number generator.
//!
//! Everything the test web generates comes from here, so that the same seed gives the same site
//! on every machine: the generator is SplitMix64 (integer arithmetic only, no floating point in
//! anything that decides content), and every independent stream is derived from the site seed
//! and a label, so that adding a page does not shift the text of any other page.

/// SplitMix64: 64 bits of state, one multiply-xorshift finaliser per output.
#[derive(Debug, Clone)]
pub(crate) struct Rng {
    state: u64,
}

const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// The SplitMix64 finaliser: a bijection on `u64` with good avalanche.
pub(crate) const fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    /// A generator seeded with `seed`.
    pub(crate) fn new(seed: u64) -> Self {
        Rng { state: mix(seed) }
    }

    /// An independent stream for item `index` of the kind `label` under `seed`.
    pub(crate) fn derive(seed: u64, label: u64, index: u64) -> Self {
        Rng::new(mix(seed ^ mix(label.wrapping_add(GOLDEN))) ^ mix(index.wrapping_mul(GOLDEN)))
    }

    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN);
        mix(self.state)
    }

    /// A uniform value in `0..n` (`n > 0`), by Lemire's multiply-shift (bias below 2^-32 for
    /// the small `n` used here).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        debug_assert!(n > 0, "below(0)");
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// A uniform value in `lo..=hi`.
    pub(crate) fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `per_mille / 1000`.
    pub(crate) fn chance(&mut self, per_mille: u32) -> bool {
        (self.next_u64() % 1000) < u64::from(per_mille)
    }

    /// One element of a non-empty slice.
    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// Shuffles `items` in place (Fisher-Yates).
    pub(crate) fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}

/// Stream labels: one per kind of independent randomness, so streams never overlap.
pub(crate) mod label {
    pub(crate) const VOCABULARY: u64 = 1;
    pub(crate) const TEXT: u64 = 2;
    pub(crate) const ARTICLE: u64 = 3;
    pub(crate) const SITE: u64 = 4;
    pub(crate) const LINKS: u64 = 5;
    pub(crate) const EDIT: u64 = 6;
    pub(crate) const TRACKING: u64 = 7;
    pub(crate) const REQUEST: u64 = 8;
    pub(crate) const PAGE: u64 = 9;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_and_streams_differ() {
        let a: Vec<u64> = (0..8)
            .map({
                let mut r = Rng::derive(7, label::TEXT, 3);
                move |_| r.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..8)
            .map({
                let mut r = Rng::derive(7, label::TEXT, 3);
                move |_| r.next_u64()
            })
            .collect();
        let c: Vec<u64> = (0..8)
            .map({
                let mut r = Rng::derive(7, label::TEXT, 4);
                move |_| r.next_u64()
            })
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn below_and_range_stay_in_bounds_and_cover_them() {
        let mut r = Rng::new(1);
        let mut seen = [false; 7];
        for _ in 0..1000 {
            let v = r.below(7);
            seen[v] = true;
            let w = r.range(3, 5);
            assert!((3..=5).contains(&w));
        }
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn shuffle_is_a_permutation() {
        let mut r = Rng::new(9);
        let mut v: Vec<u32> = (0..50).collect();
        r.shuffle(&mut v);
        let mut sorted = v.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..50).collect::<Vec<_>>());
        assert_ne!(v, sorted);
    }
}
