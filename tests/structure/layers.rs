//! The library's module graph: every `crate::X` use between the top-level
//! modules of `src/` goes down the layer table of `docs/architecture.md`
//! (never sideways or up, so no cycle can form), and that table lists
//! exactly the edges the code has.
//!
//! An edge is a use of another top-level module anywhere in a module's
//! files: `crate::x::...`, each name of a `use crate::{x, y::z}` group, and
//! a `super::super::x` that climbs to the crate root. Comments are not
//! code; unit-test modules count like the rest (they too may not reach up).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Where the table starts in `docs/architecture.md`.
const MARKER: &str = "<!-- module-layers: tests/structure/layers.rs reads this table -->";

/// One use of a module by another.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Edge {
    from: String,
    to: String,
    /// Path under `src/`.
    file: String,
    line: usize,
}

/// A row of the layer table: the module's layer and the modules it uses.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Row {
    layer: u32,
    uses: BTreeSet<String>,
}

fn src_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `src/` as (path relative to `src/`, text).
fn source_files() -> Vec<(String, String)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
        for e in std::fs::read_dir(dir).expect("read src/").flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(root, &p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(root).expect("under src/");
                let text = std::fs::read_to_string(&p).expect("read a source file");
                out.push((rel.to_string_lossy().replace('\\', "/"), text));
            }
        }
    }
    let mut out = Vec::new();
    walk(&src_dir(), &src_dir(), &mut out);
    out.sort();
    out
}

/// The module path of a file: `policy/paths.rs` is `[policy, paths]`,
/// `policy/mod.rs` and `decide.rs` are `[policy]` and `[decide]`; the crate
/// roots (`lib.rs`, `main.rs`) are `[]`.
fn module_path(rel: &str) -> Vec<String> {
    let stem = rel.strip_suffix(".rs").unwrap_or(rel);
    let mut parts: Vec<String> = stem.split('/').map(String::from).collect();
    if parts.last().is_some_and(|l| l == "mod") {
        parts.pop();
    }
    if parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main") {
        parts.clear();
    }
    parts
}

/// The top-level modules: the files and directories of `src/` besides the
/// crate roots.
fn top_modules(files: &[(String, String)]) -> BTreeSet<String> {
    files
        .iter()
        .filter_map(|(rel, _)| module_path(rel).into_iter().next())
        .collect()
}

