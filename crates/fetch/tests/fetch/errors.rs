//! Errors: timeouts by phase, DNS, TLS, bodies cut short, bad URLs, bad configuration.

use std::time::Duration;

use simcrawl_fetch::{BuildError, ErrorKind, FetchConfig, FetchOptions, Fetcher, TimeoutPhase};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::{Reply, Server, config, encode, fetcher};

const SHORT: Duration = Duration::from_millis(300);

#[tokio::test]
async fn headers_then_silence_is_a_body_timeout() {
    let server = Server::routes()
        .route("/stall", |_, _| {
            Reply::new(200)
                .header("Content-Type", "text/html")
                .stall(1000)
        })
        .start()
        .await;
    let fetcher = fetcher(FetchConfig {
        total_timeout: SHORT,
        retries: 0,
        ..config()
    });
    let err = fetcher
        .fetch(&server.url("/stall"), &FetchOptions::seed())
        .await
        .expect_err("stalls");
    assert_eq!(
        err.kind(),
        &ErrorKind::Timeout {
            phase: TimeoutPhase::Body,
            limit: SHORT
        }
    );
    assert_eq!(err.url(), server.url("/stall"));
}

#[tokio::test]
async fn no_response_at_all_is_a_response_timeout() {
    let server = Server::routes()
        .route("/silent", |_, _| Reply::silent())
        .start()
        .await;
    let fetcher = fetcher(FetchConfig {
        total_timeout: SHORT,
        retries: 0,
        ..config()
    });
    let err = fetcher
        .fetch(&server.url("/silent"), &FetchOptions::seed())
        .await
        .expect_err("silent");
    assert_eq!(
        err.kind(),
        &ErrorKind::Timeout {
            phase: TimeoutPhase::Response,
            limit: SHORT
        }
    );
}

#[tokio::test]
async fn timeouts_are_retried() {
    let server = Server::routes()
        .route("/once", |_, hit| {
            if hit == 0 {
                Reply::silent()
            } else {
                Reply::html("<html>ok</html>")
            }
        })
        .start()
        .await;
    let fetcher = fetcher(FetchConfig {
        total_timeout: SHORT,
        retries: 1,
        ..config()
    });
    let page = fetcher
        .fetch(&server.url("/once"), &FetchOptions::seed())
        .await
        .expect("second try");
    assert_eq!(page.hops[0].attempts, 2);
    assert_eq!(page.body.text(), Some("<html>ok</html>"));
}

#[tokio::test]
async fn an_unknown_host_is_a_dns_error() {
    let mut config = config();
    config.resolve.insert("nowhere.test".to_owned(), Vec::new());
    let err = fetcher(config)
        .fetch("http://nowhere.test/", &FetchOptions::seed())
        .await
        .expect_err("no address");
    assert!(
        matches!(err.kind(), ErrorKind::Dns { host, .. } if host == "nowhere.test"),
        "{err}"
    );
    assert_eq!(err.attempts(), 1, "DNS failures are not retried");
}

#[tokio::test]
async fn a_failed_tls_handshake_is_a_tls_error() {
    // A plain-text server: it answers the ClientHello with an HTTP error.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let server = tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut hello = [0u8; 1024];
            let _ = stream.read(&mut hello).await;
            let _ = stream
                .write_all(b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n")
                .await;
        }
    });
    let err = fetcher(config())
        .fetch(&format!("https://{addr}/"), &FetchOptions::seed())
        .await
        .expect_err("not TLS");
    server.abort();
    assert!(matches!(err.kind(), ErrorKind::Tls(_)), "{err}");
    assert_eq!(err.attempts(), 1, "TLS failures are not retried");
}

#[tokio::test]
async fn a_body_cut_short_or_corrupt_is_a_body_error() {
    let server = Server::routes()
        .route("/short", |_, _| {
            Reply::new(200)
                .header("Content-Type", "text/html")
                .stream(std::iter::once(b"<html>".to_vec()), Some(1000))
        })
        .route("/corrupt", |_, _| {
            let mut gz = encode::gzip(&[b'a'; 10_000]);
            let middle = gz.len() / 2;
            gz[middle..].iter_mut().for_each(|b| *b = !*b);
            Reply::html("").header("Content-Encoding", "gzip").body(gz)
        })
        .start()
        .await;
    let fetcher = fetcher(config());
    for path in ["/short", "/corrupt"] {
        let err = fetcher
            .fetch(&server.url(path), &FetchOptions::seed())
            .await
            .expect_err(path);
        assert!(matches!(err.kind(), ErrorKind::Body(_)), "{path}: {err}");
        assert_eq!(server.hits(path), 1, "{path}: body errors are not retried");
    }
}

#[tokio::test]
async fn invalid_urls_are_typed() {
    let fetcher = fetcher(config());
    for url in ["not a url", "http://", "http://exa mple.com/", ""] {
        let err = fetcher
            .fetch(url, &FetchOptions::seed())
            .await
            .expect_err(url);
        assert!(
            matches!(err.kind(), ErrorKind::InvalidUrl { .. }),
            "{url}: {err}"
        );
        assert_eq!(err.url(), url);
    }
}

#[test]
fn a_bad_user_agent_is_a_build_error() {
    for ua in ["", "bad\nagent", "   "] {
        let config = FetchConfig {
            user_agent: ua.to_owned(),
            ..FetchConfig::default()
        };
        assert!(
            matches!(Fetcher::new(config), Err(BuildError::InvalidUserAgent(_))),
            "{ua:?}"
        );
    }
}

#[tokio::test]
async fn a_connection_that_never_opens_is_a_connect_timeout() {
    // A listener whose accept queue is full and never drained: Linux drops further SYNs, so the
    // next connection hangs in the handshake.
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket
        .bind("127.0.0.1:0".parse().expect("addr"))
        .expect("bind");
    let addr = socket.local_addr().expect("addr");
    let _listener = socket.listen(1).expect("listen");
    let mut fillers = Vec::new();
    for _ in 0..8 {
        match tokio::time::timeout(
            Duration::from_millis(100),
            tokio::net::TcpStream::connect(addr),
        )
        .await
        {
            Ok(Ok(stream)) => fillers.push(stream),
            _ => break, // the queue is full
        }
    }
    let fetcher = fetcher(FetchConfig {
        connect_timeout: SHORT,
        retries: 1,
        ..config()
    });
    let err = fetcher
        .fetch(&format!("http://{addr}/"), &FetchOptions::seed())
        .await
        .expect_err("never opens");
    assert_eq!(
        err.kind(),
        &ErrorKind::Timeout {
            phase: TimeoutPhase::Connect,
            limit: SHORT
        }
    );
    assert_eq!(err.attempts(), 2, "connect timeouts are retried");
}
