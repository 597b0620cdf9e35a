//! Profiles: loading (built-in or file), `extends`, validation with file,
//! line and column, selection (`--profile`, environment, user and system
//! config) and pinning by the system configuration.

pub mod examples;
mod merge;
pub mod select;

use std::path::Path;
use std::sync::Mutex;

use sha2::{Digest, Sha256};
use thiserror::Error;

use crate::builtin;
use crate::config::profile::ExpandCache;
use crate::config::registry::{self, Registry};
use crate::config::rules::{RuleDef, RuleSet};
pub use crate::config::schema;
pub use crate::config::{Placeholders, Profile, SYSTEM_ROOTS};
use merge::merge;
use schema::ProfileDoc;
pub use select::{Selection, SelectionInputs, select};

/// Why a profile could not be loaded. Each message says what to fix.
#[derive(Debug, Error)]
pub enum ProfileError {
    /// No built-in profile or file of that name.
    #[error("profile `{0}` not found: give a built-in name ({1}) or a path to a .toml file")]
    NotFound(String, String),
    /// The file could not be read.
    #[error("{file}: cannot read the profile: {err}")]
    Io {
        /// The file.
        file: String,
        /// The error.
        err: std::io::Error,
    },
    /// A syntax or schema error at a place in the file.
    #[error("{file}:{line}:{column}: {message}")]
    At {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// A semantic problem (bad rule, failing example, cycle).
    #[error("{file}: {message}")]
    Invalid {
        /// The file.
        file: String,
        /// What is wrong.
        message: String,
    },
    /// The selected profile would loosen the profile the system pins.
    #[error(
        "profile `{candidate}` would loosen `{pinned}`, which the system configuration pins: {what}. Choose `{pinned}` or a stricter profile"
    )]
    Loosens {
        /// The selected profile.
        candidate: String,
        /// The pinned one.
        pinned: String,
        /// What it would loosen.
        what: String,
    },
    /// A configuration file is malformed.
    #[error("{file}: {message}")]
    Config {
        /// The file.
        file: String,
        /// What is wrong.
        message: String,
    },
}

/// Names of the built-in profiles.
pub fn builtin_names() -> Vec<&'static str> {
    builtin::PROFILES.iter().map(|(n, _)| *n).collect()
}

/// Loads a built-in profile by name or a profile file by path, checking
/// every example its own registry entries and rules carry.
pub fn load(selector: &str) -> Result<Profile, ProfileError> {
    load_checked(selector, None)
}

/// [`load`], remembering in `checked` (a directory; the CLI uses
/// `~/.cache/safe-exec/profiles-checked`) the profiles whose
/// examples held, by the SHA-256 of the binary's identity and of every
/// file of the `extends` chain: the examples of a profile file are checked
/// when it is new or changed, not at every start (200 custom rules cost
/// ~60 ms per start otherwise), and so is each file's own schema check
/// (which only makes errors point at a line; the merged document is always
/// checked). Skipping them changes nothing that runs:
/// the rules apply as written either way; the examples are the author's
/// assertions about them. `profile check` always checks (it calls
/// [`load`]). A directory that cannot be written only loses the memo.
pub fn load_checked(selector: &str, checked: Option<&Path>) -> Result<Profile, ProfileError> {
    if let Some(loaded) = load_builtin(selector) {
        return loaded;
    }
    let mut chain = Vec::new();
    let mut declared = None;
    let mut key = Sha256::new();
    let mut files = Vec::new();
    let mut table = load_table(selector, &mut chain, 0, &mut declared, &mut key, &mut files)?;
    // `name` is not inherited: a file that does not set it is named after itself.
    if let Some(first) = chain.first() {
        let own = own_name(first);
        table.insert("name".into(), toml::Value::String(declared.unwrap_or(own)));
    }
    let source = chain.first().cloned().unwrap_or_default();
    // Built-in profiles carry no examples of their own to check.
    let memo = checked
        .filter(|_| !source.starts_with("builtin:"))
        .and_then(|dir| {
            let exe = binary_identity()?;
            key.update(exe.as_bytes());
            let hex: String = key.finalize().iter().map(|b| format!("{b:02x}")).collect();
            Some(dir.join(hex))
        });
    let known_good = memo.as_deref().is_some_and(|m| m.is_file());
    // Each file alone first, so errors point into it (line and column),
    // unless this very chain loaded before with this binary. A built-in
    // profile is checked by the test suite (every one loads); the merged
    // document is checked below either way.
    if !known_good {
        for (file, text) in &files {
            if let Err(e) = toml::from_str::<ProfileDoc>(text) {
                return Err(at(file, text, &e));
            }
        }
    }
    let doc: ProfileDoc = toml::Value::Table(table)
        .try_into()
        .map_err(|e: toml::de::Error| ProfileError::Invalid {
            file: source.clone(),
            message: e.message().to_string(),
        })?;
    let profile = finish(doc, source, chain, !known_good)?;
    if !known_good
        && let Some(m) = memo
        && let Some(dir) = m.parent()
        && std::fs::create_dir_all(dir).is_ok()
    {
        // A memo that cannot be written costs the check next time, nothing else.
        let _ = std::fs::write(&m, b"");
    }
    Ok(profile)
}

