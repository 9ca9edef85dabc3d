//! Content encodings, the body cap (bombs, endless bodies), content types and sniffing, headers.

use simcrawl_fetch::{Body, CharsetSource, DEFAULT_USER_AGENT, FetchConfig, FetchOptions, NonHtml};

use crate::support::{Reply, Server, config, encode, fetcher};

const PAGE: &str =
    "<!doctype html><html><head><title>Zürich</title></head><body>Grüezi</body></html>";

#[tokio::test]
async fn gzip_brotli_deflate_and_zstd_bodies_are_decoded() {
    let html = || Reply::html("").content_type("text/html; charset=utf-8");
    let server = Server::routes()
        .route("/gzip", move |_, _| {
            html()
                .header("Content-Encoding", "gzip")
                .body(encode::gzip(PAGE.as_bytes()))
        })
        .route("/br", move |_, _| {
            html()
                .header("Content-Encoding", "br")
                .body(encode::brotli_stored(PAGE.as_bytes()))
        })
        .route("/deflate", move |_, _| {
            html()
                .header("Content-Encoding", "deflate")
                .body(encode::zlib(PAGE.as_bytes()))
        })
        .route("/zstd", move |_, _| {
            html()
                .header("Content-Encoding", "zstd")
                .body(encode::zstd_raw(PAGE.as_bytes()))
        })
        .route("/identity", move |_, _| html().body(PAGE))
        .start()
        .await;
    let fetcher = fetcher(config());
    for path in ["/gzip", "/br", "/deflate", "/zstd", "/identity"] {
        let page = fetcher
            .fetch(&server.url(path), &FetchOptions::seed())
            .await
            .expect(path);
        assert_eq!(page.status, 200, "{path}");
        assert_eq!(page.body.text(), Some(PAGE), "{path}");
        assert!(!page.truncated, "{path}");
        assert_eq!(page.size.decoded, PAGE.len() as u64, "{path}");
        // The client drops Content-Length when it decompresses: the wire size is then unknown.
        let wire = if path == "/identity" {
            Some(PAGE.len() as u64)
        } else {
            None
        };
        assert_eq!(page.size.wire, wire, "{path}");
    }
    let request = &server.requests()[0];
    let accepted = request
        .header("accept-encoding")
        .expect("Accept-Encoding sent");
    for coding in ["gzip", "br", "deflate", "zstd"] {
        assert!(
            accepted.contains(coding),
            "{coding} missing from {accepted:?}"
        );
    }
}

#[tokio::test]
async fn user_agent_and_accept_are_sent() {
    let server = Server::routes()
        .route("/", |_, _| Reply::html(PAGE))
        .start()
        .await;
    fetcher(config())
        .fetch(&server.url("/"), &FetchOptions::seed())
        .await
        .expect("fetch");
    let custom = FetchConfig {
        user_agent: "TestBot/0.1 (+mailto:test@example.invalid)".to_owned(),
        ..config()
    };
    let custom = fetcher(custom);
    assert_eq!(custom.product_token(), "TestBot");
    custom
        .fetch(&server.url("/"), &FetchOptions::seed())
        .await
        .expect("fetch");
    let requests = server.requests();
    assert_eq!(requests[0].method, "GET");
    assert_eq!(requests[0].header("user-agent"), Some(DEFAULT_USER_AGENT));
    assert!(
        requests[0]
            .header("accept")
            .is_some_and(|a| a.starts_with("text/html"))
    );
    assert_eq!(
        requests[1].header("user-agent"),
        Some("TestBot/0.1 (+mailto:test@example.invalid)")
    );
}

#[tokio::test]
async fn gzip_bomb_stops_at_the_cap() {
    // 16 MiB of HTML gzipped to a few KiB with a real encoder; the cap is 1 MiB.
    let mut page = b"<html><body>".to_vec();
    page.resize(16 << 20, b'a');
    let bomb = encode::gzip(&page);
    assert!(bomb.len() < 100_000, "the bomb is {} bytes", bomb.len());
    let server = Server::routes()
        .route("/bomb", move |_, _| {
            Reply::html("")
                .header("Content-Encoding", "gzip")
                .body(bomb.clone())
        })
        .start()
        .await;
    let fetcher = fetcher(FetchConfig {
        body_cap: 1 << 20,
        ..config()
    });
    let page = fetcher
        .fetch(&server.url("/bomb"), &FetchOptions::seed())
        .await
        .expect("fetch");
    assert!(page.truncated);
    assert_eq!(page.size.decoded, 1 << 20);
    let text = page.body.text().expect("HTML decoded");
    assert_eq!(text.len(), 1 << 20);
    assert!(text.starts_with("<html><body>aaa"));
}

