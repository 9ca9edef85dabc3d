//! The ground truth agrees with the pages: every link resolves, the sites are reachable, the
//! roles and helpers are consistent.

use std::collections::{BTreeSet, HashMap, VecDeque};

use simcrawl_testsite::{HostKind, Manifest, Outcome, Reply, Role, TestWeb};

use crate::util::{canonical_of, links, page, small, target};

/// Breadth-first crawl of one host from `start`, following only links to the same host,
/// skipping URLs for which `skip` is true. Returns the canonical URLs reached.
fn bfs(
    web: &TestWeb,
    manifest: &Manifest,
    host: HostKind,
    start: &str,
    skip: impl Fn(&str) -> bool,
) -> BTreeSet<String> {
    let base = manifest.base(host).unwrap().to_string();
    let mut seen = BTreeSet::new();
    let mut queue = VecDeque::from([format!("{base}{start}")]);
    while let Some(url) = queue.pop_front() {
        let Some(canonical) = canonical_of(manifest, &url) else {
            panic!("{url} is not in the manifest");
        };
        if skip(&url) || !seen.insert(canonical) {
            continue;
        }
        let html = page(web, host, &target(&url));
        for link in links(&url, &html) {
            if link.starts_with(&format!("{base}/")) {
                queue.push_back(link);
            }
        }
    }
    seen
}

#[test]
fn every_link_on_every_page_is_a_page_of_the_same_host() {
    let (web, manifest) = small();
    let mut checked = 0;
    for e in manifest.entries() {
        if matches!(e.role, Role::Redirect { .. }) {
            continue;
        }
        let html = page(&web, e.host, &e.target);
        for link in links(&e.url, &html) {
            let Some(to) = manifest.entry(&link) else {
                panic!("{link} (on {}) is not in the manifest", e.url);
            };
            assert_eq!(to.host, e.host, "{link} on {}", e.url);
            // And the server answers it with a page.
            assert!(
                matches!(web.respond(to.host, &target(&link)), Reply::Ok { .. }),
                "{link}"
            );
            checked += 1;
        }
    }
    assert!(checked > 5_000, "{checked} links checked");
}

#[test]
fn the_origin_is_fully_reachable_by_bfs_from_the_root() {
    let (web, manifest) = small();
    let all: BTreeSet<String> = manifest.origin_pages().map(|e| e.url.clone()).collect();
    assert_eq!(bfs(&web, &manifest, HostKind::Origin, "/", |_| false), all);
    // A polite crawler reaches everything but the disallowed section.
    let allowed: BTreeSet<String> = manifest
        .origin_pages()
        .filter(|e| e.outcome != Outcome::Disallowed)
        .map(|e| e.url.clone())
        .collect();
    let polite = bfs(&web, &manifest, HostKind::Origin, "/", |url| {
        target(url).starts_with("/private/")
    });
    assert_eq!(polite, allowed);
}

#[test]
fn every_copy_and_satellite_is_reachable_by_bfs_from_its_root() {
    let (web, manifest) = small();
    for host in [
        HostKind::ExactMirror,
        HostKind::Noisy,
        HostKind::Tracking,
        HostKind::Trap,
        HostKind::PrefixMirror,
    ] {
        let all: BTreeSet<String> = manifest
            .entries()
            .iter()
            .filter(|e| e.host == host && !matches!(e.role, Role::Redirect { .. }))
            .map(|e| e.url.clone())
            .collect();
        // The prefix mirror's root redirects into the prefix: start there.
        let start = if host == HostKind::PrefixMirror {
            "/mirror/site/"
        } else {
            "/"
        };
        let reached = bfs(&web, &manifest, host, start, |_| false);
        assert_eq!(reached, all, "{host}");
    }
}

