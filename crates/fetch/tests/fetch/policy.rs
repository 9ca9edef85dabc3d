//! The address policy: schemes, link-local (literal and resolved), public to private.
//!
//! Tests may only use loopback, so a "public" site is played by `public.test`: pinned to
//! 127.0.0.1 with `FetchConfig::resolve`, and classed public with `FetchConfig::public_hosts`.
//! Link-local addresses are refused before any packet is sent, so they are safe to name here.

use std::net::IpAddr;

use simcrawl_fetch::{AddressClass, ErrorKind, FetchConfig, FetchOptions, PolicyReason};

use crate::support::server::Request;
use crate::support::{LOOPBACK, Reply, Server, config, fetcher, pin};

fn refused(reason: PolicyReason) -> ErrorKind {
    ErrorKind::RefusedByPolicy(reason)
}

/// The port the request was sent to, from its Host header.
fn port(request: &Request) -> String {
    let host = request.header("host").unwrap_or_default();
    host.rsplit_once(':')
        .map(|(_, p)| p.to_owned())
        .unwrap_or_default()
}

fn ip(s: &str) -> IpAddr {
    s.parse().expect("test address")
}

/// `public.test` plays a public site; `private.test` a private name; both on loopback.
fn public_site_config() -> FetchConfig {
    let mut config = config();
    pin(&mut config, "public.test");
    pin(&mut config, "private.test");
    config.public_hosts.push("public.test".to_owned());
    config
}

#[tokio::test]
async fn only_http_and_https_are_fetched() {
    let server = Server::routes()
        .route("/to-file", |_, _| {
            Reply::redirect(302, "file:///etc/passwd")
        })
        .start()
        .await;
    let fetcher = fetcher(config());
    for (url, scheme) in [
        ("ftp://127.0.0.1/file", "ftp"),
        ("file:///etc/passwd", "file"),
        ("javascript:alert(1)", "javascript"),
        ("data:text/html,<p>x</p>", "data"),
    ] {
        let err = fetcher
            .fetch(url, &FetchOptions::seed())
            .await
            .expect_err(url);
        assert_eq!(
            err.kind(),
            &refused(PolicyReason::Scheme(scheme.to_owned())),
            "{url}"
        );
        assert_eq!(err.attempts(), 0);
    }
    let err = fetcher
        .fetch(&server.url("/to-file"), &FetchOptions::seed())
        .await
        .expect_err("redirect to file:");
    assert_eq!(
        err.kind(),
        &refused(PolicyReason::Scheme("file".to_owned()))
    );
    assert_eq!(err.url(), "file:///etc/passwd");
    assert_eq!(err.hops().len(), 1);
}

#[tokio::test]
async fn link_local_literals_are_refused_before_any_request() {
    let fetcher = fetcher(FetchConfig {
        allow_private: true,
        ..config()
    });
    for (url, addr) in [
        (
            "http://169.254.169.254/latest/meta-data/",
            "169.254.169.254",
        ),
        ("http://[fe80::1]/", "fe80::1"),
        (
            "https://[::ffff:169.254.169.254]/",
            "::ffff:169.254.169.254",
        ),
    ] {
        let err = fetcher
            .fetch(url, &FetchOptions::seed())
            .await
            .expect_err(url);
        assert_eq!(
            err.kind(),
            &refused(PolicyReason::LinkLocal(ip(addr))),
            "{url}"
        );
        assert_eq!(err.attempts(), 0, "{url}");
    }
}

#[tokio::test]
async fn a_host_name_resolving_to_link_local_is_refused() {
    let mut config = FetchConfig {
        allow_private: true,
        retries: 0,
        ..config()
    };
    config
        .resolve
        .insert("metadata.test".to_owned(), vec![ip("169.254.169.254")]);
    // Mixed answers are refused whole: the client could pick either address.
    config
        .resolve
        .insert("mixed.test".to_owned(), vec![LOOPBACK, ip("fe80::1")]);
    // Declaring a host public does not lift the link-local rule.
    config.public_hosts.push("metadata.test".to_owned());
    let fetcher = fetcher(config);
    let err = fetcher
        .fetch("http://metadata.test/latest/", &FetchOptions::seed())
        .await
        .expect_err("link-local");
    assert_eq!(
        err.kind(),
        &refused(PolicyReason::LinkLocal(ip("169.254.169.254")))
    );
    assert_eq!(err.url(), "http://metadata.test/latest/");
    let err = fetcher
        .fetch("http://mixed.test/", &FetchOptions::seed())
        .await
        .expect_err("mixed");
    assert_eq!(err.kind(), &refused(PolicyReason::LinkLocal(ip("fe80::1"))));
}