#[tokio::test]
async fn streamed_gigabyte_gzip_bomb_stops_at_the_default_cap() {
    // 1 GiB of zeros as one gzip member, produced only as fast as the client reads it.
    let server = Server::routes()
        .route("/bomb", |_, _| {
            Reply::new(200)
                .header("Content-Type", "application/octet-stream")
                .header("Content-Encoding", "gzip")
                .stream(encode::gzip_zeros(1 << 30), None)
        })
        .start()
        .await;
    let options = FetchOptions::seed().with_non_html(NonHtml::Keep);
    let page = fetcher(config())
        .fetch(&server.url("/bomb"), &options)
        .await
        .expect("fetch");
    assert!(page.truncated);
    let cap = FetchConfig::default().body_cap;
    match &page.body {
        Body::Bytes(bytes) => {
            assert_eq!(bytes.len(), cap);
            assert!(bytes.iter().all(|&b| b == 0));
        }
        other => panic!("expected bytes, got {other:?}"),
    }
}

#[tokio::test]
async fn gigabyte_body_stops_at_the_cap() {
    const GIB: u64 = 1 << 30;
    let server = Server::routes()
        .route("/huge", |_, _| {
            let mut first = b"<html><body>".to_vec();
            first.resize(64 * 1024, b'x');
            let rest = std::iter::repeat_n(vec![b'x'; 64 * 1024], (GIB / (64 * 1024)) as usize - 1);
            Reply::new(200)
                .header("Content-Type", "text/html")
                .stream(std::iter::once(first).chain(rest), Some(GIB))
        })
        .start()
        .await;
    let page = fetcher(config())
        .fetch(&server.url("/huge"), &FetchOptions::seed())
        .await
        .expect("fetch");
    assert!(page.truncated);
    let cap = FetchConfig::default().body_cap;
    assert_eq!(page.size.decoded, cap as u64);
    assert_eq!(page.size.wire, Some(GIB));
    assert_eq!(page.headers.content_length, Some(GIB));
    assert_eq!(page.body.text().map(str::len), Some(cap));
}

#[tokio::test]
async fn cap_is_exact_and_per_call() {
    let server = Server::routes()
        .route("/1000", |_, _| Reply::html(vec![b'a'; 1000]))
        .route("/1001", |_, _| Reply::html(vec![b'a'; 1001]))
        .start()
        .await;
    let fetcher = fetcher(config());
    let capped = FetchOptions::seed().with_body_cap(1000);
    let exact = fetcher
        .fetch(&server.url("/1000"), &capped)
        .await
        .expect("fetch");
    assert!(!exact.truncated);
    assert_eq!(exact.size.decoded, 1000);
    let over = fetcher
        .fetch(&server.url("/1001"), &capped)
        .await
        .expect("fetch");
    assert!(over.truncated);
    assert_eq!(over.body.text().map(str::len), Some(1000));
    // Without the override, the configured cap applies.
    let whole = fetcher
        .fetch(&server.url("/1001"), &FetchOptions::seed())
        .await
        .expect("fetch");
    assert!(!whole.truncated);
}

#[tokio::test]
async fn non_html_is_skipped_unless_asked_for() {
    let server = Server::routes()
        .route("/image.png", |_, _| {
            Reply::new(200)
                .header("Content-Type", "image/png")
                .body(vec![0x89; 100_000])
        })
        .route("/robots.txt", |_, _| {
            Reply::new(200)
                .header("Content-Type", "text/plain")
                .body("User-agent: *\nDisallow: /private\n")
        })
        .start()
        .await;
    let fetcher = fetcher(config());
    let image = fetcher
        .fetch(&server.url("/image.png"), &FetchOptions::seed())
        .await
        .expect("fetch");
    assert_eq!(
        image.body,
        Body::Skipped {
            content_type: Some("image/png".to_owned()),
            size: Some(100_000)
        }
    );
    assert_eq!(image.size.decoded, 0);

    let keep = FetchOptions::seed()
        .with_non_html(NonHtml::Keep)
        .with_body_cap(500 << 10)
        .with_max_redirects(5);
    let robots = fetcher
        .fetch(&server.url("/robots.txt"), &keep)
        .await
        .expect("fetch");
    assert_eq!(
        robots.body,
        Body::Bytes("User-agent: *\nDisallow: /private\n".into())
    );
    let image = fetcher
        .fetch(&server.url("/image.png"), &keep)
        .await
        .expect("fetch");
    assert!(matches!(&image.body, Body::Bytes(b) if b.len() == 100_000));
}

