//! The planner: how many permuted tables, over which blocks, for a given k and expected size.
//!
//! Manku, Jain and Das Sarma's observation: split the 64 bits into `b > k` blocks. Two fingerprints that
//! differ in at most k bits differ in at most k blocks, so they agree exactly on at least `b - k` blocks.
//! Keep one table for every choice of `b - k` blocks; in each table the fingerprints are permuted so that
//! the chosen blocks come first, and sorted. A query permutes itself the same way and looks only at the
//! entries that share its leading (key) bits, in every table; any fingerprint within k is found in at
//! least one of them.
//!
//! More blocks means longer keys and fewer candidates per probe, but `C(b, k)` tables: time against
//! space. The planner estimates both and picks the fastest plan within a memory budget.

use crate::error::{DedupError, check_k};

/// The default memory budget of a plan, in bytes per fingerprint (ids and directories included).
pub const DEFAULT_MAX_BYTES_PER_FP: f64 = 48.0;

/// Tables above this count are not considered: their space is never worth it.
const MAX_TABLES: u64 = 64;

/// Cost model constants, measured on the benchmark machine (see docs/BENCHMARKS.md): a probe costs
/// about two cache misses, a candidate check one XOR + POPCNT on a sequentially read entry.
const PROBE_NS: f64 = 60.0;
const CANDIDATE_NS: f64 = 0.6;

/// One block of bits: bits `shift .. shift + bits` of the fingerprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block {
    /// Position of the block's lowest bit.
    pub shift: u32,
    /// Width in bits.
    pub bits: u32,
}

impl Block {
    fn mask(self) -> u64 {
        if self.bits == 64 {
            u64::MAX
        } else {
            ((1u64 << self.bits) - 1) << self.shift
        }
    }
}

/// One table: which blocks form its key, and the bit permutation that brings them to the front.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableLayout {
    /// Bit i set when block i is part of the key.
    pub key_blocks: u32,
    /// Width of the key in bits.
    pub key_bits: u32,
    /// (source shift, destination shift, width) of each block move.
    moves: Vec<(u32, u32, u32)>,
    identity: bool,
}

impl TableLayout {
    /// Applies the table's permutation to a fingerprint.
    #[inline]
    pub fn permute(&self, x: u64) -> u64 {
        if self.identity {
            return x;
        }
        let mut out = 0;
        for &(src, dst, bits) in &self.moves {
            out |= ((x >> src) & low_mask(bits)) << dst;
        }
        out
    }

    /// Undoes [`TableLayout::permute`].
    #[inline]
    pub fn unpermute(&self, x: u64) -> u64 {
        if self.identity {
            return x;
        }
        let mut out = 0;
        for &(src, dst, bits) in &self.moves {
            out |= ((x >> dst) & low_mask(bits)) << src;
        }
        out
    }
}

#[inline]
fn low_mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// A complete layout for one k: the blocks and the tables.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    k: u32,
    blocks: Vec<Block>,
    tables: Vec<TableLayout>,
    expected_n: u64,
}

/// What the planner expects of a plan, for reports and for choosing between plans.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlanEstimate {
    /// Number of tables.
    pub tables: usize,
    /// The shortest key, in bits.
    pub min_key_bits: u32,
    /// Expected candidates examined per query, over all tables.
    pub candidates_per_query: f64,
    /// Estimated query time in nanoseconds on the reference machine.
    pub query_ns: f64,
    /// Estimated memory per fingerprint in bytes, ids and directories included.
    pub bytes_per_fp: f64,
}

impl Plan {
    /// The fastest plan for distance `k` and about `expected_n` fingerprints that fits in
    /// [`DEFAULT_MAX_BYTES_PER_FP`].
    pub fn new(k: u32, expected_n: u64) -> Result<Plan, DedupError> {
        Plan::with_budget(k, expected_n, DEFAULT_MAX_BYTES_PER_FP)
    }

    /// The fastest plan within `max_bytes_per_fp`; if no plan fits, the smallest one.
    pub fn with_budget(k: u32, expected_n: u64, max_bytes_per_fp: f64) -> Result<Plan, DedupError> {
        check_k(k)?;
        let mut best: Option<(u32, PlanEstimate)> = None;
        let mut smallest: Option<(u32, PlanEstimate)> = None;
        for b in candidate_block_counts(k) {
            let est = estimate(k, b, expected_n);
            if smallest.is_none_or(|(_, s)| est.bytes_per_fp < s.bytes_per_fp) {
                smallest = Some((b, est));
            }
            if est.bytes_per_fp <= max_bytes_per_fp
                && best.is_none_or(|(_, s)| est.query_ns < s.query_ns)
            {
                best = Some((b, est));
            }
        }
        let (b, _) = best
            .or(smallest)
            .unwrap_or((k + 1, estimate(k, k + 1, expected_n)));
        Ok(Plan::with_blocks(k, b, expected_n))
    }

