//! The sections of a profile that configure the later stages (`[audit]`,
//! `[guard]`, `[[hook]]`, `[validator]`): plain data, deserialised with the
//! rest of the profile. Each stage re-exports its own section and keeps the
//! behaviour (`impl` blocks that judge or run) next to its code.

use regex::Regex;
use serde::{Deserialize, Serialize};

use super::patterns::{ClassDef, PatternDef};
use crate::sys::external::OUTPUT_CAP;

/// `[audit]`
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct AuditSection {
    /// Write audit records. Off for a profile that says nothing, on in
    /// every built-in profile (`profiles/default.toml`, which the others
    /// extend).
    pub enabled: bool,
    /// The JSONL file; placeholders allowed. Empty: no file sink.
    pub file: String,
    /// A syslog/journald datagram socket (`/dev/log`); empty: none.
    pub syslog: String,
    /// What a failing sink does: `fail` (deny the command, exit 126) or
    /// `warn` (run it and complain on stderr).
    pub on_error: OnError,
}

impl Default for AuditSection {
    fn default() -> Self {
        Self {
            enabled: false,
            file: "{state}/audit.jsonl".into(),
            syslog: String::new(),
            on_error: OnError::Fail,
        }
    }
}

/// `on_error = "fail" | "warn"`
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnError {
    /// Refuse commands that cannot be recorded.
    Fail,
    /// Run them and complain.
    Warn,
}

/// `[guard]`
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct GuardSection {
    /// Turn the guard on. Off by default: no session state is read or
    /// written and the layer costs nothing.
    pub enabled: bool,
    /// How many recent commands the session keeps (patterns and the
    /// validator's `history` see these).
    pub history_size: usize,
    /// Rate limit window in seconds.
    pub window_seconds: u64,
    /// Commands allowed per window; more are denied (`guard.rate_limit`).
    /// 0: no limit.
    pub max_commands: u64,
    /// Window for counting denials, in seconds.
    pub denial_window_seconds: u64,
    /// Denials per denial window that lock the session out
    /// (`guard.lockout`). 0: never lock out.
    pub max_denials: u64,
    /// How long a lockout lasts, in seconds.
    pub lockout_seconds: u64,
    /// A session idle this long has ended: the next command fires
    /// `session_end` for it and starts afresh (`session_start`). 0: never.
    pub session_idle_seconds: u64,
    /// Use the built-in classes' patterns (`download_then_execute`,
    /// `secrets_then_network`, `deletion_burst`, `retry_after_deny`).
    pub builtin_patterns: bool,
    /// Ids of built-in patterns to switch off.
    pub disable: Vec<String>,
    /// Extra command classes (added to the built-in ones of the same name).
    pub class: Vec<ClassDef>,
    /// Extra patterns (one with a built-in's id replaces it).
    pub pattern: Vec<PatternDef>,
}

impl Default for GuardSection {
    fn default() -> Self {
        Self {
            enabled: false,
            history_size: 50,
            window_seconds: 60,
            max_commands: 120,
            denial_window_seconds: 300,
            max_denials: 10,
            lockout_seconds: 300,
            session_idle_seconds: 0,
            builtin_patterns: true,
            disable: Vec::new(),
            class: Vec::new(),
            pattern: Vec::new(),
        }
    }
}

/// A lifecycle point at which hooks fire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Event {
    /// Blocking: the command was decided allow or ask and is about to run.
    PreToolUse,
    /// Blocking: the command needs a person's confirmation, before the prompt.
    PermissionRequest,
    /// Notification: the command ran and exited 0.
    PostToolUse,
    /// Notification: the command was denied, failed to start, exited
    /// non-zero, was killed or timed out.
    PostToolUseFailure,
    /// Notification: the guard saw the first command of a session.
    SessionStart,
    /// Notification: the guard found a session idle past its limit (the next
    /// command starts a new one), or an agent reported the end of a session.
    SessionEnd,
    /// Notification: safe-exec has something to tell a person (a
    /// confirmation is needed, an audit sink failed under `warn`, a
    /// validator `on_execution` call failed).
    Notification,
}

