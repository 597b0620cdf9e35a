//! The command registry: what each program (and subcommand) is, what its
//! options and operands mean, and how risky it is. The data lives in
//! `profiles/registry/*.toml`; a profile may override entries. Entries are
//! parsed lazily, only for the programs a command actually uses.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::builtin;

/// Declares a closed vocabulary of the data: an enum whose variants are
/// spelled in profiles and output as the given strings, each with a
/// one-line description (also its doc). It gets `ALL`, `as_str`,
/// `description`, `from_name`, `Display`, and serde impls through the
/// spelling: an unknown spelling fails to deserialise, naming the known
/// ones, so a broken built-in entry fails the build (build.rs) and a
/// broken profile fails to load.
macro_rules! vocabulary {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident ($what:literal) {
            $($variant:ident = $text:literal: $desc:literal,)*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        $vis enum $name {
            $(#[doc = $desc] $variant,)*
        }

        impl $name {
            /// Every value, in the order declared.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The spelling used in profiles and output.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)*
                }
            }

            /// What it means, in one line.
            pub const fn description(self) -> &'static str {
                match self {
                    $($name::$variant => $desc,)*
                }
            }

            /// The value spelled `s`, if there is one.
            pub fn from_name(s: &str) -> Option<Self> {
                match s {
                    $($text => Some($name::$variant),)*
                    _ => None,
                }
            }

            /// Why `s` is not a value: names the known spellings.
            pub fn unknown(s: &str) -> String {
                let known: Vec<&str> = Self::ALL.iter().map(|v| v.as_str()).collect();
                format!("unknown {} `{s}`; known: {}", $what, known.join(", "))
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                Self::from_name(&s).ok_or_else(|| serde::de::Error::custom(Self::unknown(&s)))
            }
        }
    };
}
#[allow(unused_imports)] // used by policy::reason; not by build.rs
pub(crate) use vocabulary;

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
    /// Options that stop an `interpreter` from running the project's code
    /// (`javac -proc:none`: no annotation processors; `cargo package
    /// --no-verify`: no verification build): with one of them an
    /// unconfined run is judged like any other tool. Each must be one of
    /// the entry's options (checked at build time).
    #[serde(default)]
    pub code_off: Vec<String>,
    /// Reads files named *inside* its input, which the policy does not
    /// parse (`#include`, `include_str!`): unconfined, any run that reads
    /// input asks (the names are content).
    #[serde(default)]
    pub reads_named: bool,
    /// Takes options from a file named by an operand `@FILE` (gcc, clang,
    /// javac, rustc response files): unconfined, such an operand asks
    /// (the options in the file are not seen).
    #[serde(default)]
    pub response_files: bool,
    /// Programs it runs by a bare name found through `PATH` (git's `ssh`
    /// for a network remote, `gpg` to sign, the editor): unconfined, one
    /// that the caller's `PATH` finds first in a directory inside a
    /// writable root (an activated venv's `bin/`) is a program of the
    /// project, and the command asks (review 10 R6). Names, `*` globs
    /// (`git-credential-*`), and `$VAR` for the first word of an
    /// environment variable's value (`$GIT_SSH_COMMAND`).
    #[serde(default)]
    pub path_helpers: Vec<String>,
    /// Option syntax.
    #[serde(default)]
    pub option_style: OptionStyle,
    /// Options, in the compact form `"-o --output =write_path !write"`
    /// (see docs/profile-format.md), or tables with a `reason`.
    #[serde(default)]
    pub options: Vec<OptionEntry>,
    /// Operand types in order with quantifiers: `["literal", "read_path*"]`.
    #[serde(default)]
    pub operands: Vec<OperandSlot>,
    /// Alternative operand lists used when one of the named options is
    /// present (`grep -e PAT` makes every operand a path).
    #[serde(default)]
    pub operands_with: BTreeMap<String, Vec<OperandSlot>>,
    /// The first operand selects a subcommand entry (`git` → `git push`).
    #[serde(default)]
    pub subcommands: bool,
    /// What to do with options the entry does not list.
    #[serde(default)]
    pub unknown_options: UnknownOptions,
    /// A structured form (seed 002) the whole command must match.
    #[serde(default)]
    pub form: Option<Form>,
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
        for o in self.options.iter().map(OptionEntry::spec) {
            let special = o.effects.iter().any(|e| e.needs_examples())
                || o.value_type.is_some_and(ValueType::needs_examples);
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
/// Deserialised by hand (below) with the same outcome as `untagged`, whose
/// buffering of every value cost a third of parsing an entry.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum OptionText {
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

/// [`OptionText::Detailed`] on its own: what the table form deserialises
/// as (unknown keys ignored, `suggest` optional, as the untagged variant).
#[derive(Deserialize)]
struct DetailedText {
    spec: String,
    reason: String,
    #[serde(default)]
    suggest: Option<String>,
}

impl<'de> Deserialize<'de> for OptionText {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Text;
        impl<'de> serde::de::Visitor<'de> for Text {
            type Value = OptionText;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an option spec (\"-o --output =write_path\") or a table with `spec` and `reason`")
            }

            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<OptionText, E> {
                Ok(OptionText::Spec(s.to_string()))
            }

            fn visit_string<E: serde::de::Error>(self, s: String) -> Result<OptionText, E> {
                Ok(OptionText::Spec(s))
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<OptionText, A::Error> {
                let d =
                    DetailedText::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(OptionText::Detailed {
                    spec: d.spec,
                    reason: d.reason,
                    suggest: d.suggest,
                })
            }
        }
        d.deserialize_any(Text)
    }
}