/// `text` with its comments blanked (line and block comments; `//` inside a
/// string literal is kept), line breaks preserved so line numbers hold.
fn strip_comments(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let (mut i, mut in_str, mut block) = (0, false, 0usize);
    while i < b.len() {
        let c = b[i];
        if block > 0 {
            if c == b'*' && b.get(i + 1) == Some(&b'/') {
                block -= 1;
                i += 2;
                continue;
            }
            if c == b'/' && b.get(i + 1) == Some(&b'*') {
                block += 1;
                i += 2;
                continue;
            }
            if c == b'\n' {
                out.push('\n');
            }
            i += 1;
            continue;
        }
        if in_str {
            if c == b'\\' {
                out.push(' ');
                i += 1;
                if i < b.len() && b[i] != b'\n' {
                    out.push(' ');
                    i += 1;
                }
                continue;
            }
            if c == b'"' {
                in_str = false;
            }
            // String contents are not code either.
            out.push(if c == b'\n' { '\n' } else { ' ' });
            i += 1;
            continue;
        }
        match c {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                block = 1;
                i += 2;
            }
            b'"' => {
                in_str = true;
                out.push(' ');
                i += 1;
            }
            // A raw string (`r"..."`, `r#"..."#`): no escapes, ends at the
            // quote with as many `#`.
            b'r' if (i == 0 || !is_ident(b[i - 1] as char))
                && matches!(b.get(i + 1), Some(b'"' | b'#')) =>
            {
                let hashes = b[i + 1..].iter().take_while(|&&x| x == b'#').count();
                if b.get(i + 1 + hashes) != Some(&b'"') {
                    out.push('r');
                    i += 1;
                    continue;
                }
                let close = format!("\"{}", "#".repeat(hashes));
                let body = i + 2 + hashes;
                let end = text[body..]
                    .find(&close)
                    .map_or(b.len(), |e| body + e + close.len());
                out.extend(
                    text[i..end]
                        .chars()
                        .map(|c| if c == '\n' { '\n' } else { ' ' }),
                );
                i = end;
            }
            // A char literal holding a quote or an escape (`'"'`, `'\"'`)
            // opens no string.
            b'\'' if b.get(i + 2) == Some(&b'\'') => {
                out.push_str("   ");
                i += 3;
            }
            b'\'' if b.get(i + 1) == Some(&b'\\') => {
                let end = text[i + 2..].find('\'').map_or(b.len(), |e| i + 3 + e);
                out.extend(text[i..end].chars().map(|_| ' '));
                i = end;
            }
            _ => {
                // Keep multi-byte characters whole.
                let ch = text[i..].chars().next().expect("a char");
                out.push(ch);
                i += ch.len_utf8();
            }
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn ident_at(s: &str) -> &str {
    let end = s.find(|c: char| !is_ident(c)).unwrap_or(s.len());
    &s[..end]
}

/// The first names of a path after `crate::` (or a `super::` chain) at
/// the start of `rest`: one name, or each item of a `{...}` group.
fn names_at(rest: &str) -> Vec<String> {
    let rest = rest.trim_start();
    let Some(group) = rest.strip_prefix('{') else {
        return vec![ident_at(rest).to_string()];
    };
    let mut names = Vec::new();
    let (mut depth, mut item_start) = (0usize, true);
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => item_start = true,
            c if item_start && !c.is_whitespace() => {
                item_start = false;
                if depth == 0 {
                    names.push(ident_at(&group[i..]).to_string());
                }
            }
            _ => {}
        }
    }
    names
}

/// The uses of other top-level modules in one file.
fn edges_in(rel: &str, text: &str, tops: &BTreeSet<String>) -> Vec<Edge> {
    let here = module_path(rel);
    let Some(own) = here.first().cloned() else {
        return Vec::new();
    };
    let code = strip_comments(text);
    let line_of = |pos: usize| code[..pos].matches('\n').count() + 1;
    let starts_word = |pos: usize| {
        code[..pos]
            .chars()
            .next_back()
            .is_none_or(|c| !is_ident(c) && c != ':')
    };
    let mut out = Vec::new();
    let mut push = |names: Vec<String>, pos: usize| {
        for n in names {
            if n != own && tops.contains(&n) {
                out.push(Edge {
                    from: own.clone(),
                    to: n,
                    file: rel.to_string(),
                    line: line_of(pos),
                });
            }
        }
    };
    for (pos, _) in code.match_indices("crate::") {
        if starts_word(pos) {
            push(names_at(&code[pos + "crate::".len()..]), pos);
        }
    }
    for (pos, _) in code.match_indices("super::") {
        if !starts_word(pos) {
            continue;
        }
        let mut rest = &code[pos..];
        let mut ups = 0;
        while let Some(r) = rest.strip_prefix("super::") {
            ups += 1;
            rest = r.trim_start();
        }
        // Only a chain that climbs to the crate root names a top-level
        // module; a shorter one stays inside this module.
        if ups == here.len() {
            push(names_at(rest), pos);
        }
    }
    out
}

/// Every edge of the crate whose files are `files`.
fn graph_edges(files: &[(String, String)]) -> Vec<Edge> {
    let tops = top_modules(files);
    files
        .iter()
        .flat_map(|(rel, text)| edges_in(rel, text, &tops))
        .collect()
}

/// The edges as module -> modules it uses.
fn adjacency(files: &[(String, String)]) -> BTreeMap<String, BTreeSet<String>> {
    let mut adj: BTreeMap<String, BTreeSet<String>> = top_modules(files)
        .into_iter()
        .map(|m| (m, BTreeSet::new()))
        .collect();
    for e in graph_edges(files) {
        adj.entry(e.from).or_default().insert(e.to);
    }
    adj
}

