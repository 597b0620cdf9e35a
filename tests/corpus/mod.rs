//! Corpora of real commands through the deciding layers.

mod decisions;
mod replay;
mod report;
