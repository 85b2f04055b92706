//! The page store of `innodb rows`: where the newest copy of every page the scan found is
//! (not its bytes), the leaf pages of each index, their older copies, and the reads of a page
//! (page_compressed pages inflated, ROW_FORMAT=COMPRESSED ones decompressed) and of a BLOB.

use super::record::BlobSource;
use crate::io::read_full_at;
use crate::page::{be16, be32, page_type, system_records, IndexHeader, RowFormat};
use crate::recover::{self, Scanned, Source};
use std::collections::{BTreeMap, HashMap, HashSet};

/// Where the kept copy of a page is: `size` bytes at `offset` of source `src`.
#[derive(Clone, Copy, Debug)]
pub(super) struct PageRef {
    src: usize,
    offset: u64,
    size: u32,
    pub(super) lsn: u64,
    /// An older copy of the page (same space id and page number, lower LSN than the kept one).
    pub(super) older: bool,
    /// How the page is stored.
    stored: Stored,
}

/// A leaf page to decode: its number and which copy (0: the newest, kept for BLOB and
/// metadata reads too; 1, 2, ...: older copies with a lower LSN, newest first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) struct Leaf {
    pub(super) page_no: u32,
    pub(super) copy: u32,
}

/// How a page is stored in its source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stored {
    /// As InnoDB uses it.
    Plain,
    /// A MariaDB page_compressed page: inflated each time it is read, not kept.
    PageCompressed,
    /// A ROW_FORMAT=COMPRESSED leaf page: decompressed each time it is read, not kept.
    Zip,
    /// An encrypted page: decrypted each time it is read, with the store's key of this
    /// index.
    Encrypted(u32),
}

/// The kept copy of every page, by (space id, page number): where it is, not its bytes.
/// Pages are read (and page_compressed ones inflated) when they are decoded or a BLOB chain
/// reaches them, so memory grows with the number of pages (this index), not their size.
pub struct PageStore<'a> {
    sources: &'a [Source],
    pages: HashMap<(u32, u32), PageRef>,
    /// MariaDB instant ALTER: n_core_fields of an index, from its root page (type INSTANT),
    /// and the core records' NULL bytes kept there after an instant DROP or reorder.
    pub(super) instant_core: HashMap<(u32, u64), (usize, Option<usize>)>,
    /// Older copies of leaf pages (lower LSN than the kept copy), newest first.
    older: HashMap<(u32, u32), Vec<PageRef>>,
    pub(super) leaf_groups: BTreeMap<(u32, u64), Vec<Leaf>>,
    pub(super) warnings: Vec<String>,
    zip: ZipStats,
    /// The keys of the encrypted pages ([`Stored::Encrypted`]).
    keys: Vec<std::sync::Arc<crate::crypt::PageKey>>,
}

/// A compressed leaf page decompressed (its index id and what it held; the page itself is not
/// kept), or why not.
type ZipPage = Result<(u64, super::zip::ZipInfo), &'static str>;

/// ROW_FORMAT=COMPRESSED leaf pages of a [`PageStore`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ZipStats {
    /// Leaf pages decompressed.
    pub pages: u64,
    /// Records of them whose bytes came from the zlib stream.
    pub stream_records: u64,
    /// Records written from the modification log (inserted or updated after the page was
    /// last compressed).
    pub log_records: u64,
    /// Leaf pages rejected, by reason.
    pub rejected: BTreeMap<&'static str, u64>,
}

