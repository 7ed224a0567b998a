//! The one way the CLI asks a question: on stderr, the answer read from stdin, refused
//! when stdin is not a terminal (a pipe or CI would otherwise hang or answer by
//! accident). What counts as yes is `cdkd_core::destroy::dry_run::is_confirmation`.

use std::io::{BufRead, IsTerminal, Write};

use cdkd_core::destroy::dry_run::is_confirmation;

use crate::error::CliError;

/// Prints `question` on stderr and reads one line: `Some(true)` for a yes,
/// `Some(false)` for anything else, `None` when stdin is not a terminal (nothing asked).
pub async fn confirm(question: &str) -> Result<Option<bool>, CliError> {
    if !std::io::stdin().is_terminal() {
        return Ok(None);
    }
    eprint!("{question}");
    let _ = std::io::stderr().flush();
    let answer = tokio::task::spawn_blocking(|| {
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line).map(|_| line)
    })
    .await
    .map_err(|e| CliError::Usage(e.to_string()))?
    .map_err(|e| {
        CliError::usage(cdkd_core::usage::Usage::AnswerUnread {
            error: e.to_string(),
        })
    })?;
    Ok(Some(is_confirmation(&answer)))
}
