//! The robots.txt parser behind a small trait, so that it could be swapped, and its default
//! implementation over `texting_robots`.

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Duration;

/// Parses robots.txt bodies into [`RobotsRules`] for one user-agent token.
///
/// The frontier calls it when an answer arrives, and again when a cached answer is read back from
/// the store, so it must be deterministic.
pub trait RobotsParser: Send {
    /// The rules of `body` that apply to `user_agent_token`: the groups whose `User-agent` line
    /// matches the token case-insensitively, combined, or else the `*` groups (RFC 9309 2.2.1).
    fn parse(
        &self,
        user_agent_token: &str,
        body: &[u8],
    ) -> Result<Box<dyn RobotsRules>, RobotsParseError>;
}

/// The rules of one robots.txt for one user-agent token.
pub trait RobotsRules: Send + fmt::Debug {
    /// Whether `path_and_query` (`/a/b?c`, percent-encoded as sent) may be fetched: the longest
    /// matching rule wins, `Allow` wins a tie, `*` matches any run of characters and `$` anchors
    /// the end (RFC 9309 2.2.2, 2.2.3). `/robots.txt` is always allowed.
    fn is_allowed(&self, path_and_query: &str) -> bool;

    /// The `Crawl-delay` of the matching group, if any (not part of RFC 9309, but widely used).
    fn crawl_delay(&self) -> Option<Duration>;

    /// The `Sitemap:` URLs of the file (they apply to every user-agent).
    fn sitemaps(&self) -> &[String];
}

/// A robots.txt body the parser refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("robots.txt could not be parsed: {detail}")]
pub struct RobotsParseError {
    /// What the parser said.
    pub detail: String,
}

/// Rules that allow everything: what a 4xx robots.txt means (RFC 9309 2.3.1.3).
#[derive(Debug, Clone, Copy, Default)]
pub struct AllowAll;

impl RobotsRules for AllowAll {
    fn is_allowed(&self, _path_and_query: &str) -> bool {
        true
    }

    fn crawl_delay(&self) -> Option<Duration> {
        None
    }

    fn sitemaps(&self) -> &[String] {
        &[]
    }
}

/// The default parser: the `texting_robots` crate, which was tested against robots.txt files of
/// millions of sites. A panic inside it (on a hostile file) is turned into a parse error.
#[derive(Debug, Clone, Copy, Default)]
pub struct TextingRobots;

impl RobotsParser for TextingRobots {
    fn parse(
        &self,
        user_agent_token: &str,
        body: &[u8],
    ) -> Result<Box<dyn RobotsRules>, RobotsParseError> {
        let parsed = catch_unwind(AssertUnwindSafe(|| {
            texting_robots::Robot::new(user_agent_token, body)
        }));
        match parsed {
            Ok(Ok(robot)) => Ok(Box::new(TextingRules {
                unreadable_delay: has_unreadable_delay(body),
                robot,
            })),
            Ok(Err(e)) => Err(RobotsParseError {
                detail: format!("{e:#}"),
            }),
            Err(_) => Err(RobotsParseError {
                detail: "the parser panicked".to_owned(),
            }),
        }
    }
}

/// Rules parsed by `texting_robots`.
#[derive(Debug)]
struct TextingRules {
    robot: texting_robots::Robot,
    /// The file has a `Crawl-delay` line whose value is no delay (`NaN`, `-4`, `soon`), which
    /// `texting_robots` drops.
    unreadable_delay: bool,
}

impl RobotsRules for TextingRules {
    fn is_allowed(&self, path_and_query: &str) -> bool {
        self.robot.allowed(path_and_query)
    }

    /// The group's delay; an infinite one (`inf`, `1e400`) is [`Duration::MAX`], which the cap
    /// then parks. With no readable delay, a `Crawl-delay` line that cannot be read as one (in
    /// any group: the file asks for some delay, and we cannot tell how much) stands for the
    /// default delay, [`DEFAULT_DELAY`](crate::config::DEFAULT_DELAY): at least what a crawl
    /// run with the defaults waits.
    fn crawl_delay(&self) -> Option<Duration> {
        match self.robot.delay {
            // Absurd values saturate; the cap decides what happens to them.
            Some(seconds) if seconds >= 0.0 => {
                Some(Duration::try_from_secs_f32(seconds).unwrap_or(Duration::MAX))
            }
            _ if self.unreadable_delay => Some(crate::config::DEFAULT_DELAY),
            _ => None,
        }
    }

    fn sitemaps(&self) -> &[String] {
        &self.robot.sitemaps
    }
}

