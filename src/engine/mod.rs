//! The projection engine: pure logic, no IO, no clock, no randomness.

pub mod estimate;
pub mod toolrules;
