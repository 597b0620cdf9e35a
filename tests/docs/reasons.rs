//! The reason-id catalogue (`safe_exec::policy::ReasonId`) and the table
//! in docs/audit.md are the same list, both ways, with the same meanings;
//! every catalogue id is emitted somewhere; and ids the code defines are
//! never passed as strings (`Verdict::add_data` is for ids from data).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use safe_exec::policy::ReasonId;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The rows of the `## Reason ids` table: id to meaning.
fn doc_table(doc: &str) -> BTreeMap<String, String> {
    let Some(start) = doc.find("## Reason ids") else {
        return BTreeMap::new();
    };
    let section = &doc[start..];
    let end = section[3..].find("\n## ").map_or(section.len(), |i| i + 3);
    section[..end]
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("| `")?;
            let (id, rest) = rest.split_once('`')?;
            let meaning = rest.trim_start().strip_prefix('|')?.trim();
            let meaning = meaning.strip_suffix('|')?.trim();
            Some((id.to_string(), meaning.to_string()))
        })
        .collect()
}

/// How the catalogue and the table differ; empty when they agree.
fn differences(catalogue: &[ReasonId], table: &BTreeMap<String, String>) -> Vec<String> {
    let mut out = Vec::new();
    for id in catalogue {
        match table.get(id.as_str()) {
            None => out.push(format!(
                "`{id}` is in the catalogue but not in docs/audit.md"
            )),
            Some(m) if m != id.description() => out.push(format!(
                "`{id}`: docs/audit.md says {m:?}, the catalogue says {:?}",
                id.description()
            )),
            Some(_) => {}
        }
    }
    for id in table.keys() {
        if !catalogue.iter().any(|c| c.as_str() == id) {
            out.push(format!(
                "`{id}` is in docs/audit.md but not in the catalogue"
            ));
        }
    }
    out
}

#[test]
fn audit_doc_lists_every_reason_id() {
    let doc = std::fs::read_to_string(repo().join("docs/audit.md")).expect("docs/audit.md");
    let table = doc_table(&doc);
    assert!(table.len() >= 60, "only {} rows found", table.len());
    let diff = differences(ReasonId::ALL, &table);
    assert!(diff.is_empty(), "{diff:#?}");
    // Each id is spelled once.
    let mut ids: Vec<&str> = ReasonId::ALL.iter().map(|r| r.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), ReasonId::ALL.len(), "an id is spelled twice");
}

/// Negative control: a table missing a row, with an extra row and with a
/// changed meaning is reported in each direction.
#[test]
fn reason_table_check_can_fail() {
    let doc = std::fs::read_to_string(repo().join("docs/audit.md")).expect("docs/audit.md");
    let mut table = doc_table(&doc);
    table.remove(ReasonId::RootsSecret.as_str());
    table.insert("policy.no_such_check".into(), "made up".into());
    table.insert(
        ReasonId::ParseUnknown.as_str().into(),
        "something else".into(),
    );
    let diff = differences(ReasonId::ALL, &table).join("\n");
    assert!(
        diff.contains("`roots.secret` is in the catalogue but not in docs/audit.md"),
        "{diff}"
    );
    assert!(
        diff.contains("`policy.no_such_check` is in docs/audit.md but not in the catalogue"),
        "{diff}"
    );
    assert!(
        diff.contains("`parse.unknown`: docs/audit.md says"),
        "{diff}"
    );
    // A document without the section has no rows: every id is missing.
    assert!(doc_table("# nothing here").is_empty());
}

fn sources(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
    for e in std::fs::read_dir(dir).expect("read_dir").flatten() {
        let p = e.path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let text = std::fs::read_to_string(&p).expect("source");
            out.push((p, text));
        }
    }
}

/// Every catalogue id is emitted by some code (`ReasonId::Name` appears
/// outside the catalogue itself): the catalogue lists no dead ids.
#[test]
fn every_reason_id_is_emitted() {
    let mut srcs = Vec::new();
    sources(&repo().join("src"), &mut srcs);
    let unused: Vec<&ReasonId> = ReasonId::ALL
        .iter()
        .filter(|id| {
            let written = format!("ReasonId::{id:?}");
            !srcs
                .iter()
                .any(|(p, t)| !p.ends_with("policy/reason.rs") && t.contains(&written))
        })
        .collect();
    assert!(unused.is_empty(), "catalogue ids no code emits: {unused:?}");
}

/// A call of `add_data` whose id is a string literal (`add_data(layer,
/// "policy.x", ...)`): ids the code defines must be `ReasonId`s.
fn literal_add_data(text: &str) -> Vec<String> {
    let re = regex::Regex::new(r#"add_data\(\s*[^,()]+,\s*"([^"]*)""#).expect("regex");
    re.captures_iter(text).map(|c| c[1].to_string()).collect()
}

#[test]
fn code_defined_ids_are_not_strings() {
    // Negative control: the scan finds a literal id.
    assert_eq!(
        literal_add_data("v.add_data(\n    Layer::Policy,\n    \"policy.x\", d, m, None)"),
        ["policy.x"]
    );
    assert!(
        literal_add_data("v.add_data(Layer::Guard, &format!(\"guard.{}\", p.id), d, m, None)")
            .is_empty()
    );
    let mut srcs = Vec::new();
    sources(&repo().join("src"), &mut srcs);
    let found: Vec<String> = srcs
        .iter()
        .flat_map(|(p, t)| {
            literal_add_data(t)
                .into_iter()
                .map(move |id| format!("{}: {id}", p.display()))
        })
        .collect();
    assert!(found.is_empty(), "string ids passed to add_data: {found:?}");
}
