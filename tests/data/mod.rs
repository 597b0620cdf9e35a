//! Built-in data (registry, wrappers, rules, profiles).

mod builtin;
mod builtin_profiles;
