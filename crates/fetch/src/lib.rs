//! simcrawl's fetcher: one URL in, one [`Fetched`] response out, over reqwest and tokio, with caps,
//! timeouts, hand-followed redirects and charset decoding.
//!
//! A [`Fetcher`] is built once per crawl from a [`FetchConfig`] and shared by the fetch tasks. Each
//! call of [`Fetcher::fetch`] or [`Fetcher::fetch_with`]:
//!
//! - refuses what it must not fetch: schemes other than http and https, link-local addresses
//!   (169.254.0.0/16, fe80::/10, checked on the resolved addresses), and private or loopback
//!   addresses reached from a public page or redirect ([`Origin`], [`AddressClass`]);
//! - follows redirects by hand, up to a limit, and returns every hop ([`Hop`]); a hook can stop at
//!   a hop whose target the crawler already knows ([`HopDecision`]);
//! - retries connect errors, timeouts, 429 and 5xx with exponential backoff, honouring
//!   `Retry-After` up to a cap, and reports a longer one instead of waiting;
//! - reads the body up to a cap counted after decompression (gzip, brotli, deflate, zstd), so
//!   a decompression bomb stops at the cap ([`Fetched::truncated`]);
//! - decodes HTML to UTF-8, deciding the charset from a BOM, the header, `<meta>`, a detector or
//!   the UTF-8 default, and says which ([`CharsetSource`]); other types are skipped or kept as bytes.
//!
//! Every failure is a typed [`FetchError`] that carries the URL and the hops before it; an HTTP
//! status is not a failure.
//!
//! # What this crate is not for
//!
//! It knows nothing of robots.txt rules (it only exposes the [`product_token`] to match them and
//! fetches robots.txt like any URL, with per-call limits in [`FetchOptions`]), of politeness delays
//! (it reports `Retry-After`, the frontier waits), of canonical URLs or duplicates (the hook lets the
//! crawler decide about redirect targets), and of HTML structure (it decodes text; `extract` parses).
//! It imports no other simcrawl crate.
//!
//! # Layout
//!
//! - `fetcher`: [`Fetcher`], the hop loop, redirects, retries around each request.
//! - `config`: [`FetchConfig`] (with its defaults), [`FetchOptions`] for one call, [`NonHtml`],
//!   [`product_token`].
//! - `address`: [`AddressClass`], [`Origin`], [`PolicyReason`]; the address rules and the DNS
//!   resolver that enforces them where the connection is made.
//! - `body`: the cap, content types, sniffing, choosing between text, bytes and skipping.
//! - `charset`: the charset decision ([`CharsetSource`]) and decoding.
//! - `retry`: which failures are retried, backoff, `Retry-After`.
//! - `httpdate`: HTTP date parsing for `Retry-After`.
//! - `response`: [`Fetched`], [`Hop`], [`HopDecision`], [`Headers`], [`Body`], [`BodySize`],
//!   [`Timings`].
//! - `error`: [`FetchError`], [`ErrorKind`], [`TimeoutPhase`], [`BuildError`].
//!
//! # Example
//!
//! ```no_run
//! use simcrawl_fetch::{Body, FetchConfig, FetchOptions, Fetcher, HopDecision};
//!
//! # async fn crawl() -> Result<(), Box<dyn std::error::Error>> {
//! let fetcher = Fetcher::new(FetchConfig::default())?;
//! assert_eq!(fetcher.product_token(), "simcrawl");
//!
//! // A seed may be on loopback; redirect targets the crawler already knows are not fetched.
//! let seen = ["http://127.0.0.1:8080/"];
//! let page = fetcher
//!     .fetch_with("http://127.0.0.1:8080/start", &FetchOptions::seed(), |target, _hops| {
//!         if seen.contains(&target.as_str()) { HopDecision::Stop } else { HopDecision::Follow }
//!     })
//!     .await?;
//! for hop in &page.hops {
//!     println!("{} {} -> {:?}", hop.status, hop.url, hop.location);
//! }
//! if let Body::Text { text, charset, charset_source, .. } = &page.body {
//!     println!("{} chars from {charset} ({charset_source})", text.len());
//! }
//!
//! // Links on that page are fetched with its address class as their origin.
//! let link = fetcher.fetch("http://127.0.0.1:8080/about", &FetchOptions::new(page.link_origin())).await;
//! if let Err(e) = link {
//!     eprintln!("{e}"); // e.g. "fetching http://...: timed out reading the body (limit 30s)"
//! }
//! # Ok(())
//! # }
//! ```

#![deny(missing_docs)]

mod address;
mod body;
mod charset;
mod config;
mod error;
mod fetcher;
mod httpdate;
mod response;
mod retry;

pub use address::{AddressClass, Origin, PolicyReason};
pub use charset::CharsetSource;
pub use config::{DEFAULT_USER_AGENT, FetchConfig, FetchOptions, NonHtml, product_token};
pub use error::{BuildError, ErrorKind, FetchError, TimeoutPhase};
pub use fetcher::Fetcher;
pub use response::{Body, BodySize, Capture, Fetched, Headers, Hop, HopDecision, Timings};
