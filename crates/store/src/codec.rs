//! Hand-written, stable byte formats for keys and values.
//!
//! Every key and value in the store goes through [`Codec`]. The formats below are part of the on-disk
//! schema: changing one means bumping [`SCHEMA_VERSION`](crate::SCHEMA_VERSION).
//!
//! # Formats of the built-in impls
//!
//! | type | bytes | sorts like the value? |
//! |------|-------|-----------------------|
//! | `u8`, `u16`, `u32`, `u64`, `u128` | big-endian, fixed width | yes |
//! | `i64` | big-endian of `x ^ i64::MIN` (sign bit flipped), 8 bytes | yes |
//! | `bool` | one byte, `0` or `1` | yes |
//! | `()` | nothing | - |
//! | `[u8; N]` | the N bytes | yes |
//! | `String` | its UTF-8 bytes, no length, no terminator | yes (byte order) |
//! | `Vec<u8>` | the bytes, no length | yes |
//! | tuples `(A, B)`, `(A, B, C)`, `(A, B, C, D)` | every element but the last as an *element* (below), then the last one as itself | see below |
//!
//! An *element* is a value written so that a reader knows where it ends ([`write_element`],
//! [`Reader::element`]): a type with a fixed width ([`Codec::FIXED_LEN`]) is written as itself; any
//! other type is written as its length in bytes (unsigned LEB128: 7 bits per byte, low group first,
//! high bit set on every byte but the last, shortest form only), followed by its bytes.
//!
//! So a tuple key sorts by its first element, then by the next, exactly like the values, as long as
//! every element but the last has a fixed width (`(u64, u64)`, `([u8; 16], String)`). A variable-width
//! element that is not last (`(String, u64)`) sorts by its *length* first, then by its bytes: keys with
//! the same first element are still contiguous, so a prefix scan with [`leading_element`] finds them
//! all, but a range over the first element is not alphabetical.
//!
//! # Writing a codec for a record
//!
//! Other crates store their own records. Write each field as an element and read them back in the
//! same order:
//!
//! ```
//! use simcrawl_store::codec::{Codec, CodecError, Reader, write_element};
//!
//! struct Page { url: String, depth: u32, title: Option<String> }
//!
//! impl Codec for Page {
//!     fn encode_into(&self, out: &mut Vec<u8>) {
//!         write_element(&self.url, out);
//!         write_element(&self.depth, out);
//!         write_element(&self.title.is_some(), out);
//!         if let Some(title) = &self.title {
//!             write_element(title, out);
//!         }
//!     }
//!     fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
//!         let mut r = Reader::new::<Self>(bytes);
//!         let url = r.element()?;
//!         let depth = r.element()?;
//!         let title = if r.element::<bool>()? { Some(r.element()?) } else { None };
//!         r.finish()?;
//!         Ok(Page { url, depth, title })
//!     }
//! }
//!
//! let page = Page { url: "https://example.com/".into(), depth: 2, title: None };
//! let back = Page::decode(&page.encode()).unwrap();
//! assert_eq!((back.url.as_str(), back.depth, back.title), ("https://example.com/", 2, None));
//! ```

use std::any::type_name;

/// A value that can be turned into bytes and back, with a stable format.
///
/// `decode(&x.encode())` must give back `x`, and the bytes must not depend on anything but the value
/// (no addresses, no hash seeds, no platform widths), so that a store written by one run is read
/// correctly by the next.
pub trait Codec: Sized {
    /// `Some(n)` if every value of this type encodes to exactly `n` bytes. Fixed-width values are
    /// written without a length when they are an element of a tuple or record.
    const FIXED_LEN: Option<usize> = None;

    /// Appends this value's bytes to `out`.
    fn encode_into(&self, out: &mut Vec<u8>);

    /// Reads a value from exactly `bytes` (all of them: trailing bytes are an error).
    fn decode(bytes: &[u8]) -> Result<Self, CodecError>;

    /// This value's bytes in a new vector.
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(Self::FIXED_LEN.unwrap_or(16));
        self.encode_into(&mut out);
        out
    }
}

