//! A page's link shape: which pages of its own site it links to, as two digests that a mirror's
//! copy of the page shares with its original and a new version of the page does not.
//!
//! A mirror copies a site's pages *and* their links: each page of the copy links the copy's
//! counterparts of the pages its original links to (Bharat and Broder's mirror detection
//! compares link structure as well as text). Two versions of one manual differ there first: the
//! new version's index, contents and reference pages link its new pages, while their text may
//! still resemble the old version's (one more entry in a long list). A mirror rule skips a
//! host's pages unfetched, and with them every link they hold: a page whose links differ from
//! its original's is no evidence for such a rule, and is evidence against it.
//!
//! The links compared are `<a>` and `<area>` links, without query, fragment or path parameters (a
//! tracking or session copy adds parameters to every link), each set taken two ways: as the page writes
//! them ([`Document::links_as_written`](simcrawl_extract::Document::links_as_written)): a
//! byte-identical copy, under another host or path prefix, or one that only adds text around
//! the original, writes what its original writes; and the links to the page's own host, resolved,
//! spelled as paths relative to the page's directory: a copy that rewrote its links (absolute
//! URLs of its own host, or its path prefix put in front) links `../x.html` from `/mirror/a/` as
//! the original does from `/a/`. Two pages link the same when either digest is equal.
//!
//! ```
//! use simcrawl_crawl::link_shape::LinkShape;
//! use url::Url;
//!
//! let shape = |page: &str, hrefs: &[&str]| {
//!     let page = Url::parse(page).unwrap();
//!     let links: Vec<Url> = hrefs.iter().map(|l| page.join(l).unwrap()).collect();
//!     // The hrefs as written, digested as the extractor does (`Document::links_as_written`).
//!     let written = simcrawl_extract::link_set_digest(
//!         hrefs.iter().map(|h| simcrawl_extract::link_written_hash(h)).collect(),
//!     );
//!     LinkShape::of(&page, links.iter(), written)
//! };
//! let original = shape("http://docs.test/a/b.html", &["c.html", "/x.html?v=1"]);
//! // A copy that rewrote its links under its prefix: the same relative paths.
//! let rewritten = shape("http://mirror.test/m/a/b.html", &["c.html", "/m/x.html"]);
//! assert!(rewritten.same_links(&original));
//! // A new version that links one page more.
//! let version = shape("http://v2.test/a/b.html", &["c.html", "/x.html", "d.html"]);
//! assert!(!version.same_links(&original));
//! ```

use simcrawl_extract::link_set_digest;
use url::Url;
use xxhash_rust::xxh3::xxh3_64_with_seed;

/// The digests of the links a page has (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LinkShape {
    /// Digest of the set of its links as written.
    pub written: u64,
    /// Digest of the sorted set of its links to its own host, as paths relative to its
    /// directory.
    pub relative: u64,
}