#[test]
fn disallowed_pages_are_linked_from_public_pages_and_robots_forbids_them() {
    let (web, manifest) = small();
    let disallowed: BTreeSet<&str> = manifest.disallowed().into_iter().collect();
    // Two private pages, served by the origin and its three copies.
    assert_eq!(disallowed.len(), 2 * 4);
    let mut linked = BTreeSet::new();
    for e in manifest
        .origin_pages()
        .filter(|e| e.outcome != Outcome::Disallowed)
    {
        for link in links(&e.url, &page(&web, HostKind::Origin, &e.target)) {
            if disallowed.contains(link.as_str()) {
                linked.insert(link);
            }
        }
    }
    let origin_disallowed: BTreeSet<String> = manifest
        .origin_pages()
        .filter(|e| e.outcome == Outcome::Disallowed)
        .map(|e| e.url.clone())
        .collect();
    assert_eq!(linked, origin_disallowed);
    for (host, rule) in [
        (HostKind::Origin, "Disallow: /private/"),
        (HostKind::ExactMirror, "Disallow: /private/"),
        (HostKind::Noisy, "Disallow: /private/"),
        (HostKind::PrefixMirror, "Disallow: /mirror/site/private/"),
    ] {
        assert!(page(&web, host, "/robots.txt").contains(rule), "{host}");
    }
    for url in &disallowed {
        let t = target(url);
        assert!(t.starts_with("/private/") || t.starts_with("/mirror/site/private/"));
    }
    for host in [HostKind::Tracking, HostKind::Trap, HostKind::Redirect] {
        assert!(
            page(&web, host, "/robots.txt").ends_with("Disallow:\n"),
            "{host}"
        );
    }
}

#[test]
fn the_origin_links_every_kind_of_url_variant() {
    let (web, manifest) = small();
    let variants: Vec<&str> = manifest
        .entries()
        .iter()
        .filter(|e| e.outcome == Outcome::UrlVariant)
        .map(|e| e.target.as_str())
        .collect();
    assert!(variants.contains(&"/index.html"));
    assert!(
        variants
            .iter()
            .any(|t| t.ends_with("/index.html") && t.starts_with("/section/"))
    );
    assert!(variants.iter().any(|t| t.starts_with("/articles//")));
    assert!(variants.iter().any(|t| t.ends_with(".html?")));
    assert!(variants.iter().any(|t| t.contains("?sort=date&page=")));
    assert!(
        manifest
            .origin_pages()
            .any(|e| e.target.contains("?page=2&sort=date"))
    );
    // Fragments are linked too, and resolve to their page.
    let fragments = manifest
        .origin_pages()
        .filter(|e| e.role == Role::Origin)
        .flat_map(|e| crate::util::hrefs(&page(&web, HostKind::Origin, &e.target)))
        .filter(|h| h.contains('#'))
        .count();
    assert!(fragments > 0);
    // Each variant shows the document of the URL it spells, and is not distinct itself.
    for e in manifest
        .entries()
        .iter()
        .filter(|e| e.outcome == Outcome::UrlVariant)
    {
        let Role::UrlVariant { canonical } = &e.role else {
            panic!("{e:?}")
        };
        assert_eq!(
            manifest.document_of(&e.url),
            manifest.document_of(canonical)
        );
        assert!(manifest.is_distinct(canonical) && !manifest.is_distinct(&e.url));
        assert_eq!(
            web.respond(HostKind::Origin, &e.target),
            web.respond(HostKind::Origin, &target(canonical))
        );
    }
}

