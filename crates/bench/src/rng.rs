//! A small deterministic generator (splitmix64), so that every run measures the same data.

/// splitmix64: fast, and good enough for benchmark data.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// `x` with exactly `d` distinct bits flipped.
    pub fn flip_bits(&mut self, x: u64, d: u32) -> u64 {
        let mut mask = 0u64;
        while mask.count_ones() < d {
            mask |= 1 << self.below(64);
        }
        x ^ mask
    }
}