/// Whether `body` has a `Crawl-delay` line (any of the spellings `texting_robots` reads) whose
/// value is not a finite number of seconds, zero or more.
fn has_unreadable_delay(body: &[u8]) -> bool {
    String::from_utf8_lossy(body).lines().any(|line| {
        let line = line.split('#').next().unwrap_or_default();
        let Some((key, value)) = line.split_once(':') else {
            return false;
        };
        let key = key.trim().to_ascii_lowercase();
        if !matches!(key.as_str(), "crawl-delay" | "crawl delay" | "crawldelay") {
            return false;
        }
        !value
            .trim()
            .parse::<f64>()
            .is_ok_and(|seconds| seconds.is_finite() && seconds >= 0.0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(body: &str) -> Box<dyn RobotsRules> {
        TextingRobots
            .parse("simcrawl", body.as_bytes())
            .expect("test robots.txt parses")
    }

    #[test]
    fn longest_match_wins() {
        let r = rules("User-agent: *\nDisallow: /shop\nAllow: /shop/public\n");
        assert!(!r.is_allowed("/shop/cart"));
        assert!(r.is_allowed("/shop/public/a"));
        assert!(r.is_allowed("/other"));
        // The longer Disallow beats the shorter Allow.
        let r = rules("User-agent: *\nAllow: /a\nDisallow: /a/b\n");
        assert!(r.is_allowed("/a/c"));
        assert!(!r.is_allowed("/a/b/c"));
    }

    #[test]
    fn allow_wins_a_tie() {
        let r = rules("User-agent: *\nDisallow: /page\nAllow: /page\n");
        assert!(r.is_allowed("/page"));
    }

    #[test]
    fn wildcards_and_end_anchor() {
        let r = rules("User-agent: *\nDisallow: /*.php$\nDisallow: /private*/data\n");
        assert!(!r.is_allowed("/index.php"));
        assert!(r.is_allowed("/index.php?x=1"));
        assert!(r.is_allowed("/index.phps"));
        assert!(!r.is_allowed("/private-area/data"));
        assert!(r.is_allowed("/public/data"));
    }

    #[test]
    fn our_group_is_chosen_over_the_star_group() {
        let body = "User-agent: *\nDisallow: /\n\nUser-agent: SimCrawl\nDisallow: /only-this\nCrawl-delay: 2.5\n";
        let r = rules(body);
        assert!(r.is_allowed("/anything"));
        assert!(!r.is_allowed("/only-this"));
        assert_eq!(r.crawl_delay(), Some(Duration::from_millis(2500)));
        let other = TextingRobots
            .parse("otherbot", body.as_bytes())
            .expect("parses");
        assert!(!other.is_allowed("/anything"));
        assert_eq!(other.crawl_delay(), None);
    }

    #[test]
    fn groups_for_our_token_are_combined() {
        let body = "User-agent: simcrawl\nDisallow: /a\n\nUser-agent: other\nDisallow: /b\n\nUser-agent: simcrawl\nDisallow: /c\n";
        let r = rules(body);
        assert!(!r.is_allowed("/a"));
        assert!(r.is_allowed("/b"));
        assert!(!r.is_allowed("/c"));
    }

    #[test]
    fn robots_txt_itself_is_always_allowed() {
        assert!(rules("User-agent: *\nDisallow: /\n").is_allowed("/robots.txt"));
    }

    #[test]
    fn sitemaps_apply_to_everyone() {
        let r = rules(
            "Sitemap: https://example.com/s1.xml\nUser-agent: other\nDisallow: /\nSitemap: https://example.com/s2.xml.gz\n",
        );
        assert_eq!(
            r.sitemaps(),
            [
                "https://example.com/s1.xml",
                "https://example.com/s2.xml.gz"
            ]
        );
    }

    #[test]
    fn absurd_crawl_delays() {
        assert_eq!(
            rules("User-agent: *\nCrawl-delay: 1e30\n").crawl_delay(),
            Some(Duration::MAX)
        );
        // Infinite: over any cap, so the host is parked.
        for value in ["inf", "1e400", "Infinity"] {
            assert_eq!(
                rules(&format!("User-agent: *\nCrawl-delay: {value}\n")).crawl_delay(),
                Some(Duration::MAX),
                "{value}"
            );
        }
        // Not a delay: at least the default one, never none.
        for value in ["NaN", "-4", "soon", "-inf", ""] {
            let r = rules(&format!(
                "User-agent: *\nDisallow: /x\nCrawl-delay: {value}\n"
            ));
            assert_eq!(
                r.crawl_delay(),
                Some(crate::config::DEFAULT_DELAY),
                "{value:?}"
            );
            assert!(!r.is_allowed("/x"), "{value:?}: the rules still hold");
        }
        assert_eq!(rules("User-agent: *\nDisallow: /x\n").crawl_delay(), None);
    }

    #[test]
    fn binary_input_has_no_rules() {
        let junk: Vec<u8> = (0..4096_u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        // Noise holds no directive: either the parser refuses it (the frontier then allows all)
        // or it finds no rule.
        if let Ok(r) = TextingRobots.parse("simcrawl", &junk) {
            assert!(r.is_allowed("/x"));
            assert_eq!(r.crawl_delay(), None);
        }
    }
}
