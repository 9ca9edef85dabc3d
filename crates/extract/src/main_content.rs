//! Main-content selection: which runs of the page are its main text.
//!
//! Two passes, each with its own set of active noise rules (see [`crate::noise`]):
//!
//! 1. **strict**: hard and soft rules; a `form` holding at least half of the page's text is taken
//!    for a page-wide wrapper (ASP.NET) and not dropped;
//! 2. **relaxed**: hard rules only, tried when the strict pass found under the minimum of words.
//!
//! In each pass the candidates are tried in order, and the first with at least
//! `min_words` words wins:
//!
//! 1. the `<article>` with the most non-link text, if it holds at least half of the non-link text
//!    of all top-level articles (otherwise the page lists articles and no single one is *the*
//!    content);
//! 2. the `<main>` with the most non-link text;
//! 3. the `[role=main]` element with the most non-link text;
//! 4. the densest block: every block whose own non-link text is at least
//!    [`MIN_PARAGRAPH`] bytes gives that length to itself and its parent in full, to its
//!    grandparent by half, and to the next three ancestors by 1/6, 1/9 and 1/12 (Readability's
//!    propagation); a block whose class or id names say content gets [`CONTENT_NAME_BONUS`]
//!    more; each block's total is multiplied by `1 - link density` of its subtree, and
//!    the highest wins (ties go to the later, deeper block). Its siblings join it when they score
//!    at least a fifth of the winner, or when they are text-level blocks (`p`, headings, lists...)
//!    with at least [`DENSE_SIBLING`] bytes of text and a link density under 0.25, or containers
//!    with that much text and no link at all (a how-to whose every step is a `div` of a heading
//!    and a short paragraph; a box of related stories or a teaser always links somewhere).
//!
//! Lengths are bytes of non-white-space text, which treats every script alike within one page.

use crate::document::{FallbackReason, MainVia};
use crate::dom::{Block, BlockKind, NoiseWhy, Page};
use crate::noise::NoiseKind;
use crate::text::{BREAK_LINE, FullText, NONE, Run, TextWriter};

/// Shortest own non-link text, in bytes, for a block to count as a paragraph in scoring.
pub const MIN_PARAGRAPH: u32 = 25;
/// Shortest text, in bytes, for a text-level sibling of the densest block to join it.
pub const DENSE_SIBLING: u32 = 80;
/// Highest link density for a dense sibling to join.
const SIBLING_MAX_LINK_DENSITY: f64 = 0.25;
/// Share of the winner's score for any sibling block to join.
const SIBLING_SCORE_SHARE: f64 = 0.2;
/// Added to the score of a block whose class or id names say content (`post-body`,
/// `entry-content`, `article-text`), as Readability weighs class names: about two paragraphs'
/// worth, so that a post written as short lines beats a sidebar's single long paragraph.
const CONTENT_NAME_BONUS: f64 = 500.0;
/// Weights of a paragraph's length for the block itself, its parent, grandparent and so on.
const ANCESTOR_WEIGHTS: [f64; 6] = [1.0, 1.0, 0.5, 1.0 / 6.0, 1.0 / 9.0, 1.0 / 12.0];
/// A densest block's parent replaces it when it holds at most this many times its non-link text.
const PROMOTE_MAX_GROWTH: f64 = 1.5;
/// ... and its link density is at most the block's plus this, or at most
/// [`PROMOTE_MAX_LINK_DENSITY`].
const PROMOTE_LINK_DENSITY_SLACK: f64 = 0.05;
/// See [`PROMOTE_LINK_DENSITY_SLACK`].
const PROMOTE_MAX_LINK_DENSITY: f64 = 0.2;
/// A `form` holding at least `1 / FORM_WRAPPER_SHARE` of the page's text (half) is taken for a
/// page wrapper, not boilerplate.
const FORM_WRAPPER_SHARE: u64 = 2;
/// An element whose class or id names say boilerplate, holding at least `1 /
/// NAMED_WRAPPER_SHARE` of the page's non-link text (half), is taken for a wrapper.
const NAMED_WRAPPER_SHARE: u64 = 2;

/// The chosen main text.
#[derive(Debug)]
pub(crate) struct MainText {
    pub(crate) text: String,
    pub(crate) words: usize,
    pub(crate) via: MainVia,
    pub(crate) relaxed: bool,
    /// The runs it was written from (noise runs inside them left out).
    pub(crate) ranges: Ranges,
}

