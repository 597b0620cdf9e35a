pub mod run;
pub mod sandbox;
