//! The one writer of stdout. Every view, report and JSON document the CLI prints goes
//! through here (diagnostics go to stderr through `tracing` and `eprintln!`).
//!
//! A closed pipe (`cdkd-flow state list | head -1`) is not an error: the reader has
//! read what it wanted. The write counts as done, nothing more is written to stdout,
//! and the command finishes what it was doing (a force-unlock of several stacks still
//! releases every lock) and exits with its own status, 0 for a listing. Rust ignores
//! SIGPIPE, so the closed pipe arrives here as `BrokenPipe` instead of killing the
//! process; `println!` would panic on it.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once a write failed: nothing more is written.
static CLOSED: AtomicBool = AtomicBool::new(false);
/// Set when a write failed for another reason than a closed pipe (a full disk...).
static FAILED: AtomicBool = AtomicBool::new(false);

/// Whether some output was lost for another reason than a closed pipe: the command
/// then fails even if its work succeeded.
pub fn write_failed() -> bool {
    FAILED.load(Ordering::Relaxed)
}

/// One line of what a command tells as it goes (a note, a typed value worded by its
/// view), on stderr.
pub fn note(line: impl std::fmt::Display) {
    eprintln!("{line}");
}

/// Writes `text` to stdout as it is.
pub fn print(text: &str) {
    write(text.as_bytes(), false);
}

/// Writes `text` and a newline to stdout.
pub fn println(text: &str) {
    write(text.as_bytes(), true);
}

fn write(bytes: &[u8], newline: bool) {
    if CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut out = io::stdout().lock();
    let result = out
        .write_all(bytes)
        .and_then(|()| {
            if newline {
                out.write_all(b"\n")
            } else {
                Ok(())
            }
        })
        .and_then(|()| out.flush());
    if let Err(e) = result {
        CLOSED.store(true, Ordering::Relaxed);
        if !is_closed_pipe(&e) {
            FAILED.store(true, Ordering::Relaxed);
            eprintln!("error: cannot write to stdout: {e}");
        }
    }
}

/// The reader of stdout has gone away.
fn is_closed_pipe(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_pipe_is_recognised_by_kind() {
        assert!(is_closed_pipe(&io::Error::from(io::ErrorKind::BrokenPipe)));
        assert!(!is_closed_pipe(&io::Error::from(
            io::ErrorKind::PermissionDenied
        )));
    }
}
