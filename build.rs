//! Embeds the built-in data of `profiles/` into the binary in a form that
//! costs nothing at start-up: each registry entry and wrapper is kept as
//! its own small JSON text (serde_json parses it several times faster than
//! toml parses the same entry), each rule as its own TOML text, found by
//! name and parsed only when a command actually uses it; each built-in
//! profile is kept with its `extends` chain already merged, as JSON. For rules, the literal keywords every match must contain
//! are extracted here, so a rule's regex is compiled only when its keyword
//! appears in the command.

// A build script reports a broken input by panicking: that is the build
// failure, with the message naming the file.
#![allow(clippy::expect_used, clippy::unwrap_used, missing_docs)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

#[path = "src/config/keywords.rs"]
mod keywords;

// The built-in data is deserialised here with the very types the binary
// uses (registry entries, wrappers, the guard's classes and patterns with
// their regexes): a broken entry fails the build, naming the file and id.
// These files are compiled into the build script too, so they may refer
// to no other part of the crate than `crate::builtin` (stubbed below) and
// each other as they do now.
#[path = "src/parse/model.rs"]
#[allow(dead_code)]
mod model;
#[path = "src/config/patterns.rs"]
#[allow(dead_code)]
mod patterns;
#[path = "src/config/registry.rs"]
#[allow(dead_code)]
mod registry;
#[path = "src/parse/unwrap.rs"]
#[allow(dead_code)]
mod unwrap;
// The loader's own merge of a profile over the one it extends.
#[path = "src/profile/merge.rs"]
mod merge;

/// Stand-in for the generated tables while they are being generated
/// (`registry.rs` reads `crate::builtin`'s registry at run time only).
#[allow(dead_code)]
mod builtin {
    pub fn registry_len() -> usize {
        0
    }
    pub fn registry_entry(_: usize) -> Option<(&'static str, &'static str, &'static str)> {
        None
    }
    pub fn registry_position(_: &str) -> Option<usize> {
        None
    }
    pub fn registry() -> impl Iterator<Item = (&'static str, &'static str, &'static str)> {
        std::iter::empty()
    }
}

use keywords::keywords;

