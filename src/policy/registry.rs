//! The command registry: what each program (and subcommand) is, what its
//! options and operands mean, and how risky it is. The data lives in
//! `profiles/registry/*.toml`; a profile may override entries. Entries are
//! parsed lazily, only for the programs a command actually uses.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::builtin;

/// How far an entry is trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Maturity {
    /// Modelled and tested.
    #[default]
    Stable,
    /// Partly modelled: needs very strong confirmation.
    Experimental,
    /// Never runs; the entry's `reason` says why and what to use instead.
    Blocked,
}

/// How much a command can change.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, Default, Hash,
)]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    /// Reads only.
    #[default]
    Safe,
    /// Writes inside the allowed roots.
    Write,
    /// Destroys, escalates, or reaches beyond the roots.
    Dangerous,
}

impl Risk {
    /// The spelling used in profiles and output.
    pub fn as_str(self) -> &'static str {
        match self {
            Risk::Safe => "safe",
            Risk::Write => "write",
            Risk::Dangerous => "dangerous",
        }
    }
}

/// What to do with an option the entry does not list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum UnknownOptions {
    /// Ask for confirmation (the option might run or write something).
    #[default]
    Ask,
    /// Accept it as a flag without a value (read-only tools).
    Allow,
    /// Refuse.
    Deny,
}

/// How the program spells its options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum OptionStyle {
    /// getopt_long: `-abc` clusters, `-ofile`, `--long=value`, unique
    /// abbreviations of long options, options after operands.
    #[default]
    Gnu,
    /// Like GNU, but options end at the first operand (POSIX getopt).
    Posix,
    /// Options are whole words with one dash (`find -name`, `java -jar`).
    SingleDash,
    /// Nothing is an option (`echo`, `printf`).
    None,
}

/// One registry entry (a program or a subcommand such as `git push`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandSpec {
    /// One line on what it does, shown by `--explain`.
    pub summary: String,
    /// Base risk before options and operands are considered; `write` when
    /// omitted (a program that works on the project: the sandbox confines
    /// its writes to the roots).
    #[serde(default = "default_risk")]
    pub risk: Risk,
    /// Trust in the entry.
    #[serde(default)]
    pub maturity: Maturity,
    /// Why it is blocked or experimental, and what to use instead.
    #[serde(default)]
    pub reason: Option<String>,
    /// Contacts other hosts.
    #[serde(default)]
    pub network_touching: bool,
    /// Operands that make the command reach other hosts, matched against
    /// the first operands (`["install", "add", "pip install"]`): `bun
    /// install` needs the network, `bun test` does not.
    #[serde(default)]
    pub network_when: Vec<String>,
    /// Runs code or scripts given to it (`python`, `node`, `bash script.sh`):
    /// at least `write` risk; the sandbox contains what the validator cannot see.
    #[serde(default)]
    pub interpreter: bool,
    /// Option syntax.
    #[serde(default)]
    pub option_style: OptionStyle,
    /// Options, in the compact form `"-o --output =write_path !write"`
    /// (see docs/profile-format.md), or tables with a `reason`.
    #[serde(default)]
    pub options: Vec<OptionEntry>,
    /// Operand types in order with quantifiers: `["literal", "read_path*"]`.
    #[serde(default)]
    pub operands: Vec<String>,
    /// Alternative operand lists used when one of the named options is
    /// present (`grep -e PAT` makes every operand a path).
    #[serde(default)]
    pub operands_with: BTreeMap<String, Vec<String>>,
    /// The first operand selects a subcommand entry (`git` → `git push`).
    #[serde(default)]
    pub subcommands: bool,
    /// What to do with options the entry does not list.
    #[serde(default)]
    pub unknown_options: UnknownOptions,
    /// A structured form (seed 002) the whole command must match:
    /// `archive_extract`, `archive_create`, `archive_list`, `ping`, `curl_head`, `dns`.
    #[serde(default)]
    pub form: Option<String>,
    /// Commands that must and must not be allowed with this entry, checked
    /// when the profile loads and in the tests. Required (non-empty) when
    /// the entry has options that matter (see [`CommandSpec::needs_examples`]).
    #[serde(default)]
    pub examples: Examples,
}

