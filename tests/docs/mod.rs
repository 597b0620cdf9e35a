//! Documentation that cannot drift from the code.

mod readme;