/// An option of a registry entry: as written, and parsed when the entry is
/// deserialised (an unknown type or effect fails to load).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "OptionText", into = "OptionText")]
pub struct OptionEntry {
    text: OptionText,
    spec: OptionSpec,
}

impl TryFrom<OptionText> for OptionEntry {
    type Error = String;

    fn try_from(text: OptionText) -> Result<Self, String> {
        let spec = text.parse()?;
        Ok(Self { text, spec })
    }
}

impl From<OptionEntry> for OptionText {
    fn from(o: OptionEntry) -> Self {
        o.text
    }
}

impl OptionEntry {
    /// The parsed option.
    pub fn spec(&self) -> &OptionSpec {
        &self.spec
    }

    /// The option as written.
    pub fn text(&self) -> &OptionText {
        &self.text
    }
}

/// A parsed option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionSpec {
    /// All spellings: `-o`, `--output`.
    pub names: Vec<String>,
    /// Whether a value is required, optional (attached only), or absent.
    pub value: ValueKind,
    /// Type of the value; `None` for a flag.
    pub value_type: Option<ValueType>,
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

vocabulary! {
    /// What using an option does to the command (`!NAME` in a compact spec).
    pub enum Effect ("effect") {
        Write = "write": "risk at least `write`",
        Dangerous = "dangerous": "risk `dangerous`: refused unless the profile allows dangerous commands",
        Exec = "exec": "runs another program: refused",
        Network = "network": "contacts the network",
        Recursive = "recursive": "operates recursively (with a broad target: dangerous)",
        Delete = "delete": "deletes its operands (operands become write targets)",
        Blocked = "blocked": "never allowed",
        Ask = "ask": "needs confirmation",
        Template = "template": "starts an exec template that runs to `;` or `+` (`find -exec`)",
        WritesOperands = "writes_operands": "operands become write targets (`cp -t`, `tee`-like)",
        Code = "code": "the option's value is inline code (`python -c`)",
        Last = "last": "options end after this one: the rest are operands for what it runs (`python3 -m venv --without-pip`)",
        Filter = "filter": "narrows what a deleting command touches (`find -name X -delete`), so the operands are not a broad deletion",
        ReadsTree = "reads_tree": "reads its operands recursively (`cp -r`, `grep -r`): a tree that holds a protected path is refused",
        ReadsNamed = "reads_named": "the program reads or writes files whose names come from content the policy does not parse (`--files0-from` lists, `man -l` pages with `.so`, `gzip -N` stored names): unconfined, asks",
    }
}

impl Effect {
    /// Whether an entry with an option that has this effect needs examples.
    pub fn needs_examples(self) -> bool {
        match self {
            Effect::Exec
            | Effect::Dangerous
            | Effect::Network
            | Effect::Blocked
            | Effect::Ask
            | Effect::Delete => true,
            Effect::Write
            | Effect::Recursive
            | Effect::Template
            | Effect::WritesOperands
            | Effect::Code
            | Effect::Last
            | Effect::Filter
            | Effect::ReadsTree
            | Effect::ReadsNamed => false,
        }
    }
}

