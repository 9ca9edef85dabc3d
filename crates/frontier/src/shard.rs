//! Which process of a sharded crawl owns a URL: the hosts are split between the processes by a
//! jump consistent hash (Lamping and Veach) of their registrable domain, so that every host of one
//! site, and so its politeness and its robots.txt, stays with one process, and adding a process
//! moves only a `1/n` share of the sites.

use simcrawl_url::CanonicalKey;
use std::net::{Ipv4Addr, Ipv6Addr};
use url::Url;
use xxhash_rust::xxh3::xxh3_64;

/// A URL of another process's site, admitted here for the first time: its owner queues it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forwarded {
    /// The process that owns its site.
    pub owner: u32,
    /// The URL to fetch, as written.
    pub url: String,
    /// Its link depth.
    pub depth: u32,
    /// The page, sitemap or redirect it was found through.
    pub referrer: Option<String>,
    /// How it was found.
    pub kind: crate::ViaKind,
    /// Its anchor words' hint ([`crate::Frontier::admit_hinted`]).
    pub hint: u64,
}

/// One process's share of a crawl split over `count` processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    index: u32,
    count: u32,
}

impl Shard {
    /// Process `index` of `count`; `None` unless `index < count`.
    pub fn new(index: u32, count: u32) -> Option<Shard> {
        (index < count).then_some(Shard { index, count })
    }

    /// This process's index.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// How many processes share the crawl.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// Whether this process owns `url`'s site.
    pub fn owns(&self, url: &Url) -> bool {
        self.count <= 1 || self.owner(url) == self.index
    }

    /// The process that owns `url`'s site.
    pub fn owner(&self, url: &Url) -> u32 {
        jump_hash(
            site_hash(
                url.host_str().unwrap_or_default(),
                url.port_or_known_default().unwrap_or(0),
            ),
            self.count,
        )
    }

    /// The process that owns the site of a canonical key. A learned rule can give a URL the key
    /// of another site's URL (a mirror's page the key of its original): that URL is fetched by
    /// its own site's process, and only that site's process may count the key as queued.
    pub fn owner_of_key(&self, key: &CanonicalKey) -> u32 {
        let default = if key.as_str().starts_with("https:") {
            443
        } else {
            80
        };
        jump_hash(
            site_hash(key.host(), key.port().unwrap_or(default)),
            self.count,
        )
    }
}

/// What a URL's owner is chosen by: its registrable domain (`docs.example.co.uk` and
/// `www.example.co.uk` are one site), or for an IP address or a one-label name (`localhost`) the
/// address and port, since servers on one address but different ports are different sites.
pub fn site_key(url: &Url) -> String {
    site_of(
        url.host_str().unwrap_or_default(),
        url.port_or_known_default().unwrap_or(0),
    )
}

/// `xxh3_64` of [`site_of`]'s string, without making it for an address and port: every URL a
/// sharded crawl admits is asked for its owner.
fn site_hash(host: &str, port: u16) -> u64 {
    if is_address_or_one_label(host) {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        h.update(host.as_bytes());
        h.update(b":");
        let mut buf = [0u8; 5];
        h.update(simcrawl_url::port_digits(port, &mut buf).as_bytes());
        return h.digest();
    }
    xxh3_64(site_of(host, port).as_bytes())
}

fn is_address_or_one_label(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    bare.parse::<Ipv4Addr>().is_ok() || bare.parse::<Ipv6Addr>().is_ok() || !host.contains('.')
}

fn site_of(host: &str, port: u16) -> String {
    if is_address_or_one_label(host) {
        return format!("{host}:{port}");
    }
    crate::registrable_domain(host).to_ascii_lowercase()
}

/// Lamping and Veach's jump consistent hash: the bucket in `0..buckets` of `key`; going from `n`
/// to `n + 1` buckets moves a `1/(n+1)` share of the keys, all into the new bucket.
pub fn jump_hash(mut key: u64, buckets: u32) -> u32 {
    let mut b: i64 = -1;
    let mut j: i64 = 0;
    while j < i64::from(buckets) {
        b = j;
        key = key.wrapping_mul(2_862_933_555_777_941_757).wrapping_add(1);
        j = ((b + 1) as f64 * ((1u64 << 31) as f64 / ((key >> 33) + 1) as f64)) as i64;
    }
    b.max(0) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn one_site_one_owner() {
        let shard = Shard::new(0, 5).unwrap();
        let a = shard.owner(&url("https://docs.example.co.uk/a"));
        assert_eq!(shard.owner(&url("http://www.example.co.uk/b?x=1")), a);
        assert_eq!(shard.owner(&url("https://EXAMPLE.co.uk/")), a);
        assert_eq!(site_key(&url("http://127.0.0.1:8080/x")), "127.0.0.1:8080");
        assert_eq!(site_key(&url("http://[::1]/x")), "[::1]:80");
        assert_eq!(site_key(&url("http://localhost:9/x")), "localhost:9");
        let canon = simcrawl_url::Canonicalizer::default();
        for u in [
            "http://127.0.0.1:8080/a?b=1",
            "http://127.0.0.1/a",
            "https://docs.example.co.uk/x",
            "http://[::1]:9/",
        ] {
            let key = canon.canonicalize(u, None).unwrap().key;
            assert_eq!(shard.owner_of_key(&key), shard.owner(&url(u)), "{u}");
        }
    }

    #[test]
    fn a_site_hashes_as_its_key_string_did() {
        // Stores of sharded crawls name their owners by this hash: it may not change.
        for (host, port) in [
            ("127.0.0.1", 0u16),
            ("127.1.0.7", 45943),
            ("localhost", 8),
            ("[::1]", 65535),
            ("docs.example.co.uk", 443),
            ("WWW.Example.COM", 80),
        ] {
            assert_eq!(
                site_hash(host, port),
                xxh3_64(site_of(host, port).as_bytes()),
                "{host}:{port}"
            );
        }
    }

    #[test]
    fn jump_hash_is_balanced_and_moves_little() {
        let keys: Vec<u64> = (0..30_000u64).map(|i| xxh3_64(&i.to_le_bytes())).collect();
        for n in [2u32, 3, 7] {
            let mut counts = vec![0usize; n as usize];
            for &k in &keys {
                counts[jump_hash(k, n) as usize] += 1;
            }
            let expected = keys.len() / n as usize;
            for c in counts {
                assert!(
                    c.abs_diff(expected) < expected / 10,
                    "{n}: {c} vs {expected}"
                );
            }
            // From n to n + 1 buckets a key stays or moves to the new bucket.
            for &k in &keys {
                let (before, after) = (jump_hash(k, n), jump_hash(k, n + 1));
                assert!(after == before || after == n);
            }
        }
        assert_eq!(jump_hash(42, 1), 0);
        assert_eq!(jump_hash(42, 0), 0);
    }

    #[test]
    fn a_shard_is_one_of_count() {
        assert!(Shard::new(2, 2).is_none());
        let all: Vec<Shard> = (0..3).map(|i| Shard::new(i, 3).unwrap()).collect();
        for s in [
            "http://a.test/",
            "http://127.0.0.1:1/",
            "http://b.example.org/x",
        ] {
            let u = url(s);
            assert_eq!(all.iter().filter(|sh| sh.owns(&u)).count(), 1);
        }
    }
}
