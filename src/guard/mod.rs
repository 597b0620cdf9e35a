//! Layer 3: the guard. Per-session state under `{state}/sessions/ID.json`
//! (rate limits, denial lockout, recent history) and temporal patterns over
//! that history. Many processes of one session update the state under an
//! exclusive `flock` on `ID.lock`, and the state file is replaced by rename,
//! so no update is lost and unlocked readers never see half a file.

pub use crate::config::patterns;

use crate::sys::os as sys;

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::parse::CommandModel;
use crate::policy::{Decision, Layer, Verdict};
use patterns::{ClassDef, Kind, PatternAction, PatternDef, Seg};

pub use crate::config::sections::GuardSection;

impl GuardSection {
    /// The classes in force: built-in plus the profile's.
    pub fn classes(&self) -> Vec<&ClassDef> {
        patterns::builtins()
            .class
            .iter()
            .chain(&self.class)
            .collect()
    }

    /// The patterns in force: built-ins (unless disabled or replaced), then
    /// the profile's.
    pub fn patterns(&self) -> Vec<&PatternDef> {
        let mut out: Vec<&PatternDef> = Vec::new();
        if self.builtin_patterns {
            out.extend(patterns::builtins().pattern.iter().filter(|p| {
                !self.disable.contains(&p.id) && !self.pattern.iter().any(|q| q.id == p.id)
            }));
        }
        out.extend(
            self.pattern
                .iter()
                .filter(|p| !self.disable.contains(&p.id)),
        );
        out
    }
}

/// Problems in `[guard]` that the types cannot express; reported when the
/// profile loads.
pub fn check_config(g: &GuardSection) -> Vec<String> {
    let mut errs = Vec::new();
    if let Some(e) = patterns::builtins_error() {
        errs.push(e.to_string());
    }
    let classes: Vec<&str> = g.classes().iter().map(|c| c.name.as_str()).collect();
    for p in &g.pattern {
        let at = format!("[[guard.pattern]] `{}`", p.id);
        match p.kind {
            Kind::Sequence if p.steps.is_empty() => errs.push(format!(
                "{at}: a sequence needs `steps` (class names in order)"
            )),
            Kind::Burst if p.class.is_none() || p.count == 0 => errs.push(format!(
                "{at}: a burst needs `class` and `count` (at least 1)"
            )),
            Kind::Retry if !(0.0..=1.0).contains(&p.similarity) => {
                errs.push(format!("{at}: `similarity` must be between 0.0 and 1.0"))
            }
            _ => {}
        }
        for c in p.steps.iter().chain(&p.class) {
            if !classes.contains(&c.as_str()) {
                errs.push(format!(
                    "{at}: unknown class `{c}` (define it with [[guard.class]] or use one of {})",
                    dedup(&classes).join(", ")
                ));
            }
        }
    }
    let ids: Vec<&str> = patterns::builtins()
        .pattern
        .iter()
        .map(|p| p.id.as_str())
        .collect();
    for d in &g.disable {
        if !ids.contains(&d.as_str()) && !g.pattern.iter().any(|p| &p.id == d) {
            errs.push(format!(
                "[guard] disable: no pattern `{d}` (built-ins: {})",
                ids.join(", ")
            ));
        }
    }
    errs
}

fn dedup<'a>(v: &[&'a str]) -> Vec<&'a str> {
    let mut o: Vec<&str> = Vec::new();
    for x in v {
        if !o.contains(x) {
            o.push(x);
        }
    }
    o
}

/// What in `a` (the candidate) is looser than `b` (the pinned profile).
pub fn loosens(a: &GuardSection, b: &GuardSection) -> Vec<String> {
    if b.enabled && a != b {
        vec!["[guard] differs from the pinned guard".into()]
    } else {
        Vec::new()
    }
}

/// One command in a session's history.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Entry {
    /// Id shared with the audit records of this command.
    pub id: String,
    /// Milliseconds since the epoch.
    pub ts_ms: u64,
    /// The raw command (secrets redacted).
    pub raw: String,
    /// `list` or `string`.
    pub form: String,
    /// The segments as the patterns see them.
    pub segments: Vec<Seg>,
    /// The decision after layers 1 to 3 (updated if a hook or the
    /// confirmation later refused it).
    #[serde(with = "decision_text")]
    pub decision: Decision,
    /// Which layer decided (`policy`, `validator`, `guard`, `hook`, ...).
    pub decided_by: Option<String>,
}

