//! Foreign keys that reach the job's table: a DELETE of its rows also deletes (ON DELETE
//! CASCADE, recursively) or changes (SET NULL, SET DEFAULT) rows of other tables, inside
//! InnoDB, unseen by the archive and not counted in the DELETE's affected rows. [`tree`] finds
//! them all; [`child_select`] reads one child's rows of a chunk so `--archive-children` can
//! archive them in the chunk's transaction, parents before children.

use crate::key::quote_ident;
use crate::server::ForeignKey;
use crate::Error;

/// One foreign key of the tree, reached from the job's table through `parent` (an index into
/// the tree; none: the job's table itself).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edge {
    /// The key.
    pub fk: ForeignKey,
    /// The edge whose child table is this edge's parent table (none: the job's table).
    pub parent: Option<usize>,
    /// 1 for the tables that reference the job's table, 2 for theirs, ...
    pub depth: u32,
}

impl Edge {
    /// A DELETE of the parent removes the child's rows.
    pub fn deletes(&self) -> bool {
        self.fk.delete_rule.eq_ignore_ascii_case("CASCADE")
    }

    /// A DELETE of the parent changes the child's rows (SET NULL, SET DEFAULT).
    pub fn changes(&self) -> bool {
        self.fk.delete_rule.to_ascii_uppercase().starts_with("SET ")
    }

    /// `db.table`.
    pub fn child(&self) -> String {
        format!("{}.{}", self.fk.schema, self.fk.table)
    }
}

/// Every foreign key reached from `root` through ON DELETE CASCADE, breadth first (so parents
/// come before their children), with `referencing(db, table)` reading the keys of one table.
/// A table reached twice (a cycle, a self-reference, two paths) is listed once per path but
/// not walked again.
pub fn tree(
    root: (&str, &str),
    mut referencing: impl FnMut(&str, &str) -> Result<Vec<ForeignKey>, Error>,
) -> Result<Vec<Edge>, Error> {
    let mut out: Vec<Edge> = Vec::new();
    let mut seen = vec![(root.0.to_string(), root.1.to_string())];
    let mut queue: std::collections::VecDeque<(String, String, Option<usize>, u32)> =
        [(root.0.to_string(), root.1.to_string(), None, 1)].into();
    while let Some((db, table, parent, depth)) = queue.pop_front() {
        for fk in referencing(&db, &table)? {
            let e = Edge { fk, parent, depth };
            let i = out.len();
            let key = (e.fk.schema.clone(), e.fk.table.clone());
            if e.deletes() && !seen.contains(&key) {
                seen.push(key.clone());
                queue.push_back((key.0, key.1, Some(i), depth + 1));
            }
            out.push(e);
        }
    }
    Ok(out)
}

/// Why `--archive-children` cannot archive this tree faithfully (none: it can): a child that
/// is changed rather than deleted, or a table reached twice (its rows could be archived twice
/// or the job's own table's rows deleted outside the chunk).
pub fn archive_children_refusal(root: (&str, &str), edges: &[Edge]) -> Option<String> {
    if let Some(e) = edges.iter().find(|e| e.changes()) {
        return Some(format!(
            "{} is ON DELETE {} ({}): its rows stay, changed, so an archive cannot hold them; give --allow-cascade",
            e.child(),
            e.fk.delete_rule,
            e.fk.constraint
        ));
    }
    let mut tables: Vec<(&str, &str)> = vec![root];
    for e in edges.iter().filter(|e| e.deletes()) {
        let t = (e.fk.schema.as_str(), e.fk.table.as_str());
        if tables.contains(&t) {
            return Some(format!(
                "{} is reached twice through ON DELETE CASCADE ({}: a cycle, a self-reference or two paths): archiving it per chunk could miss or repeat rows; give --allow-cascade",
                e.child(),
                e.fk.constraint
            ));
        }
        tables.push(t);
    }
    None
}

/// The SELECT of a child's rows whose key columns equal `n` tuples of the parent's referenced
/// values (`(c1, c2) IN ((?, ?), ...)`), locking them, with `columns` in this order.
pub fn child_select(e: &Edge, columns: &[String], n: usize) -> String {
    let cols: Vec<String> = columns.iter().map(|c| quote_ident(c)).collect();
    let fk: Vec<String> = e.fk.columns.iter().map(|c| quote_ident(c)).collect();
    let one = if fk.len() == 1 {
        "?".to_string()
    } else {
        format!("({})", vec!["?"; fk.len()].join(", "))
    };
    let lhs = if fk.len() == 1 {
        fk[0].clone()
    } else {
        format!("({})", fk.join(", "))
    };
    format!(
        "SELECT {} FROM {}.{} WHERE {lhs} IN ({}) FOR UPDATE",
        cols.join(", "),
        quote_ident(&e.fk.schema),
        quote_ident(&e.fk.table),
        vec![one; n].join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fk(child: &str, rule: &str, parent_col: &str) -> ForeignKey {
        ForeignKey {
            schema: "d".into(),
            table: child.into(),
            constraint: format!("fk_{child}"),
            delete_rule: rule.into(),
            columns: vec![format!("{parent_col}_ref")],
            references: vec![parent_col.into()],
        }
    }

    #[test]
    fn the_tree_walks_cascades_breadth_first_and_stops_at_repeats() {
        // parent <- child (CASCADE) <- grandchild (CASCADE); parent <- audit (SET NULL);
        // grandchild <- parent (CASCADE: a cycle back to the root).
        let edges = tree(("d", "parent"), |_, t| {
            Ok(match t {
                "parent" => vec![fk("child", "CASCADE", "id"), fk("audit", "SET NULL", "id")],
                "child" => vec![fk("grandchild", "CASCADE", "id")],
                "grandchild" => vec![fk("parent", "CASCADE", "id")],
                "audit" => panic!("a SET NULL child is not walked"),
                _ => vec![],
            })
        })
        .unwrap();
        let names: Vec<(String, Option<usize>, u32)> = edges
            .iter()
            .map(|e| (e.fk.table.clone(), e.parent, e.depth))
            .collect();
        assert_eq!(
            names,
            vec![
                ("child".into(), None, 1),
                ("audit".into(), None, 1),
                ("grandchild".into(), Some(0), 2),
                ("parent".into(), Some(2), 3),
            ]
        );
        let why = archive_children_refusal(("d", "parent"), &edges).unwrap();
        assert!(why.contains("SET NULL"), "{why}");
        let no_audit: Vec<Edge> = edges
            .iter()
            .filter(|e| e.fk.table != "audit")
            .cloned()
            .collect();
        let why = archive_children_refusal(("d", "parent"), &no_audit).unwrap();
        assert!(why.contains("d.parent is reached twice"), "{why}");
        assert_eq!(
            archive_children_refusal(("d", "parent"), &no_audit[..2]),
            None
        );
    }

    #[test]
    fn child_selects_match_tuples_of_the_referenced_values() {
        let mut e = Edge {
            fk: fk("c", "CASCADE", "id"),
            parent: None,
            depth: 1,
        };
        assert_eq!(
            child_select(&e, &["id".into(), "id_ref".into()], 2),
            "SELECT `id`, `id_ref` FROM `d`.`c` WHERE `id_ref` IN (?, ?) FOR UPDATE"
        );
        e.fk.columns = vec!["a".into(), "b".into()];
        assert_eq!(
            child_select(&e, &["a".into()], 2),
            "SELECT `a` FROM `d`.`c` WHERE (`a`, `b`) IN ((?, ?), (?, ?)) FOR UPDATE"
        );
    }
}
