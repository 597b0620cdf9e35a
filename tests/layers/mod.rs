//! The layers after the policy: validator, guard, hooks, audit.

mod audit;
mod guard;
mod hooks;
mod validator;