#[tokio::test]
async fn a_public_site_may_not_redirect_to_a_private_address() {
    let server = Server::routes()
        .route("/to-literal", |r, _| {
            Reply::redirect(302, &format!("http://127.0.0.1:{}/secret", port(r)))
        })
        .route("/to-name", |r, _| {
            Reply::redirect(302, &format!("http://private.test:{}/secret", port(r)))
        })
        .route("/to-public", |r, _| {
            Reply::redirect(302, &format!("http://public.test:{}/secret", port(r)))
        })
        .route("/secret", |_, _| Reply::html("<html>internal</html>"))
        .start()
        .await;
    let fetcher = fetcher(public_site_config());
    let seed = FetchOptions::seed();

    // To a loopback literal: refused before the request.
    let err = fetcher
        .fetch(&server.url_as("public.test", "/to-literal"), &seed)
        .await
        .expect_err("public -> 127.0.0.1");
    assert_eq!(
        err.kind(),
        &refused(PolicyReason::PublicToPrivate(LOOPBACK))
    );
    assert_eq!(err.hops().len(), 1);
    assert_eq!(err.hops()[0].address_class, AddressClass::Public);
    assert_eq!(err.attempts(), 0);

    // To a name that resolves to loopback: refused by the resolver, before connecting.
    let err = fetcher
        .fetch(&server.url_as("public.test", "/to-name"), &seed)
        .await
        .expect_err("public -> private.test");
    assert_eq!(
        err.kind(),
        &refused(PolicyReason::PublicToPrivate(LOOPBACK))
    );
    assert_eq!(err.url(), server.url_as("private.test", "/secret"));
    assert_eq!(server.hits("/secret"), 0);

    // Public to public is fine.
    let page = fetcher
        .fetch(&server.url_as("public.test", "/to-public"), &seed)
        .await
        .expect("public -> public");
    assert_eq!(page.status, 200);
    assert_eq!(page.address_class, AddressClass::Public);
    assert_eq!(server.hits("/secret"), 1);

    // A private seed may redirect anywhere but link-local, including to a public site.
    let page = fetcher
        .fetch(&server.url("/to-public"), &seed)
        .await
        .expect("private -> public");
    assert_eq!(page.hops[0].address_class, AddressClass::Private);
    assert_eq!(page.address_class, AddressClass::Public);
}

#[tokio::test]
async fn allow_private_lifts_the_public_to_private_rule() {
    let server = Server::routes()
        .route("/to-name", |r, _| {
            Reply::redirect(302, &format!("http://private.test:{}/secret", port(r)))
        })
        .route("/secret", |_, _| Reply::html("<html>internal</html>"))
        .start()
        .await;
    let config = FetchConfig {
        allow_private: true,
        ..public_site_config()
    };
    let page = fetcher(config)
        .fetch(
            &server.url_as("public.test", "/to-name"),
            &FetchOptions::seed(),
        )
        .await
        .expect("allowed");
    assert_eq!(page.body.text(), Some("<html>internal</html>"));
    assert_eq!(page.address_class, AddressClass::Private);
}

#[tokio::test]
async fn links_follow_their_referrers_class() {
    let server = Server::routes()
        .route("/", |_, _| Reply::html("<html>loopback</html>"))
        .start()
        .await;
    let fetcher = fetcher(public_site_config());
    let url = server.url("/");

    let seed = fetcher
        .fetch(&url, &FetchOptions::seed())
        .await
        .expect("a seed may be loopback");
    assert_eq!(seed.address_class, AddressClass::Private);
    assert_eq!(seed.remote_addr.map(|a| a.ip()), Some(LOOPBACK));
    // A link from that private page to another private one is fine.
    fetcher
        .fetch(&url, &FetchOptions::new(seed.link_origin()))
        .await
        .expect("private -> private");

    // The same URL as a link on a public page is refused, by literal and by name.
    let err = fetcher
        .fetch(&url, &FetchOptions::link(AddressClass::Public))
        .await
        .expect_err("public -> loopback");
    assert_eq!(
        err.kind(),
        &refused(PolicyReason::PublicToPrivate(LOOPBACK))
    );
    let by_name = server.url_as("private.test", "/");
    let err = fetcher
        .fetch(&by_name, &FetchOptions::link(AddressClass::Public))
        .await
        .expect_err("public -> name");
    assert_eq!(
        err.kind(),
        &refused(PolicyReason::PublicToPrivate(LOOPBACK))
    );

    // A public page's link to a public site is fine.
    let public = fetcher
        .fetch(
            &server.url_as("public.test", "/"),
            &FetchOptions::link(AddressClass::Public),
        )
        .await
        .expect("public -> public");
    assert_eq!(
        public.link_origin(),
        simcrawl_fetch::Origin::Link(AddressClass::Public)
    );
    assert_eq!(server.hits("/"), 3);
}
