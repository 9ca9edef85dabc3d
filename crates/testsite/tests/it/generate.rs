//! Generation without a network: determinism, distinct texts, copies and versions.

use simcrawl_testsite::textgen::jaccard;
use simcrawl_testsite::{DocKind, HostKind, Outcome, Reply, Role, TestWeb, TestWebConfig};

use crate::util::{article_paragraphs, fake_manifest, hrefs, page, small, target, without_digits};

#[test]
fn same_config_gives_the_same_web_byte_for_byte() {
    let (a, ma) = small();
    let (b, mb) = small();
    assert_eq!(ma.entries(), mb.entries());
    assert_eq!(ma.documents(), mb.documents());
    for e in ma.entries() {
        // The noisy and trap hosts vary per request by design.
        if matches!(e.host, HostKind::Noisy | HostKind::Trap) {
            continue;
        }
        let t = target(&e.url);
        assert_eq!(a.respond(e.host, &t), b.respond(e.host, &t), "{}", e.url);
    }
    let other = TestWeb::generate(TestWebConfig {
        seed: 1,
        ..TestWebConfig::small()
    });
    assert_ne!(
        page(&a, HostKind::Origin, "/articles/1.html"),
        page(&other, HostKind::Origin, "/articles/1.html")
    );
}

#[test]
fn an_articles_text_does_not_depend_on_the_number_of_articles() {
    let web = |articles| {
        TestWeb::generate(TestWebConfig {
            articles,
            ..TestWebConfig::small()
        })
    };
    let (a, b) = (web(12), web(40));
    for id in [1, 5, 12] {
        let path = format!("/articles/{id}.html");
        let pa = article_paragraphs(&page(&a, HostKind::Origin, &path));
        let pb = article_paragraphs(&page(&b, HostKind::Origin, &path));
        // Inline links may point elsewhere; their anchor text, and all other text, is the same.
        assert_eq!(pa, pb, "{path}");
        assert!(!pa.is_empty());
    }
}

#[test]
fn different_articles_are_different_texts() {
    let (web, manifest) = small();
    let config = web.config().clone();
    let texts: Vec<String> = manifest
        .origin_pages()
        .filter(|e| manifest.document(e.doc).unwrap().kind == DocKind::Article)
        .filter(|e| e.role == Role::Origin)
        .map(|e| article_paragraphs(&page(&web, HostKind::Origin, &e.target)).join(" "))
        .collect();
    assert_eq!(texts.len(), config.articles);
    let (lo, hi) = config.article_words;
    for t in &texts {
        let words = t.split_whitespace().count();
        assert!((lo..=hi).contains(&words), "{words} words");
    }
    let mut worst: f64 = 0.0;
    for i in 0..texts.len() {
        for j in i + 1..texts.len() {
            worst = worst.max(jaccard(&texts[i], &texts[j]));
        }
    }
    assert!(worst < 0.3, "two articles share {worst:.2} of their words");
}

#[test]
fn edited_versions_change_a_few_sentences_of_their_original() {
    let (web, manifest) = small();
    let pairs = manifest.near_duplicates();
    assert_eq!(pairs.len(), 2, "articles 7 and 27 of 40");
    for p in pairs {
        let original = article_paragraphs(&page(&web, HostKind::Origin, &target(&p.original_url)));
        let edited = article_paragraphs(&page(&web, HostKind::Origin, &target(&p.edited_url)));
        let (o, e) = (original.join(" "), edited.join(" "));
        assert_ne!(o, e);
        assert_eq!(o.split_whitespace().count() as u32, p.total_words);
        let share = f64::from(p.edited_words) / f64::from(p.total_words);
        assert!((0.01..=0.06).contains(&share), "{p:?}");
        // Words of the edited text that are not at the same place in the original: no more
        // than the edit (rewritten sentences keep their length, appended ones add).
        let ow: Vec<&str> = o.split_whitespace().collect();
        let ew: Vec<&str> = e.split_whitespace().collect();
        assert!(ew.len() >= ow.len() && ew.len() - ow.len() <= p.edited_words as usize);
        assert!(jaccard(&o, &e) > 0.85, "{p:?}");
        assert_eq!(manifest.document(p.edited).unwrap().kind, DocKind::Edited);
        assert_eq!(
            manifest.document(p.edited).unwrap().title,
            manifest.document(p.original).unwrap().title
        );
    }
}

