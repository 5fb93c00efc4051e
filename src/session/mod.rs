//! Sessions: the engine driven over a stored task call by call, as a live
//! agent would run it, with the store kept between calls.

pub(crate) mod cost;
pub(crate) mod driver;
mod live;
pub(crate) mod models;
mod raw_history;
pub mod record;
pub(crate) mod replay;
pub mod run;
pub mod settings;
mod stored;

pub use cost::{Prices, Totals};
pub use replay::StepRow;

#[cfg(test)]
pub(crate) mod props;
#[cfg(test)]
pub(crate) mod tests;
