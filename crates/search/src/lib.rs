//! simcrawl's full-text index: the pages a crawl kept, in a tantivy index beside the store
//! (`<store>/index/`), ranked by BM25, with a snippet and the copies skipped against each page.
//!
//! The crawl writes it as it indexes pages and commits it at each of the store's checkpoints,
//! after the store's flush, with the number of pages committed as the commit's payload
//! ([`SearchIndex::committed_pages`]). Page ids are dense (0, 1, 2, ...), so after a crash the
//! crawl puts back the pages the store has and the index lost, and drops any the index has that
//! the store lost ([`SearchIndex::align`]): a page is in the search index if and only if the
//! store indexed it. Reading needs no lock: `simcrawl search` works while a crawl runs.
//!
//! A copy skipped against a page is a small document of its own ([`SearchIndex::add_copy`]), not
//! a field of the page's: a page's entry is written once, however many copies it gets later (a
//! crawl skips more copies than it keeps pages, and writing the page again for each, with its
//! text, was most of the index's work). A search gathers each hit's copies by the page's id.
//!
//! ```
//! use simcrawl_search::{PageDoc, SearchIndex};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let mut index = SearchIndex::open(dir.path()).unwrap();
//! index.put(&PageDoc {
//!     id: 0,
//!     url: "http://example.org/tides.html",
//!     title: "How the harbour tide gauge works",
//!     text: "The tide gauge at the end of the north pier is a stilling well.",
//!     host: "example.org",
//!     time_ms: 0,
//!     simhash: 0xb95d143c92a8cf37,
//! }).unwrap();
//! index.add_copy(0, 1, Some("http://mirror.example/tides.html")).unwrap();
//! index.commit(1).unwrap();
//! let hits = index.search("tide gauge", 10).unwrap();
//! assert_eq!(hits[0].url, "http://example.org/tides.html");
//! assert_eq!(hits[0].copies, ["http://mirror.example/tides.html"]);
//! assert_eq!(hits[0].copies_total, 1);
//! assert!(hits[0].snippet.contains("[tide]"));
//! ```

use std::path::{Path, PathBuf};

use tantivy::collector::{Count, TopDocs};
use tantivy::directory::MmapDirectory;
use tantivy::indexer::UserOperation;
use tantivy::query::{BooleanQuery, Occur, Query, QueryParser, TermQuery};
use tantivy::schema::IndexRecordOption;
use tantivy::schema::{FAST, Field, INDEXED, STORED, STRING, Schema, TEXT, Value};
use tantivy::snippet::SnippetGenerator;
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term, doc};

/// The directory of the search index inside a store directory.
pub const INDEX_DIR_NAME: &str = "index";

/// Copy URLs kept per page in the index: later copies are counted, without their URL.
pub const MAX_COPIES: usize = 100;

/// The search index's directory for the store in `store_dir`.
pub fn index_dir(store_dir: &Path) -> PathBuf {
    store_dir.join(INDEX_DIR_NAME)
}

/// What can go wrong with the search index.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SearchError {
    /// tantivy failed; the message names the directory.
    #[error("search index {path}: {source}")]
    Index {
        /// The index directory.
        path: PathBuf,
        /// What tantivy said.
        source: tantivy::TantivyError,
    },
    /// The directory could not be created or read.
    #[error("search index {path}: {source}")]
    Io {
        /// The index directory.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The query does not parse.
    #[error("bad query {query:?}: {reason}")]
    Query {
        /// The query.
        query: String,
        /// Why.
        reason: String,
    },
    /// There is no index in the directory (read-only open).
    #[error("no search index in {0}: run `simcrawl index --store DIR` to build it from the store")]
    Missing(PathBuf),
    /// The index's files are damaged (a file missing, cut or overwritten): tantivy's complaint,
    /// shortened.
    #[error(
        "the search index in {path} is damaged ({what}): run `simcrawl index --store DIR` to build it again from the store (or crawl with --no-search-index)"
    )]
    Damaged {
        /// The index directory.
        path: PathBuf,
        /// What tantivy said, cut to a line.
        what: String,
    },
    /// The index was written by a build with another layout of its documents.
    #[error(
        "the search index in {0} was built by another version of simcrawl: run `simcrawl index --store DIR` to build it again from the store"
    )]
    OtherLayout(PathBuf),
}

/// A page as the index holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageDoc<'a> {
    /// The page's id in the store.
    pub id: u32,
    /// Its URL.
    pub url: &'a str,
    /// Its title (empty if none).
    pub title: &'a str,
    /// Its main text.
    pub text: &'a str,
    /// Its host (`host[:port]`).
    pub host: &'a str,
    /// When it was fetched (Unix ms).
    pub time_ms: u64,
    /// Its SimHash.
    pub simhash: u64,
}

/// One search result.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// BM25 score.
    pub score: f32,
    /// The page's id in the store.
    pub id: u32,
    /// Its URL.
    pub url: String,
    /// Its title.
    pub title: String,
    /// Its host.
    pub host: String,
    /// When it was fetched (Unix ms).
    pub time_ms: u64,
    /// Its SimHash.
    pub simhash: u64,
    /// A passage of the text with the query's terms in `[brackets]`.
    pub snippet: String,
    /// URLs of copies skipped against it (at most [`MAX_COPIES`]).
    pub copies: Vec<String>,
    /// How many copies were skipped against it.
    pub copies_total: u64,
}