/// A built-in profile by name, from the document build.rs merged (its
/// `extends` chain applied, `name` set, exactly as [`load_table`] would
/// merge the built-in TOML texts: `data::builtin` tests both ways agree)
/// and embedded as JSON: no TOML parse and no merge at start-up. `None`
/// when `selector` is not a built-in profile's name.
fn load_builtin(selector: &str) -> Option<Result<Profile, ProfileError>> {
    if selector.contains('/') || selector.ends_with(".toml") {
        return None;
    }
    let (name, json, chain) = builtin::PROFILE_DOCS
        .iter()
        .find(|(n, _, _)| *n == selector)?;
    let source = format!("builtin:{name}");
    let doc = match serde_json::from_str::<ProfileDoc>(json) {
        Ok(doc) => doc,
        Err(e) => {
            return Some(Err(ProfileError::Invalid {
                file: source,
                message: e.to_string(),
            }));
        }
    };
    let chain = chain.iter().map(|c| c.to_string()).collect();
    Some(finish(doc, source, chain, false))
}

/// The built-in profile `name` loaded from its TOML text (as a profile file
/// extending it sees it), not from the merged document build.rs embedded:
/// what the tests compare [`load`] with.
#[doc(hidden)]
pub fn load_builtin_from_toml(name: &str) -> Result<Profile, ProfileError> {
    let mut chain = Vec::new();
    let mut declared = None;
    let mut key = Sha256::new();
    let mut files = Vec::new();
    let mut table = load_table(name, &mut chain, 0, &mut declared, &mut key, &mut files)?;
    let own = chain.first().map(|f| own_name(f)).unwrap_or_default();
    table.insert("name".into(), toml::Value::String(declared.unwrap_or(own)));
    let source = chain.first().cloned().unwrap_or_default();
    let doc: ProfileDoc = toml::Value::Table(table)
        .try_into()
        .map_err(|e: toml::de::Error| ProfileError::Invalid {
            file: source.clone(),
            message: e.message().to_string(),
        })?;
    finish(doc, source, chain, false)
}

/// What identifies the running binary for the examples memo: its size,
/// modification time and inode (a rebuilt or upgraded binary may decide the
/// examples differently). `None` when it cannot be found.
fn binary_identity() -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata("/proc/self/exe").ok()?;
    Some(format!(
        "{}:{}:{}.{}:{}",
        env!("CARGO_PKG_VERSION"),
        m.len(),
        m.mtime(),
        m.mtime_nsec(),
        m.ino()
    ))
}

fn own_name(source: &str) -> String {
    source
        .trim_start_matches("builtin:")
        .rsplit('/')
        .next()
        .unwrap_or("profile")
        .trim_end_matches(".toml")
        .to_string()
}

