//! Lifecycle hooks (seed 001) as external programs: `[[hook]]` entries in a
//! profile and in the system's `hooks.d/*.toml` files. A hook gets the hook
//! context as JSON on stdin. Blocking events (`pre_tool_use`,
//! `permission_request`) can deny or ask and fail closed; notification
//! events never block and fail open. Global hooks fire before profile hooks.

pub mod explain;
pub use crate::sys::external;
pub mod lifecycle;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value, json};

pub use crate::config::sections::{Event, HookDef, Matcher};

pub use crate::sys::external::OUTPUT_CAP;

/// A hook with where it came from, for messages and the documented order.
#[derive(Debug, Clone)]
pub struct Registered {
    /// The definition.
    pub def: HookDef,
    /// `hooks.d/10-x.toml#2` or `profile NAME#1`.
    pub origin: String,
}

/// All hooks that apply, in firing order: global hooks (files of the hooks
/// directory in byte order of their names, then file order), then the
/// profile's hooks in file order.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    /// Hooks in firing order.
    pub hooks: Vec<Registered>,
}

/// A global hook file could not be used. The run stops with exit 125: a
/// broken global hook must not silently stop guarding.
#[derive(Debug, thiserror::Error)]
pub enum HookFileError {
    /// The directory or a file could not be read.
    #[error("{path}: cannot read global hooks: {err}")]
    Io {
        /// The path.
        path: String,
        /// The error.
        err: std::io::Error,
    },
    /// A file is not valid.
    #[error("{path}: {message} (global hook files hold only `[[hook]]` entries)")]
    Invalid {
        /// The path.
        path: String,
        /// What is wrong.
        message: String,
    },
}

/// A `hooks.d/*.toml` file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HookFile {
    #[serde(default)]
    hook: Vec<HookDef>,
}

/// The global hooks directory: the system config's `hooks_dir`, else
/// `/etc/safe-exec/hooks.d`. `SAFE_EXEC_HOOKS_DIR` moves it only when the
/// real system config file does not exist (tests, unprivileged installs),
/// like `SAFE_EXEC_SYSTEM_CONFIG`.
pub fn global_dir(configured: Option<&str>) -> PathBuf {
    if let Some(d) = configured {
        return PathBuf::from(d);
    }
    let real = Path::new("/etc/safe-exec/config.toml");
    match std::env::var_os("SAFE_EXEC_HOOKS_DIR") {
        Some(d) if !real.exists() => PathBuf::from(d),
        _ => PathBuf::from("/etc/safe-exec/hooks.d"),
    }
}

impl Registry {
    /// Global hooks from `dir` (absent directory: none), then `profile_hooks`.
    pub fn load(
        dir: &Path,
        profile_name: &str,
        profile_hooks: &[HookDef],
    ) -> Result<Self, HookFileError> {
        let mut hooks = Vec::new();
        let entries = match std::fs::read_dir(dir) {
            Ok(e) => Some(e),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(err) => {
                return Err(HookFileError::Io {
                    path: dir.display().to_string(),
                    err,
                });
            }
        };
        if let Some(entries) = entries {
            let mut files: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "toml"))
                .collect();
            files.sort();
            for f in files {
                let path = f.display().to_string();
                let text = std::fs::read_to_string(&f).map_err(|err| HookFileError::Io {
                    path: path.clone(),
                    err,
                })?;
                let file: HookFile = toml::from_str(&text).map_err(|e| HookFileError::Invalid {
                    path: path.clone(),
                    message: e.message().trim().to_string(),
                })?;
                for (i, def) in file.hook.into_iter().enumerate() {
                    hooks.push(Registered {
                        def,
                        origin: format!("{path}#{}", i + 1),
                    });
                }
            }
        }
        for (i, def) in profile_hooks.iter().enumerate() {
            hooks.push(Registered {
                def: def.clone(),
                origin: format!("profile {profile_name} hook #{}", i + 1),
            });
        }
        Ok(Registry { hooks })
    }

    /// Whether any hook is registered for `event`.
    pub fn has(&self, event: Event) -> bool {
        self.hooks.iter().any(|h| h.def.event == event)
    }

    /// Whether no hook is registered at all.
    pub fn is_empty(&self) -> bool {
        self.hooks.is_empty()
    }

    /// The hooks that fire for `event` and these programs, in order.
    pub fn matching<'a>(
        &'a self,
        event: Event,
        programs: &'a [String],
    ) -> impl Iterator<Item = &'a Registered> + 'a {
        let tool_event = matches!(
            event,
            Event::PreToolUse
                | Event::PermissionRequest
                | Event::PostToolUse
                | Event::PostToolUseFailure
        );
        self.hooks.iter().filter(move |h| {
            h.def.event == event
                && match (&h.def.matcher, tool_event) {
                    (Some(m), true) => programs.iter().any(|p| m.matches(p)),
                    _ => true,
                }
        })
    }

    /// Fires `event`: each matching hook gets the context (with the metadata
    /// added by earlier hooks) on stdin. Blocking events stop at the first
    /// deny or ask; notification events always continue and return their
    /// failures as notices.
    pub fn fire(&self, event: Event, ctx: &mut Value, programs: &[String]) -> Fired {
        let mut notices = Vec::new();
        if let Some(o) = ctx.as_object_mut() {
            o.insert("event".into(), json!(event.as_str()));
            o.entry("metadata").or_insert_with(|| json!({}));
        }
        for h in self.matching(event, programs) {
            let input = serde_json::to_vec(ctx).unwrap_or_default();
            let res = external::run(
                &h.def.command,
                &input,
                Duration::from_millis(h.def.timeout_ms),
                OUTPUT_CAP,
            );
            let who = format!(
                "hook `{}` ({}, {})",
                h.def.command.join(" "),
                event.as_str(),
                h.origin
            );
            match interpret(res) {
                Answer::Continue(meta) => merge_metadata(ctx, meta),
                Answer::Deny(reason) | Answer::Ask(reason) | Answer::Broken(reason)
                    if !event.is_blocking() =>
                {
                    notices.push(format!(
                        "{who}: {reason} (ignored: notification hooks never block)"
                    ));
                }
                Answer::Deny(reason) => {
                    return Fired {
                        outcome: Blocked::Deny(format!("{who} denied: {reason}")),
                        notices,
                    };
                }
                Answer::Ask(reason) => {
                    return Fired {
                        outcome: Blocked::Ask(format!("{who} asks: {reason}")),
                        notices,
                    };
                }
                Answer::Broken(reason) => {
                    return Fired {
                        outcome: Blocked::Deny(format!(
                            "{who} failed, so the command is denied (fail-closed): {reason}"
                        )),
                        notices,
                    };
                }
            }
        }
        Fired {
            outcome: Blocked::Continue,
            notices,
        }
    }
}

