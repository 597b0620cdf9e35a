//! The one sequence run mode, `check` and the hook share, written once:
//! every deciding layer ([`judge`]: parse, policy, validator, guard), then
//! the command's lifecycle ([`Judged::lifecycle`]: global and profile hooks,
//! the audit sinks) and its gate ([`Judged::gated`]: session events and the
//! blocking hooks, which can only keep or tighten the verdict). What each
//! entry point does with the result (prompt and run, print JSON, answer the
//! agent) stays with it in `crate::cli`.

use crate::config::Profile;
use crate::decide::{self, Decided, LayerOptions, Layered};
use crate::hooks::HookFileError;
use crate::hooks::lifecycle::Lifecycle;
use crate::policy::Verdict;
use crate::request::{CommandInput, Situation};

/// A command after every deciding layer.
#[derive(Debug)]
pub struct Judged {
    /// The model and the layers' verdict.
    pub decided: Decided,
    /// What the validator and the guard leave for the lifecycle.
    pub layered: Layered,
}

/// Runs every deciding layer on `input` ([`decide::decide_full`]).
pub fn judge(
    input: &CommandInput,
    profile: &Profile,
    sit: &Situation,
    opts: &LayerOptions,
) -> Judged {
    let (decided, layered) = decide::decide_full(input, profile, sit, opts);
    Judged { decided, layered }
}

impl Judged {
    /// The lifecycle of this command: the hooks (the system's global ones
    /// from `hooks_dir`, then the profile's) and the audit sinks. A broken
    /// global hook file is an error.
    pub fn lifecycle<'a>(
        &'a self,
        profile: &'a Profile,
        hooks_dir: Option<&str>,
        input: &CommandInput,
        sit: &'a Situation,
    ) -> Result<Lifecycle<'a>, HookFileError> {
        Lifecycle::new(profile, hooks_dir, input, &self.decided, sit, &self.layered)
    }

    /// The verdict that stands after the session events and the blocking
    /// hooks. `before` sees the layers' verdict first (run mode prints its
    /// warnings there, before any hook runs).
    pub fn gated(&self, life: &mut Lifecycle, before: impl FnOnce(&Verdict)) -> Verdict {
        let mut verdict = self.decided.verdict.clone();
        before(&verdict);
        life.session_events();
        life.gate(&mut verdict);
        verdict
    }
}
