//! Integration tests of the `simcrawl` binary: one test binary, a module per area, shared helpers in
//! `util`. Every test web is served on 127.0.0.1 by the test itself; nothing reaches the internet.

mod util;

mod cli_errors;
mod commands;
mod conventions;
mod crawl_web;
mod hostile;
mod pages;
mod realweb;
mod report;
mod resume;
mod revoke;
mod search;
mod sharded;
mod warc;