impl LinkShape {
    /// The shape of the page at `page` that links to `links` (resolved URLs; links to other
    /// hosts or ports are left out of the relative digest), and writes them as `written`
    /// digests them.
    pub fn of<'a>(page: &Url, links: impl IntoIterator<Item = &'a Url>, written: u64) -> LinkShape {
        // The page's directory, with its last `/`.
        let path = page.path();
        let dir = &path[..path.rfind('/').map_or(0, |i| i + 1)];
        let mut relative = Vec::new();
        for link in links {
            if link.host_str() != page.host_str()
                || link.port_or_known_default() != page.port_or_known_default()
            {
                continue;
            }
            // The directories the two paths share, then how many of the page's are climbed
            // (`../` each) and what is left of the link: one hash, no string made.
            // Less its path parameters, as written links are (`;jsessionid=`).
            let target = link.path();
            let target = target.split_once(';').map_or(target, |(path, _)| path);
            let same = dir
                .bytes()
                .zip(target.bytes())
                .take_while(|(a, b)| a == b)
                .count();
            let (dir, target) = (dir.as_bytes(), target.as_bytes());
            let shared = dir[..same]
                .iter()
                .rposition(|&b| b == b'/')
                .map_or(0, |i| i + 1);
            let climbs = dir[shared..].iter().filter(|&&b| b == b'/').count() as u64;
            relative.push(xxh3_64_with_seed(&target[shared..], climbs));
        }
        LinkShape {
            written,
            relative: link_set_digest(relative),
        }
    }

    /// Whether two pages link the same pages of their hosts, spelled either way.
    pub fn same_links(&self, other: &LinkShape) -> bool {
        self.written == other.written || self.relative == other.relative
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use simcrawl_extract::link_written_hash;

    /// A path of `segments` under `prefix`: `/prefix/s1/s2`.
    fn path(prefix: &[String], segments: &[String]) -> String {
        let all: Vec<&str> = prefix.iter().chain(segments).map(String::as_str).collect();
        format!("/{}", all.join("/"))
    }

    proptest! {
        /// A page and its links moved under any path prefix, on any host, have the relative
        /// digest they had; another set of links has another.
        #[test]
        fn moving_a_site_under_a_prefix_keeps_its_relative_links(
            page in prop::collection::vec("[ab]{1,2}", 1..4),
            links in prop::collection::vec(prop::collection::vec("[ab]{1,2}", 1..4), 0..6),
            prefix in prop::collection::vec("[mn]{1,3}", 1..3),
        ) {
            let shape = |host: &str, prefix: &[String], links: &[Vec<String>]| {
                let page = Url::parse(&format!("http://{host}{}", path(prefix, &page))).unwrap();
                let links: Vec<Url> = links
                    .iter()
                    .map(|l| Url::parse(&format!("http://{host}{}", path(prefix, l))).unwrap())
                    .collect();
                LinkShape::of(&page, links.iter(), 0)
            };
            let original = shape("o.test", &[], &links);
            prop_assert_eq!(original.relative, shape("m.test", &prefix, &links).relative);
            let mut more = links.clone();
            more.push(vec!["zz".to_owned()]);
            prop_assert_ne!(original.relative, shape("m.test", &prefix, &more).relative);
        }
    }

    /// The shape of a page whose links are written `hrefs`.
    fn shape(page: &str, hrefs: &[&str]) -> LinkShape {
        let page = Url::parse(page).unwrap();
        let links: Vec<Url> = hrefs.iter().map(|l| page.join(l).unwrap()).collect();
        let written = link_set_digest(hrefs.iter().map(|h| link_written_hash(h)).collect());
        LinkShape::of(&page, links.iter(), written)
    }

    #[test]
    fn order_repeats_fragments_queries_and_other_hosts_do_not_count() {
        let a = shape(
            "http://o.test/doc/p.html",
            &["q.html", "r.html#top", "http://elsewhere.test/ad", "q.html"],
        );
        let b = shape(
            "http://m.test/doc/p.html",
            &[
                "r.html?utm_source=mirror",
                "q.html;jsessionid=0A1B2C",
                "http://o.test/doc/x.html",
            ],
        );
        assert_eq!(a.relative, b.relative);
        assert!(a.same_links(&b));
    }

    #[test]
    fn a_link_more_or_less_or_elsewhere_is_another_shape() {
        let original = shape("http://o.test/a/i.html", &["b.html", "../c.html"]);
        for other in [
            shape("http://m.test/a/i.html", &["b.html"]),
            shape("http://m.test/a/i.html", &["b.html", "../c.html", "d.html"]),
            shape("http://m.test/a/i.html", &["b.html", "c.html"]),
        ] {
            assert!(!other.same_links(&original), "{other:?}");
        }
    }

    #[test]
    fn a_copy_under_a_deeper_prefix_matches_as_written_or_as_relative_paths() {
        // A link that climbs above the site's root (javadoc's `../../../../legal/`) resolves
        // to the root on the original and above the prefix on a byte-identical copy.
        let original = shape(
            "http://o.test/a/b/i.html",
            &["x.html", "/c.html", "../../../legal.html"],
        );
        let same_bytes = shape(
            "http://m.test/mirror/a/b/i.html",
            &["x.html", "/c.html", "../../../legal.html"],
        );
        assert_ne!(same_bytes.relative, original.relative);
        assert!(same_bytes.same_links(&original));
        // Its links rewritten under the prefix: the same relative links, not as written.
        let original = shape("http://o.test/a/i.html", &["b.html", "/c.html", "/"]);
        let rewritten = shape(
            "http://m.test/mirror/site/a/i.html",
            &["b.html", "/mirror/site/c.html", "/mirror/site/"],
        );
        assert_ne!(rewritten.written, original.written);
        assert!(rewritten.same_links(&original));
    }
}