/// FNV-1a of a registry name: `src/builtin.rs`'s `registry_name_hash`,
/// which looks names up in the table built with this one (its unit test
/// finds every name, so the two cannot differ).
fn registry_name_hash(name: &[u8]) -> u32 {
    name.iter().fold(0x811c_9dc5, |h: u32, b| {
        (h ^ u32::from(*b)).wrapping_mul(0x0100_0193)
    })
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("manifest dir"));
    let profiles = root.join("profiles");
    println!("cargo:rerun-if-changed=profiles");
    let mut out = String::new();

    // Registry: profiles/registry/*.toml, tables [command."NAME"].
    let mut registry = BTreeMap::new();
    for file in toml_files(&profiles.join("registry")) {
        let doc = read_table(&file);
        for (key, value) in doc {
            if key != "command" {
                panic!(
                    "{}: unexpected top-level key `{key}` (expected [command.NAME])",
                    file.display()
                );
            }
            let toml::Value::Table(cmds) = value else {
                panic!("{}: `command` must be a table", file.display())
            };
            for (name, entry) in cmds {
                // What the binary parses (registry.rs, `parse_builtin`) is
                // this JSON text, checked here with the binary's own types.
                let text = serde_json::to_string(&entry).expect("serialise entry");
                let source = format!("{}", file.strip_prefix(&root).unwrap_or(&file).display());
                match serde_json::from_str::<registry::CommandSpec>(&text) {
                    Ok(spec) => {
                        let errs = registry::check_spec(&name, &spec);
                        if !errs.is_empty() {
                            panic!("{source}: command `{name}`: {}", errs.join("; "));
                        }
                    }
                    Err(e) => panic!("{source}: command `{name}` does not deserialise: {e}"),
                }
                if registry
                    .insert(name.clone(), (text, source.clone()))
                    .is_some()
                {
                    panic!("{source}: command `{name}` is defined twice in the registry");
                }
            }
        }
    }
    // One string and a table of offsets, not a table of `&str`: a pointer
    // in a static table is a relocation that the static PIE applies at
    // every start, and a page of them is a page copied on write (the
    // registry's 553 entries x 3 were 6.5 pages of `.data.rel.ro`).
    let mut data = String::new();
    let mut sources: Vec<String> = Vec::new();
    let mut index = Vec::new();
    for (name, (text, source)) in &registry {
        let start = data.len();
        data.push_str(name);
        let name_end = data.len();
        data.push_str(text);
        let text_end = data.len();
        let src = match sources.iter().position(|s| s == source) {
            Some(i) => i,
            None => {
                sources.push(source.clone());
                sources.len() - 1
            }
        };
        let n = |v: usize| u32::try_from(v).expect("registry data below 4 GiB");
        index.push([n(start), n(name_end), n(text_end), n(src)]);
    }
    writeln!(
        out,
        "/// Built-in registry entries, concatenated: name and JSON text of each, in the order of [`REGISTRY_INDEX`]."
    )
    .ok();
    writeln!(out, "pub static REGISTRY_DATA: &str = {data:?};").ok();
    writeln!(
        out,
        "/// Built-in registry entries sorted by name: [name start, name end (text start), text end, source index] in [`REGISTRY_DATA`] and [`REGISTRY_SOURCES`]."
    )
    .ok();
    writeln!(out, "pub static REGISTRY_INDEX: &[[u32; 4]] = &{index:?};").ok();
    // A hash table of the names (open addressing, linear probing), so that
    // a lookup hashes the name once and compares it with about one entry
    // (the binary search compared it with ~9).
    let slots = (2 * registry.len()).next_power_of_two().max(2);
    let mut table = vec![0u16; slots];
    for (i, name) in registry.keys().enumerate() {
        let mut k = registry_name_hash(name.as_bytes()) as usize & (slots - 1);
        while table[k] != 0 {
            k = (k + 1) & (slots - 1);
        }
        table[k] = u16::try_from(i + 1).expect("fewer than 65535 registry entries");
    }
    writeln!(
        out,
        "/// The registry's names hashed ([`registry_name_hash`]): slot `hash & (len - 1)` and the slots after it, up to an empty one (0), hold 1 + the index in [`REGISTRY_INDEX`] of each name with that hash."
    )
    .ok();
    writeln!(out, "pub static REGISTRY_HASH: &[u16] = &{table:?};").ok();
    writeln!(out, "/// The files the registry entries come from.").ok();
    writeln!(out, "pub static REGISTRY_SOURCES: &[&str] = &{sources:?};").ok();

    // Wrappers: profiles/wrappers.toml, tables [wrapper.NAME].
    let wrappers = read_table(&profiles.join("wrappers.toml"));
    writeln!(
        out,
        "/// Built-in wrapper specs: (name, JSON text), sorted by name."
    )
    .ok();
    writeln!(out, "pub static WRAPPERS: &[(&str, &str)] = &[").ok();
    if let Some(toml::Value::Table(ws)) = wrappers.get("wrapper") {
        let sorted: BTreeMap<_, _> = ws.iter().collect();
        for (name, entry) in sorted {
            let text = serde_json::to_string(entry).expect("serialise wrapper");
            match serde_json::from_str::<unwrap::WrapperSpec>(&text) {
                Err(e) => {
                    panic!("profiles/wrappers.toml: wrapper `{name}` does not deserialise: {e}")
                }
                Ok(spec) => {
                    if let Err(e) = spec.validate() {
                        panic!("profiles/wrappers.toml: wrapper `{name}`: {e}");
                    }
                }
            }
            writeln!(out, "    ({name:?}, {text:?}),").ok();
        }
    }
    writeln!(out, "];").ok();

    // Rules: profiles/rules/*.toml, arrays [[rule]].
    writeln!(
        out,
        "/// Built-in safety rules: (id, keywords, TOML text, source file). A rule with no"
    )
    .ok();
    writeln!(out, "/// keywords is always evaluated.").ok();
    writeln!(out, "pub static RULES: &[(&str, &[&str], &str, &str)] = &[").ok();
    let mut ids = BTreeMap::new();
    let mut automata = Vec::new();
    for file in toml_files(&profiles.join("rules")) {
        let doc = read_table(&file);
        let source = format!("{}", file.strip_prefix(&root).unwrap_or(&file).display());
        for (key, value) in doc {
            if key != "rule" {
                panic!("{source}: unexpected top-level key `{key}` (expected [[rule]])");
            }
            let toml::Value::Array(rules) = value else {
                panic!("{source}: `rule` must be an array of tables")
            };
            for rule in rules {
                let id = rule
                    .get("id")
                    .and_then(|v| v.as_str())
                    .unwrap_or_else(|| panic!("{source}: a rule has no id"))
                    .to_string();
                let pattern = rule
                    .get("pattern")
                    .and_then(|v| v.as_str())
                    .unwrap_or_else(|| panic!("{source}: rule {id} has no pattern"));
                check_rule(&source, &id, &rule, pattern);
                let keywords = keywords(pattern).unwrap_or_default();
                if rule.get("platform").and_then(|v| v.as_str()) == Some("windows") {
                    ids.insert(id.clone(), source.clone());
                    continue;
                }
                if ids.insert(id.clone(), source.clone()).is_some() {
                    panic!("{source}: rule id `{id}` is defined twice");
                }
                let text = toml::to_string(&rule).expect("serialise rule");
                writeln!(out, "    ({id:?}, &{keywords:?}, {text:?}, {source:?}),").ok();
                automata.push((id.clone(), pattern.to_string(), rule.clone()));
            }
        }
    }
    writeln!(out, "];").ok();

    // Variables that load code or relocate configuration:
    // profiles/env/variables.toml, arrays [[variable]].
    writeln!(
        out,
        "/// Variables that load code: (what, names, scrub, fold, except, safe_values)."
    )
    .ok();
    writeln!(out, "pub static VARIABLES: &[VarGroup] = &[").ok();
    let vars = read_table(&profiles.join("env/variables.toml"));
    for (key, value) in &vars {
        if key != "variable" {
            panic!("profiles/env/variables.toml: unexpected top-level key `{key}`");
        }
        let toml::Value::Array(groups) = value else {
            panic!("profiles/env/variables.toml: `variable` must be an array of tables")
        };
        for g in groups {
            let strs = |k: &str| -> Vec<String> {
                g.get(k)
                    .and_then(|v| v.as_array())
                    .map(|a| {
                        a.iter()
                            .map(|x| {
                                x.as_str()
                                    .unwrap_or_else(|| {
                                        panic!("variables.toml: `{k}` holds a non-string")
                                    })
                                    .to_string()
                            })
                            .collect()
                    })
                    .unwrap_or_default()
            };
            for k in g
                .as_table()
                .map(|t| t.keys().cloned().collect::<Vec<_>>())
                .unwrap_or_default()
            {
                if !["what", "names", "scrub", "fold", "except", "safe_values"]
                    .contains(&k.as_str())
                {
                    panic!("profiles/env/variables.toml: unknown field `{k}`");
                }
            }
            let what = g
                .get("what")
                .and_then(|v| v.as_str())
                .unwrap_or_else(|| panic!("profiles/env/variables.toml: a group has no `what`"));
            let names = strs("names");
            if names.is_empty() {
                panic!("profiles/env/variables.toml: group `{what}` has no names");
            }
            let flag = |k: &str| g.get(k).and_then(|v| v.as_bool()).unwrap_or(false);
            writeln!(
                out,
                "    ({what:?}, &{names:?}, {}, {}, &{:?}, &{:?}),",
                flag("scrub"),
                flag("fold"),
                strs("except"),
                strs("safe_values")
            )
            .ok();
        }
    }
    writeln!(out, "];").ok();

    // Profiles: profiles/*.toml except wrappers.toml. Each as written (a
    // profile file may extend it: the loader merges the file over it) and
    // with its `extends` chain merged, as `profile::load` would merge it,
    // as JSON (what loading a built-in profile by name parses).
    let mut names = Vec::new();
    for file in toml_files(&profiles) {
        let stem = file
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_string();
        if stem != "wrappers" {
            names.push((stem, fs::read_to_string(&file).expect("read profile")));
        }
    }
    writeln!(out, "/// Built-in profiles: (name, TOML text).").ok();
    writeln!(out, "pub static PROFILES: &[(&str, &str)] = &[").ok();
    for (stem, text) in &names {
        writeln!(out, "    ({stem:?}, {text:?}),").ok();
    }
    writeln!(out, "];").ok();
    writeln!(
        out,
        "/// Built-in profiles merged: (name, JSON of the merged table, the `extends` chain)."
    )
    .ok();
    writeln!(
        out,
        "pub static PROFILE_DOCS: &[(&str, &str, &[&str])] = &["
    )
    .ok();
    for (stem, _) in &names {
        let mut chain = Vec::new();
        let mut table = merged_profile(&names, stem, &mut chain);
        // `name` is not inherited: a profile that does not set it is named
        // after itself (what `profile::load_checked` does).
        let declared = names
            .iter()
            .find(|(n, _)| n == stem)
            .and_then(|(_, t)| t.parse::<toml::Table>().ok())
            .and_then(|t| t.get("name").and_then(|n| n.as_str()).map(str::to_string));
        table.insert(
            "name".into(),
            toml::Value::String(declared.unwrap_or_else(|| stem.clone())),
        );
        let json = serde_json::to_string(&toml::Value::Table(table)).expect("serialise profile");
        writeln!(out, "    ({stem:?}, {json:?}, &{chain:?}),").ok();
    }
    writeln!(out, "];").ok();

    // Guard built-ins (src/config/patterns.rs).
    for f in [
        "src/config/patterns.rs",
        "src/config/registry.rs",
        "src/parse/model.rs",
        "src/parse/unwrap.rs",
        "src/config/keywords.rs",
        "src/profile/merge.rs",
    ] {
        println!("cargo:rerun-if-changed={f}");
    }
    if let Err(e) = toml::from_str::<patterns::Builtins>(patterns::BUILTIN) {
        panic!("src/config/patterns.rs: the built-in guard classes and patterns do not parse: {e}");
    }

    pack_relative_relocations();
    rule_automata(&automata);

    let dest = PathBuf::from(std::env::var("OUT_DIR").expect("out dir")).join("builtin_data.rs");
    fs::write(dest, out).expect("write generated data");
}

