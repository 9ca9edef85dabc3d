//! simcrawl-fetch against a hand-written HTTP/1.1 server on 127.0.0.1 (never the live web).
//!
//! Host names in these tests (`public.test`, `news.ru`, ...) are pinned to 127.0.0.1 through
//! `FetchConfig::resolve`, so no DNS query leaves the machine. A "public" site is played on loopback
//! by naming its host in `FetchConfig::public_hosts`.

mod support;

mod body;
mod charset;
mod errors;
mod policy;
mod redirects;
mod retries;