#[derive(Debug, Clone, Copy)]
struct Fields {
    id: Field,
    url: Field,
    url_text: Field,
    title: Field,
    text: Field,
    host: Field,
    time: Field,
    simhash: Field,
    /// "page" or "copy".
    kind: Field,
    /// A copy's page id.
    copy_of: Field,
    /// A copy's number among its page's copies (1, 2, ...).
    copy_seq: Field,
    /// A copy's URL (the first [`MAX_COPIES`] of a page's).
    copy: Field,
}

/// The values of the `kind` field.
const PAGE: &str = "page";
const COPY: &str = "copy";

fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let fields = Fields {
        id: b.add_u64_field("id", INDEXED | STORED | FAST),
        url: b.add_text_field("url", STRING | STORED),
        url_text: b.add_text_field("url_text", TEXT),
        title: b.add_text_field("title", TEXT | STORED),
        text: b.add_text_field("text", TEXT | STORED),
        host: b.add_text_field("host", STRING | STORED),
        time: b.add_u64_field("time_ms", STORED),
        simhash: b.add_u64_field("simhash", STORED),
        kind: b.add_text_field("kind", STRING),
        copy_of: b.add_u64_field("copy_of", INDEXED),
        copy_seq: b.add_u64_field("copy_seq", FAST),
        copy: b.add_text_field("copy", STRING | STORED),
    };
    (b.build(), fields)
}

/// The search index of one store.
pub struct SearchIndex {
    dir: PathBuf,
    index: Index,
    reader: IndexReader,
    writer: Option<IndexWriter>,
    fields: Fields,
    /// Pages `0..committed` may be in the index as of the last commit: a page with a higher id is
    /// not, unless it is in `put_since_commit`, so adding it needs no delete (a delete term is
    /// looked up in every segment at the commit, a cost that grows with the index).
    committed: u32,
    /// Pages at or above `committed` added since the last commit.
    put_since_commit: std::collections::HashSet<u32>,
    /// Adds and deletes not yet handed to tantivy's indexing thread, in order: they go over in
    /// batches of [`BATCH`] (one wake-up of that thread each, instead of one per page) and
    /// before every commit.
    pending: Vec<UserOperation>,
    /// The page count the last commit recorded, and whether anything was queued since: a commit
    /// with nothing to add to it is not made (tantivy makes a new 10,000-slot document channel,
    /// restarts its indexing thread and writes and syncs `meta.json` at every commit, empty or
    /// not: a crawl's first checkpoint, before any page, was a third of a one-page crawl's
    /// search index).
    last_commit: Option<u32>,
    queued_since_commit: bool,
}

/// Operations handed to tantivy's indexing thread at once.
const BATCH: usize = 64;

impl std::fmt::Debug for SearchIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchIndex")
            .field("dir", &self.dir)
            .field("writable", &self.writer.is_some())
            .finish_non_exhaustive()
    }
}

/// Memory for tantivy's indexing buffer (one thread).
const WRITER_MEMORY: usize = 32 << 20;

/// Segments with more documents than this are not merged again.
///
/// tantivy's default merges segments of similar size up to ten million documents, so that as a
/// crawl grows, each merge reads more of the index: at 500,000 pages of the test web a merge
/// mapped 1.4 GB of segments, which counted in the crawl's RSS for the seconds it ran (its
/// anonymous memory was 210-280 MB), and its CPU is the crawl's. The writer's segments (its 32
/// MiB buffer: some thousands of pages each) are merged in eights up to about this size, then
/// left alone: a merge reads at most a few hundred MB, and an index of N pages has about N /
/// 50,000 large segments to search.
pub const MAX_DOCS_BEFORE_MERGE: usize = 50_000;

fn merge_policy() -> tantivy::merge_policy::LogMergePolicy {
    let mut policy = tantivy::merge_policy::LogMergePolicy::default();
    policy.set_max_docs_before_merge(MAX_DOCS_BEFORE_MERGE);
    policy
}

/// What opening the index in `dir` failed on: another layout, damaged files (told in a line:
/// tantivy's complaint about a damaged `meta.json` quotes the whole file), or another error.
fn opening_error(dir: &Path, e: tantivy::TantivyError) -> SearchError {
    use tantivy::TantivyError as T;
    match e {
        T::SchemaError(_) => SearchError::OtherLayout(dir.to_owned()),
        T::DataCorruption(_)
        | T::OpenReadError(_)
        | T::IncompatibleIndex(_)
        | T::DeserializeError(_) => {
            let full = e.to_string();
            let line = full.lines().next().unwrap_or_default();
            let mut what: String = line.chars().take(160).collect();
            if what.len() < full.len() {
                what.push_str("...");
            }
            SearchError::Damaged {
                path: dir.to_owned(),
                what,
            }
        }
        e => SearchError::Index {
            path: dir.to_owned(),
            source: e,
        },
    }
}

