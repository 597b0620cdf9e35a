//! The supervisor's exec-time check, judged by the safety rules: run mode
//! hands the supervisor this judge ([`crate::supervisor::ExecJudge`]), so the
//! supervisor, below the policy, never imports it.

use std::sync::Arc;

use crate::config::rules::{RuleSet, Severity};
use crate::supervisor::ExecJudge;

/// The profile's rules (built-in plus custom) as the supervisor's judge.
#[derive(Debug)]
struct RulesJudge(Arc<RuleSet>);

impl ExecJudge for RulesJudge {
    fn critical(&self, views: &[String]) -> Vec<String> {
        let c = self.0.classify_views(views);
        if c.severity != Severity::Critical {
            return Vec::new();
        }
        let labels: Vec<String> = c
            .matches
            .iter()
            .filter(|m| m.2 == Severity::Critical)
            .map(|m| format!("{} ({})", m.1, m.0))
            .collect();
        // Critical with no label to show still refuses (an empty list lets
        // the exec run).
        if labels.is_empty() {
            vec![String::new()]
        } else {
            labels
        }
    }
}

/// A judge for the exec-time check from the profile's rule set (the one
/// the decision used: built-ins plus the profile's custom rules), shared,
/// not built a second time.
pub fn exec_judge(rules: Arc<RuleSet>) -> Arc<dyn ExecJudge> {
    Arc::new(RulesJudge(rules))
}
