//! Sessions: the engine driven over a stored task call by call, as a live
//! agent would run it, with the store kept between calls.

pub(crate) mod cost;
pub mod driver;
pub mod models;
pub mod replay;

#[cfg(test)]
pub(crate) mod props;
#[cfg(test)]
pub(crate) mod tests;