impl<'a> PageStore<'a> {
    /// Indexes the pages of a scan: the newest LSN of each (space id, page number).
    pub fn new(scanned: &Scanned, sources: &'a [Source]) -> PageStore<'a> {
        let names: Vec<String> = sources
            .iter()
            .map(|s| s.path.display().to_string())
            .collect();
        let plan = recover::plan(&scanned.found, &names);
        let mut b = Builder {
            scanned,
            sources,
            pages: HashMap::new(),
            leaf_groups: BTreeMap::new(),
            instant_core: HashMap::new(),
            not_inflated: 0,
            keys: Vec::new(),
        };
        let zip_leaves = b.kept_pages(plan.kept.keys().copied());
        let kept: HashSet<usize> = plan.kept.keys().copied().collect();
        let older = b.older_copies(&kept);
        let zip = b.zip_leaves(&zip_leaves);
        let mut warnings = scanned.warnings.clone();
        if b.not_inflated > 0 {
            warnings.push(format!(
                "{} page_compressed page(s) skipped: damaged, or compressed with an algorithm MariaDB does not use (zlib, lz4, lzo, lzma, bzip2 and snappy are read)",
                b.not_inflated
            ));
        }
        if !zip.rejected.is_empty() {
            let n: u64 = zip.rejected.values().sum();
            let why: Vec<String> = zip
                .rejected
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect();
            warnings.push(format!(
                "{n} ROW_FORMAT=COMPRESSED leaf page(s) not decompressed, their rows not read: damaged ({})",
                why.join(", ")
            ));
        }
        let mut leaf_groups = b.leaf_groups;
        for pages in leaf_groups.values_mut() {
            pages.sort_unstable();
            pages.dedup();
        }
        PageStore {
            sources,
            pages: b.pages,
            instant_core: b.instant_core,
            older,
            leaf_groups,
            warnings,
            zip,
            keys: b.keys,
        }
    }

    /// What the ROW_FORMAT=COMPRESSED leaf pages held.
    pub fn zip_stats(&self) -> &ZipStats {
        &self.zip
    }

    /// The kept copy of a page, read into `buf` (a page_compressed one inflated, a
    /// ROW_FORMAT=COMPRESSED leaf page decompressed).
    fn read(&self, space: u32, page_no: u32, buf: &mut Vec<u8>) -> Option<PageRef> {
        let r = *self.pages.get(&(space, page_no))?;
        self.read_ref(r, buf)
    }

    /// Reads a leaf page: the kept copy, or an older one.
    pub(super) fn read_leaf(&self, space: u32, leaf: Leaf, buf: &mut Vec<u8>) -> Option<PageRef> {
        if leaf.copy == 0 {
            return self.read(space, leaf.page_no, buf);
        }
        let r = *self
            .older
            .get(&(space, leaf.page_no))?
            .get(leaf.copy as usize - 1)?;
        self.read_ref(r, buf)
    }

    fn read_ref(&self, r: PageRef, buf: &mut Vec<u8>) -> Option<PageRef> {
        buf.resize(r.size as usize, 0);
        let n = read_full_at(&self.sources[r.src].file, buf, r.offset).ok()?;
        match r.stored {
            Stored::Plain => {}
            Stored::PageCompressed => {
                *buf = super::inflate::page_compressed(&buf[..n], r.size as usize)?;
                return Some(r);
            }
            Stored::Zip => {
                if n != buf.len() {
                    return None;
                }
                *buf = super::zip::decompress(buf).ok()?.0;
                return Some(r);
            }
            Stored::Encrypted(k) => {
                if n != buf.len() || !crate::crypt::decrypt_page(&self.keys[k as usize], buf) {
                    return None;
                }
            }
        }
        (n == buf.len()).then_some(r)
    }
}

/// The page index being built by [`PageStore::new`].
struct Builder<'s, 'a> {
    scanned: &'s Scanned,
    sources: &'a [Source],
    pages: HashMap<(u32, u32), PageRef>,
    leaf_groups: BTreeMap<(u32, u64), Vec<Leaf>>,
    instant_core: HashMap<(u32, u64), (usize, Option<usize>)>,
    not_inflated: u64,
    keys: Vec<std::sync::Arc<crate::crypt::PageKey>>,
}

impl Builder<'_, '_> {
    /// How page `p` is stored: plain, or encrypted with a key of the store.
    fn stored(&mut self, p: &crate::scan::FoundPage) -> Stored {
        let Some(k) = &p.decrypt else {
            return Stored::Plain;
        };
        let i = match self.keys.iter().position(|x| std::sync::Arc::ptr_eq(x, k)) {
            Some(i) => i,
            None => {
                self.keys.push(std::sync::Arc::clone(k));
                self.keys.len() - 1
            }
        };
        Stored::Encrypted(i as u32)
    }

