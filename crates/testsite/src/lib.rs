//! simcrawl's built-in test web: a generated multi-host site served on loopback, with its
//! ground truth.
//!
//! The demo (`simcrawl demo`), the crawl's integration tests and the benchmarks all crawl this
//! web. It holds every kind of duplicate simcrawl is built to skip, each one known in advance:
//!
//! - an **origin** site ([`HostKind::Origin`]): a few hundred to a few thousand pages of
//!   generated articles on a shared template (navigation, header, sidebar, related links,
//!   footer), in sections with paged listings, fully reachable by a breadth-first crawl from
//!   `/`. It also has print versions with `rel=canonical` (`/articles/<id>/print`), edited
//!   versions that are real near-duplicates (`/articles/<id>-v2.html`, 2 to 5 % of the words
//!   changed), a section its robots.txt disallows (`/private/`) linked from public pages,
//!   URL variants in its own links (`index.html`, `//`, an empty `?`, parameters in either
//!   order, `#fragments`), and a `/sitemap.xml` announced in its robots.txt;
//! - an **exact mirror** (byte-identical pages at the same paths), a **prefix mirror** (the
//!   same pages under [`MIRROR_PREFIX`], links rewritten), and a **noisy** copy whose every
//!   response carries fresh ads, timestamps and session ids around the same article text;
//! - a **tracking** site whose links all carry `utm_*`, `gclid` or `fbclid` parameters, and a
//!   **trap** site whose links carry a fresh `visit=<24 hex>` on every response (a parameter
//!   name no static rule knows, so only a crawler that learns it is irrelevant escapes);
//! - a **redirect** host that answers every path with a 301 to the same path on the origin.
//!
//! The [`Manifest`] says, for every page URL, which document it shows, why it exists
//! ([`Role`]) and what a perfect crawler does with it ([`Outcome`]); the [`RequestLog`] counts
//! what was actually requested.
//!
//! What it is **not** for: it is not a general web server, nor a benchmark of one. It serves
//! only what it generated, only on 127.0.0.1, for tests, the demo and the benchmarks. Its text
//! is word salad with the statistics of prose, not language.
//!
//! # Example
//!
//! ```
//! use simcrawl_testsite::{HostKind, Outcome, Reply, TestWeb, TestWebConfig};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), simcrawl_testsite::TestSiteError> {
//! let web = TestWeb::generate(TestWebConfig::small());
//! let running = web.serve().await?;
//! let manifest = running.manifest();
//! println!("{}", manifest.summary());
//!
//! // The same article on the origin and on the exact mirror: one document.
//! let origin = running.url(HostKind::Origin, "/articles/3.html").unwrap();
//! let mirror = running.url(HostKind::ExactMirror, "/articles/3.html").unwrap();
//! assert_eq!(manifest.document_of(&origin), manifest.document_of(&mirror));
//! assert!(manifest.is_distinct(&origin));
//! assert_eq!(manifest.entry(&mirror).unwrap().outcome, Outcome::ExactCopy);
//!
//! // Every private page is disallowed, and nothing has fetched one yet.
//! let log = running.request_log();
//! assert!(manifest.disallowed().iter().all(|url| log.count(url) == 0));
//!
//! // The same answers are available without the network.
//! let Reply::Ok { body, .. } = running.web().respond(HostKind::Origin, "/robots.txt") else {
//!     unreachable!()
//! };
//! assert!(body.ends_with(b"Disallow: /private/\n"));
//! running.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! # Layout
//!
//! - [`config`](TestWebConfig): what to generate: [`TestWebConfig`], [`HostKind`], [`HostSet`],
//!   [`Noise`].
//! - [`textgen`]: the deterministic English-like text generator, [`TextGen`](textgen::TextGen),
//!   public because the benchmarks reuse it.
//! - `site`: the model of one generated site: sections, documents, pages, links and how they
//!   are spelled; print and edited versions, the disallowed section.
//! - `render`: the shared HTML template, rendered once per host and page; the noisy and trap
//!   hosts get templates with per-request slots.
//! - `noise`: what fills those slots: ads, timestamps, session ids, `visit=` values.
//! - `route`: which page a request target names (merged slashes, `index.html`, ignored
//!   parameters), shared by the server and the manifest.
//! - [`web`](TestWeb): [`TestWeb`]: generation, and how each host answers a request
//!   ([`TestWeb::respond`], [`Reply`]).
//! - [`manifest`](Manifest): the ground truth: [`Manifest`], [`PageEntry`], [`Role`],
//!   [`Outcome`], [`DocId`].
//! - `server`: hyper 1 on tokio, one listener per host: [`TestWeb::serve`], [`RunningWeb`].
//! - [`request_log`](RequestLog): per-host, per-target request counts.
//! - `real`: the **real-page web** ([`RealWebConfig`], [`RunningRealWeb`]): directories of
//!   real HTML (Debian documentation packages, or the slice in `tests/realweb/`) served through
//!   the same host roles, for measuring verdicts on pages nobody here wrote.
//! - `error`: [`TestSiteError`].
//!
//! # Determinism
//!
//! The same [`TestWebConfig`] generates the same web, byte for byte, on every platform: the
//! same pages, links, manifest and document ids (integer-only random numbers, no hash-map
//! order in any output). Article `n` of a site has the same text whatever the number of
//! articles (its links may differ). Only two things vary per request, by design: the noisy
//! host's noise and the trap host's `visit=` values; and the port numbers, which the system
//! picks.

#![deny(missing_docs)]

mod config;
mod error;
mod manifest;
mod noise;
mod real;
mod render;
mod request_log;
mod rng;
mod route;
mod server;
mod site;
pub mod textgen;
mod time;
mod web;

pub use config::{HostKind, HostSet, Noise, TestWebConfig};
pub use error::TestSiteError;
pub use manifest::{
    DocId, DocKind, DocumentInfo, HostInfo, Manifest, NearDuplicatePair, Outcome, PageEntry, Role,
};
pub use real::{
    CORPUS, CorpusManual, MIRROR_NOTICE, Manual, REAL_MIRROR_PREFIX, RealHost, RealRequest,
    RealRole, RealWebConfig, RunningRealWeb, Sample,
};
pub use render::MIRROR_PREFIX;
pub use request_log::{LoggedRequest, RequestLog};
pub use server::RunningWeb;
pub use web::{Reply, TestWeb};