fn finish(
    doc: ProfileDoc,
    source: String,
    chain: Vec<String>,
    check_examples: bool,
) -> Result<Profile, ProfileError> {
    let invalid = |message: String| ProfileError::Invalid {
        file: source.clone(),
        message,
    };
    let mut errs = Vec::new();
    for (name, spec) in &doc.commands {
        errs.extend(registry::check_spec(name, spec));
    }
    for op in &doc.shell.operators {
        if crate::parse::Operator::from_spelling(op).is_none() {
            errs.push(format!(
                "[shell] operators: `{op}` is not one of &&, ||, ;, |, &"
            ));
        }
    }
    // The guard's built-in patterns are parsed only when something uses them.
    if doc.guard.enabled || !doc.guard.pattern.is_empty() || !doc.guard.class.is_empty() {
        errs.extend(crate::guard::check_config(&doc.guard));
    }
    if doc.policy.unknown_constructs == schema::Action::Allow {
        errs.push("[policy] unknown_constructs = \"allow\" is not possible: what cannot be checked is never allowed; use \"ask\" or \"deny\"".into());
    }
    if !errs.is_empty() {
        return Err(invalid(errs.join("; ")));
    }
    let name = if doc.name.is_empty() {
        source
            .trim_start_matches("builtin:")
            .rsplit('/')
            .next()
            .unwrap_or("profile")
            .trim_end_matches(".toml")
            .to_string()
    } else {
        doc.name.clone()
    };
    let profile = Profile {
        name,
        registry: Registry::new(doc.commands.clone()),
        rules: RuleSet::new(&doc.rule),
        doc,
        source: source.clone(),
        chain,
        expanded: Mutex::new(ExpandCache::default()),
    };
    // Custom rules and registry overrides carry examples that must hold.
    if check_examples && !source.starts_with("builtin:") {
        let errs = examples::check_profile_examples(&profile);
        if !errs.is_empty() {
            return Err(invalid(errs.join("; ")));
        }
    }
    Ok(profile)
}

/// Reads `selector` and its `extends` chain into one table; `declared` gets
/// the `name` the first file (depth 0) sets, if any.
fn load_table(
    selector: &str,
    chain: &mut Vec<String>,
    depth: usize,
    declared: &mut Option<String>,
    key: &mut Sha256,
    files: &mut Vec<(String, String)>,
) -> Result<toml::Table, ProfileError> {
    if depth > 8 {
        return Err(ProfileError::Invalid {
            file: selector.into(),
            message: "`extends` is nested more than 8 levels deep (a cycle?)".into(),
        });
    }
    let (source, text) = read_source(selector)?;
    if chain.contains(&source) {
        return Err(ProfileError::Invalid {
            file: source,
            message: "`extends` forms a cycle".into(),
        });
    }
    chain.push(source.clone());
    // A built-in profile's text is part of the binary, whose identity the
    // key holds already: hashing it at every start cost more than the rest
    // of loading it.
    let hashed: &[&[u8]] = if source.starts_with("builtin:") {
        &[source.as_bytes()]
    } else {
        &[source.as_bytes(), text.as_bytes()]
    };
    for part in hashed {
        key.update((part.len() as u64).to_le_bytes());
        key.update(part);
    }
    if !source.starts_with("builtin:") {
        files.push((source.clone(), text.clone()));
    }
    let table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| at(&source, &text, &e))?;
    if depth == 0 {
        *declared = table
            .get("name")
            .and_then(|n| n.as_str())
            .map(str::to_string);
    }
    match table
        .get("extends")
        .and_then(|v| v.as_str())
        .map(str::to_string)
    {
        Some(parent) => {
            let parent = parent.as_str();
            let parent_sel = resolve_relative(parent, &source);
            let mut base = load_table(&parent_sel, chain, depth + 1, declared, key, files)?;
            merge(&mut base, table);
            base.remove("extends");
            base.insert("extends".into(), toml::Value::String(parent.to_string()));
            Ok(base)
        }
        None => Ok(table),
    }
}

fn resolve_relative(parent: &str, source: &str) -> String {
    if parent.contains('/')
        && !parent.starts_with('/')
        && !source.starts_with("builtin:")
        && let Some(dir) = Path::new(source).parent()
    {
        return dir.join(parent).to_string_lossy().into_owned();
    }
    parent.to_string()
}

fn read_source(selector: &str) -> Result<(String, String), ProfileError> {
    if !selector.contains('/') && !selector.ends_with(".toml") {
        if let Some((_, text)) = builtin::PROFILES.iter().find(|(n, _)| *n == selector) {
            return Ok((format!("builtin:{selector}"), text.to_string()));
        }
        return Err(ProfileError::NotFound(
            selector.into(),
            builtin_names().join(", "),
        ));
    }
    let text = std::fs::read_to_string(selector).map_err(|err| {
        if err.kind() == std::io::ErrorKind::NotFound {
            ProfileError::NotFound(selector.into(), builtin_names().join(", "))
        } else {
            ProfileError::Io {
                file: selector.into(),
                err,
            }
        }
    })?;
    Ok((selector.to_string(), text))
}

