//! The failure log: every fetch that ended without a response, with its reason, so that a user can
//! see why a page is missing (`simcrawl failed`) and `stats` can count failures by reason.

use simcrawl_store::codec::{Codec, CodecError, Reader, write_element};

/// One failed fetch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailureRecord {
    /// When, in milliseconds since the Unix epoch.
    pub time_ms: u64,
    /// The URL requested (credentials removed).
    pub url: String,
    /// The failure's kind: one of `simcrawl_fetch::ErrorKind::NAMES` (`timeout`, `connect`, ...),
    /// or `analysis` when the page could not be analysed.
    pub reason: String,
    /// The error, in words.
    pub message: String,
    /// Whether the URL goes back to its queue for another attempt (transient failures only).
    pub will_retry: bool,
    /// Link depth from the seeds.
    pub depth: u32,
    /// The page the URL was found on, if any.
    pub referrer: Option<String>,
}

const FAILURE_VERSION: u8 = 1;

impl Codec for FailureRecord {
    fn encode_into(&self, out: &mut Vec<u8>) {
        write_element(&FAILURE_VERSION, out);
        write_element(&self.time_ms, out);
        write_element(&self.url, out);
        write_element(&self.reason, out);
        write_element(&self.message, out);
        write_element(&self.will_retry, out);
        write_element(&self.depth, out);
        write_element(&self.referrer.is_some(), out);
        if let Some(r) = &self.referrer {
            write_element(r, out);
        }
    }

    fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        let mut r = Reader::new::<Self>(bytes);
        let version: u8 = r.element()?;
        if version != FAILURE_VERSION {
            return Err(CodecError::invalid::<Self>(format!(
                "unknown failure record version {version}"
            )));
        }
        let record = FailureRecord {
            time_ms: r.element()?,
            url: r.element()?,
            reason: r.element()?,
            message: r.element()?,
            will_retry: r.element()?,
            depth: r.element()?,
            referrer: if r.element::<bool>()? {
                Some(r.element()?)
            } else {
                None
            },
        };
        r.finish()?;
        Ok(record)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_damage_is_an_error() {
        let record = FailureRecord {
            time_ms: 7,
            url: "http://a.example/x".into(),
            reason: "timeout".into(),
            message: "no response headers within 30 s".into(),
            will_retry: false,
            depth: 2,
            referrer: Some("http://a.example/".into()),
        };
        let bytes = record.encode();
        assert_eq!(FailureRecord::decode(&bytes).unwrap(), record);
        assert!(FailureRecord::decode(&bytes[..bytes.len() - 3]).is_err());
        let mut other = bytes.clone();
        other[0] = 9;
        assert!(FailureRecord::decode(&other).is_err());
    }
}