vocabulary! {
    /// The type of an option value or operand (`=TYPE` in a compact spec,
    /// the entries of `operands`).
    pub enum ValueType ("value type") {
        Literal = "literal": "data the command does not open or run",
        Pid = "pid": "a process id or job spec; unconfined, only the command's own (`%1`, `$!`)",
        ProcessPattern = "process_pattern": "a process name pattern (`pkill NAME`); unconfined, refused",
        Digits = "digits": "digits attached to a short option (`perl -0777`)",
        RustcCodegen = "rustc_codegen": "a rustc `-C KEY=VALUE`: only keys known to be harmless",
        Chdir = "chdir": "a directory the program moves to (`git -C DIR`): later operands are relative to it",
        ReadPath = "read_path": "a file the program reads: inside the readable roots, not a secret",
        WritePath = "write_path": "a file the program writes: inside the writable roots, not protected",
        Path = "path": "a path the program looks at: checked as a read",
        Dir = "dir": "a directory: checked as a read",
        Count = "count": "a non-negative number",
        Url = "url": "a URL: `ext::`/`fd::` run programs, `file:` reads local files",
        Host = "host": "a host name: warns about the network when unconfined",
        Code = "code": "inline code given to an interpreter, inspected by the safety rules",
        Command = "command": "a program the option runs: refused",
        GitConfig = "git_config": "a `git -c KEY=VALUE` setting: only keys known to be harmless",
        SedScript = "sed_script": "a sed script: `e` runs commands, `r`/`w` read and write files",
        AwkProgram = "awk_program": "an awk program: `system()` and pipes run commands; files it reads and writes are checked",
        Opaque = "opaque": "a value the policy does not interpret",
        Signal = "signal": "a signal name or number",
        User = "user": "a user name",
        Mode = "mode": "a file mode",
        Archive = "archive": "an archive file the program reads",
        Regex = "regex": "a regular expression",
        Pattern = "pattern": "a search or glob pattern",
        Domain = "domain": "a domain name: warns about the network when unconfined",
        Package = "package": "a package name",
        EnvAssignment = "env_assignment": "`NAME=VALUE` for the command's environment: variables that load code are refused",
        Script = "script": "a script file the program runs (`-` reads the program from standard input)",
        Refspec = "refspec": "a git refspec: a leading `+` forces, a leading `:` deletes the remote ref",
        DestroyPath = "destroy_path": "a path whose changes the command discards (`git checkout -- .`): a broad target is refused",
        LinkTarget = "link_target": "what a link points to: a link to a sensitive place asks",
        HardlinkTarget = "hardlink_target": "the original of a hard link: must be writable too",
        SyncSrc = "sync_src": "an rsync source: local only",
        GitConfigKey = "git_config_key": "a `git config` key, checked on the whole command line",
        ReadTree = "read_tree": "a tree the program reads recursively: one holding a protected path is refused",
        NpmConfigAction = "npm_config_action": "an `npm config` action: anything but get/list asks",
        DdOperand = "dd_operand": "a dd operand: `if=` reads, `of=` writes",
        SyncDest = "sync_dest": "an rsync destination: local only, written",
        MovePath = "move_path": "a path the program moves or renames (`mv SRC`): written, and one holding a protected path is refused (`mv .git x`)",
    }
}

impl ValueType {
    /// Whether an entry with an option whose value has this type needs examples.
    pub fn needs_examples(self) -> bool {
        match self {
            ValueType::Command | ValueType::WritePath | ValueType::MovePath | ValueType::Code => {
                true
            }
            ValueType::Literal
            | ValueType::Pid
            | ValueType::ProcessPattern
            | ValueType::Digits
            | ValueType::RustcCodegen
            | ValueType::Chdir
            | ValueType::ReadPath
            | ValueType::Path
            | ValueType::Dir
            | ValueType::Count
            | ValueType::Url
            | ValueType::Host
            | ValueType::GitConfig
            | ValueType::SedScript
            | ValueType::AwkProgram
            | ValueType::Opaque
            | ValueType::Signal
            | ValueType::User
            | ValueType::Mode
            | ValueType::Archive
            | ValueType::Regex
            | ValueType::Pattern
            | ValueType::Domain
            | ValueType::Package
            | ValueType::EnvAssignment
            | ValueType::Script
            | ValueType::Refspec
            | ValueType::DestroyPath
            | ValueType::LinkTarget
            | ValueType::HardlinkTarget
            | ValueType::SyncSrc
            | ValueType::GitConfigKey
            | ValueType::ReadTree
            | ValueType::NpmConfigAction
            | ValueType::DdOperand
            | ValueType::SyncDest => false,
        }
    }