/// A value that encodes to exactly the bytes of some `T`: lets a caller pass a borrowed form of
/// `T` (`(&str, u32)` for a `(String, u32)` queue key, a record of borrowed fields) where a `T`
/// would have to be built, and allocated, first. Every `T` is one of its own.
pub trait EncodeAs<T: Codec> {
    /// Appends the bytes `T`'s [`Codec::encode_into`] would append for the value this stands for.
    fn encode_as(&self, out: &mut Vec<u8>);
}

impl<T: Codec> EncodeAs<T> for T {
    fn encode_as(&self, out: &mut Vec<u8>) {
        self.encode_into(out);
    }
}

/// A string slice, as the first element of a `(String, B)` tuple.
impl<B: Codec> EncodeAs<(String, B)> for (&str, B) {
    fn encode_as(&self, out: &mut Vec<u8>) {
        write_bytes_element(self.0.as_bytes(), out);
        self.1.encode_into(out);
    }
}

/// Bytes that do not decode as the expected type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CodecError {
    /// The bytes end before the value does.
    #[error("{what}: needs {needed} bytes, only {available} left")]
    Truncated {
        /// The type being decoded.
        what: &'static str,
        /// How many bytes were needed.
        needed: usize,
        /// How many were left.
        available: usize,
    },
    /// The value ended but bytes were left over.
    #[error("{what}: {extra} unexpected trailing bytes")]
    TrailingBytes {
        /// The type being decoded.
        what: &'static str,
        /// How many bytes were left over.
        extra: usize,
    },
    /// The bytes have the right length but are not a valid value.
    #[error("{what}: {detail}")]
    Invalid {
        /// The type being decoded.
        what: &'static str,
        /// What is wrong with them.
        detail: String,
    },
}

impl CodecError {
    /// An [`Invalid`](CodecError::Invalid) error for type `T`.
    pub fn invalid<T>(detail: impl Into<String>) -> Self {
        CodecError::Invalid {
            what: type_name::<T>(),
            detail: detail.into(),
        }
    }
}

/// Writes `value` as a self-delimiting element: as itself if `T` has a fixed width, otherwise as its
/// LEB128 length followed by its bytes.
pub fn write_element<T: Codec>(value: &T, out: &mut Vec<u8>) {
    if T::FIXED_LEN.is_some() {
        value.encode_into(out);
        return;
    }
    // Encoded in place after a one-byte length, which is widened if the value is longer than
    // 127 bytes: no temporary buffer.
    let start = out.len();
    out.push(0);
    value.encode_into(out);
    let len = out.len() - start - 1;
    if len < 0x80 {
        out[start] = len as u8;
        return;
    }
    let (prefix, width) = leb128(len);
    out.resize(out.len() + width - 1, 0);
    out.copy_within(start + 1..start + 1 + len, start + width);
    out[start..start + width].copy_from_slice(&prefix[..width]);
}

/// The bytes of `value` written as a leading element ([`write_element`]): the key prefix shared by
/// every tuple key whose first element is `value`. Use it with
/// [`Tree::scan_prefix`](crate::Tree::scan_prefix).
pub fn leading_element<T: Codec>(value: &T) -> Vec<u8> {
    let mut out = Vec::new();
    write_element(value, &mut out);
    out
}

/// Appends `len` as unsigned LEB128.
#[cfg(test)]
fn write_len(len: usize, out: &mut Vec<u8>) {
    let (bytes, width) = leb128(len);
    out.extend_from_slice(&bytes[..width]);
}

/// Appends `bytes` as a variable-width element: their LEB128 length, then the bytes. The same
/// bytes as [`write_element`] of a `String` or `Vec<u8>` holding them, for callers that only
/// have a borrowed slice.
pub fn write_bytes_element(bytes: &[u8], out: &mut Vec<u8>) {
    let (prefix, width) = leb128(bytes.len());
    out.extend_from_slice(&prefix[..width]);
    out.extend_from_slice(bytes);
}

/// `len` as unsigned LEB128: the bytes and how many of them are used.
fn leb128(len: usize) -> ([u8; 10], usize) {
    let mut bytes = [0_u8; 10];
    let mut width = 0;
    let mut rest = len as u64;
    loop {
        let group = (rest & 0x7f) as u8;
        rest >>= 7;
        if rest == 0 {
            bytes[width] = group;
            return (bytes, width + 1);
        }
        bytes[width] = group | 0x80;
        width += 1;
    }
}