/// `Decision` as its output spelling (the policy type only serializes).
mod decision_text {
    use crate::policy::Decision;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Decision, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(d.as_str())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Decision, D::Error> {
        Ok(match String::deserialize(d)?.as_str() {
            "allow" => Decision::Allow,
            "ask" => Decision::Ask,
            _ => Decision::Deny,
        })
    }
}

/// A session's state file.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct SessionState {
    /// Session id.
    pub session: String,
    /// When the session started (ms).
    pub started_ms: u64,
    /// When its last command arrived (ms).
    pub last_ms: u64,
    /// Commands seen (every invocation that reached the guard).
    pub commands: u64,
    /// Of those: allowed.
    pub allowed: u64,
    /// Of those: asked.
    pub asked: u64,
    /// Of those: denied (by any layer).
    pub denied: u64,
    /// Arrival times within the rate window.
    pub command_times: Vec<u64>,
    /// Denial times within the denial window.
    pub denial_times: Vec<u64>,
    /// Locked out until this time (ms), if locked.
    pub lockout_until_ms: Option<u64>,
    /// Recent commands, oldest first.
    pub history: Vec<Entry>,
}

/// The guard's state could not be used. The command is then denied: the
/// guard does not fail open.
#[derive(Debug, thiserror::Error)]
pub enum GuardError {
    /// The sessions directory or a file in it is unusable.
    #[error(
        "guard state {path}: {err} (make the state directory writable, or set SAFE_EXEC_STATE_DIR)"
    )]
    Io {
        /// The path.
        path: String,
        /// The error.
        err: std::io::Error,
    },
}

/// The session's files.
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
    file: String,
}

/// A session id made safe as a file name: `[A-Za-z0-9._-]` up to 100
/// characters are kept, anything else is hex-encoded.
pub fn file_stem(session: &str) -> String {
    let ok = !session.is_empty()
        && session.len() <= 100
        && !session.starts_with('.')
        && session
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    if ok {
        session.to_string()
    } else {
        let hex: String = session
            .bytes()
            .take(100)
            .map(|b| format!("{b:02x}"))
            .collect();
        format!("x-{hex}")
    }
}

impl Store {
    /// The store of `session` under `state`.
    pub fn new(state: &Path, session: &str) -> Self {
        Store {
            dir: state.join("sessions"),
            file: file_stem(session),
        }
    }

    fn json(&self) -> PathBuf {
        self.dir.join(format!("{}.json", self.file))
    }

    fn io(&self, path: &Path, err: std::io::Error) -> GuardError {
        GuardError::Io {
            path: path.display().to_string(),
            err,
        }
    }

    /// Reads the state without locking (for the validator's history and for
    /// `check`): the file is replaced by rename, so it is always whole.
    pub fn peek(&self) -> Option<SessionState> {
        let text = fs::read(self.json()).ok()?;
        serde_json::from_slice(&text).ok()
    }

    /// Read-modify-write under the session lock: `f` gets the current state
    /// (default when new) and changes it; the result is written atomically.
    pub fn update<T>(&self, f: impl FnOnce(&mut SessionState) -> T) -> Result<T, GuardError> {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)
            .map_err(|e| self.io(&self.dir, e))?;
        let lock_path = self.dir.join(format!("{}.lock", self.file));
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(&lock_path)
            .map_err(|e| self.io(&lock_path, e))?;
        let lock = sys::lock_exclusive(lock).map_err(|e| self.io(&lock_path, e))?;
        let path = self.json();
        let mut state = match fs::read(&path) {
            Ok(b) => serde_json::from_slice(&b).unwrap_or_default(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => SessionState::default(),
            Err(e) => return Err(self.io(&path, e)),
        };
        let out = f(&mut state);
        let tmp = self.dir.join(format!("{}.json.tmp", self.file));
        let bytes = serde_json::to_vec(&state).unwrap_or_default();
        let write = || -> std::io::Result<()> {
            let mut t: File = OpenOptions::new()
                .create(true)
                .truncate(true)
                .write(true)
                .mode(0o600)
                .open(&tmp)?;
            t.write_all(&bytes)?;
            fs::rename(&tmp, &path)
        };
        write().map_err(|e| self.io(&path, e))?;
        drop(lock);
        Ok(out)
    }
}

