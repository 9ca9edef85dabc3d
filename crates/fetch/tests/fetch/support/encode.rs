//! Content encodings for test bodies, made with no dependency beyond flate2:
//!
//! - gzip and zlib ("deflate" in HTTP) with flate2;
//! - a streamed gzip bomb of any size, written by hand: one fixed-Huffman deflate block of a zero
//!   byte and then matches of length 258 at distance 1 (13 bits for 258 zeros), made lazily, so a
//!   1 GiB bomb is 6.5 MB on the wire and costs only what the client reads;
//! - brotli as uncompressed meta-blocks (RFC 7932 section 9.2: ISUNCOMPRESSED), and zstd as raw
//!   blocks (RFC 8878 section 3.1.1.2.2: Raw_Block). Both are real, valid streams that the client
//!   must decode; they exercise the `br` and `zstd` paths without an encoder crate.
//!
//! The hand-made gzip is checked against flate2's decoder in this module's tests.

use std::io::Write;

use flate2::Compression;
use flate2::write::{GzEncoder, ZlibEncoder};

pub fn gzip(data: &[u8]) -> Vec<u8> {
    let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
    encoder.write_all(data).expect("gzip into a Vec");
    encoder.finish().expect("gzip into a Vec")
}

/// HTTP's `deflate` is the zlib format (RFC 9110 section 8.4.1.2).
pub fn zlib(data: &[u8]) -> Vec<u8> {
    let mut encoder = ZlibEncoder::new(Vec::new(), Compression::default());
    encoder.write_all(data).expect("zlib into a Vec");
    encoder.finish().expect("zlib into a Vec")
}

/// A little-endian bit writer, as deflate and brotli pack their fields.
#[derive(Default)]
struct Bits {
    acc: u64,
    n: u32,
    out: Vec<u8>,
}

impl Bits {
    /// `len` bits of `value`, least significant first (header fields).
    fn put(&mut self, value: u64, len: u32) {
        self.acc |= value << self.n;
        self.n += len;
        while self.n >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.n -= 8;
        }
    }

    /// A Huffman code of `len` bits, most significant first (as deflate stores codes).
    fn code(&mut self, code: u64, len: u32) {
        self.put(reversed(code, len), len);
    }

    /// Pads with zero bits to a byte boundary.
    fn align(&mut self) {
        if self.n > 0 {
            self.out.push(self.acc as u8);
            self.acc = 0;
            self.n = 0;
        }
    }

    fn take(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.out)
    }
}

/// The low `len` bits of `code` in reverse order.
fn reversed(code: u64, len: u32) -> u64 {
    (0..len).fold(0, |acc, i| acc | (((code >> i) & 1) << (len - 1 - i)))
}

/// Fixed-Huffman codes (RFC 1951 section 3.2.6).
const LITERAL_ZERO: (u64, u32) = (0x30, 8);
const LENGTH_258: (u64, u32) = (0xc5, 8); // length code 285
const DISTANCE_1: (u64, u32) = (0, 5); // distance code 0
const END_OF_BLOCK: (u64, u32) = (0, 7); // code 256

/// A gzip stream of `n` zero bytes, in pieces of about 16 KB, made as they are asked for.
pub fn gzip_zeros(n: u64) -> impl Iterator<Item = Vec<u8>> + Send {
    const MATCHES_PER_PIECE: u64 = 10_000;
    let mut bits = Bits::default();
    bits.out
        .extend_from_slice(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
    bits.put(1, 1); // BFINAL
    bits.put(1, 2); // BTYPE = 01, fixed Huffman
    let (matches, literals) = if n == 0 {
        (0, 0)
    } else {
        ((n - 1) / 258, 1 + (n - 1) % 258)
    };
    let mut matches_left = matches;
    let mut done = false;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        if matches_left > 0 {
            if matches_left == matches {
                bits.code(LITERAL_ZERO.0, LITERAL_ZERO.1); // the byte the matches copy
            }
            let batch = matches_left.min(MATCHES_PER_PIECE);
            // Both codes of one match as a single 13-bit field.
            let one_match = reversed(LENGTH_258.0, LENGTH_258.1)
                | reversed(DISTANCE_1.0, DISTANCE_1.1) << LENGTH_258.1;
            for _ in 0..batch {
                bits.put(one_match, LENGTH_258.1 + DISTANCE_1.1);
            }
            matches_left -= batch;
            return Some(bits.take());
        }
        // The remaining zeros as literals (all of them when there were no matches).
        let remaining_literals = if matches == 0 { literals } else { literals - 1 };
        for _ in 0..remaining_literals {
            bits.code(LITERAL_ZERO.0, LITERAL_ZERO.1);
        }
        bits.code(END_OF_BLOCK.0, END_OF_BLOCK.1);
        bits.align();
        let mut last = bits.take();
        last.extend_from_slice(&crc32_of_zeros(n).to_le_bytes());
        last.extend_from_slice(&(n as u32).to_le_bytes());
        done = true;
        Some(last)
    })
}

