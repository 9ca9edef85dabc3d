//! Text runs and how they are laid out into text.
//!
//! The tree walk does not build strings. It records every non-blank text node as a [`Run`]: a
//! `&str` borrowed from the parsed tree, plus the break (none, space, line) that the markup puts
//! before it. Full text, main text and anchor text are then written from ranges of runs by
//! [`TextWriter`], skipping the runs a filter rejects but keeping their breaks, so that words
//! never glue together across a `<p>`, `<br>`, `<li>` or `<td>`, even when the block between
//! them was dropped.
//!
//! A run's words come out the same in every layout (separated by single spaces); only the
//! separator before them depends on what came before. So the text of each run is scanned once,
//! for the full text ([`FullText`]), which records where each run's words landed ([`Piece`]); the
//! main text and the anchor texts copy the words from there.

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
        Run {
            text,
            weight: u32::try_from(weight(text)).unwrap_or(u32::MAX),
            block,
            noise,
            brk,
            link,
        }
    }
}

/// Bytes of `text` that are not ASCII white space (`u8::is_ascii_whitespace`).
fn weight(text: &str) -> usize {
    // Branch-free per byte, so that the compiler vectorises it, and counted in `u8` lanes (sixteen
    // bytes per vector step; `u32` lanes took four) over chunks too short to overflow them: 240,
    // a multiple of every vector width.
    let spaces: usize = text
        .as_bytes()
        .chunks(240)
        .map(|chunk| {
            let count = chunk.iter().fold(0u8, |count, &b| {
                count.wrapping_add(u8::from(
                    (b == b' ') | ((b.wrapping_sub(b'\t') < 5) & (b != 0x0b)),
                ))
            });
            usize::from(count)
        })
        .sum();
    text.len() - spaces
}

/// Where the words of one run landed in the full text: a run's words are always written the same
/// way (separated by single spaces), whatever is written around them, so that the main text and
/// the anchor texts copy them from the full text instead of scanning the run's text again.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Piece {
    /// The words are `full[start..end]`.
    start: usize,
    end: usize,
    /// How many (0: the run is blank or empty).
    words: usize,
    /// The run starts with white space.
    lead: bool,
    /// The run ends with white space.
    trail: bool,
}

/// The text of all runs, and the [`Piece`] of each run in it.
#[derive(Debug)]
pub(crate) struct FullText {
    pub(crate) text: String,
    pub(crate) words: usize,
    /// One per run, in order.
    pub(crate) pieces: Vec<Piece>,
}

impl FullText {
    /// Lays out every run.
    pub(crate) fn new(runs: &[Run<'_>]) -> FullText {
        let mut writer = TextWriter::default();
        writer
            .out
            .reserve(runs.iter().map(|run| run.text.len()).sum());
        let mut pieces = Vec::with_capacity(runs.len());
        for run in runs {
            writer.brk(run.brk);
            pieces.push(writer.text_piece(run.text));
        }
        let (text, words) = writer.finish();
        FullText {
            text,
            words,
            pieces,
        }
    }

    /// The pieces of `runs[start..end]`.
    pub(crate) fn pieces(&self, start: usize, end: usize) -> &[Piece] {
        self.pieces.get(start..end).unwrap_or_default()
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
        if text.is_ascii() {
            self.ascii_text(text);
            return;
        }
        let bytes = text.as_bytes();
        let mut i = 0;
        // Start of the word being scanned, if inside one.
        let mut word_start = None;
        while i < bytes.len() {
            let (space, width) = whitespace_at(text, i);
            if space {
                if let Some(start) = word_start.take() {
                    self.segment(&text[start..i], 1);
                }
                self.brk(BREAK_SPACE);
            } else if word_start.is_none() {
                word_start = Some(i);
            }
            i += width;
        }
        if let Some(start) = word_start {
            self.segment(&text[start..], 1);
        }
    }

    /// [`text`](Self::text) for ASCII: copies whole stretches whose words are already separated
    /// by single spaces, instead of word by word.
    fn ascii_text(&mut self, text: &str) {
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let space_start = i;
            while i < bytes.len() && is_ascii_space(bytes[i]) {
                i += 1;
            }
            if i > space_start {
                self.brk(BREAK_SPACE);
            }
            if i == bytes.len() {
                return;
            }
            let start = i;
            let mut words = 1;
            loop {
                let (end, spaces) = single_spaced_chunks(bytes, i);
                i = end;
                words += spaces;
                i = next_space_or_control(bytes, i);
                if i < bytes.len() && !is_ascii_space(bytes[i]) {
                    // A control character: part of the word.
                    i += 1;
                    continue;
                }
                if i + 1 < bytes.len() && bytes[i] == b' ' && !is_ascii_space(bytes[i + 1]) {
                    words += 1;
                    i += 1;
                } else {
                    break;
                }
            }
            self.segment(&text[start..i], words);
        }
    }