    /// Whether an operand of this type is a plain path, which a deleting
    /// (`!delete`, `!writes_operands`) or tree-reading (`!reads_tree`)
    /// option turns into a write target or a tree read.
    pub fn plain_path(self) -> bool {
        match self {
            ValueType::ReadPath | ValueType::Path | ValueType::Dir => true,
            ValueType::Literal
            | ValueType::Pid
            | ValueType::ProcessPattern
            | ValueType::Digits
            | ValueType::RustcCodegen
            | ValueType::Chdir
            | ValueType::WritePath
            | ValueType::Count
            | ValueType::Url
            | ValueType::Host
            | ValueType::Code
            | ValueType::Command
            | ValueType::GitConfig
            | ValueType::SedScript
            | ValueType::AwkProgram
            | ValueType::Opaque
            | ValueType::Signal
            | ValueType::User
            | ValueType::Mode
            | ValueType::Archive
            | ValueType::Regex
            | ValueType::Pattern
            | ValueType::Domain
            | ValueType::Package
            | ValueType::EnvAssignment
            | ValueType::Script
            | ValueType::Refspec
            | ValueType::DestroyPath
            | ValueType::LinkTarget
            | ValueType::HardlinkTarget
            | ValueType::SyncSrc
            | ValueType::GitConfigKey
            | ValueType::ReadTree
            | ValueType::NpmConfigAction
            | ValueType::DdOperand
            | ValueType::SyncDest
            | ValueType::MovePath => false,
        }
    }

    /// Whether an operand of this type names a file the program reads (so
    /// a file name arriving at run time cannot be checked beforehand).
    pub fn reads_file(self) -> bool {
        match self {
            ValueType::ReadPath
            | ValueType::ReadTree
            | ValueType::Path
            | ValueType::Dir
            | ValueType::Script
            | ValueType::Archive => true,
            ValueType::Literal
            | ValueType::Pid
            | ValueType::ProcessPattern
            | ValueType::Digits
            | ValueType::RustcCodegen
            | ValueType::Chdir
            | ValueType::WritePath
            | ValueType::Count
            | ValueType::Url
            | ValueType::Host
            | ValueType::Code
            | ValueType::Command
            | ValueType::GitConfig
            | ValueType::SedScript
            | ValueType::AwkProgram
            | ValueType::Opaque
            | ValueType::Signal
            | ValueType::User
            | ValueType::Mode
            | ValueType::Regex
            | ValueType::Pattern
            | ValueType::Domain
            | ValueType::Package
            | ValueType::EnvAssignment
            | ValueType::Refspec
            | ValueType::DestroyPath
            | ValueType::LinkTarget
            | ValueType::HardlinkTarget
            | ValueType::SyncSrc
            | ValueType::GitConfigKey
            | ValueType::NpmConfigAction
            | ValueType::DdOperand
            | ValueType::SyncDest
            | ValueType::MovePath => false,
        }
    }
}

vocabulary! {
    /// A structured form (seed 002, docs/forms.md) the whole command must match.
    pub enum Form ("form") {
        Tar = "tar": "tar: extract into a directory, create from named sources, or list",
        Unzip = "unzip": "unzip: extract into a directory, or list",
        Zip = "zip": "zip: create an archive from named sources",
        Ping = "ping": "ping with a count and a literal host",
        Curl = "curl": "curl -I (HEAD) of a literal http(s) URL",
        Dig = "dig": "dig of a literal domain",
        Nslookup = "nslookup": "nslookup of a literal domain",
    }
}

/// How many operands an operand-list entry takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantifier {
    /// Exactly one (`read_path`).
    One,
    /// Zero or one (`read_path?`).
    Optional,
    /// Any number (`read_path*`).
    Any,
    /// At least one (`read_path+`).
    Many,
}

