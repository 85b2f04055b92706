//! The `innodb rows` driver: pages found in the sources (a PAGES_DIR written by `innodb
//! pages`, .ibd files, images, devices), the newest copy of each page kept, the table's
//! clustered index chosen by what the pages say of it (never a secondary index because its
//! records happen to fit), every record decoded and checked, the newest LSN of each key kept,
//! rows handed to a sink.
//!
//! The clustered index ([`pick`]): the index named (`Options::index_id`, from the user or a
//! definition that names it); else of the indexes whose records fit the definition, the one
//! whose root is its single-table tablespace's first index page (page 3, or 4 when page 3 is
//! MySQL 8's SDI root: the clustered index is the first index created); an index whose
//! tablespace's root page names another index is a secondary index. Where no root page was
//! found, an index is taken as clustered when its leaf pages have PAGE_MAX_TRX_ID 0 (InnoDB
//! keeps it on secondary index leaf pages only) and its records a plausible DB_ROLL_PTR where
//! the definition puts it (a secondary index record is its key and the primary key, with no
//! DB_TRX_ID/DB_ROLL_PTR). When that leaves none or several, the run stops with the candidates
//! ([`RowsError::Ambiguous`]) rather than guess.

use super::def::TableDef;
use super::diagnose::diagnose;
pub use super::error::RowsError;
use super::layout::group_layout;
use super::line::{DirectPlan, DirectScratch, LineEncoder};
use super::record::{self, Layout, Reject, Row, Sys};
use super::sink::{RowMeta, RowSink};
use super::store::Leaf;
pub use super::store::{PageStore, ZipStats};
use super::walk::{key_cmp, par_batches, walk, Group, Scratch};
use crate::page::{be16, be32, be64, page_type, system_records, IndexHeader};
use dbio_schema::rows::{Candidate, Clustered, RowsSummary};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};
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
    /// Decode only this index id (default: the clustered index, by what the pages say).
    pub index_id: Option<u64>,
    /// Decode only pages of this space id.
    pub space_id: Option<u32>,
}

/// A version of a key: its DB_TRX_ID, whether it is live, its page LSN (the greatest is the
/// best). The transaction id comes first: a page split leaves the records it moved on the
/// old page's free list with the same transaction id as their live copies, and the old page
/// may have the higher LSN (changed later); the live copy must win. A newer version of a row
/// (updated, delete-marked, purged) always carries a higher transaction id.
type Version = (u64, bool, u64);

/// The best version seen of each key.
type Best = HashMap<Box<[u8]>, Version, foldhash::fast::RandomState>;

/// Records of each index whose values are checked to choose the index.
const SAMPLE: u64 = 2000;

