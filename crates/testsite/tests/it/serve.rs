//! Every host over loopback, the request log, shutdown.

use reqwest::{Client, StatusCode, redirect::Policy};
use simcrawl_testsite::{HostKind, Outcome, RunningWeb, TestWeb, TestWebConfig};
use tokio::net::TcpStream;

use crate::util::{article_paragraphs, hrefs};

async fn serve() -> RunningWeb {
    TestWeb::generate(TestWebConfig::small())
        .serve()
        .await
        .expect("serve on loopback")
}

/// A client that follows no redirect and never uses a proxy.
fn client() -> Client {
    Client::builder()
        .redirect(Policy::none())
        .no_proxy()
        .build()
        .expect("client")
}

async fn get(client: &Client, url: &str) -> (StatusCode, reqwest::header::HeaderMap, String) {
    let r = client.get(url).send().await.expect("GET");
    let status = r.status();
    let headers = r.headers().clone();
    (status, headers, r.text().await.expect("body"))
}

fn url(web: &RunningWeb, host: HostKind, target: &str) -> String {
    web.url(host, target).expect("host in web")
}

#[tokio::test]
async fn every_host_is_on_its_own_loopback_port() {
    let web = serve().await;
    assert_eq!(web.hosts().len(), 7);
    let mut ports = std::collections::BTreeSet::new();
    for h in web.hosts() {
        let addr = web.addr(h.kind).unwrap();
        assert!(addr.ip().is_loopback());
        assert!(ports.insert(addr.port()));
        assert_eq!(h.base, format!("http://{addr}"));
    }
    assert_eq!(web.seeds(), web.manifest().seeds());
    web.shutdown().await;
}

