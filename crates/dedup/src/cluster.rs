//! Union-find over pairs: single-link clusters ("syntactic clusters" in Broder's terms). Every pair
//! judged similar joins two clusters; a cluster is everything connected by such pairs.

use std::collections::HashMap;

/// Union-find over dense indices `0..n`, with path halving and union by size.
#[derive(Debug, Clone, Default)]
pub struct UnionFind {
    parent: Vec<u32>,
    size: Vec<u32>,
}

impl UnionFind {
    /// `n` singletons.
    pub fn new(n: usize) -> Self {
        UnionFind {
            parent: (0..n as u32).collect(),
            size: vec![1; n],
        }
    }

    /// Adds a singleton and returns its index.
    pub fn push(&mut self) -> u32 {
        let i = self.parent.len() as u32;
        self.parent.push(i);
        self.size.push(1);
        i
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.parent.len()
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.parent.is_empty()
    }

    /// The representative of `x`'s cluster.
    pub fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            let grand = self.parent[self.parent[x as usize] as usize];
            self.parent[x as usize] = grand;
            x = grand;
        }
        x
    }

    /// Joins the clusters of `a` and `b`. Returns whether they were apart.
    pub fn union(&mut self, a: u32, b: u32) -> bool {
        let (mut ra, mut rb) = (self.find(a), self.find(b));
        if ra == rb {
            return false;
        }
        if self.size[ra as usize] < self.size[rb as usize] {
            std::mem::swap(&mut ra, &mut rb);
        }
        self.parent[rb as usize] = ra;
        self.size[ra as usize] += self.size[rb as usize];
        true
    }

    /// The clusters with at least `min_size` members, each sorted, largest cluster first (ties by
    /// smallest member).
    pub fn clusters(&mut self, min_size: usize) -> Vec<Vec<u32>> {
        // (root, member) sorted: each cluster is one run, its members in order.
        let mut by_root: Vec<(u32, u32)> = (0..self.parent.len() as u32)
            .map(|x| (self.find(x), x))
            .collect();
        by_root.sort_unstable();
        let mut out: Vec<Vec<u32>> = by_root
            .chunk_by(|a, b| a.0 == b.0)
            .filter(|c| c.len() >= min_size.max(1))
            .map(|c| c.iter().map(|&(_, x)| x).collect())
            .collect();
        out.sort_by(|a, b| b.len().cmp(&a.len()).then(a[0].cmp(&b[0])));
        out
    }
}

/// Clusters over arbitrary 64-bit ids (page ids, URL hashes): union-find with an id map.
#[derive(Debug, Clone, Default)]
pub struct Clusters {
    index: HashMap<u64, u32>,
    ids: Vec<u64>,
    uf: UnionFind,
}

impl Clusters {
    /// No ids yet.
    pub fn new() -> Self {
        Clusters::default()
    }

    fn slot(&mut self, id: u64) -> u32 {
        if let Some(&i) = self.index.get(&id) {
            return i;
        }
        let i = self.uf.push();
        self.index.insert(id, i);
        self.ids.push(id);
        i
    }

    /// Records that `a` and `b` are similar.
    pub fn join(&mut self, a: u64, b: u64) {
        let (ia, ib) = (self.slot(a), self.slot(b));
        self.uf.union(ia, ib);
    }

    /// Makes `id` known even if it joins nothing (it will form a singleton).
    pub fn add(&mut self, id: u64) {
        self.slot(id);
    }

    /// Whether `a` and `b` are in one cluster.
    pub fn same(&mut self, a: u64, b: u64) -> bool {
        match (self.index.get(&a).copied(), self.index.get(&b).copied()) {
            (Some(ia), Some(ib)) => self.uf.find(ia) == self.uf.find(ib),
            _ => a == b,
        }
    }

    /// The clusters of at least `min_size` ids, each sorted by id, largest first.
    pub fn groups(&mut self, min_size: usize) -> Vec<Vec<u64>> {
        let mut out: Vec<Vec<u64>> = self
            .uf
            .clusters(min_size)
            .into_iter()
            .map(|c| {
                let mut ids: Vec<u64> = c.into_iter().map(|i| self.ids[i as usize]).collect();
                ids.sort_unstable();
                ids
            })
            .collect();
        out.sort_by(|a, b| b.len().cmp(&a.len()).then(a[0].cmp(&b[0])));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_link_joins_chains() {
        let mut c = Clusters::new();
        c.join(10, 20);
        c.join(20, 30);
        c.join(100, 200);
        c.add(999);
        assert!(c.same(10, 30));
        assert!(!c.same(10, 100));
        assert_eq!(c.groups(2), vec![vec![10, 20, 30], vec![100, 200]]);
        assert_eq!(c.groups(1).len(), 3);
    }

    #[test]
    fn union_find_against_a_naive_labelling() {
        let pairs = [(0u32, 5u32), (5, 9), (2, 3), (7, 7), (3, 8), (1, 1)];
        let mut uf = UnionFind::new(10);
        let mut label: Vec<u32> = (0..10).collect();
        for &(a, b) in &pairs {
            uf.union(a, b);
            let (la, lb) = (label[a as usize], label[b as usize]);
            for l in label.iter_mut() {
                if *l == lb {
                    *l = la;
                }
            }
        }
        for a in 0..10u32 {
            for b in 0..10u32 {
                assert_eq!(
                    uf.find(a) == uf.find(b),
                    label[a as usize] == label[b as usize]
                );
            }
        }
    }
}