/// One entry of an operand list: a type and how many operands it takes,
/// written `read_path`, `read_path?`, `read_path*` or `read_path+`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct OperandSlot {
    /// The operands' type.
    pub ty: ValueType,
    /// How many.
    pub quantifier: Quantifier,
}

impl OperandSlot {
    /// Fewest and most operands the slot takes.
    pub fn bounds(self) -> (usize, usize) {
        match self.quantifier {
            Quantifier::One => (1, 1),
            Quantifier::Optional => (0, 1),
            Quantifier::Any => (0, usize::MAX),
            Quantifier::Many => (1, usize::MAX),
        }
    }
}

impl TryFrom<String> for OperandSlot {
    type Error = String;

    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl std::str::FromStr for OperandSlot {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let (t, quantifier) = match s.as_bytes().last() {
            Some(b'?') => (&s[..s.len() - 1], Quantifier::Optional),
            Some(b'*') => (&s[..s.len() - 1], Quantifier::Any),
            Some(b'+') => (&s[..s.len() - 1], Quantifier::Many),
            _ => (s, Quantifier::One),
        };
        let ty = ValueType::from_name(t)
            .ok_or_else(|| format!("operand `{s}`: {}", ValueType::unknown(t)))?;
        Ok(Self { ty, quantifier })
    }
}

impl From<OperandSlot> for String {
    fn from(o: OperandSlot) -> Self {
        o.to_string()
    }
}

impl std::fmt::Display for OperandSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let q = match self.quantifier {
            Quantifier::One => "",
            Quantifier::Optional => "?",
            Quantifier::Any => "*",
            Quantifier::Many => "+",
        };
        write!(f, "{}{q}", self.ty)
    }
}