fn at(file: &str, text: &str, e: &toml::de::Error) -> ProfileError {
    let (line, column) = match e.span() {
        Some(span) => line_col(text, span.start),
        None => (1, 1),
    };
    let mut message = e.message().trim().to_string();
    if message.contains("unknown field") {
        message
            .push_str(" (remove it or fix its spelling; docs/profile-format.md lists every key)");
    }
    ProfileError::At {
        file: file.into(),
        line,
        column,
        message,
    }
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit('\n')
        .next()
        .map(|l| l.chars().count())
        .unwrap_or(0)
        + 1;
    (line, column)
}

impl Profile {
    /// Everything in which `self` is looser than `pinned` (empty: at least as strict).
    pub fn loosens(&self, pinned: &Profile) -> Vec<String> {
        let (a, b) = (&self.doc, &pinned.doc);
        let mut out = Vec::new();
        if a.policy.mode > b.policy.mode {
            out.push(format!(
                "mode `{}` above `{}`",
                a.policy.mode.as_str(),
                b.policy.mode.as_str()
            ));
        }
        if a.policy.allow_dangerous && !b.policy.allow_dangerous {
            out.push("allow_dangerous".into());
        }
        for (x, y, what) in [
            (
                a.policy.unknown_commands,
                b.policy.unknown_commands,
                "unknown_commands",
            ),
            (
                a.policy.unknown_constructs,
                b.policy.unknown_constructs,
                "unknown_constructs",
            ),
            (a.policy.above_mode, b.policy.above_mode, "above_mode"),
            (a.policy.critical, b.policy.critical, "critical"),
        ] {
            if x < y {
                out.push(format!("[policy] {what}"));
            }
        }
        let subset = |x: &[String], y: &[String]| x.iter().all(|i| y.contains(i));
        if !subset(&a.paths.read, &b.paths.read) {
            out.push("[paths] read".into());
        }
        if !subset(&a.paths.write, &b.paths.write) {
            out.push("[paths] write".into());
        }
        if !subset(&b.paths.deny_read, &a.paths.deny_read) {
            out.push("[paths] deny_read".into());
        }
        if !subset(&a.paths.runtime, &b.paths.runtime) {
            out.push("[paths] runtime".into());
        }
        if a.shell.interpreter != b.shell.interpreter {
            out.push("[shell] interpreter".into());
        }
        if !subset(&b.paths.broad, &a.paths.broad) {
            out.push("[paths] broad".into());
        }
        let limits = |l: &schema::LimitsSection| {
            [
                l.core,
                l.file_size,
                l.open_files,
                l.processes,
                l.cpu_seconds,
                l.address_space,
            ]
        };
        for (i, (x, y)) in limits(&a.sandbox.limits)
            .iter()
            .zip(limits(&b.sandbox.limits))
            .enumerate()
        {
            let looser = match (x, y) {
                (_, None) => false,
                (None, Some(_)) => true,
                (Some(x), Some(y)) => x > &y,
            };
            if looser {
                let names = [
                    "core",
                    "file_size",
                    "open_files",
                    "processes",
                    "cpu_seconds",
                    "address_space",
                ];
                out.push(format!("[sandbox.limits] {}", names[i]));
            }
        }
        if a.confirmation.timeout_seconds > b.confirmation.timeout_seconds {
            out.push("[confirmation] timeout_seconds".into());
        }
        if a.shell.max_depth > b.shell.max_depth
            || a.shell.max_segments > b.shell.max_segments
            || a.shell.max_length > b.shell.max_length
        {
            out.push("[shell] limits".into());
        }
        if !subset(&a.shell.trusted_source_dirs, &b.shell.trusted_source_dirs) {
            out.push("[shell] trusted_source_dirs".into());
        }
        if b.policy.hook_file_tools && !a.policy.hook_file_tools {
            out.push("[policy] hook_file_tools".into());
        }
        if !subset(&a.shell.operators, &b.shell.operators) {
            out.push("[shell] operators".into());
        }
        for (x, y, what) in [
            (a.shell.redirections, b.shell.redirections, "redirections"),
            (
                a.shell.substitutions,
                b.shell.substitutions,
                "substitutions",
            ),
            (
                a.shell.process_substitutions,
                b.shell.process_substitutions,
                "process_substitutions",
            ),
            (a.shell.heredocs, b.shell.heredocs, "heredocs"),
            (a.shell.groups, b.shell.groups, "groups"),
            (a.shell.control_flow, b.shell.control_flow, "control_flow"),
        ] {
            if x && !y {
                out.push(format!("[shell] {what}"));
            }
        }
        if a.sandbox.network > b.sandbox.network {
            out.push("[sandbox] network".into());
        }
        if a.sandbox.unix_sockets && !b.sandbox.unix_sockets {
            out.push("[sandbox] unix_sockets".into());
        }
        if a.sandbox.sysv_ipc && !b.sandbox.sysv_ipc {
            out.push("[sandbox] sysv_ipc".into());
        }
        if !subset(&a.sandbox.capabilities, &b.sandbox.capabilities) {
            out.push("[sandbox] capabilities".into());
        }
        if !subset(&a.sandbox.devices, &b.sandbox.devices) {
            out.push("[sandbox] devices".into());
        }
        if a.sandbox.enforcement != b.sandbox.enforcement
            && b.sandbox.enforcement == crate::sandbox::Enforcement::Required
        {
            out.push("[sandbox] enforcement".into());
        }
        if b.sandbox.timeout_seconds > 0
            && (a.sandbox.timeout_seconds == 0
                || a.sandbox.timeout_seconds > b.sandbox.timeout_seconds)
        {
            out.push("[sandbox] timeout_seconds".into());
        }
        if a.doc_env_looser(b) {
            out.push("[env]".into());
        }
        for (name, value) in &a.env.set {
            if b.env.set.get(name) != Some(value)
                && (crate::policy::variables::dangerous(name, Some(value)).is_some()
                    || crate::policy::variables::scrubbed(name).is_some())
            {
                out.push(format!("[env] set {name}"));
            }
        }
        if !subset(&b.paths.protected, &a.paths.protected) {
            out.push("[paths] protected".into());
        }
        if !subset(&b.paths.secret_names, &a.paths.secret_names) {
            out.push("[paths] secret_names".into());
        }
        out.extend(unjudged_differences(a, b));
        for (name, spec) in &a.commands {
            let same = b
                .commands
                .get(name)
                .is_some_and(|s| serde_json::to_string(s).ok() == serde_json::to_string(spec).ok());
            if !same && spec.maturity != registry::Maturity::Blocked {
                out.push(format!("[commands.\"{name}\"]"));
            }
        }
        for r in &b.rule {
            if !a
                .rule
                .iter()
                .any(|x| x.id == r.id && x.pattern == r.pattern)
            {
                out.push(format!("rule `{}` dropped", r.id));
            }
        }
        out.extend(crate::validator::loosens(&a.validator, &b.validator));
        out.extend(crate::guard::loosens(&a.guard, &b.guard));
        out.extend(crate::hooks::loosens(&a.hook, &b.hook));
        out.extend(crate::audit::loosens(&a.audit, &b.audit));
        out
    }
}