#[tokio::test]
async fn body_without_content_type_is_sniffed() {
    let server = Server::routes()
        .route("/page", |_, _| {
            Reply::new(200).body("\n  <!DOCTYPE HTML><html><p>sniffed</p></html>")
        })
        .route("/doc", |_, _| {
            Reply::new(200).body(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n".repeat(1000))
        })
        .start()
        .await;
    let fetcher = fetcher(config());
    let page = fetcher
        .fetch(&server.url("/page"), &FetchOptions::seed())
        .await
        .expect("fetch");
    assert_eq!(
        page.body.text(),
        Some("\n  <!DOCTYPE HTML><html><p>sniffed</p></html>")
    );
    let doc = fetcher
        .fetch(&server.url("/doc"), &FetchOptions::seed())
        .await
        .expect("fetch");
    assert_eq!(
        doc.body,
        Body::Skipped {
            content_type: None,
            size: Some(15_000)
        }
    );
    assert!(doc.size.decoded <= 15_000);
    let keep = FetchOptions::seed().with_non_html(NonHtml::Keep);
    let doc = fetcher
        .fetch(&server.url("/doc"), &keep)
        .await
        .expect("fetch");
    assert!(matches!(&doc.body, Body::Bytes(b) if b.len() == 15_000));
}

#[tokio::test]
async fn binary_labelled_as_html_is_not_decoded() {
    // A PNG header and some bytes, served as text/html: NUL bytes give it away.
    let mut png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR".to_vec();
    png.extend((0..4096u32).map(|i| (i * 7 % 256) as u8));
    let png_body = png.clone();
    // High bytes without NUL: decoded (lossily or not), never a panic.
    let noise: Vec<u8> = (0..4096u32).map(|i| 0x80 + (i * 13 % 128) as u8).collect();
    let noise_body = noise.clone();
    let server = Server::routes()
        .route("/png", move |_, _| Reply::html(png_body.clone()))
        .route("/noise", move |_, _| {
            Reply::html(noise_body.clone()).content_type("text/html; charset=utf-8")
        })
        .start()
        .await;
    let fetcher = fetcher(config());
    let page = fetcher
        .fetch(&server.url("/png"), &FetchOptions::seed())
        .await
        .expect("fetch");
    assert!(page.sniffed_binary);
    assert_eq!(page.body, Body::Bytes(png.into()));
    let page = fetcher
        .fetch(&server.url("/noise"), &FetchOptions::seed())
        .await
        .expect("fetch");
    assert!(!page.sniffed_binary);
    match &page.body {
        Body::Text {
            text,
            charset_source,
            had_errors,
            ..
        } => {
            assert_eq!(*charset_source, CharsetSource::Header);
            assert!(*had_errors);
            assert!(text.contains('\u{fffd}'));
        }
        other => panic!("expected text, got {other:?}"),
    }
}

#[tokio::test]
async fn xhtml_is_decoded_as_html() {
    let server = Server::routes()
        .route("/x", |_, _| {
            Reply::new(200)
                .header("Content-Type", "application/xhtml+xml")
                .body(
                    b"<?xml version=\"1.0\" encoding=\"windows-1252\"?><html><p>caf\xe9</p></html>"
                        .to_vec(),
                )
        })
        .start()
        .await;
    let page = fetcher(config())
        .fetch(&server.url("/x"), &FetchOptions::seed())
        .await
        .expect("fetch");
    match page.body {
        Body::Text {
            text,
            charset,
            charset_source,
            ..
        } => {
            assert!(text.contains("café"));
            assert_eq!(
                (charset, charset_source),
                ("windows-1252", CharsetSource::Meta)
            );
        }
        other => panic!("expected text, got {other:?}"),
    }
}

#[tokio::test]
async fn headers_of_interest_are_recorded() {
    let server = Server::routes()
        .route("/", |_, _| {
            Reply::html(PAGE)
                .header("Link", "<https://example.com/canonical>; rel=\"canonical\"")
                .header("Link", "<https://example.com/style.css>; rel=preload")
                .header("X-Robots-Tag", "noindex")
                .header("X-Robots-Tag", "otherbot: nofollow")
                .header("ETag", "\"v1\"")
                .header("Last-Modified", "Wed, 21 Oct 2015 07:28:00 GMT")
        })
        .start()
        .await;
    let page = fetcher(config())
        .fetch(&server.url("/"), &FetchOptions::seed())
        .await
        .expect("fetch");
    let h = &page.headers;
    assert_eq!(h.content_type.as_deref(), Some("text/html"));
    assert_eq!(h.content_length, Some(PAGE.len() as u64));
    assert_eq!(h.link.len(), 2);
    assert!(h.link[0].contains("rel=\"canonical\""));
    assert_eq!(
        h.x_robots_tag,
        vec!["noindex".to_owned(), "otherbot: nofollow".to_owned()]
    );
    assert_eq!(h.etag.as_deref(), Some("\"v1\""));
    assert_eq!(
        h.last_modified.as_deref(),
        Some("Wed, 21 Oct 2015 07:28:00 GMT")
    );
    assert_eq!(h.location, None);
    assert_eq!(page.hops.len(), 1);
    assert!(page.timings.total >= page.timings.ttfb);
}
