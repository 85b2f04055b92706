//! MariaDB page_compressed pages turned back into the page InnoDB compressed, with each
//! algorithm MariaDB offers (zlib built in; lz4, lzo, lzma, bzip2 and snappy from the
//! provider plugins): the whole page is one compressed stream after the header.
//!
//! full_crc32 tablespaces mark such a page with a page type whose high byte is 0x80 (the low byte gives
//! the slot's size / 256) and the stream starts at byte 26; the algorithm is in the
//! tablespace flags only, so it is recognised here by the stream (zlib header, xz and bzip2
//! magic, Snappy's length preamble, else LZ4 then LZO). For LZ4, LZO and Snappy, which need
//! the exact stream length, the byte before the page's checksum holds the length's low
//! byte + 5. Older tablespaces use page type 34354 with the algorithm at bytes 26..34 and the
//! stream at byte 40 (its length at 38). A result counts only when it is exactly one page
//! whose header (page number, neighbours, LSN: bytes 4..24, copied into the compressed page)
//! matches.

use crate::page::{be16, be64, page_type};
use std::io::Read;

/// MariaDB's numbering of page compression algorithms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Algo {
    Zlib = 1,
    Lz4 = 2,
    Lzo = 3,
    Lzma = 4,
    Bzip2 = 5,
    Snappy = 6,
}

impl Algo {
    fn from_number(n: u16) -> Option<Algo> {
        Some(match n {
            1 => Algo::Zlib,
            2 => Algo::Lz4,
            3 => Algo::Lzo,
            4 => Algo::Lzma,
            5 => Algo::Bzip2,
            6 => Algo::Snappy,
            _ => return None,
        })
    }

    /// Whether a full_crc32 page keeps the exact stream length in its last byte.
    fn exact_len(self) -> bool {
        matches!(self, Algo::Lz4 | Algo::Lzo | Algo::Snappy)
    }
}

/// `stream` decompressed into exactly `page_size` bytes with `algo`.
fn decompress(algo: Algo, stream: &[u8], page_size: usize) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(page_size);
    match algo {
        Algo::Zlib => {
            flate2::read::ZlibDecoder::new(stream)
                .take(page_size as u64 + 1)
                .read_to_end(&mut out)
                .ok()?;
        }
        Algo::Bzip2 => {
            bzip2::read::BzDecoder::new(stream)
                .take(page_size as u64 + 1)
                .read_to_end(&mut out)
                .ok()?;
        }
        Algo::Lzma => {
            lzma_rs::xz_decompress(&mut &stream[..xz_end(stream)?], &mut out).ok()?;
        }
        Algo::Lz4 => {
            out.resize(page_size, 0);
            let n = lz4_flex::block::decompress_into(stream, &mut out).ok()?;
            out.truncate(n);
        }
        Algo::Snappy => {
            if snap::raw::decompress_len(stream).ok()? != page_size {
                return None;
            }
            out.resize(page_size, 0);
            let n = snap::raw::Decoder::new()
                .decompress(stream, &mut out)
                .ok()?;
            out.truncate(n);
        }
        Algo::Lzo => {
            out.resize(page_size, 0);
            let n = lzo::decompress_into(stream, &mut out).ok()?;
            out.truncate(n);
        }
    }
    (out.len() == page_size).then_some(out)
}

/// The length of the xz stream at the start of `b` (which may be followed by padding): up
/// to the last stream footer magic "YZ" that only zero bytes follow (the page checksum
/// excluded by the caller).
fn xz_end(b: &[u8]) -> Option<usize> {
    let last = b.iter().rposition(|&x| x != 0)?;
    (last >= 1 && &b[last - 1..=last] == b"YZ").then_some(last + 1)
}

/// The page of `page_size` bytes compressed in `slot` (a page_compressed page as read from
/// the tablespace), or `None` when it is not one, or does not decompress to exactly one
/// page with the slot's header.
pub fn page_compressed(slot: &[u8], page_size: usize) -> Option<Vec<u8>> {
    if slot.len() < 64 {
        return None;
    }
    let ptype = be16(slot, 24);
    let ok = |page: Vec<u8>| (page[4..24] == slot[4..24]).then_some(page);
    if ptype >> 8 == 0x80 {
        let size = ((ptype & 0xFF) as usize) << 8;
        if size <= 26 + 5 || size > slot.len() {
            return None;
        }
        // The stream, then zero padding and the 4-byte checksum.
        let padded = &slot[26..size - 4];
        let exact = || {
            let mut end = size;
            let lsb = slot[size - 5] as usize;
            if lsb != 0 {
                end = (end + lsb).checked_sub(256)?;
            }
            end = end.checked_sub(5)?;
            (end > 26).then(|| &slot[26..end])
        };
        let s = padded;
        let guess: &[Algo] = if s.len() > 2 && s[0] & 0x0F == 8 && be16(s, 0).is_multiple_of(31) {
            &[Algo::Zlib]
        } else if s.starts_with(&[0xFD, b'7', b'z', b'X', b'Z', 0]) {
            &[Algo::Lzma]
        } else if s.starts_with(b"BZh") {
            &[Algo::Bzip2]
        } else if exact().is_some_and(|e| snap::raw::decompress_len(e).ok() == Some(page_size)) {
            &[Algo::Snappy]
        } else {
            &[Algo::Lz4, Algo::Lzo]
        };
        return guess.iter().find_map(|&a| {
            let stream = if a.exact_len() { exact()? } else { padded };
            decompress(a, stream, page_size).and_then(ok)
        });
    }
    if ptype == page_type::PAGE_COMPRESSED {
        // The algorithm is the 8 bytes at 26: 6 zero bytes, then the 2-byte number.
        if be64(slot, 26) >> 16 != 0 {
            return None;
        }
        let algo = Algo::from_number(be16(slot, 32))?;
        let size = be16(slot, 38) as usize;
        let stream = &slot[40..(40 + size).min(slot.len())];
        return decompress(algo, stream, page_size).and_then(ok);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inflates_a_full_crc32_page_compressed_page() {
        let mut page = vec![0u8; 16384];
        page[24..26].copy_from_slice(&page_type::INDEX.to_be_bytes());
        page[100..120].copy_from_slice(b"some page content...");
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut z, &page).unwrap();
        let stream = z.finish().unwrap();
        let size = (26 + stream.len() + 4).div_ceil(256) * 256;
        let mut slot = vec![0u8; 16384];
        slot[26..26 + stream.len()].copy_from_slice(&stream);
        slot[24..26].copy_from_slice(&(0x8000u16 | (size >> 8) as u16).to_be_bytes());
        assert_eq!(page_compressed(&slot, 16384).as_deref(), Some(&page[..]));
        // Not compressed, or not a page of this size: nothing.
        assert_eq!(page_compressed(&page, 16384), None);
        assert_eq!(page_compressed(&slot, 8192), None);
    }
}
