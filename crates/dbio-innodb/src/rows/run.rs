//! The `innodb rows` driver: pages found in the sources (a PAGES_DIR written by `innodb
//! pages`, .ibd files, images, devices), the newest copy of each page kept, the clustered
//! index whose leaf records fit the definition chosen, every record decoded and checked, the
//! newest LSN of each key kept, rows handed to a sink.

use super::def::TableDef;
use super::instant;
use super::record::{self, BlobSource, Layout, RawField, Rec, Reject, Row, RowBuf};
use super::write::LineEncoder;
use crate::io::read_full_at;
use crate::page::{be16, be32, page_type, system_records, IndexHeader, RowFormat};
use crate::recover::{self, RecoverError, Scanned, Source};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};

/// Which records become rows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Deleted {
    /// Live records only (the default).
    #[default]
    Exclude,
    /// Live and deleted records.
    Include,
    /// Deleted records only ("undo my DELETE").
    Only,
}

/// Options of a run.
#[derive(Clone, Debug)]
pub struct Options {
    /// The table definition.
    pub def: TableDef,
    /// Deleted records.
    pub deleted: Deleted,
    /// Decode only this index id (default: the one whose records fit the definition best).
    pub index_id: Option<u64>,
    /// Decode only pages of this space id.
    pub space_id: Option<u32>,
}

/// Receives the rows of a run.
pub trait RowSink {
    /// Called once the index is chosen, before the first row.
    fn begin(&mut self, summary: &Summary) -> std::io::Result<()>;
    /// One row.
    fn row(&mut self, row: &Row, meta: &RowMeta) -> std::io::Result<()>;
    /// After the last row.
    fn end(&mut self, summary: &Summary) -> std::io::Result<()>;
    /// An encoder the decoding threads share: when given, rows arrive already formatted,
    /// in order, through [`RowSink::lines`] instead of [`RowSink::row`].
    fn encoder(&self) -> Option<LineEncoder> {
        None
    }
    /// Lines made by [`RowSink::encoder`]'s encoder, whole lines in row order.
    fn lines(&mut self, lines: &[u8]) -> std::io::Result<()> {
        let _ = lines;
        Err(std::io::Error::other(
            "this row sink has no encoder: it takes rows, not lines",
        ))
    }
}

/// Where a row came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowMeta {
    /// Space id.
    pub space_id: u32,
    /// Page number.
    pub page_no: u32,
    /// The page's LSN.
    pub lsn: u64,
}

/// An index whose leaf pages were tried against the definition.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Candidate {
    /// Space id.
    pub space_id: u32,
    /// Index id.
    pub index_id: u64,
    /// Leaf pages.
    pub pages: u64,
    /// Records in them.
    pub records: u64,
    /// Records whose values were checked (the first 2000) to choose the index.
    pub sampled: u64,
    /// Of those, the records that passed the plausibility check.
    pub plausible: u64,
    /// Records rejected, by reason (a bad record header anywhere, bad values in the sample).
    pub rejected: BTreeMap<String, u64>,
}

