//! The job's answer: the pairs, their clusters, the evidence of mirrors between hosts, and counts.
//! Built by the reducer from the confirmed pairs, without I/O but for writing it as JSON lines.

use std::collections::{BTreeSet, HashMap};
use std::io::{self, Write};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::json;
use simcrawl_dedup::UnionFind;

/// A page named in the output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageRef {
    /// Its global id in this run of the job (worker and index; not stable across runs).
    pub gid: u64,
    /// Its URL (shared: a page is named by every pair and cluster it is in).
    pub url: Arc<str>,
    /// Its host.
    pub host: Arc<str>,
}

/// Two pages within Hamming distance k, confirmed by MinHash when both have a sketch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pair {
    /// One page (the one whose URL sorts first, in a report).
    pub a: PageRef,
    /// The other.
    pub b: PageRef,
    /// Their SimHash distance.
    pub distance: u32,
    /// The Jaccard estimate of their sketches, when both have one.
    pub jaccard: Option<f64>,
}

/// Pages joined by pairs (single link), two or more.
#[derive(Debug, Clone, PartialEq)]
pub struct Cluster {
    /// Its pages, by URL.
    pub pages: Vec<PageRef>,
}

/// Near-duplicate pairs between two hosts: the evidence that one mirrors the other.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MirrorEvidence {
    /// The two hosts, in name order.
    pub hosts: [String; 2],
    /// Pairs with one page on each.
    pub pairs: u64,
    /// Pages of each host in the input.
    pub pages: [u64; 2],
    /// Pages of each host with a near-duplicate on the other.
    pub matched: [u64; 2],
}

impl MirrorEvidence {
    /// The share of each host's pages that have a near-duplicate on the other.
    pub fn shares(&self) -> [f64; 2] {
        [0, 1].map(|i| self.matched[i] as f64 / self.pages[i].max(1) as f64)
    }
}

/// Counts of the run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobStats {
    /// Fingerprints in the input, over all workers.
    pub fingerprints: u64,
    /// Workers of the run.
    pub workers: usize,
    /// The distance threshold.
    pub k: u32,
    /// Permuted tables of the batch plan.
    pub tables: usize,
    /// The shortest key of the plan, in bits.
    pub key_bits: u32,
    /// Pairs within k found by the scans.
    pub candidates: u64,
    /// Of those, dropped because their sketches' Jaccard estimate was below the threshold.
    pub rejected_by_minhash: u64,
    /// Of those kept, pairs where a page had no sketch (kept on SimHash alone).
    pub without_sketches: u64,
}

/// The whole answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// The pairs, by their pages' URLs.
    pub pairs: Vec<Pair>,
    /// The clusters, largest first.
    pub clusters: Vec<Cluster>,
    /// Host pairs with near-duplicates between them, most pairs first.
    pub mirrors: Vec<MirrorEvidence>,
    /// Counts.
    pub stats: JobStats,
}

/// Builds a [`Report`] from pairs as they arrive: the reducer adds each batch while the scans go on
/// (its pages put in URL order, its mirror evidence counted), and [`ReportBuilder::finish`] sorts and
/// clusters once the last has come.
#[derive(Debug, Default)]
pub struct ReportBuilder {
    pairs: Vec<Pair>,
    /// Per pair of hosts, in name order.
    across: HashMap<(Arc<str>, Arc<str>), HostPairTally>,
}

/// Pairs between two hosts, and the global ids of each host's pages in them.
type HostPairTally = (u64, Vec<u64>, Vec<u64>);

impl ReportBuilder {
    /// An empty builder.
    pub fn new() -> ReportBuilder {
        ReportBuilder::default()
    }

    /// Adds pairs.
    pub fn add(&mut self, pairs: impl IntoIterator<Item = Pair>) {
        for mut p in pairs {
            if (&p.b.url, p.b.gid) < (&p.a.url, p.a.gid) {
                std::mem::swap(&mut p.a, &mut p.b);
            }
            if p.a.host != p.b.host {
                let (x, y) = if p.a.host < p.b.host {
                    (&p.a, &p.b)
                } else {
                    (&p.b, &p.a)
                };
                let entry = self
                    .across
                    .entry((x.host.clone(), y.host.clone()))
                    .or_default();
                entry.0 += 1;
                entry.1.push(x.gid);
                entry.2.push(y.gid);
            }
            self.pairs.push(p);
        }
    }