/// Built-in profile `name` with its `extends` chain merged under it, as
/// `profile::load_table` merges it; `chain` gets `builtin:NAME` of each,
/// this one first. A built-in profile may extend only another built-in one.
fn merged_profile(all: &[(String, String)], name: &str, chain: &mut Vec<String>) -> toml::Table {
    let source = format!("builtin:{name}");
    let file = format!("profiles/{name}.toml");
    if chain.len() > 8 || chain.contains(&source) {
        panic!("{file}: `extends` forms a cycle or is nested more than 8 levels deep");
    }
    chain.push(source);
    let text = &all
        .iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| {
            panic!(
                "profiles/{}: extends `{name}`, which is not a built-in profile",
                chain[0].trim_start_matches("builtin:")
            )
        })
        .1;
    let table: toml::Table = text.parse().unwrap_or_else(|e| panic!("{file}: {e}"));
    match table.get("extends").map(|v| v.as_str()) {
        None => table,
        Some(None) => panic!("{file}: `extends` must be a string"),
        Some(Some(parent)) => {
            if parent.contains('/') || parent.ends_with(".toml") {
                panic!("{file}: a built-in profile extends only a built-in one, not `{parent}`");
            }
            let parent = parent.to_string();
            let mut base = merged_profile(all, &parent, chain);
            merge::merge(&mut base, table);
            base.remove("extends");
            base.insert("extends".into(), toml::Value::String(parent));
            base
        }
    }
}

