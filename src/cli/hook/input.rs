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
    })
}

impl HookInput {
    /// `tool_input.command`; `None` when missing.
    pub fn command(&self) -> Result<Option<&str>, InputError> {
        self.string_field("command", "tool_input.command")
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
    fn wrong_types_are_errors() {
        assert!(parse("[1]").is_err());
        assert!(parse("{").is_err());
        assert!(parse(r#"{"tool_input":"ls"}"#).is_err());
        assert!(parse(r#"{"cwd":3}"#).is_err());
        let i = parse(r#"{"tool_name":"Bash","tool_input":{"command":["ls"]}}"#).expect("parses");
        assert!(i.command().is_err());
    }
}
