//! The clustered-index layout of a MySQL 8 table with instant ADD/DROP COLUMN, from the SDI
//! ([`RowVersions`]): the fields in the order records hold them (`physical_pos`, dropped
//! columns included), the row version that added and dropped each, the fields of records
//! without a flag (`n_core`), and the defaults of added columns. [`record`] splits each record
//! by its flags and version (`split_mysql_instant`).

use super::def::{Physical, RowVersions, TableDef};
use super::record::{IndexField, Layout, Sys};
use super::value::{self, Value};

/// The layout of `def`'s clustered index by `rv`, from `base` (`def`'s
/// [`Layout::clustered`]). The error says what of `rv` does not fit the definition.
pub fn layout(def: &TableDef, base: &Layout, rv: &RowVersions) -> Result<Layout, String> {
    let sys_field = |s: Sys| base.fields.iter().find(|f| f.sys == Some(s)).cloned();
    let mut fields = Vec::with_capacity(rv.fields.len());
    let mut seen = vec![false; def.columns.len()];
    for pf in &rv.fields {
        let f = match &pf.what {
            Physical::Column(c) => {
                let Some(f) = base.fields.iter().find(|f| f.col == Some(*c)) else {
                    return Err(format!(
                        "column #{c} is not a stored column of the definition"
                    ));
                };
                if std::mem::replace(&mut seen[*c], true) {
                    return Err(format!(
                        "column `{}` is in two fields",
                        def.columns[*c].name
                    ));
                }
                f.clone()
            }
            Physical::RowId => sys_field(Sys::RowId).ok_or("DB_ROW_ID in a table with a key")?,
            Physical::TrxId => sys_field(Sys::TrxId).ok_or("no DB_TRX_ID")?,
            Physical::RollPtr => sys_field(Sys::RollPtr).ok_or("no DB_ROLL_PTR")?,
            Physical::Dropped(c) => IndexField {
                col: None,
                sys: None,
                fixed_compact: c.ty.fixed_len(),
                fixed_redundant: c.ty.redundant_fixed_len(),
                nullable: c.nullable,
                big: c.ty.max_bytes() > 255 || c.ty.is_blob(),
            },
        };
        fields.push(f);
    }
    if let Some(f) = base.fields.iter().find(|f| f.col.is_some_and(|c| !seen[c])) {
        return Err(format!(
            "column `{}` has no physical position",
            def.columns[f.col.unwrap_or(0)].name
        ));
    }
    // The key, DB_TRX_ID and DB_ROLL_PTR first, in the index's order.
    let head = base.n_key + 2;
    if fields.len() < head
        || fields[..head]
            .iter()
            .zip(&base.fields[..head])
            .any(|(a, b)| a.col != b.col || a.sys != b.sys)
    {
        return Err("the key, DB_TRX_ID and DB_ROLL_PTR are not the first fields".into());
    }
    if rv.n_core < head || rv.n_core > fields.len() {
        return Err(format!(
            "records before the first instant ADD would have {} fields of {}",
            rv.n_core,
            fields.len()
        ));
    }
    let mut defaults = vec![Value::Null; def.columns.len()];
    for (i, d) in rv.defaults.iter().enumerate().take(def.columns.len()) {
        if let Some(b) = d {
            defaults[i] = value::decode(&def.columns[i].ty, b).map_err(|_| {
                format!(
                    "the default of column `{}` (0x{}) is not a value of its type",
                    def.columns[i].name,
                    b.iter().map(|x| format!("{x:02x}")).collect::<String>()
                )
            })?;
        }
    }
    Ok(Layout {
        n_nullable: fields.iter().filter(|f| f.nullable).count(),
        versions: rv.fields.iter().map(|f| (f.added, f.dropped)).collect(),
        fields,
        n_key: base.n_key,
        n_core: rv.n_core,
        defaults,
        core_null_bytes: None,
    })
}
