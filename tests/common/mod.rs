//! Helpers shared by every test module.

pub mod policy;
pub mod sandbox;
pub mod world;
