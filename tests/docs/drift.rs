//! Documentation that cannot drift from the code: every value type, option
//! effect and profile field is in docs/profile-format.md, every
//! `SAFE_EXEC_*` variable the code reads is in the man page, every doc link
//! in profiles/ exists, and every registry `suggest` is a command the
//! policy allows.

use std::path::{Path, PathBuf};

use safe_exec::decide::{CommandInput, decide, example_situation};
use safe_exec::policy::Decision;
use safe_exec::policy::registry::{CommandSpec, Effect, Form, ValueType};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(repo().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn files(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read_dir").flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, ext, out);
        } else if p.extension().is_some_and(|x| x == ext) {
            out.push(p);
        }
    }
}

/// Whether `doc` mentions `word` as code: `` `word` ``, `` `word = `` or
/// `` `!word` `` / `` `=word` ``.
fn mentions(doc: &str, word: &str) -> bool {
    [
        format!("`{word}`"),
        format!("`{word} ="),
        format!("`!{word}`"),
        format!("`={word}`"),
        format!("[{word}]"),
        format!("{word} = "),
    ]
    .iter()
    .any(|p| doc.contains(p.as_str()))
}

/// Every value type, effect and form (the enums the registry is
/// deserialised into) is mentioned in docs/profile-format.md.
#[test]
fn value_types_and_effects_are_documented() {
    let doc = read("docs/profile-format.md");
    let mut missing: Vec<String> = ValueType::ALL
        .iter()
        .filter(|t| !mentions(&doc, t.as_str()))
        .map(|t| format!("value type `{t}`"))
        .collect();
    missing.extend(
        Effect::ALL
            .iter()
            .filter(|e| !mentions(&doc, e.as_str()))
            .map(|e| format!("effect `!{e}`")),
    );
    missing.extend(
        Form::ALL
            .iter()
            .filter(|f| !mentions(&doc, f.as_str()))
            .map(|f| format!("form `{f}`")),
    );
    assert!(ValueType::ALL.len() >= 39 && Effect::ALL.len() >= 14 && Form::ALL.len() >= 7);
    assert!(
        missing.is_empty(),
        "docs/profile-format.md does not mention: {missing:?}"
    );
    // The check itself can fail.
    assert!(!mentions(&doc, "no_such_effect_xyz"));
}

/// Field names of a serialised value, as `section.field` paths, down to
/// `depth` levels (maps keyed by user data are empty in the defaults).
fn fields(v: &serde_json::Value, prefix: &str, depth: usize, out: &mut Vec<String>) {
    let Some(obj) = v.as_object() else { return };
    for (k, child) in obj {
        let path = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        out.push(path.clone());
        if depth > 1 {
            fields(child, &path, depth - 1, out);
        }
    }
}

#[test]
fn every_profile_field_is_documented() {
    let doc = read("docs/profile-format.md");
    let doc = format!("{doc}\n{}", read("docs/layers.md"));
    let doc = format!("{doc}\n{}", read("docs/audit.md"));
    let defaults = safe_exec::profile::schema::ProfileDoc::default();
    let v = serde_json::to_value(&defaults).expect("profile as JSON");
    let mut all = Vec::new();
    fields(&v, "", 3, &mut all);
    let missing: Vec<&String> = all
        .iter()
        .filter(|path| {
            let last = path.rsplit('.').next().unwrap_or(path);
            !mentions(&doc, last) && !mentions(&doc, path)
        })
        .collect();
    assert!(
        missing.is_empty(),
        "profile fields not in docs/profile-format.md (or docs/layers.md, docs/audit.md): {missing:?}"
    );
    assert!(all.len() > 40, "only {} fields found", all.len());
}

#[test]
fn every_environment_variable_is_in_the_man_page() {
    let mut srcs = Vec::new();
    files(&repo().join("src"), "rs", &mut srcs);
    let re = regex::Regex::new(r#""(SAFE_EXEC_[A-Z0-9_]+)""#).expect("regex");
    let mut vars: Vec<String> = srcs
        .iter()
        .flat_map(|p| {
            let text = std::fs::read_to_string(p).expect("source");
            re.captures_iter(&text)
                .map(|c| c[1].to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    vars.sort();
    vars.dedup();
    assert!(vars.len() >= 5, "found only {vars:?}");
    let man = std::process::Command::new(env!("CARGO_BIN_EXE_safe-exec"))
        .arg("man")
        .output()
        .expect("safe-exec man");
    assert!(man.status.success());
    let man = String::from_utf8_lossy(&man.stdout).replace("\\-", "-");
    let missing: Vec<&String> = vars.iter().filter(|v| !man.contains(v.as_str())).collect();
    assert!(missing.is_empty(), "not in `safe-exec man`: {missing:?}");
}

#[test]
fn doc_links_in_profiles_exist() {
    let mut tomls = Vec::new();
    files(&repo().join("profiles"), "toml", &mut tomls);
    let re = regex::Regex::new(r"docs/[A-Za-z0-9_./-]*[A-Za-z0-9_]").expect("regex");
    let mut seen = 0;
    let mut broken = Vec::new();
    for f in &tomls {
        let text = std::fs::read_to_string(f).expect("profile");
        for m in re.find_iter(&text) {
            seen += 1;
            if !repo().join(m.as_str()).is_file() {
                broken.push(format!("{}: {}", f.display(), m.as_str()));
            }
        }
    }
    assert!(seen > 0, "no doc links found: the pattern is wrong");
    assert!(broken.is_empty(), "links to missing docs: {broken:?}");
}

#[test]
fn every_registry_suggestion_is_allowed() {
    let profile = safe_exec::profile::load("default").expect("default profile");
    let sit = example_situation();
    let mut checked = 0;
    let mut bad = Vec::new();
    for (name, text, source) in safe_exec::builtin::registry() {
        let spec: CommandSpec = serde_json::from_str(text).expect("registry entry");
        for o in &spec.options {
            let Some(suggest) = o.spec().suggest.clone() else {
                continue;
            };
            checked += 1;
            let d = decide(
                &CommandInput::String {
                    text: suggest.clone(),
                    positional: Vec::new(),
                },
                &profile,
                &sit,
            );
            // A suggestion may still need the network (`git push
            // --force-with-lease` instead of `--force`): a confined decision
            // asks for that capability (issue 10, "needs network"), which is
            // not a refusal of the suggested spelling. Any other ask, and
            // any deny, is.
            let only_needs_network = d.verdict.decision == Decision::Ask
                && !d.verdict.reasons.is_empty()
                && d.verdict.reasons.iter().all(|r| r.rule == "network.needed");
            if d.verdict.decision != Decision::Allow && !only_needs_network {
                bad.push(format!(
                    "{source}: `{name}` suggests `{suggest}`, which is {:?}: {:?}",
                    d.verdict.decision, d.verdict.reasons
                ));
            }
        }
    }
    assert!(checked >= 5, "only {checked} suggestions found");
    assert!(bad.is_empty(), "{bad:#?}");
}
