//! Runs the deciding layers in order on one request: parse (layer 0), static
//! policy (layer 1), and the later layers as they are configured. Every entry
//! point (run, `check`, `hook`, the shell mode) goes through here, so they
//! cannot disagree.

use std::path::PathBuf;

use crate::config::{Placeholders, Profile};
use crate::parse::{self, CommandModel, ParseContext, TrustedStep};
use crate::policy::{self, PolicyContext, Verdict};

pub use crate::request::{CommandInput, Situation};

/// Result of the deciding layers.
#[derive(Debug)]
pub struct Decided {
    /// Layer 0 output.
    pub model: CommandModel,
    /// Combined verdict.
    pub verdict: Verdict,
}

/// Parse context for a profile and situation.
/// The situation's paths and the positional parameters are borrowed, not
/// copied.
pub fn parse_context<'a>(
    profile: &Profile,
    sit: &'a Situation,
    positional: &'a [String],
) -> ParseContext<'a> {
    let trusted = profile.trusted_shared(&sit.places, || trusted_steps(profile, sit));
    context_with(profile, sit, positional, trusted)
}

/// The harness steps the parser may trust in this situation. A directory
/// the command may write cannot be trusted to hold the harness's
/// snapshots: the agent could plant a file there. Computed once per
/// situation (the profile keeps the steps, the sentinel's directory
/// included), not per decision.
fn trusted_steps(profile: &Profile, sit: &Situation) -> Vec<TrustedStep> {
    let writable = profile.writable_roots(&sit.places);
    let mut steps: Vec<TrustedStep> = profile
        .expand_list(&sit.places, &profile.doc.shell.trusted_source_dirs)
        .into_iter()
        .filter(|d| !writable.iter().any(|w| d.starts_with(w)))
        .map(TrustedStep::SourceUnder)
        .collect();
    steps.push(TrustedStep::CwdSentinelUnder(sit.places.tmp.clone()));
    steps
}

/// [`parse_context`] with the trusted steps already in hand.
fn context_with<'a>(
    profile: &Profile,
    sit: &'a Situation,
    positional: &'a [String],
    trusted: std::sync::Arc<[TrustedStep]>,
) -> ParseContext<'a> {
    let shell = &profile.doc.shell;
    ParseContext {
        cwd: sit.places.cwd.as_path().into(),
        home: sit.places.home.as_path().into(),
        tmpdir: sit.tmpdir_env.clone(),
        positional: positional.into(),
        max_depth: shell.max_depth,
        max_segments: shell.max_segments,
        max_length: shell.max_length,
        cdpath: std::env::var_os("CDPATH").is_some_and(|v| !v.is_empty()),
        trusted,
    }
}

/// Parses the input (layer 0).
pub fn parse_input(input: &CommandInput, profile: &Profile, sit: &Situation) -> CommandModel {
    match input {
        CommandInput::List(argv) => parse::parse_list(argv, &parse_context(profile, sit, &[])),
        CommandInput::String { text, positional } => {
            parse::parse_string(text, &parse_context(profile, sit, positional))
        }
    }
}

/// Runs layers 0 and 1.
pub fn decide(input: &CommandInput, profile: &Profile, sit: &Situation) -> Decided {
    // The roots and the trusted steps in one look at the profile's cache.
    let (roots, trusted) = profile.roots_and_trusted(
        &sit.places,
        || profile.roots(&sit.places),
        || trusted_steps(profile, sit),
    );
    let model = match input {
        CommandInput::List(argv) => {
            parse::parse_list(argv, &context_with(profile, sit, &[], trusted))
        }
        CommandInput::String { text, positional } => {
            parse::parse_string(text, &context_with(profile, sit, positional, trusted))
        }
    };
    let is_confined = confined(profile, sit);
    let ctx = PolicyContext {
        profile,
        roots: &roots,
        interactive: sit.interactive,
        confined: is_confined,
        writes_seen: Default::default(),
        seen_before: Default::default(),
        trees_landed: Default::default(),
        dots_unknown: Default::default(),
        written: Vec::new(),
        links: Vec::new(),
        written_text: Vec::new(),
        resolved: Default::default(),
        job_vars: Vec::new(),
        negative_vars: Vec::new(),
        shopt: false,
        made_repos: Vec::new(),
        path_dirs: if is_confined {
            policy::program_path::CallerPath::default()
        } else {
            policy::program_path::CallerPath::new(
                std::env::var_os("PATH").as_deref(),
                &sit.places.cwd,
                &sit.places.home,
            )
        },
    };
    let raw = match input {
        CommandInput::String { text, .. } => Some(text.as_str()),
        CommandInput::List(_) => None,
    };
    let verdict = policy::evaluate(&model, &ctx, raw);
    Decided { model, verdict }
}

