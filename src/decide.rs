//! Runs the deciding layers in order on one request: parse (layer 0), static
//! policy (layer 1), and the later layers as they are configured. Every entry
//! point (run, `check`, `hook`, the shell mode) goes through here, so they
//! cannot disagree.

use std::path::PathBuf;

use crate::parse::{self, CommandModel, ParseContext, TrustedStep};
use crate::policy::{self, PolicyContext, Verdict};
use crate::profile::{Placeholders, Profile};

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
}

/// Result of the deciding layers.
#[derive(Debug)]
pub struct Decided {
    /// Layer 0 output.
    pub model: CommandModel,
    /// Combined verdict.
    pub verdict: Verdict,
}

/// Parse context for a profile and situation.
pub fn parse_context(profile: &Profile, sit: &Situation, positional: Vec<String>) -> ParseContext {
    let shell = &profile.doc.shell;
    let mut ctx = ParseContext::new(sit.places.cwd.clone(), sit.places.home.clone());
    ctx.tmpdir = sit.tmpdir_env.clone();
    ctx.positional = positional;
    ctx.max_depth = shell.max_depth;
    ctx.max_segments = shell.max_segments;
    ctx.max_length = shell.max_length;
    ctx.trusted = shell
        .trusted_source_dirs
        .iter()
        .filter_map(|d| sit.places.expand(d))
        .map(TrustedStep::SourceUnder)
        .collect();
    ctx.trusted
        .push(TrustedStep::CwdSentinelUnder(sit.places.tmp.clone()));
    ctx
}

/// Parses the input (layer 0).
pub fn parse_input(input: &CommandInput, profile: &Profile, sit: &Situation) -> CommandModel {
    match input {
        CommandInput::List(argv) => {
            parse::parse_list(argv, &parse_context(profile, sit, Vec::new()))
        }
        CommandInput::String { text, positional } => {
            parse::parse_string(text, &parse_context(profile, sit, positional.clone()))
        }
    }
}

/// Runs layers 0 and 1.
pub fn decide(input: &CommandInput, profile: &Profile, sit: &Situation) -> Decided {
    let model = parse_input(input, profile, sit);
    let roots = profile.roots(&sit.places);
    let ctx = PolicyContext {
        profile,
        roots: &roots,
        interactive: sit.interactive,
        written: Vec::new(),
    };
    let raw = match input {
        CommandInput::String { text, .. } => Some(text.as_str()),
        CommandInput::List(_) => None,
    };
    let verdict = policy::evaluate(&model, &ctx, raw);
    Decided { model, verdict }
}

/// A fixed situation for checking examples: nothing on disk is consulted
/// beyond what exists, and the paths are the same on every machine.
pub fn example_situation() -> Situation {
    Situation {
        places: Placeholders {
            cwd: PathBuf::from("/work/project"),
            home: PathBuf::from("/home/user"),
            tmp: PathBuf::from("/tmp"),
            git_root: Some(PathBuf::from("/work/project")),
            state: PathBuf::from("/home/user/.local/state/safe-exec"),
        },
        tmpdir_env: None,
        interactive: false,
    }
}