impl SearchIndex {
    /// Opens the index in `dir` for writing, creating it if needed.
    pub fn open(dir: &Path) -> Result<SearchIndex, SearchError> {
        std::fs::create_dir_all(dir).map_err(|e| SearchError::Io {
            path: dir.to_owned(),
            source: e,
        })?;
        let index = Self::open_index(dir)?;
        let writer: IndexWriter = index
            .writer_with_num_threads(1, WRITER_MEMORY)
            .map_err(|e| SearchError::Index {
                path: dir.to_owned(),
                source: e,
            })?;
        writer.set_merge_policy(Box::new(merge_policy()));
        Self::with_index(dir, index, Some(writer))
    }

    /// Opens the index in `dir` to search it, without taking the writer's lock (a crawl may be
    /// writing it).
    pub fn open_read_only(dir: &Path) -> Result<SearchIndex, SearchError> {
        if !dir.join("meta.json").exists() {
            return Err(SearchError::Missing(dir.to_owned()));
        }
        let directory = MmapDirectory::open(dir).map_err(|e| SearchError::Index {
            path: dir.to_owned(),
            source: e.into(),
        })?;
        let index = Index::open(ReadOnly(directory)).map_err(|e| opening_error(dir, e))?;
        Self::with_index(dir, index, None)
    }

    fn open_index(dir: &Path) -> Result<Index, SearchError> {
        let directory = MmapDirectory::open(dir).map_err(|e| SearchError::Index {
            path: dir.to_owned(),
            source: e.into(),
        })?;
        Index::open_or_create(directory, schema().0).map_err(|e| opening_error(dir, e))
    }

    fn with_index(
        dir: &Path,
        index: Index,
        writer: Option<IndexWriter>,
    ) -> Result<SearchIndex, SearchError> {
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(|e| opening_error(dir, e))?;
        let mut index = SearchIndex {
            dir: dir.to_owned(),
            index,
            reader,
            writer,
            fields: schema().1,
            committed: 0,
            put_since_commit: std::collections::HashSet::new(),
            pending: Vec::new(),
            last_commit: None,
            queued_since_commit: false,
        };
        index.committed = index.committed_pages()?;
        index.last_commit = Some(index.committed);
        // An index written by a crash-interrupted crawl, or by an older build, may hold entries
        // above its recorded page count: then every put replaces.
        let docs = index.len();
        if docs > u64::from(index.committed) {
            index.committed = u32::MAX;
        }
        Ok(index)
    }

    fn err(&self, e: tantivy::TantivyError) -> SearchError {
        SearchError::Index {
            path: self.dir.clone(),
            source: e,
        }
    }

    /// Queues `op` behind the operations before it; a full batch goes to the indexing thread.
    fn queue(&mut self, op: UserOperation) -> Result<(), SearchError> {
        self.writer()?;
        self.queued_since_commit = true;
        self.pending.push(op);
        if self.pending.len() >= BATCH {
            self.send_pending()?;
        }
        Ok(())
    }

