//! The hook's standard input: one JSON object as Claude Code and Codex send
//! it. Only the fields safe-exec reads are checked, and a field of the wrong
//! type is an error (exit 1), never a guess, so a harness bug cannot turn
//! into a silent allow.

use serde_json::{Map, Value};

/// Which lifecycle event the input describes (`hook_event_name`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// Before a tool runs: the only event safe-exec decides on.
    PreToolUse,
    /// After a tool ran successfully: recorded, never blocks.
    PostToolUse,
    /// After a tool failed: recorded, never blocks.
    PostToolUseFailure,
    /// Any other event: safe-exec has no opinion.
    Other(String),
}

impl Event {
    fn from_name(name: &str) -> Self {
        match name {
            "PreToolUse" => Event::PreToolUse,
            "PostToolUse" => Event::PostToolUse,
            "PostToolUseFailure" => Event::PostToolUseFailure,
            other => Event::Other(other.to_string()),
        }
    }
}

/// The parts of the hook input safe-exec uses.
#[derive(Debug, Clone)]
pub struct HookInput {
    /// The event; a missing `hook_event_name` means `PreToolUse` (seed 003's
    /// minimal envelope has only `tool_name` and `tool_input`).
    pub event: Event,
    /// `tool_name`, e.g. `Bash`, `Write`.
    pub tool_name: Option<String>,
    /// `tool_input` (an empty object when missing).
    pub tool_input: Map<String, Value>,
    /// `cwd`: where the agent runs the command.
    pub cwd: Option<String>,
    /// `session_id`: ties the decision to the agent session (guard, audit).
    pub session_id: Option<String>,
    /// Which agent sent the input, from its shape (see [`Agent::detect`]).
    pub agent: Agent,
}

/// The agent whose hook protocol is spoken. The two accept different
/// answers: Codex takes no `ask` and no `allow` without `updatedInput` (it
/// marks the hook failed and runs the tool), Claude Code takes both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    /// Claude Code (and inputs of unknown origin, seed 003's envelope).
    ClaudeCode,
    /// OpenAI Codex CLI.
    Codex,
}

impl Agent {
    /// `--agent NAME`: `codex` (or `codex-*`) and `claude-code` (`claude`,
    /// `claude-*`); anything else says nothing about the protocol.
    pub fn from_name(name: &str) -> Option<Agent> {
        let n = name.to_ascii_lowercase();
        if n == "codex" || n.starts_with("codex-") || n.starts_with("codex_") {
            Some(Agent::Codex)
        } else if n == "claude" || n.starts_with("claude-") || n.starts_with("claude_") {
            Some(Agent::ClaudeCode)
        } else {
            None
        }
    }

    /// From the input's shape: Codex sends `turn_id` and `model` with every
    /// `PreToolUse` (codex-rs/hooks `PreToolUseCommandInput`) and names its
    /// tools `apply_patch`, `shell`, `exec_command`, ...; Claude Code sends
    /// neither field and names its tools `Bash`, `Write`, ...
    fn detect(obj: &Map<String, Value>) -> Agent {
        let tool = obj.get("tool_name").and_then(Value::as_str).unwrap_or("");
        if obj.contains_key("turn_id") || obj.contains_key("model") || is_codex_tool(tool) {
            Agent::Codex
        } else {
            Agent::ClaudeCode
        }
    }

    /// The name used in audit records and messages.
    pub fn name(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
        }
    }
}

/// Codex's tools that run a shell command (`tool_input.command`).
const CODEX_SHELL_TOOLS: &[&str] = &[
    "shell",
    "local_shell",
    "exec_command",
    "unified_exec",
    "container.exec",
    "shell_command",
];

/// Whether only Codex uses the tool `name`: its shell tools and
/// `apply_patch`.
fn is_codex_tool(name: &str) -> bool {
    name == "apply_patch" || CODEX_SHELL_TOOLS.contains(&name)
}

/// Whether the tool `name` runs a shell command (`tool_input.command`):
/// Claude Code's `Bash` and Codex's shell tools.
pub fn is_command_tool(name: &str) -> bool {
    name == "Bash" || CODEX_SHELL_TOOLS.contains(&name)
}

/// The command of a shell tool: a string (Claude Code's `Bash`, Codex's
/// `Bash`/`shell_command`) or an argv (Codex's `shell` with
/// `["bash", "-lc", "..."]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolCommand {
    /// A shell string.
    String(String),
    /// An argv.
    Argv(Vec<String>),
    /// `command` and `cmd` both given, with different commands.
    Conflict,
}