/// Settings `loosens` compares one by one (each judged stricter or looser).
/// Any other setting that differs from the pinned profile counts as
/// loosening: a section or field added later is covered by the pin without
/// anyone remembering to add it here.
const JUDGED: &[&str] = &[
    "name",
    "description",
    "extends",
    "policy.mode",
    "policy.allow_dangerous",
    "policy.unknown_commands",
    "policy.unknown_constructs",
    "policy.above_mode",
    "policy.critical",
    "policy.hook_file_tools",
    "paths.read",
    "paths.write",
    "paths.deny_read",
    "paths.runtime",
    "paths.broad",
    "paths.protected",
    "paths.secret_names",
    "shell.interpreter",
    "shell.max_depth",
    "shell.max_segments",
    "shell.max_length",
    "shell.trusted_source_dirs",
    "shell.operators",
    "shell.redirections",
    "shell.substitutions",
    "shell.process_substitutions",
    "shell.heredocs",
    "shell.groups",
    "shell.control_flow",
    "sandbox.limits",
    "sandbox.network",
    "sandbox.unix_sockets",
    "sandbox.enforcement",
    "sandbox.timeout_seconds",
    "confirmation.timeout_seconds",
    "env.mode",
    "env.remove",
    "env.allow",
    "env.set",
    "commands",
    "rule",
    "validator",
    "guard",
    "hook",
    "audit",
];