#[test]
fn print_versions_declare_their_article_canonical_and_show_its_text() {
    let (web, manifest) = small();
    let prints: Vec<_> = manifest
        .entries()
        .iter()
        .filter(|e| e.outcome == Outcome::Canonical)
        .collect();
    assert_eq!(prints.len(), 5, "one article in eight of 40");
    for e in prints {
        let Role::CanonicalVariant { canonical } = &e.role else {
            panic!("{e:?}")
        };
        let html = page(&web, HostKind::Origin, &e.target);
        let article = page(&web, HostKind::Origin, &target(canonical));
        assert!(html.contains(&format!(
            "<link rel=\"canonical\" href=\"{}\">",
            target(canonical)
        )));
        assert_eq!(article_paragraphs(&html), article_paragraphs(&article));
        assert_ne!(html, article, "another template");
        assert_eq!(manifest.document_of(canonical), Some(e.doc));
    }
}

#[test]
fn the_exact_mirror_is_byte_identical_and_the_prefix_mirror_rewrites_every_link() {
    let (web, manifest) = small();
    for e in manifest.origin_pages() {
        let origin = web.respond(HostKind::Origin, &e.target);
        assert!(matches!(origin, Reply::Ok { .. }));
        assert_eq!(web.respond(HostKind::ExactMirror, &e.target), origin);
        let mirrored = page(
            &web,
            HostKind::PrefixMirror,
            &format!("/mirror/site{}", e.target),
        );
        let original = page(&web, HostKind::Origin, &e.target);
        assert_eq!(article_paragraphs(&mirrored), article_paragraphs(&original));
        assert!(!hrefs(&mirrored).is_empty());
        for h in hrefs(&mirrored) {
            assert!(h.starts_with("/mirror/site/"), "{h} on {}", e.target);
        }
    }
    assert_eq!(
        web.respond(HostKind::PrefixMirror, "/"),
        Reply::Redirect {
            status: 302,
            host: HostKind::PrefixMirror,
            target: "/mirror/site/".into()
        }
    );
}

#[test]
fn two_noisy_responses_differ_only_in_the_noise() {
    let (web, _) = small();
    for path in ["/articles/3.html", "/", "/articles/3/print"] {
        let origin = page(&web, HostKind::Origin, path);
        let a = page(&web, HostKind::Noisy, path);
        let b = page(&web, HostKind::Noisy, path);
        assert_ne!(a, b, "{path}");
        assert_ne!(a, origin);
        assert_eq!(
            article_paragraphs(&a),
            article_paragraphs(&origin),
            "{path}"
        );
        assert_eq!(
            article_paragraphs(&b),
            article_paragraphs(&origin),
            "{path}"
        );
        // Noise: a session id in a hidden input and a footer link, a timestamp.
        if path != "/articles/3/print" {
            assert!(a.contains("<input type=\"hidden\" name=\"sid\" value=\""));
            assert!(a.contains("<a href=\"/about.html?sid="));
        }
        assert!(a.contains("Rendered at 20"));
        // Lines without ads, session ids and render info are the origin's, digits aside.
        let clean = |html: &str| -> Vec<String> {
            html.lines()
                .filter(|l| !l.contains("ad-slot") && !l.contains("advert"))
                .filter(|l| !l.contains("render-info"))
                .map(|l| {
                    let l = match l.find("<input type=\"hidden\"") {
                        Some(i) => {
                            let end = l[i..].find('>').map_or(l.len(), |e| i + e + 1);
                            format!("{}{}", &l[..i], &l[end..])
                        }
                        None => l.to_string(),
                    };
                    let l = match l.find(" | <a href=\"/about.html?sid=") {
                        Some(i) => {
                            let end = l[i..].find("</a>").map_or(l.len(), |e| i + e + 4);
                            format!("{}{}", &l[..i], &l[end..])
                        }
                        None => l,
                    };
                    without_digits(&l)
                })
                .collect()
        };
        assert_eq!(clean(&a), clean(&origin), "{path}");
    }
}

