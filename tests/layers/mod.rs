//! The layers after the policy: validator, guard, hooks, audit.

mod audit;
mod audit_default;
mod guard;
mod hooks;
mod validator;