/// The shipped binary is a static PIE (musl, or glibc with `+crt-static`):
/// at every start, before `main`, the C library applies its ~10,000
/// relative relocations itself. Packed (`DT_RELR`, GNU ld >= 2.38; applied
/// in a static PIE's self-relocation by glibc >= 2.36 and musl >= 1.2.4,
/// Rust's own musl is 1.2.5) their table shrinks from ~250 KiB of
/// `.rela.dyn` that start-up reads to a few KiB. Only for static builds: a
/// dynamic binary with `DT_RELR` would need a C library that applies them
/// wherever it runs.
fn pack_relative_relocations() {
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    let static_crt = var("CARGO_CFG_TARGET_FEATURE")
        .split(',')
        .any(|f| f == "crt-static");
    // musl links statically unless `-C target-feature=-crt-static` says
    // otherwise (cargo does not always list its default `crt-static`).
    let env = var("CARGO_CFG_TARGET_ENV");
    let musl_static = env == "musl" && !var("CARGO_ENCODED_RUSTFLAGS").contains("-crt-static");
    if var("CARGO_CFG_TARGET_OS") == "linux" && ((static_crt && env == "gnu") || musl_static) {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

fn toml_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "toml"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

fn read_table(file: &Path) -> toml::Table {
    let text = fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    text.parse::<toml::Table>()
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

/// A built-in rule as `RuleDef` (src/config/rules.rs) reads it: the same
/// fields, values and regex engine, so the binary never meets a rule it
/// cannot compile (it would fail closed: block every command the rule's
/// keywords appear in).
fn check_rule(source: &str, id: &str, rule: &toml::Value, pattern: &str) {
    const REQUIRED: &[&str] = &[
        "id",
        "label",
        "description",
        "pattern",
        "category",
        "severity",
        "platform",
    ];
    let Some(table) = rule.as_table() else {
        panic!("{source}: rule `{id}` is not a table");
    };
    for key in REQUIRED {
        if !table.contains_key(*key) {
            panic!("{source}: rule `{id}` has no `{key}`");
        }
    }
    for (key, value) in table {
        match key.as_str() {
            "severity" if !matches!(value.as_str(), Some("critical" | "warning")) => {
                panic!("{source}: rule `{id}`: severity must be \"critical\" or \"warning\"")
            }
            "platform" if !matches!(value.as_str(), Some("all" | "unix" | "windows")) => {
                panic!("{source}: rule `{id}`: platform must be \"all\", \"unix\" or \"windows\"")
            }
            "examples" => {
                let Some(ex) = value.as_table() else {
                    panic!("{source}: rule `{id}`: `examples` must be a table");
                };
                for (k, v) in ex {
                    let list_of_strings =
                        v.as_array().is_some_and(|a| a.iter().all(|s| s.is_str()));
                    if !matches!(k.as_str(), "match" | "not_match") || !list_of_strings {
                        panic!(
                            "{source}: rule `{id}`: examples.{k} (only `match` and `not_match`, lists of strings)"
                        );
                    }
                }
            }
            k if REQUIRED.contains(&k) => {
                if !value.is_str() {
                    panic!("{source}: rule `{id}`: `{k}` must be a string");
                }
            }
            k => panic!("{source}: rule `{id}`: unknown field `{k}`"),
        }
    }
    if let Err(e) = regex::Regex::new(pattern) {
        panic!("{source}: rule `{id}`: the pattern does not compile: {e}");
    }
}

/// Each built-in rule's regex as a sparse DFA (`OUT_DIR/rule_automata.rs`,
/// read by src/config/rules.rs), so the binary answers "does it match" without
/// compiling the regex (~790,000 instructions a rule with the `regex` crate).
/// The DFA is built from the same pattern with the same syntax settings as
/// `regex::Regex::new` (Unicode on, UTF-8), without captures (only whether
/// it matches is asked), and with every non-ASCII byte a quit byte: it answers
/// exactly for ASCII text and stops with an error at the first non-ASCII
/// byte, when the binary compiles the regex as before. That also keeps the
/// Unicode classes (`\s`, `\w`, `\b`) small. A pattern the DFA builder
/// refuses or that grows past the limit gets no automaton (compiled at run
/// time, as before). Each automaton must agree with the regex on the rule's
/// examples here; src/config/rules.rs's tests compare them on many more.
fn rule_automata(rules: &[(String, String, toml::Value)]) {
    use regex_automata::dfa::{Automaton, StartKind, dense};
    use regex_automata::nfa::thompson;
    use regex_automata::{Input, MatchKind};
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("out dir"));
    let big_endian = std::env::var("CARGO_CFG_TARGET_ENDIAN").as_deref() == Ok("big");
    let mut table = String::new();
    writeln!(
        table,
        "/// Built-in rules' DFAs: (rule id, label, severity, sparse DFA bytes), generated by build.rs."
    )
    .ok();
    writeln!(
        table,
        "pub static RULE_AUTOMATA: &[(&str, &str, Severity, &[u8])] = &["
    )
    .ok();
    for (i, (id, pattern, rule)) in rules.iter().enumerate() {
        let mut config = dense::Config::new()
            .match_kind(MatchKind::All)
            .start_kind(StartKind::Unanchored)
            .minimize(true)
            .dfa_size_limit(Some(4 << 20))
            .determinize_size_limit(Some(16 << 20));
        for b in 0x80..=0xFF {
            config = config.quit(b, true);
        }
        let built = dense::Builder::new()
            .configure(config)
            .syntax(regex_automata::util::syntax::Config::new())
            .thompson(thompson::Config::new().which_captures(thompson::WhichCaptures::None))
            .build(pattern);
        let dfa = match built
            .map_err(Box::new)
            .and_then(|d| d.to_sparse().map_err(Box::new))
        {
            Ok(d) => d,
            Err(e) => {
                println!(
                    "cargo:warning=rule `{id}`: no build-time automaton ({e}); compiled at run time"
                );
                continue;
            }
        };
        let re = regex::Regex::new(pattern).expect("checked above");
        let examples = rule.get("examples");
        for key in ["match", "not_match"] {
            let list = examples.and_then(|e| e.get(key)).and_then(|l| l.as_array());
            for ex in list.into_iter().flatten().filter_map(|x| x.as_str()) {
                let got = dfa.try_search_fwd(&Input::new(ex).earliest(true));
                if let Ok(got) = got {
                    assert_eq!(
                        got.is_some(),
                        re.is_match(ex),
                        "rule `{id}`: the automaton and the regex disagree on {ex:?}"
                    );
                }
            }
        }
        let bytes = if big_endian {
            dfa.to_bytes_big_endian()
        } else {
            dfa.to_bytes_little_endian()
        };
        let file = format!("rule-{i}.dfa");
        fs::write(out_dir.join(&file), bytes).expect("write a rule automaton");
        // What a match reports, so a matching rule's TOML is not parsed
        // either (check_rule checked both fields).
        let label = rule.get("label").and_then(|v| v.as_str()).expect("label");
        let severity = match rule.get("severity").and_then(|v| v.as_str()) {
            Some("critical") => "Critical",
            _ => "Warning",
        };
        writeln!(
            table,
            "    ({id:?}, {label:?}, Severity::{severity}, include_bytes!(concat!(env!(\"OUT_DIR\"), \"/{file}\"))),"
        )
        .ok();
    }
    writeln!(table, "];").ok();
    fs::write(out_dir.join("rule_automata.rs"), table).expect("write rule_automata.rs");
}