    /// Hands the queued operations to the indexing thread, in order.
    fn send_pending(&mut self) -> Result<(), SearchError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let batch = std::mem::take(&mut self.pending);
        let result = self.writer()?.run(batch);
        result.map(|_| ()).map_err(|e| self.err(e))
    }

    fn writer(&mut self) -> Result<&mut IndexWriter, SearchError> {
        let dir = self.dir.clone();
        self.writer.as_mut().ok_or(SearchError::Index {
            path: dir,
            source: tantivy::TantivyError::InvalidArgument(
                "the index was opened read-only".to_owned(),
            ),
        })
    }

    /// Adds page `doc.id`, replacing the entry it had (its copies changed, say). Visible to
    /// searches after the next [`commit`](SearchIndex::commit).
    pub fn put(&mut self, page: &PageDoc<'_>) -> Result<(), SearchError> {
        let f = self.fields;
        let document = doc!(
            f.id => u64::from(page.id),
            f.url => page.url,
            f.url_text => page.url,
            f.title => page.title,
            f.text => page.text,
            f.host => page.host,
            f.time => page.time_ms,
            f.simhash => page.simhash,
            f.kind => PAGE,
        );
        let replaces = page.id < self.committed || !self.put_since_commit.insert(page.id);
        if replaces {
            self.queue(UserOperation::Delete(Term::from_field_u64(
                f.id,
                u64::from(page.id),
            )))?;
        }
        self.queue(UserOperation::Add(document))
    }

    /// Removes page `id` and its copies.
    pub fn delete(&mut self, id: u32) -> Result<(), SearchError> {
        let f = self.fields;
        self.queue(UserOperation::Delete(Term::from_field_u64(
            f.id,
            u64::from(id),
        )))?;
        self.queue(UserOperation::Delete(Term::from_field_u64(
            f.copy_of,
            u64::from(id),
        )))
    }

    /// Adds copy number `seq` (1, 2, ...) skipped against page `original`; its URL is kept for
    /// the first [`MAX_COPIES`]. Visible after the next [`commit`](SearchIndex::commit).
    pub fn add_copy(
        &mut self,
        original: u32,
        seq: u64,
        url: Option<&str>,
    ) -> Result<(), SearchError> {
        let f = self.fields;
        let mut document = doc!(
            f.kind => COPY,
            f.copy_of => u64::from(original),
            f.copy_seq => seq,
        );
        if let Some(url) = url.filter(|_| seq <= MAX_COPIES as u64) {
            document.add_text(f.copy, url);
        }
        self.queue(UserOperation::Add(document))
    }

    /// Copies in the index (as of the last commit).
    pub fn copy_count(&self) -> u64 {
        self.count_kind(COPY)
    }

    /// Removes every copy (to add them again from the store after a crash).
    pub fn delete_copies(&mut self) -> Result<(), SearchError> {
        let f = self.fields;
        self.queue(UserOperation::Delete(Term::from_field_text(f.kind, COPY)))
    }

    /// Makes every change durable and visible, recording that the store's pages `0..pages` are
    /// in the index. Nothing is written when nothing was added or deleted since the last commit
    /// and it recorded the same count.
    pub fn commit(&mut self, pages: u32) -> Result<(), SearchError> {
        if !self.queued_since_commit && self.last_commit == Some(pages) {
            return Ok(());
        }
        let payload = serde_json::json!({ "pages": pages }).to_string();
        self.send_pending()?;
        let writer = self.writer()?;
        let mut prepared = writer.prepare_commit().map_err(|e| SearchError::Index {
            path: PathBuf::new(),
            source: e,
        })?;
        prepared.set_payload(&payload);
        prepared.commit().map_err(|e| self.err(e))?;
        let highest_put = self
            .put_since_commit
            .drain()
            .max()
            .map_or(0, |id| id.saturating_add(1));
        self.committed = self.committed.max(pages).max(highest_put);
        self.last_commit = Some(pages);
        self.queued_since_commit = false;
        self.reader.reload().map_err(|e| self.err(e))
    }

    /// How many of the store's pages the last commit held (0 for a new index).
    pub fn committed_pages(&self) -> Result<u32, SearchError> {
        let metas = self.index.load_metas().map_err(|e| self.err(e))?;
        Ok(metas
            .payload
            .as_deref()
            .and_then(|p| serde_json::from_str::<serde_json::Value>(p).ok())
            .and_then(|v| v.get("pages")?.as_u64())
            .map_or(0, |n| n.min(u64::from(u32::MAX)) as u32))
    }

    /// Brings a committed index in line with a store of `store_pages` pages after a crash: pages
    /// the index committed beyond the store's are removed, and the ids of the store's pages the
    /// index lacks are returned for the caller to [`put`](SearchIndex::put). Commit afterwards.
    pub fn align(&mut self, store_pages: u32) -> Result<std::ops::Range<u32>, SearchError> {
        let committed = self.committed_pages()?;
        for id in store_pages..committed {
            self.delete(id)?;
        }
        // The deletes above come before any later add of those ids, so they remove only the
        // old entries.
        if self.committed != u32::MAX {
            self.committed = committed.min(store_pages);
        }
        Ok(committed.min(store_pages)..store_pages)
    }

    /// Pages in the index (as of the last commit).
    pub fn len(&self) -> u64 {
        self.count_kind(PAGE)
    }

    /// Documents of one kind (as of the last commit).
    fn count_kind(&self, kind: &str) -> u64 {
        let query = TermQuery::new(
            Term::from_field_text(self.fields.kind, kind),
            IndexRecordOption::Basic,
        );
        self.reader
            .searcher()
            .search(&query, &Count)
            .map_or(0, |n| n as u64)
    }

    /// Whether the index holds no page.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every page id in the index, sorted (as of the last commit).
    pub fn ids(&self) -> Result<Vec<u32>, SearchError> {
        let searcher = self.reader.searcher();
        let mut ids = Vec::new();
        for segment in searcher.segment_readers() {
            // A segment of copies alone has no page id column.
            let Some(column) = segment
                .fast_fields()
                .column_opt::<u64>("id")
                .map_err(|e| self.err(e))?
            else {
                continue;
            };
            for doc in segment.doc_ids_alive() {
                if let Some(id) = column.first(doc) {
                    ids.push(id as u32);
                }
            }
        }
        ids.sort_unstable();
        Ok(ids)
    }

    /// The best `limit` pages for `query` (tantivy's query language over title, text and URL;
    /// `title:` and `url_text:` restrict to a field), best first.
    pub fn search(&self, query: &str, limit: usize) -> Result<Vec<Hit>, SearchError> {
        Ok(self.search_counted(query, limit)?.0)
    }

    /// [`search`](SearchIndex::search), and how many pages match in all (the `limit` best are
    /// returned).
    pub fn search_counted(
        &self,
        query: &str,
        limit: usize,
    ) -> Result<(Vec<Hit>, usize), SearchError> {
        let f = self.fields;
        let searcher = self.reader.searcher();
        let mut parser = QueryParser::for_index(&self.index, vec![f.title, f.text, f.url_text]);
        parser.set_field_boost(f.title, 2.0);
        let parsed = parser.parse_query(query).map_err(|e| SearchError::Query {
            query: query.to_owned(),
            reason: e.to_string(),
        })?;
        // Copies are documents too (`add_copy`): a query that matches every document (`*`)
        // would list them as pages. A clause that must not match adds nothing to the score.
        let parsed: Box<dyn Query> = Box::new(BooleanQuery::new(vec![
            (Occur::Must, parsed),
            (
                Occur::MustNot,
                Box::new(TermQuery::new(
                    Term::from_field_text(f.kind, COPY),
                    IndexRecordOption::Basic,
                )),
            ),
        ]));
        let (total, top) = searcher
            .search(
                &parsed,
                &(Count, TopDocs::with_limit(limit.max(1)).order_by_score()),
            )
            .map_err(|e| self.err(e))?;
        let mut snippets =
            SnippetGenerator::create(&searcher, &*parsed, f.text).map_err(|e| self.err(e))?;
        snippets.set_max_num_chars(200);
        let mut hits = Vec::with_capacity(top.len());
        for (score, address) in top {
            let document: TantivyDocument = searcher.doc(address).map_err(|e| self.err(e))?;
            let text = |field| {
                document
                    .get_first(field)
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default()
            };
            let number = |field| {
                document
                    .get_first(field)
                    .and_then(|v| v.as_u64())
                    .unwrap_or(0)
            };
            let mut snippet = snippets.snippet_from_doc(&document);
            snippet.set_snippet_prefix_postfix("[", "]");
            let id = number(f.id) as u32;
            let (copies, copies_total) = self.copies_of(&searcher, id)?;
            let passage = if snippet.fragment().is_empty() {
                text(f.text).chars().take(200).collect()
            } else {
                plain(&snippet.to_html())
            };
            hits.push(Hit {
                score,
                id,
                url: text(f.url),
                title: text(f.title),
                host: text(f.host),
                time_ms: number(f.time),
                simhash: number(f.simhash),
                snippet: passage.split_whitespace().collect::<Vec<_>>().join(" "),
                copies,
                copies_total,
            });
        }
        Ok((hits, total))
    }

    /// The URLs of the first [`MAX_COPIES`] copies of page `id`, in the order they were
    /// skipped, and how many copies it has (as of the last commit).
    pub fn copies(&self, id: u32) -> Result<(Vec<String>, u64), SearchError> {
        self.copies_of(&self.reader.searcher(), id)
    }

    fn copies_of(
        &self,
        searcher: &tantivy::Searcher,
        id: u32,
    ) -> Result<(Vec<String>, u64), SearchError> {
        let f = self.fields;
        let query = TermQuery::new(
            Term::from_field_u64(f.copy_of, u64::from(id)),
            IndexRecordOption::Basic,
        );
        let first = TopDocs::with_limit(MAX_COPIES)
            .order_by_fast_field::<u64>("copy_seq", tantivy::Order::Asc);
        let (total, first) = searcher
            .search(&query, &(Count, first))
            .map_err(|e| self.err(e))?;
        let mut urls = Vec::with_capacity(first.len());
        for (_, address) in first {
            let document: TantivyDocument = searcher.doc(address).map_err(|e| self.err(e))?;
            if let Some(url) = document.get_first(f.copy).and_then(|v| v.as_str()) {
                urls.push(url.to_owned());
            }
        }
        Ok((urls, total as u64))
    }
}

