//! Configuration as plain data: the profile's schema (every section,
//! including the later stages' `[audit]`, `[guard]`, `[[hook]]`,
//! `[validator]`), the command registry and the safety rules it carries,
//! the path placeholders, and [`Profile`], the loaded profile every stage
//! reads. Nothing here loads a file or judges a command: loading is
//! `crate::profile`, judging the stages above.

pub mod keywords;
pub mod patterns;
pub mod profile;
pub mod refuse;
pub mod registry;
pub mod rules;
pub mod schema;
pub mod sections;

pub use profile::{Placeholders, Profile, RefusedRoot};
