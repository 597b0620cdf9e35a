//! safe-exec: an exec shim between AI coding agents and the kernel.
//!
//! The code follows the data: request → [`parse`] (layer 0) → [`policy`]
//! (layer 1) → validator (layer 2) → guard (layer 3) → confirmation →
//! [`sandbox`]ed [`run`] → hooks and audit. [`decide`] runs the deciding
//! layers in order; each stage has one job and a typed input and output.

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