/// What [`select`] found.
#[derive(Debug)]
pub(crate) enum Selected {
    /// A block with at least the minimum of words.
    Main(MainText),
    /// No block reached the minimum: the one with the most words (at least one). A short
    /// page's text is short; it is not replaced by the page's navigation and footer.
    Short { main: MainText, min_words: usize },
    /// No block had any text.
    None(FallbackReason),
}

/// Picks the main text of `page` (whose runs `full` laid out).
pub(crate) fn select(page: &Page<'_>, full: &FullText, min_words: usize) -> Selected {
    let relaxed = Filter::relaxed(page);
    let strict = Filter::strict(page, &relaxed);
    let mut best: Option<MainText> = None;
    let mut any_candidate = false;
    let passes = [(strict, false), (relaxed, true)];
    for (i, (filter, is_relaxed)) in passes.iter().enumerate() {
        if i > 0 && filter.active == passes[0].0.active {
            // Nothing soft was lifted: the relaxed pass would repeat the strict one.
            break;
        }
        let stats = Stats::compute(page, filter);
        for (via, ranges) in candidates(page, filter, &stats) {
            any_candidate = true;
            let mut writer = TextWriter::default();
            for (n, &(start, end)) in ranges.iter().enumerate() {
                if n > 0 {
                    writer.brk(BREAK_LINE);
                }
                let (start, end) = (start as usize, end as usize);
                let runs = page.runs.get(start..end).unwrap_or_default();
                writer.runs_from(full, runs, full.pieces(start, end), |run| {
                    !filter.is_noise_run(run)
                });
            }
            let words = writer.words();
            if words >= min_words {
                let (text, words) = writer.finish();
                return Selected::Main(MainText {
                    text,
                    words,
                    via,
                    relaxed: *is_relaxed,
                    ranges,
                });
            }
            if words > 0 && best.as_ref().is_none_or(|b| words > b.words) {
                let (text, words) = writer.finish();
                best = Some(MainText {
                    text,
                    words,
                    via,
                    relaxed: *is_relaxed,
                    ranges,
                });
            }
        }
    }
    match best {
        Some(main) => Selected::Short { main, min_words },
        None if any_candidate => Selected::None(FallbackReason::TooShort {
            words: 0,
            min_words,
        }),
        None => Selected::None(FallbackReason::NoCandidate),
    }
}

/// Which noise elements are in force in one pass.
#[derive(Debug)]
pub(crate) struct Filter {
    /// `active[i]`: noise element `i`, or one around it, is dropped.
    active: Vec<bool>,
}

impl Filter {
    /// The filter of the pass a main text came from.
    pub(crate) fn of_pass(page: &Page<'_>, relaxed: bool) -> Filter {
        let hard = Filter::relaxed(page);
        if relaxed {
            hard
        } else {
            Filter::strict(page, &hard)
        }
    }

    /// The outermost noise element in force around `run`, if any: the one whose rule dropped it.
    pub(crate) fn dropping(&self, page: &Page<'_>, run: &Run<'_>) -> Option<u32> {
        if !self.is_noise_run(run) {
            return None;
        }
        let mut at = run.noise;
        loop {
            let parent = page.noise.get(at as usize)?.parent;
            if parent == NONE || !self.is_noise(parent) {
                return Some(at);
            }
            at = parent;
        }
    }