#[test]
fn in_article_ads_sit_between_paragraphs_in_ad_classes() {
    let (web, _) = small();
    let html = page(&web, HostKind::Noisy, "/articles/3.html");
    let start = html.find("<article").unwrap();
    let end = html.find("</article>").unwrap();
    let article = &html[start..end];
    let ads = article.matches("<div class=\"ad-slot\">").count();
    assert!((1..=3).contains(&ads), "{ads} ads");
    for line in article.lines().filter(|l| l.contains("Advertisement")) {
        assert!(line.starts_with("<div class=\"ad-slot\">"), "{line}");
    }
    // With Noise::Template, the article itself is clean.
    let quiet = TestWeb::generate(TestWebConfig {
        noise: simcrawl_testsite::Noise::Template,
        ..TestWebConfig::small()
    });
    let html = page(&quiet, HostKind::Noisy, "/articles/3.html");
    let article = &html[html.find("<article").unwrap()..html.find("</article>").unwrap()];
    assert!(!article.contains("Advertisement"));
    assert!(html.contains("class=\"advert\""));
}

#[test]
fn trap_links_carry_a_fresh_visit_value_on_every_response() {
    let (web, _) = small();
    let visits = |html: &str| -> Vec<String> {
        hrefs(html)
            .iter()
            .map(|h| {
                let (_, v) = h.split_once("visit=").unwrap_or_else(|| panic!("{h}"));
                assert_eq!(v.len(), 24, "{h}");
                assert!(v.bytes().all(|b| b.is_ascii_hexdigit()));
                v.to_string()
            })
            .collect()
    };
    let a = page(&web, HostKind::Trap, "/");
    let b = page(&web, HostKind::Trap, "/");
    let (va, vb) = (visits(&a), visits(&b));
    assert!(va.iter().all(|v| *v == va[0]), "one value per response");
    assert_ne!(va[0], vb[0]);
    assert_eq!(a.replace(&va[0], ""), b.replace(&vb[0], ""));
    // The parameter is ignored: any value shows the same page.
    let strip = |html: String| {
        let v = visits(&html)[0].clone();
        html.replace(&v, "")
    };
    assert_eq!(
        strip(page(
            &web,
            HostKind::Trap,
            "/articles/2.html?visit=0123456789abcdef01234567"
        )),
        strip(page(&web, HostKind::Trap, "/articles/2.html"))
    );
}

#[test]
fn tracking_links_all_carry_tracking_parameters_in_varying_orders() {
    let (web, manifest) = small();
    let mut first_params = std::collections::BTreeSet::new();
    let mut names = std::collections::BTreeSet::new();
    for e in manifest
        .entries()
        .iter()
        .filter(|e| e.host == HostKind::Tracking)
    {
        let html = page(&web, HostKind::Tracking, &e.target);
        for h in hrefs(&html) {
            let (_, query) = h.split_once('?').unwrap_or_else(|| panic!("{h}"));
            let params: Vec<&str> = query
                .split('&')
                .map(|p| p.split('=').next().unwrap())
                .collect();
            assert!(
                params
                    .iter()
                    .any(|p| p.starts_with("utm_") || *p == "gclid" || *p == "fbclid"),
                "{h}"
            );
            first_params.insert(params[0].to_string());
            names.extend(params.iter().map(|p| p.to_string()));
        }
    }
    for name in [
        "utm_source",
        "utm_medium",
        "utm_campaign",
        "gclid",
        "fbclid",
    ] {
        assert!(names.contains(name), "{name} never used");
    }
    assert!(first_params.len() >= 4, "orders vary: {first_params:?}");
}

#[test]
fn the_default_web_has_about_four_hundred_origin_pages() {
    let web = TestWeb::generate(TestWebConfig::default());
    let n = web.origin_page_count();
    assert!((380..=440).contains(&n), "{n}");
    let manifest = fake_manifest(&web);
    assert_eq!(manifest.origin_pages().count(), n);
    assert_eq!(manifest.near_duplicates().len(), 16);
}

#[test]
fn a_lazy_web_renders_each_page_as_the_eager_web_does() {
    let (eager, manifest) = small();
    let lazy = TestWeb::generate(TestWebConfig {
        lazy: true,
        ..TestWebConfig::small()
    });
    let mut compared = 0;
    for e in manifest.entries() {
        if matches!(e.host, HostKind::Noisy | HostKind::Trap) {
            continue; // they vary per request by design
        }
        let t = target(&e.url);
        assert_eq!(
            eager.respond(e.host, &t),
            lazy.respond(e.host, &t),
            "{}",
            e.url
        );
        compared += 1;
    }
    assert!(compared > 100, "{compared} pages compared");
}