/// Every setting (dotted path) where `a` differs from `b` and that
/// `loosens` does not judge: counted as loosening.
fn unjudged_differences(a: &ProfileDoc, b: &ProfileDoc) -> Vec<String> {
    fn flatten(
        prefix: &str,
        v: &serde_json::Value,
        out: &mut std::collections::BTreeMap<String, serde_json::Value>,
    ) {
        match v {
            serde_json::Value::Object(m) if !JUDGED.contains(&prefix) => {
                for (k, x) in m {
                    let p = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    flatten(&p, x, out);
                }
            }
            _ => {
                out.insert(prefix.to_string(), v.clone());
            }
        }
    }
    let (Ok(x), Ok(y)) = (serde_json::to_value(a), serde_json::to_value(b)) else {
        return vec!["the profile cannot be compared with the pinned one".into()];
    };
    let (mut fa, mut fb) = (
        std::collections::BTreeMap::new(),
        std::collections::BTreeMap::new(),
    );
    flatten("", &x, &mut fa);
    flatten("", &y, &mut fb);
    let keys: std::collections::BTreeSet<&String> = fa.keys().chain(fb.keys()).collect();
    keys.into_iter()
        .filter(|k| {
            !JUDGED
                .iter()
                .any(|j| *k == j || k.starts_with(&format!("{j}.")))
        })
        .filter(|k| fa.get(*k) != fb.get(*k))
        .map(|k| format!("{k} differs from the pinned profile"))
        .collect()
}

trait EnvLooser {
    fn doc_env_looser(&self, other: &ProfileDoc) -> bool;
}

impl EnvLooser for ProfileDoc {
    fn doc_env_looser(&self, other: &ProfileDoc) -> bool {
        use crate::sandbox::env::EnvMode;
        (self.env.mode == EnvMode::Inherit && other.env.mode == EnvMode::Allowlist)
            || !other.env.remove.iter().all(|r| self.env.remove.contains(r))
            || (self.env.mode == EnvMode::Allowlist
                && !self.env.allow.iter().all(|n| other.env.allow.contains(n)))
    }
}

/// A custom rule's example matches this rule (used when loading).
pub fn rule_matches(rule: &RuleDef, example: &str) -> bool {
    let ctx = crate::parse::ParseContext::new("/work/project".into(), "/home/user".into());
    let model = crate::parse::parse_string(example, &ctx);
    let set = RuleSet::new(std::slice::from_ref(rule));
    let views = crate::policy::rules::views(&model, &[], Some(example));
    set.classify_views(&views).matched_rules.contains(&rule.id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule_file(dir: &Path, example: &str) -> String {
        let p = dir.join("p.toml");
        std::fs::write(
            &p,
            format!(
                "extends = \"default\"\n\n[[rule]]\nid = \"memo-rule\"\nlabel = \"l\"\ndescription = \"d\"\npattern = '^memotool( |$)'\ncategory = \"c\"\nseverity = \"warning\"\nplatform = \"all\"\nexamples = {{ match = [\"{example}\"], not_match = [\"ls\"] }}\n"
            ),
        )
        .expect("write profile");
        p.to_string_lossy().into_owned()
    }

    #[test]
    fn examples_memo_is_keyed_by_content_and_never_remembers_a_failure() {
        let d = tempfile::tempdir().expect("tmp");
        let memo = d.path().join("checked");
        // A failing example: refused at every load, nothing remembered.
        let bad = rule_file(d.path(), "other --x");
        for _ in 0..2 {
            let e = load_checked(&bad, Some(&memo)).expect_err("failing example");
            assert!(e.to_string().contains("must match"), "{e}");
        }
        assert!(!memo.exists() || std::fs::read_dir(&memo).expect("ls").count() == 0);
        // Good: loads and is remembered (one memo file).
        let good = rule_file(d.path(), "memotool --x");
        load_checked(&good, Some(&memo)).expect("good profile");
        assert_eq!(std::fs::read_dir(&memo).expect("ls").count(), 1);
        load_checked(&good, Some(&memo)).expect("remembered profile");
        // Changed back to failing: a new content, checked again.
        let bad = rule_file(d.path(), "other --x");
        assert!(load_checked(&bad, Some(&memo)).is_err());
        // Without a memo directory (`profile check`), always checked.
        assert!(load(&bad).is_err());
        // A schema error still points at its line and column.
        std::fs::write(&bad, "extends = \"default\"\n[policy]\nmode = 5\n").expect("w");
        let e = load_checked(&bad, Some(&memo)).expect_err("schema error");
        assert!(matches!(e, ProfileError::At { line: 3, .. }), "{e}");
    }
}
