//! Agent integration: Claude Code and Codex hooks, shells and classify.

mod classify;
mod home_under_tmp;
mod hook;
mod hook_bounds;
mod hook_protocols;
mod layers;
mod real;
mod roots;
mod shell;