    /// The plan with exactly `b` blocks (`b > k`), one table per choice of `b - k` key blocks.
    pub fn with_blocks(k: u32, b: u32, expected_n: u64) -> Plan {
        let b = b.clamp(k + 1, 64);
        let blocks = split_blocks(b);
        let mut tables = Vec::new();
        for key in combinations(b, b - k) {
            tables.push(layout(&blocks, key));
        }
        Plan {
            k,
            blocks,
            tables,
            expected_n,
        }
    }

    /// The distance the plan guarantees to find.
    pub fn k(&self) -> u32 {
        self.k
    }

    /// The blocks, from the most significant.
    pub fn blocks(&self) -> &[Block] {
        &self.blocks
    }

    /// The tables. The first one is always the identity permutation.
    pub fn tables(&self) -> &[TableLayout] {
        &self.tables
    }

    /// The size the plan was made for.
    pub fn expected_n(&self) -> u64 {
        self.expected_n
    }

    /// The planner's estimate for this plan at its expected size.
    pub fn estimate(&self) -> PlanEstimate {
        estimate(self.k, self.blocks.len() as u32, self.expected_n)
    }

    /// The index of the first table whose key blocks all agree between two fingerprints, given their
    /// XOR. Every match is reported by that table only, so no result is reported twice. `None` when
    /// they differ in more than k blocks.
    #[inline]
    pub fn first_agreeing_table(&self, diff: u64) -> Option<usize> {
        let mut agree = 0u32;
        for (i, block) in self.blocks.iter().enumerate() {
            if diff & block.mask() == 0 {
                agree |= 1 << i;
            }
        }
        self.tables
            .iter()
            .position(|t| t.key_blocks & agree == t.key_blocks)
    }
}

fn candidate_block_counts(k: u32) -> impl Iterator<Item = u32> {
    let low = k + 1;
    let high = if k == 0 { 1 } else { (k + 8).min(64) };
    (low..=high).filter(move |&b| binomial(b, k) <= MAX_TABLES)
}

fn estimate(k: u32, b: u32, n: u64) -> PlanEstimate {
    let blocks = split_blocks(b);
    let tables = binomial(b, k) as usize;
    // The shortest key uses the narrowest b - k blocks; blocks are sorted widest first.
    let min_key_bits: u32 = blocks
        .iter()
        .rev()
        .take((b - k) as usize)
        .map(|bl| bl.bits)
        .sum();
    let n_f = n.max(1) as f64;
    let per_table = n_f / 2f64.powi(min_key_bits.min(64) as i32);
    let candidates = tables as f64 * per_table;
    let query_ns = tables as f64 * PROBE_NS + candidates * CANDIDATE_NS;
    // Each table keeps 6 bytes of key per entry and a directory of about half a byte per entry (or
    // 2^key entries, whichever is smaller); the identity table also a 4-byte id.
    let dir_bits = directory_bits(n, min_key_bits) as i32;
    let dir_bytes_per_fp = 4.0 * 2f64.powi(dir_bits) / n_f;
    let bytes_per_fp = 4.0 + tables as f64 * (6.0 + dir_bytes_per_fp);
    PlanEstimate {
        tables,
        min_key_bits,
        candidates_per_query: candidates,
        query_ns,
        bytes_per_fp,
    }
}

/// Directory width for a sorted run of `len` entries and keys of `key_bits`: about eight entries per
/// bucket, never wider than the key (entries beyond the key are not grouped) and at most 2^28 buckets.
pub(crate) fn directory_bits(len: u64, key_bits: u32) -> u32 {
    let log = 63u32.saturating_sub(len.max(1).leading_zeros());
    log.saturating_sub(3).min(key_bits).min(28)
}

/// Splits 64 bits into `b` blocks as evenly as possible, wider blocks first (most significant first).
fn split_blocks(b: u32) -> Vec<Block> {
    let base = 64 / b;
    let extra = 64 % b;
    let mut blocks = Vec::with_capacity(b as usize);
    let mut top = 64;
    for i in 0..b {
        let bits = base + u32::from(i < extra);
        top -= bits;
        blocks.push(Block { shift: top, bits });
    }
    blocks
}

