//! Redirects: every hop returned, loops, long chains, the hook, bad locations.

use simcrawl_fetch::{Body, ErrorKind, FetchOptions, HopDecision};

use crate::support::{Reply, Server, config, fetcher};

#[tokio::test]
async fn every_hop_is_returned() {
    let server = Server::routes()
        .route("/a", |_, _| Reply::redirect(301, "/b"))
        .route("/b", |_, _| Reply::redirect(302, "c?x=1"))
        .route("/c", |_, _| Reply::html("<html>end</html>"))
        .start()
        .await;
    let page = fetcher(config())
        .fetch(&server.url("/a"), &FetchOptions::seed())
        .await
        .expect("fetch");
    assert_eq!(page.requested.as_str(), server.url("/a"));
    assert_eq!(page.final_url.as_str(), server.url("/c?x=1"));
    assert_eq!(page.status, 200);
    let summary: Vec<(String, u16, Option<&str>)> = page
        .hops
        .iter()
        .map(|h| (h.url.to_string(), h.status, h.location.as_deref()))
        .collect();
    assert_eq!(
        summary,
        vec![
            (server.url("/a"), 301, Some("/b")),
            (server.url("/b"), 302, Some("c?x=1")),
            (server.url("/c?x=1"), 200, None),
        ]
    );
    assert_eq!(page.redirects().len(), 2);
    assert_eq!(page.body.text(), Some("<html>end</html>"));
}

#[tokio::test]
async fn a_redirect_loop_is_an_error_with_the_hops() {
    let server = Server::routes()
        .route("/a", |_, _| Reply::redirect(302, "/b"))
        .route("/b", |_, _| Reply::redirect(302, "/a#again"))
        .start()
        .await;
    let err = fetcher(config())
        .fetch(&server.url("/a"), &FetchOptions::seed())
        .await
        .expect_err("a loop");
    assert_eq!(
        err.kind(),
        &ErrorKind::RedirectLoop {
            target: server.url("/a#again")
        }
    );
    assert_eq!(err.url(), server.url("/b"));
    let urls: Vec<String> = err.hops().iter().map(|h| h.url.to_string()).collect();
    assert_eq!(urls, vec![server.url("/a"), server.url("/b")]);
    assert_eq!((server.hits("/a"), server.hits("/b")), (1, 1));
    assert!(err.to_string().contains("redirect loop"));
}

fn chain(
    length: usize,
) -> impl Fn(&crate::support::server::Request, usize) -> Reply + Send + Sync + 'static {
    move |request, _| {
        let n: usize = request.path.trim_start_matches("/r").parse().unwrap_or(0);
        if n < length {
            Reply::redirect(307, &format!("/r{}", n + 1))
        } else {
            Reply::html("<html>end</html>")
        }
    }
}

#[tokio::test]
async fn a_long_chain_is_too_many_redirects() {
    let mut routes = Server::routes();
    for n in 0..=15 {
        routes = routes.route(&format!("/r{n}"), chain(15));
    }
    let server = routes.start().await;
    let err = fetcher(config())
        .fetch(&server.url("/r0"), &FetchOptions::seed())
        .await
        .expect_err("too long");
    assert_eq!(err.kind(), &ErrorKind::TooManyRedirects { limit: 10 });
    // Ten redirects followed: eleven responses, all of them redirects; /r11 never requested.
    assert_eq!(err.hops().len(), 11);
    assert!(err.hops().iter().all(|h| h.status == 307));
    assert_eq!(err.url(), server.url("/r10"));
    assert_eq!(server.hits("/r10"), 1);
    assert_eq!(server.hits("/r11"), 0);
}