fn default_risk() -> Risk {
    Risk::Write
}

impl CommandSpec {
    /// The options or traits that make this entry special, which its
    /// examples must cover: options that run programs, write, delete, need
    /// the network, ask or are blocked; network use; a structured form.
    /// An entry without any of these needs no examples.
    pub fn needs_examples(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.network_touching || !self.network_when.is_empty() {
            out.push("network".to_string());
        }
        if self.form.is_some() {
            out.push("form".to_string());
        }
        for o in self.options.iter().filter_map(|o| o.parse().ok()) {
            let special = o.effects.iter().any(|e| {
                matches!(
                    e,
                    Effect::Exec
                        | Effect::Dangerous
                        | Effect::Network
                        | Effect::Blocked
                        | Effect::Ask
                        | Effect::Delete
                )
            }) || matches!(o.value_type.as_str(), "command" | "write_path" | "code");
            if special {
                out.push(o.names.join(" "));
            }
        }
        out
    }
}

/// Example commands for an entry.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Examples {
    /// Must be allowed under the default profile.
    #[serde(default)]
    pub allow: Vec<String>,
    /// Must not be allowed (ask or deny) under the default profile.
    #[serde(default)]
    pub deny: Vec<String>,
}

/// An option as written in the registry: the compact string or a table.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum OptionEntry {
    /// `"-o --output =write_path !write"`
    Spec(String),
    /// `{ spec = "...", reason = "..." }`
    Detailed {
        /// The compact spec.
        spec: String,
        /// Why the option has the effect it has.
        reason: String,
        /// A safer command that does the job (must itself pass the policy).
        #[serde(default)]
        suggest: Option<String>,
    },
}

/// A parsed option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionSpec {
    /// All spellings: `-o`, `--output`.
    pub names: Vec<String>,
    /// Whether a value is required, optional (attached only), or absent.
    pub value: ValueKind,
    /// Type of the value.
    pub value_type: String,
    /// Effects of using the option.
    pub effects: Vec<Effect>,
    /// Explanation shown with the effect.
    pub reason: Option<String>,
    /// A safer alternative.
    pub suggest: Option<String>,
}

/// Whether an option takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// A flag.
    None,
    /// `-o FILE`, `-oFILE`, `--output=FILE`, `--output FILE`.
    Required,
    /// Only attached: `-i.bak`, `--color=auto`.
    Optional,
}

/// What using an option does to the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Effect {
    /// Risk at least `write`.
    Write,
    /// Risk `dangerous`.
    Dangerous,
    /// Runs another program: refused unless the profile allows dangerous.
    Exec,
    /// Contacts the network.
    Network,
    /// Operates recursively (with a broad target: dangerous).
    Recursive,
    /// Deletes its operands (operands become write targets).
    Delete,
    /// Never allowed.
    Blocked,
    /// Needs confirmation.
    Ask,
    /// Starts an exec template that runs to `;` or `+` (`find -exec`).
    Template,
    /// Operands become write targets (`cp -t`, `tee`-like).
    WritesOperands,
    /// The option's value is inline code (`python -c`).
    Code,
    /// Narrows what a deleting command touches (`find -name X -delete`), so
    /// the operands are not a broad deletion.
    Filter,
    /// Reads its operands recursively (`cp -r`, `grep -r`): a tree that holds
    /// a protected path is refused.
    ReadsTree,
    /// Options end after this one: the rest are operands for what it runs
    /// (`python3 -m venv --without-pip`).
    Last,
}