/// Whether the decision is made for a confined run: the situation says the
/// command runs inside the sandbox, and the kernel achieves the profile's
/// enforcement. `enforcement = "required"` refuses to run when it cannot
/// (exit 125), so the decision may count on it; `best-effort` on a kernel
/// that lacks a needed feature runs the command unconfined, and decides so.
pub fn confined(profile: &Profile, sit: &Situation) -> bool {
    if !sit.confined {
        return false;
    }
    if profile.doc.sandbox.enforcement == crate::sandbox::Enforcement::Required {
        return true;
    }
    let spec = profile.sandbox_spec(&sit.places, None);
    crate::sandbox::predict_report(&spec).missing.is_empty()
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
            walked: None,
        },
        tmpdir_env: None,
        interactive: false,
        confined: true,
    }
}

/// Who runs the command and how, for layers 2 and 3.
#[derive(Debug, Clone, Default)]
pub struct LayerOptions {
    /// `--session`; else `SAFE_EXEC_SESSION`; else `default`.
    pub session: Option<String>,
    /// `--agent`; else `SAFE_EXEC_AGENT`.
    pub agent: Option<String>,
    /// Record the command in the guard's session state. `false` for
    /// `check`, which must not change anything.
    pub record: bool,
    /// Options shown to the validator (`opts`).
    pub opts: serde_json::Value,
    /// Metadata shown to the validator (e.g. from an agent hook's input).
    pub metadata: serde_json::Value,
}

impl LayerOptions {
    /// The session id in force.
    pub fn session_id(&self) -> String {
        self.session
            .clone()
            .or_else(|| std::env::var("SAFE_EXEC_SESSION").ok())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "default".into())
    }

    /// The agent in force.
    pub fn agent_name(&self) -> Option<String> {
        self.agent
            .clone()
            .or_else(|| std::env::var("SAFE_EXEC_AGENT").ok())
            .filter(|s| !s.is_empty())
    }
}

/// What layers 2 and 3 leave for the lifecycle hooks and the audit log.
#[derive(Debug, Clone, Default)]
pub struct Layered {
    /// Id of this command's audit records and history entry.
    pub id: String,
    /// When the command was decided (ms since the epoch).
    pub now_ms: u64,
    /// Session id.
    pub session: String,
    /// Agent name.
    pub agent: Option<String>,
    /// The validation context (null when no validator ran); its
    /// execution-context part is reused for `on_execution`.
    pub context: serde_json::Value,
    /// The guard's report (None when the guard is off or did not record).
    pub guard: Option<crate::guard::Report>,
}

/// Runs layers 0 and 1 ([`decide`]), then the validator (layer 2) and the
/// guard (layer 3) when the profile configures them. The strictest decision
/// wins; the validator and the guard can only keep or tighten. With neither
/// configured this is [`decide`] plus nothing: no state is read or written.
pub fn decide_full(
    input: &CommandInput,
    profile: &Profile,
    sit: &Situation,
    lo: &LayerOptions,
) -> (Decided, Layered) {
    use crate::{audit, guard, validator};
    let mut d = decide(input, profile, sit);
    let now_ms = crate::sys::time::now_ms();
    let mut lay = Layered {
        id: audit::new_id(now_ms),
        now_ms,
        session: lo.session_id(),
        agent: lo.agent_name(),
        context: serde_json::Value::Null,
        guard: None,
    };
    let (v, g) = (&profile.doc.validator, &profile.doc.guard);
    if !v.enabled() && !g.enabled {
        return (d, lay);
    }
    let store = g
        .enabled
        .then(|| guard::Store::new(&sit.places.state, &lay.session));
    let prior = store.as_ref().and_then(guard::Store::peek);
    if v.enabled() {
        let caller = validator::context::Caller {
            session: lay.session.clone(),
            agent: lay.agent.clone(),
            opts: lo.opts.clone(),
            metadata: lo.metadata.clone(),
        };
        lay.context = validator::context::build(
            input,
            &d.model,
            &d.verdict,
            sit,
            profile,
            &caller,
            prior.as_ref(),
            now_ms,
        );
        let answer = validator::validate(v, &lay.context);
        validator::apply(&answer, &mut d.verdict);
    }
    if let Some(store) = store {
        let raw = crate::sys::redact::text(&input.raw());
        let cur = guard::Current::new(g, lay.id.clone(), now_ms, raw, &d.model);
        if lo.record {
            match guard::check_and_record(g, &store, &lay.session, &cur, &mut d.verdict) {
                Ok(r) => lay.guard = Some(r),
                Err(e) => d.verdict.add(
                    crate::policy::Layer::Guard,
                    crate::policy::ReasonId::GuardState,
                    crate::policy::Decision::Deny,
                    e.to_string(),
                    None,
                ),
            }
        } else {
            guard::evaluate(g, &prior.unwrap_or_default(), &cur, &mut d.verdict);
        }
    }
    d.verdict.settle();
    (d, lay)
}