    /// The report; `host_pages` counts each host's pages in the input.
    pub fn finish(self, host_pages: &HashMap<String, u64>) -> Report {
        Report::merge(vec![self.finish_share(host_pages)])
    }

    /// This builder's share of a report, when each reducer of a job holds the pairs of its own host
    /// pairs ([`reducer_of`]): its pairs sorted, and the mirror evidence of its host pairs, complete
    /// and sorted. [`Report::merge`] makes the report of every reducer's share.
    pub fn finish_share(self, host_pages: &HashMap<String, u64>) -> ReportShare {
        let ReportBuilder { mut pairs, across } = self;
        pairs.sort_unstable_by(pair_order);

        // Mirror evidence: pairs across two hosts.
        let distinct = |mut v: Vec<u64>| {
            v.sort_unstable();
            v.dedup();
            v.len() as u64
        };
        let mut mirrors: Vec<MirrorEvidence> = across
            .into_iter()
            .map(|((x, y), (n, mx, my))| MirrorEvidence {
                pages: [
                    host_pages.get(&*x).copied().unwrap_or(0),
                    host_pages.get(&*y).copied().unwrap_or(0),
                ],
                hosts: [x.to_string(), y.to_string()],
                pairs: n,
                matched: [distinct(mx), distinct(my)],
            })
            .collect();
        mirrors.sort_unstable_by(mirror_order);
        ReportShare { pairs, mirrors }
    }
}

/// The order of a report's pairs: by their pages' URLs (then global ids, which no two pairs share).
fn pair_order(x: &Pair, y: &Pair) -> std::cmp::Ordering {
    (&x.a.url, &x.b.url, x.a.gid, x.b.gid).cmp(&(&y.a.url, &y.b.url, y.a.gid, y.b.gid))
}

/// The order of a report's mirror evidence: most pairs first, then by hosts (no two share them).
fn mirror_order(a: &MirrorEvidence, b: &MirrorEvidence) -> std::cmp::Ordering {
    b.pairs.cmp(&a.pairs).then_with(|| a.hosts.cmp(&b.hosts))
}

/// The reducer (of `reducers`) that holds a pair between pages on hosts `a` and `b`: every pair of
/// two hosts goes to the same one, whichever process routes it, so its mirror evidence is counted
/// whole there. (FNV-1a over the two names in order, mixed: the same in every process.)
pub fn reducer_of(a: &str, b: &str, reducers: usize) -> usize {
    let (x, y) = if a <= b { (a, b) } else { (b, a) };
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in x.bytes().chain([0xff]).chain(y.bytes()) {
        h = (h ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    }
    // FNV's low bits are weak (the last bit is the parity of the bytes'): mix the high ones down.
    h ^= h >> 32;
    h = h.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    h ^= h >> 29;
    (h % reducers.max(1) as u64) as usize
}

/// One reducer's share of a report ([`ReportBuilder::finish_share`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReportShare {
    /// Its pairs, in the report's order.
    pub pairs: Vec<Pair>,
    /// The mirror evidence of its host pairs, in the report's order.
    pub mirrors: Vec<MirrorEvidence>,
}