impl OptionEntry {
    /// Parses the compact spec.
    pub fn parse(&self) -> Result<OptionSpec, String> {
        let (spec, reason, suggest) = match self {
            OptionEntry::Spec(s) => (s.as_str(), None, None),
            OptionEntry::Detailed {
                spec,
                reason,
                suggest,
            } => (spec.as_str(), Some(reason.clone()), suggest.clone()),
        };
        let mut out = OptionSpec {
            names: Vec::new(),
            value: ValueKind::None,
            value_type: String::new(),
            effects: Vec::new(),
            reason,
            suggest,
        };
        for tok in spec.split_whitespace() {
            if let Some(t) = tok.strip_prefix("?=") {
                out.value = ValueKind::Optional;
                out.value_type = t.to_string();
            } else if let Some(t) = tok.strip_prefix('=') {
                out.value = ValueKind::Required;
                out.value_type = t.to_string();
            } else if let Some(e) = tok.strip_prefix('!') {
                match EFFECTS.iter().find(|(name, _)| *name == e) {
                    Some((_, effect)) => out.effects.push(*effect),
                    None => return Err(format!("unknown effect `!{e}` in option `{spec}`")),
                }
            } else if tok.starts_with('-') || tok.starts_with('+') {
                out.names.push(tok.to_string());
            } else {
                return Err(format!(
                    "`{tok}` in option `{spec}`: expected an option name (-x, --long), =TYPE, ?=TYPE or !effect"
                ));
            }
        }
        if out.names.is_empty() {
            return Err(format!("option `{spec}` names no option"));
        }
        if !out.value_type.is_empty() && !VALUE_TYPES.contains(&out.value_type.as_str()) {
            return Err(format!(
                "unknown type `{}` in option `{spec}`; known types: {}",
                out.value_type,
                VALUE_TYPES.join(", ")
            ));
        }
        Ok(out)
    }
}

/// The option effects (`!NAME` in a compact spec) and what each means: the
/// one list the parser, the docs test and the registry checks use.
pub const EFFECTS: &[(&str, Effect)] = &[
    ("write", Effect::Write),
    ("dangerous", Effect::Dangerous),
    ("exec", Effect::Exec),
    ("network", Effect::Network),
    ("recursive", Effect::Recursive),
    ("delete", Effect::Delete),
    ("blocked", Effect::Blocked),
    ("ask", Effect::Ask),
    ("template", Effect::Template),
    ("writes_operands", Effect::WritesOperands),
    ("code", Effect::Code),
    ("last", Effect::Last),
    ("filter", Effect::Filter),
    ("reads_tree", Effect::ReadsTree),
];

/// Types an option value or operand can have.
pub const VALUE_TYPES: &[&str] = &[
    "literal",
    "pid",
    "process_pattern",
    "digits",
    "rustc_codegen",
    "chdir",
    "read_path",
    "write_path",
    "path",
    "dir",
    "count",
    "url",
    "host",
    "code",
    "command",
    "git_config",
    "sed_script",
    "awk_program",
    "opaque",
    "signal",
    "user",
    "mode",
    "archive",
    "regex",
    "pattern",
    "domain",
    "package",
    "env_assignment",
    "script",
    "refspec",
    "destroy_path",
    "link_target",
    "hardlink_target",
    "sync_src",
    "git_config_key",
    "read_tree",
    "npm_config_action",
    "dd_operand",
    "sync_dest",
];

/// A registry: the built-in entries plus a profile's overrides.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    overrides: BTreeMap<String, Arc<CommandSpec>>,
}

impl Registry {
    /// A registry with a profile's overrides on top of the built-in entries.
    pub fn new(overrides: BTreeMap<String, CommandSpec>) -> Self {
        Self {
            overrides: overrides
                .into_iter()
                .map(|(k, v)| (k, Arc::new(v)))
                .collect(),
        }
    }

