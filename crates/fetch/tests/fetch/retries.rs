//! Retries: 429 and 5xx, Retry-After (seconds and dates, below and above the cap), backoff, giving
//! up. The waits use tokio's clock; these tests pause it, so a 30 s Retry-After takes no real time.

use std::time::Duration;

use simcrawl_fetch::{ErrorKind, FetchConfig, FetchOptions};
use tokio::time::Instant;

use crate::support::{Reply, Server, config, fetcher};

#[tokio::test(start_paused = true)]
async fn retry_after_seconds_is_waited_out() {
    let server = Server::routes()
        .route("/busy", |_, hit| {
            if hit == 0 {
                Reply::new(429).header("Retry-After", "30")
            } else {
                Reply::html("<html>ok</html>")
            }
        })
        .start()
        .await;
    let started = Instant::now();
    let page = fetcher(config())
        .fetch(&server.url("/busy"), &FetchOptions::seed())
        .await
        .expect("fetch");
    let waited = started.elapsed();
    assert_eq!(page.status, 200);
    assert_eq!(page.hops[0].attempts, 2);
    assert_eq!(page.retry_after, None);
    assert!(
        waited >= Duration::from_secs(30) && waited < Duration::from_secs(31),
        "{waited:?}"
    );
    assert_eq!(server.hits("/busy"), 2);
}

#[tokio::test(start_paused = true)]
async fn retry_after_date_is_measured_from_the_date_header() {
    let server = Server::routes()
        .route("/busy", |_, hit| {
            if hit == 0 {
                Reply::new(503)
                    .header("Date", "Wed, 21 Oct 2015 07:28:00 GMT")
                    .header("Retry-After", "Wed, 21 Oct 2015 07:28:20 GMT")
            } else {
                Reply::html("<html>ok</html>")
            }
        })
        .start()
        .await;
    let started = Instant::now();
    let page = fetcher(config())
        .fetch(&server.url("/busy"), &FetchOptions::seed())
        .await
        .expect("fetch");
    let waited = started.elapsed();
    assert_eq!(page.status, 200);
    assert!(
        waited >= Duration::from_secs(20) && waited < Duration::from_secs(21),
        "{waited:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn retry_after_above_the_cap_is_reported_not_waited() {
    let server = Server::routes()
        .route("/busy", |_, _| {
            Reply::new(429).header("Retry-After", "3600")
        })
        .start()
        .await;
    let started = Instant::now();
    let page = fetcher(config())
        .fetch(&server.url("/busy"), &FetchOptions::seed())
        .await
        .expect("fetch");
    assert_eq!(page.status, 429);
    assert_eq!(page.retry_after, Some(Duration::from_secs(3600)));
    assert_eq!(page.headers.retry_after.as_deref(), Some("3600"));
    assert_eq!(page.hops[0].attempts, 1);
    assert_eq!(server.hits("/busy"), 1);
    assert!(started.elapsed() < Duration::from_secs(1));
}

#[tokio::test(start_paused = true)]
async fn server_errors_are_retried_with_exponential_backoff() {
    let server = Server::routes()
        .route("/flaky", |_, hit| match hit {
            0 => Reply::new(500),
            1 => Reply::new(502),
            _ => Reply::html("<html>ok</html>"),
        })
        .start()
        .await;
    let started = Instant::now();
    // The defaults: 2 retries, 500 ms then 1 s.
    let page = fetcher(FetchConfig::default())
        .fetch(&server.url("/flaky"), &FetchOptions::seed())
        .await
        .expect("fetch");
    let waited = started.elapsed();
    assert_eq!(page.status, 200);
    assert_eq!(page.hops[0].attempts, 3);
    assert!(
        waited >= Duration::from_millis(1500) && waited < Duration::from_millis(1600),
        "{waited:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn when_retries_run_out_the_last_response_is_returned() {
    let server = Server::routes()
        .route("/down", |_, _| {
            Reply::new(503)
                .header("Retry-After", "5")
                .header("Content-Type", "text/html")
                .body("<html>down</html>")
        })
        .start()
        .await;
    let page = fetcher(config())
        .fetch(&server.url("/down"), &FetchOptions::seed())
        .await
        .expect("fetch");
    assert_eq!(page.status, 503);
    assert_eq!(page.hops[0].attempts, 3);
    assert_eq!(server.hits("/down"), 3);
    // The last Retry-After was not waited out: the frontier gets it.
    assert_eq!(page.retry_after, Some(Duration::from_secs(5)));
    assert_eq!(page.body.text(), Some("<html>down</html>"));
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    let server = Server::routes()
        .route("/gone", |_, _| Reply::new(410))
        .start()
        .await;
    let page = fetcher(config())
        .fetch(&server.url("/gone"), &FetchOptions::seed())
        .await
        .expect("fetch");
    assert_eq!(page.status, 410);
    assert_eq!(server.hits("/gone"), 1);
    let page = fetcher(config())
        .fetch(&server.url("/missing"), &FetchOptions::seed())
        .await
        .expect("fetch");
    assert_eq!(page.status, 404);
    assert_eq!(server.hits("/missing"), 1);
}

#[tokio::test]
async fn connection_refused_is_a_connect_error_after_the_retries() {
    // A port that was just free: bind, note it, close.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/", listener.local_addr().expect("addr"));
    drop(listener);
    let err = fetcher(config())
        .fetch(&url, &FetchOptions::seed())
        .await
        .expect_err("refused");
    assert!(matches!(err.kind(), ErrorKind::Connect(_)), "{err}");
    assert_eq!(err.attempts(), 3);
    assert_eq!(err.url(), url);
    assert!(err.to_string().contains(&url));
}