impl OptionText {
    /// Parses the compact spec.
    pub fn parse(&self) -> Result<OptionSpec, String> {
        let (spec, reason, suggest) = match self {
            OptionText::Spec(s) => (s.as_str(), None, None),
            OptionText::Detailed {
                spec,
                reason,
                suggest,
            } => (spec.as_str(), Some(reason.clone()), suggest.clone()),
        };
        let mut out = OptionSpec {
            names: Vec::new(),
            value: ValueKind::None,
            value_type: None,
            effects: Vec::new(),
            reason,
            suggest,
        };
        let value_type = |t: &str| {
            ValueType::from_name(t)
                .ok_or_else(|| format!("{} in option `{spec}`", ValueType::unknown(t)))
        };
        for tok in spec.split_whitespace() {
            if let Some(t) = tok.strip_prefix("?=") {
                out.value = ValueKind::Optional;
                out.value_type = Some(value_type(t)?);
            } else if let Some(t) = tok.strip_prefix('=') {
                out.value = ValueKind::Required;
                out.value_type = Some(value_type(t)?);
            } else if let Some(e) = tok.strip_prefix('!') {
                match Effect::from_name(e) {
                    Some(effect) => out.effects.push(effect),
                    None => {
                        return Err(format!(
                            "{} (`!{e}` in option `{spec}`)",
                            Effect::unknown(e)
                        ));
                    }
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
        Ok(out)
    }
}

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
        let idx = builtin::registry_position(name)?;
        // Each built-in entry is parsed once per process, when a command
        // first names it (parsing `git`'s entry at every lookup was a third
        // of an in-process decision).
        static PARSED: std::sync::OnceLock<Box<[std::sync::OnceLock<Arc<CommandSpec>>]>> =
            std::sync::OnceLock::new();
        let cache = PARSED.get_or_init(|| {
            (0..builtin::registry_len())
                .map(|_| std::sync::OnceLock::new())
                .collect()
        });
        Some(cache[idx].get_or_init(|| parse_builtin(idx, name)).clone())
    }

    /// Names of all entries (built-in and overrides).
    pub fn names(&self) -> Vec<String> {
        let mut v: Vec<String> = builtin::registry().map(|(n, _, _)| n.to_string()).collect();
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
    let text = builtin::registry_entry(idx).map_or("", |(_, text, _)| text);
    let spec = serde_json::from_str::<CommandSpec>(text).unwrap_or_else(|e| {
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
            code_off: Vec::new(),
            reads_named: false,
            response_files: false,
            path_helpers: Vec::new(),
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
    for (name, text, source) in builtin::registry() {
        match serde_json::from_str::<CommandSpec>(text) {
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

/// Static checks of one entry beyond what deserialising it checks (option
/// specs, value types, effects and forms are typed, so an unknown one
/// already failed to load): an entry with options that matter has examples.
pub fn check_spec(name: &str, spec: &CommandSpec) -> Vec<String> {
    let mut errs = Vec::new();
    let special = spec.needs_examples();
    if !special.is_empty() && spec.examples.allow.is_empty() && spec.examples.deny.is_empty() {
        errs.push(format!(
            "command `{name}` has options that matter ({}) but no examples; add [command.\"{name}\".examples] allow/deny",
            special.join(", ")
        ));
    }
    for off in &spec.code_off {
        let known = spec
            .options
            .iter()
            .any(|o| o.spec().names.iter().any(|n| n == off));
        if !known {
            errs.push(format!(
                "command `{name}`: `code_off` names `{off}`, which is not one of its options"
            ));
        }
    }
    for key in spec.operands_with.keys() {
        for n in key.split('&').flat_map(|p| p.split('|')) {
            let known = spec
                .options
                .iter()
                .any(|o| o.spec().names.iter().any(|m| m == n));
            if !known {
                errs.push(format!(
                    "command `{name}`: `operands_with` key `{key}` names `{n}`, which is not one of its options; name options the entry lists, `|` between spellings, `&` between options that must all be present"
                ));
            }
        }
    }
    if !spec.code_off.is_empty() && !spec.interpreter {
        errs.push(format!(
            "command `{name}`: `code_off` without `interpreter = true` means nothing"
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(extra: &str) -> Result<CommandSpec, String> {
        toml::from_str::<CommandSpec>(&format!("summary = 't'\n{extra}")).map_err(|e| e.to_string())
    }

    #[test]
    fn code_off_must_name_an_option_of_an_interpreter() {
        let ok = load("interpreter = true\noptions = ['--no-verify']\ncode_off = ['--no-verify']")
            .unwrap();
        assert!(check_spec("t", &ok).is_empty());
        let unknown =
            load("interpreter = true\noptions = ['--no-verify']\ncode_off = ['--nope']").unwrap();
        assert!(check_spec("t", &unknown)[0].contains("not one of its options"));
        let plain = load("options = ['-x']\ncode_off = ['-x']").unwrap();
        assert!(check_spec("t", &plain)[0].contains("without `interpreter"));
    }

    #[test]
    fn operands_with_keys_must_name_options_of_the_entry() {
        let ok = load(
            "options = ['-s --symbolic', '-t =literal']\noperands_with = { '-s|--symbolic&-t' = ['read_path+'], '-t' = ['read_path*'] }",
        )
        .unwrap();
        assert!(check_spec("t", &ok).is_empty());
        for key in ["-s|--symbol", "-s&-x", "-x"] {
            let bad = load(&format!(
                "options = ['-s --symbolic', '-t =literal']\noperands_with = {{ '{key}' = ['read_path+'] }}"
            ))
            .unwrap();
            let errs = check_spec("t", &bad);
            assert_eq!(errs.len(), 1, "{key}: {errs:?}");
            assert!(
                errs[0].contains("not one of its options"),
                "{key}: {errs:?}"
            );
        }
    }

    #[test]
    fn option_text_reads_as_the_untagged_enum_did() {
        /// The derived untagged form, as it was.
        #[derive(Debug, Deserialize, PartialEq)]
        #[serde(untagged)]
        enum Untagged {
            Spec(String),
            Detailed {
                spec: String,
                reason: String,
                #[serde(default)]
                suggest: Option<String>,
            },
        }
        let same = |o: &OptionText, u: &Untagged| match (o, u) {
            (OptionText::Spec(a), Untagged::Spec(b)) => a == b,
            (
                OptionText::Detailed {
                    spec,
                    reason,
                    suggest,
                },
                Untagged::Detailed {
                    spec: s2,
                    reason: r2,
                    suggest: g2,
                },
            ) => spec == s2 && reason == r2 && suggest == g2,
            _ => false,
        };
        let toml_cases = [
            "o = \"-x --ex =path !write\"",
            "o = ''",
            "o = { spec = \"-x\", reason = \"r\" }",
            "o = { spec = \"-x\", reason = \"r\", suggest = \"ls\" }",
            "o = { spec = \"-x\", reason = \"r\", other = 1 }",
            "o = [\"-x\", \"r\"]",
            "o = [\"-x\", \"r\", \"ls\"]",
            "o = { spec = \"-x\" }",
            "o = { reason = \"r\" }",
            "o = 5",
            "o = true",
            "o = [\"-x\"]",
            "o = { spec = 5, reason = \"r\" }",
        ];
        #[derive(Deserialize)]
        struct W<T> {
            o: T,
        }
        for case in toml_cases {
            let a = toml::from_str::<W<OptionText>>(case).map(|w| w.o);
            let b = toml::from_str::<W<Untagged>>(case).map(|w| w.o);
            match (&a, &b) {
                (Ok(x), Ok(y)) => assert!(same(x, y), "{case}: {x:?} vs {y:?}"),
                (Err(_), Err(_)) => {}
                _ => panic!("{case}: {a:?} vs {b:?}"),
            }
            // The same value as JSON (how built-in entries are embedded).
            if let Ok(v) = toml::from_str::<toml::Table>(case) {
                let json = serde_json::to_string(&v["o"]).expect("json");
                let a = serde_json::from_str::<OptionText>(&json);
                let b = serde_json::from_str::<Untagged>(&json);
                match (&a, &b) {
                    (Ok(x), Ok(y)) => assert!(same(x, y), "{json}: {x:?} vs {y:?}"),
                    (Err(_), Err(_)) => {}
                    _ => panic!("{json}: {a:?} vs {b:?}"),
                }
            }
        }
    }

    #[test]
    fn unknown_vocabulary_fails_to_load() {
        // Positive control: the same entries with known names load.
        let ok = load(
            "options = ['-o =write_path !write', { spec = '-x !exec', reason = 'r' }]\noperands = ['read_path+']\nform = 'tar'",
        )
        .expect("known names load");
        assert_eq!(ok.form, Some(Form::Tar));
        assert_eq!(ok.options[0].spec().value_type, Some(ValueType::WritePath));
        assert_eq!(ok.options[1].spec().effects, [Effect::Exec]);
        assert_eq!(ok.operands[0].ty, ValueType::ReadPath);
        for (extra, says) in [
            (
                "options = ['-o =writepath']",
                "unknown value type `writepath`",
            ),
            ("options = ['-o ?=Code']", "unknown value type `Code`"),
            ("options = ['-f !dangerus']", "unknown effect `dangerus`"),
            (
                "options = [{ spec = '-f !exe', reason = 'r' }]",
                "unknown effect `exe`",
            ),
            ("options = ['=literal']", "names no option"),
            (
                "operands = ['read_paths*']",
                "unknown value type `read_paths`",
            ),
            (
                "operands_with = { '-e' = ['pathh'] }",
                "unknown value type `pathh`",
            ),
            ("form = 'tarr'", "unknown form `tarr`"),
        ] {
            let err = load(extra).expect_err(extra);
            assert!(err.contains(says), "{extra}: {err}");
        }
    }

    #[test]
    fn spellings_round_trip() {
        for t in ValueType::ALL {
            assert_eq!(ValueType::from_name(t.as_str()), Some(*t));
            for q in ["", "?", "*", "+"] {
                let s = format!("{t}{q}");
                let slot: OperandSlot = s.parse().expect("slot");
                assert_eq!(slot.to_string(), s);
            }
        }
        for e in Effect::ALL {
            assert_eq!(Effect::from_name(e.as_str()), Some(*e));
        }
        for f in Form::ALL {
            assert_eq!(Form::from_name(f.as_str()), Some(*f));
        }
        // Serialising an entry gives back what was written.
        let spec = toml::from_str::<CommandSpec>(
            "summary = 't'\noptions = ['-o --out =write_path !write']\noperands = ['literal', 'read_path*']",
        )
        .expect("spec");
        let text = toml::to_string(&spec).expect("serialise");
        assert!(text.contains("\"-o --out =write_path !write\""), "{text}");
        assert!(text.contains("\"read_path*\""), "{text}");
    }
}