impl Event {
    /// Blocking events may deny or ask and fail closed.
    pub fn is_blocking(self) -> bool {
        matches!(self, Event::PreToolUse | Event::PermissionRequest)
    }

    /// The spelling used in profiles and in the context's `event` field.
    pub fn as_str(self) -> &'static str {
        match self {
            Event::PreToolUse => "pre_tool_use",
            Event::PermissionRequest => "permission_request",
            Event::PostToolUse => "post_tool_use",
            Event::PostToolUseFailure => "post_tool_use_failure",
            Event::SessionStart => "session_start",
            Event::SessionEnd => "session_end",
            Event::Notification => "notification",
        }
    }
}

/// Restricts a hook to commands whose program matches: an exact name, or a
/// regular expression (searched, not anchored: write `^...$` for a full
/// match). A matcher containing any of `\ ^ $ * + ? ( ) [ ] { } |` is a
/// regex; otherwise it is an exact program name. Regexes are compiled when
/// the profile loads, so a bad one is a profile error with file and line.
#[derive(Debug, Clone)]
pub struct Matcher {
    text: String,
    regex: Option<Regex>,
}

impl Matcher {
    /// Whether `program` (the normalised program name) matches.
    pub fn matches(&self, program: &str) -> bool {
        match &self.regex {
            Some(r) => r.is_match(program),
            None => self.text == program,
        }
    }
}

impl TryFrom<String> for Matcher {
    type Error = String;
    fn try_from(text: String) -> Result<Self, String> {
        let is_regex = text.chars().any(|c| "\\^$*+?()[]{}|".contains(c));
        let regex = if is_regex {
            Some(
                Regex::new(&text)
                    .map_err(|e| format!("matcher `{text}` is not a valid regex: {e}"))?,
            )
        } else {
            None
        };
        Ok(Matcher { text, regex })
    }
}

impl From<Matcher> for String {
    fn from(m: Matcher) -> String {
        m.text
    }
}

impl Serialize for Matcher {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for Matcher {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Matcher::try_from(s).map_err(serde::de::Error::custom)
    }
}

/// One `[[hook]]` entry.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookDef {
    /// Which lifecycle point (`pre_tool_use`, `permission_request`,
    /// `post_tool_use`, `post_tool_use_failure`, `session_start`,
    /// `session_end`, `notification`).
    pub event: Event,
    /// The program and its arguments (no shell; an absolute path is best).
    pub command: Vec<String>,
    /// Only fire when some segment's program matches (exact name or regex).
    /// Without a matcher the hook fires for every command. Events without a
    /// command (`session_*`, `notification`) ignore the matcher.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matcher: Option<Matcher>,
    /// Time limit in milliseconds (default 5000). Past it the hook is killed:
    /// a blocking event is then denied, a notification is just logged.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
}

fn default_timeout_ms() -> u64 {
    5000
}

/// `[validator]`
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct ValidatorSection {
    /// The program and its arguments (no shell). Empty: no validator, the
    /// policy's decision stands (seed 000's default validator).
    pub command: Vec<String>,
    /// Time limit for one answer in milliseconds; past it the validator is
    /// killed and the command denied.
    pub timeout_ms: u64,
    /// Largest answer in bytes; more is a denial (the validator is killed).
    pub max_output_bytes: usize,
    /// Pass environment values, not only names, in the context's `env`.
    /// Off by default: values may hold secrets.
    pub env_values: bool,
    /// After the command ran, call the same program again with
    /// `"event": "on_execution"` and the execution context and result.
    /// Fire-and-forget: its answer is ignored and its failures only logged.
    pub on_execution: bool,
}

impl Default for ValidatorSection {
    fn default() -> Self {
        Self {
            command: Vec::new(),
            timeout_ms: 5000,
            max_output_bytes: OUTPUT_CAP,
            env_values: false,
            on_execution: false,
        }
    }
}
