//! Charsets: BOM, header, meta, detector, default; wrong and missing declarations.

use encoding_rs::{SHIFT_JIS, WINDOWS_1251};
use simcrawl_fetch::{Body, CharsetSource, FetchOptions};

use crate::support::{Reply, Server, config, fetcher, pin};

/// The text, charset name and source of a fetched HTML body.
fn decoded(body: &Body) -> (&str, &'static str, CharsetSource, bool) {
    match body {
        Body::Text {
            text,
            charset,
            charset_source,
            had_errors,
        } => (text, charset, *charset_source, *had_errors),
        other => panic!("expected text, got {other:?}"),
    }
}

#[tokio::test]
async fn shift_jis_declared_only_in_meta() {
    let html = "<html><head><meta charset=\"Shift_JIS\"><title>日本語</title></head><body>こんにちは、世界</body></html>";
    let (bytes, _, unmappable) = SHIFT_JIS.encode(html);
    assert!(!unmappable);
    let bytes = bytes.into_owned();
    let server = Server::routes()
        .route("/", move |_, _| Reply::html(bytes.clone()))
        .start()
        .await;
    let page = fetcher(config())
        .fetch(&server.url("/"), &FetchOptions::seed())
        .await
        .expect("fetch");
    let (text, charset, source, had_errors) = decoded(&page.body);
    assert_eq!(
        (charset, source, had_errors),
        ("Shift_JIS", CharsetSource::Meta, false)
    );
    assert_eq!(text, html);
}

#[tokio::test]
async fn windows_1251_without_any_declaration_is_detected() {
    let html = "<html><body><p>Съешь же ещё этих мягких французских булок, да выпей чаю. \
                Широкая электрификация южных губерний даст мощный толчок подъёму сельского хозяйства.</p></body></html>";
    let (bytes, _, _) = WINDOWS_1251.encode(html);
    let bytes = bytes.into_owned();
    let server = Server::routes()
        .route("/", move |_, _| Reply::html(bytes.clone()))
        .start()
        .await;
    // The .ru host name is the detector's hint; it is pinned to 127.0.0.1.
    let mut config = config();
    pin(&mut config, "news.ru");
    let page = fetcher(config)
        .fetch(&server.url_as("news.ru", "/"), &FetchOptions::seed())
        .await
        .expect("fetch");
    let (text, charset, source, _) = decoded(&page.body);
    assert_eq!((charset, source), ("windows-1251", CharsetSource::Detected));
    assert_eq!(text, html);
}

#[tokio::test]
async fn latin1_declared_utf8_in_the_header_keeps_the_header_and_replaces() {
    // The header wins (it comes first in the order); the é byte is invalid UTF-8 and becomes U+FFFD.
    let server = Server::routes()
        .route("/", |_, _| {
            Reply::html(b"<html><meta charset=iso-8859-1><p>caf\xe9 cr\xe8me</p></html>".to_vec())
                .content_type("text/html; charset=utf-8")
        })
        .start()
        .await;
    let page = fetcher(config())
        .fetch(&server.url("/"), &FetchOptions::seed())
        .await
        .expect("fetch");
    let (text, charset, source, had_errors) = decoded(&page.body);
    assert_eq!(
        (charset, source, had_errors),
        ("UTF-8", CharsetSource::Header, true)
    );
    assert_eq!(
        text,
        "<html><meta charset=iso-8859-1><p>caf\u{fffd} cr\u{fffd}me</p></html>"
    );
}

#[tokio::test]
async fn bom_overrides_the_header() {
    let html = "<html><p>Ελληνικά and ASCII</p></html>";
    let mut bytes = vec![0xff, 0xfe]; // UTF-16LE BOM
    bytes.extend(html.encode_utf16().flat_map(u16::to_le_bytes));
    let server = Server::routes()
        .route("/", move |_, _| {
            Reply::html(bytes.clone()).content_type("text/html; charset=iso-8859-1")
        })
        .start()
        .await;
    let page = fetcher(config())
        .fetch(&server.url("/"), &FetchOptions::seed())
        .await
        .expect("fetch");
    // UTF-16 is full of NUL bytes; that must not make it "binary".
    assert!(!page.sniffed_binary);
    let (text, charset, source, had_errors) = decoded(&page.body);
    assert_eq!(
        (charset, source, had_errors),
        ("UTF-16LE", CharsetSource::Bom, false)
    );
    assert_eq!(text, html);
}

#[tokio::test]
async fn unknown_header_label_falls_through_to_meta() {
    let server = Server::routes()
        .route("/", |_, _| {
            Reply::html(b"<meta http-equiv=Content-Type content='text/html; charset=koi8-r'><p>\xf0\xd2\xc9\xd7\xc5\xd4</p>".to_vec())
                .content_type("text/html; charset=x-no-such-charset")
        })
        .start()
        .await;
    let page = fetcher(config())
        .fetch(&server.url("/"), &FetchOptions::seed())
        .await
        .expect("fetch");
    let (text, charset, source, _) = decoded(&page.body);
    assert_eq!((charset, source), ("KOI8-R", CharsetSource::Meta));
    assert!(text.ends_with("<p>Привет</p>"), "{text}");
}

#[tokio::test]
async fn ascii_without_declaration_is_the_utf8_default() {
    let server = Server::routes()
        .route("/", |_, _| Reply::html("<html><p>plain</p></html>"))
        .start()
        .await;
    let page = fetcher(config())
        .fetch(&server.url("/"), &FetchOptions::seed())
        .await
        .expect("fetch");
    let (text, charset, source, _) = decoded(&page.body);
    assert_eq!(
        (text, charset, source),
        ("<html><p>plain</p></html>", "UTF-8", CharsetSource::Default)
    );
}
