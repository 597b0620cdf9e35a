//! Walks the bash AST produced by brush-parser and flattens it into segments.
//! Node kinds are handled from an allowlist: a construct not handled here is
//! recorded as `unknown`, never skipped.

use std::path::{Path, PathBuf};
use std::rc::Rc;

use brush_parser::ParserOptions;
use brush_parser::ast::{
    self, Command, CommandPrefixOrSuffixItem, CompoundCommand, CompoundList, IoFileRedirectKind,
    IoFileRedirectTarget, IoRedirect, Pipeline, SeparatorOperator,
};

use super::model::{
    Assignment, CommandModel, Constructs, Form, Operator, Origin, Redirection, Segment, Word,
};
use super::unwrap::{self, SHELLS, ShellArgs, WrapperSpec};
use super::word::{self, KnownVars};
use super::{ParseContext, normalize_program, wrapper_spec};
pub use crate::sys::path::{join_clean, join_physical};

/// A harness step recognised as trusted (see `docs/agents.md`): agent
/// harnesses wrap the model's command in boilerplate that safe-exec must see
/// through without allowing the same shapes from the model itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustedStep {
    /// `source FILE` / `. FILE` where FILE is below this directory (shell
    /// snapshots that the sandbox keeps read-only).
    SourceUnder(PathBuf),
    /// `pwd -P >| FILE` where FILE is below this directory (the harness's
    /// cwd sentinel).
    CwdSentinelUnder(PathBuf),
}

/// What an enclosing wrapper or nested shell passes down to the commands
/// inside it.
#[derive(Debug, Clone, Default)]
struct Inherit {
    wrappers: Vec<String>,
    escalated: bool,
    assignments: Vec<Assignment>,
    redirections: Vec<Redirection>,
    notes: Vec<String>,
    reads: Vec<String>,
    /// Replacement strings of an enclosing template (`xargs -I R`, `find
    /// -exec ... {}`): input is put wherever they appear inside a word.
    replace: Vec<String>,
    /// Run by `find -execdir`/`-okdir`: in each match's directory, not the
    /// tracked one (review 12, F16).
    per_match_dir: bool,
}

impl Inherit {
    /// The replacement string of an enclosing template that `text` holds:
    /// that text is completed from input at run time (review 12, F14).
    fn replaced_in(&self, text: &str) -> Option<&str> {
        self.replace
            .iter()
            .find(|r| text.contains(r.as_str()))
            .map(String::as_str)
    }
}

/// Stateful walk over one command (and everything nested in it).
pub struct Walker<'a> {
    ctx: &'a ParseContext<'a>,
    model: CommandModel,
    options: ParserOptions,
    /// The tracked working directory, `None` when not known. Shared: the
    /// lists, pipeline members and subshells that save and restore it, and
    /// each pending segment, hold the same one (a segment copies it once).
    cwd: Cwd,
    depth: u32,
    origin: Origin,
    /// Borrowed from the context until a nested `bash -c` gives its own.
    positional: std::borrow::Cow<'a, [String]>,
    next_pipeline: u32,
    pipeline: u32,
    pipe_index: u32,
    inherit: Inherit,
    /// Variables the command itself changes; once changed, their values are
    /// no longer known (`HOME=x; cat ~/y`).
    tainted: std::collections::BTreeSet<String>,
    /// Variables the command set to an integer literal (see
    /// [`KnownVars::numeric`]).
    numeric: std::collections::BTreeSet<String>,
    /// A `cd` in the current list may have failed (its target does not exist
    /// now): after the list, the working directory is not known.
    cd_uncertain: bool,
    /// `set -P` / `set -o physical`: `cd` resolves `..` physically.
    physical: bool,
    /// `set -e`: a failing `cd` (alone or last in its list) ends the script.
    errexit: bool,
    /// The tracked cwd is one of several the control flow allows: segments
    /// are marked (`Segment::cwd_uncertain`) and the unconfined policy
    /// treats them as unknown; confined, the sandbox holds whatever cwd.
    cwd_doubt: bool,
    /// Directories earlier commands of this string create (`mkdir D`,
    /// `git init D`, `git clone URL D`, `cargo new D`): a `cd` into one of
    /// them is expected to succeed.
    created: Vec<PathBuf>,
    /// The last `cd` of this string: the directory it went to and the one
    /// it left (`$OLDPWD`, where `cd -` goes). Used only while the tracked
    /// directory is still the one it went to, so a `cd` inside a subshell,
    /// a pipeline or a branch never stands for the shell's own `$OLDPWD`.
    oldpwd: Option<(Rc<Path>, Rc<Path>)>,
    /// The positional parameters of the nested shell being walked come
    /// from input at run time (`xargs sh -c '... "$1"'`, `find -exec sh -c
    /// '... "$1"' _ {} \;`): `$1`, `$@` are not known.
    positional_from_input: bool,
}

/// The walker's working directory (see [`Walker`]'s `cwd`).
type Cwd = Option<Rc<Path>>;

impl<'a> Walker<'a> {
    /// A walker at the top level.
    pub fn new(ctx: &'a ParseContext<'a>, form: Form) -> Self {
        Self {
            ctx,
            model: CommandModel {
                form,
                // Room for three segments at first: four (1,120 bytes) is
                // past what glibc's per-thread cache keeps (1,032), so each
                // decision's vector took malloc's slow path.
                segments: Vec::with_capacity(3),
                operators: Vec::new(),
                constructs: Constructs::default(),
                unknown: Vec::new(),
                assigned: Vec::new(),
            },
            options: ParserOptions::default(),
            cwd: Some(Rc::from(&*ctx.cwd)),
            depth: 0,
            origin: Origin::TopLevel,
            positional: std::borrow::Cow::Borrowed(&ctx.positional),
            next_pipeline: 0,
            pipeline: 0,
            pipe_index: 0,
            inherit: Inherit::default(),
            tainted: std::collections::BTreeSet::new(),
            numeric: std::collections::BTreeSet::new(),
            cd_uncertain: false,
            physical: false,
            errexit: false,
            cwd_doubt: false,
            created: Vec::new(),
            oldpwd: None,
            positional_from_input: false,
        }
    }

    /// Parses and walks a shell string.
    pub fn run_string(mut self, input: &str) -> CommandModel {
        self.walk_string(input);
        self.finish()
    }

    /// Walks an argv (no shell).
    pub fn run_list(mut self, argv: &[String]) -> CommandModel {
        if argv.is_empty() {
            self.model.unknown.push("no program was given".into());
        } else if argv.iter().any(|a| a.contains('\0')) {
            self.model
                .unknown
                .push("an argument contains a NUL byte".into());
        } else {
            let words = argv.iter().map(Word::literal).collect();
            self.finish_segment(words, Vec::new(), Vec::new(), None);
        }
        self.finish()
    }

    fn finish(mut self) -> CommandModel {
        self.model.operators.sort();
        self.model.operators.dedup();
        self.model
    }