/// All `r`-subsets of `0..n` as bit masks, in lexicographic order (so `{0, 1, .., r-1}` comes first).
fn combinations(n: u32, r: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let mut current = Vec::with_capacity(r as usize);
    fn rec(start: u32, n: u32, r: u32, current: &mut Vec<u32>, out: &mut Vec<u32>) {
        if current.len() as u32 == r {
            out.push(current.iter().fold(0, |m, i| m | (1 << i)));
            return;
        }
        for i in start..n {
            current.push(i);
            rec(i + 1, n, r, current, out);
            current.pop();
        }
    }
    rec(0, n, r, &mut current, &mut out);
    out
}

fn layout(blocks: &[Block], key_blocks: u32) -> TableLayout {
    let mut order: Vec<usize> = (0..blocks.len())
        .filter(|i| key_blocks & (1 << i) != 0)
        .collect();
    let key_bits = order.iter().map(|&i| blocks[i].bits).sum();
    order.extend((0..blocks.len()).filter(|i| key_blocks & (1 << i) == 0));
    let mut top = 64;
    let mut moves = Vec::with_capacity(blocks.len());
    for &i in &order {
        let block = blocks[i];
        top -= block.bits;
        moves.push((block.shift, top, block.bits));
    }
    let identity = moves.iter().all(|&(src, dst, _)| src == dst);
    TableLayout {
        key_blocks,
        key_bits,
        moves,
        identity,
    }
}

fn binomial(n: u32, r: u32) -> u64 {
    let r = r.min(n - r.min(n));
    let mut acc: u64 = 1;
    for i in 0..u64::from(r) {
        acc = acc * (u64::from(n) - i) / (i + 1);
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k3_at_16m_picks_four_tables_of_16_bit_keys() {
        let plan = Plan::new(3, 1 << 24).unwrap();
        assert_eq!(plan.tables().len(), 4);
        assert!(plan.tables().iter().all(|t| t.key_bits == 16));
        assert!(plan.estimate().bytes_per_fp <= DEFAULT_MAX_BYTES_PER_FP);
    }

    #[test]
    fn a_larger_budget_buys_more_tables() {
        let plan = Plan::with_budget(3, 1 << 24, 120.0).unwrap();
        assert_eq!(plan.tables().len(), 10, "{:?}", plan.estimate());
    }

    #[test]
    fn k0_is_one_exact_table() {
        let plan = Plan::new(0, 1000).unwrap();
        assert_eq!(plan.tables().len(), 1);
        assert_eq!(plan.tables()[0].key_bits, 64);
    }

    #[test]
    fn k_above_limit_is_an_error_naming_it() {
        let err = Plan::new(9, 10).unwrap_err();
        assert_eq!(err, DedupError::KTooLarge { k: 9, max: 8 });
        assert!(err.to_string().contains("0 to 8"));
    }

    #[test]
    fn permutations_are_bijections_and_first_is_identity() {
        for k in 0..=8 {
            let plan = Plan::new(k, 1 << 20).unwrap();
            assert!(plan.tables()[0].identity, "k={k}");
            for t in plan.tables() {
                for x in [0u64, 1, u64::MAX, 0x0123_4567_89ab_cdef, 1 << 63] {
                    let p = t.permute(x);
                    assert_eq!(p.count_ones(), x.count_ones());
                    assert_eq!(t.unpermute(p), x);
                }
            }
        }
    }

    #[test]
    fn blocks_cover_all_bits_once() {
        for b in 1..=16 {
            let blocks = split_blocks(b);
            let all = blocks.iter().fold(0u64, |m, bl| {
                assert_eq!(m & bl.mask(), 0);
                m | bl.mask()
            });
            assert_eq!(all, u64::MAX);
        }
    }

    #[test]
    fn every_difference_within_k_has_an_agreeing_table() {
        let plan = Plan::new(3, 1 << 20).unwrap();
        // Three differing bits in three different blocks: one block must still agree.
        let diff = (1u64 << 63) | (1 << 40) | (1 << 20);
        assert!(plan.first_agreeing_table(diff).is_some());
    }

    #[test]
    fn binomials() {
        assert_eq!(binomial(5, 2), 10);
        assert_eq!(binomial(4, 3), 4);
        assert_eq!(binomial(9, 8), 9);
        assert_eq!(binomial(1, 0), 1);
    }
}
