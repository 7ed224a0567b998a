//! Pure renderers for the `state list | show | resources` views (spec/state-views.md
//! §1-§5). Every function here takes what the CLI read (records, locks, read outcomes,
//! the clock) and returns text: what goes to stdout, and separately the warning lines
//! that go to stderr. Nothing here does I/O.
//!
//! One file per view: [`list`] (plain, `--long`, `--json`), [`tree`] (`--tree`),
//! [`show`] (human, `--show-nested`, `--json`), [`resources`]; shared pieces:
//! [`value`] (§1.5 value renderer and the row helpers built on it), [`date`]
//! (`toISOString`), [`collate`] (§1.7 ordering), [`repair`] (§4.4 container repairs and
//! their warnings), [`resolve`] (§2 single-record resolution and its refusals).

pub mod collate;
pub mod date;
pub mod list;
pub mod repair;
pub mod resolve;
pub mod resources;
pub mod show;
pub mod tree;
pub mod value;

/// What a view prints: `stdout` exactly as it must be written (already ending in `\n`
/// when non-empty), and `warnings`, one line each, for stderr.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rendered {
    pub stdout: String,
    pub warnings: Vec<String>,
}

impl Rendered {
    pub fn new(stdout: String, warnings: Vec<String>) -> Self {
        Self { stdout, warnings }
    }
}

/// The spec's "lines joined by `\n` plus one final `\n`"; no lines → no output at all.
pub(crate) fn join_lines(lines: &[String]) -> String {
    if lines.is_empty() {
        return String::new();
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}
