//! What seems wrong with a definition whose records do not fit: the definition changed one
//! column at a time, and the change after which the records fit named.

use super::def::{ColType, TableDef};
use super::layout::group_layout;
use super::record::{self, Layout};
use super::store::PageStore;
use super::walk::{walk, Group, Scratch};
use crate::encode::IntType;
use std::sync::atomic::AtomicBool;

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
pub(super) fn diagnose(store: &PageStore, def: &TableDef, group: (u32, u64)) -> String {
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
