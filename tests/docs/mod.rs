//! Documentation that cannot drift from the code.

mod drift;
mod readme;
mod reasons;
