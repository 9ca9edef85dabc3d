//! Text runs and how they are laid out into text.
//!
//! The tree walk does not build strings. It records every non-blank text node as a [`Run`]: a
//! `&str` borrowed from the parsed tree, plus the break (none, space, line) that the markup puts
//! before it. Full text, main text and anchor text are then written from ranges of runs by
//! [`TextWriter`], skipping the runs a filter rejects but keeping their breaks, so that words
//! never glue together across a `<p>`, `<br>`, `<li>` or `<td>`, even when the block between
//! them was dropped.

/// Break before a run: none (inline neighbours glue, as in `<b>a</b><i>b</i>`).
pub(crate) const BREAK_NONE: u8 = 0;
/// Break before a run: a space (white space in the source, table cells).
pub(crate) const BREAK_SPACE: u8 = 1;
/// Break before a run: a new line (block boundaries, `<br>`).
pub(crate) const BREAK_LINE: u8 = 2;

/// "No record" in the `u32` indexes that runs and records hold.
pub(crate) const NONE: u32 = u32::MAX;

/// One text node of the page.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Run<'a> {
    /// The text as in the tree: not trimmed, not collapsed.
    pub(crate) text: &'a str,
    /// Bytes of `text` that are not ASCII white space: the unit of every length in scoring.
    pub(crate) weight: u32,
    /// The innermost block element around the run, or [`NONE`].
    pub(crate) block: u32,
    /// The innermost noise element around the run, or [`NONE`].
    pub(crate) noise: u32,
    /// `BREAK_*` the markup puts before the run.
    pub(crate) brk: u8,
    /// Inside an `<a href>`.
    pub(crate) link: bool,
}

impl<'a> Run<'a> {
    pub(crate) fn new(text: &'a str, brk: u8, block: u32, noise: u32, link: bool) -> Self {
        let weight = text.bytes().filter(|b| !b.is_ascii_whitespace()).count();
        Run {
            text,
            weight: u32::try_from(weight).unwrap_or(u32::MAX),
            block,
            noise,
            brk,
            link,
        }
    }
}

/// Writes words separated by single spaces, and blocks on separate lines.
#[derive(Debug, Default)]
pub(crate) struct TextWriter {
    out: String,
    pending: u8,
    words: usize,
}

impl TextWriter {
    /// Asks for at least `brk` before the next word.
    pub(crate) fn brk(&mut self, brk: u8) {
        self.pending = self.pending.max(brk);
    }

    /// Appends `text`, collapsing white space (Unicode white space, so no-break spaces too).
    pub(crate) fn text(&mut self, text: &str) {
        let mut rest = text;
        loop {
            let trimmed = rest.trim_start_matches(char::is_whitespace);
            if trimmed.len() != rest.len() {
                self.brk(BREAK_SPACE);
            }
            if trimmed.is_empty() {
                return;
            }
            let end = trimmed.find(char::is_whitespace).unwrap_or(trimmed.len());
            self.word(&trimmed[..end]);
            rest = &trimmed[end..];
        }
    }

    fn word(&mut self, word: &str) {
        if self.out.is_empty() {
            self.words += 1;
        } else {
            match self.pending {
                BREAK_NONE => {}
                BREAK_SPACE => {
                    self.out.push(' ');
                    self.words += 1;
                }
                _ => {
                    self.out.push('\n');
                    self.words += 1;
                }
            }
        }
        self.pending = BREAK_NONE;
        self.out.push_str(word);
    }

    /// Writes the runs `runs[start..end]` that `keep` accepts; rejected runs leave their break.
    pub(crate) fn runs(&mut self, runs: &[Run<'_>], keep: impl Fn(&Run<'_>) -> bool) {
        for run in runs {
            self.brk(run.brk);
            if keep(run) {
                self.text(run.text);
            }
        }
    }

    /// Words written so far.
    pub(crate) fn words(&self) -> usize {
        self.words
    }

    /// The text and its word count.
    pub(crate) fn finish(self) -> (String, usize) {
        (self.out, self.words)
    }
}

/// Collapses the white space of `text` into single spaces (for titles and anchor texts).
pub(crate) fn collapse(text: &str) -> String {
    let mut writer = TextWriter::default();
    writer.text(text);
    writer.finish().0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str, brk: u8) -> Run<'_> {
        Run::new(text, brk, NONE, NONE, false)
    }

    #[test]
    fn breaks_and_inline_glue() {
        let runs = [
            run("  Hello ", BREAK_LINE),
            run("wor", BREAK_NONE),
            run("ld", BREAK_NONE),
            run("next\u{a0}block", BREAK_LINE),
            run("dropped", BREAK_LINE),
            run("cell", BREAK_SPACE),
        ];
        let mut w = TextWriter::default();
        w.runs(&runs, |r| r.text != "dropped");
        let (text, words) = w.finish();
        assert_eq!(text, "Hello world\nnext block\ncell");
        assert_eq!(words, 5);
    }

    #[test]
    fn weight_counts_non_space_bytes() {
        assert_eq!(run(" a b\n", BREAK_NONE).weight, 2);
        assert_eq!(collapse("  a \n\t b  "), "a b");
    }
}