/// What a run did (the summary on stderr and in JSON).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Summary {
    /// Where the definition came from.
    pub definition: String,
    /// The table.
    pub table: String,
    /// Space id of the index decoded.
    pub space_id: Option<u32>,
    /// Index id decoded.
    pub index_id: Option<u64>,
    /// Leaf pages decoded.
    pub pages_decoded: u64,
    /// Older copies of them decoded too (same space id and page number, a lower LSN): their
    /// records go through the newest-version choice, those it keeps are written as deleted.
    pub older_copies: u64,
    /// Records seen in them.
    pub records_seen: u64,
    /// Rows written.
    pub rows_written: u64,
    /// Of them, deleted rows.
    pub deleted_rows_written: u64,
    /// Records rejected by the plausibility check, by reason.
    pub rejected: BTreeMap<String, u64>,
    /// Older versions of a key dropped (the newest LSN wins).
    pub duplicates_dropped: u64,
    /// Plausible rows not written because of the deleted filter.
    pub filtered_out: u64,
    /// Every index tried.
    pub candidates: Vec<Candidate>,
    /// Problems noticed.
    pub warnings: Vec<String>,
    /// SIGINT/SIGTERM stopped the run: the rows written are those of the pages read before.
    pub interrupted: bool,
    /// Set when most records of the index decoded were rejected (purged records MariaDB
    /// zeroed, and records with a BLOB page missing, aside): the definition does not seem to be the one that wrote the pages. Says
    /// which change of a column makes the records fit, when one does, and what to do.
    pub misfit: Option<String>,
}

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum RowsError {
    /// Reading the sources failed.
    #[error(transparent)]
    Recover(#[from] RecoverError),
    /// No leaf page of any index fits the definition.
    #[error("no index in the sources holds records that fit the definition of {table} ({tried}); {advice}; or name the index with --index-id")]
    NoIndex {
        /// The table.
        table: String,
        /// What was tried.
        tried: String,
        /// What seems wrong with the definition, for the index with the most records, and
        /// what to do.
        advice: String,
    },
    /// Writing a row failed.
    #[error("writing rows: {0}")]
    Write(#[source] std::io::Error),
}

/// Where the kept copy of a page is: `size` bytes at `offset` of source `src`.
#[derive(Clone, Copy, Debug)]
struct PageRef {
    src: usize,
    offset: u64,
    size: u32,
    lsn: u64,
    /// An older copy of the page (same space id and page number, lower LSN than the kept one).
    older: bool,
    /// How the page is stored.
    stored: Stored,
}

/// A leaf page to decode: its number and which copy (0: the newest, kept for BLOB and
/// metadata reads too; 1, 2, ...: older copies with a lower LSN, newest first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct Leaf {
    page_no: u32,
    copy: u32,
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
}

/// The kept copy of every page, by (space id, page number): where it is, not its bytes.
/// Pages are read (and page_compressed ones inflated) when they are decoded or a BLOB chain
/// reaches them, so memory grows with the number of pages (this index), not their size.
pub struct PageStore<'a> {
    sources: &'a [Source],
    pages: HashMap<(u32, u32), PageRef>,
    /// MariaDB instant ALTER: n_core_fields of an index, from its root page (type INSTANT),
    /// and the core records' NULL bytes kept there after an instant DROP or reorder.
    instant_core: HashMap<(u32, u64), (usize, Option<usize>)>,
    /// Older copies of leaf pages (lower LSN than the kept copy), newest first.
    older: HashMap<(u32, u32), Vec<PageRef>>,
    leaf_groups: BTreeMap<(u32, u64), Vec<Leaf>>,
    warnings: Vec<String>,
    zip: ZipStats,
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
        let mut pages = HashMap::new();
        let mut leaf_groups: BTreeMap<(u32, u64), Vec<Leaf>> = BTreeMap::new();
        let leaf = |page_no| Leaf { page_no, copy: 0 };
        let mut warnings = scanned.warnings.clone();
        let mut zip = ZipStats::default();
        let mut not_inflated = 0u64;
        let mut instant_core = HashMap::new();
        let mut buf = Vec::new();
        let mut zip_leaves = Vec::new();
        for i in plan.kept.keys() {
            let (si, p) = &scanned.found[*i];
            if p.zip && p.page_type == page_type::INDEX && p.index.is_some_and(|ix| ix.level == 0) {
                // A compressed leaf page: decompressed once, below, on every CPU; BLOB and
                // other compressed pages are read as they are when needed.
                zip_leaves.push(*i);
                continue;
            }
            if p.compressed_bytes.is_some() {
                buf.resize(p.page_size as usize, 0);
                let page = read_full_at(&sources[*si].file, &mut buf, p.offset)
                    .ok()
                    .and_then(|n| super::inflate::page_compressed(&buf[..n], p.page_size as usize));
                let Some(page) = page else {
                    not_inflated += 1;
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
                        leaf_groups
                            .entry((space, h.index_id))
                            .or_default()
                            .push(leaf(page_no));
                    }
                }
                keep_newest(
                    &mut pages,
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
                if read_full_at(&sources[*si].file, &mut buf, p.offset).ok() == Some(buf.len())
                    && system_records(&buf).is_some()
                {
                    let h = IndexHeader::parse(&buf);
                    instant_core.insert(
                        (p.space_id, h.index_id),
                        (
                            (be16(&buf, 50) >> 3) as usize,
                            crate::page::instant_core_null_bytes(&buf),
                        ),
                    );
                }
            }
            keep_newest(
                &mut pages,
                (p.space_id, p.page_no),
                PageRef {
                    src: *si,
                    offset: p.offset,
                    size: p.page_size,
                    lsn: p.lsn,
                    older: false,
                    stored: Stored::Plain,
                },
            );
            if let Some(ix) = &p.index {
                if ix.level == 0 && ix.format != RowFormat::Compressed {
                    leaf_groups
                        .entry((p.space_id, ix.index_id))
                        .or_default()
                        .push(leaf(p.page_no));
                }
            }
        }
        // Older copies of leaf pages: their records are decoded too (rows purged since, or
        // older versions of a key the newest-LSN choice drops). A copy with the kept copy's
        // LSN holds the same records and is left out.
        let kept: std::collections::HashSet<usize> = plan.kept.keys().copied().collect();
        let mut copies: Vec<(u32, u32, std::cmp::Reverse<u64>, usize, u64)> = Vec::new();
        for (i, (_, p)) in scanned.found.iter().enumerate() {
            let Some(ix) = &p.index else { continue };
            if kept.contains(&i)
                || p.zip
                || p.compressed_bytes.is_some()
                || ix.level != 0
                || ix.format == RowFormat::Compressed
                || pages
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
            let (si, p) = &scanned.found[i];
            let list = older.entry((space, page_no)).or_default();
            list.push(PageRef {
                src: *si,
                offset: p.offset,
                size: p.page_size,
                lsn: p.lsn,
                older: true,
                stored: Stored::Plain,
            });
            // In the group of the index the copy belonged to (the page may hold another now).
            leaf_groups
                .entry((space, index_id))
                .or_default()
                .push(Leaf {
                    page_no,
                    copy: list.len() as u32,
                });
        }
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let per = zip_leaves.len().div_ceil(threads).max(1);
        let done: Vec<Vec<ZipPage>> = std::thread::scope(|sc| {
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
                                        .map(|(page, info)| {
                                            (IndexHeader::parse(&page).index_id, info)
                                        })
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
        });
        for (&i, page) in zip_leaves.iter().zip(done.into_iter().flatten()) {
            let p = &scanned.found[i].1;
            match page {
                Ok((index_id, info)) => {
                    zip.pages += 1;
                    zip.stream_records += info.stream_records as u64;
                    zip.log_records += info.log_records as u64;
                    leaf_groups
                        .entry((p.space_id, index_id))
                        .or_default()
                        .push(leaf(p.page_no));
                    // Not kept: decompressed again when its rows are decoded, so memory does
                    // not grow with the table (16 KiB per page would).
                    keep_newest(
                        &mut pages,
                        (p.space_id, p.page_no),
                        PageRef {
                            src: scanned.found[i].0,
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
        if not_inflated > 0 {
            warnings.push(format!(
                "{not_inflated} page_compressed page(s) skipped: damaged, or compressed with an algorithm MariaDB does not use (zlib, lz4, lzo, lzma, bzip2 and snappy are read)"
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
        for pages in leaf_groups.values_mut() {
            pages.sort_unstable();
            pages.dedup();
        }
        PageStore {
            sources,
            pages,
            instant_core,
            older,
            leaf_groups,
            warnings,
            zip,
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
    fn read_leaf(&self, space: u32, leaf: Leaf, buf: &mut Vec<u8>) -> Option<PageRef> {
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
        }
        (n == buf.len()).then_some(r)
    }
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
    /// ROW_FORMAT=COMPRESSED tables: a zlib stream across ZBLOB and ZBLOB2 pages.
    fn read(&self, space: u32, page_no: u32, offset: u32, len: u64, out: &mut Vec<u8>) -> bool {
        let mut buf = Vec::new();
        if self.read(space, page_no, &mut buf).is_some() && be16(&buf, 24) == page_type::ZBLOB {
            let page = |no: u32, b: &mut Vec<u8>| {
                self.read(space, no, b).is_some() && be32(b, 34) == space
            };
            return super::zip::read_zblob(page, page_no, offset, len, out);
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

/// A version of a key: its page LSN, and whether it is live (the greatest is the best).
type Version = (u64, bool);

/// The best version seen of each key.
type Best = HashMap<Box<[u8]>, Version, foldhash::fast::RandomState>;

/// Records of each index whose values are checked to choose the index.
const SAMPLE: u64 = 2000;

impl Candidate {
    /// Records that would pass, estimated from the sample: records x plausible / sampled.
    fn estimate(&self) -> u64 {
        if self.sampled == 0 {
            return 0;
        }
        (self.records as u128 * self.plausible as u128 / self.sampled as u128) as u64
    }
}

struct Tried {
    cand: Candidate,
    /// Per page with records: the smallest and largest key bytes, and whether it has purged
    /// records on its free list.
    ranges: Vec<PageRange>,
}

struct PageRange {
    page_no: Leaf,
    min: Vec<u8>,
    max: Vec<u8>,
    free_list: bool,
}

/// Pages that may hold a key another record also holds: pages whose key ranges (byte order
/// of the key fields, over every record) overlap another page's, and pages with purged
/// records. A key found only in the other pages is unique: no map is needed for it.
fn pages_to_compare(ranges: &mut [PageRange]) -> std::collections::HashSet<Leaf> {
    let mut out = std::collections::HashSet::new();
    ranges.sort_by(|a, b| a.min.cmp(&b.min));
    let mut i = 0;
    while i < ranges.len() {
        let mut j = i + 1;
        let mut hi = ranges[i].max.clone();
        while j < ranges.len() && ranges[j].min <= hi {
            if ranges[j].max > hi {
                hi = ranges[j].max.clone();
            }
            j += 1;
        }
        if j - i > 1 {
            out.extend(ranges[i..j].iter().map(|r| r.page_no));
        }
        i = j;
    }
    out.extend(ranges.iter().filter(|r| r.free_list).map(|r| r.page_no));
    out
}

/// Per-thread buffers of [`walk`].
#[derive(Default)]
struct Scratch {
    buf: Vec<u8>,
    fields: Vec<RawField>,
    seen: Vec<u64>,
    recs: Vec<Rec>,
    /// The fields of the page's records that split, one record after the other.
    flat: Vec<RawField>,
    /// Per record: its origin and extent, where its fields start in `flat` (or why it did not
    /// split), whether it does not fit among its neighbours; the order by origin.
    extents: Vec<(usize, Option<record::Extent>)>,
    splits: Vec<Result<usize, Reject>>,
    bad: Vec<bool>,
    order: Vec<u32>,
    /// For the callback: key bytes and a decoded row.
    key: Vec<u8>,
    row: RowBuf,
}

/// The leaf pages of one index being read: where, with which layout, until `stop`.
struct Group<'a> {
    store: &'a PageStore<'a>,
    def: &'a TableDef,
    layout: &'a Layout,
    /// (space id, index id).
    id: (u32, u64),
    stop: &'a AtomicBool,
}

/// Calls `each` on every user record (split into fields, or why not and whether it was split:
/// a record that does not fit among its neighbours was, and its values checked) of `pages` that are
/// leaf pages of `g`, in page and record order. The records of an older copy of a page are
/// handed on as deleted: the newer copy no longer holds them where they were.
#[allow(clippy::type_complexity)]
fn walk(
    g: &Group,
    pages: &[Leaf],
    sc: &mut Scratch,
    mut each: impl FnMut(
        &[u8],
        PageRef,
        Leaf,
        Result<&[RawField], (Reject, bool)>,
        &Rec,
        &mut Vec<u8>,
        &mut RowBuf,
    ) -> Result<(), RowsError>,
) -> Result<(), RowsError> {
    let Scratch {
        buf,
        fields,
        seen,
        recs,
        flat,
        extents,
        splits,
        bad,
        order,
        key,
        row,
    } = sc;
    let plan = record::SplitPlan::new(g.layout);
    for &page_no in pages {
        if g.stop.load(Ordering::Relaxed) {
            break;
        }
        let Some(r) = g.store.read_leaf(g.id.0, page_no, buf) else {
            continue;
        };
        let Some(format) = system_records(buf) else {
            continue;
        };
        let hdr = IndexHeader::parse(buf);
        if hdr.level != 0 || hdr.index_id != g.id.1 {
            continue;
        }
        record::list(buf, format, seen, recs);
        // Every record split first (the fields of those that split, one after the other in
        // `flat`), so that each is checked against its neighbours on the page.
        let all = g.layout.fields.len();
        flat.clear();
        extents.clear();
        splits.clear();
        for rec in recs.iter() {
            if rec.metadata {
                extents.push((rec.origin, None));
                splits.push(Err(Reject::Header));
                continue;
            }
            match record::split_planned(buf, rec.origin, format, g.layout, &plan, fields) {
                Ok(e) => {
                    extents.push((rec.origin, Some(e)));
                    splits.push(Ok(flat.len()));
                    flat.extend_from_slice(&fields[..all]);
                }
                Err(why) => {
                    extents.push((rec.origin, None));
                    splits.push(Err(why));
                }
            }
        }
        record::check_extents(buf, format, extents, order, bad);
        for (i, rec) in recs.iter().enumerate().filter(|(_, r)| !r.metadata) {
            let rec = &Rec {
                deleted: rec.deleted || r.older,
                ..*rec
            };
            let split = splits[i].map_err(|why| (why, false)).and_then(|at| {
                let fields = &flat[at..at + all];
                // A purged record whose data MariaDB zeroed: no row, however it would decode.
                if rec.purged && record::zeroed(buf, rec.origin, fields) {
                    return Err((Reject::Zeroed, false));
                }
                if bad[i] {
                    // A value that does not fit its column names the fault better.
                    let d = record::decode_into(buf, g.def, g.layout, fields, false, g.store, row);
                    return Err((d.err().unwrap_or(Reject::Overlap), true));
                }
                Ok(fields)
            });
            each(buf, r, page_no, split, rec, key, row)?;
        }
    }
    Ok(())
}

/// Pages handed to a thread at once.
const BATCH: usize = 16;

/// Runs `work` over `pages` in batches of [`BATCH`] on `threads` threads (each with its own
/// `init()` state) and hands the results to `consume` in page order. A batch result waits
/// only while the two before it on its thread are not consumed: memory stays bounded.
fn par_batches<S, T: Send>(
    pages: &[Leaf],
    threads: usize,
    init: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, &[Leaf]) -> Result<T, RowsError> + Sync,
    mut consume: impl FnMut(T) -> Result<(), RowsError>,
) -> Result<(), RowsError> {
    let batches: Vec<&[Leaf]> = pages.chunks(BATCH).collect();
    let threads = threads.clamp(1, batches.len().max(1));
    if threads == 1 {
        let mut s = init();
        for b in batches {
            consume(work(&mut s, b)?)?;
        }
        return Ok(());
    }
    std::thread::scope(|scope| {
        let mut rxs = Vec::with_capacity(threads);
        for t in 0..threads {
            let (tx, rx) = std::sync::mpsc::sync_channel::<Result<T, RowsError>>(2);
            rxs.push(rx);
            let (batches, init, work) = (&batches, &init, &work);
            scope.spawn(move || {
                let mut s = init();
                for b in batches.iter().skip(t).step_by(threads) {
                    let r = work(&mut s, b);
                    let failed = r.is_err();
                    if tx.send(r).is_err() || failed {
                        break;
                    }
                }
            });
        }
        // Batch i is made by thread i % threads; a thread that ended early (it panicked:
        // the scope re-raises that) ends the run.
        for i in 0..batches.len() {
            let Ok(r) = rxs[i % threads].recv() else {
                break;
            };
            consume(r?)?;
        }
        Ok(())
    })
}

/// `a.cmp(b)` (byte order, a prefix first), 8 bytes at a time: keys are short, and most
/// are compared with the page's last maximum.
#[inline]
fn key_cmp(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    let (mut x, mut y) = (a.chunks_exact(8), b.chunks_exact(8));
    for (p, q) in x.by_ref().zip(y.by_ref()) {
        let p = u64::from_be_bytes(p.try_into().unwrap_or_default());
        let q = u64::from_be_bytes(q.try_into().unwrap_or_default());
        if p != q {
            return p.cmp(&q);
        }
    }
    let n = a.len().min(b.len()) / 8 * 8;
    a[n..].cmp(&b[n..])
}

/// What pass 1 learned from some pages of a group.
#[derive(Default)]
struct Pass1 {
    records: u64,
    sampled: u64,
    plausible: u64,
    rej: BTreeMap<Reject, u64>,
    ranges: Vec<PageRange>,
}

/// Pass 1 over `pages`: records counted and split, key ranges per page; the values of the
/// first records are checked while `p.sampled` is below [`SAMPLE`].
fn pass1(
    g: &Group,
    def: &TableDef,
    pages: &[Leaf],
    sc: &mut Scratch,
    p: &mut Pass1,
) -> Result<(), RowsError> {
    let (store, layout) = (g.store, g.layout);
    walk(g, pages, sc, |pg, _, page_no, fields, rec, key, _| {
        p.records += 1;
        let fields = match fields {
            Ok(f) => f,
            Err((e, split)) => {
                // A record split and then found not to fit where it is was checked.
                if split && p.sampled < SAMPLE {
                    p.sampled += 1;
                }
                *p.rej.entry(e).or_default() += 1;
                return Ok(());
            }
        };
        // The values of the first SAMPLE records are checked here (to choose the
        // index); every record is checked when it is written.
        if p.sampled < SAMPLE {
            p.sampled += 1;
            match record::decode(pg, def, layout, fields, rec.deleted, store) {
                Ok(_) => p.plausible += 1,
                Err(e) => {
                    *p.rej.entry(e).or_default() += 1;
                    return Ok(());
                }
            }
        }
        record::key_bytes(pg, layout, fields, key);
        match p.ranges.last_mut() {
            Some(r) if r.page_no == page_no => {
                // Records come in key order: a new maximum (then not a new minimum: min <=
                // max) is the usual case.
                if key_cmp(key, &r.max).is_gt() {
                    r.max.clear();
                    r.max.extend_from_slice(key);
                } else if key_cmp(key, &r.min).is_lt() {
                    r.min.clear();
                    r.min.extend_from_slice(key);
                }
                r.free_list |= rec.purged;
            }
            _ => p.ranges.push(PageRange {
                page_no,
                min: key.clone(),
                max: key.clone(),
                free_list: rec.purged,
            }),
        }
        Ok(())
    })
}

/// Rows of a batch of pass 2, in page order: formatted lines (when the sink has an encoder)
/// or rows; and the rows of pages whose keys other records may hold, left for the thread
/// that writes to keep or drop, in order.
#[derive(Default)]
struct Pass2 {
    lines: Vec<u8>,
    /// End of each row's line in `lines`.
    ends: Vec<usize>,
    rows: Vec<(Row, RowMeta)>,
    keys: Vec<u8>,
    /// Rows that the newest-version choice may drop.
    checks: Vec<Check>,
    rejected: BTreeMap<Reject, u64>,
    written: u64,
    deleted_written: u64,
    filtered: u64,
}

struct Check {
    /// End of the key in `keys`.
    key_end: usize,
    version: Version,
    /// The row's index among the batch's rows when written, else it was filtered out.
    row: Option<usize>,
    deleted: bool,
}

/// The layout of `group`'s records: after a MariaDB instant ADD COLUMN (the root page gives
/// n_core_fields), older records have fewer fields and the metadata record holds the values
/// of the added columns for them; after an instant DROP or reorder, the metadata record's
/// BLOB gives the order of the fields ([`super::instant`]).
fn group_layout(
    store: &PageStore,
    base: &Layout,
    def: &TableDef,
    group: (u32, u64),
    warnings: &mut Vec<String>,
) -> Layout {
    let layout = instant_layout(store, base, def, group, warnings);
    if layout.n_core > layout.fields.len() {
        // The index's records have more fields than the definition gives it (a definition
        // of another table, or one without the columns an instant DROP only hid): no layout
        // fits, and the splitter must never read past the definition's fields.
        warnings.push(format!(
            "space {} index {}: its root page says its records have {} fields before any instant ADD, but the definition gives the index {}: is it this table's definition? Its records are checked against the definition as written",
            group.0,
            group.1,
            layout.n_core,
            layout.fields.len()
        ));
        return base.clone();
    }
    layout
}

/// [`group_layout`] before the check that the definition has room for the core fields.
fn instant_layout(
    store: &PageStore,
    base: &Layout,
    def: &TableDef,
    group: (u32, u64),
    warnings: &mut Vec<String>,
) -> Layout {
    let mut layout = base.clone();
    let Some(&(n_core, core_null_bytes)) = store.instant_core.get(&group) else {
        return layout;
    };
    let alter = core_null_bytes.is_some();
    if n_core == 0 || !alter && n_core >= layout.fields.len() {
        return layout;
    }
    layout.n_core = n_core;
    layout.core_null_bytes = core_null_bytes;
    let mut buf = Vec::new();
    let (mut seen, mut recs, mut fields) = (Vec::new(), Vec::new(), Vec::new());
    for &leaf in &store.leaf_groups[&group] {
        let Some(_) = store.read_leaf(group.0, leaf, &mut buf) else {
            continue;
        };
        let Some(format) = system_records(&buf) else {
            continue;
        };
        record::list(&buf, format, &mut seen, &mut recs);
        let Some(m) = recs.iter().find(|r| r.metadata) else {
            continue;
        };
        let mut meta = layout.clone();
        if m.deleted {
            let Some(map) = instant::read_map(&buf, m.origin, format, &layout, n_core, store)
            else {
                continue;
            };
            match instant::layout(def, &layout, &map) {
                Ok(l) if n_core <= l.fields.len() => layout = l,
                Ok(_) => {
                    warnings.push(format!(
                        "space {} index {}: the root page gives more core fields ({n_core}) than the instant DROP/reorder map has: rows may be rejected",
                        group.0, group.1
                    ));
                    return layout;
                }
                Err(why) => {
                    warnings.push(format!(
                        "space {} index {}: the columns after an instant DROP or reorder (MariaDB metadata record) do not fit the definition: {why}; rows may be rejected",
                        group.0, group.1
                    ));
                    return layout;
                }
            }
            meta = instant::metadata_layout(&layout);
        }
        if n_core >= layout.fields.len() {
            return layout; // a DROP or reorder without added columns: no defaults needed
        }
        if record::split(&buf, m.origin, format, &meta, &mut fields).is_ok() {
            if let Ok(row) = record::decode(&buf, def, &meta, &fields, false, store) {
                layout.defaults = row.values;
                return layout;
            }
        }
    }
    if alter {
        warnings.push(format!(
            "space {} index {}: the table had an instant DROP or reorder of columns but the metadata record or its BLOB page with the order of the fields was not found: rows may be rejected",
            group.0, group.1
        ));
        return layout;
    }
    warnings.push(format!(
        "space {} index {}: columns were added instantly but the metadata record with their default values was not found: NULL is written for them in rows older than the ADD COLUMN",
        group.0, group.1
    ));
    layout
}

/// Decodes the rows of `opts.def` from the pages in `store`, newest version of each key,
/// handing each row to `sink` in page order. Once `stop` is set, no further page is read.
/// Uses as many threads as the machine has CPUs ([`run_threads`]).
pub fn run(
    store: &PageStore,
    opts: &Options,
    stop: &AtomicBool,
    sink: &mut dyn RowSink,
) -> Result<Summary, RowsError> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    run_threads(store, opts, threads, stop, sink)
}

/// [`run`] with the pages decoded on `threads` threads; the rows, their order and the
/// summary do not depend on `threads`.
pub fn run_threads(
    store: &PageStore,
    opts: &Options,
    threads: usize,
    stop: &AtomicBool,
    sink: &mut dyn RowSink,
) -> Result<Summary, RowsError> {
    let def = &opts.def;
    let base = Layout::clustered(def);
    let mut summary = Summary {
        definition: def.source.clone(),
        table: def.name.clone(),
        warnings: store.warnings.clone(),
        ..Summary::default()
    };
    // Pass 1: every leaf group tried; the newest version of each key remembered.
    let mut tried: Vec<Tried> = Vec::new();
    // Layout problems met in pass 1: named in the error when no index fits.
    let mut layout_warnings = Vec::new();
    for (&group, pages) in &store.leaf_groups {
        if opts.space_id.is_some_and(|s| s != group.0)
            || opts.index_id.is_some_and(|i| i != group.1)
        {
            continue;
        }
        let layout = group_layout(store, &base, def, group, &mut layout_warnings);
        let g = Group {
            store,
            def,
            layout: &layout,
            id: group,
            stop,
        };
        // The first pages, one by one until SAMPLE records are checked; then the others
        // on every thread (no value is checked there).
        let mut p = Pass1::default();
        let mut sc = Scratch::default();
        let mut n = 0;
        while n < pages.len() && p.sampled < SAMPLE {
            pass1(&g, def, &pages[n..n + 1], &mut sc, &mut p)?;
            n += 1;
        }
        drop(sc);
        par_batches(
            &pages[n..],
            threads,
            Scratch::default,
            |sc, batch| {
                let mut q = Pass1 {
                    sampled: SAMPLE,
                    ..Pass1::default()
                };
                pass1(&g, def, batch, sc, &mut q)?;
                Ok(q)
            },
            |q| {
                p.records += q.records;
                for (k, v) in q.rej {
                    *p.rej.entry(k).or_default() += v;
                }
                p.ranges.extend(q.ranges);
                Ok(())
            },
        )?;
        let cand = Candidate {
            space_id: group.0,
            index_id: group.1,
            pages: pages.iter().filter(|l| l.copy == 0).count() as u64,
            records: p.records,
            sampled: p.sampled,
            plausible: p.plausible,
            rejected: p
                .rej
                .iter()
                .map(|(k, v)| (k.name().to_string(), *v))
                .collect(),
        };
        tried.push(Tried {
            cand,
            ranges: p.ranges,
        });
    }
    summary.candidates = tried.iter().map(|t| t.cand.clone()).collect();
    let pick = tried
        .iter()
        .enumerate()
        .filter(|(_, t)| {
            opts.index_id.is_some()
                || (t.cand.plausible > 0 && t.cand.plausible * 2 >= t.cand.sampled)
        })
        .max_by_key(|(_, t)| {
            (
                t.cand.estimate(),
                std::cmp::Reverse((t.cand.space_id, t.cand.index_id)),
            )
        })
        .map(|(i, _)| i);
    let Some(pick) = pick else {
        let tried_s = if summary.candidates.is_empty() {
            "no leaf INDEX pages found".to_string()
        } else {
            summary
                .candidates
                .iter()
                .map(|c| {
                    let why: Vec<String> =
                        c.rejected.iter().map(|(k, v)| format!("{k} {v}")).collect();
                    format!(
                        "space {} index {}: {} of {} records checked fit{}",
                        c.space_id,
                        c.index_id,
                        c.plausible,
                        c.sampled,
                        if why.is_empty() {
                            String::new()
                        } else {
                            format!(", rejected: {}", why.join(", "))
                        }
                    )
                })
                .collect::<Vec<_>>()
                .join("; ")
        };
        let tried_s = std::iter::once(tried_s)
            .chain(layout_warnings)
            .collect::<Vec<_>>()
            .join("; ");
        let advice = tried
            .iter()
            .max_by_key(|t| {
                (
                    t.cand.records,
                    std::cmp::Reverse((t.cand.space_id, t.cand.index_id)),
                )
            })
            .map_or_else(
                || "check the definition".to_string(),
                |t| diagnose(store, def, (t.cand.space_id, t.cand.index_id)),
            );
        return Err(RowsError::NoIndex {
            table: def.name.clone(),
            tried: tried_s,
            advice,
        });
    };
    let Tried { cand, mut ranges } = tried.swap_remove(pick);
    let others: Vec<String> = summary
        .candidates
        .iter()
        .filter(|c| {
            c.plausible > 0
                && c.plausible * 2 >= c.sampled
                && (c.space_id, c.index_id) != (cand.space_id, cand.index_id)
        })
        .map(|c| {
            format!(
                "space {} index {} ({} of {} records checked fit)",
                c.space_id, c.index_id, c.plausible, c.sampled
            )
        })
        .collect();
    if !others.is_empty() {
        summary.warnings.push(format!(
            "decoded space {} index {}; other indexes also hold records that fit the definition: {} (choose one with --space-id/--index-id)",
            cand.space_id,
            cand.index_id,
            others.join(", ")
        ));
    }
    summary.space_id = Some(cand.space_id);
    summary.index_id = Some(cand.index_id);
    summary.pages_decoded = cand.pages;
    summary.older_copies = store.leaf_groups[&(cand.space_id, cand.index_id)]
        .iter()
        .filter(|l| l.copy > 0)
        .count() as u64;
    summary.records_seen = cand.records;
    sink.begin(&summary).map_err(RowsError::Write)?;
    // The newest version of each key that more than one record may hold.
    let group = (cand.space_id, cand.index_id);
    let pages = &store.leaf_groups[&group];
    let layout = group_layout(store, &base, def, group, &mut summary.warnings);
    let compare = pages_to_compare(&mut ranges);
    drop(ranges);
    let g = Group {
        store,
        def,
        layout: &layout,
        id: group,
        stop,
    };
    let mut best: Best = Best::default();
    if !compare.is_empty() {
        let cmp_pages: Vec<Leaf> = pages
            .iter()
            .copied()
            .filter(|p| compare.contains(p))
            .collect();
        par_batches(
            &cmp_pages,
            threads,
            Scratch::default,
            |sc, batch| {
                let mut keys: Vec<(Box<[u8]>, Version)> = Vec::new();
                walk(&g, batch, sc, |p, r, _, fields, rec, key, row| {
                    // Only records that decode: a damaged record must not hide an older
                    // version of its key that decodes.
                    if let Ok(fields) = fields.map_err(|e| e.0).and_then(|f| {
                        record::decode_into(p, def, &layout, f, rec.deleted, store, row)?;
                        Ok(f)
                    }) {
                        record::key_bytes(p, &layout, fields, key);
                        keys.push((key.as_slice().into(), (r.lsn, !rec.deleted)));
                    }
                    Ok(())
                })?;
                Ok(keys)
            },
            |keys| {
                for (key, v) in keys {
                    let e = best.entry(key).or_insert(v);
                    if v > *e {
                        *e = v;
                    }
                }
                Ok(())
            },
        )?;
    }
    // Pass 2: decode again and write the newest version of each key, once.
    let encoder = sink.encoder();
    let mut rejected: BTreeMap<Reject, u64> = BTreeMap::new();
    let (mut written, mut deleted_written, mut dups, mut filtered) = (0u64, 0u64, 0u64, 0u64);
    let mut skip: Vec<usize> = Vec::new();
    par_batches(
        pages,
        threads,
        Scratch::default,
        |sc, batch| {
            let mut o = Pass2::default();
            if encoder.is_some() {
                // About a page of lines per page (TSV); more grows the buffer.
                o.lines.reserve(batch.len() * 16384);
            }
            let (mut last_page, mut on_compared) = (None, false);
            walk(&g, batch, sc, |p, r, page_no, fields, rec, key, row| {
                let fields = match fields {
                    Ok(f) => f,
                    Err((e, _)) => {
                        *o.rejected.entry(e).or_default() += 1;
                        return Ok(());
                    }
                };
                if let Err(e) =
                    record::decode_into(p, def, &layout, fields, rec.deleted, store, row)
                {
                    *o.rejected.entry(e).or_default() += 1;
                    return Ok(());
                }
                let keep = match opts.deleted {
                    Deleted::Exclude => !row.deleted,
                    Deleted::Include => true,
                    Deleted::Only => row.deleted,
                };
                let index = o.ends.len() + o.rows.len();
                if last_page != Some(page_no) {
                    last_page = Some(page_no);
                    on_compared = compare.contains(&page_no);
                }
                if on_compared {
                    record::key_bytes(p, &layout, fields, key);
                    o.keys.extend_from_slice(key);
                    o.checks.push(Check {
                        key_end: o.keys.len(),
                        version: (r.lsn, !rec.deleted),
                        row: keep.then_some(index),
                        deleted: row.deleted,
                    });
                }
                if !keep {
                    o.filtered += 1;
                    return Ok(());
                }
                let meta = RowMeta {
                    space_id: group.0,
                    page_no: page_no.page_no,
                    lsn: r.lsn,
                };
                match &encoder {
                    Some(enc) => {
                        enc.encode(
                            |i| row.cell_padded(i),
                            row.deleted,
                            row.trx_id,
                            &meta,
                            &mut o.lines,
                        );
                        o.ends.push(o.lines.len());
                    }
                    None => o.rows.push((row.to_row(), meta)),
                }
                o.written += 1;
                o.deleted_written += row.deleted as u64;
                Ok(())
            })?;
            Ok(o)
        },
        |o| {
            for (k, v) in o.rejected {
                *rejected.entry(k).or_default() += v;
            }
            written += o.written;
            deleted_written += o.deleted_written;
            filtered += o.filtered;
            // The first record (in page order) of the newest version of a key is kept; the
            // others are dropped, written or filtered out as they were.
            skip.clear();
            let mut key_start = 0;
            for c in &o.checks {
                let key = &o.keys[key_start..c.key_end];
                key_start = c.key_end;
                if best.get(key) == Some(&c.version) {
                    best.remove(key);
                    continue;
                }
                dups += 1;
                match c.row {
                    Some(i) => {
                        skip.push(i);
                        written -= 1;
                        deleted_written -= c.deleted as u64;
                    }
                    None => filtered -= 1,
                }
            }
            let mut skipped = skip.iter().copied().peekable();
            if encoder.is_some() {
                let mut start = 0;
                let mut from = 0;
                for (i, &end) in o.ends.iter().enumerate() {
                    if skipped.next_if_eq(&i).is_some() {
                        if from > start {
                            sink.lines(&o.lines[start..from])
                                .map_err(RowsError::Write)?;
                        }
                        start = end;
                    }
                    from = end;
                }
                if from > start {
                    sink.lines(&o.lines[start..from])
                        .map_err(RowsError::Write)?;
                }
            } else {
                for (i, (row, meta)) in o.rows.iter().enumerate() {
                    if skipped.next_if_eq(&i).is_none() {
                        sink.row(row, meta).map_err(RowsError::Write)?;
                    }
                }
            }
            Ok(())
        },
    )?;
    summary.rows_written = written;
    summary.deleted_rows_written = deleted_written;
    summary.duplicates_dropped = dups;
    summary.filtered_out = filtered;
    summary.rejected = rejected
        .into_iter()
        .map(|(k, v)| (k.name().to_string(), v))
        .collect();
    summary.interrupted = stop.load(Ordering::Relaxed);
    let misfits: u64 = summary
        .rejected
        .iter()
        .filter(|(k, _)| ![Reject::Zeroed.name(), Reject::BlobMissing.name()].contains(&k.as_str()))
        .map(|(_, v)| v)
        .sum();
    if !summary.interrupted && misfits * 2 > summary.records_seen {
        let why: Vec<String> = summary
            .rejected
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        summary.misfit = Some(format!(
            "{misfits} of the {} records of space {} index {} do not fit the definition of {} (rejected: {}); {}",
            summary.records_seen,
            group.0,
            group.1,
            def.name,
            why.join(", "),
            diagnose(store, def, group)
        ));
    }
    sink.end(&summary).map_err(RowsError::Write)?;
    Ok(summary)
}

/// Records read by [`diagnose`] for each definition tried.
const DIAGNOSE_RECORDS: u64 = 200;
/// Changed definitions [`diagnose`] tries at most.
const DIAGNOSE_TRIES: usize = 400;

/// Records of the first leaf pages of `group` (up to [`DIAGNOSE_RECORDS`]), those that fit
/// `def` (split, where they are on the page, and every value) and, of those, the ones that end
/// exactly where the next record on the page begins (as records written one after the other
/// do: a definition that makes records shorter than they are fits too, but not tightly).
fn fitting(store: &PageStore, def: &TableDef, group: (u32, u64)) -> (u64, u64, u64) {
    let base = Layout::clustered(def);
    let layout = group_layout(store, &base, def, group, &mut Vec::new());
    let stop = AtomicBool::new(false);
    let g = Group {
        store,
        def,
        layout: &layout,
        id: group,
        stop: &stop,
    };
    let (mut seen, mut fit, mut tight) = (0u64, 0u64, 0u64);
    let mut sc = Scratch::default();
    let mut ok = Vec::new();
    for leaf in &store.leaf_groups[&group] {
        if seen >= DIAGNOSE_RECORDS {
            break;
        }
        ok.clear();
        let _ = walk(
            &g,
            std::slice::from_ref(leaf),
            &mut sc,
            |p, _, _, f, rec, _, row| {
                seen += 1;
                let fits = f.is_ok_and(|f| {
                    record::decode_into(p, def, &layout, f, rec.deleted, store, row).is_ok()
                });
                fit += fits as u64;
                ok.push((rec.origin, fits));
                Ok(())
            },
        );
        // The extents of the page's records, by origin (left in the scratch by `walk`).
        for w in sc.order.windows(2) {
            let (a, b) = (sc.extents[w[0] as usize], sc.extents[w[1] as usize]);
            if let ((origin, Some(x)), (_, Some(y))) = (a, b) {
                if x.end == y.start && ok.contains(&(origin, true)) {
                    tight += 1;
                }
            }
        }
    }
    (fit, tight, seen)
}

/// What seems wrong with `def` for the records of `group`, and what to do: the definition is
/// changed one column at a time (an integer column given each other integer width, a column
/// that is not in the key left out) and a change after which nine records in ten fit is
/// named (`` `qty` SMALLINT instead of INT``).
fn diagnose(store: &PageStore, def: &TableDef, group: (u32, u64)) -> String {
    use super::def::ColType;
    use crate::encode::IntType;
    const ADVICE: &str = "give the CREATE TABLE of the table that wrote these pages (SHOW CREATE TABLE on its server, or --dictionary with its ibdata1): the column types, their order, NULL/NOT NULL, the character sets and the primary key must all be as they were";
    let (base_fit, base_tight, n) = fitting(store, def, group);
    if n == 0 {
        return ADVICE.to_string();
    }
    // The changes after which nine records in ten fit, the tightest kept.
    let mut found: Vec<(u64, String)> = Vec::new();
    let mut tries = 0;
    let mut try_def = |d: &TableDef, what: String| {
        let (fit, tight, n) = fitting(store, d, group);
        if fit > base_fit && fit * 10 >= n * 9 && tight > base_tight {
            found.push((tight, what));
        }
    };
    'cols: for (i, c) in def.columns.iter().enumerate() {
        if let ColType::Int { ty, unsigned } = c.ty {
            for other in [
                IntType::Tiny,
                IntType::Small,
                IntType::Medium,
                IntType::Int,
                IntType::Big,
            ] {
                if other == ty {
                    continue;
                }
                tries += 1;
                if tries > DIAGNOSE_TRIES {
                    break 'cols;
                }
                let mut d = def.clone();
                d.columns[i].ty = ColType::Int {
                    ty: other,
                    unsigned,
                };
                try_def(
                    &d,
                    format!("`{}` {} instead of {}", c.name, other.name(), ty.name()),
                );
            }
        }
        if !def.primary_key.contains(&i) && def.columns.len() > 1 {
            tries += 1;
            if tries > DIAGNOSE_TRIES {
                break;
            }
            let mut d = def.clone();
            d.columns.remove(i);
            for k in &mut d.primary_key {
                if *k > i {
                    *k -= 1;
                }
            }
            try_def(&d, format!("the column `{}` left out", c.name));
        }
    }
    let best = found.iter().map(|f| f.0).max().unwrap_or(0);
    let best: Vec<&str> = found
        .iter()
        .filter(|f| f.0 == best)
        .map(|f| f.1.as_str())
        .collect();
    match best.len() {
        0 => ADVICE.to_string(),
        _ => format!(
            "the records fit the definition with {} (one change of a column tried at a time): {ADVICE}",
            best.join(", or with ")
        ),
    }
}

/// The files to read: a directory (a PAGES_DIR written by `innodb pages`) stands for the
/// `.pages` and `.page` files under it, in name order; other paths are kept as given.
pub fn expand_inputs(paths: &[std::path::PathBuf]) -> std::io::Result<Vec<std::path::PathBuf>> {
    fn walk_dir(d: &std::path::Path, out: &mut Vec<std::path::PathBuf>) -> std::io::Result<()> {
        let mut entries: Vec<_> = std::fs::read_dir(d)?.collect::<Result<_, _>>()?;
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let ft = e.file_type()?;
            let p = e.path();
            if ft.is_dir() {
                walk_dir(&p, out)?;
            } else if ft.is_file() && p.extension().is_some_and(|x| x == "pages" || x == "page") {
                out.push(p);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            walk_dir(p, &mut out)?;
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

/// The summary for people (stderr): what was read, written, rejected and dropped.
pub fn summary_text(s: &Summary) -> String {
    let mut out = format!(
        "innodb rows: table `{}` (definition: {}), space {} index {}: {} leaf page(s){}, {} record(s); {} row(s) written ({} deleted), {} filtered out by the deleted filter, {} older version(s) dropped, {} rejected",
        s.table,
        s.definition,
        s.space_id.map_or("-".into(), |v| v.to_string()),
        s.index_id.map_or("-".into(), |v| v.to_string()),
        s.pages_decoded,
        if s.older_copies > 0 {
            format!(" and {} older copy(ies) of them", s.older_copies)
        } else {
            String::new()
        },
        s.records_seen,
        s.rows_written,
        s.deleted_rows_written,
        s.filtered_out,
        s.duplicates_dropped,
        s.rejected.values().sum::<u64>(),
    );
    if !s.rejected.is_empty() {
        let why: Vec<String> = s.rejected.iter().map(|(k, v)| format!("{k} {v}")).collect();
        out.push_str(&format!(" ({})", why.join(", ")));
    }
    if s.interrupted {
        out.push_str("; interrupted: the pages after the signal were not read");
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(page_no: u32, min: u8, max: u8, free_list: bool) -> PageRange {
        PageRange {
            page_no: Leaf { page_no, copy: 0 },
            min: vec![min],
            max: vec![max],
            free_list,
        }
    }

    #[test]
    fn key_order_is_byte_order() {
        let keys: Vec<Vec<u8>> = (0..40u8)
            .flat_map(|n| {
                [
                    vec![n % 3; n as usize],
                    (0..n).map(|i| i.wrapping_mul(37)).collect(),
                    (0..n).map(|i| if i == n / 2 { 9 } else { 1 }).collect(),
                ]
            })
            .collect();
        for a in &keys {
            for b in &keys {
                assert_eq!(key_cmp(a, b), a.cmp(b), "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn only_overlapping_pages_and_free_lists_are_compared() {
        let mut v = vec![
            r(4, 10, 19, false),
            r(5, 20, 29, false),
            r(6, 25, 26, false), // inside page 5's range
            r(7, 40, 49, true),  // purged records: compared
            r(8, 30, 39, false),
            r(9, 0, 1, false),
        ];
        let mut got: Vec<u32> = pages_to_compare(&mut v)
            .into_iter()
            .map(|l| l.page_no)
            .collect();
        got.sort();
        assert_eq!(got, [5, 6, 7]);
    }
}