impl Report {
    /// The report of the reducers' shares: their pairs and mirror evidence merged in order (each
    /// share is sorted, and a stable sort of sorted runs merges them), and the clusters of all pairs.
    pub fn merge(shares: Vec<ReportShare>) -> Report {
        let mut pairs = Vec::with_capacity(shares.iter().map(|s| s.pairs.len()).sum());
        let mut mirrors = Vec::with_capacity(shares.iter().map(|s| s.mirrors.len()).sum());
        for share in shares {
            pairs.extend(share.pairs);
            mirrors.extend(share.mirrors);
        }
        pairs.sort_by(pair_order);
        mirrors.sort_by(mirror_order);

        // Clusters: union-find over the pages in pairs. A page is named by (pair, side); sorting
        // those by global id gives each page one dense index, without hashing or copying names.
        let side = |r: usize| {
            if r.is_multiple_of(2) {
                &pairs[r / 2].a
            } else {
                &pairs[r / 2].b
            }
        };
        let mut refs: Vec<(u64, usize)> = (0..pairs.len() * 2).map(|r| (side(r).gid, r)).collect();
        refs.sort_unstable();
        let mut node_of = vec![0u32; refs.len()];
        let mut first_ref: Vec<usize> = Vec::new();
        for (i, &(gid, r)) in refs.iter().enumerate() {
            if i == 0 || refs[i - 1].0 != gid {
                first_ref.push(r);
            }
            node_of[r] = (first_ref.len() - 1) as u32;
        }
        let mut uf = UnionFind::new(first_ref.len());
        for i in 0..pairs.len() {
            uf.union(node_of[2 * i], node_of[2 * i + 1]);
        }
        // Each cluster's first pair in the pairs' order. Two clusters of one size are ordered by
        // their first pages, (URL, global id); a cluster's first page is the first side of each of its
        // pairs it is in, so when the URLs differ, so do the first pairs, in the same order: clusters
        // sort on that index without reading a URL. Clusters whose first pages share a URL (the same
        // URL twice in the input) are next to each other then, and put in order by the pages.
        let mut first_pair = vec![u32::MAX; first_ref.len()];
        for i in 0..pairs.len() {
            let root = uf.find(node_of[2 * i]) as usize;
            if first_pair[root] == u32::MAX {
                first_pair[root] = i as u32;
            }
        }
        let mut keyed: Vec<(usize, u32, Cluster)> = uf
            .clusters(2)
            .into_iter()
            .map(|ids| {
                let first = first_pair[uf.find(ids[0]) as usize];
                let mut pages: Vec<PageRef> = ids
                    .iter()
                    .map(|&m| side(first_ref[m as usize]).clone())
                    .collect();
                pages.sort_unstable_by(|x, y| (&x.url, x.gid).cmp(&(&y.url, y.gid)));
                (usize::MAX - pages.len(), first, Cluster { pages })
            })
            .collect();
        keyed.sort_unstable_by_key(|&(size, first, _)| (size, first));
        let mut clusters: Vec<Cluster> = keyed.into_iter().map(|(_, _, c)| c).collect();
        let mut i = 0;
        while i < clusters.len() {
            let head = &clusters[i].pages;
            let same = clusters[i + 1..]
                .iter()
                .take_while(|c| c.pages.len() == head.len() && c.pages[0].url == head[0].url)
                .count();
            if same > 0 {
                clusters[i..=i + same].sort_unstable_by_key(|c| c.pages[0].gid);
            }
            i += same + 1;
        }
        Report {
            pairs,
            clusters,
            mirrors,
            stats: JobStats::default(),
        }
    }

    /// The report of `pairs`; `host_pages` counts each host's pages in the input.
    pub fn build(pairs: Vec<Pair>, host_pages: &HashMap<String, u64>) -> Report {
        let mut builder = ReportBuilder::new();
        builder.add(pairs);
        builder.finish(host_pages)
    }

