//! The end of an export run for a person (docs/export.md, "Failure (export-abort)"): one line per stack
//! saying where it stands, then, after a failure, the cause, what to redo by hand and
//! the commands to paste. Values go through the plain-value rule.

use std::fmt;

use crate::export::execute::{ExportRun, StackStage};
use crate::export::plain::shown;
use crate::export::report::ExportReport;
use crate::export::unmanaged::HowToManage;
use crate::run::Outcome;
use crate::text::flatten_str;
use crate::view::progress::BarRow;
use crate::view::words::stack_region;

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

/// One line per stack: where it stands (`App -> CloudFormation stack App: migrated; cdkd
/// record deleted (3 resource(s) imported)`).
pub fn stack_lines(r: &ExportReport) -> Vec<String> {
    r.stacks
        .iter()
        .map(|s| {
            let count = if s.stage >= StackStage::Imported {
                format!("{} resource(s) imported", s.imported_resources)
            } else {
                format!("{} resource(s) to import", s.imported_resources)
            };
            format!(
                "{} -> CloudFormation stack {}: {} ({count})",
                shown(&s.stack),
                shown(&s.cfn_stack_name),
                stage_words(s.stage),
            )
        })
        .collect()
}

/// The report as lines for stdout.
pub fn render_report(r: &ExportReport) -> String {
    let mut out = stack_lines(r);
    let done = r.outcome == Outcome::Migrated;
    if let Some(cause) = &r.cause {
        out.push(format!("Cause: {}", flatten_str(cause)));
    }
    // A run stopped by Ctrl-C has nothing to be done by hand: it is resumed.
    let interrupted = r.outcome == Outcome::Interrupted;
    if !r.redo.is_empty() {
        out.push(
            match (done, interrupted) {
                (true, _) => "Warnings:",
                (false, true) => "Next:",
                (false, false) => "To do by hand:",
            }
            .to_string(),
        );
        out.extend(
            r.redo
                .iter()
                .map(|l| format!("  - {}", flatten_str(&l.to_string()))),
        );
    }
    if !r.commands.is_empty() {
        out.push(
            match (done, interrupted) {
                (true, _) => "Check it:",
                (false, true) => "Resume it:",
                (false, false) => "Commands:",
            }
            .to_string(),
        );
        out.extend(r.commands.iter().map(|c| format!("  {c}")));
    }
    if !r.unmanaged.is_empty() {
        out.push(format!(
            "Left unmanaged ({} resource(s) of the deleted records the template did not declare; they keep running in AWS):",
            r.unmanaged.len()
        ));
        for u in &r.unmanaged {
            let ty = if u.resource_type.is_empty() {
                "no type recorded".to_string()
            } else {
                flatten_str(&u.resource_type)
            };
            out.push(format!(
                "  - [{}] {} ({ty}) {}: {}",
                shown(&u.stack),
                flatten_str(&u.logical_id),
                shown(&u.physical_id),
                flatten_str(&u.how.to_string())
            ));
            if let Some(c) = &u.command {
                out.push(format!("    {c}"));
            }
        }
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

/// The phases of one stack, in order, with whether each is done: 1A, 1B for a parent,
/// phase 2, the flip for a child (done as well when phase 2 left the child updated), and
/// the record deleted.
fn phases(s: &crate::export::execute::StackProgress, is_parent: bool) -> Vec<bool> {
    let mut out = vec![s.stage >= StackStage::Imported];
    if is_parent {
        out.push(s.adopted);
    }
    out.push(s.stage >= StackStage::Migrated);
    if s.parent.is_some() {
        out.push(s.flipped);
    }
    out.push(s.stage == StackStage::Cleaned);
    out
}

fn stage_status(stage: StackStage, stopped: bool) -> &'static str {
    match (stage, stopped) {
        (StackStage::Cleaned, _) => "migrated, record deleted",
        (StackStage::Migrated, _) => "migrated",
        (_, true) => "stopped",
        (StackStage::Planned | StackStage::Locked, false) => "waiting",
        (StackStage::Importing, false) => "importing (phase 1)",
        (StackStage::Imported, false) => "imported",
        (StackStage::PreDeleted | StackStage::Updating, false) => "updating (phase 2)",
    }
}

/// Where an export run stands, for `runs list --local`: the least advanced stack's
/// status (`importing (phase 1)`, `migrated, record deleted`, `stopped` ...).
pub fn export_phase(run: &ExportRun) -> String {
    export_stage_text(run.least_stage(), run.failure.is_some())
}

/// [`export_phase`] of a run whose least advanced stack is at `stage` (`None`: no stack
/// yet), `stopped` on a failure or not.
pub fn export_stage_text(stage: Option<StackStage>, stopped: bool) -> String {
    match stage {
        Some(stage) => stage_status(stage, stopped).to_string(),
        None => "locking".into(),
    }
}

/// An export run's bars (docs/export.md, "Waiting (export-poll)"): one per stack, leaf first, its phases
/// done out of its phases, and where it stands.
pub fn export_bar_rows(run: &ExportRun) -> Vec<BarRow> {
    let stopped = run.failure.is_some();
    run.stacks
        .iter()
        .map(|s| {
            let is_parent = run
                .stacks
                .iter()
                .any(|c| c.parent.as_deref() == Some(s.stack.as_str()));
            let p = phases(s, is_parent);
            BarRow {
                label: stack_region(&s.stack, &s.region),
                settled: p.iter().filter(|d| **d).count() as u32,
                total: p.len() as u32,
                status: stage_status(s.stage, stopped).to_string(),
            }
        })
        .collect()
}

/// How to bring a row left unmanaged back under management (`report.json`'s `how`).
impl fmt::Display for HowToManage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (logical_id, cfn, resource_type, with_command) = match self {
            HowToManage::Import {
                logical_id,
                cfn,
                resource_type,
                with_command,
            } => (logical_id, cfn, resource_type, with_command),
            HowToManage::Recorded(words) => return f.write_str(words),
        };
        let or = if *with_command {
            format!(
                "or the IMPORT change set below does it (template.json: the template of {} that declares it)",
                shown(cfn)
            )
        } else if resource_type.is_empty() {
            "or an IMPORT change set that names it by its CloudFormation identifier".to_string()
        } else {
            format!(
                "or an IMPORT change set that names it by its CloudFormation identifier (the type's primaryIdentifier: `aws cloudformation describe-type --type RESOURCE --type-name {}`)",
                shown(resource_type)
            )
        };
        write!(
            f,
            "{} is in no cdkd record and in no CloudFormation stack now; to manage it again, declare it in the app (DeletionPolicy Retain until it is imported) and import it into CloudFormation stack {}: `cdk import {}` asks for its identifier, {or}",
            flatten_str(logical_id),
            shown(cfn),
            shown(cfn),
        )
    }
}

