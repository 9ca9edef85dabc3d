//! LSD radix sort on a 64-bit key: the bulk build sorts tens of millions of fingerprints per table,
//! where a comparison sort is several times slower.

/// Below this length a comparison sort wins.
const RADIX_MIN: usize = 1 << 12;

/// Sorts `v` by `key`, stably: an LSD radix sort on the key's bytes (a comparison sort below 4,096
/// entries). The batch job sorts each worker's permuted fingerprints with it, once per table.
pub fn radix_sort_by_key<T: Copy>(v: &mut [T], key: impl Fn(&T) -> u64) {
    if v.len() < RADIX_MIN {
        v.sort_by_key(|x| key(x));
        return;
    }
    // One histogram pass for all eight digits.
    let mut counts = vec![[0usize; 256]; 8];
    for x in v.iter() {
        let k = key(x);
        for (d, count) in counts.iter_mut().enumerate() {
            count[((k >> (8 * d)) & 0xff) as usize] += 1;
        }
    }
    let mut scratch: Vec<T> = Vec::with_capacity(v.len());
    for (d, count) in counts.iter().enumerate() {
        // A digit on which every key agrees does not reorder anything.
        if count.contains(&v.len()) {
            continue;
        }
        let mut offsets = [0usize; 256];
        let mut sum = 0;
        for (o, c) in offsets.iter_mut().zip(count.iter()) {
            *o = sum;
            sum += c;
        }
        scratch.clear();
        // Fill scratch by position: write through a slice of MaybeUninit-free initialised copies.
        scratch.extend_from_slice(v);
        for x in scratch.iter() {
            let digit = ((key(x) >> (8 * d)) & 0xff) as usize;
            v[offsets[digit]] = *x;
            offsets[digit] += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_like_the_standard_sort() {
        let mut state = 7u64;
        let mut v: Vec<(u64, u32)> = (0..10_000)
            .map(|i| {
                state = crate::features::mix64(state);
                // Few distinct high bytes, so that some digits are skipped and others are not.
                (state & 0x00ff_00ff_ffff_00ff, i)
            })
            .collect();
        let mut expected = v.clone();
        expected.sort_by_key(|e| e.0);
        radix_sort_by_key(&mut v, |e| e.0);
        assert_eq!(v, expected);
    }
}