    /// Puts the kept copy of every page in the index (page_compressed ones inflated for their
    /// header); returns the ROW_FORMAT=COMPRESSED leaf pages, decompressed later on every CPU.
    fn kept_pages(&mut self, kept: impl Iterator<Item = usize>) -> Vec<usize> {
        let leaf = |page_no| Leaf { page_no, copy: 0 };
        let mut buf = Vec::new();
        let mut zip_leaves = Vec::new();
        for i in kept {
            let (si, p) = &self.scanned.found[i];
            if p.zip && p.page_type == page_type::INDEX && p.index.is_some_and(|ix| ix.level == 0) {
                // A compressed leaf page: decompressed once, below, on every CPU; BLOB and
                // other compressed pages are read as they are when needed.
                zip_leaves.push(i);
                continue;
            }
            if p.compressed_bytes.is_some() {
                buf.resize(p.page_size as usize, 0);
                let page = read_full_at(&self.sources[*si].file, &mut buf, p.offset)
                    .ok()
                    .and_then(|n| super::inflate::page_compressed(&buf[..n], p.page_size as usize));
                let Some(page) = page else {
                    self.not_inflated += 1;
                    continue;
                };
                // Inflated here for its header only: it is inflated again when read.
                let (space, page_no, lsn) = (
                    be32(&page, 34),
                    be32(&page, 4),
                    crate::page::be64(&page, 16),
                );
                if system_records(&page).is_some() {
                    let h = IndexHeader::parse(&page);
                    if h.level == 0 {
                        self.leaf_groups
                            .entry((space, h.index_id))
                            .or_default()
                            .push(leaf(page_no));
                    }
                }
                keep_newest(
                    &mut self.pages,
                    (space, page_no),
                    PageRef {
                        src: *si,
                        offset: p.offset,
                        size: p.page_size,
                        lsn,
                        older: false,
                        stored: Stored::PageCompressed,
                    },
                );
                continue;
            }
            if p.page_type == page_type::INSTANT {
                buf.resize(p.page_size as usize, 0);
                if p.read(&self.sources[*si].file, &mut buf).ok() == Some(buf.len())
                    && system_records(&buf).is_some()
                {
                    let h = IndexHeader::parse(&buf);
                    self.instant_core.insert(
                        (p.space_id, h.index_id),
                        (
                            (be16(&buf, 50) >> 3) as usize,
                            crate::page::instant_core_null_bytes(&buf),
                        ),
                    );
                }
            }
            let stored = self.stored(p);
            keep_newest(
                &mut self.pages,
                (p.space_id, p.page_no),
                PageRef {
                    src: *si,
                    offset: p.offset,
                    size: p.page_size,
                    lsn: p.lsn,
                    older: false,
                    stored,
                },
            );
            if let Some(ix) = &p.index {
                if ix.level == 0 && ix.format != RowFormat::Compressed {
                    self.leaf_groups
                        .entry((p.space_id, ix.index_id))
                        .or_default()
                        .push(leaf(p.page_no));
                }
            }
        }
        zip_leaves
    }

    /// The older copies of leaf pages (their records are decoded too), put in their index's
    /// group; `kept`: the scan's pages kept as the newest copies.
    fn older_copies(&mut self, kept: &HashSet<usize>) -> HashMap<(u32, u32), Vec<PageRef>> {
        // Older copies of leaf pages: their records are decoded too (rows purged since, or
        // older versions of a key the newest-LSN choice drops). A copy with the kept copy's
        // LSN holds the same records and is left out.
        let mut copies: Vec<(u32, u32, std::cmp::Reverse<u64>, usize, u64)> = Vec::new();
        for (i, (_, p)) in self.scanned.found.iter().enumerate() {
            let Some(ix) = &p.index else { continue };
            if kept.contains(&i)
                || p.zip
                || p.compressed_bytes.is_some()
                || ix.level != 0
                || ix.format == RowFormat::Compressed
                || self
                    .pages
                    .get(&(p.space_id, p.page_no))
                    .is_some_and(|k: &PageRef| p.lsn >= k.lsn)
            {
                continue;
            }
            copies.push((
                p.space_id,
                p.page_no,
                std::cmp::Reverse(p.lsn),
                i,
                ix.index_id,
            ));
        }
        // Copy numbers by LSN, newest first (then in scan order).
        copies.sort_unstable();
        let mut older: HashMap<(u32, u32), Vec<PageRef>> = HashMap::new();
        for (space, page_no, _, i, index_id) in copies {
            let (si, p) = &self.scanned.found[i];
            let stored = self.stored(p);
            let list = older.entry((space, page_no)).or_default();
            list.push(PageRef {
                src: *si,
                offset: p.offset,
                size: p.page_size,
                lsn: p.lsn,
                older: true,
                stored,
            });
            // In the group of the index the copy belonged to (the page may hold another now).
            self.leaf_groups
                .entry((space, index_id))
                .or_default()
                .push(Leaf {
                    page_no,
                    copy: list.len() as u32,
                });
        }
        older
    }

