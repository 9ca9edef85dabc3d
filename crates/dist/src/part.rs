//! A worker's share of the pages: fingerprints, where each page came from, and its sketch if any.

use std::collections::HashMap;
use std::io::BufRead;

use serde::Deserialize;
use simcrawl_dedup::Sketch;

use crate::error::DistError;

/// Bits of a global id that number pages within their worker's part; the worker is above them.
pub const LOCAL_BITS: u32 = 40;

/// The global id of page `local` of `worker`'s part.
pub fn global_id(worker: usize, local: usize) -> u64 {
    ((worker as u64) << LOCAL_BITS) | local as u64
}

/// The worker that holds the page with global id `gid`.
pub fn owner(gid: u64) -> usize {
    (gid >> LOCAL_BITS) as usize
}

/// The index within its part of the page with global id `gid`.
pub fn local(gid: u64) -> usize {
    (gid & ((1u64 << LOCAL_BITS) - 1)) as usize
}

/// One page given to the job.
#[derive(Debug, Clone, PartialEq)]
pub struct PageIn {
    /// Its URL (or any name; printed in the output).
    pub url: String,
    /// Its host: mirror evidence is counted between hosts.
    pub host: String,
    /// Its 64-bit SimHash.
    pub simhash: u64,
    /// Its MinHash sketch, when the store has one: pairs with both sketches are confirmed with it.
    pub sketch: Option<Sketch>,
}

impl PageIn {
    /// A page named by its URL, on the URL's host.
    pub fn from_url(url: String, simhash: u64, sketch: Option<Sketch>) -> PageIn {
        PageIn {
            host: host_of(&url),
            url,
            simhash,
            sketch,
        }
    }
}

/// The host of a URL, with its port when the URL names one (as the crawl names hosts); empty if it has
/// none.
pub fn host_of(url: &str) -> String {
    let Ok(u) = url::Url::parse(url) else {
        return String::new();
    };
    match (u.host_str(), u.port()) {
        (Some(host), Some(port)) => format!("{host}:{port}"),
        (Some(host), None) => host.to_string(),
        (None, _) => String::new(),
    }
}

/// The pages one worker holds. Names are kept as columns; a synthetic part (benchmarks) names its pages
/// by number.
#[derive(Debug, Default)]
pub struct Part {
    fps: Vec<u64>,
    hosts: Vec<u32>,
    host_names: Vec<String>,
    host_ids: HashMap<String, u32>,
    urls: Vec<Box<str>>,
    sketches: Vec<Option<Sketch>>,
}

impl Part {
    /// An empty part.
    pub fn new() -> Part {
        Part::default()
    }

    /// A part of `fps` with no names, without sketches, for benchmarks, where names would only
    /// cost memory: page i is called `page-<global id>`, and is page `first + i * step` of the
    /// whole job, on host `host-<that number mod hosts>` (so that the pages of a job split over
    /// workers are on the hosts they are on in one part).
    pub fn synthetic(fps: Vec<u64>, hosts: u32, first: u64, step: u64) -> Part {
        let hosts = hosts.max(1);
        let mut part = Part {
            hosts: (0..fps.len() as u64)
                .map(|i| ((first + i * step) % u64::from(hosts)) as u32)
                .collect(),
            fps,
            ..Part::default()
        };
        part.host_names = (0..hosts).map(|h| format!("host-{h}")).collect();
        part
    }

    /// Adds a page.
    pub fn push(&mut self, page: PageIn) {
        let next = self.host_names.len() as u32;
        let host = *self.host_ids.entry(page.host.clone()).or_insert(next);
        if host == next {
            self.host_names.push(page.host);
        }
        // Keep the columns aligned: a part that was synthetic gets names from here on.
        while self.urls.len() < self.fps.len() {
            let i = self.urls.len();
            self.urls.push(format!("page-{i}").into_boxed_str());
        }
        if page.sketch.is_some() || !self.sketches.is_empty() {
            self.sketches.resize(self.fps.len(), None);
            self.sketches.push(page.sketch);
        }
        self.fps.push(page.simhash);
        self.hosts.push(host);
        self.urls.push(page.url.into_boxed_str());
    }

