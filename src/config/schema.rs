//! The profile file format. Every key is listed here; an unknown key is an
//! error with file, line and column, never silently ignored.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::registry::{CommandSpec, Risk};
use super::rules::CustomRules;
use super::sections::{AuditSection, GuardSection, HookDef, ValidatorSection};
use crate::sandbox::Enforcement;
use crate::sandbox::env::EnvPolicy;

/// A whole profile after `extends` was merged.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct ProfileDoc {
    /// Name shown in output (defaults to the file name).
    pub name: String,
    /// One paragraph on what the profile is for.
    pub description: String,
    /// Built-in name or path of the profile this one starts from.
    pub extends: Option<String>,
    /// Decision settings.
    pub policy: PolicySection,
    /// Shell-shape limits.
    pub shell: ShellSection,
    /// Allowed roots.
    pub paths: PathsSection,
    /// Kernel sandbox settings.
    pub sandbox: SandboxSection,
    /// Environment of the command.
    pub env: EnvPolicy,
    /// Confirmation prompts.
    pub confirmation: ConfirmationSection,
    /// Registry overrides and additions, keyed by program or `"prog sub"`.
    pub commands: BTreeMap<String, CommandSpec>,
    /// Custom safety rules (seed 004 `CommandSafetyPattern` plus examples):
    /// a list of `RuleDef` in the file; from the loaded-profile cache, each
    /// definition is parsed when first needed.
    pub rule: CustomRules,
    /// Layer 2: an external validator command (docs/layers.md).
    pub validator: ValidatorSection,
    /// Layer 3: per-session rate limits and temporal patterns (docs/layers.md).
    pub guard: GuardSection,
    /// Lifecycle hooks (seed 001), fired after the system's global hooks.
    pub hook: Vec<HookDef>,
    /// The audit log (docs/audit.md).
    pub audit: AuditSection,
}

/// `[policy]`
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PolicySection {
    /// Highest risk that runs without asking: `safe`, `write` or `dangerous`.
    pub mode: Risk,
    /// Dangerous commands may run at all (after strong confirmation).
    pub allow_dangerous: bool,
    /// Programs not in the registry: `deny`, `ask` or `allow`.
    pub unknown_commands: Action,
    /// Constructs that cannot be modelled (non-literal program, `eval $x`,
    /// unparsable strings): `deny` or `ask` (never allowed).
    pub unknown_constructs: Action,
    /// Commands above `mode` (but allowed at all): `ask` or `deny`.
    pub above_mode: Action,
    /// Classifier `critical` matches: `deny`, or `ask` when a person types
    /// at a terminal (seed 004: block by default, confirm if user-initiated).
    pub critical: Action,
    /// `safe-exec hook` also judges the file tools (`Write`, `Edit`,
    /// `MultiEdit`, `NotebookEdit`, `Read`, Codex's `apply_patch`): their
    /// paths must be inside the allowed roots (writable roots for the
    /// writing tools), outside `deny_read` and the secret names, and not
    /// protected files. On by default (issue 12: a patch rewrote
    /// `~/.codex/hooks.json`); `false` leaves file tools to the agent.
    pub hook_file_tools: bool,
}

impl Default for PolicySection {
    fn default() -> Self {
        Self {
            mode: Risk::Write,
            allow_dangerous: false,
            unknown_commands: Action::Ask,
            unknown_constructs: Action::Ask,
            above_mode: Action::Ask,
            critical: Action::Deny,
            hook_file_tools: true,
        }
    }
}

/// What a policy setting does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Run.
    Allow,
    /// Ask for confirmation.
    Ask,
    /// Refuse.
    Deny,
}

/// `[shell]`
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ShellSection {
    /// Allowed operators among `&&`, `||`, `;`, `|`, `&`.
    pub operators: Vec<String>,
    /// Redirections allowed (targets must still be inside the roots).
    pub redirections: bool,
    /// `$(...)` and backquotes allowed (their commands are still checked).
    pub substitutions: bool,
    /// `<(...)` / `>(...)` allowed.
    pub process_substitutions: bool,
    /// Heredocs and here-strings allowed.
    pub heredocs: bool,
    /// `( ... )` and `{ ...; }` allowed.
    pub groups: bool,
    /// `if`, `for`, `while`, `case` allowed.
    pub control_flow: bool,
    /// Maximum number of simple commands in one string.
    pub max_segments: usize,
    /// Maximum nesting of `bash -c`, `eval`, substitutions.
    pub max_depth: u32,
    /// Maximum length of a shell string in bytes.
    pub max_length: usize,
    /// The shell that runs compound strings.
    pub interpreter: String,
    /// Directories whose files harnesses may `source` (agent shell
    /// snapshots); `{home}` placeholders allowed. Kept read-only by the sandbox.
    pub trusted_source_dirs: Vec<String>,
}