/// Why the input cannot be read. The hook exits 1 on these (never 2).
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// Standard input could not be read.
    #[error("cannot read the hook input on standard input: {0}")]
    Read(#[from] std::io::Error),
    /// Not JSON.
    #[error(
        "the hook input is not valid JSON ({0}); the agent must send one PreToolUse object on standard input"
    )]
    Json(serde_json::Error),
    /// JSON, but not an object.
    #[error("the hook input must be a JSON object, not {0}")]
    NotObject(&'static str),
    /// A field has the wrong type.
    #[error("the hook input field `{field}` must be {expected}, not {found}")]
    WrongType {
        /// Dotted field name.
        field: &'static str,
        /// What was expected.
        expected: &'static str,
        /// What was found.
        found: &'static str,
    },
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Reads an optional string field; `null` counts as missing.
fn opt_string(
    obj: &Map<String, Value>,
    key: &str,
    field: &'static str,
) -> Result<Option<String>, InputError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(InputError::WrongType {
            field,
            expected: "a string",
            found: kind(other),
        }),
    }
}

/// Parses the hook input text.
pub fn parse(text: &str) -> Result<HookInput, InputError> {
    let value: Value = serde_json::from_str(text).map_err(InputError::Json)?;
    let Value::Object(obj) = value else {
        return Err(InputError::NotObject(kind(&value)));
    };
    let event = opt_string(&obj, "hook_event_name", "hook_event_name")?
        .map_or(Event::PreToolUse, |n| Event::from_name(&n));
    let tool_input = match obj.get("tool_input") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(other) => {
            return Err(InputError::WrongType {
                field: "tool_input",
                expected: "an object",
                found: kind(other),
            });
        }
    };
    Ok(HookInput {
        event,
        tool_name: opt_string(&obj, "tool_name", "tool_name")?,
        tool_input,
        cwd: opt_string(&obj, "cwd", "cwd")?.filter(|c| !c.is_empty()),
        session_id: opt_string(&obj, "session_id", "session_id")?.filter(|s| !s.is_empty()),
        agent: Agent::detect(&obj),
    })
}

impl HookInput {
    /// `tool_input.command`; `None` when missing.
    pub fn command(&self) -> Result<Option<&str>, InputError> {
        self.string_field("command", "tool_input.command")
    }

    /// The command of a shell tool, as a string or an argv; `None` when
    /// missing. An argv element that is not a string is an error. Both
    /// `command` (Claude Code) and `cmd` (Codex's unified exec) are read: a
    /// key that is missing, `null`, an empty or blank string or an empty
    /// array gives no command, so `{"command": null, "cmd": "rm -rf ~"}` is
    /// judged on `cmd`; both given with different commands is
    /// [`ToolCommand::Conflict`] (the harness may run either).
    pub fn tool_command(&self) -> Result<Option<ToolCommand>, InputError> {
        let command = self.command_at("command", "tool_input.command")?;
        let cmd = self.command_at("cmd", "tool_input.cmd")?;
        Ok(match (command, cmd) {
            (Some(a), Some(b)) if a != b => Some(ToolCommand::Conflict),
            (Some(a), _) => Some(a),
            (None, b) => b,
        })
    }

