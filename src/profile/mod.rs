//! Profiles: loading (built-in or file), `extends`, validation with file,
//! line and column, selection (`--profile`, environment, user and system
//! config) and pinning by the system configuration.

pub mod cache;
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
pub use crate::config::{Placeholders, Profile, RefusedRoot};
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
    load_cached(selector, checked, None)
}

/// [`load_checked`], with the loaded-profile cache of a profile file in
/// `cache` (the CLI uses `{state}/profiles`; see [`cache`] for why there and
/// what makes an entry trusted): a file whose chain is unchanged since it
/// last loaded with this binary is taken from its entry instead of parsing
/// its TOML; any other load writes the entry. Built-in profiles are not
/// cached (they are part of the binary).
pub fn load_cached(
    selector: &str,
    checked: Option<&Path>,
    cache: Option<&Path>,
) -> Result<Profile, ProfileError> {
    if let Some(loaded) = load_builtin(selector) {
        return loaded;
    }
    let is_file = selector.contains('/') || selector.ends_with(".toml");
    let entry = cache.filter(|_| is_file).and_then(|dir| {
        let exe = binary_identity()?;
        let path = cache::entry_path(dir, selector, &exe)?;
        Some((path, exe))
    });
    if let Some((path, exe)) = &entry
        && let Some(c) = cache::lookup(path, selector, exe)
    {
        return finish(c.doc, c.source, c.chain, false);
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
        for (file, text, _) in &files {
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
    // The document as loaded, for the cache entry (`finish` keeps its own).
    let cached_doc = entry.as_ref().map(|_| doc.clone());
    let profile = finish(doc, source, chain, !known_good)?;
    if let (Some((path, exe)), Some(doc)) = (&entry, cached_doc) {
        // An entry that cannot be written costs the parse next time, nothing else.
        let _ = cache::store(
            path,
            selector,
            exe,
            files.into_iter().map(|(_, _, id)| id).collect(),
            &profile.source,
            &profile.chain,
            &doc,
        );
    }
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
        rules: std::sync::Arc::new(RuleSet::with_custom(&doc.rule)),
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
    files: &mut Vec<(String, String, cache::FileId)>,
) -> Result<toml::Table, ProfileError> {
    if depth > 8 {
        return Err(ProfileError::Invalid {
            file: selector.into(),
            message: "`extends` is nested more than 8 levels deep (a cycle?)".into(),
        });
    }
    let (source, text, id) = read_source(selector)?;
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
    // Each file with its identity, for the cache (a built-in has none).
    if let Some(id) = id {
        files.push((source.clone(), text.clone(), id));
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

fn read_source(selector: &str) -> Result<(String, String, Option<cache::FileId>), ProfileError> {
    if !selector.contains('/') && !selector.ends_with(".toml") {
        if let Some((_, text)) = builtin::PROFILES.iter().find(|(n, _)| *n == selector) {
            return Ok((format!("builtin:{selector}"), text.to_string(), None));
        }
        return Err(ProfileError::NotFound(
            selector.into(),
            builtin_names().join(", "),
        ));
    }
    let (text, id) = cache::read_file(selector).map_err(|err| {
        if err.kind() == std::io::ErrorKind::NotFound {
            ProfileError::NotFound(selector.into(), builtin_names().join(", "))
        } else {
            ProfileError::Io {
                file: selector.into(),
                err,
            }
        }
    })?;
    Ok((selector.to_string(), text, Some(id)))
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
        match (a.rule.defs(), b.rule.defs()) {
            (Ok(ar), Ok(br)) => {
                for r in br {
                    if !ar.iter().any(|x| x.id == r.id && x.pattern == r.pattern) {
                        out.push(format!("rule `{}` dropped", r.id));
                    }
                }
            }
            // A rule that cannot be read cannot be shown to be kept.
            (Err(e), _) | (_, Err(e)) => out.push(format!("rules: {e}")),
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
    let ctx = crate::parse::ParseContext::new(
        std::path::Path::new("/work/project"),
        std::path::Path::new("/home/user"),
    );
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

    /// A profile file that exercises most of the document: custom rules,
    /// registry overrides, paths, env, guard, extends of a file.
    fn rich_profile(dir: &Path, severity: &str) -> String {
        let base = dir.join("base.toml");
        std::fs::write(
            &base,
            "extends = \"strict\"\n[paths]\ndeny_read = [\"{home}/.ssh\", \"{state}\", \"/srv/x\"]\n[env]\nremove = [\"FOO_*\"]\n",
        )
        .expect("write base");
        let p = dir.join("p.toml");
        let mut text = String::from(
            "extends = \"./base.toml\"\nname = \"rich\"\n[policy]\nunknown_commands = \"deny\"\n[shell]\nmax_segments = 50\n",
        );
        for i in 0..20 {
            text.push_str(&format!(
                "\n[[rule]]\nid = \"r{i}\"\nlabel = \"l{i}\"\ndescription = \"d\"\npattern = '(?i)^(tool{i}|other{i})\\s+--x'\ncategory = \"c\"\nseverity = \"{severity}\"\nplatform = \"all\"\nexamples = {{ match = [\"tool{i} --x\"], not_match = [\"ls\"] }}\n"
            ));
        }
        std::fs::write(&p, text).expect("write profile");
        p.to_string_lossy().into_owned()
    }

    fn same(a: &Profile, b: &Profile) {
        assert_eq!(a.name, b.name);
        assert_eq!(a.source, b.source);
        assert_eq!(a.chain, b.chain);
        assert_eq!(
            serde_json::to_value(&a.doc).expect("json"),
            serde_json::to_value(&b.doc).expect("json")
        );
        let ids = |p: &Profile| {
            p.rules
                .rules()
                .iter()
                .map(|r| r.id().to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(ids(a), ids(b));
    }

    fn entries(dir: &Path) -> Vec<std::path::PathBuf> {
        std::fs::read_dir(dir)
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default()
    }

    #[test]
    fn cached_profile_is_the_profile_its_files_give() {
        let d = tempfile::tempdir().expect("tmp");
        let cache = d.path().join("state/profiles");
        let file = rich_profile(d.path(), "critical");
        let fresh = load(&file).expect("load");
        let first = load_cached(&file, None, Some(&cache)).expect("first load");
        assert_eq!(entries(&cache).len(), 1, "one entry written");
        let hit = load_cached(&file, None, Some(&cache)).expect("from the cache");
        same(&fresh, &first);
        same(&fresh, &hit);
        // The same decisions, and a custom rule still matches.
        let c = hit.rules.classify_views(&["TOOL3 --x".to_string()]);
        assert_eq!(c.matched_rules, vec!["r3".to_string()]);
        assert_eq!(c.severity, crate::config::rules::Severity::Critical);
        // Built-in profiles are part of the binary: never cached.
        load_cached("strict", None, Some(&cache)).expect("builtin");
        assert_eq!(entries(&cache).len(), 1);
    }

    #[test]
    fn a_cache_entry_is_never_trusted_for_changed_files() {
        let d = tempfile::tempdir().expect("tmp");
        let cache = d.path().join("profiles");
        let file = rich_profile(d.path(), "critical");
        load_cached(&file, None, Some(&cache)).expect("load");
        // The same size, the same modification time, another rule id: the
        // change time and the content hash tell.
        let meta = std::fs::metadata(&file).expect("meta");
        let text = std::fs::read_to_string(&file).expect("read");
        std::fs::write(&file, text.replace("id = \"r1\"", "id = \"q1\"")).expect("w");
        let f = std::fs::File::options()
            .write(true)
            .open(&file)
            .expect("open");
        f.set_modified(meta.modified().expect("mtime"))
            .expect("set mtime");
        drop(f);
        assert_eq!(std::fs::metadata(&file).expect("meta").len(), meta.len());
        let p = load_cached(&file, None, Some(&cache)).expect("reload");
        let c = p.rules.classify_views(&["tool1 --x".to_string()]);
        assert_eq!(c.matched_rules, vec!["q1".to_string()], "stale entry used");
        same(&load(&file).expect("fresh"), &p);
        // A changed parent in the chain counts too.
        let base = d.path().join("base.toml");
        let t = std::fs::read_to_string(&base).expect("base");
        std::fs::write(&base, t.replace("/srv/x", "/srv/y")).expect("w");
        let p = load_cached(&file, None, Some(&cache)).expect("reload");
        assert!(
            p.doc.paths.deny_read.contains(&"/srv/y".to_string()),
            "{:?}",
            p.doc.paths.deny_read
        );
        // A removed parent: the load fails as it would without a cache.
        std::fs::remove_file(&base).expect("rm");
        assert!(load_cached(&file, None, Some(&cache)).is_err());
    }

    #[test]
    fn a_corrupt_truncated_or_foreign_entry_is_ignored_and_rebuilt() {
        let d = tempfile::tempdir().expect("tmp");
        let cache = d.path().join("profiles");
        let file = rich_profile(d.path(), "critical");
        let fresh = load(&file).expect("load");
        load_cached(&file, None, Some(&cache)).expect("load");
        let entry = entries(&cache).pop().expect("entry");
        let good = std::fs::read_to_string(&entry).expect("read");
        let (head, doc) = good.split_once('\n').expect("two parts");
        // A forged document under a valid header would be trusted: that is
        // why the entry lives where only safe-exec writes (see cache.rs).
        // Everything that does not check out is ignored and rewritten.
        let loosen = |s: &str| s.replace("\"critical\"", "\"warning\"");
        let binary = head.replacen("\"binary\":\"", "\"binary\":\"other-", 1);
        let files = head.replacen("\"hash\":", "\"hash\":1", 1);
        let format = head.replacen("\"format\":1", "\"format\":9", 1);
        let selector = head.replacen("\"selector\":\"", "\"selector\":\"x", 1);
        for bad in [
            String::new(),
            good[..good.len() / 2].to_string(),
            good[..head.len()].to_string(),
            format!("{head}\n{{"),
            "garbage\n{}".to_string(),
            format!("{binary}\n{}", loosen(doc)),
            format!("{files}\n{}", loosen(doc)),
            format!("{format}\n{}", loosen(doc)),
            format!("{selector}\n{}", loosen(doc)),
            format!(
                "{}\n{}",
                head.replacen("\"files\":[", "\"files\":[]]", 1),
                loosen(doc)
            ),
        ] {
            std::fs::write(&entry, &bad).expect("write bad entry");
            let p = load_cached(&file, None, Some(&cache)).expect("loads from the files");
            same(&fresh, &p);
            assert_eq!(
                p.rules.classify_views(&["tool1 --x".to_string()]).severity,
                crate::config::rules::Severity::Critical
            );
            let now = std::fs::read_to_string(&entry).expect("rebuilt");
            assert_eq!(
                now.split_once('\n').map(|x| x.1),
                Some(doc),
                "entry rebuilt"
            );
        }
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

    /// A profile with custom rules of every kind: plain leading literals
    /// (warning and critical), patterns whose keywords need the regex
    /// parsed, one with no keyword at all, a Windows rule, one replacing a
    /// built-in rule, and a registry entry.
    fn lazy_profile(dir: &Path) -> String {
        let p = dir.join("lazy.toml");
        let mut text = String::from(
            "extends = \"default\"\n[commands.plaintool]\nsummary = \"t\"\nrisk = \"safe\"\nmaturity = \"experimental\"\noperands = [\"literal*\"]\nexamples = { deny = [\"plaintool x\"] }\n",
        );
        let rule = |id: &str, pattern: &str, severity: &str, platform: &str, m: &str| {
            format!(
                "\n[[rule]]\nid = \"{id}\"\nlabel = \"label of {id}\"\ndescription = \"d\"\npattern = '{pattern}'\ncategory = \"c\"\nseverity = \"{severity}\"\nplatform = \"{platform}\"\nexamples = {{ match = [{m}], not_match = [\"ls\"] }}\n"
            )
        };
        for i in 0..60 {
            let sev = if i % 3 == 0 { "critical" } else { "warning" };
            text.push_str(&rule(
                &format!("lazy-{i}"),
                &format!("^lazytool{i}( |$)"),
                sev,
                "all",
                &format!("\"lazytool{i} --x\""),
            ));
        }
        for i in 0..10 {
            text.push_str(&rule(
                &format!("re-{i}"),
                &format!("(?i)(^|\\s)(foo{i}|bar{i})\\s+--(force|yes)"),
                "critical",
                "all",
                &format!("\"FOO{i} --force\", \"x bar{i} --yes\""),
            ));
        }
        text.push_str(&rule(
            "no-keyword",
            "^[a-z]{40,}$",
            "warning",
            "unix",
            &format!("\"{}\"", "q".repeat(41)),
        ));
        text.push_str(&rule("win", "^wintool", "critical", "windows", ""));
        // Several keywords (any one of them).
        text.push_str(&rule(
            "multi",
            "(^|\\s)(alphatool|betatool)( |$)",
            "critical",
            "all",
            "\"alphatool x\", \"y betatool\"",
        ));
        // A built-in rule replaced by a weaker one of the same id.
        text.push_str(&rule(
            "fs-rm-root",
            "^rm -rf /$",
            "warning",
            "all",
            "\"rm -rf /\"",
        ));
        std::fs::write(&p, text).expect("write profile");
        p.to_string_lossy().into_owned()
    }

    /// Commands for the lazy profile: its rules' examples and variants,
    /// the built-in rules' examples, and the tldr corpus when it is there.
    fn lazy_commands() -> Vec<String> {
        let mut out: Vec<String> = vec![
            "ls -la".into(),
            "git status && cargo test".into(),
            "rm -rf /".into(),
            "rm -rf ~".into(),
            "wintool".into(),
            "plaintool x".into(),
            "alphatool x".into(),
            "echo betatool".into(),
            "betatoolx".into(),
            "q".repeat(41),
            "echo lazytool3".into(),
            "lazytool3x".into(),
            "sudo lazytool6 --x".into(),
            "bash -c 'lazytool9 now'".into(),
            "x=1 lazytool12 && lazytool13 | lazytool14".into(),
            "python3 -c 'import os; os.system(\"lazytool15\")'".into(),
            "foo3 --force".into(),
            "FOO3\t--force".into(),
            "echo \"bar4 --yes\"".into(),
            "lazytool1é --x".into(),
        ];
        for i in 0..60 {
            out.push(format!("lazytool{i} --x"));
            out.push(format!("cat f | lazytool{i}"));
        }
        for r in RuleSet::new(&[]).rules() {
            if let Ok((d, _)) = r.compiled() {
                out.extend(d.examples.matches.iter().cloned());
                out.extend(d.examples.not_match.iter().cloned());
            }
        }
        // Real agents' commands (in the repository, so a clone anywhere has
        // them) and, when it is beside the checkout, the tldr corpus.
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        for (file, column) in [
            (root.join("tests/data/agent-commands.tsv"), 2),
            (root.join("../shared/corpus/tldr-common-linux.tsv"), 3),
        ] {
            if let Ok(t) = std::fs::read_to_string(file) {
                out.extend(
                    t.lines()
                        .skip(1)
                        .step_by(7)
                        .filter_map(|l| l.split('\t').nth(column))
                        .map(str::to_string),
                );
            }
        }
        out
    }

    fn verdicts(p: &Profile, commands: &[String]) -> Vec<serde_json::Value> {
        let sit = crate::decide::example_situation();
        commands
            .iter()
            .map(|c| {
                let d = crate::decide::decide(
                    &crate::decide::CommandInput::String {
                        text: c.clone(),
                        positional: vec!["sh".into()],
                    },
                    p,
                    &sit,
                );
                serde_json::json!([c, d.verdict])
            })
            .collect()
    }

    fn parsed(p: &Profile) -> Vec<String> {
        p.doc
            .rule
            .iter()
            .filter(|r| r.is_parsed())
            .map(|r| r.id().to_string())
            .collect()
    }

    #[test]
    fn cached_rules_are_parsed_only_when_their_keyword_appears() {
        let d = tempfile::tempdir().expect("tmp");
        let cache = d.path().join("profiles");
        let file = lazy_profile(d.path());
        load_cached(&file, None, Some(&cache)).expect("first load");
        let p = load_cached(&file, None, Some(&cache)).expect("from the cache");
        assert_eq!(p.doc.rule.len(), 74);
        assert!(parsed(&p).is_empty(), "{:?}", parsed(&p));
        // Keywords as the file's rules have them: none, one, several.
        let kw = |id: &str| {
            let r = p.doc.rule.iter().find(|r| r.id() == id).expect("rule");
            r.keywords().map(str::to_string).collect::<Vec<_>>()
        };
        assert_eq!(kw("lazy-7"), vec!["lazytool7"]);
        assert_eq!(kw("no-keyword"), Vec::<String>::new());
        assert_eq!(kw("multi").len(), 2, "{:?}", kw("multi"));
        let fresh = load(&file).expect("fresh");
        for r in fresh.doc.rule.iter() {
            assert_eq!(r.keywords().collect::<Vec<_>>(), kw(r.id()), "{}", r.id());
        }
        assert!(parsed(&p).is_empty(), "{:?}", parsed(&p));
        // A command with no keyword: only the rule without keywords is read.
        verdicts(&p, &["ls -la".to_string(), "git status".to_string()]);
        assert_eq!(parsed(&p), vec!["no-keyword".to_string()]);
        verdicts(&p, &["lazytool7 x".to_string()]);
        assert_eq!(parsed(&p), vec!["lazy-7", "no-keyword"]);
        // The `re-` rules' keyword is `--` (their one required literal).
        verdicts(&p, &["x FOO2 --yes".to_string()]);
        assert_eq!(parsed(&p).len(), 12, "{:?}", parsed(&p));
        // The exec-time judge shares the profile's rule set: what it reads
        // is parsed once, for both.
        let judge = crate::policy::exec_judge(std::sync::Arc::clone(&p.rules));
        let labels = judge.critical(&["lazytool9 now".to_string()]);
        assert_eq!(labels, vec!["label of lazy-9 (lazy-9)".to_string()]);
        assert!(parsed(&p).contains(&"lazy-9".to_string()));
        assert!(judge.critical(&["lazytool10 now".to_string()]).is_empty());
    }

    #[test]
    fn cached_lazy_rules_decide_as_the_rules_loaded_from_the_file() {
        let d = tempfile::tempdir().expect("tmp");
        let cache = d.path().join("profiles");
        let file = lazy_profile(d.path());
        let eager = load(&file).expect("load");
        load_cached(&file, None, Some(&cache)).expect("first load");
        let lazy = load_cached(&file, None, Some(&cache)).expect("from the cache");
        assert!(parsed(&lazy).is_empty(), "not from the cache");
        let commands = lazy_commands();
        assert!(commands.len() > 500, "{}", commands.len());
        let (a, b) = (verdicts(&eager, &commands), verdicts(&lazy, &commands));
        let mut denied = 0;
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x, y);
            denied += usize::from(x[1]["decision"] == "deny");
        }
        assert!(denied > 50, "{denied}");
        // The exec-time judge too, on each command as one view.
        let (je, jl) = (
            crate::policy::exec_judge(std::sync::Arc::clone(&eager.rules)),
            crate::policy::exec_judge(std::sync::Arc::clone(&lazy.rules)),
        );
        for c in &commands {
            let v = std::slice::from_ref(c);
            assert_eq!(je.critical(v), jl.critical(v), "{c}");
        }
        // And the document, rules and all, once they are read.
        same(&eager, &lazy);
        assert_eq!(parsed(&lazy).len(), 74);
    }

    #[test]
    fn a_damaged_rule_in_a_cache_entry_is_ignored_or_blocks() {
        let d = tempfile::tempdir().expect("tmp");
        let cache = d.path().join("profiles");
        let file = lazy_profile(d.path());
        let fresh = load(&file).expect("load");
        load_cached(&file, None, Some(&cache)).expect("load");
        let entry = entries(&cache).pop().expect("entry");
        let good = std::fs::read_to_string(&entry).expect("read");
        let (head, body) = good.split_once('\n').expect("two parts");
        let hash = cache::body_hash(body.as_bytes());
        assert!(head.contains(&format!("\"body\":{hash}")), "{head}");
        let weaker = body.replace("\"severity\":\"critical\"", "\"severity\":\"warning\"");
        // (Of the same length: the header has where each line ends.)
        let broken = body.replace("{\"id\":\"lazy-3\",", "{\"id\":\"lazy-3\";");
        let swapped = body.replace("{\"id\":\"lazy-3\",", "{\"id\":\"lazy-4\",");
        // Damage anywhere in the rules (a changed severity, a definition
        // that does not parse, a line dropped) under the header's hash: the
        // entry is ignored as a whole and rebuilt from the files.
        let dropped: String = body
            .split('\n')
            .filter(|l| !l.contains("\tlazy-3\t"))
            .collect::<Vec<_>>()
            .join("\n");
        let unreadable = body.replace("\tlazy-3\t", "\tlazy-3");
        for bad in [&weaker, &broken, &dropped, &unreadable] {
            assert_ne!(bad, body);
            std::fs::write(&entry, format!("{head}\n{bad}")).expect("write");
            let p = load_cached(&file, None, Some(&cache)).expect("from the files");
            same(&fresh, &p);
            assert_eq!(std::fs::read_to_string(&entry).expect("rebuilt"), good);
        }
        // A rule line that does not parse, or is another rule's, under a
        // hash that matches (what only a writer of the state directory
        // could make): the rule is not dropped, it blocks every command
        // with its keyword; the others decide as before.
        let rehash = |b: &str| {
            head.replace(
                &format!("\"body\":{hash}"),
                &format!("\"body\":{}", cache::body_hash(b.as_bytes())),
            )
        };
        // A line whose id and keywords cannot be read: ignored.
        std::fs::write(&entry, format!("{}\n{unreadable}", rehash(&unreadable))).expect("write");
        same(
            &fresh,
            &load_cached(&file, None, Some(&cache)).expect("from the files"),
        );
        assert_eq!(std::fs::read_to_string(&entry).expect("rebuilt"), good);
        for bad in [&broken, &swapped] {
            std::fs::write(&entry, format!("{}\n{bad}", rehash(bad))).expect("write");
            let p = load_cached(&file, None, Some(&cache)).expect("from the entry");
            let v = verdicts(
                &p,
                &["lazytool3 --x".to_string(), "lazytool4 --x".to_string()],
            );
            assert_eq!(v[0][1]["decision"], "deny", "{}", v[0]);
            let c = p.rules.classify_views(&["lazytool3 --x".to_string()]);
            assert_eq!(c.severity, crate::config::rules::Severity::Critical);
            assert!(c.matches[0].1.contains("profile cache"), "{c:?}");
            assert_eq!(v[1], verdicts(&fresh, &["lazytool4 --x".to_string()])[0]);
            // What needs every definition says so instead of dropping one.
            assert!(p.doc.rule.defs().is_err());
            assert!(serde_json::to_value(&p.doc).is_err());
        }
    }

    #[test]
    fn a_broken_rule_in_the_file_fails_the_load_with_or_without_the_cache() {
        let d = tempfile::tempdir().expect("tmp");
        let cache = d.path().join("profiles");
        let file = lazy_profile(d.path());
        load_cached(&file, None, Some(&cache)).expect("cached");
        let text = std::fs::read_to_string(&file).expect("read");
        for (bad, want) in [
            (
                text.replace("^lazytool5( |$)", "^lazytool5(( |$)"),
                "not a valid regex",
            ),
            (
                text.replace("^lazytool5( |$)", "^lazytoolX( |$)"),
                "must match",
            ),
            (
                text.replace("id = \"lazy-5\"", "id = \"lazy-5\"\nfoo = 1"),
                "unknown field",
            ),
            (
                text.replace("id = \"lazy-5\"", "id = \"lazy-4\""),
                "defined twice",
            ),
        ] {
            std::fs::write(&file, &bad).expect("write");
            let want_err = load(&file).expect_err("broken").to_string();
            assert!(want_err.contains(want), "{want_err}");
            for _ in 0..2 {
                let e = load_cached(&file, None, Some(&cache)).expect_err("still broken");
                assert_eq!(e.to_string(), want_err);
            }
        }
        std::fs::write(&file, &text).expect("write");
        load_cached(&file, None, Some(&cache)).expect("good again");
    }
}
