//! The walk over an index's leaf pages that both passes of the `run` module make: every record
//! split into fields and checked against its neighbours on the page, page after page, on
//! several threads in batches whose results come back in page order.

use super::def::TableDef;
use super::error::RowsError;
use super::record::{self, Layout, RawField, Rec, Reject, RowBuf};
use super::store::{Leaf, PageRef, PageStore};
use crate::page::{system_records, IndexHeader};
use std::sync::atomic::{AtomicBool, Ordering};

/// Per-thread buffers of [`walk`].
#[derive(Default)]
pub(super) struct Scratch {
    buf: Vec<u8>,
    fields: Vec<RawField>,
    seen: Vec<u64>,
    recs: Vec<Rec>,
    /// The fields of the page's records that split, one record after the other.
    flat: Vec<RawField>,
    /// Per record: its origin and extent, where its fields start in `flat` (or why it did not
    /// split), whether it does not fit among its neighbours; the order by origin.
    pub(super) extents: Vec<(usize, Option<record::Extent>)>,
    splits: Vec<Result<usize, Reject>>,
    bad: Vec<bool>,
    pub(super) order: Vec<u32>,
    /// For the callback: key bytes and a decoded row.
    key: Vec<u8>,
    row: RowBuf,
}

/// The leaf pages of one index being read: where, with which layout, until `stop`.
pub(super) struct Group<'a> {
    pub(super) store: &'a PageStore<'a>,
    pub(super) def: &'a TableDef,
    pub(super) layout: &'a Layout,
    /// (space id, index id).
    pub(super) id: (u32, u64),
    pub(super) stop: &'a AtomicBool,
}

/// Calls `each` on every user record (split into fields, or why not and whether it was split:
/// a record that does not fit among its neighbours was, and its values checked) of `pages` that are
/// leaf pages of `g`, in page and record order. The records of an older copy of a page are
/// handed on as deleted: the newer copy no longer holds them where they were.
#[allow(clippy::type_complexity)]
pub(super) fn walk(
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
pub(super) fn par_batches<S, T: Send>(
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
pub(super) fn key_cmp(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