impl From<HowToManage> for String {
    fn from(how: HowToManage) -> String {
        how.to_string()
    }
}

#[cfg(test)]
mod tests {
    use crate::export::unmanaged::{report_entry, HowToManage, UnmanagedReport, UnmanagedRow};

    fn row(logical_id: &str, resource_type: &str, with_identifier: bool) -> UnmanagedRow {
        let mut identifier = serde_json::Map::new();
        if with_identifier {
            identifier.insert("BucketName".into(), "old-bucket".into());
        }
        UnmanagedRow {
            logical_id: logical_id.into(),
            resource_type: resource_type.into(),
            physical_id: "p".into(),
            identifier,
        }
    }

    /// Every way a row left unmanaged is told how to be managed again, with hostile
    /// values (a logical id with a newline and an escape, a stack name that is not plain).
    #[test]
    fn how_to_manage_words_with_hostile_values() {
        let hostile = "Old\nBucket\x1b[2J";
        let lines: Vec<String> = [
            report_entry(
                "App",
                "App",
                "us-east-1",
                &row("OldBucket", "AWS::S3::Bucket", true),
            ),
            report_entry(
                "App",
                "App",
                "us-east-1",
                &row(hostile, "AWS::S3::Bucket", true),
            ),
            report_entry(
                "App",
                "App\nX",
                "us-east-1",
                &row("Q", "AWS::SQS::Queue", false),
            ),
            report_entry("App", "App", "us-east-1", &row("Q", "", false)),
            report_entry(
                "App",
                "App",
                "us-east-1",
                &row("Q", "AWS::Bad\nType", false),
            ),
        ]
        .iter()
        .map(|r| r.how.to_string())
        .collect();
        insta::assert_snapshot!(lines.join("\n---\n"));
    }

    /// `report.json` keeps the words (`how`); read back they are `Recorded`, and say the same.
    #[test]
    fn how_to_manage_is_stored_as_its_words_and_read_back_as_recorded() {
        let r = report_entry(
            "App",
            "App",
            "us-east-1",
            &row("Q", "AWS::SQS::Queue", false),
        );
        let words = r.how.to_string();
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["how"], serde_json::Value::String(words.clone()));
        let back: UnmanagedReport = serde_json::from_value(json).unwrap();
        assert_eq!(back.how, HowToManage::Recorded(words.clone()));
        assert_eq!(back.how.to_string(), words);
    }
}
