//! The typed command model every later stage reads: the same structure for an
//! argv list (`safe-exec -- ...`) and a shell string (`safe-exec -c ...`).

use std::path::PathBuf;

use serde::Serialize;

/// How the caller handed us the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Form {
    /// `safe-exec -- PROGRAM ARGS...`: an argv, no shell involved.
    List,
    /// `safe-exec -c STRING`: a shell string.
    String,
}

/// The parsed command: segments (simple commands) in source order, the
/// operators between them, and what constructs appeared.
#[derive(Debug, Clone, Serialize)]
pub struct CommandModel {
    /// `list` or `string`.
    pub form: Form,
    /// Every simple command that would run, including nested ones (inside
    /// `bash -c`, `$(...)`, `find -exec`, `xargs`), flattened in source order.
    pub segments: Vec<Segment>,
    /// Operators that join top-level pipelines and lists (`&&`, `|`, ...).
    pub operators: Vec<Operator>,
    /// Which shell constructs are present anywhere in the string.
    pub constructs: Constructs,
    /// Parts we do not model precisely. Any entry makes the command
    /// `unknown`: the policy may ask or deny, never allow.
    pub unknown: Vec<String>,
    /// Variables set by other means than `NAME=value` (`for NAME in`,
    /// `printf -v NAME`, `read NAME`, `declare NAME=...`): the policy checks
    /// them like assignments (`PATH`, `LD_*`, ...).
    pub assigned: Vec<String>,
}

impl CommandModel {
    /// Whether something in the command could not be modelled.
    pub fn is_unknown(&self) -> bool {
        !self.unknown.is_empty() || self.segments.iter().any(|s| s.unknown.is_some())
    }
}

/// A shell operator between commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Hash, PartialOrd, Ord)]
pub enum Operator {
    /// `&&`
    #[serde(rename = "&&")]
    And,
    /// `||`
    #[serde(rename = "||")]
    Or,
    /// `;` or a newline
    #[serde(rename = ";")]
    Sequence,
    /// `|` (and `|&`)
    #[serde(rename = "|")]
    Pipe,
    /// `&` (background)
    #[serde(rename = "&")]
    Background,
}

impl Operator {
    /// The spelling used in profiles and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Operator::And => "&&",
            Operator::Or => "||",
            Operator::Sequence => ";",
            Operator::Pipe => "|",
            Operator::Background => "&",
        }
    }

    /// Parses the profile spelling.
    pub fn from_spelling(s: &str) -> Option<Self> {
        Some(match s {
            "&&" => Operator::And,
            "||" => Operator::Or,
            ";" => Operator::Sequence,
            "|" => Operator::Pipe,
            "&" => Operator::Background,
            _ => return None,
        })
    }
}

/// Flags for every construct present; the shell-shape check reads these.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Constructs {
    /// `a | b`
    pub pipeline: bool,
    /// `a && b`, `a || b`, `a ; b`
    pub chaining: bool,
    /// `a &`
    pub background: bool,
    /// `( ... )` or `{ ...; }`
    pub subshell_or_group: bool,
    /// `$(...)` or backquotes
    pub substitution: bool,
    /// `<(...)` or `>(...)`
    pub process_substitution: bool,
    /// `<<EOF` or `<<<word`
    pub heredoc: bool,
    /// `$VAR`, `${...}`
    pub variable_expansion: bool,
    /// `*`, `?`, `[...]` unquoted
    pub glob: bool,
    /// `{a,b}`, `{1..3}`
    pub brace_expansion: bool,
    /// `VAR=value cmd`
    pub assignment_prefix: bool,
    /// `if`, `for`, `while`, `case`
    pub control_flow: bool,
    /// any redirection
    pub redirection: bool,
}

