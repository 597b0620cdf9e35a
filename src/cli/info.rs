//! The informational subcommands: `classify`, `profile`, `rules`, `doctor`.

use serde_json::json;

use super::{ClassifyArgs, ProfileAction, RulesAction, error, situation};
use crate::decide::{Situation, example_situation};
use crate::policy::rules::{self, Classification};
use crate::profile::{self, Profile, SelectionInputs};
use crate::sandbox;

fn pick(name: Option<&str>) -> Result<Profile, String> {
    match name {
        Some(n) => profile::load(n).map_err(|e| e.to_string()),
        None => {
            let cwd = std::env::current_dir().unwrap_or_else(|_| "/".into());
            profile::select(&SelectionInputs::from_env(None, cwd))
                .map(|s| s.profile)
                .map_err(|e| e.to_string())
        }
    }
}

/// Classifies a string with the profile's rules (built-ins plus custom).
/// Inline code is found the way the policy finds it (typed operands), so
/// `classify` and `check` see the same views.
pub fn classify_string(profile: &Profile, text: &str, sit: &Situation) -> Classification {
    let input = crate::decide::CommandInput::String {
        text: text.to_string(),
        positional: vec!["sh".into()],
    };
    let d = crate::decide::decide(&input, profile, sit);
    let views = rules::views(&d.model, &d.verdict.code, Some(text));
    profile.rules.classify_views(&views)
}

/// `safe-exec classify [--json] STRING`
pub fn classify(a: ClassifyArgs) -> i32 {
    let profile = match pick(a.profile.as_deref()) {
        Ok(p) => p,
        Err(e) => return error(e),
    };
    let sit =
        situation::build(&Default::default(), None, false).unwrap_or_else(|_| example_situation());
    let c = classify_string(&profile, &a.string, &sit);
    if a.json {
        // Seed 004's exact shape and key order.
        let rules = serde_json::to_string(&c.matched_rules).unwrap_or_else(|_| "[]".into());
        println!(
            "{{\"severity\": \"{}\", \"matchedRules\": {rules}}}",
            c.severity.as_str()
        );
    } else {
        println!("{}", c.severity.as_str());
        for (id, label, sev, view) in &c.matches {
            println!("  {id} ({}): {label} — matched `{view}`", sev.as_str());
        }
    }
    0
}

/// `safe-exec profile list|show|check`
pub fn profile(action: ProfileAction) -> i32 {
    match action {
        ProfileAction::List => {
            for name in profile::builtin_names() {
                match profile::load(name) {
                    Ok(p) => println!("{name}\t{}", p.doc.description),
                    Err(e) => println!("{name}\t(broken: {e})"),
                }
            }
            0
        }
        ProfileAction::Show { name } => match profile::load(&name) {
            Ok(p) => match toml::to_string_pretty(&p.doc) {
                Ok(t) => {
                    println!("# {} ({})\n{t}", p.name, p.source);
                    0
                }
                Err(e) => error(format!("cannot print the profile: {e}")),
            },
            Err(e) => error(e),
        },
        ProfileAction::Check { file } => match profile::load(&file) {
            Ok(p) => {
                let mut errs = crate::policy::registry::check_builtin();
                errs.extend(crate::profile::examples::check_all(&p));
                if errs.is_empty() {
                    println!(
                        "{}: ok ({} registry entries, {} rules, all examples hold)",
                        p.source,
                        p.registry.names().len(),
                        p.rules.rules().len()
                    );
                    0
                } else {
                    for e in &errs {
                        eprintln!("safe-exec: error: {e}");
                    }
                    super::EXIT_ERROR
                }
            }
            Err(e) => error(e),
        },
    }
}

/// `safe-exec rules list [--json]`
pub fn rules(action: RulesAction) -> i32 {
    let RulesAction::List { json, profile } = action;
    let profile = match pick(profile.as_deref()) {
        Ok(p) => p,
        Err(e) => return error(e),
    };
    let defs: Result<Vec<_>, String> = profile
        .rules
        .rules()
        .iter()
        .map(|r| r.compiled().map(|c| c.0.clone()).map_err(String::from))
        .collect();
    let defs = match defs {
        Ok(d) => d,
        Err(e) => return error(e),
    };
    if json {
        match serde_json::to_string_pretty(&defs) {
            Ok(s) => println!("{s}"),
            Err(e) => return error(e),
        }
    } else {
        for d in &defs {
            println!(
                "{:<32} {:<9} {:<22} {}",
                d.id,
                d.severity.as_str(),
                d.category,
                d.label
            );
        }
    }
    0
}