/// CRC-32 of `n` zero bytes, by combining the CRCs of power-of-two runs (O(log n)).
fn crc32_of_zeros(n: u64) -> u32 {
    let mut total = flate2::Crc::new();
    let mut run = flate2::Crc::new();
    run.update(&[0]);
    let mut left = n;
    while left > 0 {
        if left & 1 == 1 {
            total.combine(&run);
        }
        let mut doubled = flate2::Crc::new();
        doubled.combine(&run);
        doubled.combine(&run);
        run = doubled;
        left >>= 1;
    }
    total.sum()
}

/// A brotli stream of uncompressed meta-blocks.
pub fn brotli_stored(data: &[u8]) -> Vec<u8> {
    let mut bits = Bits::default();
    bits.put(0, 1); // WBITS = 16
    for chunk in data.chunks(32 * 1024) {
        bits.put(0, 1); // ISLAST = 0
        bits.put(0, 2); // MNIBBLES = 4
        bits.put(chunk.len() as u64 - 1, 16); // MLEN - 1
        bits.put(1, 1); // ISUNCOMPRESSED
        bits.align();
        bits.out.extend_from_slice(chunk);
    }
    bits.put(1, 1); // ISLAST
    bits.put(1, 1); // ISLASTEMPTY
    bits.align();
    bits.take()
}

/// A zstd frame of raw blocks, with its content size.
pub fn zstd_raw(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0x28, 0xb5, 0x2f, 0xfd]; // magic number
    out.push(0xa0); // 4-byte content size, single segment, no checksum, no dictionary
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    let chunks: Vec<&[u8]> = if data.is_empty() {
        vec![&[]]
    } else {
        data.chunks(64 * 1024).collect()
    };
    for (i, chunk) in chunks.iter().enumerate() {
        let last = u32::from(i + 1 == chunks.len());
        let header = ((chunk.len() as u32) << 3) | last; // Block_Type 0 = Raw
        out.extend_from_slice(&header.to_le_bytes()[..3]);
        out.extend_from_slice(chunk);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn gunzip(stream: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(stream)
            .read_to_end(&mut out)
            .expect("a valid gzip stream (CRC and size checked)");
        out
    }

    #[test]
    fn hand_made_gzip_bomb_is_valid_gzip() {
        for n in [0u64, 1, 2, 258, 259, 260, 258 * 3 + 7, 100_000, 3_000_000] {
            let stream: Vec<u8> = gzip_zeros(n).flatten().collect();
            let out = gunzip(&stream);
            assert_eq!(out.len() as u64, n, "n = {n}");
            assert!(out.iter().all(|&b| b == 0), "n = {n}");
        }
    }

    #[test]
    fn hand_made_gzip_bomb_ratio() {
        let wire: usize = gzip_zeros(64 << 20).map(|piece| piece.len()).sum();
        assert!(wire < (64 << 20) / 150, "64 MiB of zeros in {wire} bytes");
    }

    #[test]
    fn crc_of_zeros_matches_a_direct_crc() {
        for n in [0usize, 1, 5, 1000, 65_537] {
            let mut direct = flate2::Crc::new();
            direct.update(&vec![0; n]);
            assert_eq!(crc32_of_zeros(n as u64), direct.sum(), "n = {n}");
        }
    }
}