    /// The keys (`command`, `cmd`) that hold the command [`Self::tool_command`]
    /// judges: a rewrite replaces each of them.
    pub fn command_keys(&self) -> Vec<&'static str> {
        let mut keys: Vec<&'static str> = ["command", "cmd"]
            .into_iter()
            .filter(|k| {
                self.command_at(k, "tool_input.command")
                    .is_ok_and(|c| c.is_some())
            })
            .collect();
        if keys.is_empty() {
            keys.push("command");
        }
        keys
    }

    /// One key's command; `None` when missing, `null` or empty.
    fn command_at(
        &self,
        key: &str,
        field: &'static str,
    ) -> Result<Option<ToolCommand>, InputError> {
        match self.tool_input.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
            Some(Value::String(s)) => Ok(Some(ToolCommand::String(s.clone()))),
            Some(Value::Array(a)) if a.is_empty() => Ok(None),
            Some(Value::Array(a)) => a
                .iter()
                .map(|v| match v {
                    Value::String(s) => Ok(s.clone()),
                    other => Err(InputError::WrongType {
                        field: if key == "cmd" {
                            "tool_input.cmd[]"
                        } else {
                            "tool_input.command[]"
                        },
                        expected: "a string",
                        found: kind(other),
                    }),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(|v| Some(ToolCommand::Argv(v))),
            Some(other) => Err(InputError::WrongType {
                field,
                expected: "a string or an array of strings",
                found: kind(other),
            }),
        }
    }

    /// The patch text of Codex's `apply_patch` (`tool_input.command`, or
    /// `input` / `patch` in other versions).
    pub fn patch_text(&self) -> Result<Option<String>, InputError> {
        for key in ["command", "input", "patch"] {
            match self.tool_input.get(key) {
                None | Some(Value::Null) => continue,
                Some(Value::String(s)) => return Ok(Some(s.clone())),
                // `["apply_patch", "PATCH"]`: the patch is the last element.
                Some(Value::Array(a)) => {
                    return Ok(a.iter().rev().find_map(Value::as_str).map(str::to_string));
                }
                Some(other) => {
                    return Err(InputError::WrongType {
                        field: "tool_input.command",
                        expected: "a string",
                        found: kind(other),
                    });
                }
            }
        }
        Ok(None)
    }

    /// `tool_input.path` (Grep, Glob, LS).
    pub fn search_path(&self) -> Result<Option<&str>, InputError> {
        self.string_field("path", "tool_input.path")
    }

    /// `tool_input.notebook_path` (NotebookEdit).
    pub fn notebook_path(&self) -> Result<Option<&str>, InputError> {
        self.string_field("notebook_path", "tool_input.notebook_path")
    }

    /// `tool_input.file_path`; `None` when missing.
    pub fn file_path(&self) -> Result<Option<&str>, InputError> {
        self.string_field("file_path", "tool_input.file_path")
    }

    fn string_field(&self, key: &str, field: &'static str) -> Result<Option<&str>, InputError> {
        match self.tool_input.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
            Some(other) => Err(InputError::WrongType {
                field,
                expected: "a string",
                found: kind(other),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_code_shape() {
        let i = parse(r#"{"session_id":"s1","transcript_path":"/t","cwd":"/repo","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git status","description":"x"},"tool_use_id":"u"}"#).expect("parses");
        assert_eq!(i.event, Event::PreToolUse);
        assert_eq!(i.tool_name.as_deref(), Some("Bash"));
        assert_eq!(i.command().ok().flatten(), Some("git status"));
        assert_eq!(i.cwd.as_deref(), Some("/repo"));
        assert_eq!(i.session_id.as_deref(), Some("s1"));
    }

    #[test]
    fn codex_shape_has_model() {
        let i = parse(r#"{"session_id":"s","cwd":"/r","hook_event_name":"PreToolUse","model":"gpt-5","tool_name":"Bash","tool_input":{"command":"ls"}}"#).expect("parses");
        assert_eq!(i.command().ok().flatten(), Some("ls"));
    }

    #[test]
    fn minimal_envelope_is_pre_tool_use() {
        let i = parse(r#"{"tool_name":"Bash","tool_input":{"command":"ls"}}"#).expect("parses");
        assert_eq!(i.event, Event::PreToolUse);
        assert_eq!(i.cwd, None);
    }

    #[test]
    fn command_and_cmd() {
        let tc = |ti: &str| {
            parse(&format!(
                r#"{{"tool_name":"exec_command","tool_input":{ti}}}"#
            ))
            .expect("parses")
            .tool_command()
            .expect("reads")
        };
        let s = |c: &str| Some(ToolCommand::String(c.into()));
        assert_eq!(tc(r#"{"cmd":"ls"}"#), s("ls"));
        assert_eq!(tc(r#"{"command":null,"cmd":"rm -rf ~"}"#), s("rm -rf ~"));
        assert_eq!(tc(r#"{"command":"","cmd":"rm -rf ~"}"#), s("rm -rf ~"));
        assert_eq!(tc(r#"{"command":[],"cmd":"rm -rf ~"}"#), s("rm -rf ~"));
        assert_eq!(tc(r#"{"command":"ls","cmd":null}"#), s("ls"));
        assert_eq!(tc(r#"{"command":"ls","cmd":"ls"}"#), s("ls"));
        assert_eq!(
            tc(r#"{"command":"ls","cmd":"rm -rf ~"}"#),
            Some(ToolCommand::Conflict)
        );
        assert_eq!(
            tc(r#"{"command":["ls"],"cmd":"ls"}"#),
            Some(ToolCommand::Conflict)
        );
        assert_eq!(tc(r#"{"command":null,"cmd":""}"#), None);
        let i = parse(r#"{"tool_name":"exec_command","tool_input":{"cmd":3}}"#).expect("parses");
        assert!(i.tool_command().is_err());
    }

    #[test]
    fn wrong_types_are_errors() {
        assert!(parse("[1]").is_err());
        assert!(parse("{").is_err());
        assert!(parse(r#"{"tool_input":"ls"}"#).is_err());
        assert!(parse(r#"{"cwd":3}"#).is_err());
        let i = parse(r#"{"tool_name":"Bash","tool_input":{"command":["ls"]}}"#).expect("parses");
        assert!(i.command().is_err());
    }
}
