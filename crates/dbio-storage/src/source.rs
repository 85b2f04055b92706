//! Where bytes come from: a disk image, a block device, or a byte slice in tests.

use std::io;

/// Positioned reads from something with a known size.
pub trait ReadAt {
    /// Fills `buf` from `offset`. Fails with `UnexpectedEof` when the source is shorter.
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()>;
    /// The size in bytes.
    fn size(&self) -> u64;

    /// Reads `len` bytes at `offset` into a new vector.
    fn read_vec(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        let mut v = vec![0u8; len];
        self.read_at(offset, &mut v)?;
        Ok(v)
    }
}

impl ReadAt for [u8] {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let start = usize::try_from(offset).unwrap_or(usize::MAX);
        let end = start.saturating_add(buf.len());
        if end > self.len() {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "read of {} bytes at offset {offset} is past the end ({} bytes)",
                    buf.len(),
                    self.len()
                ),
            ));
        }
        buf.copy_from_slice(&self[start..end]);
        Ok(())
    }
    fn size(&self) -> u64 {
        self.len() as u64
    }
}

impl ReadAt for Vec<u8> {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.as_slice().read_at(offset, buf)
    }
    fn size(&self) -> u64 {
        self.len() as u64
    }
}

/// A file or block device opened read-only, with its size (for a block device, the device
/// size found by seeking to its end).
#[derive(Debug)]
pub struct FileSource {
    file: std::fs::File,
    size: u64,
}

impl FileSource {
    /// Opens `path` read-only.
    pub fn open(path: &std::path::Path) -> io::Result<Self> {
        use std::io::Seek;
        let mut file = std::fs::File::open(path)?;
        let size = file.seek(io::SeekFrom::End(0))?;
        Ok(FileSource { file, size })
    }
}

/// A window of another source (a partition inside a disk image).
pub struct Slice<'a> {
    /// The whole source.
    pub inner: &'a dyn ReadAt,
    /// Offset of the window in bytes.
    pub offset: u64,
    /// Length of the window in bytes.
    pub len: u64,
}

impl ReadAt for Slice<'_> {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        if offset.saturating_add(buf.len() as u64) > self.len {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "read at offset {offset} is past the end of the partition ({} bytes)",
                    self.len
                ),
            ));
        }
        self.inner.read_at(self.offset + offset, buf)
    }
    fn size(&self) -> u64 {
        self.len
    }
}

impl ReadAt for FileSource {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        use std::os::unix::fs::FileExt;
        if offset.saturating_add(buf.len() as u64) > self.size {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "read of {} bytes at offset {offset} is past the end ({} bytes)",
                    buf.len(),
                    self.size
                ),
            ));
        }
        self.file.read_exact_at(buf, offset)
    }
    fn size(&self) -> u64 {
        self.size
    }
}
