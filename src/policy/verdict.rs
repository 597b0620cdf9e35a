//! Decisions and reasons, shared by every deciding layer. The strictest
//! decision wins and every reason names its layer and rule.

use serde::Serialize;

use super::reason::ReasonId;
use super::registry::Risk;
use super::rules::Severity;

/// allow / ask / deny, ordered from most to least permissive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Runs.
    #[default]
    Allow,
    /// Needs a person's confirmation.
    Ask,
    /// Refused.
    Deny,
}

impl Decision {
    /// Output spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Deny => "deny",
        }
    }
}

/// How hard a confirmation must be (contract: standard by default, strong
/// for dangerous risk, very strong for experimental commands).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Confirmation {
    /// `y`
    Standard,
    /// `yes`
    Strong,
    /// The program's name.
    VeryStrong,
}

/// The stage that produced a reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    /// Layer 0: the command could not be modelled.
    Parse,
    /// Layer 1: registry, rules, shell shape, roots, mode.
    Policy,
    /// Layer 2: the profile's validator command.
    Validator,
    /// Layer 3: rate limits and temporal patterns.
    Guard,
    /// A lifecycle hook.
    Hook,
    /// The confirmation prompt.
    Confirmation,
    /// The sandbox could not be set up.
    Sandbox,
}

/// Why a command is not simply allowed.
#[derive(Debug, Clone, Serialize)]
pub struct Reason {
    /// Which stage.
    pub layer: Layer,
    /// Stable id of the check (`registry.unknown_command`, a rule id, ...).
    pub rule: String,
    /// What the check decided.
    pub decision: Decision,
    /// A sentence a person can act on.
    pub message: String,
    /// A safer way to do the same job, if there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<String>,
}

impl Reason {
    /// The reason as one line: message plus suggestion.
    pub fn line(&self) -> String {
        match &self.suggestion {
            Some(s) => format!("{} (try: {s})", self.message),
            None => self.message.clone(),
        }
    }
}

/// The combined result of the deciding layers.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Verdict {
    /// allow / ask / deny.
    pub decision: Decision,
    /// Highest risk of any segment.
    pub risk: Risk,
    /// Classifier severity.
    pub severity: Severity,
    /// Needed confirmation, when the decision is ask.
    pub confirmation: Option<Confirmation>,
    /// Why it is not simply allowed.
    pub reasons: Vec<Reason>,
    /// Informational warnings (network, archive overwrite, classifier warnings).
    pub warnings: Vec<String>,
    /// Rule ids that matched (classifier and policy checks).
    pub matched_rules: Vec<String>,
    /// Per-layer explanation lines for `--explain`.
    #[serde(skip)]
    pub explain: Vec<(Layer, String)>,
    /// Which layer decided the final outcome.
    pub decided_by: Option<Layer>,
    /// Network an accepted structured form needs (seed 002); the sandbox
    /// opens only this.
    pub network: Option<crate::sandbox::NetworkAccess>,
    /// Inline code found in the command (interpreter code, awk programs).
    #[serde(skip)]
    pub code: Vec<String>,
    /// Why the risk is dangerous, with safer alternatives where known.
    #[serde(skip)]
    pub danger: Vec<(String, Option<String>)>,
}

impl Verdict {
    /// Adds a reason with an id from the catalogue ([`ReasonId`]); the
    /// decision becomes the strictest seen.
    pub fn add(
        &mut self,
        layer: Layer,
        id: ReasonId,
        decision: Decision,
        message: String,
        suggestion: Option<String>,
    ) {
        self.add_data(layer, id.as_str(), decision, message, suggestion);
    }

    /// Records a catalogue id as matched without giving a reason (the
    /// decision is made later, by the mode).
    pub fn mark(&mut self, id: ReasonId) {
        if !self.matched_rules.iter().any(|r| r == id.as_str()) {
            self.matched_rules.push(id.as_str().to_string());
        }
    }

    /// Adds a reason whose id is defined by data, not by the code: a safety
    /// rule's id, `guard.<pattern id>`, or a reason carried over from a
    /// verdict on code the command runs. Ids the code defines go through
    /// [`Verdict::add`].
    pub fn add_data(
        &mut self,
        layer: Layer,
        rule: &str,
        decision: Decision,
        message: String,
        suggestion: Option<String>,
    ) {
        if decision > self.decision {
            self.decision = decision;
            self.decided_by = Some(layer);
        }
        if !self.matched_rules.iter().any(|r| r == rule) {
            self.matched_rules.push(rule.to_string());
        }
        if self
            .reasons
            .iter()
            .any(|r| r.rule == rule && r.message == message)
        {
            return;
        }
        self.reasons.push(Reason {
            layer,
            rule: rule.to_string(),
            decision,
            message,
            suggestion,
        });
    }

    /// Raises the needed confirmation level.
    pub fn need(&mut self, c: Confirmation) {
        self.confirmation = Some(self.confirmation.map_or(c, |o| o.max(c)));
    }

    /// Adds a warning once.
    pub fn warn(&mut self, w: String) {
        if !self.warnings.contains(&w) {
            self.warnings.push(w);
        }
    }

    /// Records an explanation line.
    pub fn note(&mut self, layer: Layer, line: String) {
        self.explain.push((layer, line));
    }

    /// Final clean-up: confirmation only for ask; reasons only when not allowed.
    pub fn settle(&mut self) {
        if self.decision == Decision::Ask {
            if self.confirmation.is_none() {
                self.confirmation = Some(Confirmation::Standard);
            }
        } else {
            self.confirmation = None;
        }
        if self.decision == Decision::Allow {
            self.reasons.clear();
        }
    }

    /// The one-line refusal text.
    pub fn refusal_line(&self) -> String {
        self.reasons
            .iter()
            .filter(|r| r.decision >= self.decision)
            .map(|r| r.line())
            .collect::<Vec<_>>()
            .join("; ")
    }
}