#[tokio::test]
async fn mirrors_noise_redirects_and_errors_behave_over_http() {
    let web = serve().await;
    let c = client();
    let path = "/articles/3.html";

    // Exact mirror: the same bytes.
    let (status, headers, origin) = get(&c, &url(&web, HostKind::Origin, path)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["content-type"], "text/html; charset=utf-8");
    let (_, _, mirror) = get(&c, &url(&web, HostKind::ExactMirror, path)).await;
    assert_eq!(mirror, origin);

    // Prefix mirror: the same text under the prefix; its root redirects there.
    let (_, _, prefixed) = get(
        &c,
        &url(&web, HostKind::PrefixMirror, "/mirror/site/articles/3.html"),
    )
    .await;
    assert_eq!(article_paragraphs(&prefixed), article_paragraphs(&origin));
    let (status, headers, _) = get(&c, &url(&web, HostKind::PrefixMirror, "/")).await;
    assert_eq!(status, StatusCode::FOUND);
    assert_eq!(
        headers["location"],
        url(&web, HostKind::PrefixMirror, "/mirror/site/").as_str()
    );

    // Noisy host: other bytes on every request, the same paragraphs.
    let (_, _, a) = get(&c, &url(&web, HostKind::Noisy, path)).await;
    let (_, _, b) = get(&c, &url(&web, HostKind::Noisy, path)).await;
    assert_ne!(a, b);
    assert_eq!(article_paragraphs(&a), article_paragraphs(&origin));
    assert_eq!(article_paragraphs(&b), article_paragraphs(&origin));

    // Redirect host: 301 to the same path and query on the origin.
    let target = "/section//x/?b=2&a=1";
    let (status, headers, _) = get(&c, &url(&web, HostKind::Redirect, target)).await;
    assert_eq!(status, StatusCode::MOVED_PERMANENTLY);
    assert_eq!(
        headers["location"],
        url(&web, HostKind::Origin, target).as_str()
    );

    // Trap host: a fresh visit= on every response.
    let (_, _, t1) = get(&c, &url(&web, HostKind::Trap, "/")).await;
    let (_, _, t2) = get(&c, &url(&web, HostKind::Trap, "/")).await;
    let visit = |html: &str| hrefs(html)[0].split_once("visit=").unwrap().1.to_string();
    assert_ne!(visit(&t1), visit(&t2));

    // robots.txt, 404, 405.
    let (status, headers, robots) = get(&c, &url(&web, HostKind::Origin, "/robots.txt")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["content-type"], "text/plain; charset=utf-8");
    assert!(robots.contains("User-agent: *\nDisallow: /private/\n"));
    let (_, _, robots) = get(&c, &url(&web, HostKind::Redirect, "/robots.txt")).await;
    assert!(robots.ends_with("Disallow:\n"));
    let (status, _, _) = get(&c, &url(&web, HostKind::Origin, "/no/such/page.html")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let r = c
        .post(url(&web, HostKind::Origin, "/"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(r.headers()["allow"], "GET, HEAD");
    let r = c
        .head(url(&web, HostKind::Origin, path))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(r.text().await.unwrap(), "");

    web.shutdown().await;
}

#[tokio::test]
async fn the_origin_announces_a_sitemap_of_its_canonical_pages() {
    let web = serve().await;
    let c = client();
    let (_, _, robots) = get(&c, &url(&web, HostKind::Origin, "/robots.txt")).await;
    let sitemap = url(&web, HostKind::Origin, "/sitemap.xml");
    assert!(robots.ends_with(&format!("Disallow: /private/\n\nSitemap: {sitemap}\n")));
    let (status, headers, xml) = get(&c, &sitemap).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["content-type"], "application/xml; charset=utf-8");
    assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset "));
    let locs: Vec<String> = xml
        .split("<loc>")
        .skip(1)
        .map(|l| l.split("</loc>").next().unwrap().replace("&amp;", "&"))
        .collect();
    let manifest = web.manifest();
    let expected: Vec<&str> = manifest
        .origin_pages()
        .filter(|e| matches!(e.outcome, Outcome::Index | Outcome::NearDuplicate))
        .map(|e| e.url.as_str())
        .collect();
    assert_eq!(locs, expected);
    // Only the origin has one.
    let (status, _, _) = get(&c, &url(&web, HostKind::ExactMirror, "/sitemap.xml")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    web.shutdown().await;
}

#[tokio::test]
async fn the_request_log_counts_every_request() {
    let web = serve().await;
    let c = client();
    let log = web.request_log();
    let article = url(&web, HostKind::Origin, "/articles/3.html");
    let mirrored = url(&web, HostKind::ExactMirror, "/articles/3.html");
    let variant = url(&web, HostKind::Origin, "/articles//3.html");
    let trap = url(&web, HostKind::Trap, "/?visit=00112233445566778899aabb");
    for u in [&article, &article, &mirrored, &variant, &trap] {
        get(&c, u).await;
    }
    get(&c, &url(&web, HostKind::Origin, "/missing")).await;

    assert_eq!(log.count(&article), 2);
    assert_eq!(log.count(&mirrored), 1);
    assert_eq!(log.count(&variant), 1);
    assert_eq!(log.count(&trap), 1);
    assert_eq!(
        log.count(&url(&web, HostKind::Trap, "/")),
        0,
        "targets are exact"
    );
    assert_eq!(log.total(), 6);
    assert_eq!(log.host_total(HostKind::Origin), 4);
    assert_eq!(log.host_total(HostKind::Trap), 1);
    let missing = log
        .snapshot()
        .into_iter()
        .find(|r| r.target == "/missing")
        .unwrap();
    assert_eq!((missing.status, missing.count), (404, 1));

    // Fetches per document: the article was fetched four times in three spellings and hosts.
    let manifest = web.manifest();
    let doc = manifest.document_of(&article).unwrap();
    let per_doc = log.fetches_per_document(manifest);
    assert_eq!(per_doc[&doc], 4);
    assert_eq!(
        per_doc.values().sum::<u64>(),
        5,
        "the 404 belongs to no document"
    );

    // Nothing disallowed was fetched.
    assert!(manifest.disallowed().iter().all(|u| log.count(u) == 0));
    get(&c, manifest.disallowed()[0]).await;
    assert_eq!(
        manifest
            .disallowed()
            .iter()
            .map(|u| log.count(u))
            .sum::<u64>(),
        1
    );
    assert_eq!(
        manifest.entry(manifest.disallowed()[0]).unwrap().outcome,
        Outcome::Disallowed
    );

    web.shutdown().await;
    // The log outlives the servers.
    assert_eq!(log.total(), 7);
}

#[tokio::test]
async fn shutdown_closes_every_listener() {
    let web = serve().await;
    let c = client();
    // A kept-alive connection is open when shutdown starts.
    get(&c, &url(&web, HostKind::Origin, "/")).await;
    let addrs: Vec<_> = web
        .hosts()
        .iter()
        .map(|h| web.addr(h.kind).unwrap())
        .collect();
    web.shutdown().await;
    for addr in addrs {
        assert!(
            TcpStream::connect(addr).await.is_err(),
            "{addr} still accepts"
        );
    }
}

#[tokio::test]
async fn dropping_the_running_web_stops_it() {
    let web = serve().await;
    let addr = web.addr(HostKind::Origin).unwrap();
    assert!(TcpStream::connect(addr).await.is_ok());
    drop(web);
    // The accept loops are aborted; their listeners close once the runtime drops the tasks,
    // which it does the next times it gets control.
    let mut closed = false;
    for _ in 0..1000 {
        tokio::task::yield_now().await;
        if TcpStream::connect(addr).await.is_err() {
            closed = true;
            break;
        }
    }
    assert!(closed, "{addr} still accepts after drop");
}

#[test]
fn serve_outside_a_runtime_is_an_error() {
    let web = TestWeb::generate(TestWebConfig {
        articles: 3,
        ..TestWebConfig::small()
    });
    // Poll the future by hand, outside tokio.
    let mut future = std::pin::pin!(web.serve());
    let waker = std::task::Waker::noop();
    let mut cx = std::task::Context::from_waker(waker);
    match future.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(Err(e)) => {
            assert!(
                matches!(e, simcrawl_testsite::TestSiteError::NoRuntime),
                "{e}"
            );
        }
        other => panic!("expected NoRuntime, got {:?}", other.map(|r| r.map(|_| ()))),
    }
}