    /// Writes the report as JSON lines: one `pair` per pair, one `cluster` per cluster, one `mirror` per
    /// host pair, and a `summary` last.
    pub fn write_jsonl(&self, mut out: impl Write) -> io::Result<()> {
        for p in &self.pairs {
            let line = json!({
                "type": "pair",
                "a": p.a.url,
                "b": p.b.url,
                "distance": p.distance,
                "jaccard": p.jaccard,
            });
            writeln!(out, "{line}")?;
        }
        for (i, c) in self.clusters.iter().enumerate() {
            let hosts: BTreeSet<&str> = c.pages.iter().map(|p| &*p.host).collect();
            let line = json!({
                "type": "cluster",
                "cluster": i,
                "size": c.pages.len(),
                "hosts": hosts,
                "pages": c.pages.iter().map(|p| &*p.url).collect::<Vec<_>>(),
            });
            writeln!(out, "{line}")?;
        }
        for m in &self.mirrors {
            let line = json!({
                "type": "mirror",
                "hosts": m.hosts,
                "pairs": m.pairs,
                "pages": m.pages,
                "matched": m.matched,
                "shares": m.shares().map(|s| (s * 1000.0).round() / 1000.0),
            });
            writeln!(out, "{line}")?;
        }
        let s = &self.stats;
        let line = json!({
            "type": "summary",
            "fingerprints": s.fingerprints,
            "workers": s.workers,
            "k": s.k,
            "tables": s.tables,
            "key_bits": s.key_bits,
            "candidates": s.candidates,
            "rejected_by_minhash": s.rejected_by_minhash,
            "without_sketches": s.without_sketches,
            "pairs": self.pairs.len(),
            "clusters": self.clusters.len(),
            "mirror_host_pairs": self.mirrors.len(),
        });
        writeln!(out, "{line}")?;
        out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(gid: u64, url: &str) -> PageRef {
        let host = url.split('/').nth(2).unwrap_or("").into();
        PageRef {
            gid,
            url: url.into(),
            host,
        }
    }

    fn pair(a: PageRef, b: PageRef) -> Pair {
        Pair {
            a,
            b,
            distance: 1,
            jaccard: None,
        }
    }

    #[test]
    fn pairs_make_clusters_and_mirror_evidence() {
        let pairs = vec![
            pair(page(5, "https://b.test/x"), page(1, "https://a.test/x")),
            pair(page(2, "https://a.test/y"), page(6, "https://b.test/y")),
            pair(page(6, "https://b.test/y"), page(7, "https://b.test/y2")),
            pair(page(3, "https://a.test/z"), page(4, "https://a.test/z2")),
        ];
        let hosts: HashMap<String, u64> = [("a.test".to_string(), 10), ("b.test".to_string(), 4)]
            .into_iter()
            .collect();
        let report = Report::build(pairs, &hosts);
        assert_eq!(
            &*report.pairs[0].a.url, "https://a.test/x",
            "a pair is written in URL order"
        );
        let sizes: Vec<usize> = report.clusters.iter().map(|c| c.pages.len()).collect();
        assert_eq!(sizes, vec![3, 2, 2]);
        assert_eq!(
            report.clusters[0]
                .pages
                .iter()
                .map(|p| &*p.url)
                .collect::<Vec<_>>(),
            vec!["https://a.test/y", "https://b.test/y", "https://b.test/y2"]
        );
        assert_eq!(report.mirrors.len(), 1);
        let m = &report.mirrors[0];
        assert_eq!(m.hosts, ["a.test".to_string(), "b.test".to_string()]);
        assert_eq!((m.pairs, m.pages, m.matched), (2, [10, 4], [2, 2]));
        assert_eq!(m.shares(), [0.2, 0.5]);

        let mut out = Vec::new();
        report.write_jsonl(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let kinds: Vec<String> = text
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["type"].to_string())
            .collect();
        assert_eq!(kinds.len(), 4 + 3 + 1 + 1);
        assert_eq!(kinds.last().unwrap(), "\"summary\"");
    }

    #[test]
    fn clusters_are_in_order_when_pages_share_a_url() {
        // Two clusters whose first pages share a URL: their first pairs are in the other order.
        let pairs = vec![
            pair(page(9, "https://a.test/x"), page(1, "https://c.test/z")),
            pair(page(2, "https://a.test/x"), page(3, "https://d.test/w")),
            pair(page(4, "https://b.test/x"), page(5, "https://b.test/y")),
        ];
        let report = Report::build(pairs, &HashMap::new());
        let firsts: Vec<(u64, &str)> = report
            .clusters
            .iter()
            .map(|c| (c.pages[0].gid, &*c.pages[0].url))
            .collect();
        assert_eq!(
            firsts,
            vec![
                (2, "https://a.test/x"),
                (9, "https://a.test/x"),
                (4, "https://b.test/x")
            ]
        );
        // Many pages on few URLs, in shares: the same report as one builder's, and the clusters in
        // (size, first page) order.
        let mix = |x: u64| crate::testutil::mix(x);
        let pairs: Vec<Pair> = (0..3_000u64)
            .map(|i| {
                let (g, h) = (mix(i) % 900, mix(i + 77_777) % 900);
                let h = if g == h { (h + 1) % 900 } else { h };
                let url = |g: u64| format!("https://h{}.test/{}", g % 7, mix(g) % 40);
                pair(page(g, &url(g)), page(h, &url(h)))
            })
            .collect();
        let whole = Report::build(pairs.clone(), &HashMap::new());
        let mut expected = whole.clusters.clone();
        expected.sort_by(|x, y| {
            y.pages.len().cmp(&x.pages.len()).then_with(|| {
                (&x.pages[0].url, x.pages[0].gid).cmp(&(&y.pages[0].url, y.pages[0].gid))
            })
        });
        assert_eq!(whole.clusters, expected);
        let mut builders = [
            ReportBuilder::new(),
            ReportBuilder::new(),
            ReportBuilder::new(),
        ];
        for p in pairs {
            builders[reducer_of(&p.a.host, &p.b.host, 3)].add([p]);
        }
        let shares: Vec<ReportShare> = builders
            .into_iter()
            .map(|b| b.finish_share(&HashMap::new()))
            .collect();
        assert_eq!(Report::merge(shares), whole);
    }
}