/// A cursor over encoded bytes, for reading records field by field.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    bytes: &'a [u8],
    what: &'static str,
}

impl<'a> Reader<'a> {
    /// Starts reading `bytes`, which should hold a `T` (named in errors).
    pub fn new<T>(bytes: &'a [u8]) -> Self {
        Reader {
            bytes,
            what: type_name::<T>(),
        }
    }

    /// The next `n` raw bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], CodecError> {
        if self.bytes.len() < n {
            return Err(CodecError::Truncated {
                what: self.what,
                needed: n,
                available: self.bytes.len(),
            });
        }
        let (head, tail) = self.bytes.split_at(n);
        self.bytes = tail;
        Ok(head)
    }

    /// The next element, as written by [`write_element`].
    pub fn element<T: Codec>(&mut self) -> Result<T, CodecError> {
        let len = match T::FIXED_LEN {
            Some(n) => n,
            None => self.len()?,
        };
        T::decode(self.take(len)?)
    }

    /// Everything not read yet, consuming it.
    pub fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.bytes)
    }

    /// Checks that every byte was read.
    pub fn finish(self) -> Result<(), CodecError> {
        if self.bytes.is_empty() {
            Ok(())
        } else {
            Err(CodecError::TrailingBytes {
                what: self.what,
                extra: self.bytes.len(),
            })
        }
    }

    /// Reads an unsigned LEB128 length, shortest form only.
    fn len(&mut self) -> Result<usize, CodecError> {
        let mut value: u64 = 0;
        for index in 0..10 {
            let byte = self.take(1)?[0];
            let group = u64::from(byte & 0x7f);
            if index == 9 && byte > 1 {
                return Err(self.bad_len("length does not fit in 64 bits"));
            }
            value |= group << (7 * index);
            if byte & 0x80 == 0 {
                if byte == 0 && index > 0 {
                    return Err(self.bad_len("length is not in its shortest form"));
                }
                return usize::try_from(value)
                    .map_err(|_| self.bad_len("length does not fit in usize"));
            }
        }
        Err(self.bad_len("length is longer than 10 bytes"))
    }

    fn bad_len(&self, detail: &str) -> CodecError {
        CodecError::Invalid {
            what: self.what,
            detail: detail.to_owned(),
        }
    }
}

/// Checks that `bytes` is exactly `N` long and returns it as an array.
fn exact<T, const N: usize>(bytes: &[u8]) -> Result<[u8; N], CodecError> {
    match <[u8; N]>::try_from(bytes) {
        Ok(array) => Ok(array),
        Err(_) if bytes.len() < N => Err(CodecError::Truncated {
            what: type_name::<T>(),
            needed: N,
            available: bytes.len(),
        }),
        Err(_) => Err(CodecError::TrailingBytes {
            what: type_name::<T>(),
            extra: bytes.len() - N,
        }),
    }
}

macro_rules! unsigned_codec {
    ($($t:ty),*) => {$(
        /// Big-endian, fixed width: sorts numerically.
        impl Codec for $t {
            const FIXED_LEN: Option<usize> = Some(size_of::<$t>());
            fn encode_into(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_be_bytes());
            }
            fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
                Ok(<$t>::from_be_bytes(exact::<$t, { size_of::<$t>() }>(bytes)?))
            }
        }
    )*};
}

unsigned_codec!(u8, u16, u32, u64, u128);

/// Big-endian with the sign bit flipped, 8 bytes: sorts numerically, negatives first.
impl Codec for i64 {
    const FIXED_LEN: Option<usize> = Some(8);
    fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&((*self ^ i64::MIN) as u64).to_be_bytes());
    }
    fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        Ok((u64::from_be_bytes(exact::<i64, 8>(bytes)?) as i64) ^ i64::MIN)
    }
}

/// One byte, `0` or `1`.
impl Codec for bool {
    const FIXED_LEN: Option<usize> = Some(1);
    fn encode_into(&self, out: &mut Vec<u8>) {
        out.push(u8::from(*self));
    }
    fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        match exact::<bool, 1>(bytes)? {
            [0] => Ok(false),
            [1] => Ok(true),
            [other] => Err(CodecError::invalid::<bool>(format!(
                "byte {other:#04x} is neither 0 nor 1"
            ))),
        }
    }
}