/// `safe-exec doctor [--json]`
pub fn doctor(as_json: bool) -> i32 {
    let k = sandbox::kernel::probe_kernel();
    let sit =
        situation::build(&Default::default(), None, false).unwrap_or_else(|_| example_situation());
    let mut profiles = Vec::new();
    for name in profile::builtin_names() {
        let Ok(p) = profile::load(name) else { continue };
        let spec = p.sandbox_spec(&sit.places, None);
        let report = sandbox::predict_report(&spec);
        let works =
            report.missing.is_empty() || spec.enforcement == sandbox::Enforcement::BestEffort;
        profiles.push(json!({"profile": name, "enforcement": spec.enforcement, "would_run": works, "enforced": report}));
    }
    let agents = super::setup::status();
    // The mechanisms, tried for the default profile as this caller would run it.
    let (mechanisms, unlisted) = match profile::load("default") {
        Ok(p) => {
            let mut spec = p.sandbox_spec(&sit.places, None);
            // As a run sets it: the supervisor brokers ptys when it runs.
            spec.pty_broker = crate::supervisor::available();
            (
                sandbox::selftest::mechanisms(&spec),
                sandbox::selftest::unlisted(&spec),
            )
        }
        Err(_) => (Vec::new(), Vec::new()),
    };
    let supervisor = crate::supervisor::mechanisms();
    let caps_held = sandbox::caps::names(sandbox::caps::current().permitted);
    let value = json!({
        "version": env!("CARGO_PKG_VERSION"),
        "kernel": k,
        "mechanisms": mechanisms,
        "supervisor": {
            "available": crate::supervisor::available(),
            "mechanisms": supervisor,
        },
        "unlisted_directories": unlisted,
        "capabilities_held": caps_held,
        "profiles": profiles,
        "agents": agents,
    });
    if as_json {
        println!("{value}");
    } else {
        println!("safe-exec {}", env!("CARGO_PKG_VERSION"));
        println!(
            "kernel {}: Landlock ABI {} ({}), safe-exec uses up to ABI {}",
            k.kernel_release,
            k.landlock_abi,
            k.landlock_status,
            k.landlock_abi_supported_by_safe_exec
        );
        println!(
            "seccomp: {}  (already filtered: {:?} filters)",
            if k.seccomp {
                "available"
            } else {
                "NOT available"
            },
            k.seccomp_filters
        );
        println!(
            "container: {}",
            k.container
                .clone()
                .unwrap_or_else(|| "none detected".into())
        );
        println!("mechanisms (tried for the default profile):");
        let show = |m: &crate::sandbox::selftest::Mechanism| {
            let state = if m.enforced {
                "enforced"
            } else {
                "NOT enforced"
            };
            println!("  {:<26} {:<13} {}", m.name, state, m.detail);
        };
        mechanisms.iter().for_each(show);
        println!(
            "supervisor: {}",
            if crate::supervisor::available() {
                "available"
            } else {
                "NOT available (needs seccomp user notification and pidfd_getfd, Linux 5.9+)"
            }
        );
        supervisor.iter().skip(1).for_each(show);
        for u in &unlisted {
            let granted: Vec<String> = u.granted.iter().map(|g| g.display().to_string()).collect();
            println!(
                "could not list {} ({}): granted only {} through it; its other entries are not readable in the sandbox",
                u.path.display(),
                u.error,
                if granted.is_empty() {
                    "nothing".to_string()
                } else {
                    granted.join(", ")
                }
            );
        }
        for name in ["claude-code", "codex"] {
            println!(
                "agent {name}: {}",
                agents[name]["summary"].as_str().unwrap_or("")
            );
        }
        for p in &profiles {
            println!(
                "profile {}: {}",
                p["profile"],
                if p["would_run"].as_bool() == Some(true) {
                    "enforceable here"
                } else {
                    "CANNOT be enforced here"
                }
            );
            if let Some(m) = p["enforced"]["missing"].as_array() {
                for x in m {
                    println!("  missing: {x}");
                }
            }
        }
    }
    if k.landlock_abi == 0 || !k.seccomp {
        1
    } else {
        0
    }
}