/// The current command as the guard sees it.
#[derive(Debug, Clone)]
pub struct Current {
    /// Id shared with the audit records.
    pub id: String,
    /// Now (ms).
    pub now_ms: u64,
    /// Redacted raw command.
    pub raw: String,
    /// `list` or `string`.
    pub form: String,
    /// Segments with tags and file names.
    pub segments: Vec<Seg>,
}

impl Current {
    /// Builds the guard's view of a parsed command.
    pub fn new(
        cfg: &GuardSection,
        id: String,
        now_ms: u64,
        raw: String,
        model: &CommandModel,
    ) -> Self {
        let classes = cfg.classes();
        let segments = model
            .segments
            .iter()
            .map(|s| {
                let argv0 = s.words.first().map(|w| w.value.clone()).unwrap_or_default();
                let rest: Vec<String> = s.words.iter().skip(1).map(|w| w.value.clone()).collect();
                let args: Vec<String> = crate::sys::redact::args(&rest);
                let targets: Vec<String> = s
                    .redirections
                    .iter()
                    .filter(|r| r.writes)
                    .map(|r| r.target.clone())
                    .collect();
                Seg {
                    tags: patterns::tags(&classes, &s.program, &argv0, &args),
                    files: patterns::files(&argv0, &args, &targets),
                    program: s.program.clone(),
                    argv0,
                    args,
                }
            })
            .collect();
        Current {
            id,
            now_ms,
            raw,
            form: format!("{:?}", model.form).to_lowercase(),
            segments,
        }
    }
}

/// What the guard did, for the caller (hooks, audit, explain).
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// The session had no state before this command (fire `session_start`).
    pub new_session: bool,
    /// The previous session ended by idling (fire `session_end` with it).
    pub ended: Option<SessionState>,
    /// Counts after this command: commands, allowed, asked, denied.
    pub counts: (u64, u64, u64, u64),
}

fn secs(ms: u64) -> u64 {
    ms / 1000
}

/// Checks the current command against the session (rate limit, lockout,
/// patterns), adding reasons to the verdict. Pure: no I/O.
pub fn evaluate(cfg: &GuardSection, state: &SessionState, cur: &Current, verdict: &mut Verdict) {
    let now = cur.now_ms;
    if let Some(until) = state.lockout_until_ms
        && until > now
    {
        let msg = format!(
            "session locked out for {} more s after {} denials within {} s (guard.lockout); wait, or start a new session",
            secs(until - now) + 1,
            cfg.max_denials,
            cfg.denial_window_seconds
        );
        verdict.note(Layer::Guard, format!("guard: {msg}"));
        verdict.add(
            Layer::Guard,
            crate::policy::ReasonId::GuardLockout,
            Decision::Deny,
            msg,
            None,
        );
    }
    if cfg.max_commands > 0 {
        let from = now.saturating_sub(cfg.window_seconds * 1000);
        let n = state.command_times.iter().filter(|t| **t > from).count() as u64 + 1;
        if n > cfg.max_commands {
            let msg = format!(
                "rate limit: {n} commands within {} s, the profile allows {} (guard.rate_limit); slow down",
                cfg.window_seconds, cfg.max_commands
            );
            verdict.note(Layer::Guard, format!("guard: {msg}"));
            verdict.add(
                Layer::Guard,
                crate::policy::ReasonId::GuardRateLimit,
                Decision::Deny,
                msg,
                None,
            );
        }
    }
    for p in cfg.patterns() {
        if let Some(earlier) = matches(p, state, cur) {
            let shown: Vec<String> = earlier
                .iter()
                .map(|e| format!("`{}` ({} s ago)", e.raw, secs(now.saturating_sub(e.ts_ms))))
                .collect();
            let msg = format!(
                "guard pattern `{}`: {}; earlier: {}",
                p.id,
                p.description,
                if shown.is_empty() {
                    "(this command)".to_string()
                } else {
                    shown.join(", ")
                }
            );
            let d = match p.action {
                PatternAction::Ask => Decision::Ask,
                PatternAction::Deny => Decision::Deny,
            };
            verdict.note(Layer::Guard, format!("guard: [{}] {msg}", d.as_str()));
            verdict.add_data(Layer::Guard, &format!("guard.{}", p.id), d, msg, None);
        }
    }
}