/// What firing an event came to.
#[derive(Debug, Clone)]
pub struct Fired {
    /// Continue, deny or ask (notification events always continue).
    pub outcome: Blocked,
    /// Failures of notification hooks (to be logged).
    pub notices: Vec<String>,
}

/// The outcome of a blocking event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Blocked {
    /// Every hook let it through.
    Continue,
    /// A hook denied (or failed): the message names the hook.
    Deny(String),
    /// A hook asked for confirmation.
    Ask(String),
}

enum Answer {
    Continue(Option<Map<String, Value>>),
    Deny(String),
    Ask(String),
    Broken(String),
}

/// Reads a hook's answer: exit 0 with empty output or a JSON object
/// (`decision` allow/deny/ask, optional `reason`, optional `metadata`),
/// exit 2 denies with stderr as the reason; anything else is broken.
fn interpret(res: Result<external::Finished, external::Failure>) -> Answer {
    let f = match res {
        Ok(f) => f,
        Err(e) => return Answer::Broken(e.to_string()),
    };
    if f.code == 2 {
        let why = f.stderr.trim();
        return Answer::Deny(if why.is_empty() {
            "exit status 2".into()
        } else {
            why.chars().take(500).collect()
        });
    }
    if f.code != 0 {
        return Answer::Broken(format!("exit status {} (only 0 and 2 are answers)", f.code));
    }
    let out = f.stdout.trim();
    if out.is_empty() {
        return Answer::Continue(None);
    }
    let v: Value = match serde_json::from_str(out) {
        Ok(v @ Value::Object(_)) => v,
        _ => {
            return Answer::Broken(format!(
                "output is not a JSON object: {:?}",
                out.chars().take(120).collect::<String>()
            ));
        }
    };
    let reason = v
        .get("reason")
        .and_then(Value::as_str)
        .unwrap_or("no reason given")
        .to_string();
    let meta = v.get("metadata").and_then(Value::as_object).cloned();
    match v.get("decision").and_then(Value::as_str) {
        None | Some("allow") | Some("continue") => Answer::Continue(meta),
        Some("deny") | Some("block") => Answer::Deny(reason),
        Some("ask") => Answer::Ask(reason),
        Some(other) => Answer::Broken(format!(
            "unknown decision `{other}` (use allow, deny or ask)"
        )),
    }
}

fn merge_metadata(ctx: &mut Value, meta: Option<Map<String, Value>>) {
    let Some(meta) = meta else { return };
    if let Some(m) = ctx
        .as_object_mut()
        .and_then(|o| o.get_mut("metadata"))
        .and_then(Value::as_object_mut)
    {
        m.extend(meta);
    }
}

/// What in `a` (the candidate) is looser than `b` (the pinned profile):
/// every pinned hook must still be there.
pub fn loosens(a: &[HookDef], b: &[HookDef]) -> Vec<String> {
    let key = |h: &HookDef| serde_json::to_string(h).unwrap_or_default();
    let have: Vec<String> = a.iter().map(key).collect();
    b.iter()
        .filter(|h| !have.contains(&key(h)))
        .map(|h| {
            format!(
                "[[hook]] {} `{}` dropped",
                h.event.as_str(),
                h.command.join(" ")
            )
        })
        .collect()
}