/// One simple command that would be executed.
///
/// The arguments are kept once, in [`Segment::words`]: [`Segment::argv`]
/// reads their values (a copy of every value was made and dropped for each
/// segment before). The serialised form and the `Debug` form still show an
/// `argv` list of the values, as when it was a field of its own.
#[derive(Clone, Serialize)]
pub struct Segment {
    /// The normalised program name used for the registry (`/usr/bin/rm`,
    /// `\rm`, `./rm` are all `rm`).
    pub program: String,
    /// The words after quote removal, with what the policy needs to know
    /// about each; the first is the program as written (after unwrapping,
    /// so `sudo rm x` has the words `rm` and `x`). Serialised as `argv`,
    /// the list of their values.
    #[serde(rename = "argv", serialize_with = "values")]
    pub words: Vec<Word>,
    /// `VAR=value` assignments in front of the command (including those
    /// given to `env`).
    pub assignments: Vec<Assignment>,
    /// Redirections attached to this command (or to an enclosing group).
    pub redirections: Vec<Redirection>,
    /// Wrappers removed to reach the real program, outermost first
    /// (`["sudo", "nice", "timeout"]`).
    pub wrappers: Vec<String>,
    /// Whether a privilege-raising wrapper (`sudo`, `doas`, `su`, `pkexec`,
    /// `run0`) was in front.
    pub escalated: bool,
    /// Working directory tracked through `cd DIR && ...`.
    pub cwd: PathBuf,
    /// The cwd is one of several the control flow allows (a `cd` that may
    /// fail, `cd` in some branches or in a loop): why. Unconfined, such a
    /// segment is unknown; confined, the sandbox holds it wherever it runs.
    #[serde(skip)]
    pub cwd_uncertain: Option<String>,
    /// Where this command sits: top level, pipeline member, nested shell...
    pub origin: Origin,
    /// Nesting depth (0 at top level; +1 per `bash -c`, substitution, ...).
    pub depth: u32,
    /// Data fed to standard input by a heredoc or here-string, if literal.
    pub stdin_data: Option<String>,
    /// Pipeline this segment belongs to (0: not part of a multi-command pipeline).
    pub pipeline: u32,
    /// Position inside its pipeline (0 for the first command).
    pub pipe_index: u32,
    /// The command receives more arguments at run time (`xargs`, `find -exec`),
    /// so its argument list is incomplete.
    pub template: bool,
    /// Files a wrapper in front of it reads (`xargs -a FILE`), absolute.
    pub reads: Vec<String>,
    /// Why this segment is not fully literal, if it is not.
    pub unknown: Option<String>,
    /// Explanations of normalisation steps, for `--explain`.
    pub notes: Vec<String>,
}

impl Segment {
    /// The words' values (the argv the program gets): `argv()[0]` is the
    /// program as written.
    pub fn argv(&self) -> impl ExactSizeIterator<Item = &str> + Clone {
        self.words.iter().map(|w| w.value.as_str())
    }

    /// The words' values from the `from`-th on, joined with spaces (nothing
    /// when there are not that many).
    pub fn argv_line(&self, from: usize) -> String {
        let words = self.words.get(from..).unwrap_or(&[]);
        let mut out = String::with_capacity(words.iter().map(|w| w.value.len() + 1).sum::<usize>());
        for (i, w) in words.iter().enumerate() {
            if i > 0 {
                out.push(' ');
            }
            out.push_str(&w.value);
        }
        out
    }

    /// The words' values, copied.
    pub fn argv_vec(&self) -> Vec<String> {
        self.words.iter().map(|w| w.value.clone()).collect()
    }
}

/// `argv`: the words' values, as a sequence of strings.
fn values<S: serde::Serializer>(words: &[Word], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(words.iter().map(|w| &w.value))
}

/// The words' values, shown as a list of strings (`Debug` of a `Vec<String>`).
struct ArgvDebug<'a>(&'a [Word]);

impl std::fmt::Debug for ArgvDebug<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|w| &w.value))
            .finish()
    }
}

/// What `#[derive(Debug)]` printed when `argv` was a field of its own (in
/// the same place, before `words`): logs and `examples/decide_diff.rs`
/// compare this text.
impl std::fmt::Debug for Segment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // (Every field named: a new one does not compile until it is shown.)
        let Segment {
            program,
            words,
            assignments,
            redirections,
            wrappers,
            escalated,
            cwd,
            cwd_uncertain,
            origin,
            depth,
            stdin_data,
            pipeline,
            pipe_index,
            template,
            reads,
            unknown,
            notes,
        } = self;
        f.debug_struct("Segment")
            .field("program", program)
            .field("argv", &ArgvDebug(words))
            .field("words", words)
            .field("assignments", assignments)
            .field("redirections", redirections)
            .field("wrappers", wrappers)
            .field("escalated", escalated)
            .field("cwd", cwd)
            .field("cwd_uncertain", cwd_uncertain)
            .field("origin", origin)
            .field("depth", depth)
            .field("stdin_data", stdin_data)
            .field("pipeline", pipeline)
            .field("pipe_index", pipe_index)
            .field("template", template)
            .field("reads", reads)
            .field("unknown", unknown)
            .field("notes", notes)
            .finish()
    }
}