/// Whether pattern `p` matches with the current command; the earlier
/// commands that took part when it does.
fn matches<'a>(p: &PatternDef, state: &'a SessionState, cur: &Current) -> Option<Vec<&'a Entry>> {
    let from = cur.now_ms.saturating_sub(p.within_seconds * 1000);
    let recent: Vec<&Entry> = state.history.iter().filter(|e| e.ts_ms >= from).collect();
    match p.kind {
        Kind::Sequence => {
            // Events: segments of commands that were not denied, then the
            // current command's segments. The last step must be current.
            let mut events: Vec<(Option<&Entry>, &Seg)> = Vec::new();
            for e in recent.iter().filter(|e| e.decision != Decision::Deny) {
                for s in &e.segments {
                    events.push((Some(e), s));
                }
            }
            let first_current = events.len();
            for s in &cur.segments {
                events.push((None, s));
            }
            let n = p.steps.len();
            for end in (first_current..events.len()).rev() {
                if !events[end].1.tags.contains(&p.steps[n - 1]) {
                    continue;
                }
                if let Some(path) =
                    find_seq(&events[..end], &p.steps[..n - 1], events[end].1, p.linked)
                {
                    let mut out: Vec<&Entry> = Vec::new();
                    for i in path {
                        if let Some(e) = events[i].0
                            && !out.iter().any(|x| x.id == e.id)
                        {
                            out.push(e);
                        }
                    }
                    return Some(out);
                }
            }
            None
        }
        Kind::Burst => {
            let class = p.class.as_deref()?;
            let count = |segs: &[Seg]| {
                segs.iter()
                    .filter(|s| s.tags.iter().any(|t| t == class))
                    .count()
            };
            let here = count(&cur.segments);
            if here == 0 {
                return None;
            }
            let involved: Vec<&Entry> = recent
                .iter()
                .copied()
                .filter(|e| count(&e.segments) > 0)
                .collect();
            let total = here + involved.iter().map(|e| count(&e.segments)).sum::<usize>();
            (total >= p.count).then(|| involved.into_iter().rev().take(5).rev().collect())
        }
        Kind::Retry => {
            for e in recent.iter().rev() {
                let by_guard = e.decided_by.as_deref() == Some("guard");
                if e.decision != Decision::Deny || by_guard || e.raw == cur.raw {
                    continue;
                }
                let alike = cur.segments.iter().any(|c| {
                    e.segments.iter().any(|s| {
                        patterns::norm_program(&s.program) == patterns::norm_program(&c.program)
                            && patterns::similarity(
                                &patterns::arg_tokens(&s.args),
                                &patterns::arg_tokens(&c.args),
                            ) >= p.similarity
                    })
                });
                if alike {
                    return Some(vec![*e]);
                }
            }
            None
        }
    }
}

/// Finds indices in `events` matching `steps` in order, each step linked to
/// the next (shared file name) when `linked`; `last` is the final step's
/// segment. Backtracking; the lists are short.
fn find_seq(
    events: &[(Option<&Entry>, &Seg)],
    steps: &[String],
    last: &Seg,
    linked: bool,
) -> Option<Vec<usize>> {
    struct Search<'s, 'e> {
        events: &'s [(Option<&'e Entry>, &'s Seg)],
        steps: &'s [String],
        last: &'s Seg,
        linked: bool,
    }
    fn shares(a: &Seg, b: &Seg) -> bool {
        a.files.iter().any(|f| b.files.contains(f))
    }
    impl Search<'_, '_> {
        fn go(&self, k: usize, from: usize, prev: Option<&Seg>, path: &mut Vec<usize>) -> bool {
            if k == self.steps.len() {
                return !self.linked || prev.is_none_or(|p| shares(p, self.last));
            }
            for i in from..self.events.len() {
                let s = self.events[i].1;
                if !s.tags.contains(&self.steps[k]) {
                    continue;
                }
                if self.linked && prev.is_some_and(|p| !shares(p, s)) {
                    continue;
                }
                path.push(i);
                if self.go(k + 1, i + 1, Some(s), path) {
                    return true;
                }
                path.pop();
            }
            false
        }
    }
    let search = Search {
        events,
        steps,
        last,
        linked,
    };
    let mut path = Vec::new();
    search.go(0, 0, None, &mut path).then_some(path)
}

