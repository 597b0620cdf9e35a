//! Examples carried by registry entries and rules are executable
//! documentation: they are checked when a profile file loads (for the
//! entries it defines), by `safe-exec profile check`, and by the test suite
//! (for every built-in entry).

use super::rule_matches;
use crate::config::Profile;
use crate::decide::{CommandInput, decide, example_situation};
use crate::policy::Decision;
use crate::policy::registry::CommandSpec;
use crate::policy::rules::validate_custom;

/// Checks one entry's examples under `profile`; returns the failures.
pub fn check_entry(profile: &Profile, name: &str, spec: &CommandSpec) -> Vec<String> {
    let sit = example_situation();
    let mut errs = Vec::new();
    let run = |ex: &str| {
        decide(
            &CommandInput::String {
                text: ex.to_string(),
                positional: vec!["sh".into()],
            },
            profile,
            &sit,
        )
    };
    for ex in &spec.examples.allow {
        let d = run(ex);
        if d.verdict.decision != Decision::Allow {
            errs.push(format!(
                "command `{name}`: example `{ex}` must be allowed but is {}: {}",
                d.verdict.decision.as_str(),
                d.verdict.refusal_line()
            ));
        }
    }
    for ex in &spec.examples.deny {
        let d = run(ex);
        if d.verdict.decision == Decision::Allow {
            errs.push(format!(
                "command `{name}`: example `{ex}` must not be allowed but is"
            ));
        }
    }
    errs
}

/// Checks the examples of a profile's own entries and rules.
pub fn check_profile_examples(profile: &Profile) -> Vec<String> {
    let mut errs = Vec::new();
    for (name, spec) in profile.registry.overrides() {
        errs.extend(check_entry(profile, name, spec));
    }
    match profile.doc.rule.defs() {
        Ok(defs) => {
            let defs: Vec<_> = defs.into_iter().cloned().collect();
            errs.extend(validate_custom(&defs, &|r, ex| rule_matches(r, ex)));
        }
        Err(e) => errs.push(e),
    }
    errs
}

/// Checks every registry entry's examples (built-in and overrides).
pub fn check_all(profile: &Profile) -> Vec<String> {
    let mut errs = Vec::new();
    for name in profile.registry.names() {
        match profile.registry.get(&name) {
            Some(spec) => errs.extend(check_entry(profile, &name, &spec)),
            None => errs.push(format!("command `{name}`: the entry does not parse")),
        }
    }
    errs
}
