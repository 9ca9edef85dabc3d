//! Helpers for this crate's unit tests.

/// `n` pseudo-random letter-only words (digits would be stripped) from a 3,000-word vocabulary.
pub(crate) fn words(seed: u64, n: usize) -> Vec<String> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let mut n = (state >> 33) % 3000;
            let mut w = String::from("w");
            while n > 0 {
                w.push(char::from(b'a' + (n % 26) as u8));
                n /= 26;
            }
            w
        })
        .collect()
}
