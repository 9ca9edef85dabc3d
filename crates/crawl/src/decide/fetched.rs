//! A response, analysed: what the driver hands the core for each page fetched. The analysis
//! (extraction, fingerprints, link keys) is CPU work the driver runs on the blocking pool.

use crate::archive::Exchange;
use crate::page::{Analyzer, PageAnalysis};
use crate::template::TemplateSet;
use simcrawl_fetch::{AddressClass, Body, FetchError};
use simcrawl_url::{Candidate, Canonicalizer};
use std::sync::Arc;
use std::time::Duration;
use url::Url;

/// How a page's fetch ended.
pub enum PageResult {
    /// No response (a refusal, a timeout, a reset, a cap).
    Failed(FetchError),
    /// The analysis task did not finish (it panicked); the page is counted as failed.
    Broken(String),
    /// The response was a redirect; the fetch stopped there. A target already seen makes the
    /// URL a `redirect-duplicate`; a new one goes through the frontier like a link, so that
    /// scope, include/exclude, robots.txt, traps and politeness apply to every hop.
    Redirected {
        /// The target.
        to: Url,
        /// The redirects followed before (none: every hop stops the fetch).
        hops: Vec<(Url, Url)>,
        /// Whether the target's key was already seen.
        seen: bool,
        /// The address class the redirect came from (`None`: another process's redirect), for
        /// the address policy of the target's request.
        class: Option<AddressClass>,
        /// The exchange, for the archive (`--warc`).
        #[allow(private_interfaces)]
        exchange: Option<Box<Exchange>>,
    },
    /// A response, analysed.
    Done(Box<FetchedPage>),
}

impl PageResult {
    /// The exchange for the archive, taken out.
    pub(crate) fn take_exchange(&mut self) -> Option<Box<Exchange>> {
        match self {
            PageResult::Redirected { exchange, .. } => exchange.take(),
            PageResult::Done(page) => page.exchange.take(),
            PageResult::Failed(_) | PageResult::Broken(_) => None,
        }
    }
}

/// A fetched page with the CPU work done.
pub struct FetchedPage {
    /// The exchange, ready for the archive (`--warc`).
    pub(crate) exchange: Option<Box<Exchange>>,
    /// The URL the body came from.
    pub final_url: Url,
    /// Its key, as `canon` gave it.
    pub final_key: Candidate,
    /// Redirects followed to get there.
    pub hops: Vec<(Url, Url)>,
    /// The HTTP status.
    pub status: u16,
    /// The address class the server answered from.
    pub class: AddressClass,
    /// The server's `Retry-After`.
    pub retry_after: Option<Duration>,
    /// The page analysed (HTML with a status below 400).
    pub analysis: Option<PageAnalysis>,
    /// Its declared canonical URL, keyed.
    pub canonical: Option<Candidate>,
    /// Its links, keyed.
    pub links: Vec<Candidate>,
    /// Each link's anchor text as the decider weighs it ([`crate::anchor`]), in the order of
    /// `links` (empty: none known).
    pub anchors: Vec<crate::anchor::AnchorWords>,
    /// Each link's own key hash (without learned rules), when `canon` has learned rules and it
    /// differs from the link's key: made with the analysis, off the core.
    pub plain_keys: Vec<Option<u128>>,
    /// Links past `CrawlConfig::max_links_per_page`, not offered.
    pub links_dropped: usize,
    /// The canonicaliser the keys were made with (re-key them if rules changed since).
    pub canon: Arc<Canonicalizer>,
    /// The canonicaliser without learned rules, when `canon` has some (for `plain_keys`).
    pub(crate) plain: Option<Arc<Canonicalizer>>,
    /// The body was not HTML.
    pub not_html: bool,
    /// The body was cut at the fetcher's size cap: the page is what its first bytes hold.
    pub truncated: bool,
}

