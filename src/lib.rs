//! safe-exec: an exec shim between AI coding agents and the kernel.
//!
//! The code follows the data: [`request`] → [`parse`] (layer 0) →
//! [`policy`] (layer 1) → [`validator`] (layer 2) → [`guard`] (layer 3) →
//! [`confirm`]ation → [`sandbox`]ed [`run`] → [`hooks`] and [`audit`].
//! [`decide`] runs the deciding layers in order and [`pipeline`] adds the
//! command's lifecycle, for run mode, `check` and the hook alike.
//!
//! The modules are layered (docs/architecture.md, "Modules and layers"):
//! leaves ([`builtin`], [`bound`], [`sys`]) at the bottom, the profile as
//! plain data ([`config`]) below the stages, loading ([`profile`]) and the
//! entry points ([`cli`]) at the top. A module uses only lower ones;
//! `tests/structure/layers.rs` fails on a use that goes up.

pub mod audit;
pub mod bound;
pub mod builtin;
pub mod cli;
pub mod config;
pub mod confirm;
pub mod decide;
pub mod guard;
pub mod hooks;
pub mod parse;
pub mod pipeline;
pub mod policy;
pub mod profile;
pub mod request;
pub mod run;
pub mod sandbox;
pub mod supervisor;
pub mod sys;
pub mod validator;
