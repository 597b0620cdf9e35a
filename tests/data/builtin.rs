//! Every built-in registry entry, wrapper and rule parses, and every example
//! it carries holds under the built-in profiles.

use safe_exec::builtin;
use safe_exec::decide::example_situation;
use safe_exec::policy::registry::check_builtin;
use safe_exec::policy::rules::RuleDef;
use safe_exec::profile;

#[test]
fn registry_entries_parse_and_are_well_formed() {
    let errs = check_builtin();
    assert!(errs.is_empty(), "registry problems:\n{}", errs.join("\n"));
    assert!(builtin::registry_len() > 500);
    assert_eq!(builtin::registry().count(), builtin::registry_len());
}

#[test]
fn registry_examples_hold_under_default() {
    let p = profile::load("default").expect("default profile loads");
    let errs = safe_exec::profile::examples::check_all(&p);
    assert!(
        errs.is_empty(),
        "{} failing registry examples:\n{}",
        errs.len(),
        errs.join("\n")
    );
}

#[test]
fn wrappers_parse() {
    for (name, text) in builtin::WRAPPERS {
        let spec: Result<safe_exec::parse::unwrap::WrapperSpec, _> = serde_json::from_str(text);
        assert!(spec.is_ok(), "wrapper {name}: {:?}", spec.err());
    }
}

#[test]
fn rule_examples_hold() {
    let p = profile::load("default").expect("default profile loads");
    let sit = example_situation();
    let mut errs = Vec::new();
    for (id, _, text, source) in builtin::RULES {
        let def: RuleDef = match toml::from_str(text) {
            Ok(d) => d,
            Err(e) => {
                errs.push(format!("{source}: rule {id}: {e}"));
                continue;
            }
        };
        if let Err(e) = regex::Regex::new(&def.pattern) {
            errs.push(format!("{source}: rule {id}: bad regex: {e}"));
            continue;
        }
        if def.platform == safe_exec::policy::rules::Platform::Windows {
            continue;
        }
        for ex in &def.examples.matches {
            let c = safe_exec::cli::classify_string(&p, ex, &sit);
            if !c.matched_rules.iter().any(|r| r == id) {
                errs.push(format!(
                    "rule {id}: `{ex}` must match (matched {:?})",
                    c.matched_rules
                ));
            }
        }
        for ex in &def.examples.not_match {
            let c = safe_exec::cli::classify_string(&p, ex, &sit);
            if c.matched_rules.iter().any(|r| r == id) {
                errs.push(format!("rule {id}: `{ex}` must not match"));
            }
        }
    }
    assert!(
        errs.is_empty(),
        "{} failing rule examples:\n{}",
        errs.len(),
        errs.join("\n")
    );
}

#[test]
fn builtin_profiles_load() {
    for name in profile::builtin_names() {
        let p = profile::load(name);
        assert!(p.is_ok(), "{name}: {:?}", p.err());
    }
}
