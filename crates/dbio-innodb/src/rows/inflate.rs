//! MariaDB page_compressed pages (PAGE_COMPRESSED=1 with the default zlib algorithm) turned
//! back into the page InnoDB compressed: the whole page is one zlib stream after the header.
//! full_crc32 tablespaces mark such a page with bit 15 of the page type (the low bits give
//! the payload size / 256) and the stream starts at byte 26; older tablespaces use page type
//! 34354 with the algorithm at bytes 26..34 and the stream at byte 46.

use crate::page::{be16, be64, page_type};
use std::io::Read;

/// zlib in MariaDB's numbering of page compression algorithms.
const ZLIB: u16 = 1;

/// The page of `page_size` bytes compressed in `slot` (a page_compressed page as read from
/// the tablespace), or `None` when it is not one, uses another algorithm than zlib, or does
/// not inflate to exactly one page.
pub fn page_compressed(slot: &[u8], page_size: usize) -> Option<Vec<u8>> {
    if slot.len() < 64 {
        return None;
    }
    let ptype = be16(slot, 24);
    let (start, end) = if ptype & 0x8000 != 0 {
        let size = ((ptype & 0x7FFF) as usize) << 8;
        (26, size.min(slot.len()))
    } else if ptype == page_type::PAGE_COMPRESSED {
        // The algorithm is the 8 bytes at 26: 6 zero bytes, then the 2-byte number.
        if be64(slot, 26) >> 16 != 0 || be16(slot, 32) != ZLIB {
            return None;
        }
        let size = be16(slot, 38) as usize;
        (46, (46 + size).min(slot.len()))
    } else {
        return None;
    };
    if start >= end {
        return None;
    }
    let mut out = Vec::with_capacity(page_size);
    let mut z = flate2::read::ZlibDecoder::new(&slot[start..end]).take(page_size as u64 + 1);
    z.read_to_end(&mut out).ok()?;
    (out.len() == page_size).then_some(out)
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