impl Default for ShellSection {
    fn default() -> Self {
        Self {
            operators: ["&&", "||", ";", "|", "&"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            redirections: true,
            substitutions: false,
            process_substitutions: false,
            heredocs: true,
            groups: true,
            control_flow: true,
            max_segments: 1000,
            max_depth: 8,
            max_length: 256 * 1024,
            interpreter: "/bin/bash".into(),
            trusted_source_dirs: Vec::new(),
        }
    }
}

/// `[paths]`
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PathsSection {
    /// Trees that may be read (operands, and the sandbox's read roots).
    pub read: Vec<String>,
    /// Trees that may be written.
    pub write: Vec<String>,
    /// Never readable, even below `read` or `write`.
    pub deny_read: Vec<String>,
    /// Read-only for the sandbox but not valid operands (system trees a
    /// program needs to run under a narrow `read`).
    pub runtime: Vec<String>,
    /// Targets too broad for a recursive or destructive operation.
    pub broad: Vec<String>,
    /// Protected files inside every writable root: configuration that runs
    /// later outside any sandbox (`.git/config`, `.git/hooks/`, agent
    /// settings). Each entry is a path relative to a writable root; a
    /// trailing `/` protects the whole directory, `*` matches within one
    /// component and `**` any number of components. A confined command may
    /// not leave a change to them behind; the policy refuses visible writes.
    pub protected: Vec<String>,
    /// File names that are secret wherever they are under the readable
    /// tree (`.env`, `.env.*`); a leading `!` excepts a name
    /// (`!.env.example`). Matched against the last path component.
    pub secret_names: Vec<String>,
}

impl Default for PathsSection {
    fn default() -> Self {
        Self {
            read: vec!["/".into()],
            write: vec!["{cwd}".into(), "{tmp}".into()],
            deny_read: Vec::new(),
            runtime: Vec::new(),
            broad: Vec::new(),
            protected: Vec::new(),
            secret_names: Vec::new(),
        }
    }
}

/// `[sandbox]`
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SandboxSection {
    /// `required` or `best-effort`.
    pub enforcement: Enforcement,
    /// `off`, `loopback` or `full`.
    pub network: NetworkSetting,
    /// Allow `socket(AF_UNIX)` (connecting to host sockets).
    pub unix_sockets: bool,
    /// Allow System V IPC (shm, sem, msg) and POSIX message queues, which
    /// are global objects the filesystem rules cannot confine (PostgreSQL's
    /// `initdb` needs them).
    pub sysv_ipc: bool,
    /// Capabilities a root command keeps (`["CAP_NET_BIND_SERVICE"]`);
    /// every other capability is dropped. Default: none.
    pub capabilities: Vec<String>,
    /// Device nodes granted read, write and ioctl besides the built-in
    /// ones (`["/dev/kvm"]`).
    pub devices: Vec<String>,
    /// Wall-clock limit in seconds; 0 means none.
    pub timeout_seconds: u64,
    /// Resource limits.
    pub limits: LimitsSection,
}

impl Default for SandboxSection {
    fn default() -> Self {
        Self {
            enforcement: Enforcement::Required,
            network: NetworkSetting::Off,
            unix_sockets: false,
            sysv_ipc: false,
            capabilities: Vec::new(),
            devices: Vec::new(),
            timeout_seconds: 0,
            limits: LimitsSection::default(),
        }
    }
}

/// `network = "off" | "loopback" | "full"`
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NetworkSetting {
    /// No network (the structured network forms still get what they need).
    Off,
    /// Loopback only (127.0.0.0/8 and ::1, any port), where the kernel layer
    /// enforces the address (the supervisor); otherwise the same as `off`.
    Loopback,
    /// Unrestricted.
    Full,
}

/// `[sandbox.limits]`
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LimitsSection {
    /// Core dump size (bytes).
    pub core: Option<u64>,
    /// Largest file the command may write (bytes).
    pub file_size: Option<u64>,
    /// Open descriptors.
    pub open_files: Option<u64>,
    /// Processes of the user.
    pub processes: Option<u64>,
    /// CPU seconds.
    pub cpu_seconds: Option<u64>,
    /// Address space (bytes).
    pub address_space: Option<u64>,
}

impl Default for LimitsSection {
    fn default() -> Self {
        Self {
            core: Some(0),
            file_size: None,
            open_files: None,
            processes: None,
            cpu_seconds: None,
            address_space: None,
        }
    }
}

/// `[confirmation]`
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ConfirmationSection {
    /// Seconds to wait for an answer before refusing.
    pub timeout_seconds: u64,
}

impl Default for ConfirmationSection {
    fn default() -> Self {
        Self {
            timeout_seconds: 60,
        }
    }
}
