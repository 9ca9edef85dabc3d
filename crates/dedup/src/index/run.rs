//! A sorted run: every table of the plan over one batch of fingerprints, with a bucket directory.

use super::plan::{Plan, TableLayout, directory_bits};
use super::sort::radix_sort_by_key;

/// One table of a run: permuted fingerprints in ascending order and a directory of bucket starts.
///
/// Each 64-bit permuted key `p` keeps its low 48 bits, as a 32-bit `mid = p[16..48]` and a 16-bit
/// `low = p[0..16]`. Within a bucket the mids come first, then the lows: bucket `b` holding entries
/// `s..s+L` occupies bytes `6s..6(s+L)`, mids at `6s..6s+4L`, lows after them. A probe reads the
/// bucket's mids in a row (4 bytes per entry); only the entries whose mid is within k of the query's
/// (about one in a million for k = 3) read their low, so a probe is one sequential read.
///
/// When the directory has at least 16 bits, the top 16 bits `p[48..64]` of every entry of a bucket are
/// the bucket number's, so they are not stored: 6 bytes per entry. Smaller runs keep them in `high`.
///
/// Only a run's first table, the identity permutation, keeps the entries' ids (4 bytes each); an entry
/// found in another table is unpermuted and its ids looked up there (see [`Table::equal_range`]).
#[derive(Debug, Clone)]
pub(crate) struct Table {
    /// `p[48..64]` by entry index, only when `dir_bits < 16`.
    high: Vec<u16>,
    /// Per bucket: the mids, then the lows, little-endian.
    data: Vec<u8>,
    /// The id stored with each entry, by entry index: in the identity table only, empty in the others.
    pub(crate) ids: Vec<u32>,
    /// `dir[b]` is the first index whose top `dir_bits` bits are `>= b`; `dir[2^dir_bits] = len`.
    dir: Vec<u32>,
    dir_bits: u32,
}

/// A directory this wide makes the top 16 bits implicit.
const IMPLICIT_HIGH_BITS: u32 = 16;

/// Where one bucket's entries and columns are.
#[derive(Debug, Clone)]
pub(crate) struct Bucket {
    b: usize,
    /// First entry index.
    start: usize,
    /// Number of entries.
    len: usize,
}

impl Table {
    /// A table over permuted keys sorted in ascending order, with their `ids` (the identity table) or
    /// none (`ids` empty: every other table).
    fn new(keys: &[u64], ids: Vec<u32>, key_bits: u32) -> Table {
        debug_assert!(ids.is_empty() || ids.len() == keys.len());
        let dir_bits = directory_bits(keys.len() as u64, key_bits);
        let buckets = 1usize << dir_bits;
        let mut dir = directory_vec(buckets + 1, keys.len());
        // Count per bucket, then prefix sums.
        for &k in keys {
            dir[bucket_of(k, dir_bits) + 1] += 1;
        }
        for b in 0..buckets {
            dir[b + 1] += dir[b];
        }
        let high = if dir_bits >= IMPLICIT_HIGH_BITS {
            Vec::new()
        } else {
            keys.iter().map(|&k| (k >> 48) as u16).collect()
        };
        let mut data = Vec::with_capacity(6 * keys.len());
        advise_huge_pages(&data);
        for b in 0..buckets {
            let bucket = &keys[dir[b] as usize..dir[b + 1] as usize];
            for &k in bucket {
                data.extend_from_slice(&((k >> 16) as u32).to_le_bytes());
            }
            for &k in bucket {
                data.extend_from_slice(&(k as u16).to_le_bytes());
            }
        }
        Table {
            high,
            data,
            ids,
            dir,
            dir_bits,
        }
    }

    #[inline]
    fn bucket_at(&self, b: usize) -> Bucket {
        let start = self.dir[b] as usize;
        Bucket {
            b,
            start,
            len: self.dir[b + 1] as usize - start,
        }
    }

    #[inline(always)]
    fn mid(&self, bucket: &Bucket, j: usize) -> u32 {
        let at = 6 * bucket.start + 4 * j;
        let mut bytes = [0u8; 4];
        bytes.copy_from_slice(&self.data[at..at + 4]);
        u32::from_le_bytes(bytes)
    }

