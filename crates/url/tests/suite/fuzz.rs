//! Fuzzing the canonicaliser at volume:
//! `FUZZ_CASES=1000000 cargo test --release -p simcrawl-url --test suite fuzz`.
//! Any string gives a key or an error, never a panic, and a key is its own key.

use proptest::prelude::*;
use simcrawl_url::{CanonOptions, Canonicalizer};

fn cases() -> u32 {
    std::env::var("FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

const PARTS: &[&str] = &[
    "http://",
    "https://",
    "HTTP://",
    "127.0.0.1",
    "[::1]",
    "xn--nxasmq6b",
    "ex\u{e4}mple.com",
    ":8080",
    ":0",
    ":99999",
    "/",
    "//",
    "/./",
    "/../",
    "%2e%2E",
    "%7e",
    "%zz",
    "%",
    "?",
    "&",
    "=",
    "#",
    "index.html",
    "utm_source=x",
    "sessionid=0123456789abcdef0123456789abcdef",
    "[",
    "]",
    "|",
    "^",
    "`",
    "{",
    "}",
    "\\",
    " ",
    "\t",
    "é",
    "\u{feff}",
    "user:pass@",
    "@",
    ";jsessionid=ABC",
    "a=1&a=2",
    "..",
    "%00",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn any_string_canonicalises_or_errs_and_keys_are_fixed_points(
        parts in proptest::collection::vec(
            prop_oneof![proptest::sample::select(PARTS).prop_map(str::to_string), "[ -~]{0,6}", any::<String>()],
            0..16,
        )
    ) {
        let canon = Canonicalizer::new(CanonOptions::default(), Default::default());
        let text = parts.concat();
        if let Ok(c) = canon.canonicalize(&text, None) {
            let again = canon.canonicalize(c.key.as_str(), None);
            prop_assert!(again.is_ok(), "the key {} does not canonicalise", c.key.as_str());
            prop_assert_eq!(again.map(|a| a.key.as_str().to_string()).ok(), Some(c.key.as_str().to_string()));
        }
    }
}