    /// The number of pages.
    pub fn len(&self) -> usize {
        self.fps.len()
    }

    /// Whether the part holds no page.
    pub fn is_empty(&self) -> bool {
        self.fps.is_empty()
    }

    /// Fingerprint of page `i`.
    pub fn fingerprint(&self, i: usize) -> u64 {
        self.fps[i]
    }

    /// (fingerprint, global id) of every page, for `worker`.
    pub fn entries(&self, worker: usize) -> Vec<(u64, u64)> {
        self.fps
            .iter()
            .enumerate()
            .map(|(i, &fp)| (fp, global_id(worker, i)))
            .collect()
    }

    /// URL of page `i` (for a page with global id `gid`).
    pub fn url(&self, i: usize, gid: u64) -> String {
        match self.urls.get(i) {
            Some(url) => url.to_string(),
            None => format!("page-{gid}"),
        }
    }

    /// Host of page `i`.
    pub fn host(&self, i: usize) -> &str {
        &self.host_names[self.hosts[i] as usize]
    }

    /// Sketch of page `i`, if it has one.
    pub fn sketch(&self, i: usize) -> Option<&Sketch> {
        self.sketches.get(i).and_then(Option::as_ref)
    }

    /// Pages per host.
    pub fn host_counts(&self) -> Vec<(String, u64)> {
        let mut counts = vec![0u64; self.host_names.len()];
        for &h in &self.hosts {
            counts[h as usize] += 1;
        }
        self.host_names.iter().cloned().zip(counts).collect()
    }

    /// Bytes held, roughly: for the benchmark's memory figure.
    pub fn memory_bytes(&self) -> usize {
        self.fps.capacity() * 8
            + self.hosts.capacity() * 4
            + self.urls.iter().map(|u| u.len() + 16).sum::<usize>()
            + self.sketches.len() * 24
            + self
                .sketches
                .iter()
                .flatten()
                .map(|s| s.values().len() * 4)
                .sum::<usize>()
    }
}

/// Reads every page of JSON lines into `pages`. Each line is an object with `url` and `simhash` (16
/// hexadecimal digits, as `simcrawl export` writes it, or a number), and optionally `host` (else the
/// URL's host and port) and `minhash` (hexadecimal sketch bytes). Blank lines are skipped; a bad line is
/// an error naming it.
pub fn read_jsonl(
    reader: impl BufRead,
    source: &str,
    pages: &mut Vec<PageIn>,
) -> Result<(), DistError> {
    each_line(reader, source, |line_no, line| {
        pages.push(parse_at(line, source, line_no)?);
        Ok(())
    })
}

/// Calls `f` with the number (from 1) and text of each non-blank line.
fn each_line(
    reader: impl BufRead,
    source: &str,
    mut f: impl FnMut(usize, &str) -> Result<(), DistError>,
) -> Result<(), DistError> {
    for (i, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| DistError::Read {
            source_name: source.to_string(),
            error: e,
        })?;
        if !line.trim().is_empty() {
            f(i + 1, &line)?;
        }
    }
    Ok(())
}

fn parse_at(line: &str, source: &str, line_no: usize) -> Result<PageIn, DistError> {
    parse_line(line).map_err(|why| DistError::BadLine {
        source_name: source.to_string(),
        line: line_no,
        why,
    })
}

#[derive(Deserialize)]
struct Line {
    url: String,
    simhash: serde_json::Value,
    #[serde(default)]
    host: Option<String>,
    #[serde(default)]
    minhash: Option<String>,
}