#[test]
fn helpers_agree_with_the_entries() {
    let (web, manifest) = small();
    let base = |k: HostKind| manifest.base(k).unwrap().to_string();

    // One Index URL per distinct document.
    let mut index_urls: HashMap<_, Vec<&str>> = HashMap::new();
    for e in manifest
        .entries()
        .iter()
        .filter(|e| e.outcome == Outcome::Index)
    {
        index_urls.entry(e.doc).or_default().push(&e.url);
    }
    let distinct = manifest.distinct_documents();
    assert_eq!(distinct.len(), index_urls.len());
    assert!(
        index_urls.values().all(|urls| urls.len() == 1),
        "{index_urls:?}"
    );
    let config = web.config();
    // Origin: home, about, listings, articles; satellites likewise.
    assert!(distinct.len() > config.articles + 2 * config.satellite_articles);

    // Copies share the document of their original, and only the original is distinct.
    let article = format!("{}/articles/3.html", base(HostKind::Origin));
    let doc = manifest.document_of(&article).unwrap();
    for (host, path) in [
        (HostKind::ExactMirror, "/articles/3.html"),
        (HostKind::PrefixMirror, "/mirror/site/articles/3.html"),
        (
            HostKind::Noisy,
            "/articles/3.html?sid=0123456789abcdef0123456789abcdef",
        ),
        (HostKind::Origin, "/articles/3/print"),
        (HostKind::Origin, "/articles//3.html#comments"),
        (HostKind::Redirect, "/articles/3.html"),
    ] {
        let url = format!("{}{path}", base(host));
        assert_eq!(manifest.document_of(&url), Some(doc), "{url}");
        assert!(!manifest.is_distinct(&url), "{url}");
    }
    assert!(manifest.is_distinct(&article));
    assert!(distinct.contains(&doc));
    assert_eq!(manifest.document(doc).unwrap().url, article);

    // Satellite pages resolve whatever parameters they carry.
    let trap = format!(
        "{}/articles/2.html?visit=0123456789abcdef01234567",
        base(HostKind::Trap)
    );
    let tracking = format!(
        "{}/articles/2.html?utm_medium=email&utm_source=x&gclid=abc",
        base(HostKind::Tracking)
    );
    assert!(manifest.is_distinct(&trap) && manifest.is_distinct(&tracking));
    assert_ne!(manifest.document_of(&trap), manifest.document_of(&tracking));

    // Unknown URLs resolve to nothing.
    for url in [
        format!("{}/robots.txt", base(HostKind::Origin)),
        format!("{}/articles/999.html", base(HostKind::Origin)),
        format!("{}/nothing", base(HostKind::Redirect)),
        "http://elsewhere.test/".to_string(),
        "not a url".to_string(),
    ] {
        assert_eq!(manifest.document_of(&url), None, "{url}");
    }

    // Near-duplicates and disallowed pages are documents of their own, not distinct ones.
    for p in manifest.near_duplicates() {
        assert!(!distinct.contains(&p.edited) && distinct.contains(&p.original));
        assert_eq!(
            manifest.entry(&p.edited_url).unwrap().outcome,
            Outcome::NearDuplicate
        );
    }
    for url in manifest.disallowed() {
        assert!(!distinct.contains(&manifest.document_of(url).unwrap()));
    }

    // Redirect entries name where they lead.
    for e in manifest
        .entries()
        .iter()
        .filter(|e| e.host == HostKind::Redirect)
    {
        let Role::Redirect { location } = &e.role else {
            panic!("{e:?}")
        };
        assert_eq!(location, &format!("{}{}", base(HostKind::Origin), e.target));
        assert_eq!(manifest.document_of(location), Some(e.doc));
    }

    // Seeds: the root of every host.
    let seeds = manifest.seeds();
    assert_eq!(seeds.len(), 7);
    for (seed, host) in seeds.iter().zip(HostKind::ALL) {
        assert_eq!(seed, &format!("{}/", base(host)));
    }
    assert!(manifest.seeds().iter().all(|s| manifest.entry(s).is_some()));

    // The summary names every host with its base URL.
    let summary = manifest.summary();
    for h in manifest.hosts() {
        assert!(
            summary.contains(h.kind.name()) && summary.contains(&h.base),
            "{summary}"
        );
    }
    assert!(summary.contains(&format!("{} origin pages", web.origin_page_count())));
}

#[test]
fn hosts_left_out_of_the_config_are_absent() {
    let web = TestWeb::generate(simcrawl_testsite::TestWebConfig {
        hosts: simcrawl_testsite::HostSet::of(&[HostKind::Trap]),
        ..simcrawl_testsite::TestWebConfig::small()
    });
    assert_eq!(
        web.hosts().collect::<Vec<_>>(),
        [HostKind::Origin, HostKind::Trap]
    );
    let manifest = crate::util::fake_manifest(&web);
    assert_eq!(manifest.seeds().len(), 2);
    assert!(
        manifest
            .entries()
            .iter()
            .all(|e| matches!(e.host, HostKind::Origin | HostKind::Trap))
    );
    assert_eq!(web.respond(HostKind::ExactMirror, "/"), Reply::NotFound);
    // The trap site's documents follow the origin's.
    let first_trap = manifest
        .entries()
        .iter()
        .find(|e| e.host == HostKind::Trap)
        .unwrap();
    assert_eq!(
        first_trap.doc.0 as usize,
        manifest
            .origin_pages()
            .map(|e| e.doc)
            .collect::<BTreeSet<_>>()
            .len()
    );
}
