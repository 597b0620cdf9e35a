//! The request: the command as the caller gave it and where it will run.
//! `decide`, the validator's context and the lifecycle read these; they
//! carry no behaviour of any stage, so they sit below all of them.

use crate::config::Placeholders;
use crate::parse;

/// The command as the caller gave it.
#[derive(Debug, Clone)]
pub enum CommandInput {
    /// `-- PROGRAM ARGS...`
    List(Vec<String>),
    /// `-c STRING` with `$0 $1...`.
    String {
        /// The shell string.
        text: String,
        /// `NAME ARG...` after the string.
        positional: Vec<String>,
    },
}

impl CommandInput {
    /// The raw command for display and audit.
    pub fn raw(&self) -> String {
        match self {
            CommandInput::List(v) => v
                .iter()
                .map(|a| parse::shell_quote(a))
                .collect::<Vec<_>>()
                .join(" "),
            CommandInput::String { text, .. } => text.clone(),
        }
    }
}

/// Everything the layers need to know about where the command runs.
#[derive(Debug, Clone)]
pub struct Situation {
    /// Placeholder values (cwd, home, tmp, git root, state).
    pub places: Placeholders,
    /// `$TMPDIR` if the caller set it.
    pub tmpdir_env: Option<String>,
    /// A person typed this at a terminal.
    pub interactive: bool,
    /// The command will run inside the sandbox: run mode (`--`, `-c`, the
    /// configured shell) and `hook --rewrite`. `false` for `hook` without
    /// `--rewrite` and `check --unconfined`. [`decide`](crate::decide::decide) also requires the
    /// profile's enforcement to be achieved (see [`confined`](crate::decide::confined)).
    pub confined: bool,
}