    /// The entry for a program or subcommand (`"git push"`), if any.
    pub fn get(&self, name: &str) -> Option<Arc<CommandSpec>> {
        if let Some(s) = self.overrides.get(name) {
            return Some(s.clone());
        }
        let idx = builtin::REGISTRY
            .binary_search_by(|(n, _, _)| (*n).cmp(name))
            .ok()?;
        // Each built-in entry is parsed once per process, when a command
        // first names it (decideperf: parsing `git`'s entry at every lookup
        // was a third of an in-process decision).
        static PARSED: std::sync::OnceLock<Box<[std::sync::OnceLock<Arc<CommandSpec>>]>> =
            std::sync::OnceLock::new();
        let cache = PARSED.get_or_init(|| {
            (0..builtin::REGISTRY.len())
                .map(|_| std::sync::OnceLock::new())
                .collect()
        });
        Some(cache[idx].get_or_init(|| parse_builtin(idx, name)).clone())
    }

    /// Names of all entries (built-in and overrides).
    pub fn names(&self) -> Vec<String> {
        let mut v: Vec<String> = builtin::REGISTRY
            .iter()
            .map(|(n, _, _)| n.to_string())
            .collect();
        v.extend(self.overrides.keys().cloned());
        v.sort();
        v.dedup();
        v
    }

    /// The profile's own overrides.
    pub fn overrides(&self) -> impl Iterator<Item = (&String, &Arc<CommandSpec>)> {
        self.overrides.iter()
    }
}

/// Parses built-in entry `idx`. build.rs deserialises and checks every
/// built-in entry, so this cannot fail; if it still did, the command is
/// refused with the reason (never treated as unknown, never allowed).
fn parse_builtin(idx: usize, name: &str) -> Arc<CommandSpec> {
    let spec = toml::from_str::<CommandSpec>(builtin::REGISTRY[idx].1).unwrap_or_else(|e| {

            CommandSpec {
                summary: format!("broken built-in registry entry `{name}`"),
                risk: Risk::Dangerous,
                maturity: Maturity::Blocked,
                reason: Some(format!(
                    "the built-in registry entry for `{name}` does not deserialise ({e}); this is a bug in safe-exec"
                )),
                network_touching: false,
                network_when: Vec::new(),
                interpreter: false,
                option_style: OptionStyle::default(),
                options: Vec::new(),
                operands: Vec::new(),
                operands_with: BTreeMap::new(),
                subcommands: false,
                unknown_options: UnknownOptions::Deny,
                form: None,
                examples: Examples::default(),
            }
        });
    Arc::new(spec)
}

/// Parses every built-in entry, reporting the first problems: used by
/// `profile check` and the tests.
pub fn check_builtin() -> Vec<String> {
    let mut errs = Vec::new();
    for (name, text, source) in builtin::REGISTRY {
        match toml::from_str::<CommandSpec>(text) {
            Ok(spec) => errs.extend(
                check_spec(name, &spec)
                    .into_iter()
                    .map(|e| format!("{source}: {e}")),
            ),
            Err(e) => errs.push(format!("{source}: command `{name}`: {e}")),
        }
    }
    errs
}

/// Static checks of one entry (its option specs and operand types).
pub fn check_spec(name: &str, spec: &CommandSpec) -> Vec<String> {
    let mut errs = Vec::new();
    for o in &spec.options {
        if let Err(e) = o.parse() {
            errs.push(format!("command `{name}`: {e}"));
        }
    }
    let all_operands = spec
        .operands
        .iter()
        .chain(spec.operands_with.values().flatten());
    for op in all_operands {
        let t = op.trim_end_matches(['*', '+', '?']);
        if !VALUE_TYPES.contains(&t) {
            errs.push(format!("command `{name}`: unknown operand type `{op}`"));
        }
    }
    let special = spec.needs_examples();
    if !special.is_empty() && spec.examples.allow.is_empty() && spec.examples.deny.is_empty() {
        errs.push(format!(
            "command `{name}` has options that matter ({}) but no examples; add [command.\"{name}\".examples] allow/deny",
            special.join(", ")
        ));
    }
    errs
}