/// The layer table after [`MARKER`]: rows `| LAYER | `module` | `a`, `b` |`.
fn read_table(doc: &str) -> Result<BTreeMap<String, Row>, String> {
    let start = doc
        .find(MARKER)
        .ok_or_else(|| format!("no `{MARKER}` line"))?;
    let mut rows = BTreeMap::new();
    let mut in_table = false;
    for line in doc[start + MARKER.len()..].lines().map(str::trim) {
        if !line.starts_with('|') {
            if in_table {
                break;
            }
            continue;
        }
        in_table = true;
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        let Some(Ok(layer)) = cells.first().map(|c| c.parse::<u32>()) else {
            continue; // header or separator
        };
        let [_, module, uses, ..] = cells[..] else {
            return Err(format!("a row without module and uses: {line}"));
        };
        let name = |s: &str| s.trim().trim_matches('`').to_string();
        let uses = uses
            .split(',')
            .map(name)
            .filter(|u| !u.is_empty() && u != "—" && u != "-")
            .collect();
        if rows.insert(name(module), Row { layer, uses }).is_some() {
            return Err(format!("module listed twice: {line}"));
        }
    }
    if rows.is_empty() {
        return Err(format!("no table rows after `{MARKER}`"));
    }
    Ok(rows)
}

/// Edges that do not go strictly down the table, one line each, naming
/// the file and line; modules missing from the table.
fn back_edges(files: &[(String, String)], table: &BTreeMap<String, Row>) -> Vec<String> {
    let mut out = Vec::new();
    for m in top_modules(files) {
        if !table.contains_key(&m) {
            out.push(format!(
                "src/{m}: module `{m}` has no row in the layer table"
            ));
        }
    }
    for e in graph_edges(files) {
        let (Some(from), Some(to)) = (table.get(&e.from), table.get(&e.to)) else {
            continue;
        };
        if to.layer >= from.layer {
            out.push(format!(
                "src/{}:{}: `{}` (layer {}) uses `{}` (layer {}): a stage may use only lower layers",
                e.file, e.line, e.from, from.layer, e.to, to.layer
            ));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Where the table and the real graph differ: modules or edges missing or
/// extra.
fn table_differences(
    adj: &BTreeMap<String, BTreeSet<String>>,
    table: &BTreeMap<String, Row>,
) -> Vec<String> {
    let mut out = Vec::new();
    for m in adj.keys().filter(|m| !table.contains_key(*m)) {
        out.push(format!("module `{m}` is missing from the table"));
    }
    for m in table.keys().filter(|m| !adj.contains_key(*m)) {
        out.push(format!("module `{m}` is in the table but not in src/"));
    }
    for (m, real) in adj {
        let Some(row) = table.get(m) else { continue };
        for u in real.difference(&row.uses) {
            out.push(format!(
                "edge `{m}` -> `{u}` is in the code but not in the table"
            ));
        }
        for u in row.uses.difference(real) {
            out.push(format!(
                "edge `{m}` -> `{u}` is in the table but not in the code"
            ));
        }
    }
    out
}

fn architecture_doc() -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md");
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn every_module_use_goes_down_the_layer_table() {
    let files = source_files();
    let table = read_table(&architecture_doc()).expect("the layer table");
    let bad = back_edges(&files, &table);
    assert!(
        bad.is_empty(),
        "uses that do not go down the layers of docs/architecture.md:\n{}",
        bad.join("\n")
    );
    // The walk sees the crate: known edges are found.
    let adj = adjacency(&files);
    assert!(adj["cli"].contains("decide"), "{adj:?}");
    assert!(adj["policy"].contains("parse"), "{adj:?}");
    assert!(adj.len() >= 15, "{adj:?}");
}

#[test]
fn architecture_doc_lists_the_real_module_graph() {
    let files = source_files();
    let table = read_table(&architecture_doc()).expect("the layer table");
    let diff = table_differences(&adjacency(&files), &table);
    assert!(
        diff.is_empty(),
        "docs/architecture.md's module table differs from src/ (update the table):\n{}",
        diff.join("\n")
    );
}

/// The layers keep their promised shape whatever the table says: the
/// leaves use nothing, and nothing uses the command-line layer.
#[test]
fn leaves_are_leaves_and_nothing_uses_cli() {
    let adj = adjacency(&source_files());
    for leaf in ["builtin", "bound", "sys"] {
        assert!(
            adj[leaf].is_empty(),
            "`{leaf}` must use nothing: {:?}",
            adj[leaf]
        );
    }
    let users: Vec<&String> = adj
        .iter()
        .filter(|(_, u)| u.contains("cli"))
        .map(|(m, _)| m)
        .collect();
    assert!(users.is_empty(), "modules using `cli`: {users:?}");
}

// ---- negative controls: the checks see what they must ----------------

fn synthetic() -> Vec<(String, String)> {
    let f = |p: &str, t: &str| (p.to_string(), t.to_string());
    vec![
        f("lib.rs", "pub mod cli;\npub mod parse;\npub mod sys;\n"),
        f("sys/mod.rs", "pub fn f() {}\n"),
        f(
            "parse/mod.rs",
            "use crate::sys;\n// crate::cli in a comment is no use\nuse crate::{\n    sys::f,\n    cli::main,\n};\nconst S: &str = \"crate::cli\";\n",
        ),
        f(
            "parse/deep/x.rs",
            "fn g() {\n    super::super::super::cli::main();\n    super::super::y();\n}\n",
        ),
        f("cli/mod.rs", "use crate::parse;\npub fn main() {}\n"),
    ]
}

const SYNTHETIC_DOC: &str = "# x\n\n<!-- module-layers: tests/structure/layers.rs reads this table -->\n\n| layer | module | uses |\n|---|---|---|\n| 0 | `sys` | |\n| 1 | `parse` | `sys` |\n| 2 | `cli` | `parse` |\n\nprose\n";

#[test]
fn a_back_edge_is_reported_with_its_file_and_line() {
    let files = synthetic();
    let table = read_table(SYNTHETIC_DOC).expect("the synthetic table");
    let bad = back_edges(&files, &table);
    assert_eq!(
        bad,
        vec![
            "src/parse/deep/x.rs:2: `parse` (layer 1) uses `cli` (layer 2): a stage may use only lower layers".to_string(),
            "src/parse/mod.rs:3: `parse` (layer 1) uses `cli` (layer 2): a stage may use only lower layers".to_string(),
        ],
        "the group use and the climb to the root are back-edges; the comment, the string and `super::super::y` are not"
    );
    // Positive control: without the back-edges the same crate passes.
    let clean: Vec<(String, String)> = files
        .into_iter()
        .map(|(p, t)| (p, t.replace("cli::main", "sys::f")))
        .collect();
    assert_eq!(back_edges(&clean, &table), Vec::<String>::new());
    // A module that is not in the table is reported.
    let mut extra = clean.clone();
    extra.push(("audit.rs".into(), "use crate::sys;\n".into()));
    assert_eq!(
        back_edges(&extra, &table),
        vec!["src/audit: module `audit` has no row in the layer table".to_string()]
    );
}

#[test]
fn a_table_that_differs_from_the_code_is_reported() {
    let files = synthetic();
    let table = read_table(SYNTHETIC_DOC).expect("the synthetic table");
    assert_eq!(
        table_differences(&adjacency(&files), &table),
        vec!["edge `parse` -> `cli` is in the code but not in the table".to_string()]
    );
    let stale = SYNTHETIC_DOC.replace(
        "| 2 | `cli` | `parse` |",
        "| 2 | `cli` | `parse`, `sys` |\n| 3 | `gone` | |",
    );
    let table = read_table(&stale).expect("the stale table");
    assert_eq!(
        table_differences(&adjacency(&files), &table),
        vec![
            "module `gone` is in the table but not in src/".to_string(),
            "edge `cli` -> `sys` is in the table but not in the code".to_string(),
            "edge `parse` -> `cli` is in the code but not in the table".to_string(),
        ]
    );
}