    fn known_vars(&self) -> KnownVars<'_> {
        KnownVars {
            home: self.ctx.home.to_string_lossy(),
            pwd: self
                .cwd
                .as_ref()
                .map(|p| p.to_string_lossy())
                .unwrap_or_default(),
            tmpdir: if self.tainted.contains("TMPDIR") {
                None
            } else {
                self.ctx.tmpdir.clone()
            },
            positional: std::borrow::Cow::Borrowed(&self.positional),
            home_known: !self.tainted.contains("HOME"),
            pwd_known: !self.tainted.contains("PWD"),
            positional_known: !self.tainted.contains("@") && !self.positional_from_input,
            numeric: std::borrow::Cow::Borrowed(&self.numeric),
        }
    }

    /// Records that the command changes a variable from here on.
    fn taint(&mut self, name: &str) {
        self.numeric.remove(name);
        super::hazards::shell_internal_assignment(name, &mut self.model.unknown);
        self.tainted.insert(name.to_string());
        if name != "@" && !self.model.assigned.iter().any(|a| a == name) {
            self.model.assigned.push(name.to_string());
        }
    }

    /// Builtins that set variables or positional parameters.
    fn taint_from_builtin(&mut self, words: &[Word]) {
        let Some(program) = words.first().map(|w| w.value.as_str()) else {
            return;
        };
        let args = &words[1..];
        // The operands, gathered only for the programs that create a
        // directory (a vector for every command was built and dropped).
        let plain = || {
            args.iter()
                .filter(|w| !w.value.starts_with('-') && !w.unresolved)
        };
        let made: Vec<&Word> = match program {
            "mkdir" => plain().collect(),
            "git" | "cargo" => match (program, plain().next().map(|w| w.value.as_str())) {
                ("git", Some("init" | "clone")) | ("cargo", Some("new" | "init")) => {
                    plain().next_back().into_iter().collect()
                }
                _ => Vec::new(),
            },
            _ => Vec::new(),
        };
        for w in made {
            let p = self.absolute(&w.value);
            self.created.push(PathBuf::from(p));
        }
        if program == "set" {
            let opts: Vec<&str> = args.iter().map(|w| w.value.as_str()).collect();
            if opts
                .iter()
                .any(|o| o.starts_with('-') && !o.starts_with("--") && o.contains('e'))
                || opts.windows(2).any(|w| w[0] == "-o" && w[1] == "errexit")
            {
                self.errexit = true;
            }
            if opts.iter().any(|o| o.starts_with('+') && o.contains('e'))
                || opts.windows(2).any(|w| w[0] == "+o" && w[1] == "errexit")
            {
                self.errexit = false;
            }
            if opts
                .iter()
                .any(|o| o.starts_with('-') && !o.starts_with("--") && o.contains('P'))
                || opts.windows(2).any(|w| w[0] == "-o" && w[1] == "physical")
            {
                self.physical = true;
            }
        }
        let names = |from: &[Word]| -> Vec<String> {
            from.iter()
                .map(|w| w.value.split('=').next().unwrap_or("").to_string())
                .filter(|n| super::unwrap::is_name(n))
                .collect()
        };
        match program {
            "set"
                if args
                    .iter()
                    .any(|w| !w.value.starts_with(['-', '+']) || w.value == "--") =>
            {
                self.taint("@");
            }
            "shift" => self.taint("@"),

            "export" | "declare" | "typeset" | "local" | "readonly" | "unset" | "read"
            | "mapfile" | "readarray" => {
                let plain: Vec<Word> = args
                    .iter()
                    .filter(|w| !w.value.starts_with('-'))
                    .cloned()
                    .collect();
                for n in names(&plain) {
                    // `export NAME` alone keeps the value; everything else may change it.
                    let keeps = program == "export"
                        && !plain.iter().any(|w| w.value.starts_with(&format!("{n}=")));
                    if !keeps {
                        self.taint(&n);
                    } else {
                        super::hazards::shell_internal_assignment(&n, &mut self.model.unknown);
                    }
                }
            }
            "printf" => {
                if let Some(i) = args.iter().position(|w| w.value == "-v") {
                    for n in names(&args[i + 1..(i + 2).min(args.len())]) {
                        self.taint(&n);
                    }
                }
            }
            "getopts" => {
                for n in names(args.get(1..2).unwrap_or(&[])) {
                    self.taint(&n);
                }
            }
            _ => {}
        }
    }

    fn walk_string(&mut self, input: &str) {
        if input.len() > self.ctx.max_length {
            self.model.unknown.push(format!(
                "the command is {} bytes long; the limit is {} bytes",
                input.len(),
                self.ctx.max_length
            ));
            return;
        }
        if input.contains('\0') {
            self.model
                .unknown
                .push("the command contains a NUL byte".into());
            return;
        }
        let nesting = bracket_depth(input);
        if nesting > 64 {
            self.model.unknown.push(format!(
                "the command nests brackets {nesting} levels deep; the limit is 64"
            ));
            return;
        }
        // The common shape (plain words, `&&`, `||`, `;`, `&`, `|`, simple
        // redirections) is read by the fast path, which builds the tree
        // brush-parser builds (`parse::fast`); anything else is parsed by
        // brush-parser. The string is tokenized in place (vendored
        // brush-parser patch; `parse::tests::parse_program_str_equals_the_reader`
        // checks that it gives what `Parser::new(input.as_bytes(),
        // ..).parse_program()` gives).
        let parsed = match super::fast::parse(input) {
            Some(program) => Ok(program),
            None => brush_parser::parse_program_str(input, &self.options),
        };
        match parsed {
            Ok(program) => {
                let n = program.complete_commands.len();
                for (i, cc) in program.complete_commands.iter().enumerate() {
                    self.walk_list(cc);
                    if i + 1 < n {
                        self.model.operators.push(Operator::Sequence);
                        self.model.constructs.chaining = true;
                    }
                }
            }
            Err(e) => self
                .model
                .unknown
                .push(format!("the shell string does not parse: {e}")),
        }
    }

    fn walk_nested(&mut self, text: &str, origin: Origin, positional: Option<Vec<String>>) {
        if self.depth + 1 > self.ctx.max_depth {
            self.model.unknown.push(format!(
                "commands are nested more than {} levels deep",
                self.ctx.max_depth
            ));
            return;
        }
        let saved_origin = std::mem::replace(&mut self.origin, origin);
        let saved_pos = positional.map(|p| std::mem::replace(&mut self.positional, p.into()));
        let saved_pipe = (self.pipeline, self.pipe_index);
        let saved_cwd = self.cwd.clone();
        let saved_doubt = self.cwd_doubt;
        self.pipeline = 0;
        self.pipe_index = 0;
        self.depth += 1;
        self.walk_string(text);
        self.depth -= 1;
        self.cwd = saved_cwd;
        self.cwd_doubt = saved_doubt;
        (self.pipeline, self.pipe_index) = saved_pipe;
        if let Some(p) = saved_pos {
            self.positional = p;
        }
        self.origin = saved_origin;
    }

    fn walk_list(&mut self, list: &CompoundList) {
        let n = list.0.len();
        for (i, item) in list.0.iter().enumerate() {
            self.walk_and_or(&item.0);
            match item.1 {
                SeparatorOperator::Async => {
                    self.model.operators.push(Operator::Background);
                    self.model.constructs.background = true;
                }
                SeparatorOperator::Sequence if i + 1 < n => {
                    self.model.operators.push(Operator::Sequence);
                    self.model.constructs.chaining = true;
                }
                SeparatorOperator::Sequence => {}
            }
        }
    }

    fn walk_and_or(&mut self, list: &ast::AndOrList) {
        let before = self.cwd.clone();
        let outer_uncertain = std::mem::take(&mut self.cd_uncertain);
        self.walk_pipeline(&list.first);
        let mut changed = self.cwd != before;
        // A change made by a later, conditional member (`false && cd Y`)
        // may or may not have happened.
        let mut conditional_change = false;
        for next in &list.additional {
            self.model.constructs.chaining = true;
            match next {
                ast::AndOr::And(p) => {
                    self.model.operators.push(Operator::And);
                    let b = self.cwd.clone();
                    self.walk_pipeline(p);
                    changed |= self.cwd != b;
                    conditional_change |= self.cwd != b;
                }
                ast::AndOr::Or(p) => {
                    self.model.operators.push(Operator::Or);
                    // After `cd x || ...` the right side runs where cd
                    // failed, that is where the list started; after the
                    // right side the shell is there or, when the left side
                    // succeeded and the right side was skipped, in `x`.
                    // Which one is a matter of control flow (`cwd_doubt`:
                    // unknown unconfined; confined, the sandbox holds either
                    // one). The tracked one is the likely one: `x` when it
                    // exists, the start when it does not (the `cd` fails).
                    if changed && before.is_some() {
                        let left_end = self.cwd.clone();
                        let cd_fails = self.cd_uncertain;
                        self.cwd = before.clone();
                        self.walk_pipeline(p);
                        if !cd_fails && self.cwd == before {
                            self.cwd = left_end;
                        }
                        self.cwd_doubt = true;
                        continue;
                    }
                    if changed {
                        self.cwd = None;
                    }
                    self.walk_pipeline(p);
                }
            }
        }
        if conditional_change || (changed && self.cd_uncertain) {
            self.cwd_doubt = true;
        }
        self.cd_uncertain = outer_uncertain;
    }

    /// Walks alternative branches that each start from the same working
    /// directory; afterwards the directory is known only if every way
    /// through (including taking no branch, when `none_taken`) agrees.
    fn walk_branches(&mut self, branches: &[&CompoundList], none_taken: bool) {
        let start = self.cwd.clone();
        let mut ends = Vec::new();
        for b in branches {
            self.cwd = start.clone();
            self.walk_list(b);
            ends.push(self.cwd.clone());
        }
        if none_taken {
            ends.push(start.clone());
        }
        self.cwd = match ends.first() {
            Some(first) if ends.iter().all(|e| e == first) => first.clone(),
            Some(_) if ends.iter().any(Option::is_none) => None,
            Some(first) => {
                self.cwd_doubt = true;
                first.clone()
            }
            None => start,
        };
    }

    /// Walks a loop's condition and body. If they change the working
    /// directory, each iteration starts somewhere else: every command in the
    /// loop and after it runs in a directory that is not known.
    fn walk_loop(&mut self, parts: &[&CompoundList]) {
        let before = self.cwd.clone();
        let first_segment = self.model.segments.len();
        for p in parts {
            self.walk_list(p);
        }
        if self.cwd != before {
            for seg in &mut self.model.segments[first_segment..] {
                seg.cwd_uncertain.get_or_insert_with(|| {
                    "the working directory changes inside a loop, so it is not known here".into()
                });
            }
            self.cwd_doubt = true;
        }
    }

    fn walk_pipeline(&mut self, p: &Pipeline) {
        if p.seq.len() > 1 {
            self.model.constructs.pipeline = true;
            self.next_pipeline += 1;
            let id = self.next_pipeline;
            let saved = (self.pipeline, self.pipe_index);
            for (i, cmd) in p.seq.iter().enumerate() {
                if i > 0 {
                    self.model.operators.push(Operator::Pipe);
                }
                // Each member of a pipeline runs in its own subshell.
                let cwd = self.cwd.clone();
                let doubt = self.cwd_doubt;
                self.pipeline = id;
                self.pipe_index = i as u32;
                self.walk_command(cmd);
                self.cwd = cwd;
                self.cwd_doubt = doubt;
            }
            (self.pipeline, self.pipe_index) = saved;
        } else if let Some(cmd) = p.seq.first() {
            self.walk_command(cmd);
        }
    }

    fn walk_command(&mut self, cmd: &Command) {
        match cmd {
            Command::Simple(sc) => self.walk_simple(sc),
            Command::Compound(cc, redirs) => {
                let pushed =
                    self.push_redirects(redirs.as_ref().map(|r| r.0.as_slice()).unwrap_or(&[]));
                self.walk_compound(cc);
                self.inherit
                    .redirections
                    .truncate(self.inherit.redirections.len() - pushed);
            }
            Command::Function(f) => self.model.unknown.push(format!(
                "defines a shell function `{}`; function bodies are not modelled",
                f.fname.value
            )),
            Command::ExtendedTest(test, redirs) => {
                let pushed =
                    self.push_redirects(redirs.as_ref().map(|r| r.0.as_slice()).unwrap_or(&[]));
                let mut words = vec![Word::literal("[[")];
                // (The known variables borrow the walker: the reasons are
                // gathered apart, then appended in the same order.)
                let mut found = Vec::new();
                super::hazards::test_evaluates(&test.expr, &self.known_vars(), &mut found);
                self.model.unknown.append(&mut found);
                collect_test_words(&test.expr, &mut |w| {
                    let r = self.resolve_word(&w.value);
                    words.push(r);
                });
                words.push(Word::literal("]]"));
                self.finish_segment(words, Vec::new(), Vec::new(), None);
                self.inherit
                    .redirections
                    .truncate(self.inherit.redirections.len() - pushed);
            }
        }
    }

    fn walk_compound(&mut self, cc: &CompoundCommand) {
        match cc {
            CompoundCommand::BraceGroup(g) => {
                self.model.constructs.subshell_or_group = true;
                self.walk_list(&g.list);
            }
            CompoundCommand::Subshell(s) => {
                self.model.constructs.subshell_or_group = true;
                let cwd = self.cwd.clone();
                let doubt = self.cwd_doubt;
                self.walk_list(&s.list);
                self.cwd = cwd;
                self.cwd_doubt = doubt;
            }
            CompoundCommand::IfClause(c) => {
                self.model.constructs.control_flow = true;
                self.walk_list(&c.condition);
                // Each `elif` condition runs only when the earlier ones
                // failed; it is walked as part of its branch.
                let mut branches: Vec<CompoundList> = vec![c.then.clone()];
                let mut has_else = false;
                for e in c.elses.iter().flatten() {
                    let mut items = Vec::new();
                    if let Some(cond) = &e.condition {
                        items.extend(cond.0.iter().cloned());
                    } else {
                        has_else = true;
                    }
                    items.extend(e.body.0.iter().cloned());
                    branches.push(CompoundList(items));
                }
                let refs: Vec<&CompoundList> = branches.iter().collect();
                self.walk_branches(&refs, !has_else);
            }
            CompoundCommand::ForClause(f) => {
                self.model.constructs.control_flow = true;
                self.taint(&f.variable_name.clone());
                let mut all_numeric = f.values.is_some();
                for w in f.values.iter().flatten() {
                    let r = self.resolve_word(&w.value);
                    all_numeric &= r.literal && r.value.parse::<i64>().is_ok();
                }
                if all_numeric {
                    self.numeric.insert(f.variable_name.clone());
                }
                self.walk_loop(&[&f.body.list]);
            }
            CompoundCommand::WhileClause(w) | CompoundCommand::UntilClause(w) => {
                self.model.constructs.control_flow = true;
                self.walk_loop(&[&w.0, &w.1.list]);
            }
            CompoundCommand::CaseClause(c) => {
                self.model.constructs.control_flow = true;
                self.resolve_word(&c.value.value);
                let bodies: Vec<&CompoundList> = c
                    .cases
                    .iter()
                    .filter_map(|item| item.cmd.as_ref())
                    .collect();
                // `;&` and `;;&` fall through into later bodies: walked as
                // branches too, the directory after them is still unknown
                // when they disagree.
                self.walk_branches(&bodies, true);
            }
            CompoundCommand::Arithmetic(_) | CompoundCommand::ArithmeticForClause(_) => self
                .model
                .unknown
                .push("arithmetic commands are not modelled".into()),
            CompoundCommand::Coprocess(_) => self
                .model
                .unknown
                .push("coprocesses are not modelled".into()),
        }
    }

    /// Resolves a word and walks the command substitutions inside it, which
    /// run before the command that contains them.
    fn resolve_word(&mut self, raw: &str) -> Word {
        // A plain or single-quoted word needs neither the known variables
        // nor the parser.
        let r = match word::resolve_plain(raw) {
            Some(r) => r,
            None => match word::resolve_single_quoted(raw) {
                Some(r) => r,
                None => {
                    let vars = self.known_vars();
                    match word::resolve_tilde(raw, &vars) {
                        Some(r) => r,
                        None => word::resolve_parsed(raw, &vars, &self.options),
                    }
                }
            },
        };
        if r.had_expansion && r.word.value.contains('$') || r.word.unresolved {
            self.model.constructs.variable_expansion |= raw.contains('$');
        }
        if r.had_expansion {
            self.model.constructs.variable_expansion |= raw.contains('$');
        }
        self.model.constructs.glob |= r.word.glob;
        for why in &r.hidden_eval {
            self.model.unknown.push(format!("`{raw}`: {why}"));
        }
        if r.hidden_code {
            self.model.constructs.substitution = true;
            self.model.unknown.push(format!(
                "`{raw}` runs a command substitution inside `${{...}}` or `$((...))`, which is not modelled"
            ));
        }
        self.model.constructs.brace_expansion |= r.had_brace;
        for sub in &r.substitutions {
            self.model.constructs.substitution = true;
            self.walk_nested(&sub.text, Origin::Substitution, None);
        }
        r.word
    }

    /// An argument word, brace-expanded into the words bash would pass.
    /// (The program word is never expanded: a brace there stays non-literal.)
    /// The words are appended to `out` (a vector per word was built and
    /// dropped before).
    fn resolve_words(&mut self, raw: &str, out: &mut Vec<Word>) {
        match word::expand_braces(raw, &self.options) {
            Some(expanded) => {
                self.model.constructs.brace_expansion = true;
                for r in &expanded {
                    let w = self.resolve_word(r);
                    out.push(w);
                }
            }
            None => {
                let w = self.resolve_word(raw);
                out.push(w);
            }
        }
    }

    fn push_redirects(&mut self, items: &[IoRedirect]) -> usize {
        let mut n = 0;
        for r in items {
            if let Some(redir) = self.redirect(r, &mut None) {
                self.inherit.redirections.push(redir);
                n += 1;
            }
        }
        n
    }

    fn redirect(&mut self, r: &IoRedirect, stdin: &mut Option<String>) -> Option<Redirection> {
        self.model.constructs.redirection = true;
        match r {
            IoRedirect::File(fd, kind, target) => {
                let op = kind.to_string();
                match target {
                    IoFileRedirectTarget::Filename(w) => {
                        let word = self.resolve_word(&w.value);
                        let writes = matches!(
                            kind,
                            IoFileRedirectKind::Write
                                | IoFileRedirectKind::Append
                                | IoFileRedirectKind::Clobber
                                | IoFileRedirectKind::ReadAndWrite
                                | IoFileRedirectKind::DuplicateOutput
                        );
                        let reads = matches!(
                            kind,
                            IoFileRedirectKind::Read
                                | IoFileRedirectKind::ReadAndWrite
                                | IoFileRedirectKind::DuplicateInput
                        );
                        Some(Redirection {
                            op,
                            fd: *fd,
                            target: self.absolute(&word.value),
                            writes,
                            reads,
                            literal: !word.unresolved && !word.glob,
                        })
                    }
                    IoFileRedirectTarget::Fd(n) => Some(Redirection {
                        op,
                        fd: *fd,
                        target: format!("&{n}"),
                        writes: false,
                        reads: false,
                        literal: true,
                    }),
                    IoFileRedirectTarget::Duplicate(w) => {
                        let word = self.resolve_word(&w.value);
                        let is_fd =
                            word.value.chars().all(|c| c.is_ascii_digit()) || word.value == "-";
                        let writes = !is_fd && matches!(kind, IoFileRedirectKind::DuplicateOutput);
                        Some(Redirection {
                            op,
                            fd: *fd,
                            target: if is_fd {
                                format!("&{}", word.value)
                            } else {
                                self.absolute(&word.value)
                            },
                            writes,
                            reads: !is_fd && !writes,
                            literal: !word.unresolved,
                        })
                    }
                    IoFileRedirectTarget::ProcessSubstitution(_, sub) => {
                        self.model.constructs.process_substitution = true;
                        self.walk_process_substitution(sub);
                        None
                    }
                }
            }
            IoRedirect::OutputAndError(w, append) => {
                let word = self.resolve_word(&w.value);
                Some(Redirection {
                    op: if *append { "&>>".into() } else { "&>".into() },
                    fd: None,
                    target: self.absolute(&word.value),
                    writes: true,
                    reads: false,
                    literal: !word.unresolved && !word.glob,
                })
            }
            IoRedirect::HereDocument(fd, doc) => {
                self.model.constructs.heredoc = true;
                let body = if doc.requires_expansion {
                    // Unquoted delimiter: `$(...)` in the body runs.
                    let resolved =
                        word::resolve_heredoc(&doc.doc.value, &self.known_vars(), &self.options);
                    match resolved {
                        Some(r) => {
                            for sub in &r.substitutions {
                                self.model.constructs.substitution = true;
                                self.walk_nested(&sub.text, Origin::Substitution, None);
                            }
                            if r.word.unresolved {
                                None
                            } else {
                                Some(r.word.value)
                            }
                        }
                        None => None,
                    }
                } else {
                    Some(doc.doc.value.clone())
                };
                if fd.is_none_or(|f| f == 0) {
                    *stdin = body;
                }
                Some(Redirection {
                    op: if doc.remove_tabs {
                        "<<-".into()
                    } else {
                        "<<".into()
                    },
                    fd: *fd,
                    target: doc.here_end.value.clone(),
                    writes: false,
                    reads: false,
                    literal: true,
                })
            }
            IoRedirect::HereString(fd, w) => {
                self.model.constructs.heredoc = true;
                let word = self.resolve_word(&w.value);
                if fd.is_none_or(|f| f == 0) {
                    *stdin = if word.unresolved {
                        None
                    } else {
                        Some(format!("{}\n", word.value))
                    };
                }
                Some(Redirection {
                    op: "<<<".into(),
                    fd: *fd,
                    target: String::new(),
                    writes: false,
                    reads: false,
                    literal: true,
                })
            }
        }
    }

    fn walk_process_substitution(&mut self, sub: &ast::SubshellCommand) {
        if self.depth + 1 > self.ctx.max_depth {
            self.model
                .unknown
                .push("process substitutions nested too deep".into());
            return;
        }
        let saved = std::mem::replace(&mut self.origin, Origin::ProcessSubstitution);
        let cwd = self.cwd.clone();
        self.depth += 1;
        self.walk_list(&sub.list);
        self.depth -= 1;
        self.cwd = cwd;
        self.origin = saved;
    }

    fn walk_simple(&mut self, sc: &ast::SimpleCommand) {
        let mut assignments = Vec::new();
        let mut redirections = Vec::new();
        let mut stdin = None;
        // The prefix then the suffix, without collecting them first.
        let prefix = sc.prefix.as_ref().map_or(&[][..], |p| p.0.as_slice());
        let suffix = sc.suffix.as_ref().map_or(&[][..], |p| p.0.as_slice());
        let items = prefix.iter().chain(suffix);
        let name_index = prefix.len();
        // Room for every word at once (brace expansion may still grow it).
        let mut words = Vec::with_capacity(prefix.len() + suffix.len() + 1);
        let mut name_done = false;
        for (i, item) in items.enumerate() {
            if i == name_index && !name_done {
                if let Some(w) = &sc.word_or_name {
                    words.push(self.resolve_word(&w.value));
                }
                name_done = true;
            }
            match item {
                CommandPrefixOrSuffixItem::IoRedirect(r) => {
                    if let Some(redir) = self.redirect(r, &mut stdin) {
                        redirections.push(redir);
                    }
                }
                CommandPrefixOrSuffixItem::Word(w) => self.resolve_words(&w.value, &mut words),
                CommandPrefixOrSuffixItem::AssignmentWord(a, w) => {
                    if i < name_index {
                        self.model.constructs.assignment_prefix = true;
                        let name = match &a.name {
                            ast::AssignmentName::VariableName(n) => n.clone(),
                            ast::AssignmentName::ArrayElementName(n, index) => {
                                if !word::arithmetic_is_known(index, &self.known_vars()) {
                                    self.model.unknown.push(format!(
                                        "`{n}[{index}]=`: the subscript is evaluated and its value is not known"
                                    ));
                                }
                                n.clone()
                            }
                        };
                        super::hazards::shell_internal_assignment(&name, &mut self.model.unknown);
                        let value = match &a.value {
                            ast::AssignmentValue::Scalar(v) => self.resolve_word(&v.value).value,
                            ast::AssignmentValue::Array(_) => String::from("(...)"),
                        };
                        assignments.push(Assignment { name, value });
                    } else {
                        words.push(self.resolve_word(&w.value));
                    }
                }
                CommandPrefixOrSuffixItem::ProcessSubstitution(_, sub) => {
                    self.model.constructs.process_substitution = true;
                    self.walk_process_substitution(sub);
                    let mut word = Word::spelled("/dev/fd/63", "<(...)");
                    word.unresolved = true;
                    words.push(word);
                }
            }
        }
        if !name_done && let Some(w) = &sc.word_or_name {
            let word = self.resolve_word(&w.value);
            words.insert(0, word);
        }
        let standalone = sc.word_or_name.is_none();
        for a in &assignments {
            self.tainted.insert(a.name.clone());
            // `n=3` alone sets a shell variable the arithmetic checks may read.
            if standalone && a.value.trim().parse::<i64>().is_ok() && !a.value.contains('$') {
                self.numeric.insert(a.name.clone());
            } else {
                self.numeric.remove(&a.name);
            }
        }
        self.taint_from_builtin(&words);
        self.finish_segment(words, assignments, redirections, stdin);
    }

    /// Unwraps wrappers and nested shells, tracks `cd`, and records the
    /// resulting segment(s). Each program kind has its own step below; a
    /// step either unwraps (the next word is the program), hands the rest
    /// to a nested parse, or leaves the words as the segment's command.
    fn finish_segment(
        &mut self,
        words: Vec<Word>,
        mut assignments: Vec<Assignment>,
        redirections: Vec<Redirection>,
        stdin_data: Option<String>,
    ) {
        let mut inherit = self.inherit.clone();
        inherit.assignments.append(&mut assignments);
        inherit.redirections.extend(redirections);
        let mut p = Pending {
            words,
            inherit,
            cwd: self.cwd.clone(),
            template: false,
            origin: self.origin,
            unknown: None,
            stdin_data,
            program: None,
            appends: false,
        };
        while !p.words.is_empty() {
            match self.program_kind(&mut p) {
                Step::Again => continue,
                Step::Record => break,
                Step::Nested => return,
            }
        }

        if p.words.first().is_some_and(|w| w.value == "pwd") {
            self.drop_cwd_sentinel(&mut p.inherit);
        }
        if p.unknown.is_none() {
            p.unknown = evaluates_subscripts(&p.words);
        }
        // (The known variables are built only for the builtins that read them.)
        if p.unknown.is_none() && super::hazards::builtin_may_evaluate(&p.words) {
            p.unknown = super::hazards::builtin_evaluates(&p.words, &self.known_vars());
        }
        self.push_segment(
            p.words,
            p.program,
            p.inherit,
            p.cwd,
            p.origin,
            p.template,
            p.stdin_data,
            p.unknown,
        );
    }

    /// One step of [`Walker::finish_segment`]: what kind of program the
    /// first word names, and what that kind does with the rest.
    fn program_kind(&mut self, p: &mut Pending) -> Step {
        let Some(name) = program_name(p) else {
            return Step::Record;
        };
        if (name == "busybox" || name == "toybox")
            && p.words.len() > 1
            && !p.words[1].value.starts_with('-')
        {
            return multi_call(p, name);
        }
        if SHELLS.contains(&name.as_str()) {
            return self.nested_shell(p, name);
        }
        match name.as_str() {
            "eval" => self.eval(p, name),
            "source" | "." => self.source(p, &name),
            "alias" | "trap" | "unalias" | "enable" | "hash" => changes_later_commands(p, &name),
            "find" => {
                self.find_templates(&p.words, &p.inherit, p.cwd.clone());
                p.program = Some(name);
                Step::Record
            }
            _ => {
                if let Some(spec) = wrapper_spec(&name) {
                    return self.wrapper(p, name, &spec);
                }
                match name.as_str() {
                    "cd" | "pushd" => self.cd(&p.words, &name),
                    // `popd` goes back to a directory this string may not know.
                    "popd" => self.cwd = None,
                    _ => {}
                }
                // The words are unchanged: the segment's program is `name`.
                p.program = Some(name);
                Step::Record
            }
        }
    }

    /// `bash -c STRING`, `sh <<EOF`, `bash script.sh`: a command string or
    /// heredoc is parsed as commands; commands from a pipe or standard
    /// input cannot be checked; a script is the segment's command.
    fn nested_shell(&mut self, p: &mut Pending, name: String) -> Step {
        match unwrap::shell_args(&p.words[1..]) {
            ShellArgs::Command { string } => {
                let s = &p.words[1 + string];
                if s.unresolved {
                    p.unknown = Some(format!("`{name} -c` is given a string that is not literal"));
                    return Step::Record;
                }
                if let Some(r) = p.inherit.replaced_in(&s.value) {
                    // The string is code built from input (a file name
                    // `a;touch x` becomes a command): review 12, F14. The
                    // safe spelling passes it as data: `sh -c '... "$1"' _ {}`.
                    p.unknown = Some(format!(
                        "the `{name} -c` string holds `{r}`, which is replaced by input at run time: the code is built from input (pass it as an argument: `{name} -c '... \"$1\"' _ {r}`)"
                    ));
                    return Step::Record;
                }
                let text = s.value.clone();
                let operands = &p.words[2 + string..];
                // `$1`... of a string run by xargs (which appends input)
                // or given a replacement string or an expansion are not
                // known: `find -exec sh -c 'echo > "$1"' _ {} \;` writes
                // each match (review 12, F14).
                let from_input = p.appends
                    || operands
                        .iter()
                        .any(|w| w.unresolved || p.inherit.replaced_in(&w.value).is_some());
                let positional = operands.iter().map(|w| w.value.clone()).collect();
                p.inherit
                    .notes
                    .push(format!("nested `{name} -c` string parsed as commands"));
                p.inherit.wrappers.push(name);
                let saved = std::mem::replace(&mut self.positional_from_input, from_input);
                let step = self.nest(p, &text, Some(positional));
                self.positional_from_input = saved;
                step
            }
            ShellArgs::Stdin => {
                if let Some(data) = p.stdin_data.take() {
                    p.inherit.notes.push(format!(
                        "`{name}` reads its commands from a heredoc, parsed as commands"
                    ));
                    p.inherit.wrappers.push(name);
                    return self.nest(p, &data, None);
                }
                p.unknown = Some(if self.pipe_index > 0 {
                    format!("`{name}` reads commands from a pipe; they cannot be checked")
                } else {
                    format!("`{name}` reads commands from standard input; they cannot be checked")
                });
                Step::Record
            }
            ShellArgs::Script { .. } => Step::Record,
            ShellArgs::Unknown(why) => {
                p.unknown = Some(why);
                Step::Record
            }
        }
    }

    /// `eval WORDS...`: literal words are joined and parsed as commands.
    fn eval(&mut self, p: &mut Pending, name: String) -> Step {
        if p.words[1..].iter().any(|w| w.unresolved) {
            p.unknown = Some("`eval` of a string that is not literal".into());
            return Step::Record;
        }
        let text = p.words[1..]
            .iter()
            .map(|w| w.value.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        p.inherit
            .notes
            .push("`eval` of a literal string parsed as commands".into());
        p.inherit.wrappers.push(name);
        self.nest(p, &text, None)
    }

    /// `source FILE`, `. FILE`: a file whose commands cannot be checked,
    /// unless it is a trusted harness snapshot.
    fn source(&mut self, p: &mut Pending, name: &str) -> Step {
        let trusted = p.words.get(1).is_some_and(|f| {
            !f.unresolved
                && self.ctx.trusted.iter().any(|t| match t {
                    TrustedStep::SourceUnder(dir) => under(Path::new(&f.value), dir),
                    TrustedStep::CwdSentinelUnder(_) => false,
                })
        });
        if trusted {
            p.inherit
                .notes
                .push("sources a trusted harness snapshot".into());
        } else {
            p.unknown = Some(format!(
                "`{name}` runs a file whose commands cannot be checked"
            ));
        }
        Step::Record
    }

    /// A wrapper (`env`, `sudo`, `timeout`, `xargs`, ...; profiles/wrappers.toml):
    /// what it reads, writes, assigns and where it moves are recorded, and
    /// the command it runs is the next program.
    fn wrapper(&mut self, p: &mut Pending, name: String, spec: &WrapperSpec) -> Step {
        let u = unwrap::unwrap(&name, spec, &p.words[1..]);
        if let Some(why) = u.unknown {
            p.unknown = Some(why);
            return Step::Record;
        }
        // A command string or directory holding an enclosing template's
        // replacement string is completed from input at run time: `xargs
        // -I{} su -c 'cat {}'`, `find -exec env -C {} ...` (review 12, F14).
        if let Some(r) = [&u.shell_string, &u.chdir]
            .into_iter()
            .flatten()
            .find_map(|w| p.inherit.replaced_in(&w.value))
        {
            p.unknown = Some(format!(
                "`{name}` is given a command string or directory holding `{r}`, which is replaced by input at run time"
            ));
            return Step::Record;
        }
        // A wrapper with no command that gets arguments at run time
        // (`xargs timeout 5`, `xargs nice`, `xargs xargs`) runs the program
        // its input names (review 11, F2). Checked before `lookup_only`:
        // `xargs env` alone would list the environment, but given the
        // input's words it runs them.
        if p.template && u.no_command {
            p.unknown = Some(format!(
                "`{name}` gets the program it runs from input at run time (xargs)"
            ));
            return Step::Record;
        }
        if u.lookup_only {
            return Step::Record;
        }
        // Before the interactive shell: `chroot DIR` alone runs a shell as root.
        p.inherit.escalated |= spec.escalates;
        for a in &u.assignments {
            self.tainted.insert(a.name.clone());
        }
        for f in &u.reads {
            if f.unresolved {
                p.unknown = Some(format!("`{name}` reads a file named by an expansion"));
            }
            p.inherit.reads.push(self.absolute(&f.value));
        }
        // A file the wrapper writes is checked like a redirection.
        for f in &u.writes {
            self.model.constructs.redirection = true;
            p.inherit.redirections.push(Redirection {
                op: format!("{name} writes"),
                fd: None,
                target: self.absolute(&f.value),
                writes: true,
                reads: false,
                literal: !f.unresolved && !f.glob,
            });
        }
        // After the files it writes (`script LOG` alone writes LOG).
        if u.interactive_shell {
            p.unknown = Some(format!(
                "`{name}` without a command starts an interactive shell"
            ));
            return Step::Record;
        }
        p.inherit.assignments.extend(u.assignments);
        if let Some(dir) = &u.chdir {
            p.cwd = if dir.unresolved {
                None
            } else {
                p.cwd
                    .take()
                    .map(|c| Rc::from(join_physical(&c, &dir.value)))
            };
        }
        if u.split
            && let Some(s) = &u.shell_string
        {
            return env_split(p, name, s, &u.rest);
        }
        if let Some(s) = u.shell_string {
            if s.unresolved {
                p.unknown = Some(format!(
                    "`{name}` is given a command string that is not literal"
                ));
                return Step::Record;
            }
            let mut text = s.value.clone();
            for w in &u.rest {
                text.push(' ');
                text.push_str(&shell_quote(&w.value));
            }
            p.inherit
                .notes
                .push(format!("`{name}` command string parsed as commands"));
            p.inherit.wrappers.push(name);
            return self.nest(p, &text, None);
        }
        if u.template {
            p.appends = u.replace.is_empty();
        }
        p.inherit.replace.extend(u.replace);
        if u.template {
            p.template = true;
            p.origin = Origin::ExecTemplate;
            p.inherit
                .notes
                .push(format!("`{name}` appends arguments at run time"));
        }
        p.inherit.wrappers.push(name);
        p.words = u.rest;
        Step::Again
    }

    /// `cd DIR`, `pushd DIR`: the working directory of the commands after
    /// it, when it is known (`None` when it is not).
    fn cd(&mut self, words: &[Word], name: &str) {
        let target = words
            .iter()
            .skip(1)
            .find(|w| !w.value.starts_with('-') || w.value == "-");
        let cdpath = self.ctx.cdpath || self.tainted.contains("CDPATH");
        let searched = target.is_some_and(|t| {
            !t.value.starts_with('/')
                && !t.value.starts_with("./")
                && !t.value.starts_with("../")
                && t.value != "."
                && t.value != ".."
        });
        if cdpath && searched {
            self.cwd = None;
            return;
        }
        let physical = self.physical
            || words[1..]
                .iter()
                .take_while(|w| w.value.starts_with('-') && w.value != "-" && w.value != "--")
                .any(|w| w.value.contains('P'));
        // `pushd +N`, `pushd -N`, `pushd` alone rotate the stack.
        let rotates = name == "pushd"
            && target.is_none_or(|t| {
                t.value.len() > 1
                    && t.value.starts_with(['+', '-'])
                    && t.value[1..].chars().all(|c| c.is_ascii_digit())
            });
        if rotates {
            self.cwd = None;
            return;
        }
        let from = self.cwd.clone();
        let back = match (&self.oldpwd, &self.cwd) {
            (Some((to, left)), Some(c)) if to == c => Some(left.clone()),
            _ => None,
        };
        self.cwd = match (target, &self.cwd) {
            // `cd -` after a `cd` of this string: `$OLDPWD` is known.
            (Some(t), Some(_)) if t.value == "-" && back.is_some() => back,
            (None, _) => Some(Rc::from(&*self.ctx.home)),
            (Some(t), Some(c)) if !t.unresolved && !t.glob && t.value != "-" => {
                let lexical = join_clean(c, &t.value);
                let has_parent = t.value.split('/').any(|p| p == "..");
                if physical && has_parent {
                    // `..` after a symbolic link goes to the link
                    // target's parent: ask the filesystem.
                    std::fs::canonicalize(Path::new(&**c).join(&t.value))
                        .ok()
                        .map(Rc::from)
                } else {
                    Some(Rc::from(lexical))
                }
            }
            _ => None,
        };
        self.oldpwd = match (&from, &self.cwd) {
            (Some(f), Some(c)) => Some((c.clone(), f.clone())),
            _ => None,
        };
        // A `cd` to a directory that does not exist now may fail; the
        // commands after its list then run where the shell was.
        if let Some(c) = &self.cwd
            && !c.is_dir()
            && !self.errexit
            && !self.created.iter().any(|d| **d == **c)
        {
            self.cd_uncertain = true;
        }
    }

    /// Hands `text` to a nested parse with the pending segment's inherited
    /// state and working directory.
    fn nest(&mut self, p: &mut Pending, text: &str, positional: Option<Vec<String>>) -> Step {
        let inherit = std::mem::take(&mut p.inherit);
        self.nested_with(inherit, p.cwd.take(), text, Origin::NestedShell, positional);
        Step::Nested
    }

    /// Agent harnesses end their wrapper with `pwd -P >| /tmp/claude-XXXX-cwd`
    /// to learn where the command left the shell. That write is the
    /// harness's, not the command's: it is recognised (a `pwd` whose output
    /// goes to a `*-cwd` file directly in a trusted temp directory) and not
    /// counted against the command.
    fn drop_cwd_sentinel(&self, inherit: &mut Inherit) {
        let dirs: Vec<&PathBuf> = self
            .ctx
            .trusted
            .iter()
            .filter_map(|t| match t {
                TrustedStep::CwdSentinelUnder(d) => Some(d),
                TrustedStep::SourceUnder(_) => None,
            })
            .collect();
        let before = inherit.redirections.len();
        inherit.redirections.retain(|r| {
            let p = Path::new(&r.target);
            let sentinel = r.writes
                && r.literal
                && r.fd.is_none_or(|fd| fd == 1)
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.ends_with("-cwd") && !n.starts_with('.'))
                && p.parent()
                    .is_some_and(|parent| dirs.iter().any(|d| parent == d.as_path()));
            !sentinel
        });
        if inherit.redirections.len() != before {
            inherit
                .notes
                .push("harness cwd sentinel (`pwd > TMP/*-cwd`) recognised".into());
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn push_segment(
        &mut self,
        words: Vec<Word>,
        program: Option<String>,
        inherit: Inherit,
        cwd: Cwd,
        origin: Origin,
        template: bool,
        stdin_data: Option<String>,
        mut unknown: Option<String>,
    ) {
        if self.model.segments.len() >= self.ctx.max_segments {
            if self.model.segments.len() == self.ctx.max_segments {
                self.model.unknown.push(format!(
                    "more than {} commands in one string",
                    self.ctx.max_segments
                ));
            }
            return;
        }
        let cwd = match cwd {
            Some(c) => c.to_path_buf(),
            None => {
                unknown.get_or_insert_with(|| "the working directory is not known here (after `cd -`, `popd`, a `cd` that may fail, or a `cd` in only some branches of an `if`, `case` or `&&`/`||` list)".into());
                self.ctx.cwd.to_path_buf()
            }
        };
        // (`normalize_program` of the first word, unless the caller has it.)
        let program = program.unwrap_or_else(|| {
            words
                .first()
                .map(|w| normalize_program(&w.value))
                .unwrap_or_default()
        });
        let cwd_uncertain = if inherit.per_match_dir {
            // `find -execdir CMD`: CMD runs in the directory of each match,
            // anywhere below the start points (`.git` for `./.git/hooks`):
            // its relative paths are not the tracked cwd's (review 12, F16).
            Some("run by `find -execdir`/`-okdir` in the directory of each match: its relative paths are relative to a directory not known here".to_string())
        } else {
            self.cwd_doubt.then(|| "the working directory depends on control flow here (a `cd` that may fail, or a `cd` in only some branches of an `if`, `case`, loop or `&&`/`||` list)".to_string())
        };
        self.model.segments.push(Segment {
            cwd_uncertain,
            program,
            words,
            assignments: inherit.assignments,
            redirections: inherit.redirections,
            escalated: inherit.escalated,
            wrappers: inherit.wrappers,
            cwd,
            origin,
            depth: self.depth,
            stdin_data,
            pipeline: self.pipeline,
            pipe_index: self.pipe_index,
            template,
            reads: inherit.reads,
            unknown,
            notes: inherit.notes,
        });
    }

    fn nested_with(
        &mut self,
        inherit: Inherit,
        cwd: Cwd,
        text: &str,
        origin: Origin,
        positional: Option<Vec<String>>,
    ) {
        let saved_inherit = std::mem::replace(&mut self.inherit, inherit);
        let saved_cwd = std::mem::replace(&mut self.cwd, cwd);
        self.walk_nested(text, origin, positional);
        self.cwd = saved_cwd;
        self.inherit = saved_inherit;
    }

    /// `find ... -exec CMD ARGS ;` runs CMD for each match: record CMD as a
    /// template segment next to `find` itself.
    fn find_templates(&mut self, words: &[Word], inherit: &Inherit, cwd: Cwd) {
        let mut i = 1;
        while i < words.len() {
            let v = words[i].value.as_str();
            if matches!(v, "-exec" | "-execdir" | "-ok" | "-okdir") {
                let start = i + 1;
                let mut end = start;
                while end < words.len() && !matches!(words[end].value.as_str(), ";" | "+") {
                    end += 1;
                }
                if start < end {
                    let mut inner = inherit.clone();
                    inner.redirections.clear();
                    inner.wrappers.push("find".into());
                    inner.replace.push("{}".into());
                    inner.per_match_dir |= matches!(v, "-execdir" | "-okdir");
                    inner.notes.push(format!(
                        "run by `find {v}` for each match; `{{}}` is a found path"
                    ));
                    let saved = std::mem::replace(&mut self.inherit, inner);
                    let saved_origin = std::mem::replace(&mut self.origin, Origin::ExecTemplate);
                    let saved_cwd = std::mem::replace(&mut self.cwd, cwd.clone());
                    self.depth += 1;
                    self.finish_segment(words[start..end].to_vec(), Vec::new(), Vec::new(), None);
                    if let Some(last) = self.model.segments.last_mut() {
                        last.template = true;
                    }
                    self.depth -= 1;
                    self.cwd = saved_cwd;
                    self.origin = saved_origin;
                    self.inherit = saved;
                }
                i = end + 1;
            } else {
                i += 1;
            }
        }
    }

    fn absolute(&self, p: &str) -> String {
        match &self.cwd {
            Some(c) if !p.starts_with('/') && !p.is_empty() => {
                // A `..` is kept for the policy, which reads it through
                // the links the string makes (review 11, F1); the
                // filesystem's own links are read here.
                if p.split('/').any(|x| x == "..") {
                    format!("{}/{p}", c.to_string_lossy().trim_end_matches('/'))
                } else {
                    join_physical(c, p).to_string_lossy().into_owned()
                }
            }
            _ => p.to_string(),
        }
    }
}

/// Builtins that evaluate array subscripts or arithmetic in their
/// arguments, running any `$(...)` there even when it was quoted
/// (`[[ 'a[$(cmd)]' -eq 1 ]]`, `printf -v 'a[$(cmd)]' x`, `unset 'a[$(cmd)]'`).
const SUBSCRIPT_BUILTINS: &[&str] = &[
    "[[",
    "test",
    "[",
    "printf",
    "unset",
    "declare",
    "typeset",
    "local",
    "let",
    "read",
    "readonly",
    "export",
    "mapfile",
    "readarray",
    "shift",
    "return",
    "exit",
    "wait",
    "ulimit",
];

/// The segment being unwrapped: what [`Walker::finish_segment`] carries
/// from one program kind to the next.
struct Pending {
    words: Vec<Word>,
    inherit: Inherit,
    cwd: Cwd,
    template: bool,
    origin: Origin,
    unknown: Option<String>,
    stdin_data: Option<String>,
    /// The normalised program name of the first word, when the last step
    /// computed it and left the words as they were (what
    /// [`Walker::push_segment`] would compute again).
    program: Option<String>,
    /// The command gets more arguments appended at run time (`xargs`
    /// without `-I`).
    appends: bool,
}

/// What a program kind did with the pending segment.
enum Step {
    /// A wrapper was unwrapped: the new first word is the program.
    Again,
    /// The words are the segment's command: record it.
    Record,
    /// The rest was parsed as commands of their own (`sh -c`, `eval`).
    Nested,
}

/// The program the first word names, normalised; `None` (with the reason
/// in `p.unknown`) when it is not written literally.
fn program_name(p: &mut Pending) -> Option<String> {
    let first = &p.words[0];
    if first.unresolved || first.glob || !first.literal && first.value.contains('$') {
        p.unknown = Some(format!(
            "the program name `{}` is not a literal word",
            first.raw()
        ));
        return None;
    }
    // `~/bin/tool`: the home directory is known, and nothing else
    // in the word expands; the program is that path.
    let home_program = first.raw().starts_with("~/")
        && !first.raw().contains(['$', '`', '"', '\\', '\''])
        && !first.value.starts_with('~');
    if !first.literal && !home_program {
        p.unknown = Some(format!(
            "the program name `{}` contains an expansion; the program must be written literally",
            first.raw()
        ));
        return None;
    }
    let name = normalize_program(&first.value);
    if name != first.value {
        p.inherit
            .notes
            .push(format!("program `{}` normalised to `{name}`", first.value));
    } else if first.raw().starts_with('\\') || first.raw() != first.value {
        p.inherit.notes.push(format!(
            "program `{}` read as `{name}` after quote removal",
            first.raw()
        ));
    }
    Some(name)
}

/// `busybox APPLET ARGS...`: the applet is the program.
fn multi_call(p: &mut Pending, name: String) -> Step {
    p.inherit.notes.push(format!(
        "multi-call `{name}` runs applet `{}`",
        p.words[1].value
    ));
    p.inherit.wrappers.push(name);
    p.words.remove(0);
    Step::Again
}

/// `alias`, `trap`, `enable`, `hash` with operands change how later
/// commands run, which is not modelled. `unalias NAME...` only removes
/// aliases: later commands then run what safe-exec models (it assumes no
/// aliases). Agents' wrappers use it (Claude Code 2.1.330: `{ \builtin
/// unalias -- 'which'; \builtin unset -f -- 'which'; } >/dev/null 2>&1 ||
/// true`). Only literal operands; anything else stays unknown.
fn changes_later_commands(p: &mut Pending, name: &str) -> Step {
    let removes_aliases = name == "unalias" && p.words[1..].iter().all(|w| !w.unresolved);
    if p.words.len() > 1 && !removes_aliases {
        p.unknown = Some(format!(
            "`{name}` changes how later commands run; not modelled"
        ));
    }
    Step::Record
}

/// `env -S STRING ARGS...`: env splits STRING itself; no shell is involved.
fn env_split(p: &mut Pending, name: String, s: &Word, rest: &[Word]) -> Step {
    if s.unresolved {
        p.unknown = Some(format!("`{name} -S` is given a string that is not literal"));
        return Step::Record;
    }
    match unwrap::env_split(&s.value) {
        Ok(split) => {
            p.inherit
                .notes
                .push(format!("`{name} -S` string split as env splits it"));
            p.inherit.wrappers.push(name);
            let mut next: Vec<Word> = split.into_iter().map(Word::literal).collect();
            next.extend(rest.iter().cloned());
            p.words = next;
            Step::Again
        }
        Err(why) => {
            p.unknown = Some(why);
            Step::Record
        }
    }
}

fn evaluates_subscripts(words: &[Word]) -> Option<String> {
    let program = words.first()?.value.as_str();
    if !SUBSCRIPT_BUILTINS.contains(&program) {
        return None;
    }
    words[1..].iter().find(|w| w.value.contains("$(") || w.value.contains('`')).map(|w| {
        format!("`{program}` evaluates `{}` as arithmetic or an array subscript, which runs the command inside", w.raw())
    })
}

fn under(p: &Path, dir: &Path) -> bool {
    let clean = join_clean(Path::new("/"), &p.to_string_lossy());
    clean.starts_with(dir)
}

/// Quotes a word for re-parsing as part of a shell string.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%^".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// Maximum nesting of `(`, `{` and `` ` `` outside single quotes: a cheap
/// guard so a pathological string cannot exhaust the parser's stack.
fn bracket_depth(s: &str) -> usize {
    let mut depth: usize = 0;
    let mut max = 0;
    let mut in_single = false;
    let mut escaped = false;
    for c in s.chars() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' if !in_single => escaped = true,
            '\'' => in_single = !in_single,
            '(' | '{' if !in_single => {
                depth += 1;
                max = max.max(depth);
            }
            ')' | '}' if !in_single => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

fn collect_test_words(e: &ast::ExtendedTestExpr, f: &mut dyn FnMut(&ast::Word)) {
    use ast::ExtendedTestExpr as E;
    match e {
        E::And(a, b) | E::Or(a, b) => {
            collect_test_words(a, f);
            collect_test_words(b, f);
        }
        E::Not(a) | E::Parenthesized(a) => collect_test_words(a, f),
        E::UnaryTest(_, w) => f(w),
        E::BinaryTest(_, a, b) => {
            f(a);
            f(b);
        }
    }
}