    /// Every rule, given the relaxed (hard-only) filter of the same page.
    fn strict(page: &Page<'_>, hard: &Filter) -> Filter {
        // Text not under hard noise: the page's text as far as a wrapper is concerned. Prefix
        // sums over the runs: all of it, and its non-link part.
        let mut all = Vec::with_capacity(page.runs.len() + 1);
        let mut prose = Vec::with_capacity(page.runs.len() + 1);
        let (mut a, mut p) = (0u64, 0u64);
        all.push(0);
        prose.push(0);
        for run in &page.runs {
            if !hard.is_noise_run(run) {
                a += u64::from(run.weight);
                if !run.link {
                    p += u64::from(run.weight);
                }
            }
            all.push(a);
            prose.push(p);
        }
        let inside = |sums: &[u64], noise: &crate::dom::NoiseRec<'_>| {
            let end = (noise.end as usize).min(sums.len() - 1);
            let start = (noise.start as usize).min(end);
            sums[end] - sums[start]
        };
        Filter::build(page, |noise| match (noise.kind, noise.why) {
            (NoiseKind::Hard, _) => true,
            // An element named like boilerplate that holds most of the page's prose is the
            // page's wrapper, not a share bar: `<div class="share_wrapper">` around a whole
            // article. Comments are readers' text, and may well outweigh the article.
            (
                NoiseKind::Soft,
                NoiseWhy::Names {
                    comments: false, ..
                },
            ) => inside(&prose, noise) * NAMED_WRAPPER_SHARE < p,
            (NoiseKind::Soft, _) => true,
            (NoiseKind::Form, _) => inside(&all, noise) * FORM_WRAPPER_SHARE < a,
        })
    }

    /// Hard rules only.
    fn relaxed(page: &Page<'_>) -> Filter {
        Filter::build(page, |noise| noise.kind == NoiseKind::Hard)
    }

    fn build(page: &Page<'_>, applies: impl Fn(&crate::dom::NoiseRec<'_>) -> bool) -> Filter {
        let mut active = Vec::with_capacity(page.noise.len());
        for noise in &page.noise {
            // Parents come before children, so the parent's state is final.
            let inherited = active.get(noise.parent as usize).copied().unwrap_or(false);
            active.push(inherited || applies(noise));
        }
        Filter { active }
    }

    fn is_noise(&self, noise: u32) -> bool {
        noise != NONE && self.active.get(noise as usize).copied().unwrap_or(false)
    }

    pub(crate) fn is_noise_run(&self, run: &Run<'_>) -> bool {
        self.is_noise(run.noise)
    }

    fn is_noise_block(&self, block: &Block) -> bool {
        self.is_noise(block.noise)
    }
}

/// Per-block text lengths under one filter.
#[derive(Debug)]
struct Stats {
    /// Non-link text directly in the block (not in a nested block).
    own: Vec<u32>,
    /// Non-link text in the subtree.
    text: Vec<u64>,
    /// Link text in the subtree.
    link: Vec<u64>,
}

impl Stats {
    fn compute(page: &Page<'_>, filter: &Filter) -> Stats {
        let n = page.blocks.len();
        let mut stats = Stats {
            own: vec![0; n],
            text: vec![0; n],
            link: vec![0; n],
        };
        for run in &page.runs {
            let b = run.block as usize;
            if b >= n || filter.is_noise_run(run) {
                continue;
            }
            if run.link {
                stats.link[b] += u64::from(run.weight);
            } else {
                stats.own[b] = stats.own[b].saturating_add(run.weight);
                stats.text[b] += u64::from(run.weight);
            }
        }
        // Children come after parents: fold subtotals upwards from the end.
        for b in (0..n).rev() {
            let parent = page.blocks[b].parent as usize;
            if parent < n {
                stats.text[parent] += stats.text[b];
                stats.link[parent] += stats.link[b];
            }
        }
        stats
    }

    fn link_density(&self, b: usize) -> f64 {
        let all = self.text[b] + self.link[b];
        if all == 0 {
            0.0
        } else {
            self.link[b] as f64 / all as f64
        }
    }
}

pub(crate) type Ranges = Vec<(u32, u32)>;

/// The candidates of one pass, best first.
fn candidates(page: &Page<'_>, filter: &Filter, stats: &Stats) -> Vec<(MainVia, Ranges)> {
    let mut out = Vec::new();
    let richest = |kind: BlockKind| {
        page.blocks
            .iter()
            .enumerate()
            .filter(|(_, b)| b.kind == kind && !filter.is_noise_block(b))
            .filter(|(i, _)| stats.text[*i] > 0)
            // `max_by_key` keeps the last of equals; prefer the first in document order.
            .rev()
            .max_by_key(|(i, _)| stats.text[*i])
            .map(|(i, b)| (i, *b))
    };
    if let Some((best, block)) = richest(BlockKind::Article) {
        // Sum over articles not nested in another article (nested ones are inside the ranges).
        let mut all_articles = 0u64;
        let mut covered_until = 0u32;
        for (i, b) in page.blocks.iter().enumerate() {
            if b.kind == BlockKind::Article && !filter.is_noise_block(b) && b.start >= covered_until
            {
                all_articles += stats.text[i];
                covered_until = b.end.max(b.start + 1);
            }
        }
        if stats.text[best] * 2 >= all_articles {
            out.push((MainVia::Article, vec![(block.start, block.end)]));
        }
    }
    for (kind, via) in [
        (BlockKind::Main, MainVia::Main),
        (BlockKind::RoleMain, MainVia::RoleMain),
    ] {
        if let Some((_, block)) = richest(kind) {
            out.push((via, vec![(block.start, block.end)]));
        }
    }
    if let Some(ranges) = densest(page, filter, stats) {
        out.push((MainVia::DensestBlock, ranges));
    }
    out
}