/// No bytes: for sets (`Tree<K, ()>`).
impl Codec for () {
    const FIXED_LEN: Option<usize> = Some(0);
    fn encode_into(&self, _out: &mut Vec<u8>) {}
    fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        exact::<(), 0>(bytes).map(|_| ())
    }
}

/// The N bytes as they are.
impl<const N: usize> Codec for [u8; N] {
    const FIXED_LEN: Option<usize> = Some(N);
    fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self);
    }
    fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        exact::<[u8; N], N>(bytes)
    }
}

/// The UTF-8 bytes, no length: sorts in byte order.
impl Codec for String {
    fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.as_bytes());
    }
    fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        String::from_utf8(bytes.to_vec())
            .map_err(|e| CodecError::invalid::<String>(format!("not UTF-8: {e}")))
    }
}

/// The bytes as they are, no length.
impl Codec for Vec<u8> {
    fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self);
    }
    fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        Ok(bytes.to_vec())
    }
}

/// Sum of the widths if all are fixed.
const fn sum_fixed(lens: &[Option<usize>]) -> Option<usize> {
    let mut total = 0;
    let mut i = 0;
    while i < lens.len() {
        match lens[i] {
            Some(n) => total += n,
            None => return None,
        }
        i += 1;
    }
    Some(total)
}

macro_rules! tuple_codec {
    ($($name:ident $idx:tt),+ ; $last:ident $last_idx:tt) => {
        /// Every element but the last as an element ([`write_element`]), then the last as itself.
        impl<$($name: Codec,)+ $last: Codec> Codec for ($($name,)+ $last) {
            const FIXED_LEN: Option<usize> = sum_fixed(&[$($name::FIXED_LEN,)+ $last::FIXED_LEN]);
            fn encode_into(&self, out: &mut Vec<u8>) {
                $(write_element(&self.$idx, out);)+
                self.$last_idx.encode_into(out);
            }
            fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
                let mut r = Reader::new::<Self>(bytes);
                Ok(($(r.element::<$name>()?,)+ $last::decode(r.rest())?))
            }
        }
    };
}