/// Undoes the HTML escaping of a snippet (`to_html` escapes `&`, `<`, `>`, quotes).
fn plain(html: &str) -> String {
    html.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// A directory read and never written: no lock file, no `.managed.json`, nothing deleted. A
/// reader holds no lock in tantivy's sense (a crawl may be committing meanwhile: a reader sees
/// the commits it loaded), so that a store on a read-only disk, or of another user, can be
/// searched, and searching changes no file of it.
#[derive(Debug, Clone)]
struct ReadOnly(MmapDirectory);

impl ReadOnly {
    fn refused(path: &Path) -> std::io::Error {
        std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!("{}: the index is open for reading only", path.display()),
        )
    }
}

impl tantivy::Directory for ReadOnly {
    fn get_file_handle(
        &self,
        path: &Path,
    ) -> Result<
        std::sync::Arc<dyn tantivy::directory::FileHandle>,
        tantivy::directory::error::OpenReadError,
    > {
        self.0.get_file_handle(path)
    }

    fn delete(&self, path: &Path) -> Result<(), tantivy::directory::error::DeleteError> {
        Err(tantivy::directory::error::DeleteError::IoError {
            io_error: std::sync::Arc::new(Self::refused(path)),
            filepath: path.to_owned(),
        })
    }

    fn exists(&self, path: &Path) -> Result<bool, tantivy::directory::error::OpenReadError> {
        self.0.exists(path)
    }

    fn open_write(
        &self,
        path: &Path,
    ) -> Result<tantivy::directory::WritePtr, tantivy::directory::error::OpenWriteError> {
        Err(tantivy::directory::error::OpenWriteError::wrap_io_error(
            Self::refused(path),
            path.to_owned(),
        ))
    }

    fn atomic_read(
        &self,
        path: &Path,
    ) -> Result<Vec<u8>, tantivy::directory::error::OpenReadError> {
        self.0.atomic_read(path)
    }

    fn atomic_write(&self, path: &Path, _data: &[u8]) -> std::io::Result<()> {
        Err(Self::refused(path))
    }

    fn sync_directory(&self) -> std::io::Result<()> {
        Ok(())
    }

