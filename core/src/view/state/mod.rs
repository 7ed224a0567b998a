//! The `state list | show | resources` views (docs/state-views.md, "Text rules" and "state resources <stack>"). Every function
//! here takes what the CLI read (records, locks, read outcomes, the clock) and returns
//! a [`Rendered`](crate::view::Rendered): what goes to stdout, and separately the
//! warning lines that go to stderr.
//!
//! One file per view: [`list`] (plain, `--long`, `--json`), [`tree`] (`--tree`),
//! [`show`] (human, `--show-nested`, `--json`), [`resources`]; shared pieces:
//! [`value`] (the value renderer of docs/state-views.md, "Values in human views" and the row helpers built
//! on it), [`collate`] (docs/state-views.md, "Order" ordering), [`repair`] (the container
//! repairs of docs/state-views.md, "Damaged containers (human modes only)" and their warnings), [`resolve`] (the
//! single-record resolution of docs/state-views.md, "What every state command shares" and its refusals). Dates are
//! [`crate::time`].

pub mod collate;
pub mod list;
pub mod repair;
pub mod resolve;
pub mod resources;
pub mod show;
pub mod tree;
pub mod value;
