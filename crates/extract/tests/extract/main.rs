//! Integration tests of simcrawl-extract: one test binary, one module per concern.

mod added;
mod layouts;
mod links;
mod meta;
mod news;
mod pairs;
mod robustness;
mod text;
mod util;
