//! The end of an export run for a person (docs/export.md §10.5): one line per stack
//! saying where it stands, then, after a failure, the cause, what to redo by hand and
//! the commands to paste. Values go through the plain-value rule.

use crate::export::execute::{ExportRun, StackStage};
use crate::export::plain::shown;
use crate::export::report::ExportReport;
use crate::text::flatten_str;

fn stage_words(stage: StackStage) -> &'static str {
    match stage {
        StackStage::Planned | StackStage::Locked => "nothing submitted",
        StackStage::Importing => "phase 1 (IMPORT) did not complete",
        StackStage::Imported | StackStage::PreDeleted | StackStage::Updating => {
            "imported; phase 2 (UPDATE) did not complete"
        }
        StackStage::Migrated => "migrated; its cdkd record is still there",
        StackStage::Cleaned => "migrated; cdkd record deleted",
    }
}

/// The report as lines for stdout.
pub fn render_report(r: &ExportReport) -> String {
    let mut out = Vec::new();
    let done = r.outcome == "migrated";
    for s in &r.stacks {
        let count = if s.stage >= StackStage::Imported {
            format!("{} resource(s) imported", s.imported_resources)
        } else {
            format!("{} resource(s) to import", s.imported_resources)
        };
        out.push(format!(
            "{} -> CloudFormation stack {}: {} ({count})",
            shown(&s.stack),
            shown(&s.cfn_stack_name),
            stage_words(s.stage),
        ));
    }
    if let Some(cause) = &r.cause {
        out.push(format!("Cause: {}", flatten_str(cause)));
    }
    if !r.redo.is_empty() {
        out.push(if done { "Warnings:" } else { "To do by hand:" }.to_string());
        out.extend(r.redo.iter().map(|l| format!("  - {}", flatten_str(l))));
    }
    if !r.commands.is_empty() {
        out.push(if done { "Check it:" } else { "Commands:" }.to_string());
        out.extend(r.commands.iter().map(|c| format!("  {c}")));
    }
    out.join("\n")
}

/// The lines of a running export not shown yet: one per step the run's record logged
/// after the first `shown` (a line per settled step, for stderr).
pub fn progress_lines(run: &ExportRun, shown_count: usize) -> Vec<String> {
    let stack = run.stacks.first().map(|s| shown(&s.stack)).unwrap_or("?");
    run.log
        .iter()
        .skip(shown_count)
        .map(|l| format!("export {stack}: {}", flatten_str(l)))
        .collect()
}
