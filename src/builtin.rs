//! The built-in data of `profiles/`, embedded at build time by `build.rs`.

/// One group of `profiles/env/variables.toml`: (what, names, scrub, fold,
/// except, safe_values).
pub type VarGroup = (
    &'static str,
    &'static [&'static str],
    bool,
    bool,
    &'static [&'static str],
    &'static [&'static str],
);

include!(concat!(env!("OUT_DIR"), "/builtin_data.rs"));