    fn acquire_lock(
        &self,
        _lock: &tantivy::directory::Lock,
    ) -> Result<tantivy::directory::DirectoryLock, tantivy::directory::error::LockError> {
        Ok(tantivy::directory::DirectoryLock::from(Box::new(())))
    }

    fn watch(
        &self,
        watch_callback: tantivy::directory::WatchCallback,
    ) -> tantivy::Result<tantivy::directory::WatchHandle> {
        self.0.watch(watch_callback)
    }
}

/// The best `limit` pages for `query` over several indexes (the stores of a sharded crawl's
/// processes, whose pages are apart), best first, each with the number of its index; and how many
/// pages match in all. Each index scores with its own statistics (BM25's document frequencies):
/// indexes of one crawl's shares have alike ones, and their scores are merged as they are.
pub fn search_across(
    indexes: &[SearchIndex],
    query: &str,
    limit: usize,
) -> Result<(Vec<(usize, Hit)>, usize), SearchError> {
    let mut hits = Vec::new();
    let mut total = 0;
    for (n, index) in indexes.iter().enumerate() {
        let (found, matched) = index.search_counted(query, limit)?;
        total += matched;
        hits.extend(found.into_iter().map(|hit| (n, hit)));
    }
    // Best first (a stable sort: ties in each index's order, the indexes in turn), and at least
    // one, as one index's search gives.
    hits.sort_by(|(_, a), (_, b)| b.score.total_cmp(&a.score));
    hits.truncate(limit.max(1));
    Ok((hits, total))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(id: u32, url: &str, text: &str) -> PageDoc<'static> {
        PageDoc {
            id,
            url: Box::leak(url.to_owned().into_boxed_str()),
            title: "",
            text: Box::leak(text.to_owned().into_boxed_str()),
            host: "h",
            time_ms: 0,
            simhash: 0,
        }
    }

    /// Every entry of `dir` with its length and modification time, and the directory's own.
    fn listing(dir: &Path) -> Vec<(String, u64, std::time::SystemTime)> {
        let mut out: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let m = e.metadata().unwrap();
                let name = e.file_name().to_string_lossy().into_owned();
                (name, m.len(), m.modified().unwrap())
            })
            .collect();
        out.sort();
        let m = std::fs::metadata(dir).unwrap();
        out.push((".".into(), 0, m.modified().unwrap()));
        out
    }

    #[test]
    fn reading_the_index_creates_changes_and_removes_no_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut index = SearchIndex::open(dir.path()).expect("open");
        index
            .put(&page(0, "http://h/a", "alpha beta"))
            .expect("put");
        index.add_copy(0, 1, Some("http://m/a")).expect("copy");
        index.commit(1).expect("commit");
        drop(index);
        let before = listing(dir.path());
        // A lock file made and removed would change the directory's time.
        std::thread::sleep(std::time::Duration::from_millis(20));
        let reader = SearchIndex::open_read_only(dir.path()).expect("read-only");
        let hits = reader.search("alpha", 10).expect("search");
        assert_eq!(hits[0].copies, ["http://m/a"]);
        assert_eq!(reader.committed_pages().expect("payload"), 1);
        drop(reader);
        assert_eq!(listing(dir.path()), before);
        // Nor does it need to write the lock files: as a user who may only read the store (a
        // directory in the lock file's place cannot be opened for writing, even by root).
        for lock in [".tantivy-meta.lock", ".tantivy-writer.lock"] {
            let path = dir.path().join(lock);
            if path.exists() {
                std::fs::remove_file(&path).unwrap();
            }
            std::fs::create_dir(&path).unwrap();
        }
        let reader = SearchIndex::open_read_only(dir.path()).expect("read-only");
        assert_eq!(reader.search("beta", 10).expect("search").len(), 1);
    }

    #[test]
    fn a_commit_with_nothing_new_writes_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut index = SearchIndex::open(dir.path()).expect("open");
        let opstamp = |index: &SearchIndex| index.index.load_metas().expect("metas").opstamp;
        let fresh = opstamp(&index);
        // A crawl's first checkpoint, before any page.
        index.commit(0).expect("commit");
        assert_eq!(opstamp(&index), fresh);
        index.put(&page(0, "http://h/a", "alpha")).expect("put");
        index.commit(1).expect("commit");
        let one = opstamp(&index);
        assert!(one > fresh);
        index.commit(1).expect("commit");
        assert_eq!(opstamp(&index), one, "nothing new: no commit");
        // A new count is recorded, even with no page added (pages the store keeps out).
        index.commit(2).expect("commit");
        assert!(opstamp(&index) > one);
        assert_eq!(index.committed_pages().expect("payload"), 2);
        // Opened again, the count is known: the same count is not committed again.
        drop(index);
        let mut index = SearchIndex::open(dir.path()).expect("open");
        let two = opstamp(&index);
        index.commit(2).expect("commit");
        assert_eq!(opstamp(&index), two);
        index.delete(0).expect("delete");
        index.commit(2).expect("commit");
        assert!(opstamp(&index) > two, "a delete is committed");
        assert_eq!(index.search("alpha", 10).expect("search").len(), 0);
    }

    #[test]
    fn a_search_across_indexes_merges_their_hits_best_first() {
        let dirs = [
            tempfile::tempdir().expect("tempdir"),
            tempfile::tempdir().expect("tempdir"),
        ];
        for (n, dir) in dirs.iter().enumerate() {
            let mut index = SearchIndex::open(dir.path()).expect("open");
            // The same ids in both: a store's ids count from 0.
            index
                .put(&page(
                    0,
                    &format!("http://h{n}/a"),
                    "harbour tide tide tide",
                ))
                .expect("put");
            index
                .put(&page(
                    1,
                    &format!("http://h{n}/b"),
                    "harbour charts and buoys",
                ))
                .expect("put");
            index
                .put(&page(2, &format!("http://h{n}/c"), "nothing of the kind"))
                .expect("put");
            index.commit(3).expect("commit");
        }
        let indexes: Vec<SearchIndex> = dirs
            .iter()
            .map(|d| SearchIndex::open_read_only(d.path()).expect("read-only"))
            .collect();
        let (hits, total) = search_across(&indexes, "tide harbour", 3).expect("search");
        assert_eq!(total, 4, "two pages match in each");
        assert_eq!(hits.len(), 3);
        assert!(hits.windows(2).all(|w| w[0].1.score >= w[1].1.score));
        // The tide pages first, one of each index.
        let first: Vec<(usize, &str)> = hits[..2]
            .iter()
            .map(|(n, h)| (*n, h.url.as_str()))
            .collect();
        assert_eq!(first, [(0, "http://h0/a"), (1, "http://h1/a")]);
        // At least one, as one index's search gives.
        let (first_only, _) = search_across(&indexes, "tide harbour", 0).expect("search");
        assert_eq!(first_only.len(), 1);
        let one = search_across(&indexes[..1], "tide harbour", 10).expect("search");
        assert_eq!(one.0.len(), 2);
        assert_eq!(
            one.0.iter().map(|(_, h)| h.clone()).collect::<Vec<_>>(),
            indexes[0].search("tide harbour", 10).expect("search")
        );
    }

    #[test]
    fn put_replaces_and_commit_records_the_pages() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut index = SearchIndex::open(dir.path()).expect("open");
        assert_eq!(index.committed_pages().expect("payload"), 0);
        index.put(&page(0, "http://h/a", "alpha")).expect("put");
        index.put(&page(1, "http://h/b", "beta")).expect("put");
        index
            .put(&page(0, "http://h/a", "gamma"))
            .expect("put again");
        index.commit(2).expect("commit");
        assert_eq!(index.ids().expect("ids"), vec![0, 1]);
        assert!(index.search("alpha", 10).expect("search").is_empty());
        assert_eq!(index.search("gamma", 10).expect("search")[0].id, 0);
        drop(index);
        let reopened = SearchIndex::open_read_only(dir.path()).expect("read-only");
        assert_eq!(reopened.committed_pages().expect("payload"), 2);
        assert_eq!(reopened.len(), 2);
    }

    #[test]
    fn uncommitted_pages_are_lost_and_align_says_what_to_put_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        {
            let mut index = SearchIndex::open(dir.path()).expect("open");
            for id in 0..3 {
                index
                    .put(&page(id, &format!("http://h/{id}"), "text"))
                    .expect("put");
            }
            index.commit(3).expect("commit");
            index.put(&page(3, "http://h/3", "text")).expect("put");
            // Dropped without a commit, as a kill leaves it.
        }
        let mut index = SearchIndex::open(dir.path()).expect("reopen");
        assert_eq!(index.ids().expect("ids"), vec![0, 1, 2]);
        // The store has 5 pages: 3 and 4 are to be put back.
        assert_eq!(index.align(5).expect("align"), 3..5);
        // The store has 2: page 2 goes.
        assert_eq!(index.align(2).expect("align"), 2..2);
        index.commit(2).expect("commit");
        assert_eq!(index.ids().expect("ids"), vec![0, 1]);
    }

    #[test]
    fn a_page_put_again_after_a_commit_or_a_reopen_replaces_its_entry() {
        let dir = tempfile::tempdir().expect("tempdir");
        {
            let mut index = SearchIndex::open(dir.path()).expect("open");
            index.put(&page(0, "http://h/0", "alpha")).expect("put");
            index.put(&page(1, "http://h/1", "beta")).expect("put");
            index.commit(2).expect("commit");
            index
                .put(&page(1, "http://h/1", "gamma"))
                .expect("put again");
            index.put(&page(2, "http://h/2", "delta")).expect("put");
            index.commit(3).expect("commit");
            assert_eq!(index.ids().expect("ids"), vec![0, 1, 2]);
        }
        let mut index = SearchIndex::open(dir.path()).expect("reopen");
        assert_eq!(index.align(3).expect("align"), 3..3);
        index
            .put(&page(2, "http://h/2", "epsilon"))
            .expect("put again");
        index.commit(3).expect("commit");
        assert_eq!(index.ids().expect("ids"), vec![0, 1, 2]);
        for gone in ["beta", "delta"] {
            assert!(index.search(gone, 10).expect("search").is_empty(), "{gone}");
        }
        assert_eq!(index.search("epsilon", 10).expect("search")[0].id, 2);
        drop(index);
        // The store lost pages 1 and 2, and indexes another page under id 1.
        let mut index = SearchIndex::open(dir.path()).expect("reopen");
        assert_eq!(index.align(1).expect("align"), 1..1);
        index.put(&page(1, "http://h/1b", "zeta")).expect("put");
        index.commit(2).expect("commit");
        assert_eq!(index.ids().expect("ids"), vec![0, 1]);
        for gone in ["gamma", "epsilon"] {
            assert!(index.search(gone, 10).expect("search").is_empty(), "{gone}");
        }
        assert_eq!(index.search("zeta", 10).expect("search")[0].id, 1);
    }

    #[test]
    fn copies_are_listed_in_order_counted_past_the_cap_and_go_with_their_page() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut index = SearchIndex::open(dir.path()).expect("open");
        index.put(&page(0, "http://h/a", "alpha")).expect("put");
        index
            .put(&page(1, "http://h/b", "alpha beta"))
            .expect("put");
        let total = MAX_COPIES as u64 + 5;
        for seq in 1..=total {
            index
                .add_copy(0, seq, Some(&format!("http://m/a{seq}")))
                .expect("copy");
        }
        index.commit(2).expect("commit");
        // A later commit of more copies: one page, its copies in two segments.
        index.add_copy(1, 1, Some("http://m/b")).expect("copy");
        index.commit(2).expect("commit");
        assert_eq!(index.len(), 2, "copies are not pages");
        assert_eq!(index.ids().expect("ids"), vec![0, 1]);
        let hits = index.search("alpha", 10).expect("search");
        let a = hits.iter().find(|h| h.id == 0).expect("page 0");
        assert_eq!(a.copies_total, total);
        let expected: Vec<String> = (1..=MAX_COPIES).map(|i| format!("http://m/a{i}")).collect();
        assert_eq!(a.copies, expected);
        let b = hits.iter().find(|h| h.id == 1).expect("page 1");
        assert_eq!(
            (b.copies.as_slice(), b.copies_total),
            (&["http://m/b".to_owned()][..], 1)
        );
        // A copy's URL is no search hit.
        assert!(index.search("a3", 10).expect("search").is_empty());
        // Page 1 goes, with its copy; then every copy goes.
        index.delete(1).expect("delete");
        index.commit(1).expect("commit");
        assert_eq!(index.ids().expect("ids"), vec![0]);
        index.delete_copies().expect("delete copies");
        index.commit(1).expect("commit");
        let hits = index.search("alpha", 10).expect("search");
        assert_eq!((hits.len(), hits[0].copies_total), (1, 0));
    }

    #[test]
    fn a_query_of_every_document_lists_pages_never_their_copies() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut index = SearchIndex::open(dir.path()).expect("open");
        index.put(&page(0, "http://h/a", "alpha")).expect("put");
        index.put(&page(1, "http://h/b", "beta")).expect("put");
        for seq in 1..=3 {
            index
                .add_copy(0, seq, Some(&format!("http://m/a{seq}")))
                .expect("copy");
        }
        index.commit(2).expect("commit");
        // `*` matches every document.
        for query in ["*", "* -gamma", "* -beta"] {
            let (hits, total) = index.search_counted(query, 100).expect("search");
            let urls: Vec<&str> = hits.iter().map(|h| h.url.as_str()).collect();
            let pages = if query == "* -beta" { 1 } else { 2 };
            assert_eq!((total, hits.len()), (pages, pages), "{query}: {urls:?}");
            assert!(urls.iter().all(|u| u.starts_with("http://h/")), "{urls:?}");
            let a = hits.iter().find(|h| h.id == 0).expect("page 0");
            assert_eq!(a.copies_total, 3);
        }
    }

    #[test]
    fn a_damaged_index_is_named_with_what_to_do() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut index = SearchIndex::open(dir.path()).expect("open");
        index.put(&page(0, "http://h/a", "alpha")).expect("put");
        index.commit(1).expect("commit");
        drop(index);
        std::fs::write(dir.path().join("meta.json"), "GARBAGE ".repeat(1000)).expect("write");
        for opened in [
            SearchIndex::open_read_only(dir.path()),
            SearchIndex::open(dir.path()),
        ] {
            let Err(e) = opened else {
                panic!("a damaged index opened");
            };
            let message = e.to_string();
            assert!(message.contains("is damaged"), "{message}");
            assert!(message.contains("simcrawl index --store"), "{message}");
            assert!(message.len() < 600, "{message}");
        }
    }

    #[test]
    fn an_index_of_another_layout_is_named_as_such() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut b = Schema::builder();
        b.add_u64_field("id", INDEXED | STORED | FAST);
        let directory = MmapDirectory::open(dir.path()).expect("directory");
        Index::open_or_create(directory, b.build()).expect("an older index");
        let err = SearchIndex::open(dir.path()).expect_err("another layout");
        assert!(matches!(err, SearchError::OtherLayout(_)), "{err}");
        assert!(err.to_string().contains("simcrawl index"), "{err}");
    }

    #[test]
    fn a_bad_query_is_an_error_naming_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let index = SearchIndex::open(dir.path()).expect("open");
        let err = index.search("title:(", 10).expect_err("unbalanced");
        assert!(err.to_string().contains("title:("), "{err}");
    }
}
