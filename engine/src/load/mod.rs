//! Load a definition: parse the JSON, apply definition substitutions, and validate every
//! state against what this engine implements. Anything else is refused by name.
//!
//! `substitute` applies the `${Name}` substitutions, `graph` reads the machine and its
//! states (branches and processors included), `fields` the fields every kind of state
//! shares, `retry` Retry and Catch, `task`, `wait` and `choice` those states' own fields.

mod choice;
mod fields;
mod graph;
mod retry;
mod substitute;
mod task;
mod wait;

pub use graph::{load_definition, machine_timeout};
pub use substitute::substitute;