/// The densest block's ancestors that hold the rest of its article: a page's title, date and
/// lead paragraph often sit beside its densest section, in the element that wraps them all
/// (Sphinx's release notes: `<div class="section">` holding `h1`, a date, a one-line summary and
/// the inner section that scores best). The block is replaced by its parent while the parent adds
/// at most [`PROMOTE_MAX_GROWTH`] times its text, adds hardly any link text, and is not the
/// page's outermost block.
fn promote(page: &Page<'_>, stats: &Stats, mut top: usize) -> usize {
    loop {
        let parent = page.blocks[top].parent;
        if parent == NONE {
            return top;
        }
        let p = parent as usize;
        if page.blocks[p].parent == NONE {
            return top; // the body: the whole page is not a block of it
        }
        let text_added = stats.text[p] - stats.text[top];
        let links_added = stats.link[p] - stats.link[top];
        let grows = stats.text[p] as f64 <= stats.text[top] as f64 * PROMOTE_MAX_GROWTH;
        let link_density_ok = stats.link_density(p)
            <= (stats.link_density(top) + PROMOTE_LINK_DENSITY_SLACK).max(PROMOTE_MAX_LINK_DENSITY);
        // The added text must be the parent's own or its text-level children's (a title, a
        // date, a lead paragraph), not other containers' (teasers, a second story).
        let in_text_children: u64 = u64::from(stats.own[p])
            + page
                .blocks
                .iter()
                .enumerate()
                .skip(p + 1)
                .take_while(|(_, b)| b.start < page.blocks[p].end || b.start == b.end)
                .filter(|(c, b)| *c != top && b.parent == parent && b.kind == BlockKind::Text)
                .map(|(c, _)| stats.text[c])
                .sum::<u64>();
        let same = text_added == 0 && links_added == 0;
        if !same
            && (!grows
                || !link_density_ok
                || links_added > text_added
                || text_added > in_text_children)
        {
            return top;
        }
        top = p;
    }
}

/// The densest block and its worthy siblings, as run ranges in document order.
fn densest(page: &Page<'_>, filter: &Filter, stats: &Stats) -> Option<Ranges> {
    let n = page.blocks.len();
    let mut score = vec![0.0f64; n];
    for (b, block) in page.blocks.iter().enumerate() {
        if stats.own[b] < MIN_PARAGRAPH || filter.is_noise_block(block) {
            continue;
        }
        let length = f64::from(stats.own[b]);
        let mut at = b;
        for weight in ANCESTOR_WEIGHTS {
            score[at] += length * weight;
            match page.blocks[at].parent {
                NONE => break,
                parent => at = parent as usize,
            }
        }
    }
    let mut top: Option<(usize, f64)> = None;
    for (b, score) in score.iter_mut().enumerate() {
        let block = &page.blocks[b];
        // A post written as short lines has no paragraph to score, only its name. The name
        // picks the block; its siblings are judged by their text alone (a `story-info` byline
        // is named like content too).
        let bonus = if block.content_named
            && stats.text[b] >= u64::from(MIN_PARAGRAPH)
            && !filter.is_noise_block(block)
        {
            CONTENT_NAME_BONUS
        } else {
            0.0
        };
        if *score <= 0.0 && bonus == 0.0 {
            continue;
        }
        let keep = 1.0 - stats.link_density(b);
        *score *= keep;
        let ranked = *score + bonus * keep;
        if top.is_none_or(|(_, best)| ranked >= best) {
            top = Some((b, ranked));
        }
    }
    let (top, _) = top?;
    let top_score = score[top];
    let top = promote(page, stats, top);
    let parent = page.blocks[top].parent;
    if parent == NONE {
        let block = &page.blocks[top];
        return Some(vec![(block.start, block.end)]);
    }
    let threshold = top_score * SIBLING_SCORE_SHARE;
    let ranges = page
        .blocks
        .iter()
        .enumerate()
        .filter(|(s, block)| {
            if *s == top {
                return true;
            }
            if block.parent != parent || filter.is_noise_block(block) {
                return false;
            }
            let dense_text = if block.kind == BlockKind::Text {
                stats.text[*s] >= u64::from(DENSE_SIBLING)
                    && stats.link_density(*s) < SIBLING_MAX_LINK_DENSITY
            } else {
                stats.text[*s] >= u64::from(DENSE_SIBLING) && stats.link[*s] == 0
            };
            (score[*s] > 0.0 && score[*s] >= threshold) || dense_text
        })
        .map(|(_, block)| (block.start, block.end))
        .collect();
    Some(ranges)
}