fn parse_line(line: &str) -> Result<PageIn, String> {
    let l: Line = serde_json::from_str(line).map_err(|e| e.to_string())?;
    let simhash = match &l.simhash {
        serde_json::Value::String(s) => u64::from_str_radix(s, 16)
            .map_err(|e| format!("simhash {s:?} is not 16 hexadecimal digits: {e}"))?,
        serde_json::Value::Number(n) => n
            .as_u64()
            .ok_or_else(|| format!("simhash {n} is not an unsigned 64-bit number"))?,
        other => {
            return Err(format!(
                "simhash {other} is neither a hex string nor a number"
            ));
        }
    };
    let host = match l.host {
        Some(h) => h,
        None => host_of(&l.url),
    };
    let sketch = match l.minhash {
        None => None,
        Some(hex) => {
            let bytes =
                decode_hex(&hex).ok_or_else(|| format!("minhash {hex:?} is not hexadecimal"))?;
            Some(Sketch::from_bytes(&bytes).map_err(|e| format!("minhash: {e}"))?)
        }
    };
    Ok(PageIn {
        url: l.url,
        host,
        simhash,
        sketch,
    })
}

/// Lowercase hexadecimal of `bytes`, as `minhash` is written.
pub fn encode_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) || !s.is_ascii() {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use simcrawl_dedup::MinHasher;

    #[test]
    fn global_ids_name_their_worker_and_index() {
        let gid = global_id(3, 1234);
        assert_eq!((owner(gid), local(gid)), (3, 1234));
    }

    #[test]
    fn jsonl_lines_are_parsed() {
        let sketch = MinHasher::default().sketch("one two three four five six");
        let text = format!(
            "{{\"url\":\"https://a.test/1\",\"simhash\":\"00000000000000ff\"}}\n\n\
             {{\"url\":\"https://b.test/2\",\"simhash\":7,\"host\":\"mirror\",\"minhash\":\"{}\"}}\n\
             {{\"url\":\"https://a.test:8080/3\",\"simhash\":\"0000000000000001\"}}\n",
            encode_hex(&sketch.to_bytes())
        );
        let mut pages = Vec::new();
        read_jsonl(text.as_bytes(), "in.jsonl", &mut pages).unwrap();
        assert_eq!(pages.len(), 3);
        assert_eq!((pages[0].simhash, pages[0].host.as_str()), (0xff, "a.test"));
        assert_eq!(pages[0].sketch, None);
        assert_eq!((pages[1].simhash, pages[1].host.as_str()), (7, "mirror"));
        assert_eq!(pages[1].sketch.as_ref(), Some(&sketch));
        assert_eq!(pages[2].host, "a.test:8080", "a host keeps its port");
        assert_eq!(host_of("http://127.0.0.1:8081/x"), "127.0.0.1:8081");
        let mut part = Part::new();
        for page in pages {
            part.push(page);
        }
        assert_eq!(part.url(2, 0), "https://a.test:8080/3");
        assert_eq!(part.sketch(1), Some(&sketch));
    }

    #[test]
    fn a_bad_line_is_named() {
        let text = "{\"url\":\"x\",\"simhash\":\"zz\"}\n";
        let err = read_jsonl(text.as_bytes(), "in.jsonl", &mut Vec::new()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "in.jsonl line 1: simhash \"zz\" is not 16 hexadecimal digits: invalid digit found in string"
        );
    }

    #[test]
    fn sketches_stay_aligned_when_only_some_pages_have_one() {
        let sketch = MinHasher::default().sketch("a b c d e f g");
        let mut part = Part::new();
        for (i, s) in [None, Some(sketch.clone()), None].into_iter().enumerate() {
            part.push(PageIn {
                url: format!("u{i}"),
                host: "h".into(),
                simhash: i as u64,
                sketch: s,
            });
        }
        assert_eq!(part.sketch(0), None);
        assert_eq!(part.sketch(1), Some(&sketch));
        assert_eq!(part.sketch(2), None);
        assert_eq!(part.host_counts(), vec![("h".to_string(), 3)]);
    }

    #[test]
    fn a_synthetic_job_split_over_workers_keeps_each_page_on_its_host() {
        let whole = Part::synthetic(vec![0; 10], 3, 0, 1);
        let halves = [
            Part::synthetic(vec![0; 5], 3, 0, 2),
            Part::synthetic(vec![0; 5], 3, 1, 2),
        ];
        for page in 0..10 {
            assert_eq!(
                halves[page % 2].host(page / 2),
                whole.host(page),
                "page {page}"
            );
        }
    }
}
