//! What the noisy and trap hosts put into every response: ads, timestamps, session ids and
//! `visit=` values.
//!
//! Every request draws a fresh [`RequestNoise`] from a request counter. Its session id and
//! visit value start with a bijective mix of the counter, so **no two requests of one web ever
//! get the same ones**: two responses of the noisy host for the same path always differ in
//! their bytes, and a trap link is never repeated. Everything else (ad copy, which paragraphs
//! get an ad, the render node) is random per request; timestamps come from the wall clock.

use std::fmt::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;

use crate::render::{Slot, Template};
use crate::rng::{Rng, label, mix};
use crate::time::format_utc;

const PRODUCTS: [&str; 8] = [
    "garden furniture",
    "winter tyres",
    "noise cancelling headphones",
    "travel insurance",
    "a new mattress",
    "espresso machines",
    "hiking boots",
    "electric bicycles",
];

const AD_COPY: [&str; 4] = [
    "Save {n}% on {p} this week only.",
    "Sponsored: the best {p} of the season, from {n} dollars.",
    "Still looking for {p}? Compare {n} offers near you.",
    "Limited offer: {p} with {n}% off for new customers.",
];

/// The per-request values of one response.
#[derive(Debug, Clone)]
pub(crate) struct RequestNoise {
    rng: Rng,
    /// 32 hex digits, unique per request.
    pub(crate) session: String,
    /// 24 hex digits, unique per request.
    pub(crate) visit: String,
    /// Seconds since the Unix epoch.
    now: u64,
    /// Which article-ad slots get an ad (bit i for the i-th slot).
    article_ads: u64,
    seen_article_slots: usize,
}

impl RequestNoise {
    /// The noise of request number `nonce` of a web seeded with `seed`.
    pub(crate) fn new(seed: u64, nonce: u64) -> Self {
        let unique = mix(nonce ^ mix(seed));
        let mut rng = Rng::derive(seed, label::REQUEST, nonce);
        let session = format!("{unique:016x}{:016x}", rng.next_u64());
        let visit = format!("{unique:016x}{:08x}", rng.next_u64() as u32);
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        RequestNoise {
            rng,
            session,
            visit,
            now,
            article_ads: 0,
            seen_article_slots: 0,
        }
    }

    /// Fills a template: its chunks with every slot written for this request.
    pub(crate) fn fill(&mut self, template: &Template) -> Bytes {
        // One to three of the article's ad slots get an ad.
        let n = template.article_ad_slots.min(64);
        self.article_ads = 0;
        self.seen_article_slots = 0;
        if n > 0 {
            for _ in 0..self.rng.range(1, 3) {
                self.article_ads |= 1 << self.rng.below(n);
            }
        }
        let mut out = String::with_capacity(template.len + 1024);
        for (i, chunk) in template.chunks.iter().enumerate() {
            out.push_str(chunk);
            if let Some(&slot) = template.slots.get(i) {
                self.write_slot(slot, &mut out);
            }
        }
        Bytes::from(out)
    }

    fn ad(&mut self) -> String {
        let copy = self.rng.pick(&AD_COPY);
        let product = self.rng.pick(&PRODUCTS);
        let n = self.rng.range(5, 80).to_string();
        copy.replace("{p}", product).replace("{n}", &n)
    }

    fn write_slot(&mut self, slot: Slot, out: &mut String) {
        match slot {
            Slot::Time => out.push_str(&format_utc(self.now)),
            Slot::SessionInput => {
                let _ = write!(
                    out,
                    "<input type=\"hidden\" name=\"sid\" value=\"{}\">",
                    self.session
                );
            }
            Slot::SidebarAd => {
                for _ in 0..self.rng.range(1, 2) {
                    let ad = self.ad();
                    let _ = writeln!(
                        out,
                        "<div class=\"advert\" data-ad-id=\"{:08x}\"><span class=\"ad-label\">Advertisement</span> {ad}</div>",
                        self.rng.next_u64() as u32
                    );
                }
            }
            Slot::ArticleAd => {
                let i = self.seen_article_slots;
                self.seen_article_slots += 1;
                if i < 64 && self.article_ads & (1 << i) != 0 {
                    let ad = self.ad();
                    let _ = writeln!(
                        out,
                        "<div class=\"ad-slot\"><span class=\"ad-label\">Advertisement</span><p>{ad}</p></div>"
                    );
                }
            }
            Slot::SessionLink => {
                let _ = write!(
                    out,
                    " | <a href=\"/about.html?sid={}\">Your account</a>",
                    self.session
                );
            }
            Slot::RenderInfo => {
                let _ = writeln!(
                    out,
                    "<p class=\"render-info\">Rendered at {} by node-{} in {} ms</p>",
                    format_utc(self.now),
                    self.rng.range(1, 9),
                    self.rng.range(3, 250)
                );
            }
            Slot::Visit => out.push_str(&self.visit),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn ids_are_unique_per_request_and_well_formed() {
        let mut sessions = HashSet::new();
        let mut visits = HashSet::new();
        for nonce in 0..2000 {
            let n = RequestNoise::new(42, nonce);
            assert_eq!(n.session.len(), 32);
            assert_eq!(n.visit.len(), 24);
            assert!(
                n.session
                    .bytes()
                    .chain(n.visit.bytes())
                    .all(|b| b.is_ascii_hexdigit())
            );
            assert!(sessions.insert(n.session));
            assert!(visits.insert(n.visit));
        }
    }

    #[test]
    fn fill_writes_every_slot() {
        let template = Template {
            chunks: vec![
                "<a href=\"/x?visit=".into(),
                "\">x</a><p>".into(),
                "</p>".into(),
            ],
            slots: vec![Slot::Visit, Slot::Time],
            article_ad_slots: 0,
            len: 32,
        };
        let mut noise = RequestNoise::new(1, 1);
        let visit = noise.visit.clone();
        let out = noise.fill(&template);
        let out = std::str::from_utf8(&out).unwrap();
        assert!(out.starts_with(&format!("<a href=\"/x?visit={visit}\">x</a><p>")));
        // "<p>YYYY-MM-DD HH:MM:SS</p>"
        let time = &out[out.len() - 23..out.len() - 4];
        assert_eq!(time.len(), 19);
        assert_eq!(&time[4..5], "-");
        assert_eq!(&time[13..14], ":");
    }
}
