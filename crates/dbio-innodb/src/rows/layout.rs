//! The layout of an index's records in the page store: the definition's, changed by
//! MariaDB's instant ALTER (added columns' defaults, dropped or reordered fields) as the
//! index's root page and metadata record say, or by MySQL 8's instant ADD/DROP (the SDI's
//! row versions: [`super::row_version`]).

use super::def::TableDef;
use super::instant;
use super::record::{self, Layout};
use super::row_version;
use super::store::PageStore;
use crate::page::system_records;

/// The layout of `group`'s records: after a MariaDB instant ADD COLUMN (the root page gives
/// n_core_fields), older records have fewer fields and the metadata record holds the values
/// of the added columns for them; after an instant DROP or reorder, the metadata record's
/// BLOB gives the order of the fields ([`super::instant`]).
pub(super) fn group_layout(
    store: &PageStore,
    base: &Layout,
    def: &TableDef,
    group: (u32, u64),
    warnings: &mut Vec<String>,
) -> Layout {
    if let Some(rv) = &def.row_versions {
        // MySQL 8 instant ADD/DROP: the SDI says what records of each version hold.
        return row_version::layout(def, base, rv).unwrap_or_else(|why| {
            warnings.push(format!(
                "space {} index {}: the SDI's instant ADD/DROP COLUMN facts do not fit the definition ({why}): records written after an instant ALTER are rejected",
                group.0, group.1
            ));
            base.clone()
        });
    }
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
