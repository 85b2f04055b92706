//! CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), as used by GPT headers and entry arrays.

/// The CRC-32 of `data`.
pub fn crc32(data: &[u8]) -> u32 {
    crc32fast::hash(data)
}

#[cfg(test)]
mod tests {
    #[test]
    fn known_values() {
        assert_eq!(super::crc32(b""), 0);
        assert_eq!(super::crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(
            super::crc32(b"The quick brown fox jumps over the lazy dog"),
            0x414F_A339
        );
    }
}