    /// Appends `words` words already separated by single spaces, after the pending break.
    fn segment(&mut self, segment: &str, words: usize) {
        if self.out.is_empty() {
            self.words += words;
        } else {
            match self.pending {
                // Glued to the previous word: one word fewer.
                BREAK_NONE => self.words += words - 1,
                BREAK_SPACE => {
                    self.out.push(' ');
                    self.words += words;
                }
                _ => {
                    self.out.push('\n');
                    self.words += words;
                }
            }
        }
        self.pending = BREAK_NONE;
        self.out.push_str(segment);
    }

    /// Writes the runs that `keep` accepts; rejected runs leave their break.
    #[cfg(test)]
    pub(crate) fn runs(&mut self, runs: &[Run<'_>], keep: impl Fn(&Run<'_>) -> bool) {
        if self.out.is_empty() {
            self.out
                .reserve(runs.iter().map(|run| run.text.len()).sum());
        }
        for run in runs {
            self.brk(run.brk);
            if keep(run) {
                self.text(run.text);
            }
        }
    }

    /// [`text`](Self::text), and where the words of `text` landed in the output.
    fn text_piece(&mut self, text: &str) -> Piece {
        let lead = text.chars().next().is_some_and(char::is_whitespace);
        let trail = text.chars().next_back().is_some_and(char::is_whitespace);
        let (len, words, was_empty) = (self.out.len(), self.words, self.out.is_empty());
        // The break in force when the first word is written.
        let pending = if lead {
            self.pending.max(BREAK_SPACE)
        } else {
            self.pending
        };
        self.text(text);
        if self.out.len() == len {
            // No word (every segment written is at least one byte).
            return Piece {
                lead,
                trail,
                ..Piece::default()
            };
        }
        // `segment` wrote a separator before the first word unless the output was empty or the
        // word was glued to the previous one (then it counted one word fewer).
        let separated = !was_empty && pending != BREAK_NONE;
        let glued = !was_empty && pending == BREAK_NONE;
        Piece {
            start: len + usize::from(separated),
            end: self.out.len(),
            words: self.words - words + usize::from(glued),
            lead,
            trail,
        }
    }

    /// Writes what [`text`](Self::text) would write for the text of `piece`, copying its words
    /// from `full`.
    fn piece(&mut self, full: &str, piece: &Piece) {
        if piece.lead {
            self.brk(BREAK_SPACE);
        }
        if piece.words == 0 {
            return;
        }
        if let Some(words) = full.get(piece.start..piece.end) {
            self.segment(words, piece.words);
        }
        if piece.trail {
            self.brk(BREAK_SPACE);
        }
    }