#[tokio::test]
async fn the_redirect_limit_can_be_set_per_call() {
    let mut routes = Server::routes();
    for n in 0..=6 {
        routes = routes.route(&format!("/r{n}"), chain(6));
    }
    let server = routes.start().await;
    let fetcher = fetcher(config());
    let five = FetchOptions::seed().with_max_redirects(5);
    let err = fetcher
        .fetch(&server.url("/r0"), &five)
        .await
        .expect_err("six redirects, five allowed");
    assert_eq!(err.kind(), &ErrorKind::TooManyRedirects { limit: 5 });
    let six = FetchOptions::seed().with_max_redirects(6);
    let page = fetcher
        .fetch(&server.url("/r0"), &six)
        .await
        .expect("six allowed");
    assert_eq!(page.hops.len(), 7);
    let none = FetchOptions::seed().with_max_redirects(0);
    let err = fetcher
        .fetch(&server.url("/r0"), &none)
        .await
        .expect_err("none allowed");
    assert_eq!(err.hops().len(), 1);
}

#[tokio::test]
async fn the_hook_can_stop_at_a_known_target() {
    let server = Server::routes()
        .route("/new", |_, _| {
            Reply::redirect(301, "/known").header("Content-Type", "text/html")
        })
        .route("/known", |_, _| Reply::html("<html>already indexed</html>"))
        .start()
        .await;
    let known = server.url("/known");
    let mut asked = Vec::new();
    let page = fetcher(config())
        .fetch_with(
            &server.url("/new"),
            &FetchOptions::seed(),
            |target, hops| {
                asked.push((
                    target.to_string(),
                    hops.len(),
                    hops.last().map(|h| h.status),
                ));
                if target.as_str() == known {
                    HopDecision::Stop
                } else {
                    HopDecision::Follow
                }
            },
        )
        .await
        .expect("fetch");
    assert_eq!(asked, vec![(known.clone(), 1, Some(301))]);
    assert_eq!(page.status, 301);
    assert_eq!(
        page.unfollowed.as_ref().map(|u| u.as_str()),
        Some(known.as_str())
    );
    assert_eq!(page.final_url.as_str(), server.url("/new"));
    assert_eq!(
        page.body,
        Body::Skipped {
            content_type: Some("text/html".to_owned()),
            size: Some(0)
        }
    );
    assert_eq!(server.hits("/known"), 0);
}

#[tokio::test]
async fn an_unparsable_location_is_an_invalid_url() {
    let server = Server::routes()
        .route("/bad", |_, _| Reply::redirect(302, "http://[::1"))
        .start()
        .await;
    let err = fetcher(config())
        .fetch(&server.url("/bad"), &FetchOptions::seed())
        .await
        .expect_err("bad location");
    assert!(
        matches!(err.kind(), ErrorKind::InvalidUrl { reason } if reason.contains("http://[::1")),
        "{err}"
    );
    assert_eq!(err.hops().len(), 1);
    assert_eq!(err.hops()[0].location.as_deref(), Some("http://[::1"));
}

#[tokio::test]
async fn responses_that_are_not_followed_are_final() {
    // 300 Multiple Choices is not followed even with a Location; a 302 without one can't be.
    let server = Server::routes()
        .route("/300", |_, _| {
            Reply::new(300)
                .header("Location", "/elsewhere")
                .header("Content-Type", "text/html")
                .body("<html>pick</html>")
        })
        .route("/302", |_, _| {
            Reply::new(302)
                .header("Content-Type", "text/html")
                .body("<html>nowhere</html>")
        })
        .start()
        .await;
    let fetcher = fetcher(config());
    for (path, status, text) in [
        ("/300", 300, "<html>pick</html>"),
        ("/302", 302, "<html>nowhere</html>"),
    ] {
        let page = fetcher
            .fetch(&server.url(path), &FetchOptions::seed())
            .await
            .expect(path);
        assert_eq!(page.status, status);
        assert_eq!(page.hops.len(), 1);
        assert_eq!(page.unfollowed, None);
        assert_eq!(page.body.text(), Some(text));
    }
    assert_eq!(server.hits("/elsewhere"), 0);
}