    #[inline(always)]
    fn low(&self, bucket: &Bucket, j: usize) -> u16 {
        let at = 6 * bucket.start + 4 * bucket.len + 2 * j;
        u16::from_le_bytes([self.data[at], self.data[at + 1]])
    }

    /// The full permuted key of the `j`-th entry of a bucket.
    #[inline]
    fn key(&self, bucket: &Bucket, j: usize) -> u64 {
        let high = if self.high.is_empty() {
            // dir_bits >= 16: the bucket number holds the top dir_bits bits.
            (bucket.b as u64) << (64 - self.dir_bits)
        } else {
            u64::from(self.high[bucket.start + j]) << 48
        };
        high | (u64::from(self.mid(bucket, j)) << 16) | u64::from(self.low(bucket, j))
    }

    /// All keys in ascending order.
    pub(crate) fn keys(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.dir.len() - 1).flat_map(move |b| {
            let bucket = self.bucket_at(b);
            (0..bucket.len).map(move |j| self.key(&bucket, j))
        })
    }

    /// The number of entries.
    pub(crate) fn len(&self) -> usize {
        self.dir.last().map_or(0, |&n| n as usize)
    }

    /// The bucket of a permuted query. Hints the CPU to start loading its mids, so that the probes of
    /// several tables overlap their memory latency.
    #[inline]
    pub(crate) fn locate(&self, pq: u64) -> Bucket {
        let bucket = self.bucket_at(bucket_of(pq, self.dir_bits));
        let mids = &self.data[6 * bucket.start..6 * bucket.start + 4 * bucket.len];
        for line in mids.chunks(64) {
            prefetch(line.as_ptr());
        }
        bucket
    }

    /// Calls `hit(index, key, distance)` for every entry of `bucket` within `k` of the permuted query
    /// `pq`.
    #[inline]
    pub(crate) fn scan(
        &self,
        bucket: &Bucket,
        pq: u64,
        k: u32,
        mut hit: impl FnMut(usize, u64, u32),
    ) {
        let qm = (pq >> 16) as u32;
        let ql = pq as u16;
        let qh = (pq >> 48) as u16;
        let mids = &self.data[6 * bucket.start..6 * bucket.start + 4 * bucket.len];
        filter_mids(mids, qm, k, |j| {
            let dm = (self.mid(bucket, j) ^ qm).count_ones();
            let mut d = dm + (self.low(bucket, j) ^ ql).count_ones();
            if !self.high.is_empty() {
                d += (self.high[bucket.start + j] ^ qh).count_ones();
            }
            if d <= k {
                hit(bucket.start + j, self.key(bucket, j), d);
            }
        });
    }

    /// The index range of entries exactly equal to `pq`.
    pub(crate) fn equal_range(&self, pq: u64) -> std::ops::Range<usize> {
        let bucket = self.bucket_at(bucket_of(pq, self.dir_bits));
        let lo = partition(0..bucket.len, |j| self.key(&bucket, j) < pq);
        let hi = partition(0..bucket.len, |j| self.key(&bucket, j) <= pq);
        bucket.start + lo..bucket.start + hi
    }

    /// Removes the entry at index `i`, keeping the directory and the bucket's columns right.
    fn remove_at(&mut self, i: usize) {
        let b = partition(0..self.dir.len() - 1, |b| (self.dir[b + 1] as usize) <= i);
        let bucket = self.bucket_at(b);
        let j = i - bucket.start;
        // The low first (it lies after the mids), then the mid; the lows then start 4 bytes earlier,
        // exactly where a bucket of len - 1 entries expects them.
        let low_at = 6 * bucket.start + 4 * bucket.len + 2 * j;
        self.data.drain(low_at..low_at + 2);
        let mid_at = 6 * bucket.start + 4 * j;
        self.data.drain(mid_at..mid_at + 4);
        if !self.high.is_empty() {
            self.high.remove(i);
        }
        if !self.ids.is_empty() {
            self.ids.remove(i);
        }
        for start in &mut self.dir[b + 1..] {
            *start -= 1;
        }
    }

    fn bytes(&self) -> usize {
        self.high.capacity() * 2
            + self.data.capacity()
            + self.ids.capacity() * 4
            + self.dir.capacity() * 4
    }
}