tuple_codec!(A 0 ; B 1);
tuple_codec!(A 0, B 1 ; C 2);
tuple_codec!(A 0, B 1, C 2 ; D 3);

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn roundtrip<T: Codec + PartialEq + std::fmt::Debug>(value: T) {
        let bytes = value.encode();
        if let Some(n) = T::FIXED_LEN {
            assert_eq!(bytes.len(), n);
        }
        assert_eq!(T::decode(&bytes).as_ref(), Ok(&value));
    }

    #[test]
    fn documented_byte_formats() {
        assert_eq!(0x0102_u16.encode(), [1, 2]);
        assert_eq!(1_u64.encode(), [0, 0, 0, 0, 0, 0, 0, 1]);
        assert_eq!(0_i64.encode(), [0x80, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(
            (-1_i64).encode(),
            [0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]
        );
        assert_eq!(true.encode(), [1]);
        assert_eq!(().encode(), Vec::<u8>::new());
        assert_eq!("ab".to_owned().encode(), b"ab");
        assert_eq!((7_u8, "ab".to_owned()).encode(), [7, b'a', b'b']);
        assert_eq!(("ab".to_owned(), 7_u8).encode(), [2, b'a', b'b', 7]);
        let long = vec![0_u8; 300];
        let encoded = (long.clone(), ()).encode();
        assert_eq!(&encoded[..2], &[0xac, 0x02]);
        assert_eq!(encoded.len(), 302);
        assert_eq!(<(Vec<u8>, ())>::decode(&encoded), Ok((long, ())));
    }

    #[test]
    fn fixed_len_of_tuples() {
        assert_eq!(<(u64, u32)>::FIXED_LEN, Some(12));
        assert_eq!(<(u64, String)>::FIXED_LEN, None);
        assert_eq!(<([u8; 16], (), bool)>::FIXED_LEN, Some(17));
    }

    #[test]
    fn bad_bytes_are_errors_not_panics() {
        assert!(matches!(
            u64::decode(&[1, 2, 3]),
            Err(CodecError::Truncated {
                needed: 8,
                available: 3,
                ..
            })
        ));
        assert!(matches!(
            u32::decode(&[0; 5]),
            Err(CodecError::TrailingBytes { extra: 1, .. })
        ));
        assert!(matches!(
            bool::decode(&[2]),
            Err(CodecError::Invalid { .. })
        ));
        assert!(matches!(
            String::decode(&[0xff]),
            Err(CodecError::Invalid { .. })
        ));
        assert!(matches!(
            <(String, u8)>::decode(&[5, b'a']),
            Err(CodecError::Truncated { .. })
        ));
        // Overlong and oversized LEB128 lengths.
        assert!(matches!(
            <(Vec<u8>, ())>::decode(&[0x80, 0x00]),
            Err(CodecError::Invalid { .. })
        ));
        assert!(matches!(
            <(Vec<u8>, ())>::decode(&[0xff; 11]),
            Err(CodecError::Invalid { .. })
        ));
        assert!(matches!(
            <(Vec<u8>, ())>::decode(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]),
            Err(CodecError::Invalid { .. })
        ));
    }

    #[test]
    fn elements_are_their_length_then_their_bytes_at_every_length_width() {
        for len in [0, 1, 127, 128, 300, 16_383, 16_384, 2_097_152] {
            let value = vec![0xa5_u8; len];
            let mut expected = vec![7_u8];
            write_len(len, &mut expected);
            expected.extend_from_slice(&value);
            let mut out = vec![7_u8];
            write_element(&value, &mut out);
            assert_eq!(out, expected, "length {len}");
            let mut r = Reader::new::<Vec<u8>>(&out[1..]);
            assert_eq!(r.element::<Vec<u8>>(), Ok(value));
        }
    }

    #[test]
    fn a_borrowed_key_encodes_like_the_owned_one() {
        for text in ["", "example.com", &"x".repeat(200)] {
            let owned = (text.to_owned(), 7_u32);
            let mut borrowed = Vec::new();
            (text, 7_u32).encode_as(&mut borrowed);
            assert_eq!(borrowed, owned.encode());
        }
    }

    #[test]
    fn reader_finish_rejects_leftovers() {
        let mut r = Reader::new::<u8>(&[1, 2]);
        assert_eq!(r.element::<u8>(), Ok(1));
        assert!(matches!(
            r.finish(),
            Err(CodecError::TrailingBytes { extra: 1, .. })
        ));
    }

    proptest! {
        #[test]
        fn roundtrips(a: u64, b: i64, c: u128, s: String, v: Vec<u8>, h: [u8; 16], f: bool) {
            roundtrip(a);
            roundtrip(b);
            roundtrip(c);
            roundtrip(s.clone());
            roundtrip(v.clone());
            roundtrip(h);
            roundtrip(f);
            roundtrip((s.clone(), v.clone()));
            roundtrip((v.clone(), s.clone(), a));
            roundtrip((h, (s.clone(), b), v.clone(), ()));
        }

        #[test]
        fn integer_keys_sort_numerically(a: u64, b: u64, x: i64, y: i64) {
            prop_assert_eq!(a.cmp(&b), a.encode().cmp(&b.encode()));
            prop_assert_eq!(x.cmp(&y), x.encode().cmp(&y.encode()));
            prop_assert_eq!((a, x).cmp(&(b, y)), (a, x).encode().cmp(&(b, y).encode()));
        }

        #[test]
        fn leading_element_is_a_prefix_of_exactly_its_keys(s: String, t: String, a: u64, b: u64) {
            let prefix = leading_element(&s);
            prop_assert!((s.clone(), a).encode().starts_with(&prefix));
            prop_assert_eq!((t.clone(), b).encode().starts_with(&prefix), s == t);
        }

        /// Any bytes either fail to decode (without panicking) or are the one encoding of the value
        /// they decode to: two different byte strings never mean the same key.
        #[test]
        fn decoding_is_canonical(bytes: Vec<u8>) {
            if let Ok(v) = <(String, Vec<u8>, u64)>::decode(&bytes) {
                prop_assert_eq!(v.encode(), bytes.clone());
            }
            if let Ok(v) = <(Vec<u8>, ())>::decode(&bytes) {
                prop_assert_eq!(v.encode(), bytes.clone());
            }
            if let Ok(v) = <(bool, [u8; 2], i64)>::decode(&bytes) {
                prop_assert_eq!(v.encode(), bytes.clone());
            }
        }
    }
}