struct Tried {
    cand: Candidate,
    /// Leaf pages with a PAGE_MAX_TRX_ID (kept on secondary index pages only).
    max_trx_pages: u64,
    /// Sampled records that fit, with a plausible DB_ROLL_PTR.
    roll_ok: u64,
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
fn pages_to_compare(ranges: &mut [PageRange]) -> HashSet<Leaf> {
    let mut out = HashSet::new();
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

/// What pass 1 learned from some pages of a group.
#[derive(Default)]
struct Pass1 {
    records: u64,
    sampled: u64,
    plausible: u64,
    rej: BTreeMap<Reject, u64>,
    ranges: Vec<PageRange>,
    /// The last page seen, and the pages with a PAGE_MAX_TRX_ID.
    last: Option<Leaf>,
    max_trx_pages: u64,
    /// Sampled records that fit, with a plausible DB_ROLL_PTR.
    roll_ok: u64,
}

/// Whether 7 bytes are a plausible DB_ROLL_PTR: the insert flag and rollback segment id (1
/// byte), an undo page number (4, neither 0 nor FIL_NULL) and an offset in that page (2,
/// past the FIL header); or MariaDB's value once purge reset DB_TRX_ID (the insert flag only).
fn roll_ptr_plausible(b: &[u8], page_size: usize) -> bool {
    if b == [0x80, 0, 0, 0, 0, 0, 0] {
        return true;
    }
    let (page, off) = (be32(b, 1), be16(b, 5) as usize);
    page != 0 && page != u32::MAX && off >= 38 && off < page_size.max(4096) - 8
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
    let roll = layout
        .fields
        .iter()
        .position(|f| f.sys == Some(Sys::RollPtr));
    walk(g, pages, sc, |pg, _, page_no, fields, rec, key, _| {
        p.records += 1;
        if p.last != Some(page_no) {
            p.last = Some(page_no);
            p.max_trx_pages += (be64(pg, 56) != 0) as u64;
        }
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
                Ok(_) => {
                    p.plausible += 1;
                    if let Some(f) = roll.map(|i| fields[i]) {
                        let b = &pg[f.start..f.start + f.len];
                        p.roll_ok += (f.len == 7 && roll_ptr_plausible(b, pg.len())) as u64;
                    }
                }
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

/// Decodes the rows of `opts.def` from the pages in `store`, newest version of each key,
/// handing each row to `sink` in page order. Once `stop` is set, no further page is read.
/// Uses as many threads as the machine has CPUs ([`run_threads`]).
pub fn run(
    store: &PageStore,
    opts: &Options,
    stop: &AtomicBool,
    sink: &mut dyn RowSink,
) -> Result<RowsSummary, RowsError> {
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
) -> Result<RowsSummary, RowsError> {
    let def = &opts.def;
    let base = Layout::clustered(def);
    let mut summary = RowsSummary {
        definition: def.source.clone(),
        table: def.name.clone(),
        warnings: store.warnings.clone(),
        ..RowsSummary::default()
    };
    // Pass 1: every leaf group tried; the newest version of each key remembered.
    let (mut tried, layout_warnings) = try_groups(store, opts, &base, threads, stop)?;
    summary.candidates = tried.iter().map(|t| t.cand.clone()).collect();
    let pick = match pick(&tried, opts) {
        Ok(i) => i,
        Err(None) => {
            return Err(no_index(
                store,
                def,
                &tried,
                &summary.candidates,
                layout_warnings,
            ))
        }
        Err(Some(why)) => {
            return Err(RowsError::Ambiguous {
                table: def.name.clone(),
                why,
            })
        }
    };
    let Tried {
        cand, mut ranges, ..
    } = tried.swap_remove(pick);
    chosen(&mut summary, &cand, store);
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
    let best = newest_versions(&g, pages, &compare, threads)?;
    // Pass 2: decode again and write the newest version of each key, once.
    pass2(
        &g,
        pages,
        &compare,
        best,
        opts.deleted,
        threads,
        sink,
        &mut summary,
    )?;
    summary.interrupted = stop.load(Ordering::Relaxed);
    summary.misfit = misfit(&summary, store, def, group);
    sink.end(&summary).map_err(RowsError::Write)?;
    Ok(summary)
}

/// Pass 1 over every leaf group `opts` allows: the candidates, with their pages' key ranges,
/// and the layout problems met (named in the error when no index fits).
fn try_groups(
    store: &PageStore,
    opts: &Options,
    base: &Layout,
    threads: usize,
    stop: &AtomicBool,
) -> Result<(Vec<Tried>, Vec<String>), RowsError> {
    let def = &opts.def;
    let mut tried: Vec<Tried> = Vec::new();
    let mut layout_warnings = Vec::new();
    let roots = first_roots(store);
    for (&group, pages) in &store.leaf_groups {
        if opts.space_id.is_some_and(|s| s != group.0)
            || opts.index_id.is_some_and(|i| i != group.1)
            || opts.index_id.is_none() && is_sdi(store, group, pages)
        {
            continue;
        }
        let layout = group_layout(store, base, def, group, &mut layout_warnings);
        let g = Group {
            store,
            def,
            layout: &layout,
            id: group,
            stop,
        };
        let p = try_group(&g, pages, threads)?;
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
            clustered: Clustered::default(),
        };
        let mut t = Tried {
            cand,
            max_trx_pages: p.max_trx_pages,
            roll_ok: p.roll_ok,
            ranges: p.ranges,
        };
        t.cand.clustered = match (opts.index_id, roots.get(&group.0)) {
            (Some(_), _) => Clustered::Named,
            (None, Some(&root)) if root == group.1 => Clustered::RootPage,
            (None, Some(_)) => Clustered::NotRootPage,
            (None, None) if t.max_trx_pages == 0 && t.roll_ok * 10 >= t.cand.plausible * 9 => {
                Clustered::LooksClustered
            }
            (None, None) => Clustered::LooksSecondary,
        };
        tried.push(t);
    }
    Ok((tried, layout_warnings))
}

/// Pass 1 over the leaf pages of one group: the first pages one by one until [`SAMPLE`]
/// records are checked; then the others on every thread (no value is checked there).
fn try_group(g: &Group, pages: &[Leaf], threads: usize) -> Result<Pass1, RowsError> {
    let mut p = Pass1::default();
    let mut sc = Scratch::default();
    let mut n = 0;
    while n < pages.len() && p.sampled < SAMPLE {
        pass1(g, g.def, &pages[n..n + 1], &mut sc, &mut p)?;
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
            pass1(g, g.def, batch, sc, &mut q)?;
            Ok(q)
        },
        |q| {
            p.records += q.records;
            p.max_trx_pages += q.max_trx_pages;
            for (k, v) in q.rej {
                *p.rej.entry(k).or_default() += v;
            }
            p.ranges.extend(q.ranges);
            Ok(())
        },
    )?;
    Ok(p)
}

/// Whether most sampled records of a candidate fit the definition.
fn fits(c: &Candidate) -> bool {
    c.plausible > 0 && c.plausible * 2 >= c.sampled
}

/// The index to decode: the one named (the one with the most records estimated to fit when it
/// is in several tablespaces); else the one index whose records fit the definition that is
/// the clustered index by its tablespace's root page or, where no root page was found, by its
/// pages and records ([`Clustered`]). `Err(None)`: no index fits; `Err(Some(why))`: none or
/// several of those that fit are the clustered index, `why` lists them.
fn pick(tried: &[Tried], opts: &Options) -> Result<usize, Option<String>> {
    if opts.index_id.is_some() {
        return tried
            .iter()
            .enumerate()
            .max_by_key(|(_, t)| {
                (
                    t.cand.estimate(),
                    std::cmp::Reverse((t.cand.space_id, t.cand.index_id)),
                )
            })
            .map(|(i, _)| i)
            .ok_or(None);
    }
    let fit: Vec<usize> = (0..tried.len()).filter(|&i| fits(&tried[i].cand)).collect();
    if fit.is_empty() {
        return Err(None);
    }
    let clustered: Vec<usize> = fit
        .iter()
        .copied()
        .filter(|&i| {
            matches!(
                tried[i].cand.clustered,
                Clustered::RootPage | Clustered::LooksClustered
            )
        })
        .collect();
    if let [one] = clustered[..] {
        return Ok(one);
    }
    let list: Vec<String> = fit.iter().map(|&i| describe(&tried[i])).collect();
    Err(Some(if clustered.is_empty() {
        format!(
            "the indexes whose records fit it all look like secondary indexes: {}",
            list.join("; ")
        )
    } else {
        format!(
            "{} indexes whose records fit it look like a clustered index: {}",
            clustered.len(),
            list.join("; ")
        )
    }))
}

/// A candidate for the error that lists them: where, how many records, and what the pages say
/// of it.
fn describe(t: &Tried) -> String {
    let c = &t.cand;
    let why = match c.clustered {
        Clustered::Named => "named".to_string(),
        Clustered::RootPage => "clustered: its root is the tablespace's first index page".into(),
        Clustered::NotRootPage => {
            "secondary: the tablespace's first index page is another index's root".into()
        }
        Clustered::LooksClustered => {
            "looks clustered: PAGE_MAX_TRX_ID 0, DB_ROLL_PTR plausible (no root page found)".into()
        }
        Clustered::LooksSecondary => format!(
            "looks secondary: {} leaf page(s) with a PAGE_MAX_TRX_ID, {} of {} records with a plausible DB_ROLL_PTR (no root page found)",
            t.max_trx_pages, t.roll_ok, c.plausible
        ),
    };
    format!(
        "space {} index {}: {} records, {} of {} checked fit, {why}",
        c.space_id, c.index_id, c.records, c.plausible, c.sampled
    )
}

/// The clustered index of each single-table tablespace whose first index page was found: the
/// index id on page 3, or on page 4 when page 3 is MySQL 8's SDI root. Not for the system
/// tablespace (space 0) nor MySQL's general tablespaces (FSP flag SHARED, bit 11 of the flags
/// of page 0 outside MariaDB's full_crc32 format): they hold several tables.
fn first_roots(store: &PageStore) -> HashMap<u32, u64> {
    let mut out = HashMap::new();
    let mut buf = Vec::new();
    let mut spaces: Vec<u32> = store.leaf_groups.keys().map(|g| g.0).collect();
    spaces.dedup();
    for space in spaces {
        if space == 0 {
            continue;
        }
        let leaf = |page_no| Leaf { page_no, copy: 0 };
        if store.read_leaf(space, leaf(0), &mut buf).is_some()
            && be16(&buf, 24) == page_type::FSP_HDR
        {
            let flags = be32(&buf, 54);
            if flags & 0x10 == 0 && flags & (1 << 11) != 0 {
                continue;
            }
        }
        for page_no in [3, 4] {
            if store.read_leaf(space, leaf(page_no), &mut buf).is_none() || be32(&buf, 34) != space
            {
                break;
            }
            let ty = be16(&buf, 24);
            if ty == page_type::SDI && page_no == 3 {
                continue;
            }
            if (ty == page_type::INDEX || ty == page_type::INSTANT)
                && system_records(&buf).is_some()
            {
                out.insert(space, IndexHeader::parse(&buf).index_id);
            }
            break;
        }
    }
    out
}

/// Whether `group` is MySQL 8's SDI index (its pages are of type SDI): the table's
/// definition, never its rows.
fn is_sdi(store: &PageStore, group: (u32, u64), pages: &[Leaf]) -> bool {
    let mut buf = Vec::new();
    pages.first().is_some_and(|&l| {
        store.read_leaf(group.0, l, &mut buf).is_some() && be16(&buf, 24) == page_type::SDI
    })
}

/// The error when no index fits: what was tried, and what seems wrong with the definition.
fn no_index(
    store: &PageStore,
    def: &TableDef,
    tried: &[Tried],
    candidates: &[Candidate],
    layout_warnings: Vec<String>,
) -> RowsError {
    let tried_s = if candidates.is_empty() {
        "no leaf INDEX pages found".to_string()
    } else {
        candidates
            .iter()
            .map(|c| {
                let why: Vec<String> = c.rejected.iter().map(|(k, v)| format!("{k} {v}")).collect();
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
    RowsError::NoIndex {
        table: def.name.clone(),
        tried: tried_s,
        advice,
    }
}

/// The summary once `cand` is chosen: its counts, and a warning naming the other indexes
/// whose records fit too.
fn chosen(summary: &mut RowsSummary, cand: &Candidate, store: &PageStore) {
    let others: Vec<String> = summary
        .candidates
        .iter()
        .filter(|c| {
            fits(c)
                && matches!(
                    c.clustered,
                    Clustered::Named | Clustered::RootPage | Clustered::LooksClustered
                )
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
}

/// The newest version of each key the records of the pages in `compare` hold (only records
/// that decode: a damaged record must not hide an older version of its key that decodes).
fn newest_versions(
    g: &Group,
    pages: &[Leaf],
    compare: &HashSet<Leaf>,
    threads: usize,
) -> Result<Best, RowsError> {
    let mut best: Best = Best::default();
    if compare.is_empty() {
        return Ok(best);
    }
    let (def, layout, store) = (g.def, g.layout, g.store);
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
            walk(g, batch, sc, |p, r, _, fields, rec, key, row| {
                if let Ok(fields) = fields.map_err(|e| e.0).and_then(|f| {
                    record::decode_into(p, def, layout, f, rec.deleted, store, row)?;
                    Ok(f)
                }) {
                    record::key_bytes(p, layout, fields, key);
                    keys.push((key.as_slice().into(), (row.trx_id, !rec.deleted, r.lsn)));
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
    Ok(best)
}

/// Pass 2: every page of the group decoded again (on every thread), the rows the deleted
/// filter keeps formatted (when the sink has an encoder), and written in page order by
/// [`Writer`], the newest version of each key once; the counts go into `summary`.
#[allow(clippy::too_many_arguments)]
fn pass2(
    g: &Group,
    pages: &[Leaf],
    compare: &HashSet<Leaf>,
    best: Best,
    deleted: Deleted,
    threads: usize,
    sink: &mut dyn RowSink,
    summary: &mut RowsSummary,
) -> Result<(), RowsError> {
    let encoder = sink.encoder();
    let direct = encoder
        .as_ref()
        .filter(|e| e.direct())
        .map(|e| e.direct_plan(g.layout));
    let mut w = Writer {
        sink,
        best,
        lines: encoder.is_some(),
        rejected: BTreeMap::new(),
        written: 0,
        deleted_written: 0,
        dups: 0,
        filtered: 0,
        skip: Vec::new(),
    };
    par_batches(
        pages,
        threads,
        Scratch::default,
        |sc, batch| {
            pass2_batch(
                g,
                batch,
                sc,
                compare,
                deleted,
                encoder.as_ref(),
                direct.as_ref(),
            )
        },
        |o| w.consume(o),
    )?;
    summary.rows_written = w.written;
    summary.deleted_rows_written = w.deleted_written;
    summary.duplicates_dropped = w.dups;
    summary.filtered_out = w.filtered;
    summary.rejected = w
        .rejected
        .into_iter()
        .map(|(k, v)| (k.name().to_string(), v))
        .collect();
    Ok(())
}

/// Pass 2 over one batch of pages, on a decoding thread: its rows (or their lines) in page
/// order, and the keys of the rows on pages in `compare` for [`Writer`] to keep or drop.
fn pass2_batch(
    g: &Group,
    batch: &[Leaf],
    sc: &mut Scratch,
    compare: &HashSet<Leaf>,
    deleted: Deleted,
    encoder: Option<&LineEncoder>,
    direct: Option<&DirectPlan>,
) -> Result<Pass2, RowsError> {
    let (def, layout, store) = (g.def, g.layout, g.store);
    let mut o = Pass2::default();
    let mut ds = DirectScratch::default();
    if encoder.is_some() {
        // About a page of lines per page (TSV); more grows the buffer.
        o.lines.reserve(batch.len() * 16384);
    }
    let (mut last_page, mut on_compared) = (None, false);
    walk(g, batch, sc, |p, r, page_no, fields, rec, key, row| {
        let fields = match fields {
            Ok(f) => f,
            Err((e, _)) => {
                *o.rejected.entry(e).or_default() += 1;
                return Ok(());
            }
        };
        let keep = match deleted {
            Deleted::Exclude => !rec.deleted,
            Deleted::Include => true,
            Deleted::Only => rec.deleted,
        };
        if last_page != Some(page_no) {
            last_page = Some(page_no);
            on_compared = compare.contains(&page_no);
        }
        // The usual case: the line made straight from the page, no row in between.
        if let (true, Some(enc), Some(plan)) = (keep, encoder, direct) {
            if let Err(e) = enc.tsv_record(
                plan,
                p,
                layout,
                fields,
                rec.deleted,
                store,
                &mut ds,
                &mut o.lines,
            ) {
                // The reason decode_into gives (it checks the fields in record order, not in
                // column order): the same counts whichever way the row went.
                let e = record::decode_into(p, def, layout, fields, rec.deleted, store, row)
                    .err()
                    .unwrap_or(e);
                *o.rejected.entry(e).or_default() += 1;
                return Ok(());
            }
            if on_compared {
                record::key_bytes(p, layout, fields, key);
                o.keys.extend_from_slice(key);
                o.checks.push(Check {
                    key_end: o.keys.len(),
                    version: (record::trx_id(p, layout, fields), !rec.deleted, r.lsn),
                    row: Some(o.ends.len()),
                    deleted: rec.deleted,
                });
            }
            o.ends.push(o.lines.len());
            o.written += 1;
            o.deleted_written += rec.deleted as u64;
            return Ok(());
        }
        if let Err(e) = record::decode_into(p, def, layout, fields, rec.deleted, store, row) {
            *o.rejected.entry(e).or_default() += 1;
            return Ok(());
        }
        let index = o.ends.len() + o.rows.len();
        if on_compared {
            record::key_bytes(p, layout, fields, key);
            o.keys.extend_from_slice(key);
            o.checks.push(Check {
                key_end: o.keys.len(),
                version: (row.trx_id, !rec.deleted, r.lsn),
                row: keep.then_some(index),
                deleted: row.deleted,
            });
        }
        if !keep {
            o.filtered += 1;
            return Ok(());
        }
        let meta = RowMeta {
            space_id: g.id.0,
            page_no: page_no.page_no,
            lsn: r.lsn,
        };
        match encoder {
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
}

/// The thread of pass 2 that writes: batches in page order, the first record (in page order)
/// of the newest version of a key kept, the others dropped, the rest handed to the sink.
struct Writer<'s> {
    sink: &'s mut dyn RowSink,
    best: Best,
    /// The batches hold lines (the sink's encoder made them), not rows.
    lines: bool,
    rejected: BTreeMap<Reject, u64>,
    written: u64,
    deleted_written: u64,
    dups: u64,
    filtered: u64,
    skip: Vec<usize>,
}

impl Writer<'_> {
    fn consume(&mut self, o: Pass2) -> Result<(), RowsError> {
        for (k, v) in o.rejected {
            *self.rejected.entry(k).or_default() += v;
        }
        self.written += o.written;
        self.deleted_written += o.deleted_written;
        self.filtered += o.filtered;
        // The first record (in page order) of the newest version of a key is kept; the
        // others are dropped, written or filtered out as they were.
        self.skip.clear();
        let mut key_start = 0;
        for c in &o.checks {
            let key = &o.keys[key_start..c.key_end];
            key_start = c.key_end;
            if self.best.get(key) == Some(&c.version) {
                self.best.remove(key);
                continue;
            }
            self.dups += 1;
            match c.row {
                Some(i) => {
                    self.skip.push(i);
                    self.written -= 1;
                    self.deleted_written -= c.deleted as u64;
                }
                None => self.filtered -= 1,
            }
        }
        let mut skipped = self.skip.iter().copied().peekable();
        if self.lines {
            let mut start = 0;
            let mut from = 0;
            for (i, &end) in o.ends.iter().enumerate() {
                if skipped.next_if_eq(&i).is_some() {
                    if from > start {
                        self.sink
                            .lines(&o.lines[start..from])
                            .map_err(RowsError::Write)?;
                    }
                    start = end;
                }
                from = end;
            }
            if from > start {
                self.sink
                    .lines(&o.lines[start..from])
                    .map_err(RowsError::Write)?;
            }
        } else {
            for (i, (row, meta)) in o.rows.iter().enumerate() {
                if skipped.next_if_eq(&i).is_none() {
                    self.sink.row(row, meta).map_err(RowsError::Write)?;
                }
            }
        }
        Ok(())
    }
}

/// Why the definition seems not to be the table's, when most records of `group` were
/// rejected (purged records MariaDB zeroed, and records with a BLOB page missing, aside)
/// and the run was not interrupted.
fn misfit(
    summary: &RowsSummary,
    store: &PageStore,
    def: &TableDef,
    group: (u32, u64),
) -> Option<String> {
    let misfits: u64 = summary
        .rejected
        .iter()
        .filter(|(k, _)| ![Reject::Zeroed.name(), Reject::BlobMissing.name()].contains(&k.as_str()))
        .map(|(_, v)| v)
        .sum();
    if summary.interrupted || misfits * 2 <= summary.records_seen {
        return None;
    }
    let why: Vec<String> = summary
        .rejected
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    let instant = if summary.rejected.contains_key(Reject::Instant.name()) {
        "; `instant`: records written after an instant ADD/DROP COLUMN that this definition cannot place (MySQL 8: read the .ibd with its own SDI, without --table-def, which says what each row version holds; MariaDB: the index's root page and metadata record must be among the pages)"
    } else {
        ""
    };
    Some(format!(
        "{misfits} of the {} records of space {} index {} do not fit the definition of {} (rejected: {}{instant}); {}",
        summary.records_seen,
        group.0,
        group.1,
        def.name,
        why.join(", "),
        diagnose(store, def, group)
    ))
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