    /// Decompresses the ROW_FORMAT=COMPRESSED leaf pages `zip_leaves` (on every CPU) and puts
    /// those that decompress in the index.
    fn zip_leaves(&mut self, zip_leaves: &[usize]) -> ZipStats {
        let leaf = |page_no| Leaf { page_no, copy: 0 };
        let mut zip = ZipStats::default();
        let done = decompress(self.scanned, self.sources, zip_leaves);
        for (&i, page) in zip_leaves.iter().zip(done.into_iter().flatten()) {
            let p = &self.scanned.found[i].1;
            match page {
                Ok((index_id, info)) => {
                    zip.pages += 1;
                    zip.stream_records += info.stream_records as u64;
                    zip.log_records += info.log_records as u64;
                    self.leaf_groups
                        .entry((p.space_id, index_id))
                        .or_default()
                        .push(leaf(p.page_no));
                    // Not kept: decompressed again when its rows are decoded, so memory does
                    // not grow with the table (16 KiB per page would).
                    keep_newest(
                        &mut self.pages,
                        (p.space_id, p.page_no),
                        PageRef {
                            src: self.scanned.found[i].0,
                            offset: p.offset,
                            size: p.page_size,
                            lsn: p.lsn,
                            older: false,
                            stored: Stored::Zip,
                        },
                    );
                }
                Err(why) => *zip.rejected.entry(why).or_default() += 1,
            }
        }
        zip
    }
}

/// `zip_leaves` (indexes into the scan's pages) decompressed on every CPU, in their order,
/// in chunks, one per thread.
fn decompress(scanned: &Scanned, sources: &[Source], zip_leaves: &[usize]) -> Vec<Vec<ZipPage>> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let per = zip_leaves.len().div_ceil(threads).max(1);
    std::thread::scope(|sc| {
        let workers: Vec<_> = zip_leaves
            .chunks(per)
            .map(|chunk| {
                sc.spawn(move || {
                    let mut buf = Vec::new();
                    chunk
                        .iter()
                        .map(|&i| {
                            let (si, p) = &scanned.found[i];
                            buf.resize(p.page_size as usize, 0);
                            match read_full_at(&sources[*si].file, &mut buf, p.offset) {
                                Ok(n) if n == buf.len() => super::zip::decompress(&buf)
                                    .map(|(page, info)| (IndexHeader::parse(&page).index_id, info))
                                    .map_err(|r| r.name()),
                                _ => Err("unreadable"),
                            }
                        })
                        .collect()
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("a decompressing thread panicked"))
            .collect()
    })
}

/// Puts `r` in `pages` unless a newer copy of the page is there (a page_compressed page's
/// space id and page number, read from inside it, may name a page also found plain).
fn keep_newest(pages: &mut HashMap<(u32, u32), PageRef>, key: (u32, u32), r: PageRef) {
    match pages.entry(key) {
        std::collections::hash_map::Entry::Occupied(mut e) => {
            if r.lsn > e.get().lsn {
                e.insert(r);
            }
        }
        std::collections::hash_map::Entry::Vacant(e) => {
            e.insert(r);
        }
    }
}

impl BlobSource for PageStore<'_> {
    /// MariaDB/MySQL 5.x BLOB pages: at the reference's offset a 4-byte part length and the
    /// next page number, then the part; later pages of the chain start at byte 38.
    /// ROW_FORMAT=COMPRESSED tables: a zlib stream across ZBLOB and ZBLOB2 pages. MySQL 8:
    /// a LOB first page and its index of data pages ([`super::lob`]).
    fn read(&self, space: u32, page_no: u32, offset: u32, len: u64, out: &mut Vec<u8>) -> bool {
        let mut buf = Vec::new();
        let found = self.read(space, page_no, &mut buf).is_some() && buf.len() > 38;
        if found && be16(&buf, 24) == page_type::ZBLOB {
            let page = |no: u32, b: &mut Vec<u8>| {
                self.read(space, no, b).is_some() && be32(b, 34) == space
            };
            return super::zip::read_zblob(page, page_no, offset, len, out);
        }
        if found && be16(&buf, 24) == super::lob::LOB_FIRST && be32(&buf, 34) == space {
            // MySQL 8: the reference's offset is the LOB version, the first page its index.
            let page = |no: u32, b: &mut Vec<u8>| {
                self.read(space, no, b).is_some() && be32(b, 34) == space
            };
            return super::lob::read_lob(page, page_no, len, out);
        }
        let (mut page, mut off) = (page_no, offset as usize);
        let mut left = len;
        let mut hops = 0u64;
        while left > 0 {
            hops += 1;
            if page == u32::MAX || hops > 1 << 20 {
                return false;
            }
            if self.read(space, page, &mut buf).is_none()
                || be16(&buf, 24) != page_type::BLOB
                || be32(&buf, 34) != space
                || off + 8 > buf.len() - 8
            {
                return false;
            }
            let part = be32(&buf, off) as usize;
            let next = be32(&buf, off + 4);
            let start = off + 8;
            if part == 0 || start + part > buf.len() - 8 || part as u64 > left {
                return false;
            }
            out.extend_from_slice(&buf[start..start + part]);
            left -= part as u64;
            page = next;
            off = 38;
        }
        true
    }
}