/// Checks the command and records it in the session, under the lock: the
/// counts, windows and history include it with the decision after the
/// guard. A new or idled-out session is reported for the lifecycle hooks.
pub fn check_and_record(
    cfg: &GuardSection,
    store: &Store,
    session: &str,
    cur: &Current,
    verdict: &mut Verdict,
) -> Result<Report, GuardError> {
    store.update(|state| {
        let mut report = Report::default();
        let now = cur.now_ms;
        if state.started_ms > 0
            && cfg.session_idle_seconds > 0
            && now.saturating_sub(state.last_ms) > cfg.session_idle_seconds * 1000
        {
            report.ended = Some(state.clone());
            *state = SessionState::default();
        }
        if state.started_ms == 0 {
            report.new_session = true;
            state.session = session.to_string();
            state.started_ms = now;
        }
        evaluate(cfg, state, cur, verdict);
        let d = verdict.decision;
        state.last_ms = now;
        state.commands += 1;
        match d {
            Decision::Allow => state.allowed += 1,
            Decision::Ask => state.asked += 1,
            Decision::Deny => state.denied += 1,
        }
        let rate_from = now.saturating_sub(cfg.window_seconds * 1000);
        state.command_times.retain(|t| *t > rate_from);
        state.command_times.push(now);
        let decided_by = verdict.decided_by.map(layer_name);
        if d == Decision::Deny && decided_by.as_deref() != Some("guard") {
            note_denial(cfg, state, now);
        } else {
            let from = now.saturating_sub(cfg.denial_window_seconds * 1000);
            state.denial_times.retain(|t| *t > from);
        }
        state.history.push(Entry {
            id: cur.id.clone(),
            ts_ms: now,
            raw: cur.raw.clone(),
            form: cur.form.clone(),
            segments: cur.segments.clone(),
            decision: d,
            decided_by,
        });
        let excess = state.history.len().saturating_sub(cfg.history_size.max(1));
        state.history.drain(..excess);
        report.counts = (state.commands, state.allowed, state.asked, state.denied);
        report
    })
}

fn note_denial(cfg: &GuardSection, state: &mut SessionState, now: u64) {
    let from = now.saturating_sub(cfg.denial_window_seconds * 1000);
    state.denial_times.retain(|t| *t > from);
    state.denial_times.push(now);
    if cfg.max_denials > 0 && state.denial_times.len() as u64 >= cfg.max_denials {
        state.lockout_until_ms = Some(now + cfg.lockout_seconds * 1000);
    }
}

/// A command the guard recorded as allowed or asked was refused later (by
/// a hook or at the confirmation prompt): count it as a denial.
pub fn record_late_denial(
    cfg: &GuardSection,
    store: &Store,
    id: &str,
    layer: Layer,
    now: u64,
) -> Result<(), GuardError> {
    store.update(|state| {
        let Some(e) = state.history.iter_mut().find(|e| e.id == id) else {
            return;
        };
        if e.decision == Decision::Deny {
            return;
        }
        match e.decision {
            Decision::Allow => state.allowed = state.allowed.saturating_sub(1),
            _ => state.asked = state.asked.saturating_sub(1),
        }
        e.decision = Decision::Deny;
        e.decided_by = Some(layer_name(layer));
        state.denied += 1;
        note_denial(cfg, state, now);
    })
}

/// The layer's name as in JSON output.
pub fn layer_name(l: Layer) -> String {
    serde_json::to_value(l)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}