/// Calls `pass(j)` for every 4-byte little-endian `mids[j]` within `k` bits of `qm`, in order.
#[inline]
fn filter_mids(mids: &[u8], qm: u32, k: u32, pass: impl FnMut(usize)) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512vpopcntdq")
            && std::arch::is_x86_feature_detected!("avx512f")
        {
            // SAFETY: both features were detected just above; the function needs nothing else.
            unsafe { filter_mids_avx512(mids, qm, k, pass) };
            return;
        }
    }
    filter_mids_generic(mids, qm, k, pass)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vpopcntdq")]
fn filter_mids_avx512(mids: &[u8], qm: u32, k: u32, pass: impl FnMut(usize)) {
    filter_mids_generic(mids, qm, k, pass)
}

/// Sixteen mids at a time into a bit mask, a loop the compiler turns into a few vector instructions
/// where the CPU has a vector POPCNT; then one call per set bit.
#[inline(always)]
fn filter_mids_generic(mids: &[u8], qm: u32, k: u32, mut pass: impl FnMut(usize)) {
    let chunks = mids.chunks_exact(64);
    let rest = chunks.remainder();
    let mut base = 0;
    for chunk in chunks {
        let mut mask = 0u32;
        for (i, m) in chunk.chunks_exact(4).enumerate() {
            let m = u32::from_le_bytes([m[0], m[1], m[2], m[3]]);
            mask |= u32::from((m ^ qm).count_ones() <= k) << i;
        }
        while mask != 0 {
            pass(base + mask.trailing_zeros() as usize);
            mask &= mask - 1;
        }
        base += 16;
    }
    for (i, m) in rest.chunks_exact(4).enumerate() {
        let m = u32::from_le_bytes([m[0], m[1], m[2], m[3]]);
        if (m ^ qm).count_ones() <= k {
            pass(base + i);
        }
    }
}

/// A zeroed directory of `len` entries for a run of `entries` fingerprints. In a large run the directory
/// is given 4 MiB of capacity so that it can sit on a huge page: every probe reads the directory at
/// random, and a TLB miss there costs as much as the lookup. Only when that costs at most one byte per
/// fingerprint.
fn directory_vec(len: usize, entries: usize) -> Vec<u32> {
    const HUGE_CAPACITY: usize = 1 << 20;
    if len < HUGE_CAPACITY / 32 || entries < 4 * HUGE_CAPACITY {
        return vec![0; len];
    }
    let mut dir = Vec::with_capacity(len.max(HUGE_CAPACITY));
    advise_huge_pages(&dir);
    dir.resize(len, 0);
    dir
}

/// Asks the kernel to back a large, freshly allocated buffer with transparent huge pages, before it is
/// touched. The tables are probed at random; with 4 KiB pages nearly every probe of a large table would
/// also miss the TLB. Only a hint: where the kernel says no, nothing changes.
pub(crate) fn advise_huge_pages<T>(v: &Vec<T>) {
    const HUGE: usize = 2 << 20;
    let bytes = v.capacity() * std::mem::size_of::<T>();
    if bytes < 2 * HUGE {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        let start = v.as_ptr() as usize;
        let aligned = start.next_multiple_of(HUGE);
        let len = (start + bytes).saturating_sub(aligned) / HUGE * HUGE;
        if len > 0 {
            // SAFETY: the range lies inside the vector's own allocation, and MADV_HUGEPAGE only changes
            // how the kernel backs those pages, never their contents.
            unsafe {
                libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
            }
        }
    }
}

/// Asks the CPU to start loading the cache line at `p`. A hint only: it never faults.
#[inline(always)]
fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: prefetch is a hint that never dereferences in a way that can fault, whatever the
        // address; SSE is part of the x86_64 baseline.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// The first index in `range` for which `pred` is false (`pred` must be true then false).