/// The CPU work of one fetched page: extraction, fingerprints (without the lines of its host's
/// `template`, as [`Analyzer::apply_template`] makes them) and link keys. Fails only if the final
/// URL cannot be canonicalised, which the fetcher's own checks (http and https only) rule out.
pub fn analyse(
    mut fetched: simcrawl_fetch::Fetched,
    hops: Vec<(Url, Url)>,
    canon: &Arc<Canonicalizer>,
    plain: Option<&Arc<Canonicalizer>>,
    analyzer: &Analyzer,
    max_links: usize,
    template: Option<&TemplateSet>,
) -> Result<FetchedPage, String> {
    let final_url = fetched.final_url.clone();
    let final_key = canon
        .canonicalize_url(&final_url)
        .map_err(|e| format!("the final URL {final_url} has no canonical key: {e}"))?;
    let exchange = fetched
        .capture
        .take()
        .map(|c| Box::new(Exchange::prepare(&final_url, c, fetched.remote_addr)));
    let mut page = FetchedPage {
        exchange,
        hops,
        status: fetched.status,
        class: fetched.address_class,
        retry_after: fetched.retry_after,
        plain: plain.cloned(),
        truncated: fetched.truncated,
        ..FetchedPage::bare(final_url.clone(), final_key, canon)
    };
    match &fetched.body {
        Body::Text { text, .. } if fetched.status < 400 => {
            let link_header =
                (!fetched.headers.link.is_empty()).then(|| fetched.headers.link.join(", "));
            page.set_html(text, link_header.as_deref(), analyzer, max_links, template);
        }
        Body::Text { .. } => {}
        _ => page.not_html = true,
    }
    Ok(page)
}

impl FetchedPage {
    /// A page as [`analyse`] makes it from a 200 response with body `html` (for tests and tools
    /// that have a page without a fetch).
    pub fn from_html(
        url: &Url,
        html: &str,
        canon: &Arc<Canonicalizer>,
        analyzer: &Analyzer,
    ) -> Option<FetchedPage> {
        let final_key = canon.canonicalize_url(url).ok()?;
        let mut page = FetchedPage::bare(url.clone(), final_key, canon);
        page.set_html(html, None, analyzer, usize::MAX, None);
        Some(page)
    }

    /// A 200 answer from a private address with nothing analysed yet.
    fn bare(final_url: Url, final_key: Candidate, canon: &Arc<Canonicalizer>) -> FetchedPage {
        FetchedPage {
            exchange: None,
            final_url,
            final_key,
            hops: Vec::new(),
            status: 200,
            class: AddressClass::Private,
            retry_after: None,
            analysis: None,
            canonical: None,
            links: Vec::new(),
            anchors: Vec::new(),
            plain_keys: Vec::new(),
            links_dropped: 0,
            canon: Arc::clone(canon),
            plain: None,
            not_html: false,
            truncated: false,
        }
    }

    fn set_html(
        &mut self,
        text: &str,
        link_header: Option<&str>,
        analyzer: &Analyzer,
        max_links: usize,
        template: Option<&TemplateSet>,
    ) {
        let analysis = analyzer.analyze_html_with_template(
            text.as_bytes(),
            text,
            &self.final_url,
            link_header,
            template,
        );
        self.canonical = analysis
            .document
            .canonical
            .as_ref()
            .and_then(|c| self.canon.canonicalize_url(&c.url).ok());
        let links = &analysis.document.links;
        self.links_dropped = links.len().saturating_sub(max_links);
        (self.links, self.anchors) = links
            .iter()
            .take(max_links)
            .filter_map(|l| {
                let candidate = self.canon.canonicalize_url(&l.url).ok()?;
                let anchor = crate::anchor::AnchorWords::of_link(&l.text, l.url.as_str());
                Some((candidate, anchor))
            })
            .unzip();
        if let Some(plain) = &self.plain {
            self.plain_keys = self
                .links
                .iter()
                .map(|c| Some(plain.key_of(&c.fetch).hash128()).filter(|h| *h != c.key.hash128()))
                .collect();
        }
        self.analysis = Some(analysis);
    }

    /// Frees what the core never reads of the analysis (the whole page's text, the links as the
    /// extractor found them: the keyed links and the fingerprints stand for them), so that the
    /// analysis thread frees it rather than the coordinator. The normalised main text and its
    /// lines stay: the core
    /// keeps them for a page indexed while its host's template is learned
    /// ([`crate::refingerprint`]).
    pub fn shed(&mut self) {
        if let Some(analysis) = self.analysis.as_mut() {
            analysis.document.full_text = String::new();
            analysis.document.links = Vec::new();
        }
    }

    /// Makes the page's fingerprints without its host's template lines (see
    /// [`Analyzer::apply_template`]); part of the CPU work the driver does off the core.
    pub fn apply_template(&mut self, analyzer: &Analyzer, template: Option<&TemplateSet>) {
        if let Some(analysis) = self.analysis.as_mut() {
            analyzer.apply_template(analysis, template);
        }
    }
}