/// Where a segment came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// A command the shell runs directly.
    TopLevel,
    /// Inside `$(...)` or backquotes.
    Substitution,
    /// Inside `<(...)` / `>(...)`.
    ProcessSubstitution,
    /// The string of `bash -c STRING` (or `eval 'STRING'`).
    NestedShell,
    /// The command run by `find -exec`, `xargs`, `env -S`, etc.
    ExecTemplate,
}

/// A word after quote removal, with what the policy needs to know about it.
#[derive(Clone, Default)]
pub struct Word {
    /// The value after quote removal. Known parameters are substituted;
    /// unknown expansions are kept in their `$NAME` spelling. (A word
    /// written as its value keeps one string for both: [`Word::raw`] is this
    /// one. To change the value of an existing word, make a new one with
    /// [`Word::with_value`], which keeps its spelling.)
    pub value: String,
    /// How it appeared in the source (quotes included), when that is not
    /// the value itself; `None` when it is (a plain word: one allocation
    /// per word fewer). Read with [`Word::raw`].
    raw: Option<String>,
    /// No expansion of any kind: the value is exactly what the program gets.
    pub literal: bool,
    /// Some part was quoted.
    pub quoted: bool,
    /// Contains an unquoted glob character that bash would expand.
    pub glob: bool,
    /// Contains an expansion the policy could not resolve.
    pub unresolved: bool,
}

impl Word {
    /// A literal word (argv form, or a quoted/plain word with no expansion),
    /// spelled as its value.
    pub fn literal(value: impl Into<String>) -> Self {
        Self {
            value: value.into(),
            raw: None,
            literal: true,
            ..Default::default()
        }
    }

    /// A word with this value and this spelling (every flag false).
    pub fn spelled(value: impl Into<String>, raw: impl Into<String>) -> Self {
        let value = value.into();
        let raw = raw.into();
        Self {
            raw: (raw != value).then_some(raw),
            value,
            ..Default::default()
        }
    }

    /// A literal word spelled `raw`, its value still to be filled in (by
    /// word resolution, which appends to `value`): the spelling is kept
    /// apart whatever the value becomes.
    pub(crate) fn resolving(raw: &str) -> Self {
        Self {
            raw: Some(raw.to_string()),
            literal: true,
            ..Default::default()
        }
    }

    /// How it appeared in the source (quotes included).
    pub fn raw(&self) -> &str {
        self.raw.as_deref().unwrap_or(&self.value)
    }

    /// The same word (spelling and flags) with another value.
    pub fn with_value(&self, value: String) -> Word {
        let raw = match &self.raw {
            Some(r) => Some(r.clone()),
            None if value != self.value => Some(self.value.clone()),
            None => None,
        };
        Word {
            value,
            raw,
            literal: self.literal,
            quoted: self.quoted,
            glob: self.glob,
            unresolved: self.unresolved,
        }
    }
}

/// Words are equal when their values, spellings and flags are (however the
/// spelling is kept).
impl PartialEq for Word {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
            && self.raw() == other.raw()
            && self.literal == other.literal
            && self.quoted == other.quoted
            && self.glob == other.glob
            && self.unresolved == other.unresolved
    }
}

impl Eq for Word {}

/// What `#[derive(Debug)]` printed when the spelling was always a string
/// of its own: logs and `examples/decide_diff.rs` compare this text.
impl std::fmt::Debug for Word {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Word {
            value,
            raw: _,
            literal,
            quoted,
            glob,
            unresolved,
        } = self;
        f.debug_struct("Word")
            .field("value", value)
            .field("raw", &self.raw())
            .field("literal", literal)
            .field("quoted", quoted)
            .field("glob", glob)
            .field("unresolved", unresolved)
            .finish()
    }
}

/// `NAME=value` in front of a command.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Assignment {
    /// Variable name.
    pub name: String,
    /// Value after quote removal.
    pub value: String,
}

/// A redirection and its target.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Redirection {
    /// `<`, `>`, `>>`, `>|`, `<>`, `&>`, `>&`, `<<`, `<<<`.
    pub op: String,
    /// File descriptor on the left, if given.
    pub fd: Option<i32>,
    /// Target file name after quote removal, or the fd for duplications.
    pub target: String,
    /// Whether the target is a file that gets written.
    pub writes: bool,
    /// Whether the target is a file that gets read.
    pub reads: bool,
    /// Whether the target word is literal.
    pub literal: bool,
}