fn partition(range: std::ops::Range<usize>, pred: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (range.start, range.end);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

#[inline]
fn bucket_of(key: u64, dir_bits: u32) -> usize {
    if dir_bits == 0 {
        0
    } else {
        (key >> (64 - dir_bits)) as usize
    }
}

/// All tables over one batch: the same fingerprints, permuted and sorted once per table; the ids in
/// the first (identity) table only.
#[derive(Debug, Clone)]
pub(crate) struct Run {
    pub(crate) tables: Vec<Table>,
}

impl Run {
    /// Builds a run from (fingerprint, id) pairs.
    pub(crate) fn build(plan: &Plan, mut entries: Vec<(u64, u32)>) -> Run {
        let layouts = plan.tables();
        let mut tables = Vec::with_capacity(layouts.len());
        // The identity table: the pairs themselves, sorted.
        radix_sort_by_key(&mut entries, |e| e.0);
        let keys: Vec<u64> = entries.iter().map(|e| e.0).collect();
        tables.push(Table::new(
            &keys,
            ids_of(entries.iter().map(|e| e.1), entries.len()),
            layouts[0].key_bits,
        ));
        for layout in &layouts[1..] {
            let mut permuted: Vec<u64> = keys.iter().map(|&x| layout.permute(x)).collect();
            radix_sort_by_key(&mut permuted, |&x| x);
            tables.push(Table::new(&permuted, Vec::new(), layout.key_bits));
        }
        Run { tables }
    }

    /// Merges two runs into one.
    pub(crate) fn merge(plan: &Plan, a: Run, b: Run) -> Run {
        let layouts = plan.tables();
        let mut tables = Vec::with_capacity(layouts.len());
        let pairs = merge_sorted(a.entries(), b.entries(), |e| e.0);
        let keys: Vec<u64> = pairs.iter().map(|e| e.0).collect();
        tables.push(Table::new(
            &keys,
            ids_of(pairs.iter().map(|e| e.1), pairs.len()),
            layouts[0].key_bits,
        ));
        drop(pairs);
        for (t, layout) in layouts.iter().enumerate().skip(1) {
            let keys = merge_sorted(a.tables[t].keys(), b.tables[t].keys(), |&x| x);
            tables.push(Table::new(&keys, Vec::new(), layout.key_bits));
        }
        Run { tables }
    }

    pub(crate) fn len(&self) -> usize {
        self.tables[0].len()
    }

    /// Every (fingerprint, id) of the run, from the identity table, in ascending order.
    pub(crate) fn entries(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        let identity = &self.tables[0];
        identity.keys().zip(identity.ids.iter().copied())
    }

    /// The ids stored with fingerprint `fp` (the identity table's entries equal to it).
    pub(crate) fn ids_of(&self, fp: u64) -> &[u32] {
        let identity = &self.tables[0];
        &identity.ids[identity.equal_range(fp)]
    }

    /// Removes one entry (fp, id). Returns false when it is not in this run.
    pub(crate) fn remove(&mut self, layouts: &[TableLayout], fp: u64, id: u32) -> bool {
        let identity = &mut self.tables[0];
        let range = identity.equal_range(fp);
        let Some(pos) = range.clone().find(|&i| identity.ids[i] == id) else {
            return false;
        };
        identity.remove_at(pos);
        // The other tables keep no ids: any one of the entries equal to the fingerprint goes.
        for (table, layout) in self.tables.iter_mut().zip(layouts).skip(1) {
            let range = table.equal_range(layout.permute(fp));
            if !range.is_empty() {
                table.remove_at(range.start);
            }
        }
        debug_assert!(self.tables.iter().all(|t| t.len() == self.len()));
        true
    }

    pub(crate) fn bytes(&self) -> usize {
        self.tables.iter().map(Table::bytes).sum::<usize>()
    }
}

/// The identity table's ids in a vector of their own, on huge pages when large.
fn ids_of(ids: impl Iterator<Item = u32>, len: usize) -> Vec<u32> {
    let mut out = Vec::with_capacity(len);
    advise_huge_pages(&out);
    out.extend(ids);
    out
}

/// Merges two ascending sequences by `key`.
fn merge_sorted<T: Copy>(
    a: impl Iterator<Item = T>,
    b: impl Iterator<Item = T>,
    key: impl Fn(&T) -> u64,
) -> Vec<T> {
    let mut out = Vec::with_capacity(a.size_hint().0 + b.size_hint().0);
    let (mut a, mut b) = (a.peekable(), b.peekable());
    loop {
        let take_a = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) => key(x) <= key(y),
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        out.extend(if take_a { a.next() } else { b.next() });
    }
    out
}