    /// Writes the runs that `keep` accepts, copying their words from their `pieces` in `full`
    /// (the same runs' [`FullText`]) instead of scanning their text again, with the same result;
    /// rejected runs leave their break.
    pub(crate) fn runs_from(
        &mut self,
        full: &FullText,
        runs: &[Run<'_>],
        pieces: &[Piece],
        keep: impl Fn(&Run<'_>) -> bool,
    ) {
        if self.out.is_empty() {
            self.out
                .reserve(pieces.iter().map(|p| p.end - p.start + 1).sum());
        }
        for (run, piece) in runs.iter().zip(pieces) {
            self.brk(run.brk);
            if keep(run) {
                self.piece(&full.text, piece);
            }
        }
    }

    /// Words written so far.
    pub(crate) fn words(&self) -> usize {
        self.words
    }

    /// The text written so far.
    pub(crate) fn written(&self) -> &str {
        &self.out
    }

    /// The text and its word count.
    pub(crate) fn finish(self) -> (String, usize) {
        (self.out, self.words)
    }
}

/// Skips whole 8-byte chunks from `i` in which every byte up to `b' '` is a single space
/// between two other bytes (words separated by single spaces, the common case), and returns where
/// it stopped and how many spaces it skipped. `bytes[i]` must not be a space.
#[inline]
fn single_spaced_chunks(bytes: &[u8], mut i: usize) -> (usize, usize) {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let mut spaces = 0;
    while let Some(chunk) = bytes.get(i..i + 8) {
        let Ok(chunk) = <[u8; 8]>::try_from(chunk) else {
            break;
        };
        let x = u64::from_le_bytes(chunk);
        // High bit of each byte that is at most 0x20, then of each byte equal to 0x20; exact
        // per byte (no carry crosses a byte).
        let low = !(((x & LOW7) + ONES * 0x5f) | x) & HIGHS;
        if low == 0 {
            i += 8;
            continue;
        }
        let y = x ^ (ONES * 0x20);
        let space = !(((y & LOW7) + LOW7) | y) & HIGHS;
        // Other white space or control characters, two spaces in a row, or a space as the last
        // byte (the next chunk decides): left to the caller.
        if low != space || space & (space >> 8) != 0 || space >> 56 != 0 {
            break;
        }
        spaces += space.count_ones() as usize;
        i += 8;
    }
    (i, spaces)
}

/// Index of the first byte at or after `i` that is at most `b' '` (ASCII white space or a
/// control character), or `bytes.len()`. Eight bytes at a time.
#[inline]
fn next_space_or_control(bytes: &[u8], mut i: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    while let Some(chunk) = bytes.get(i..i + 8) {
        let Ok(chunk) = <[u8; 8]>::try_from(chunk) else {
            break;
        };
        let x = u64::from_le_bytes(chunk);
        // The high bit of the lowest byte below 0x21 is set; lower bytes borrow nothing and stay
        // clear (bytes from 0x80 up never match: `!x` clears their high bit).
        let found = x.wrapping_sub(ONES * 0x21) & !x & HIGHS;
        if found != 0 {
            return i + (found.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < bytes.len() && bytes[i] > b' ' {
        i += 1;
    }
    i
}

fn is_ascii_space(b: u8) -> bool {
    b <= b' ' && matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c')
}

/// Whether the character at byte `i` of `text` (a char boundary) is white space, and its width
/// in bytes. ASCII is decided from the byte; other characters are decoded (no-break space,
/// ideographic space and the other Unicode white space count).
fn whitespace_at(text: &str, i: usize) -> (bool, usize) {
    let b = text.as_bytes()[i];
    if b < 0x80 {
        return (is_ascii_space(b), 1);
    }
    match text[i..].chars().next() {
        Some(c) => (c.is_whitespace(), c.len_utf8()),
        None => (false, 1),
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
    fn unicode_white_space_separates_words() {
        let mut w = TextWriter::default();
        w.text("a\u{a0}b\u{3000}c\u{2009}d\u{85}e\u{200b}f é");
        assert_eq!(w.finish(), ("a b c d e\u{200b}f é".to_owned(), 6));
    }

    #[test]
    fn ascii_stretches_count_words_and_glue_like_single_words() {
        let mut w = TextWriter::default();
        w.text("one two  three\tfour ");
        w.text("five six");
        w.brk(BREAK_LINE);
        w.text("seven");
        w.text("eight nine");
        assert_eq!(
            w.finish(),
            ("one two three four five six\nseveneight nine".to_owned(), 8)
        );
    }

    #[test]
    fn ascii_scan_finds_the_first_space_or_control_byte() {
        let text = b"abcdefghijklmnopqrstuvwxyz0123456789";
        for at in 0..text.len() {
            for byte in [b' ', b'\t', b'\n', b'\x01', b'\x0b'] {
                let mut bytes = text.to_vec();
                bytes[at] = byte;
                if at + 3 < bytes.len() {
                    bytes[at + 3] = b' ';
                }
                for from in 0..=at {
                    assert_eq!(next_space_or_control(&bytes, from), at);
                }
            }
        }
        assert_eq!(next_space_or_control(text, 0), text.len());
        assert_eq!(next_space_or_control(b"\x7f\x21~!\x7f\x21~!\x7f", 0), 9);
        assert_eq!(next_space_or_control(b"\xff\x80\x9f\xa0abcd \xff", 0), 8);
        let mut w = TextWriter::default();
        w.text("ctrl\x01char  and\ttab words here at the end");
        assert_eq!(
            w.finish(),
            ("ctrl\x01char and tab words here at the end".to_owned(), 8)
        );
    }

    #[test]
    fn chunked_and_bytewise_layout_agree() {
        // Every arrangement of a few words, spaces and other white space around chunk
        // boundaries, against a plain word-by-word layout.
        let pieces = [
            "ab",
            "c",
            "defghij",
            " ",
            "  ",
            "\t",
            "\n ",
            "\x01",
            "klmnopqrstu",
        ];
        let mut seed = 7u64;
        for _ in 0..3000 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let mut text = String::new();
            for _ in 0..(seed >> 40) % 12 {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                text.push_str(pieces[(seed >> 33) as usize % pieces.len()]);
            }
            let mut w = TextWriter::default();
            w.text(&text);
            let words: Vec<&str> = text
                .split(|c: char| is_ascii_space(c as u8))
                .filter(|w| !w.is_empty())
                .collect();
            assert_eq!(w.finish(), (words.join(" "), words.len()), "{text:?}");
        }
    }

    #[test]
    fn layouts_from_the_full_text_match_layouts_from_the_runs() {
        // Random runs (blank, empty, glued, Unicode white space, control characters), laid out
        // directly and from the full text's pieces, over random ranges and filters.
        let texts = [
            "",
            " ",
            "\n\t ",
            "word",
            " lead",
            "trail ",
            " both ",
            "two words",
            "a  b\tc\n",
            "\u{a0}nbsp\u{a0}",
            "é è",
            "x\u{3000}",
            "\x01ctrl",
            "\u{a0}",
            "long run of single spaced words across chunks",
        ];
        let mut seed = 11u64;
        let mut next = |n: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize % n
        };
        for _ in 0..2000 {
            let runs: Vec<Run<'_>> = (0..next(9))
                .map(|i| {
                    let mut r = run(texts[next(texts.len())], next(3) as u8);
                    r.link = i % 2 == 0;
                    r
                })
                .collect();
            let full = FullText::new(&runs);
            let mut direct = TextWriter::default();
            direct.runs(&runs, |_| true);
            assert_eq!(direct.finish(), (full.text.clone(), full.words));
            let keep_links = next(2) == 0;
            let keep = |r: &Run<'_>| r.link || keep_links;
            let ranges = [
                (0, next(runs.len() + 1)),
                (next(runs.len() + 1), runs.len()),
            ];
            let (mut direct, mut copied) = (TextWriter::default(), TextWriter::default());
            for (n, &(start, end)) in ranges.iter().enumerate() {
                let end = end.max(start);
                if n > 0 {
                    direct.brk(BREAK_LINE);
                    copied.brk(BREAK_LINE);
                }
                direct.runs(&runs[start..end], keep);
                copied.runs_from(&full, &runs[start..end], full.pieces(start, end), keep);
            }
            assert_eq!(direct.finish(), copied.finish(), "{runs:?}");
        }
    }

    #[test]
    fn weight_counts_non_space_bytes() {
        assert_eq!(run(" a b\n", BREAK_NONE).weight, 2);
        let all: String = (0u8..128).map(char::from).collect();
        let expected = all.bytes().filter(|b| !b.is_ascii_whitespace()).count();
        assert_eq!(weight(&all), expected);
        assert_eq!(weight("é\u{a0}\x0b\x0c"), 5);
        // Long texts, all spaces or mixed, across the counting chunks (no lane overflows).
        for len in [239, 240, 241, 255, 256, 257, 1000, 4099] {
            assert_eq!(weight(&" ".repeat(len)), 0);
            let mixed: String = (0..len)
                .map(|i| if i % 3 == 0 { 'x' } else { '\n' })
                .collect();
            assert_eq!(weight(&mixed), len.div_ceil(3), "{len}");
        }
        assert_eq!(collapse("  a \n\t b  "), "a b");
    }
}
